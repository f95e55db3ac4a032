#!/usr/bin/env python3
"""Managed spot training of a PyTorch script (script mode: PyTorch estimator with entry_point and
source_dir), interrupted and resumed from its checkpoint, run against amtd with the SageMaker
Python SDK, unchanged.

    amtd --python pytorch=/usr/bin/python3 --spot-interrupt-after 2 --spot-max-interruptions 1 &
    AWS_ENDPOINT_URL=http://127.0.0.1:7071 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
        AWS_DEFAULT_REGION=us-east-1 python3 examples/sdk/pytorch_spot.py

/usr/bin/python3 is the interpreter with Debian's python3-torch (CPU). `--spot-interrupt-after 2`
makes amtd's simulated spot market take the instances back 2 s into training, once per job
(without it, interruptions come at seeded random times, about one per 600 training seconds:
`--spot-mean-seconds`). The data is scikit-learn's bundled digits set (no download).

Two training jobs of pytorch_src/train.py run side by side with the same hyperparameters: one
on demand, one on spot instances with a checkpoint S3 URI. The spot job is interrupted, restarts
with its checkpoints copied back and resumes where it stopped; both end with the same validation
loss, and the spot job bills 30% of its training seconds. Against SageMaker, only ROLE and BUCKET
change.
"""
import io
import os
import re
import tarfile
import tempfile

import boto3
import numpy as np
import sagemaker
from sagemaker.pytorch import PyTorch
from sagemaker.utils import name_from_base
from sklearn.datasets import load_digits

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
BUCKET = "amt-local-sdk"
HERE = os.path.dirname(os.path.abspath(__file__))
LOG_GROUP = "/aws/sagemaker/TrainingJobs"

session = sagemaker.Session(default_bucket=BUCKET)
digits = load_digits()
rows = np.column_stack([digits.target, digits.data])
np.random.default_rng(0).shuffle(rows)
inputs = {}
with tempfile.TemporaryDirectory() as folder:
    for channel, part in (("train", rows[:1400]), ("validation", rows[1400:])):
        os.makedirs(os.path.join(folder, channel))
        np.savetxt(os.path.join(folder, channel, "data.csv"), part, delimiter=",", fmt="%g")
        inputs[channel] = session.upload_data(os.path.join(folder, channel),
                                              key_prefix="pytorch-example/" + channel)


def estimator(spot, job_name):
    extra = {}
    if spot:
        # The job's own checkpoint folder: a checkpoint left by an earlier run in the same
        # folder would be resumed from, on SageMaker as here.
        extra = dict(use_spot_instances=True, max_wait=7200,
                     checkpoint_s3_uri="s3://%s/pytorch-example/checkpoints/%s" % (BUCKET,
                                                                                  job_name))
    return PyTorch(entry_point="train.py", source_dir=os.path.join(HERE, "pytorch_src"),
                   framework_version="1.13", py_version="py39", role=ROLE,
                   instance_type="ml.m5.large", instance_count=1, max_run=3600,
                   hyperparameters={"epochs": 150, "lr": 0.05},
                   metric_definitions=[{"Name": "val_loss", "Regex": "val_loss=([0-9.]+)"},
                                       {"Name": "val_accuracy",
                                        "Regex": "val_accuracy=([0-9.]+)"}],
                   sagemaker_session=session, **extra)


names = {"on-demand": name_from_base("pytorch-on-demand"), "spot": name_from_base("pytorch-spot")}
on_demand = estimator(spot=False, job_name=names["on-demand"])
spot = estimator(spot=True, job_name=names["spot"])
for label, job in (("on-demand", on_demand), ("spot", spot)):
    job.fit(inputs, wait=False, job_name=names[label])
for job in (on_demand, spot):
    job.latest_training_job.wait(logs="None")

sm = session.sagemaker_client
logs = boto3.client("logs")


def log_lines(name):
    """The job's log, every attempt, from CloudWatch Logs (as SageMaker keeps it)."""
    lines, token = [], None
    stream = logs.describe_log_streams(logGroupName=LOG_GROUP,
                                       logStreamNamePrefix=name)["logStreams"][0]["logStreamName"]
    while True:
        page = logs.get_log_events(logGroupName=LOG_GROUP, logStreamName=stream,
                                   startFromHead=True, **({"nextToken": token} if token else {}))
        lines += [event["message"] for event in page["events"]]
        if not page["events"]:
            return lines
        token = page["nextForwardToken"]


def final_val_loss(description):
    return next((m["Value"] for m in description.get("FinalMetricDataList", [])
                 if m["MetricName"] == "val_loss"), None)


results = {}
for label, job in (("on-demand", on_demand), ("spot", spot)):
    name = job.latest_training_job.name
    d = sm.describe_training_job(TrainingJobName=name)
    interruptions = sum(1 for t in d["SecondaryStatusTransitions"] if t["Status"] == "Interrupted")
    results[label] = (d, final_val_loss(d))
    print("%-9s %s: %s, %d interruption(s), final val_loss %s, training %d s, billable %d s"
          % (label, name, d["TrainingJobStatus"], interruptions, results[label][1],
             d["TrainingTimeInSeconds"], d["BillableTimeInSeconds"]))
    if "FailureReason" in d:
        print("  FailureReason:", d["FailureReason"])

# The last attempt's first line says where it began: the last checkpoint an attempt before it
# saved, or the start when the interruption came before the first epoch ended (on a busy machine,
# maybe before the script had printed anything).
interrupted = sum(1 for t in results["spot"][0]["SecondaryStatusTransitions"]
                  if t["Status"] == "Interrupted")
lines = log_lines(results["spot"][0]["TrainingJobName"])
begins = [i for i, line in enumerate(lines)
          if line.startswith(("resuming from checkpoint", "no checkpoint"))]
if interrupted and begins:
    logged = [int(m.group(1)) for m in (re.match(r"epoch=(\d+) ", line)
                                        for line in lines[:begins[-1]]) if m]
    print("spot attempt %d: %s (the last epoch logged before: %s)"
          % (interrupted + 1, lines[begins[-1]], logged[-1] if logged else "none"))
print("same final val_loss as uninterrupted:", results["spot"][1] == results["on-demand"][1])

artifact = results["spot"][0]["ModelArtifacts"]["S3ModelArtifacts"]
bucket, key = artifact[len("s3://"):].split("/", 1)
body = session.boto_session.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read()
with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as tar:
    files = sorted(m.name[2:] if m.name.startswith("./") else m.name
                   for m in tar.getmembers() if m.isfile())
print("model: %s holds %s" % (artifact, ", ".join(files)))
