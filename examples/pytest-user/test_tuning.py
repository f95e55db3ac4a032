"""A user's tests of a tuning setup, against amt-local's amtd instead of SageMaker.

The `amtd` fixture (amt_local's pytest plugin, installed with `pip install ./python`) runs one
amtd for the session, with pytest.ini's image map and time scale; `amtd.client("sagemaker")` is
boto3 pointed at it. The same boto3 calls run against SageMaker.
"""

import io
import json
import pathlib
import tarfile

import botocore.exceptions
import pytest

HERE = pathlib.Path(__file__).resolve().parent


def tuning_job(name):
    """tuning.json, the CreateHyperParameterTuningJob request, under another name."""
    job = json.loads((HERE / "tuning.json").read_text())
    job["HyperParameterTuningJobName"] = name
    return job


def model_of(amtd, training_job):
    """The model.json inside a training job's model.tar.gz, read from amtd's S3."""
    artifacts = training_job["ModelArtifacts"]["S3ModelArtifacts"]
    bucket, key = artifacts[len("s3://"):].split("/", 1)
    body = amtd.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read()
    with tarfile.open(fileobj=io.BytesIO(body)) as archive:
        member = next(m for m in archive.getmembers() if m.name.lstrip("./") == "model.json")
        return json.load(archive.extractfile(member))


def test_the_grid_finds_the_largest_learning_rate_that_converges(amtd):
    sm = amtd.client("sagemaker")
    sm.create_hyper_parameter_tuning_job(**tuning_job("linear-grid"))

    done = amtd.wait_for_tuning_job("linear-grid", timeout=300)

    assert done["HyperParameterTuningJobStatus"] == "Completed"
    assert done["TrainingJobStatusCounters"]["Completed"] == 4
    best = done["BestTrainingJob"]
    assert best["TunedHyperParameters"] == {"learning_rate": "0.5"}
    assert best["FinalHyperParameterTuningJobObjectiveMetric"]["MetricName"] == "val_loss"
    assert best["FinalHyperParameterTuningJobObjectiveMetric"]["Value"] < 0.01
    # 0.9 diverges: its job completes, with the worst loss of the four.
    jobs = sm.list_training_jobs_for_hyper_parameter_tuning_job(
        HyperParameterTuningJobName="linear-grid", SortBy="FinalObjectiveMetricValue",
        SortOrder="Descending")["TrainingJobSummaries"]
    assert jobs[0]["TunedHyperParameters"] == {"learning_rate": "0.9"}


def test_the_best_model_is_close_to_the_truth(amtd):
    sm = amtd.client("sagemaker")
    sm.create_hyper_parameter_tuning_job(**tuning_job("linear-best-model"))
    best = amtd.wait_for_tuning_job("linear-best-model", timeout=300)["BestTrainingJob"]

    model = model_of(amtd, sm.describe_training_job(TrainingJobName=best["TrainingJobName"]))

    assert abs(model["w"] - 2) < 0.2 and abs(model["b"] - 1) < 0.1, model


def test_a_bad_learning_rate_fails_the_training_job_with_its_reason(amtd):
    sm = amtd.client("sagemaker")
    job = tuning_job("unused")["TrainingJobDefinition"]
    sm.create_training_job(TrainingJobName="linear-negative-rate",
                           HyperParameters={"learning_rate": "-1", "epochs": "3"},
                           **{k: v for k, v in job.items() if k != "StaticHyperParameters"})

    waiter = sm.get_waiter("training_job_completed_or_stopped")
    waiter.config.delay = 0.2  # boto3 polls every 120 s by default
    with pytest.raises(botocore.exceptions.WaiterError, match="Failed"):
        waiter.wait(TrainingJobName="linear-negative-rate")

    described = sm.describe_training_job(TrainingJobName="linear-negative-rate")
    assert described["TrainingJobStatus"] == "Failed"
    assert described["FailureReason"] == "ClientError: learning_rate must be positive, not -1.0"
