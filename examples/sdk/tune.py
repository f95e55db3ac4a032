#!/usr/bin/env python3
"""A SageMaker Python SDK script, unchanged from what runs against SageMaker, run against amtd.

    amtd --image-map examples/image-map.json &                # HTTP on 127.0.0.1:7071
    AWS_ENDPOINT_URL=http://127.0.0.1:7071 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
        AWS_DEFAULT_REGION=us-east-1 python3 examples/sdk/tune.py

Needs the SageMaker Python SDK (`pip install "sagemaker==2.230.0"`) with botocore >= 1.31 (it
sends every service to AWS_ENDPOINT_URL). Against SageMaker, only IMAGE, ROLE and BUCKET change.
"""
import os
import tempfile

import sagemaker
from sagemaker.estimator import Estimator
from sagemaker.s3 import S3Downloader
from sagemaker.tuner import ContinuousParameter, HyperparameterTuner, IntegerParameter

IMAGE = "amt-local/toy-trainer:latest"  # an entry of examples/image-map.json
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
BUCKET = "amt-local-sdk"

session = sagemaker.Session(default_bucket=BUCKET)

# Training data goes up through S3 (amtd: into <data-dir>/s3/<bucket>/...) and reaches every
# training job as its "train" channel (SM_CHANNEL_TRAIN).
with tempfile.TemporaryDirectory() as folder:
    with open(os.path.join(folder, "train.csv"), "w") as f:
        f.write("".join(f"{i},{2 * i + 1}\n" for i in range(100)))
    train_uri = session.upload_data(folder, key_prefix="sdk-example/train")  # default bucket
print("training data:", train_uri)

metrics = [{"Name": "val_loss", "Regex": "val_loss=([0-9.eE+-]+)"}]
estimator = Estimator(image_uri=IMAGE, role=ROLE, instance_count=1, instance_type="ml.m5.large",
                      hyperparameters={"epochs": "8", "sleep_ms": "50"},
                      output_path=f"s3://{BUCKET}/output", sagemaker_session=session)
tuner = HyperparameterTuner(
    estimator, objective_metric_name="val_loss", objective_type="Minimize",
    hyperparameter_ranges={"learning_rate": ContinuousParameter(1e-4, 1, "Logarithmic"),
                           "num_layers": IntegerParameter(1, 8)},
    metric_definitions=metrics, strategy="Bayesian", max_jobs=8, max_parallel_jobs=2,
    early_stopping_type="Auto", base_tuning_job_name="sdk-example")
tuner.fit({"train": train_uri}, wait=True)
best = tuner.best_training_job()
print("best training job:", best)
print(tuner.analytics().dataframe()[["TrainingJobName", "TrainingJobStatus",
                                      "FinalObjectiveValue"]])

# The best job's model comes back through S3, as from SageMaker.
artifact = session.describe_training_job(best)["ModelArtifacts"]["S3ModelArtifacts"]
with tempfile.TemporaryDirectory() as folder:
    S3Downloader.download(artifact, folder, sagemaker_session=session)
    print("model:", artifact, os.path.getsize(os.path.join(folder, "model.tar.gz")), "bytes")
