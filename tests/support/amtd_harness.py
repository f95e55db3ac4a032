"""amtd_harness: the one way a Python test or benchmark starts amtd (issue 35, one harness per layer).

    import os, sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
    import amtd_harness

    with amtd_harness.Amtd(bin_dir, "--time-scale", "0.01", image_map=..., slots=2) as amtd:
        sm = amtd.client("sagemaker")          # boto3 at amtd.url, dummy keys, us-east-1
        subprocess.run(amtd.amt_command("list-training-jobs"))   # the amt CLI over gRPC
        subprocess.run(["aws", ...], env=dict(os.environ, **amtd.aws_env()))

A unittest class starts it in setUpClass with `cls.addClassCleanup(cls.amtd.close)`, which runs
even when setUpClass fails; a script under bench/ finds this module at ROOT / "tests" / "support".

`Amtd` starts `BIN_DIR/amtd --port 0` (its HTTP gateway then on a free port too) with its local
worker unless `local_worker=False`, in a fresh temporary folder (`amtd.work`, the data dir
`amtd.work/data` and whatever scratch files the test puts there) unless `data_dir` names one the
caller keeps (a data dir shared by two amtds one after the other, an `amt run`'s data dir). It
waits for amtd's one stdout line, the banner (orchestrator/main.cc), which `parse_banner` is the
only reader of, and exposes what it says: `grpc` (HOST:PORT, for `amt --endpoint`), `url` (the
HTTP gateway, boto3's endpoint_url), `worker_socket`, `page`, `proxy_ca`. When amtd exits before
its banner (a refused flag), `AmtdExited` says with which code and its stderr. `close()` (or the
end of the `with`) stops amtd (SIGTERM, then SIGKILL after `stop_timeout` seconds, and its local
worker too when amtd had to be killed, as a killed amtd leaves it running for the next amtd of
the data dir) and removes the temporary folder. Nothing here sleeps: it waits on amtd's stdout
and on process exits, each with a deadline.

amtd's stderr is read by a thread and echoed to this process's stderr (`quiet=True`: kept only);
`stderr_text()` returns what it wrote so far. The same plumbing is `Process`, for the other
programs a test starts and reads line by line (`amt run`).

Works with Debian's /usr/bin/python3 (3.11) and the pyenv python; standard library only (boto3
is imported by `client()` alone).
"""

import collections
import os
import queue
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

# orchestrator/main.cc's banner, every optional part in the order main.cc writes them.
_BANNER = re.compile(
    r"amtd listening on (?P<grpc>\S+) \(gRPC\)"
    r"(?:, (?P<url>http://\S+) \(AWS JSON: boto3, aws cli\))?"
    r"(?:, (?P<worker_socket>unix:.+?) \(workers on this machine\))?"
    r"(?:, the page at (?P<page>http://\S+/))?"
    r"(?:, the HTTPS proxy for AWS hosts \(CA (?P<proxy_ca>.+)\))?")

Banner = collections.namedtuple("Banner", "grpc url worker_socket page proxy_ca")
Banner.__doc__ = ("amtd's banner, parsed: grpc is HOST:PORT; url (http://HOST:PORT), "
                  "worker_socket (unix:PATH), page (URL/) and proxy_ca (a path) are None when "
                  "amtd does not serve them.")

# Variables that would send an AWS client, the amt CLI or the SDK elsewhere than the amtd at hand.
_FOREIGN = ("AWS_", "AMT_")
_PROXIES = ("https_proxy", "http_proxy", "all_proxy", "no_proxy")


class AmtdError(RuntimeError):
    """amtd did not start as asked, or what it printed is not its banner."""


class AmtdExited(AmtdError):
    """amtd exited before printing its banner: `returncode` and `stderr` say why."""

    def __init__(self, returncode, stderr):
        super().__init__("amtd exited with %s before its banner; stderr:\n%s" % (returncode,
                                                                                stderr))
        self.returncode = returncode
        self.stderr = stderr


def parse_banner(line):
    """The Banner of amtd's first stdout line; AmtdError when the line is not amtd's banner."""
    match = _BANNER.fullmatch(line.rstrip("\n"))
    if not match:
        raise AmtdError("not amtd's banner: %r" % line)
    return Banner(**match.groupdict())


def _port(address):
    return int(address.rsplit(":", 1)[1].rstrip("/"))


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


