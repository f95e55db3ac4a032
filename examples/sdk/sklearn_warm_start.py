#!/usr/bin/env python3
"""Warm start across real data (TransferLearning): a tuner on a bigger training set begins from
what the tuning job of sklearn_tuning.py learnt, run against amtd with the SageMaker Python SDK,
unchanged. Run sklearn_tuning.py first, against the same amtd:

    amtd --python sklearn=/usr/bin/python3 &
    export AWS_ENDPOINT_URL=http://127.0.0.1:7071 AWS_ACCESS_KEY_ID=test \
        AWS_SECRET_ACCESS_KEY=test AWS_DEFAULT_REGION=us-east-1
    python3 examples/sdk/sklearn_tuning.py        # the parent: 200 training rows
    python3 examples/sdk/sklearn_warm_start.py    # the child: 400 training rows

The parent is the newest Completed tuning job named sklearn-example-*. TransferLearning is the
warm start type for a change of data (or of algorithm); IdenticalDataAndAlgorithm would be for
the same data. The parent's training jobs that reached an objective are the Bayesian strategy's
first observations, so the child's first trials already go where the parent found low losses;
this script prints those prior observations, then the child's trials. The validation set is the
parent's, so the objectives compare. Against SageMaker, only ROLE and BUCKET change.
"""
import os
import sys
import tempfile

import numpy as np
import sagemaker
from sagemaker.sklearn import SKLearn
from sagemaker.tuner import (ContinuousParameter, HyperparameterTuner, WarmStartConfig,
                             WarmStartTypes)
from sklearn.datasets import load_breast_cancer

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
BUCKET = "amt-local-sdk"
HERE = os.path.dirname(os.path.abspath(__file__))

session = sagemaker.Session(default_bucket=BUCKET)
sm = session.sagemaker_client
parents = sm.list_hyper_parameter_tuning_jobs(
    NameContains="sklearn-example", StatusEquals="Completed", SortBy="CreationTime",
    SortOrder="Descending", MaxResults=1)["HyperParameterTuningJobSummaries"]
if not parents:
    sys.exit("no Completed sklearn-example-* tuning job: run examples/sdk/sklearn_tuning.py first")
parent = parents[0]["HyperParameterTuningJobName"]


def trials(tuning_job):
    """(job name, status, alpha, eta0, val_loss or None) of each training job, by creation."""
    summaries = sm.list_training_jobs_for_hyper_parameter_tuning_job(
        HyperParameterTuningJobName=tuning_job, MaxResults=100,
        SortBy="CreationTime", SortOrder="Ascending")["TrainingJobSummaries"]
    out = []
    for s in summaries:
        objective = s.get("FinalHyperParameterTuningJobObjectiveMetric", {}).get("Value")
        hp = s["TunedHyperParameters"]
        out.append((s["TrainingJobName"], s["TrainingJobStatus"], float(hp["alpha"]),
                    float(hp["eta0"]), objective))
    return out


def show(rows):
    for name, status, alpha, eta0, loss in rows:
        print("  %-44s %-9s alpha=%-10.3g eta0=%-10.3g val_loss=%s"
              % (name, status, alpha, eta0, "-" if loss is None else "%.4f" % loss))


prior = trials(parent)
known = [row for row in prior if row[4] is not None]
print("parent %s (200 training rows): %d training jobs, %d with an objective: the prior "
      "observations the child starts from" % (parent, len(prior), len(known)))
show(prior)

data = load_breast_cancer()
rows = np.column_stack([data.target, data.data])
np.random.default_rng(0).shuffle(rows)  # the parent's order: the same validation rows
inputs = {}
with tempfile.TemporaryDirectory() as folder:
    for channel, part in (("train", rows[:400]), ("validation", rows[400:])):
        os.makedirs(os.path.join(folder, channel))
        np.savetxt(os.path.join(folder, channel, "data.csv"), part, delimiter=",", fmt="%g")
        inputs[channel] = session.upload_data(os.path.join(folder, channel),
                                              key_prefix="sklearn-warm-start/" + channel)

estimator = SKLearn(entry_point="train.py", source_dir=os.path.join(HERE, "sklearn_src"),
                    framework_version="1.2-1", role=ROLE, instance_type="ml.m5.large",
                    instance_count=1, hyperparameters={"epochs": 10},
                    sagemaker_session=session)
tuner = HyperparameterTuner(
    estimator, objective_metric_name="val_loss", objective_type="Minimize",
    hyperparameter_ranges={"alpha": ContinuousParameter(1e-5, 1e-1, "Logarithmic"),
                           "eta0": ContinuousParameter(1e-4, 1.0, "Logarithmic")},
    metric_definitions=[{"Name": "val_loss", "Regex": "val_loss=([0-9.]+)"},
                        {"Name": "val_accuracy", "Regex": "val_accuracy=([0-9.]+)"}],
    strategy="Bayesian", max_jobs=6, max_parallel_jobs=2, early_stopping_type="Auto",
    base_tuning_job_name="sklearn-warm",
    warm_start_config=WarmStartConfig(WarmStartTypes.TRANSFER_LEARNING, parents={parent}))
tuner.fit(inputs, wait=True)

description = tuner.describe()
child = description["HyperParameterTuningJobName"]
warm = description["WarmStartConfig"]
print("child %s (400 training rows): warm start %s from %s" % (
    child, warm["WarmStartType"],
    ", ".join(p["HyperParameterTuningJobName"] for p in warm["ParentHyperParameterTuningJobs"])))
show(trials(child))
best = description["BestTrainingJob"]
parent_best = min(row[4] for row in known)
print("best of the parent: val_loss %.4f; best of the child: %s val_loss %.4f" % (
    parent_best, best["TrainingJobName"],
    best["FinalHyperParameterTuningJobObjectiveMetric"]["Value"]))
