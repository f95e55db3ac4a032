#!/usr/bin/env python3
"""Issue 37's check on a real GPU: amtd and its local worker with PyTorch CUDA trainers
(scripts/gpu_check/trainer.py) on ml.g5.xlarge (1 GPU each):

  1. a tuning job of 4 jobs, 2 in parallel: each job sees exactly one GPU (CUDA_VISIBLE_DEVICES,
     SM_NUM_GPUS and torch.cuda.device_count() agree), and no two hold the same device at once;
  2. --gpu-share 2: two jobs run on one device at the same time;
  3. ml.p3.8xlarge (4 GPUs) on a machine with fewer fails with the clear message;
  4. a CPU type (ml.m5.xlarge) sees no GPU.

    python3 scripts/gpu_check.py --bin-dir DIR [--dry-run]

Needs only the Python standard library, torch and the amt binaries (no boto3: the amt CLI makes
the calls). --dry-run: on a machine without a GPU, with tests/integration/gpu/nvidia-smi on PATH
(one fake GPU), torch on CPU. Prints every check with PASS or FAIL; exits 1 on any FAIL.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "python", "src"))
import amt_local  # noqa: E402

IMAGE = "amt-local/gpu-check:1"
FAILED = []


def check(what, ok, detail=""):
    print("%s %s%s" % ("PASS" if ok else "FAIL", what, (": " + detail) if detail and not ok
                       else ""), flush=True)
    if not ok:
        FAILED.append(what)


def amt(amtd, *args):
    out = subprocess.run(amtd.amt_command(*args), capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("amt %s: %s" % (" ".join(args), out.stderr))
    return out.stdout


def tuning_request(name, image, instance_type, jobs, parallel, mode, marks):
    """A Random tuning job of `jobs` trials of `image` on `instance_type`, the trainer's mode and
    marks folder as static hyperparameters (also tests/integration/gpus_test.py's)."""
    return {
        "HyperParameterTuningJobName": name,
        "HyperParameterTuningJobConfig": {
            "Strategy": "Random",
            "HyperParameterTuningJobObjective": {"Type": "Minimize", "MetricName": "loss"},
            "ResourceLimits": {"MaxNumberOfTrainingJobs": jobs,
                               "MaxParallelTrainingJobs": parallel},
            "ParameterRanges": {"ContinuousParameterRanges": [
                {"Name": "x", "MinValue": "0", "MaxValue": "1"}]}},
        "TrainingJobDefinition": {
            "AlgorithmSpecification": {
                "TrainingImage": image, "TrainingInputMode": "File",
                "MetricDefinitions": [{"Name": "loss", "Regex": "loss=([0-9.]+)"}]},
            "RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole",
            "OutputDataConfig": {"S3OutputPath": "s3://gpu-check/output"},
            "ResourceConfig": {"InstanceType": instance_type, "InstanceCount": 1,
                               "VolumeSizeInGB": 10},
            "StoppingCondition": {"MaxRuntimeInSeconds": 36000},
            "StaticHyperParameters": {"mode": mode, "marks": marks}}}


def tuning_job(amtd, work, name, instance_type, jobs, parallel, mode):
    marks = os.path.join(work, "marks-" + name)
    os.mkdir(marks)
    request = tuning_request(name, IMAGE, instance_type, jobs, parallel, mode, marks)
    path = os.path.join(work, name + ".json")
    with open(path, "w") as f:
        json.dump(request, f)
    amt(amtd, "create-hyper-parameter-tuning-job", "--cli-input-json", "file://" + path)
    amtd.wait_for_tuning_job(name, timeout=240, client=AmtClient(amtd))
    listed = json.loads(amt(amtd, "list-training-jobs-for-hyper-parameter-tuning-job",
                            "--hyper-parameter-tuning-job-name", name))
    jobs = []
    for summary in listed["TrainingJobSummaries"]:
        job = summary["TrainingJobName"]
        described = json.loads(amt(amtd, "describe-training-job", "--training-job-name", job))
        jobs.append((described, amt(amtd, "logs", job).splitlines()))
    return jobs


class AmtClient:
    """What Amtd.wait_for_tuning_job calls, through the amt CLI (no boto3 here)."""

    def __init__(self, amtd):
        self.amtd = amtd

    def describe_hyper_parameter_tuning_job(self, HyperParameterTuningJobName):
        return json.loads(amt(self.amtd, "describe-hyper-parameter-tuning-job",
                              "--hyper-parameter-tuning-job-name",
                              HyperParameterTuningJobName))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()
    print(subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.strip()
          if not args.dry_run else "dry run: a stand-in nvidia-smi", flush=True)
    want_cuda = 0 if args.dry_run else 1
    work = tempfile.mkdtemp(prefix="amt-gpu-check-")
    image_map = os.path.join(work, "image-map.json")
    with open(image_map, "w") as f:
        json.dump({IMAGE: [args.python, os.path.join(ROOT, "scripts", "gpu_check",
                                                     "trainer.py")]}, f)

    def start(*flags):
        return amt_local.Amtd(args.bin_dir, *flags, image_map=image_map, time_scale=0.01,
                              slots=4, quiet=True, data_dir=os.path.join(work, "d%d" % len(
                                  os.listdir(work))))

    with start() as amtd:
        jobs = tuning_job(amtd, work, "hold", "ml.g5.xlarge", 4, 2, "hold")
        check("4 ml.g5.xlarge jobs, 2 in parallel, all Completed",
              [d["TrainingJobStatus"] for d, _ in jobs] == ["Completed"] * 4,
              str([(d["TrainingJobStatus"], d.get("FailureReason")) for d, _ in jobs]))
        for described, lines in jobs:
            seen = [line for line in lines if line.startswith("visible=")]
            check(described["TrainingJobName"] + " saw exactly one GPU",
                  seen == ["visible=[0] SM_NUM_GPUS=1 cuda_devices=%d" % want_cuda], str(seen))
        big = tuning_job(amtd, work, "big", "ml.p3.8xlarge", 1, 1, "hold")
        reason = big[0][0].get("FailureReason", "")
        check("ml.p3.8xlarge (4 GPUs) fails saying what the worker has",
              big[0][0]["TrainingJobStatus"] == "Failed" and reason.startswith(
                  "ClientError: The training job asks for 4 GPUs (ml.p3.8xlarge has 4 GPUs per "
                  "instance, 1 instance on this worker) and this worker has 1"), reason)
        cpu = tuning_job(amtd, work, "cpu", "ml.m5.xlarge", 1, 1, "")
        check("a CPU type sees no GPU",
              "visible=[] SM_NUM_GPUS=0 cuda_devices=0" in cpu[0][1], str(cpu[0][1][:5]))
    with start("--gpu-share", "2") as amtd:
        pair = tuning_job(amtd, work, "pair", "ml.g5.xlarge", 2, 2, "pair")
        check("--gpu-share 2: two jobs on the one GPU at once",
              all(d["TrainingJobStatus"] == "Completed" and "shared a GPU with another job"
                  in lines for d, lines in pair),
              str([(d["TrainingJobStatus"], d.get("FailureReason")) for d, _ in pair]))
    subprocess.run(["rm", "-rf", work])
    print("gpu-check: %s" % ("all passed" if not FAILED else "FAILED: " + "; ".join(FAILED)))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
