"""What the package's own tests ask of a process (amt_local_test.py, pytest_plugin_test.py)."""
import os


def alive(pid):
    """Whether process `pid` still runs; a zombie (exited, not yet reaped) counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
