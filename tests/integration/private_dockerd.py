"""A private dockerd for tests and benchmarks (tests/integration/containers_test.py,
bench/worker/container_overhead.py): everything under one folder (--data-root, --exec-root, its
own socket; no iptables, no bridge), so it runs beside any other dockerd and leaves nothing
behind; a private Podman likewise (its storage and configuration under one folder); and the
FROM-scratch busybox training image of container_trainer/."""
import os
import resource
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python",
                                "src"))
import amt_local  # noqa: E402

TRAINER_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "container_trainer")
# Applets the trainer uses, each a link to busybox in the image's /bin.
APPLETS = ["sh", "cat", "sed", "awk", "sleep", "ls", "head", "tail", "tr", "echo", "nc",
           "hostname"]


def unmount_under(folder):
    """Unmounts everything mounted under `folder`, the innermost first."""
    with open("/proc/self/mounts") as f:
        mounts = [line.split()[1] for line in f]
    root = os.path.realpath(folder) + "/"
    for mount in reversed(mounts):
        if mount.startswith(root):
            subprocess.run(["umount", mount], check=False)


class Dockerd:
    """dockerd with everything under `root`: started in the constructor, stopped by close()."""

    engine = "docker"

    def __init__(self, root):
        self.root = root
        self.socket = os.path.join(root, "docker.sock")
        self.host = "unix://" + self.socket
        # dockerd logs on stderr: read as lines, so the test waits for "API listen on", not a
        # clock.
        command = ["sh", "-c", 'exec "$0" "$@" 2>&1', shutil.which("dockerd"),
                   "--data-root", os.path.join(root, "data"),
                   "--exec-root", os.path.join(root, "exec"),
                   "--pidfile", os.path.join(root, "dockerd.pid"),
                   "-H", self.host, "--iptables=false", "--ip6tables=false", "--bridge=none"]
        self.process = amt_local.Process(command, quiet=True)
        self.log = []
        while True:
            line = self.process.next_line(120)
            if line is None:
                raise RuntimeError("dockerd exited: " + "".join(self.log[-20:]))
            self.log.append(line)
            if "API listen on" in line:
                return

    def docker(self, *args, check=True, env=None):
        result = subprocess.run(["docker", "-H", self.host] + list(args), capture_output=True,
                                text=True, env=env)
        if check and result.returncode != 0:
            raise AssertionError("docker %s: %s" % (" ".join(args), result.stderr))
        return result.stdout

    def close(self):
        """Stops dockerd and unmounts what it left mounted under its folder (its default
        network namespace stays bind-mounted at exec/netns/default)."""
        self.process.close(timeout=60)
        unmount_under(self.root)


class Podman:
    """Podman with its storage and configuration under `root`: CONTAINERS_STORAGE_CONF and
    CONTAINERS_CONF (in self.env, and in os.environ while it is open, which amtd's worker passes
    to the engine's client) name files there, so nothing of it is outside `root`. No daemon.

    containers.conf sets what this machine needs: runc, cgroupfs (no systemd), events to a file
    (no journald), and the containers' file and process limits (podman's default, 1048576 each,
    is above what runc may set here: "error setting rlimits"), taken from this process's
    file limit and 4096 processes. Its network stack is netavark (with aardvark-dns, the DNS by
    which a job's hosts find each other), named rather than left to podman, which takes CNI when
    netavark is missing; set_network_backend("cni") gives the stack without DNS."""

    engine = "podman"

    def __init__(self, root):
        self.root = root
        self.host = None
        with open(os.path.join(root, "storage.conf"), "w") as f:
            f.write('[storage]\ndriver = "vfs"\ngraphroot = "%s"\nrunroot = "%s"\n' % (
                os.path.join(root, "storage"), os.path.join(root, "run")))
        self.set_network_backend("netavark")
        self.conf = {"CONTAINERS_CONF": os.path.join(root, "containers.conf"),
                     "CONTAINERS_STORAGE_CONF": os.path.join(root, "storage.conf")}
        self.saved = {name: os.environ.get(name) for name in self.conf}
        os.environ.update(self.conf)
        self.docker("info", "--format", "{{.Host.OCIRuntime.Name}}")

    def set_network_backend(self, backend):
        """Writes containers.conf with `backend` ("netavark" or "cni"); each podman command reads
        it, so the next network the worker creates has that stack."""
        root = self.root
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        files = "%d:%d" % (soft, hard) if hard != resource.RLIM_INFINITY else "65536:65536"
        with open(os.path.join(root, "containers.conf"), "w") as f:
            f.write('[containers]\ndefault_ulimits = ["nofile=%s", "nproc=4096:4096"]\n'
                    '[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\n'
                    'events_logger = "file"\nevents_logfile_path = "%s"\ntmp_dir = "%s"\n'
                    'volume_path = "%s"\n[network]\nnetwork_backend = "%s"\n'
                    'network_config_dir = "%s"\n' % (
                        files, os.path.join(root, "events.log"), os.path.join(root, "tmp"),
                        os.path.join(root, "volumes"), backend,
                        os.path.join(root, "networks-" + backend)))

    def docker(self, *args, check=True, env=None):
        result = subprocess.run(["podman"] + list(args), capture_output=True, text=True,
                                env=dict(env if env is not None else os.environ, **self.conf))
        if check and result.returncode != 0:
            raise AssertionError("podman %s: %s" % (" ".join(args), result.stderr))
        return result.stdout

    def close(self):
        """Removes its containers, then unmounts what is mounted under its folder."""
        self.docker("rm", "--all", "--force", check=False)
        self.docker("system", "reset", "--force", check=False)
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        unmount_under(self.root)


def engine_or_reason(engine="docker"):
    """Why containers of `engine` (docker or podman) cannot be tested here, or None."""
    if os.geteuid() != 0:
        return "not root (a private %s needs root)" % ("dockerd" if engine == "docker" else
                                                         "podman")
    for tool in ("dockerd", "docker") if engine == "docker" else ("podman",):
        if shutil.which(tool) is None:
            return tool + " is not installed (scripts/install-deps.sh installs %s)" % (
                "docker.io" if engine == "docker" else "podman")
    if not os.access("/bin/busybox", os.X_OK):
        return "/bin/busybox is missing (scripts/install-deps.sh installs busybox-static)"
    return None




def build_trainer_image(dockerd, context, tag):
    """Builds container_trainer/ as `tag`, in the folder `context` (made here)."""
    os.makedirs(os.path.join(context, "bin"))
    shutil.copy(os.path.join(TRAINER_DIR, "Dockerfile"), context)
    shutil.copy(os.path.join(TRAINER_DIR, "train"), context)
    shutil.copy("/bin/busybox", os.path.join(context, "bin", "busybox"))
    for applet in APPLETS:
        os.symlink("busybox", os.path.join(context, "bin", applet))
    # Debian's docker.io has no buildx: the classic builder.
    env = dict(os.environ, DOCKER_BUILDKIT="0")
    dockerd.docker("build", "--quiet", "--tag", tag, context, env=env)
