#!/usr/bin/env python3
"""GPUs for training jobs (issue 37) on a machine that has none: a stand-in nvidia-smi on PATH
(gpu/nvidia-smi, FAKE_GPUS GPUs) makes amt-worker believe it has them, and a shell trainer
(gpu/gpu_trainer.sh) says what it sees and checks that no two jobs hold a GPU at once (or that
two do, with --gpu-share 2). The same checks on a real GPU: scripts/gpu-check.sh.

    /usr/bin/python3 tests/integration/gpus_test.py --bin-dir build/bin
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python", "src"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import amt_local  # noqa: E402
import gpu_check  # noqa: E402  (the real-GPU check's request)

ARGS = None
IMAGE = "amt-test/gpu-trainer:1"


class GpusTest(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="amt-gpus-")
        self.marks = os.path.join(self.work, "marks")
        os.mkdir(self.marks)
        self.image_map = os.path.join(self.work, "image-map.json")
        with open(self.image_map, "w") as f:
            json.dump({IMAGE: os.path.join(HERE, "gpu", "gpu_trainer.sh")}, f)
        self.saved_path = os.environ["PATH"]
        os.environ["PATH"] = os.path.join(HERE, "gpu") + os.pathsep + self.saved_path

    def tearDown(self):
        os.environ["PATH"] = self.saved_path
        os.environ.pop("FAKE_GPUS", None)
        shutil.rmtree(self.work, ignore_errors=True)

    def amtd(self, *flags, gpus=1):
        os.environ["FAKE_GPUS"] = str(gpus)
        return amt_local.Amtd(ARGS.bin_dir, *flags, image_map=self.image_map, time_scale=0.01,
                              slots=4, quiet=True)

    def tuning_job(self, sm, name, instance_type, jobs, parallel, mode):
        sm.create_hyper_parameter_tuning_job(**gpu_check.tuning_request(
            name, IMAGE, instance_type, jobs, parallel, mode, self.marks))

    def logs(self, amtd, job):
        out = subprocess.run(amtd.amt_command("logs", job), capture_output=True, text=True,
                             check=True).stdout
        return out.splitlines()

    def jobs_of(self, sm, tuning):
        return sm.list_training_jobs_for_hyper_parameter_tuning_job(
            HyperParameterTuningJobName=tuning, MaxResults=100)["TrainingJobSummaries"]

    def test_each_job_has_the_gpu_to_itself(self):
        # One GPU and four slots: the four ml.g5.xlarge jobs (1 GPU each) run one at a time.
        with self.amtd() as amtd:
            sm = amtd.client("sagemaker")
            self.tuning_job(sm, "gpu-hold", "ml.g5.xlarge", jobs=4, parallel=2, mode="hold")
            job = amtd.wait_for_tuning_job("gpu-hold", timeout=300, client=sm)
            self.assertEqual(job["HyperParameterTuningJobStatus"], "Completed")
            self.assertEqual(job["TrainingJobStatusCounters"]["Completed"], 4,
                             job["TrainingJobStatusCounters"])
            for summary in self.jobs_of(sm, "gpu-hold"):
                lines = self.logs(amtd, summary["TrainingJobName"])
                self.assertIn("gpus=[0] n=1", lines)
                self.assertIn("amt-worker: runs on GPU 0 (NVIDIA A10G, "
                              "GPU-fake0000-0000-0000-0000-000000000000)", lines)
                explained = json.loads(subprocess.run(
                    amtd.amt_command("explain-training-job", "--training-job-name",
                                     summary["TrainingJobName"]),
                    capture_output=True, text=True, check=True).stdout)
                self.assertEqual(explained["Gpus"],
                                 ["GPU 0 (NVIDIA A10G, GPU-fake0000-0000-0000-0000-000000000000)"])

    def test_gpu_share_2_lets_two_jobs_use_one_gpu_at_once(self):
        with self.amtd("--gpu-share", "2") as amtd:
            sm = amtd.client("sagemaker")
            self.tuning_job(sm, "gpu-pair", "ml.g5.xlarge", jobs=2, parallel=2, mode="pair")
            job = amtd.wait_for_tuning_job("gpu-pair", timeout=300, client=sm)
            self.assertEqual(job["TrainingJobStatusCounters"]["Completed"], 2,
                             job["TrainingJobStatusCounters"])
            for summary in self.jobs_of(sm, "gpu-pair"):
                lines = self.logs(amtd, summary["TrainingJobName"])
                self.assertIn("gpus=[0] n=1", lines)
                self.assertIn("shared a GPU with another job", lines)

    def test_a_job_of_more_gpus_than_the_machine_has_fails_saying_so(self):
        with self.amtd() as amtd:
            sm = amtd.client("sagemaker")
            self.tuning_job(sm, "gpu-big", "ml.p3.8xlarge", jobs=1, parallel=1, mode="hold")
            amtd.wait_for_tuning_job("gpu-big", timeout=300, client=sm)
            [summary] = self.jobs_of(sm, "gpu-big")
            described = sm.describe_training_job(TrainingJobName=summary["TrainingJobName"])
            self.assertEqual(described["TrainingJobStatus"], "Failed")
            self.assertEqual(
                described["FailureReason"],
                "ClientError: The training job asks for 4 GPUs (ml.p3.8xlarge has 4 GPUs per "
                "instance, 1 instance on this worker) and this worker has 1 (amt-worker --gpus): "
                "choose an InstanceType with fewer GPUs")

    def test_cpu_jobs_see_no_gpu_and_gpu_types_run_on_cpu_without_gpus(self):
        with self.amtd() as amtd:
            sm = amtd.client("sagemaker")
            self.tuning_job(sm, "gpu-cpu", "ml.m5.xlarge", jobs=1, parallel=1, mode="")
            amtd.wait_for_tuning_job("gpu-cpu", timeout=300, client=sm)
            [summary] = self.jobs_of(sm, "gpu-cpu")
            self.assertIn("gpus=[] n=0", self.logs(amtd, summary["TrainingJobName"]))
        with self.amtd(gpus=0) as amtd:
            sm = amtd.client("sagemaker")
            self.tuning_job(sm, "gpu-none", "ml.g5.xlarge", jobs=2, parallel=2, mode="")
            job = amtd.wait_for_tuning_job("gpu-none", timeout=300, client=sm)
            self.assertEqual(job["TrainingJobStatusCounters"]["Completed"], 2)
            for summary in self.jobs_of(sm, "gpu-none"):
                lines = self.logs(amtd, summary["TrainingJobName"])
                self.assertIn("gpus=[] n=0", lines)
                self.assertIn("amt-worker: ml.g5.xlarge has 1 GPU per instance; this worker has "
                              "no GPU (amt-worker --gpus, nvidia-smi), so the job runs on CPU: "
                              "SM_NUM_GPUS=0", lines)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin-dir", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
