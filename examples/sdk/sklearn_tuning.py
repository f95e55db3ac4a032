#!/usr/bin/env python3
"""A scikit-learn script tuned with the SageMaker Python SDK, unchanged from what runs against
SageMaker (script mode: SKLearn estimator with entry_point and source_dir), run against amtd.

    amtd --python sklearn=/usr/bin/python3 &     # the interpreter with scikit-learn
    AWS_ENDPOINT_URL=http://127.0.0.1:7071 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
        AWS_DEFAULT_REGION=us-east-1 python3 examples/sdk/sklearn_tuning.py

The data is scikit-learn's bundled breast-cancer set (no download), written as CSV with the label
first and uploaded with upload_data. A Bayesian tuner with AUTO early stopping tunes alpha and
eta0 of sklearn_src/train.py; jobs whose validation loss curve is worse than the median of the
earlier jobs' are stopped. Against SageMaker, only ROLE and BUCKET change. sklearn_warm_start.py
goes on from here: a tuner on a bigger training set, warm-started from this one.
"""
import os
import tempfile

import numpy as np
import sagemaker
from sagemaker.sklearn import SKLearn
from sagemaker.tuner import ContinuousParameter, HyperparameterTuner
from sklearn.datasets import load_breast_cancer

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
BUCKET = "amt-local-sdk"
HERE = os.path.dirname(os.path.abspath(__file__))

session = sagemaker.Session(default_bucket=BUCKET)
data = load_breast_cancer()
rows = np.column_stack([data.target, data.data])
np.random.default_rng(0).shuffle(rows)
inputs = {}
with tempfile.TemporaryDirectory() as folder:
    # 200 training rows; sklearn_warm_start.py tunes on 400, warm-started from this tuning job.
    for channel, part in (("train", rows[:200]), ("validation", rows[400:])):
        os.makedirs(os.path.join(folder, channel))
        np.savetxt(os.path.join(folder, channel, "data.csv"), part, delimiter=",", fmt="%g")
        inputs[channel] = session.upload_data(os.path.join(folder, channel),
                                              key_prefix="sklearn-example/" + channel)

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
    strategy="Bayesian", max_jobs=8, max_parallel_jobs=2, early_stopping_type="Auto",
    base_tuning_job_name="sklearn-example")
tuner.fit(inputs, wait=True)
frame = tuner.analytics().dataframe()
print(frame[["TrainingJobName", "TrainingJobStatus", "FinalObjectiveValue", "alpha", "eta0"]]
      .to_string(index=False))
best = tuner.describe()["BestTrainingJob"]
print("best training job:", best["TrainingJobName"],
      "val_loss %.4f" % best["FinalHyperParameterTuningJobObjectiveMetric"]["Value"])
