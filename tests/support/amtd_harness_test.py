#!/usr/bin/python3
"""amtd_harness against the real amtd: its banner parsed for every combination of the parts amtd
prints (orchestrator/main.cc), a refused start reported with amtd's exit code and stderr, and
close() leaving no process and no folder behind, even when amtd has to be killed.

Run by CTest (tests/support/CMakeLists.txt, support.amtd_harness):

    /usr/bin/python3 tests/support/amtd_harness_test.py --bin-dir build/bin
"""

import argparse
import os
import shutil
import signal
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import amtd_harness  # noqa: E402

ARGS = None


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by its parent) counts as gone
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class ParseBannerTest(unittest.TestCase):
    def test_every_part(self):
        banner = amtd_harness.parse_banner(
            "amtd listening on 127.0.0.1:7070 (gRPC), http://127.0.0.1:7071 (AWS JSON: boto3, "
            "aws cli), unix:/tmp/a b/amtd.sock (workers on this machine), the page at "
            "http://127.0.0.1:7071/, the HTTPS proxy for AWS hosts (CA /tmp/a b/proxy-ca.pem)\n")
        self.assertEqual(banner, amtd_harness.Banner(
            grpc="127.0.0.1:7070", url="http://127.0.0.1:7071",
            worker_socket="unix:/tmp/a b/amtd.sock", page="http://127.0.0.1:7071/",
            proxy_ca="/tmp/a b/proxy-ca.pem"))

    def test_grpc_only(self):
        self.assertEqual(amtd_harness.parse_banner("amtd listening on 0.0.0.0:1 (gRPC)\n"),
                         amtd_harness.Banner("0.0.0.0:1", None, None, None, None))

    def test_anything_else_is_refused(self):
        for line in ("", "amtd: cannot open the data dir\n",
                     "amtd listening on 127.0.0.1:1 (gRPC), something new\n"):
            with self.assertRaises(amtd_harness.AmtdError):
                amtd_harness.parse_banner(line)


class RealAmtdTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="amtd-harness-test-")
        self.addCleanup(os.rmdir, self.tmp)  # fails when anything was left in it

    def start(self, *flags, **kwargs):
        return amtd_harness.Amtd(ARGS.bin_dir, *flags, prefix=os.path.join(self.tmp, "amtd-"),
                                 **kwargs)

    def test_a_default_amtd_prints_every_part_and_close_leaves_nothing(self):
        with self.start(slots=1) as amtd:
            self.assertTrue(amtd.work.startswith(os.path.join(self.tmp, "amtd-")), amtd.work)
            self.assertEqual(amtd.data_dir, os.path.join(amtd.work, "data"))
            self.assertRegex(amtd.grpc, r"^127\.0\.0\.1:\d+$")
            self.assertEqual(amtd.url, "http://127.0.0.1:%d" % amtd.http_port)
            self.assertNotEqual(amtd.http_port, amtd.grpc_port)
            self.assertEqual(amtd.worker_socket, "unix:" + os.path.join(amtd.data_dir,
                                                                        "amtd.sock"))
            self.assertEqual(amtd.page, amtd.url + "/")
            self.assertEqual(amtd.proxy_ca, os.path.join(amtd.data_dir, "proxy-ca.pem"))
            self.assertEqual(amtd.client("sagemaker").list_training_jobs()[
                "TrainingJobSummaries"], [])
            env = amtd.amt_env(endpoint_url=False)
            self.assertNotIn("AWS_ENDPOINT_URL", env)
            self.assertEqual((env["HTTPS_PROXY"], env["AWS_CA_BUNDLE"]),
                             (amtd.url, amtd.proxy_ca))
            with open(os.path.join(amtd.data_dir, "worker.pid")) as f:
                worker = int(f.read().split()[0])
            self.assertTrue(alive(worker))
        self.assertEqual(amtd.process.returncode, 0)  # SIGTERM: a clean shutdown
        self.assertFalse(alive(worker))
        self.assertFalse(os.path.exists(amtd.work))

    def test_the_optional_parts_go_with_their_flags(self):
        with self.start("--http-port", "-1", local_worker=False) as amtd:
            self.assertEqual((amtd.banner.url, amtd.page, amtd.proxy_ca), (None, None, None))
            self.assertIsNotNone(amtd.worker_socket)
            with self.assertRaises(amtd_harness.AmtdError):
                amtd.url  # pylint: disable=pointless-statement
        with self.start("--ui", "off", "--https-proxy", "off", local_worker=False) as amtd:
            self.assertIsNotNone(amtd.banner.url)
            self.assertEqual((amtd.page, amtd.proxy_ca), (None, None))

    def test_a_refused_start_says_why_and_leaves_nothing(self):
        with self.assertRaises(amtd_harness.AmtdExited) as caught:
            self.start("--host", "0.0.0.0", local_worker=False, quiet=True)
        self.assertEqual(caught.exception.returncode, 1)
        self.assertIn("refusing to listen on 0.0.0.0 without --credentials",
                      caught.exception.stderr)
        self.assertEqual(os.listdir(self.tmp), [])

    def test_a_kept_data_dir_serves_a_second_amtd_and_stays(self):
        data = os.path.join(self.tmp, "kept")
        with self.start(local_worker=False, data_dir=data) as first:
            self.assertIsNone(first.work)
            self.assertEqual(first.data_dir, data)
        with self.start(local_worker=False, data_dir=data) as second:
            self.assertEqual(second.client("sagemaker").list_training_jobs()[
                "TrainingJobSummaries"], [])
        self.assertTrue(os.path.isfile(os.path.join(data, "amt.db")))
        shutil.rmtree(data)

    def test_an_amtd_deaf_to_sigterm_is_killed_with_its_local_worker(self):
        amtd = self.start(slots=1, stop_timeout=1)
        with open(os.path.join(amtd.data_dir, "worker.pid")) as f:
            worker = int(f.read().split()[0])
        os.kill(amtd.pid, signal.SIGSTOP)  # SIGTERM then waits in vain: stop_timeout, SIGKILL
        amtd.close()
        self.assertEqual(amtd.process.returncode, -signal.SIGKILL)
        self.assertFalse(alive(worker))  # a killed amtd's worker would wait for the next amtd
        self.assertFalse(os.path.exists(amtd.work))


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin-dir", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
