"""Amtd: amtd on free ports in a temporary folder, its banner parsed, its clients and environment,
stopped and cleaned up at the end of a `with` (also when the body raises)."""

import collections
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import tempfile
import time

from amt_local._process import Process

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
# What amtd, its worker and `amt env` need next to each other.
_PROGRAMS = ("amtd", "amt-worker", "amt")


class AmtdError(RuntimeError):
    """amtd did not start as asked, or what it printed is not its banner."""


class AmtdNotFound(AmtdError):
    """Neither AMT_BIN nor PATH leads to amtd, amt-worker and amt."""


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


def find_bin_dir(environ=None):
    """The folder of amtd, amt-worker and amt: $AMT_BIN when set (e.g. a clone's build/bin),
    else the folder of the `amtd` on PATH (symbolic links followed). AmtdNotFound otherwise, or
    when one of the three is missing there."""
    environ = os.environ if environ is None else environ
    chosen = environ.get("AMT_BIN")
    if chosen:
        bin_dir, origin = os.path.abspath(chosen), "AMT_BIN=%s" % chosen
    else:
        amtd = shutil.which("amtd", path=environ.get("PATH", os.defpath))
        if amtd is None:
            raise AmtdNotFound("amtd is not on PATH and AMT_BIN is not set: set AMT_BIN to the "
                               "folder of amtd, amt-worker and amt (a clone's build/bin)")
        bin_dir = os.path.dirname(os.path.realpath(amtd))
        origin = "the folder of the amtd on PATH (%s)" % amtd
    missing = [name for name in _PROGRAMS
               if not os.access(os.path.join(bin_dir, name), os.X_OK)]
    if missing:
        raise AmtdNotFound("%s has no %s" % (origin, " or ".join(missing)))
    return bin_dir


def _port(address):
    return int(address.rsplit(":", 1)[1].rstrip("/"))


def _flag_value(flags, name):
    """The value of the last `name VALUE` or `name=VALUE` among amtd's flags; None without."""
    value = None
    for i, flag in enumerate(flags):
        if flag == name and i + 1 < len(flags):
            value = flags[i + 1]
        elif flag.startswith(name + "="):
            value = flag[len(name) + 1:]
    return value


