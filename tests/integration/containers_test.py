#!/usr/bin/env python3
"""Training images as containers (issue 36), with a real dockerd: the test starts its own, with
private paths (--data-root, --exec-root, its own socket; no iptables, no bridge), builds a
FROM-scratch image of Debian's static busybox and a shell trainer (container_trainer/), and runs
amtd with DOCKER_HOST pointing at it. With --engine podman, the same with a private Podman (its
storage and configuration in the test's folder). Each test ends with no container and no volume
left.

    /usr/bin/python3 tests/integration/containers_test.py --bin-dir build/bin [--engine podman]

Needs root, dockerd and docker (Debian's docker.io), or podman, and /bin/busybox
(busybox-static): without them, or when the engine cannot start here, it says why and exits 77
(CTest: skipped).
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python",
                                "src"))
import amt_local  # noqa: E402
from private_dockerd import Dockerd, Podman, build_trainer_image, engine_or_reason  # noqa: E402

ARGS = None
SKIP = 77
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/amt-test-trainer:1"


class ContainersTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Short: dockerd's and containerd's sockets live under it.
        cls.work = tempfile.mkdtemp(prefix="ct")
        try:
            cls.dockerd = Dockerd(cls.work) if ARGS.engine == "docker" else Podman(cls.work)
        except BaseException:
            shutil.rmtree(cls.work, ignore_errors=True)
            raise
        build_trainer_image(cls.dockerd, os.path.join(cls.work, "image"), IMAGE)
        if cls.dockerd.host is not None:
            os.environ["DOCKER_HOST"] = cls.dockerd.host
        # The containers' limits: the InstanceType's, times 0.05 (ml.m5.4xlarge: 0.8 CPUs and
        # 3.2 GiB; ml.t3.medium: 0.1 CPUs and 205 MiB). Spot jobs are interrupted once, 1 s in.
        cls.amtd = amt_local.Amtd(ARGS.bin_dir, "--container-runtime", ARGS.engine,
                                  "--container-resource-scale", "0.05",
                                  "--spot-interrupt-after", "100", "--spot-max-interruptions", "1",
                                  time_scale=0.01, slots=2, quiet=True)
        cls.sm = cls.amtd.client("sagemaker")

    @classmethod
    def tearDownClass(cls):
        cls.amtd.close()
        os.environ.pop("DOCKER_HOST", None)
        cls.dockerd.docker("image", "rm", "--force", IMAGE, check=False)
        cls.dockerd.close()
        shutil.rmtree(cls.work, ignore_errors=True)

    def tearDown(self):
        self.assertEqual(self.dockerd.docker("ps", "--all", "--quiet"), "",
                         "a container was left behind")
        self.assertEqual(self.dockerd.docker("volume", "ls", "--quiet"), "",
                         "a volume was left behind")
        self.assertEqual(self.dockerd.docker("network", "ls", "--quiet", "--filter",
                                             "label=amt-local.work-dir"), "",
                         "a job's network was left behind")

    # --- helpers ---------------------------------------------------------------------------

    def training_job(self, name, mode="", instance_type="ml.m5.4xlarge", **extra):
        request = {
            "TrainingJobName": name,
            "HyperParameters": {"x": "1.5"},
            "AlgorithmSpecification": {
                "TrainingImage": IMAGE, "TrainingInputMode": "File",
                "MetricDefinitions": [{"Name": "loss", "Regex": "loss=([0-9.eE+-]+)"}]},
            "RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole",
            "OutputDataConfig": {"S3OutputPath": "s3://containers/output"},
            "ResourceConfig": {"InstanceType": instance_type, "InstanceCount": 1,
                               "VolumeSizeInGB": 10},
            "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
            "CheckpointConfig": {"S3Uri": "s3://containers/checkpoints/" + name},
            "Environment": {"MODE": mode},
        }
        request.update(extra)
        self.sm.create_training_job(**request)

    def wait_for_job(self, name, timeout=120):
        waiter = self.sm.get_waiter("training_job_completed_or_stopped")
        try:
            waiter.wait(TrainingJobName=name,
                        WaiterConfig={"Delay": 0.1, "MaxAttempts": int(timeout * 10)})
        except Exception:  # a Failed job ends the waiter with an error: the description says
            pass
        return self.sm.describe_training_job(TrainingJobName=name)

    def log_lines(self, name):
        out = subprocess.run(self.amtd.amt_command("logs", name), capture_output=True,
                             text=True, check=True).stdout
        return out.splitlines()

    def wait_for_line(self, name, text, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.log_lines(name):
                return
            time.sleep(0.05)
        self.fail("%s never printed %r: %s" % (name, text, self.log_lines(name)))

    def s3(self, *parts):
        return os.path.join(self.amtd.data_dir, "s3", *parts)

    # --- the tests -------------------------------------------------------------------------

    def test_a_bayesian_tuning_job_with_auto_early_stopping_runs_the_image(self):
        self.sm.create_hyper_parameter_tuning_job(
            HyperParameterTuningJobName="ct-bayes",
            HyperParameterTuningJobConfig={
                "Strategy": "Bayesian",
                "HyperParameterTuningJobObjective": {"Type": "Minimize", "MetricName": "loss"},
                "ResourceLimits": {"MaxNumberOfTrainingJobs": 4, "MaxParallelTrainingJobs": 2},
                "ParameterRanges": {"ContinuousParameterRanges": [
                    {"Name": "x", "MinValue": "0", "MaxValue": "4"}]},
                "TrainingJobEarlyStoppingType": "Auto"},
            TrainingJobDefinition={
                "AlgorithmSpecification": {
                    "TrainingImage": IMAGE, "TrainingInputMode": "File",
                    "MetricDefinitions": [{"Name": "loss", "Regex": "loss=([0-9.eE+-]+)"}]},
                "RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole",
                "OutputDataConfig": {"S3OutputPath": "s3://containers/output"},
                "ResourceConfig": {"InstanceType": "ml.m5.4xlarge", "InstanceCount": 1,
                                   "VolumeSizeInGB": 10},
                "StoppingCondition": {"MaxRuntimeInSeconds": 3600}})
        job = self.amtd.wait_for_tuning_job("ct-bayes", timeout=300, client=self.sm)
        self.assertEqual(job["HyperParameterTuningJobStatus"], "Completed")
        counters = job["TrainingJobStatusCounters"]
        self.assertEqual(counters["Completed"] + counters["Stopped"], 4, counters)
        best = job["BestTrainingJob"]
        x = float(best["TunedHyperParameters"]["x"])
        self.assertAlmostEqual(best["FinalHyperParameterTuningJobObjectiveMetric"]["Value"],
                               (x - 2) ** 2 + 1 / 3, places=3)
        lines = self.log_lines(best["TrainingJobName"])
        self.assertIn("args: train", lines)  # SageMaker's `docker run <image> train`
        self.assertIn("model dir: /opt/ml/model, job: %s, host: algo-1" % best["TrainingJobName"],
                      lines)
        described = self.sm.describe_training_job(TrainingJobName=best["TrainingJobName"])
        self.assertEqual(described["AlgorithmSpecification"]["TrainingImage"], IMAGE)
        model = self.s3("containers", "output", best["TrainingJobName"], "output",
                        "model.tar.gz")
        self.assertTrue(os.path.getsize(model) > 0)

    def test_the_failure_file_is_the_failure_reason(self):
        self.training_job("ct-fail", mode="fail")
        job = self.wait_for_job("ct-fail")
        self.assertEqual(job["TrainingJobStatus"], "Failed")
        self.assertEqual(job["FailureReason"], "AlgorithmError: bad input data: column 3 is empty")

    def test_a_stop_is_a_sigterm_to_the_trainer_and_its_checkpoint_is_kept(self):
        self.training_job("ct-stop", mode="sleep")
        self.wait_for_line("ct-stop", "sleeping until stopped")
        self.sm.stop_training_job(TrainingJobName="ct-stop")
        job = self.wait_for_job("ct-stop")
        self.assertEqual(job["TrainingJobStatus"], "Stopped")
        self.assertIn("got SIGTERM", self.log_lines("ct-stop"))
        with open(self.s3("containers", "checkpoints", "ct-stop", "stopped")) as f:
            self.assertEqual(f.read(), "stopped\n")

    def test_a_spot_interruption_resumes_from_the_checkpoint(self):
        self.training_job("ct-spot", mode="resume", EnableManagedSpotTraining=True,
                          StoppingCondition={"MaxRuntimeInSeconds": 3600,
                                             "MaxWaitTimeInSeconds": 7200})
        job = self.wait_for_job("ct-spot")
        self.assertEqual(job["TrainingJobStatus"], "Completed", job.get("FailureReason"))
        lines = self.log_lines("ct-spot")
        resumed = [line for line in lines if line.startswith("resuming at epoch ")]
        self.assertEqual(len(resumed), 1, lines)
        self.assertGreater(int(resumed[0].split()[-1]), 1)
        self.assertIn("epoch=8 loss=0.375", lines)  # (1.5-2)^2 + 1/8

    def test_going_over_the_memory_limit_fails_the_job_out_of_memory(self):
        self.training_job("ct-oom", mode="oom", instance_type="ml.t3.medium")
        job = self.wait_for_job("ct-oom")
        self.assertEqual(job["TrainingJobStatus"], "Failed")
        if ARGS.engine == "podman":
            # Podman 4.3 with runc on cgroup v1 (this machine) says OOMKilled false for a kill
            # by the memory limit: the job fails as killed (docs/sagemaker-mapping.md).
            self.assertIn("killed by signal 9", job["FailureReason"])
        else:
            self.assertIn("OutOfMemoryError", job["FailureReason"])
        self.assertNotIn("still alive", self.log_lines("ct-oom"))

    def test_network_isolation_leaves_the_container_only_loopback(self):
        self.training_job("ct-isolated", EnableNetworkIsolation=True)
        self.training_job("ct-networked")
        self.assertEqual(self.wait_for_job("ct-isolated")["TrainingJobStatus"], "Completed")
        self.assertEqual(self.wait_for_job("ct-networked")["TrainingJobStatus"], "Completed")
        self.assertIn("interfaces: lo ", self.log_lines("ct-isolated"))
        networked = [line for line in self.log_lines("ct-networked")
                     if line.startswith("interfaces: ")]
        self.assertEqual(len(networked), 1)
        self.assertNotEqual(networked[0], "interfaces: lo ")  # the machine's network

    def test_two_hosts_reach_each_other_by_name_on_the_jobs_network(self):
        self.training_job("ct-pair", mode="pair", ResourceConfig={
            "InstanceType": "ml.m5.4xlarge", "InstanceCount": 2, "VolumeSizeInGB": 10})
        job = self.wait_for_job("ct-pair")
        self.assertEqual(job["TrainingJobStatus"], "Completed", job.get("FailureReason"))
        lines = self.log_lines("ct-pair")
        self.assertIn("algo-1 heard: hello from algo-2", lines)
        self.assertIn("model dir: /opt/ml/model, job: ct-pair, host: algo-2", lines)

    def test_hosts_on_a_network_without_dns_fail_the_job_saying_what_to_install(self):
        if ARGS.engine != "podman":
            self.skipTest("Docker's user-defined networks always have DNS")
        # Podman on CNI: its networks have no DNS, so algo-1 and algo-2 could not find each other.
        self.dockerd.set_network_backend("cni")
        try:
            self.training_job("ct-nodns", mode="pair", ResourceConfig={
                "InstanceType": "ml.m5.4xlarge", "InstanceCount": 2, "VolumeSizeInGB": 10})
            job = self.wait_for_job("ct-nodns")
            left = self.dockerd.docker("network", "ls", "--quiet", "--filter",
                                       "label=amt-local.work-dir")
        finally:
            self.dockerd.set_network_backend("netavark")
        self.assertEqual(job["TrainingJobStatus"], "Failed")
        self.assertIn("podman's network amt-ct-nodns-1 has no DNS, so the job's hosts could not "
                      "find each other as algo-1, algo-2", job["FailureReason"])
        self.assertIn("apt-get install netavark aardvark-dns", job["FailureReason"])
        self.assertEqual(left, "", "the job's network was left behind")

    def test_script_mode_finds_the_jobs_code_in_opt_ml_code(self):
        # What a framework estimator of the SDK uploads: sourcedir.tar.gz with the entry point,
        # named by sagemaker_submit_directory (JSON-encoded, as the SDK writes hyperparameters).
        archive = os.path.join(self.work, "sourcedir.tar.gz")
        entry = os.path.join(self.work, "entry.sh")
        with open(entry, "w") as f:
            f.write('echo "entry.sh in $(pwd) with $*"\necho "loss=0.25"\n')
        with tarfile.open(archive, "w:gz") as tar:
            tar.add(entry, arcname="entry.sh")
        s3 = self.amtd.client("s3")
        try:
            s3.create_bucket(Bucket="containers")
        except s3.exceptions.ClientError:
            pass  # another test made it
        s3.upload_file(archive, "containers", "code/ct-script/sourcedir.tar.gz")
        self.training_job("ct-script", HyperParameters={
            "x": "1.5", "sagemaker_program": '"entry.sh"',
            "sagemaker_submit_directory": '"s3://containers/code/ct-script/sourcedir.tar.gz"'})
        job = self.wait_for_job("ct-script")
        self.assertEqual(job["TrainingJobStatus"], "Completed", job.get("FailureReason"))
        self.assertIn("entry.sh in /opt/ml/code with --x 1.5", self.log_lines("ct-script"))
        self.assertEqual([(m["MetricName"], m["Value"]) for m in job["FinalMetricDataList"]],
                         [("loss", 0.25)])

    def test_an_image_the_engine_lacks_fails_the_job_naming_it(self):
        self.training_job("ct-missing", AlgorithmSpecification={
            "TrainingImage": "amt-test/not-built:1", "TrainingInputMode": "File"})
        job = self.wait_for_job("ct-missing")
        self.assertEqual(job["TrainingJobStatus"], "Failed")
        self.assertIn("Cannot run the training image 'amt-test/not-built:1'", job["FailureReason"])
        self.assertIn(ARGS.engine + " has no image of that name", job["FailureReason"])

    def test_a_worker_started_after_one_killed_removes_its_containers(self):
        with amt_local.Amtd(ARGS.bin_dir, "--container-runtime", ARGS.engine, time_scale=0.01,
                            slots=1, quiet=True) as amtd:
            sm = amtd.client("sagemaker")
            request = dict(TrainingJobName="ct-orphan",
                           AlgorithmSpecification={"TrainingImage": IMAGE,
                                                   "TrainingInputMode": "File"},
                           RoleArn="arn:aws:iam::123456789012:role/SageMakerRole",
                           OutputDataConfig={"S3OutputPath": "s3://containers/output"},
                           ResourceConfig={"InstanceType": "ml.m5.large", "InstanceCount": 1,
                                           "VolumeSizeInGB": 10},
                           StoppingCondition={"MaxRuntimeInSeconds": 3600},
                           Environment={"MODE": "sleep"})
            sm.create_training_job(**request)
            deadline = time.monotonic() + 60
            while "amt-ct-orphan-1-algo-1" not in self.dockerd.docker(
                    "ps", "--format", "{{.Names}}"):
                self.assertLess(time.monotonic(), deadline, "the container never started")
                time.sleep(0.05)
            with open(os.path.join(amtd.data_dir, "worker.pid")) as f:
                worker = int(f.read().split()[0])
            os.kill(worker, signal.SIGKILL)
            # Its container outlives it (the docker client died; the container did not) ...
            self.assertIn("amt-ct-orphan-1-algo-1",
                          self.dockerd.docker("ps", "--format", "{{.Names}}"))
            # ... until a worker of the same work dir starts.
            command = ["sh", "-c", 'exec "$0" "$@" 2>&1',
                       os.path.join(ARGS.bin_dir, "amt-worker"),
                       "--orchestrator", "unix:" + os.path.join(amtd.data_dir, "amtd.sock"),
                       "--work-dir", os.path.join(amtd.data_dir, "jobs"),
                       "--worker-id", "second", "--container-runtime", ARGS.engine]
            with amt_local.Process(command, quiet=True) as second:
                lines = []
                while not any("run as containers" in line for line in lines):
                    line = second.next_line(60)
                    self.assertIsNotNone(line, "the second worker exited: %s" % lines)
                    lines.append(line)
                self.assertTrue(any("removed 1 container(s) of training jobs whose worker is gone"
                                    in line for line in lines), lines)
                self.assertNotIn("amt-ct-orphan-1-algo-1",
                                 self.dockerd.docker("ps", "--all", "--format", "{{.Names}}"))
                # amtd may have given the job's retry to the second worker: end it.
                try:
                    sm.stop_training_job(TrainingJobName="ct-orphan")
                except sm.exceptions.ClientError:
                    pass  # it had ended
                deadline = time.monotonic() + 60
                while sm.describe_training_job(TrainingJobName="ct-orphan")[
                        "TrainingJobStatus"] in ("InProgress", "Stopping"):
                    self.assertLess(time.monotonic(), deadline, "the job never ended")
                    time.sleep(0.05)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--engine", choices=["docker", "podman"], default="docker")
    ARGS, rest = parser.parse_known_args()
    reason = engine_or_reason(ARGS.engine)
    if reason is not None:
        print("SKIPPED: containers are not tested here: " + reason)
        sys.exit(SKIP)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
