"""A private dockerd for tests and benchmarks (tests/integration/containers_test.py,
bench/worker/container_overhead.py): everything under one folder (--data-root, --exec-root, its
own socket; no iptables, no bridge), so it runs beside any other dockerd and leaves nothing
behind; and the FROM-scratch busybox training image of container_trainer/."""
import os
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


class Dockerd:
    """dockerd with everything under `root`: started in the constructor, stopped by close()."""

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
        with open("/proc/self/mounts") as f:
            mounts = [line.split()[1] for line in f]
        root = os.path.realpath(self.root) + "/"
        for mount in reversed(mounts):
            if mount.startswith(root):
                subprocess.run(["umount", mount], check=False)


def engine_or_reason():
    """Why containers cannot be tested here, or None."""
    if os.geteuid() != 0:
        return "not root (a private dockerd needs root)"
    for tool in ("dockerd", "docker"):
        if shutil.which(tool) is None:
            return tool + " is not installed (scripts/install-deps.sh installs docker.io)"
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
