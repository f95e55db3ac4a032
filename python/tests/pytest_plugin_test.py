#!/usr/bin/python3
"""amt_local's pytest plugin as a user gets it: the package installed in a venv (the plugin
loaded through its pytest11 entry point), pytest run on generated test files. The amtd fixture
starts amtd on free ports (two sessions at once each get their own) with the options of the
command line or the ini file, and when the session ends, also after a failed test or on SIGTERM,
amtd and its local worker are gone and the temporary folder removed; without amtd the fixture
says how to point at one; amtd_env points os.environ at amtd for one test only.

Run by CTest (python/tests/CMakeLists.txt, python.pytest_plugin) with the venv's python:

    build/python-venv/bin/python python/tests/pytest_plugin_test.py --bin-dir build/bin
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
from amt_local import Process  # noqa: E402
from process_state import alive  # noqa: E402  (python/tests/, the script's folder)

ARGS = None

# A test that writes what the fixture gave it to $RECORD, then fails.
FAILING = '''
import json, os

def test_records_amtd_then_fails(amtd):
    with open(os.path.join(amtd.data_dir, "worker.pid")) as f:
        worker = int(f.read().split()[0])
    with open("/proc/%d/cmdline" % amtd.pid) as f:
        command = f.read().split("\\0")[:-1]
    assert amtd.client("sagemaker").list_training_jobs()["TrainingJobSummaries"] == []
    with open(os.environ["RECORD"], "w") as f:
        json.dump({"pid": amtd.pid, "worker": worker, "work": amtd.work, "url": amtd.url,
                   "command": command}, f)
    assert False, "this test fails on purpose"
'''

# A test that prints what the fixture gave it, then waits for the line of its $GO fifo.
MEETING = '''
import json, os

def test_meets_the_other_session(amtd):
    print("RECORD " + json.dumps({"pid": amtd.pid, "url": amtd.url, "grpc": amtd.grpc}),
          flush=True)
    with open(os.environ["GO"]) as f:
        assert f.readline() == "go\\n"
'''

ENVIRONMENT = '''
import os
import boto3

def test_amtd_env_points_every_client_at_amtd(amtd, amtd_env):
    assert os.environ["AWS_ENDPOINT_URL"] == amtd.url
    assert "AWS_PROFILE" not in os.environ
    # No endpoint given: AWS's own host, reached through amtd's HTTPS proxy (amtd_env's
    # HTTPS_PROXY and AWS_CA_BUNDLE) even for a boto3 that ignores AWS_ENDPOINT_URL.
    os.environ.pop("AWS_ENDPOINT_URL")
    sm = boto3.client("sagemaker")
    assert sm.list_training_jobs()["TrainingJobSummaries"] == []

def test_the_next_test_has_the_environment_back():
    assert os.environ["AWS_PROFILE"] == "someone-else"
    assert "AWS_ENDPOINT_URL" not in os.environ and "HTTPS_PROXY" not in os.environ
'''


class PytestPluginTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="amt-pytest-plugin-test-")
        self.addCleanup(shutil.rmtree, self.tmp)
        # amtd's temporary folders go here: empty again once a session has ended.
        self.temp = os.path.join(self.tmp, "temp")
        os.mkdir(self.temp)
        self.fifos = {}

    def project(self, name, files):
        folder = os.path.join(self.tmp, name)
        os.mkdir(folder)
        for file, text in files.items():
            with open(os.path.join(folder, file), "w") as f:
                f.write(textwrap.dedent(text))
        return folder

    def env(self, **more):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "AMT_"))}
        env.update(TMPDIR=self.temp, AMT_BIN=os.path.abspath(ARGS.bin_dir),
                   PYTHONDONTWRITEBYTECODE="1")
        env.update(more)
        return env

    def fifo(self, name):
        """A fifo for a test to read a line from, held open for writing here (O_RDWR never
        blocks): what is written waits in it until the test opens it, whenever that is."""
        path = os.path.join(self.tmp, name)
        os.mkfifo(path)
        self.fifos[path] = os.open(path, os.O_RDWR)
        self.addCleanup(os.close, self.fifos[path])
        return path

    def next_record(self, session):
        """The JSON of the test's "RECORD {...}" line (after pytest's "test_x.py ")."""
        while True:
            line = session.next_line(timeout=120)
            self.assertIsNotNone(line, session.stderr_text())
            if "RECORD " in line:
                return json.loads(line.split("RECORD ", 1)[1])

    def pytest_command(self, folder, *options):
        return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", folder] + list(options)

    def pytest(self, folder, *options, **env):
        return subprocess.run(self.pytest_command(folder, *options), env=self.env(**env),
                              capture_output=True, text=True, timeout=240)

    def test_a_failed_test_leaves_no_amtd_no_worker_and_no_folder(self):
        folder = self.project("failing", {"test_failing.py": FAILING})
        record = os.path.join(self.tmp, "record.json")
        result = self.pytest(folder, "--amt-time-scale", "0.5", "--amt-slots", "1",
                             "--amtd-arg=--ui=off", RECORD=record)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("this test fails on purpose", result.stdout)
        self.assertIn("1 failed", result.stdout)
        with open(record) as f:
            seen = json.load(f)
        self.assertTrue(seen["work"].startswith(os.path.join(self.temp, "amt-pytest-")), seen)
        self.assertEqual(seen["command"][1:5], ["--port", "0", "--data-dir",
                                                os.path.join(seen["work"], "data")])
        self.assertEqual(seen["command"][5:], ["--time-scale", "0.5", "--slots", "1",
                                               "--ui=off"])
        self.assertRegex(seen["url"], r"^http://127\.0\.0\.1:\d+$")
        self.assertFalse(alive(seen["pid"]))
        self.assertFalse(alive(seen["worker"]))
        self.assertEqual(os.listdir(self.temp), [])

    def test_the_ini_file_sets_the_options_relative_to_itself(self):
        folder = self.project("ini", {
            "pytest.ini": """\
                [pytest]
                amt_image_map = maps/image-map.json
                amt_time_scale = 0.25
                amt_python = sklearn=/usr/bin/python3
                             xgboost=/usr/bin/python3
                amtd_args = --ui off
                """,
            "test_failing.py": FAILING})
        os.mkdir(os.path.join(folder, "maps"))
        with open(os.path.join(folder, "maps", "image-map.json"), "w") as f:
            f.write("{}\n")
        record = os.path.join(self.tmp, "record.json")
        result = self.pytest(folder, RECORD=record)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        with open(record) as f:
            command = json.load(f)["command"]
        self.assertEqual(command[5:], ["--image-map", os.path.join(folder, "maps",
                                                                   "image-map.json"),
                                       "--time-scale", "0.25", "--python",
                                       "sklearn=/usr/bin/python3", "--python",
                                       "xgboost=/usr/bin/python3", "--ui", "off"])
        self.assertEqual(os.listdir(self.temp), [])

    def test_two_sessions_at_once_each_get_free_ports(self):
        folder = self.project("meeting", {"test_meeting.py": MEETING})
        sessions, seen = [], []
        for name in ("a", "b"):
            go = self.fifo("go-" + name)
            session = Process(self.pytest_command(folder, "-s"), env=self.env(GO=go),
                              quiet=True)
            self.addCleanup(session.close)
            sessions.append((session, go))
        for session, _ in sessions:  # both amtds run: each test waits for its fifo
            seen.append(self.next_record(session))
        self.assertTrue(all(alive(s["pid"]) for s in seen))
        self.assertNotEqual(seen[0]["url"], seen[1]["url"])
        self.assertNotEqual(seen[0]["grpc"], seen[1]["grpc"])
        for session, go in sessions:
            os.write(self.fifos[go], b"go\n")
        for session, _ in sessions:
            self.assertEqual(session.wait(timeout=120), 0, session.rest_of_stdout())
        self.assertFalse(any(alive(s["pid"]) for s in seen))
        self.assertEqual(os.listdir(self.temp), [])

    def test_a_session_ended_by_sigterm_stops_amtd_and_removes_its_folder(self):
        folder = self.project("terminated", {"test_meeting.py": MEETING})
        session = Process(self.pytest_command(folder, "-s"), quiet=True,
                          env=self.env(GO=self.fifo("never")))
        self.addCleanup(session.close)
        seen = self.next_record(session)
        self.assertTrue(alive(seen["pid"]))
        session.stop(signal.SIGTERM, timeout=120)  # its test waits on a fifo nobody writes
        self.assertEqual(session.returncode, 2, session.rest_of_stdout())  # pytest: interrupted
        self.assertFalse(alive(seen["pid"]))
        self.assertEqual(os.listdir(self.temp), [])

    def test_without_amtd_the_fixture_says_how_to_point_at_one(self):
        folder = self.project("no_amtd", {"test_failing.py": FAILING})
        empty = os.path.join(self.tmp, "empty")
        os.mkdir(empty)
        result = self.pytest(folder, AMT_BIN=empty, RECORD=os.path.join(self.tmp, "unused"))
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("1 error", result.stdout)
        self.assertIn("AmtdNotFound: AMT_BIN=%s has no amtd or amt-worker or amt" % empty,
                      result.stdout)
        env = self.env(PATH="/usr/bin:/bin")
        del env["AMT_BIN"]
        result = subprocess.run(self.pytest_command(folder), env=env, capture_output=True,
                                text=True, timeout=240)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("AmtdNotFound: amtd is not on PATH and AMT_BIN is not set",
                      result.stdout)

    def test_amtd_env_sets_the_environment_for_one_test(self):
        folder = self.project("environment", {"test_environment.py": ENVIRONMENT})
        result = self.pytest(folder, AWS_PROFILE="someone-else")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("2 passed", result.stdout)
        self.assertEqual(os.listdir(self.temp), [])


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin-dir", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
