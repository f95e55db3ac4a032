"""Process: a child process whose stdout and stderr are read by threads, so that the child never
blocks on a full pipe and a reader never waits past a deadline (amtd, `amt run`, a trainer)."""

import queue
import signal
import subprocess
import sys
import threading


class Process:
    """A child process with its stdout read line by line by a thread (`next_line`) and its
    stderr by another (echoed unless `quiet`, kept for `stderr_text`), so that the child never
    blocks on a full pipe and a reader never waits past a deadline."""

    def __init__(self, command, *, quiet=False, env=None, cwd=None):
        self.command = [str(part) for part in command]
        self._popen = subprocess.Popen(self.command, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                       cwd=cwd, text=True, errors="replace")
        self._lines = queue.Queue()
        self._stderr = []
        self._quiet = quiet
        self._threads = [threading.Thread(target=self._read_stdout, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for thread in self._threads:
            thread.start()

    def _read_stdout(self):
        for line in self._popen.stdout:
            self._lines.put(line)
        self._lines.put(None)  # end of output: the process exited (or closed its stdout)

    def _read_stderr(self):
        for line in self._popen.stderr:
            self._stderr.append(line)
            if not self._quiet:
                sys.stderr.write(line)
                sys.stderr.flush()

    @property
    def pid(self):
        return self._popen.pid

    @property
    def returncode(self):
        """The exit code once the process has been waited for; None while it runs."""
        return self._popen.poll()

    def next_line(self, timeout):
        """The next stdout line (with its newline); None once stdout has ended. TimeoutError when
        none comes within `timeout` seconds."""
        try:
            return self._lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError("%s printed no line in %g s" % (self.command[0], timeout)) from None

    def rest_of_stdout(self, timeout=10):
        """Every stdout line not read yet, up to the end of output (after the process exited)."""
        lines = []
        while True:
            line = self.next_line(timeout)
            if line is None:
                return "".join(lines)
            lines.append(line)

    def stderr_text(self):
        """What the process wrote on stderr so far."""
        return "".join(self._stderr)

    def wait(self, timeout):
        """Waits for the exit; its code. subprocess.TimeoutExpired past `timeout` seconds."""
        return self._popen.wait(timeout=timeout)

    def stop(self, sig=signal.SIGTERM, timeout=60):
        """Sends `sig` (when still running) and waits up to `timeout` s for the exit, then
        SIGKILLs; the exit code. Idempotent."""
        if self._popen.poll() is None:
            self._popen.send_signal(sig)
            try:
                self._popen.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._popen.kill()
                self._popen.wait()
        return self._popen.returncode

    def close(self, timeout=60):
        """stop(), then the pipes' readers finish (amtd's output has ended) and the pipes close."""
        code = self.stop(timeout=timeout)
        for thread in self._threads:
            thread.join(timeout=10)  # a grandchild still holding a pipe must not hang the test
        for pipe in (self._popen.stdout, self._popen.stderr):
            pipe.close()
        return code

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()
