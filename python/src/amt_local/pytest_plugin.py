"""amt_local's pytest plugin (entry point pytest11, loaded by itself once amt_local is installed):
amtd for a test session, on free ports in a temporary folder, stopped and removed when the
session ends, whether its tests passed or failed.

Fixtures:
  amtd       (session) the running amt_local.Amtd: amtd.client("sagemaker") (boto3),
             amtd.url, amtd.env (what `amt env` exports), amtd.wait_for_tuning_job(name)
  amtd_env   (function) os.environ pointed at that amtd for one test (amtd.env set, every
             other AWS_* and AMT_* variable unset), for code that builds its own clients:
             the SageMaker Python SDK, boto3 without arguments, the aws cli, `amt`

Options, on the command line or in the ini file ([pytest] / [tool.pytest.ini_options]; a path
there is relative to the ini file's folder); the command line wins:
  --amt-bin DIR            amt_bin          amtd's folder (default: $AMT_BIN, else PATH)
  --amt-image-map FILE     amt_image_map    amtd --image-map
  --amt-time-scale X       amt_time_scale   amtd --time-scale (0.01: SageMaker's waits 100x
                                            shorter)
  --amt-python SPEC        amt_python       amtd --python [FRAMEWORK=]PATH (repeatable; one a
                                            line in the ini file)
  --amt-slots N            amt_slots        amtd --slots
  --amtd-arg=FLAG          amtd_args        any other amtd flag (repeatable; the ini's are
                                            split as a shell would)
A failed test that used `amtd` gets the end of amtd's stderr in its report. While amtd runs,
SIGTERM stops the session as Ctrl-C does, so that amtd is stopped and its folder removed then too.
"""

import os
import signal
import threading

import pytest

from amt_local._amtd import Amtd, find_bin_dir

_STDERR_LINES = 60  # of amtd's stderr in a failed test's report


def pytest_addoption(parser):
    group = parser.getgroup("amt_local", "amt-local's amtd (the amtd fixture)")
    group.addoption("--amt-bin", help="folder of amtd, amt-worker and amt (default: $AMT_BIN, "
                    "else the amtd on PATH)")
    group.addoption("--amt-image-map", help="amtd --image-map: TrainingImage -> local command")
    group.addoption("--amt-time-scale", type=float, help="amtd --time-scale")
    group.addoption("--amt-python", action="append", metavar="[FRAMEWORK=]PATH",
                    help="amtd --python, for framework images in script mode (repeatable)")
    group.addoption("--amt-slots", type=int, help="amtd --slots: training jobs run at once")
    group.addoption("--amtd-arg", action="append", metavar="FLAG",
                    help="one more amtd flag, e.g. --amtd-arg=--hyperband-eta=2 (repeatable)")
    parser.addini("amt_bin", "folder of amtd, amt-worker and amt", default="")
    parser.addini("amt_image_map", "amtd --image-map, relative to the ini file", default="")
    parser.addini("amt_time_scale", "amtd --time-scale", default="")
    parser.addini("amt_python", "amtd --python values, one a line", type="linelist",
                  default=[])
    parser.addini("amt_slots", "amtd --slots", default="")
    parser.addini("amtd_args", "more amtd flags", type="args", default=[])


def _ini_path(config, value):
    if not value:
        return None
    base = config.inipath.parent if config.inipath is not None else config.rootpath
    return os.path.join(str(base), os.path.expanduser(value))


def amtd_options(config):
    """Amtd's arguments from `config`'s options and ini values: (flags, keyword arguments)."""
    def pick(option, ini, convert=str):
        value = config.getoption(option)
        if value is not None:
            return value
        value = config.getini(ini)
        return convert(value) if value else None

    bin_dir = config.getoption("amt_bin") or _ini_path(config, config.getini("amt_bin"))
    image_map = config.getoption("amt_image_map") or _ini_path(config,
                                                               config.getini("amt_image_map"))
    options = dict(bin_dir=bin_dir or find_bin_dir(), image_map=image_map,
                   time_scale=pick("amt_time_scale", "amt_time_scale", float),
                   python=config.getoption("amt_python") or config.getini("amt_python"),
                   slots=pick("amt_slots", "amt_slots", int), quiet=True, prefix="amt-pytest-")
    flags = config.getoption("amtd_arg") or config.getini("amtd_args")
    return list(flags), options


@pytest.fixture(scope="session")
def amtd(pytestconfig):
    """amtd for the session (amt_local.Amtd), on free ports with a temporary data dir; stopped,
    and its folder removed, when the session ends."""
    flags, options = amtd_options(pytestconfig)
    bin_dir = options.pop("bin_dir")
    # pytest dies of SIGTERM (a CI job's timeout) without tearing fixtures down, which would
    # leave amtd running: while amtd runs, SIGTERM interrupts the session as Ctrl-C does.
    replaced = (signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
                and threading.current_thread() is threading.main_thread())
    if replaced:
        signal.signal(signal.SIGTERM, _interrupt)
    try:
        with Amtd(bin_dir, *flags, **options) as running:
            yield running
    finally:
        if replaced:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _interrupt(signum, frame):
    raise KeyboardInterrupt("SIGTERM")


@pytest.fixture
def amtd_env(amtd, monkeypatch):
    """os.environ pointed at the session's amtd for this test: amtd.env set, every other AWS_*
    and AMT_* variable unset; the dict of what was set."""
    env = amtd.env
    for name in list(os.environ):
        if name.startswith(("AWS_", "AMT_")) and name not in env:
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    running = getattr(item, "funcargs", {}).get("amtd")
    if report.failed and isinstance(running, Amtd) and running.process is not None:
        lines = running.stderr_text().splitlines()[-_STDERR_LINES:]
        if lines:
            report.sections.append(("amtd stderr (last %d lines)" % len(lines),
                                    "\n".join(lines)))
