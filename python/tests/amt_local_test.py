#!/usr/bin/python3
"""amt_local (python/src, from the source tree) against the real amtd: its banner parsed for
every combination of the parts amtd prints (orchestrator/main.cc), a refused start reported with
amtd's exit code and stderr, close() leaving no process and no folder behind, even when amtd has
to be killed or the body of the `with` raises, amtd found through AMT_BIN or PATH, and the
environment of `amt env`.

Run by CTest (python/tests/CMakeLists.txt, python.amt_local):

    /usr/bin/python3 python/tests/amt_local_test.py --bin-dir build/bin
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
import amt_local  # noqa: E402
from process_state import alive  # noqa: E402  (python/tests/, the script's folder)

ARGS = None


class ParseBannerTest(unittest.TestCase):
    def test_every_part(self):
        banner = amt_local.parse_banner(
            "amtd listening on 127.0.0.1:7070 (gRPC), http://127.0.0.1:7071 (AWS JSON: boto3, "
            "aws cli), unix:/tmp/a b/amtd.sock (workers on this machine), the page at "
            "http://127.0.0.1:7071/, the HTTPS proxy for AWS hosts (CA /tmp/a b/proxy-ca.pem)\n")
        self.assertEqual(banner, amt_local.Banner(
            grpc="127.0.0.1:7070", url="http://127.0.0.1:7071",
            worker_socket="unix:/tmp/a b/amtd.sock", page="http://127.0.0.1:7071/",
            proxy_ca="/tmp/a b/proxy-ca.pem"))

    def test_grpc_only(self):
        self.assertEqual(amt_local.parse_banner("amtd listening on 0.0.0.0:1 (gRPC)\n"),
                         amt_local.Banner("0.0.0.0:1", None, None, None, None))

    def test_anything_else_is_refused(self):
        for line in ("", "amtd: cannot open the data dir\n",
                     "amtd listening on 127.0.0.1:1 (gRPC), something new\n"):
            with self.assertRaises(amt_local.AmtdError):
                amt_local.parse_banner(line)


class RealAmtdTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="amt-local-test-")
        self.addCleanup(os.rmdir, self.tmp)  # fails when anything was left in it

    def start(self, *flags, **kwargs):
        return amt_local.Amtd(ARGS.bin_dir, *flags, prefix=os.path.join(self.tmp, "amtd-"),
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
            with self.assertRaises(amt_local.AmtdError):
                amtd.url  # pylint: disable=pointless-statement
        with self.start("--ui", "off", "--https-proxy", "off", local_worker=False) as amtd:
            self.assertIsNotNone(amtd.banner.url)
            self.assertEqual((amtd.page, amtd.proxy_ca), (None, None))

    def test_a_refused_start_says_why_and_leaves_nothing(self):
        with self.assertRaises(amt_local.AmtdExited) as caught:
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


class FindBinDirTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="amt-local-bin-")
        self.addCleanup(shutil.rmtree, self.tmp)

    def test_amt_bin_names_the_folder(self):
        self.assertEqual(amt_local.find_bin_dir({"AMT_BIN": ARGS.bin_dir, "PATH": ""}),
                         os.path.abspath(ARGS.bin_dir))

    def test_path_leads_to_the_real_folder_of_amtd(self):
        os.symlink(os.path.join(os.path.abspath(ARGS.bin_dir), "amtd"),
                   os.path.join(self.tmp, "amtd"))
        # The link's own folder has no amt-worker: the folder is the one amtd really is in.
        self.assertEqual(amt_local.find_bin_dir({"PATH": "/nonexistent:" + self.tmp}),
                         os.path.dirname(os.path.realpath(os.path.join(ARGS.bin_dir, "amtd"))))

    def test_a_folder_without_the_programs_is_refused_by_name(self):
        os.symlink(os.path.join(os.path.abspath(ARGS.bin_dir), "amtd"),
                   os.path.join(self.tmp, "amtd"))
        with self.assertRaisesRegex(amt_local.AmtdNotFound,
                                    r"^AMT_BIN=%s has no amt-worker or amt$" % self.tmp):
            amt_local.find_bin_dir({"AMT_BIN": self.tmp})
        with self.assertRaisesRegex(amt_local.AmtdNotFound, "amtd is not on PATH and AMT_BIN "
                                    "is not set"):
            amt_local.find_bin_dir({"PATH": "/nonexistent"})


class StartTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="amt-local-test-")
        self.addCleanup(os.rmdir, self.tmp)  # fails when anything was left in it

    def test_a_body_that_raises_stops_amtd_and_removes_its_folder(self):
        with self.assertRaisesRegex(ValueError, "^the body failed$"):
            with amt_local.start(bin_dir=ARGS.bin_dir, slots=1, time_scale=0.5,
                                 python=["sklearn=/usr/bin/python3"],
                                 prefix=os.path.join(self.tmp, "amtd-")) as amtd:
                with open("/proc/%d/cmdline" % amtd.pid) as f:
                    command = f.read().split("\0")[:-1]
                with open(os.path.join(amtd.data_dir, "worker.pid")) as f:
                    worker = int(f.read().split()[0])
                raise ValueError("the body failed")
        self.assertEqual(command, [os.path.join(os.path.abspath(ARGS.bin_dir), "amtd"),
                                   "--port", "0", "--data-dir", amtd.data_dir, "--time-scale",
                                   "0.5", "--python", "sklearn=/usr/bin/python3", "--slots",
                                   "1"])
        self.assertEqual(amtd.process.returncode, 0)
        self.assertFalse(alive(amtd.pid))
        self.assertFalse(alive(worker))
        self.assertFalse(os.path.exists(amtd.work))

    def test_amtd_is_found_through_amt_bin(self):
        saved = os.environ.get("AMT_BIN")
        os.environ["AMT_BIN"] = ARGS.bin_dir
        try:
            with amt_local.start(local_worker=False,
                                 prefix=os.path.join(self.tmp, "amtd-")) as amtd:
                self.assertEqual(amtd.bin_dir, os.path.abspath(ARGS.bin_dir))
        finally:
            if saved is None:
                del os.environ["AMT_BIN"]
            else:
                os.environ["AMT_BIN"] = saved

    def test_env_is_amt_envs_exports_and_reaches_amtd_through_the_proxy(self):
        with amt_local.start(bin_dir=ARGS.bin_dir, local_worker=False,
                             prefix=os.path.join(self.tmp, "amtd-")) as amtd:
            env = amtd.env
            self.assertEqual(env, {
                "AWS_ENDPOINT_URL": amtd.url, "AWS_ACCESS_KEY_ID": "amt-local",
                "AWS_SECRET_ACCESS_KEY": "amt-local", "AWS_DEFAULT_REGION": "us-east-1",
                "AWS_REGION": "us-east-1", "HTTPS_PROXY": amtd.url, "https_proxy": amtd.url,
                "NO_PROXY": "127.0.0.1,localhost,::1", "no_proxy": "127.0.0.1,localhost,::1",
                "AWS_CA_BUNDLE": amtd.proxy_ca, "AMT_ENDPOINT": amtd.grpc,
                "AMT_ENDPOINT_URL": amtd.url})
            environ = amtd.environ({"PATH": "/bin", "AWS_PROFILE": "prod",
                                    "AWS_SESSION_TOKEN": "t", "AMT_ENDPOINT": "elsewhere:1"})
            self.assertEqual(environ, dict(env, PATH="/bin"))
            # boto3 with no endpoint: AWS's own host, reached through amtd's HTTPS proxy.
            listed = subprocess.run(
                ["/usr/bin/python3", "-c", "import boto3; print(boto3.client('sagemaker')."
                 "list_training_jobs()['TrainingJobSummaries'])"],
                env=dict(environ, AWS_ENDPOINT_URL=""), capture_output=True, text=True,
                timeout=60)
            self.assertEqual((listed.returncode, listed.stdout), (0, "[]\n"), listed.stderr)

    def test_the_amt_cli_reaches_amtd_through_env(self):
        with amt_local.start(bin_dir=ARGS.bin_dir, local_worker=False,
                             prefix=os.path.join(self.tmp, "amtd-")) as amtd:
            amtd.client("sagemaker").create_training_job(
                TrainingJobName="reached-through-env",
                AlgorithmSpecification={"TrainingImage": "/bin/true",
                                        "TrainingInputMode": "File"},
                RoleArn="arn:aws:iam::123456789012:role/R",
                OutputDataConfig={"S3OutputPath": "s3://bucket/out"},
                ResourceConfig={"InstanceType": "ml.m5.large", "InstanceCount": 1,
                                "VolumeSizeInGB": 1},
                StoppingCondition={"MaxRuntimeInSeconds": 60})
            listed = subprocess.run([os.path.join(ARGS.bin_dir, "amt"), "list-training-jobs"],
                                    env=amtd.environ(), capture_output=True, text=True,
                                    timeout=60)
            self.assertEqual(listed.returncode, 0, listed.stderr)
            self.assertEqual([job["TrainingJobName"] for job in
                              json.loads(listed.stdout)["TrainingJobSummaries"]],
                             ["reached-through-env"])


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin-dir", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