class Amtd:
    """amtd on free ports, started in the constructor, stopped by close() or `with`'s end.

    bin_dir: the folder of amtd and amt (build/bin). flags: more amtd flags, as on its command
    line. data_dir: a data dir the caller keeps (not removed); by default `work/data` in a fresh
    temporary folder `work` (named `prefix`XXXX) that close() removes. image_map: --image-map, made
    absolute (examples/image-map.json needs no rewriting: amtd expands ${IMAGE_MAP_DIR} and
    ${AMT_BIN}). slots: --slots (None: amtd's default). local_worker=False: --no-local-worker.
    quiet: amtd's stderr is kept, not echoed. start_timeout: seconds to wait for the banner.
    """

    def __init__(self, bin_dir, *flags, data_dir=None, image_map=None, slots=None,
                 local_worker=True, quiet=False, prefix="amtd-harness-", start_timeout=120,
                 stop_timeout=60):
        self.bin_dir = os.path.abspath(str(bin_dir))
        self.stop_timeout = stop_timeout
        self.work = None if data_dir is not None else tempfile.mkdtemp(prefix=prefix)
        self.data_dir = os.path.abspath(str(data_dir) if data_dir is not None else
                                        os.path.join(self.work, "data"))
        command = [os.path.join(self.bin_dir, "amtd"), "--port", "0", "--data-dir",
                   self.data_dir]
        if image_map is not None:
            command += ["--image-map", os.path.abspath(str(image_map))]
        if slots is not None:
            command += ["--slots", str(slots)]
        if not local_worker:
            command.append("--no-local-worker")
        command += [str(flag) for flag in flags]
        self.process = None
        self._closed = False
        try:
            self.process = Process(command, quiet=quiet)
            line = self.process.next_line(start_timeout)
            if line is None:
                code = self.process.wait(timeout=stop_timeout)
                self.process.close()
                raise AmtdExited(code, self.process.stderr_text())
            self.banner = parse_banner(line)
        except BaseException:
            self.close()
            raise

    # --- what the banner says -------------------------------------------------------------

    @property
    def grpc(self):
        """HOST:PORT of the gRPC service: `amt --endpoint`, AMT_ENDPOINT."""
        return self.banner.grpc

    @property
    def url(self):
        """http://HOST:PORT of the HTTP gateway (boto3's endpoint_url, the aws cli's
        --endpoint-url, the HTTPS proxy). AmtdError when amtd serves no HTTP (--http-port -1)."""
        if self.banner.url is None:
            raise AmtdError("amtd serves no HTTP gateway (--http-port -1)")
        return self.banner.url

    @property
    def http_port(self):
        return _port(self.url)

    @property
    def grpc_port(self):
        return _port(self.grpc)

    @property
    def worker_socket(self):
        return self.banner.worker_socket

    @property
    def page(self):
        return self.banner.page

    @property
    def proxy_ca(self):
        return self.banner.proxy_ca

    @property
    def pid(self):
        return self.process.pid

    # --- clients --------------------------------------------------------------------------

    def boto3_kwargs(self, key="test", secret="test", region="us-east-1"):
        """boto3.client()'s or boto3.Session().client()'s arguments for this amtd."""
        return dict(endpoint_url=self.url, region_name=region, aws_access_key_id=key,
                    aws_secret_access_key=secret)

    def client(self, service, **kwargs):
        """A boto3 client of `service` at this amtd; kwargs override boto3_kwargs()'s."""
        import boto3
        return boto3.client(service, **dict(self.boto3_kwargs(), **kwargs))

    def aws_env(self, key="test", secret="test", region="us-east-1"):
        """Environment variables that point boto3, the aws cli, the SDK (AWS_ENDPOINT_URL and
        dummy keys) and the amt CLI (AMT_ENDPOINT) at this amtd; merge them into os.environ."""
        return {"AWS_ENDPOINT_URL": self.url, "AWS_ACCESS_KEY_ID": key,
                "AWS_SECRET_ACCESS_KEY": secret, "AWS_DEFAULT_REGION": region,
                "AMT_ENDPOINT": self.grpc}

    def amt_command(self, *args):
        """The amt CLI's command line for `args` against this amtd's gRPC endpoint."""
        return [os.path.join(self.bin_dir, "amt"), "--endpoint", self.grpc] + [str(a)
                                                                               for a in args]

    def amt_env(self, endpoint_url=True):
        """The environment of a shell after `eval "$(amt env --endpoint-url URL --data-dir
        DATA)"` (HTTPS_PROXY, AWS_CA_BUNDLE, ...), from this process's less everything that would
        reach AWS, another amtd or another SDK (AWS_*, AMT_*, proxies, PYTHONPATH). Without
        `endpoint_url`, AWS_ENDPOINT_URL is left out: every call then goes through the proxy."""
        clean = {k: v for k, v in os.environ.items()
                 if not k.startswith(_FOREIGN) and k != "PYTHONPATH"
                 and k.lower() not in _PROXIES}
        script = 'eval "$(%s env --endpoint-url %s --data-dir %s)" && env -0' % (
            shlex.quote(os.path.join(self.bin_dir, "amt")), shlex.quote(self.url),
            shlex.quote(self.data_dir))
        out = subprocess.run(["bash", "-c", script], env=clean, capture_output=True,
                             check=True).stdout
        env = dict(item.split("=", 1) for item in out.decode().split("\0") if "=" in item)
        for name in ("AWS_ENDPOINT_URL", "HTTPS_PROXY", "AWS_CA_BUNDLE"):
            if name not in env:
                raise AmtdError("amt env did not export %s" % name)
        if not endpoint_url:
            del env["AWS_ENDPOINT_URL"]
        return env

    def stderr_text(self):
        """What amtd wrote on stderr so far."""
        return self.process.stderr_text()

    # --- the end --------------------------------------------------------------------------

    def stop(self):
        """SIGTERM, a wait of up to stop_timeout s, then SIGKILL (and the local worker's SIGKILL,
        which a killed amtd leaves running); amtd's exit code. Idempotent."""
        if self.process is None:
            return None
        code = self.process.close(timeout=self.stop_timeout)
        if code == -signal.SIGKILL:
            self._kill_local_worker()
        return code

    def _kill_local_worker(self):
        try:
            with open(os.path.join(self.data_dir, "worker.pid")) as f:
                pid = int(f.read().split()[0])
            fd = os.pidfd_open(pid)
        except (OSError, ValueError, IndexError):
            return  # no worker, or it has gone
        try:
            os.killpg(pid, signal.SIGKILL)  # the worker leads its own process group
        except OSError:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        select.select([fd], [], [], self.stop_timeout)  # readable once it has exited
        os.close(fd)

    def close(self):
        """stop(), then the temporary folder goes (a caller's data_dir stays). Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self.stop()
        finally:
            if self.work is not None:
                shutil.rmtree(self.work, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()
