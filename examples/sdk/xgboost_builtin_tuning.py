#!/usr/bin/env python3
"""AWS's canonical AMT example, in shape: the built-in XGBoost algorithm (no entry point) on CSV
with the label first, objective validation:auc with no metric definitions (the algorithm's own),
tuned by Hyperband; run against amtd with the SageMaker Python SDK, unchanged.

    amtd --python xgboost=/usr/bin/python3 &     # the interpreter with xgboost
    AWS_ENDPOINT_URL=http://127.0.0.1:7071 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
        AWS_DEFAULT_REGION=us-east-1 python3 examples/sdk/xgboost_builtin_tuning.py

The data is scikit-learn's bundled breast-cancer set (no download). Against SageMaker, only ROLE
and BUCKET change.
"""
import os
import tempfile

import numpy as np
import sagemaker
from sagemaker import image_uris
from sagemaker.estimator import Estimator
from sagemaker.inputs import TrainingInput
from sagemaker.tuner import (ContinuousParameter, HyperbandStrategyConfig, HyperparameterTuner,
                             IntegerParameter, StrategyConfig)
from sklearn.datasets import load_breast_cancer

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
BUCKET = "amt-local-sdk"

session = sagemaker.Session(default_bucket=BUCKET)
data = load_breast_cancer()
rows = np.column_stack([data.target, data.data])
np.random.default_rng(1).shuffle(rows)
inputs = {}
with tempfile.TemporaryDirectory() as folder:
    for channel, part in (("train", rows[:400]), ("validation", rows[400:])):
        os.makedirs(os.path.join(folder, channel))
        np.savetxt(os.path.join(folder, channel, "data.csv"), part, delimiter=",", fmt="%g")
        uri = session.upload_data(os.path.join(folder, channel),
                                  key_prefix="xgboost-example/" + channel)
        inputs[channel] = TrainingInput(uri, content_type="text/csv")

xgb = Estimator(image_uri=image_uris.retrieve("xgboost", session.boto_region_name, "1.7-1"),
                role=ROLE, instance_count=1, instance_type="ml.m5.large",
                hyperparameters={"objective": "binary:logistic", "num_round": 50,
                                 "eval_metric": "auc"},
                sagemaker_session=session)
tuner = HyperparameterTuner(
    xgb, objective_metric_name="validation:auc", objective_type="Maximize",
    hyperparameter_ranges={"eta": ContinuousParameter(0.01, 0.5),
                           "max_depth": IntegerParameter(1, 8),
                           "min_child_weight": ContinuousParameter(1, 10)},
    strategy="Hyperband",
    strategy_config=StrategyConfig(HyperbandStrategyConfig(min_resource=5, max_resource=50)),
    max_jobs=9, max_parallel_jobs=3, base_tuning_job_name="xgb-example")
tuner.fit(inputs, wait=True)
frame = tuner.analytics().dataframe()
print(frame[["TrainingJobName", "TrainingJobStatus", "FinalObjectiveValue", "eta", "max_depth"]]
      .to_string(index=False))
best = tuner.describe()["BestTrainingJob"]
print("best training job:", best["TrainingJobName"],
      "validation:auc %.4f" % best["FinalHyperParameterTuningJobObjectiveMetric"]["Value"])