class Amtd:
    """amtd on free ports, started in the constructor, stopped by close() or `with`'s end.

    bin_dir: the folder of amtd, amt-worker and amt (a clone's build/bin); None: find_bin_dir()
    (AMT_BIN, else PATH). flags: more amtd flags, as on its command line (`amtd --help`).
    data_dir: a data dir the caller keeps (not removed); by default `work/data` in a fresh
    temporary folder `work` (named `prefix`XXXX) that close() removes. image_map: --image-map,
    made absolute (amtd expands ${IMAGE_MAP_DIR} and ${AMT_BIN} in it). time_scale:
    --time-scale (0.01 makes SageMaker's waits 100x shorter). python: --python values, each
    PATH or FRAMEWORK=PATH (one string or several). slots: --slots (None: amtd's default).
    local_worker=False: --no-local-worker. quiet: amtd's stderr is kept, not echoed.
    start_timeout: seconds to wait for the banner; stop_timeout: for the exit after SIGTERM.
    """

    def __init__(self, bin_dir=None, *flags, data_dir=None, image_map=None, time_scale=None,
                 python=(), slots=None, local_worker=True, quiet=False, prefix="amt-local-",
                 start_timeout=120, stop_timeout=60):
        self.process = None
        self.work = None
        self._closed = False
        self._env = None
        self.bin_dir = os.path.abspath(str(bin_dir) if bin_dir is not None else find_bin_dir())
        self.stop_timeout = stop_timeout
        self.flags = [str(flag) for flag in flags]
        self.work = None if data_dir is not None else tempfile.mkdtemp(prefix=prefix)
        self.data_dir = os.path.abspath(str(data_dir) if data_dir is not None else
                                        os.path.join(self.work, "data"))
        command = [os.path.join(self.bin_dir, "amtd"), "--port", "0", "--data-dir",
                   self.data_dir]
        if image_map is not None:
            command += ["--image-map", os.path.abspath(str(image_map))]
        if time_scale is not None:
            command += ["--time-scale", repr(float(time_scale))]
        for interpreter in [python] if isinstance(python, (str, os.PathLike)) else python:
            command += ["--python", str(interpreter)]
        if slots is not None:
            command += ["--slots", str(slots)]
        if not local_worker:
            command.append("--no-local-worker")
        command += self.flags
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

    endpoint_url = url

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

    @staticmethod
    def _clean_environ(base):
        return {k: v for k, v in base.items()
                if not k.startswith(_FOREIGN) and k != "PYTHONPATH"
                and k.lower() not in _PROXIES}

    def _amt_env_exports(self):
        """What `amt env --endpoint-url URL --data-dir DATA` exports (run with no AWS_*, AMT_*
        or proxy variable of its own, so every export is there), as a dict."""
        command = [os.path.join(self.bin_dir, "amt")]
        credentials = _flag_value(self.flags, "--credentials")
        if credentials is not None:
            command += ["--credentials", credentials]
        command += ["env", "--endpoint-url", self.url, "--data-dir", self.data_dir]
        out = subprocess.run(command, env=self._clean_environ(os.environ), capture_output=True,
                             text=True, check=True).stdout
        exports = {}
        for line in out.splitlines():
            words = shlex.split(line)
            if len(words) == 2 and words[0] == "export" and "=" in words[1]:
                name, value = words[1].split("=", 1)
                exports[name] = value
        return exports

    @property
    def env(self):
        """The environment that points boto3, the SageMaker Python SDK, the aws cli and the amt
        CLI at this amtd: what `amt env` exports (AWS_ENDPOINT_URL, keys amtd accepts, the
        region, and with amtd's HTTPS proxy HTTPS_PROXY, NO_PROXY and AWS_CA_BUNDLE), plus
        AMT_ENDPOINT and AMT_ENDPOINT_URL for the amt CLI. A new dict each time; environ()
        merges it into an environment."""
        if self._env is None:
            self._env = dict(self._amt_env_exports(), AMT_ENDPOINT=self.grpc,
                             AMT_ENDPOINT_URL=self.url)
        return dict(self._env)

    def environ(self, base=None):
        """`base` (default os.environ) less every AWS_* and AMT_* variable (a profile, a session
        token or a per-service endpoint would lead elsewhere), plus env: the environment of a
        process that is to reach this amtd only."""
        base = os.environ if base is None else base
        merged = {k: v for k, v in base.items() if not k.startswith(_FOREIGN)}
        merged.update(self.env)
        return merged

    def amt_env(self, endpoint_url=True):
        """The environment of a shell after `eval "$(amt env --endpoint-url URL --data-dir
        DATA)"` (HTTPS_PROXY, AWS_CA_BUNDLE, ...), from this process's less everything that would
        reach AWS, another amtd or another SDK (AWS_*, AMT_*, proxies, PYTHONPATH). Without
        `endpoint_url`, AWS_ENDPOINT_URL is left out: every call then goes through the proxy."""
        env = self._clean_environ(os.environ)
        env.update(self._amt_env_exports())
        for name in ("AWS_ENDPOINT_URL", "HTTPS_PROXY", "AWS_CA_BUNDLE"):
            if name not in env:
                raise AmtdError("amt env did not export %s" % name)
        if not endpoint_url:
            del env["AWS_ENDPOINT_URL"]
        return env

    def wait_for_tuning_job(self, name, timeout=600, interval=0.1, client=None):
        """Polls DescribeHyperParameterTuningJob (boto3 has no waiter for tuning jobs) until
        the job is no longer InProgress or Stopping; its last description. TimeoutError past
        `timeout` seconds. client: a SageMaker boto3 client (default: client("sagemaker"))."""
        client = client if client is not None else self.client("sagemaker")
        deadline = time.monotonic() + timeout
        while True:
            job = client.describe_hyper_parameter_tuning_job(HyperParameterTuningJobName=name)
            if job["HyperParameterTuningJobStatus"] not in ("InProgress", "Stopping"):
                return job
            if time.monotonic() > deadline:
                raise TimeoutError("tuning job %s still %s after %g s" % (
                    name, job["HyperParameterTuningJobStatus"], timeout))
            time.sleep(interval)

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


def start(*flags, bin_dir=None, **options):
    """Starts amtd on free ports with a temporary data dir: an Amtd, to use with `with`.

        with amt_local.start(image_map="image-map.json", time_scale=0.01) as amtd:
            sm = amtd.client("sagemaker")      # or: os.environ.update(amtd.env)

    flags and options as Amtd's; bin_dir None: AMT_BIN, else the amtd on PATH."""
    return Amtd(bin_dir, *flags, **options)
