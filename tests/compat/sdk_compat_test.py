#!/usr/bin/env python3
"""The real SageMaker Python SDK (v2.230.0) runs unchanged against amtd: one endpoint, dummy keys.

Run by CTest (tests/compat/CMakeLists.txt) with the pyenv python (boto3/botocore 1.43) and the
vendored SDK (../shared/vendor/sagemaker-python-sdk), which .ci/run puts in reach:

    python3 tests/compat/sdk_compat_test.py --bin-dir build/bin --source-dir . \
        --sdk /work/shared/vendor/sagemaker-python-sdk

When `import sagemaker` fails (no vendored SDK, a missing Debian python3-* package), it prints
one line saying so and exits 0: a user can `pip install "sagemaker==2.230.0"` instead.

The only settings are AWS_ENDPOINT_URL, dummy credentials, a region and `Session(default_bucket=)`:
the script is what a SageMaker user writes. Every AWS operation the SDK calls is recorded through
botocore's event hooks and printed at the end with the run's wall time.
"""

import argparse
import collections
import io
import json
import math
import os
import re
import subprocess
import sys
import time
import unittest
import contextlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python",
                                "src"))
import amt_local  # noqa: E402

ARGS = None
CALLS = collections.Counter()
BUCKET = "amt-sdk-compat"
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
METRICS = [{"Name": "val_loss", "Regex": "val_loss=([0-9.eE+-]+)"},
           {"Name": "val_accuracy", "Regex": "val_accuracy=([0-9.eE+-]+)"}]


def import_sdk():
    sys.path.insert(0, ARGS.sdk)
    sys.path.append("/usr/lib/python3/dist-packages")  # Debian's numpy, pandas, ... after ours
    try:
        import sagemaker  # noqa: F401
    except Exception as error:  # pylint: disable=broad-except
        return "%s: %s" % (type(error).__name__, error)
    return None


def start_amtd(flags):
    """Every suite's amtd: the image map of examples/, four slots, Debian's python3 for the
    framework images (/usr/bin/python3 has python3-xgboost, -sklearn and -torch)."""
    return amt_local.Amtd(
        ARGS.bin_dir, "--python", "xgboost=/usr/bin/python3", "--python",
        "sklearn=/usr/bin/python3", "--python", "pytorch=/usr/bin/python3", *flags,
        slots=4, image_map=os.path.join(ARGS.source_dir, "examples", "image-map.json"),
        prefix="amt-sdk-compat-")


def record_calls(boto_session):
    def before(event_name, **_):
        # event name: before-call.<service>.<Operation>
        _, service, operation = event_name.split(".", 2)
        CALLS["%s.%s" % (service, operation)] += 1
    boto_session.events.register("before-call.*.*", before)


class SdkSuite(unittest.TestCase):
    """A suite against its own amtd, started with AMTD_FLAGS."""
    AMTD_FLAGS = []

    @classmethod
    def setUpClass(cls):
        import boto3
        import sagemaker
        cls.amtd = start_amtd(cls.AMTD_FLAGS)
        cls.addClassCleanup(cls.amtd.close)
        cls.work = cls.amtd.work  # the data dir's parent, for the suites' own files too
        os.environ.update(AWS_ENDPOINT_URL=cls.amtd.url, AWS_ACCESS_KEY_ID="test",
                          AWS_SECRET_ACCESS_KEY="test", AWS_DEFAULT_REGION="us-east-1")
        boto_session = boto3.Session(region_name="us-east-1")
        record_calls(boto_session)
        cls.session = sagemaker.Session(boto_session=boto_session, default_bucket=BUCKET)
        cls.started = time.monotonic()

    @classmethod
    def tearDownClass(cls):
        cls.amtd.close()
        print("SDK run: %.1f s; AWS operations called: %s" % (
            time.monotonic() - cls.started,
            ", ".join("%s x%d" % kv for kv in sorted(CALLS.items()))))
        CALLS.clear()

    def run_example(self, name):
        """examples/sdk/<name>, run as a user runs it: its own process, the environment only, the
        same imports as this test's (import_sdk): the SDK first, Debian's packages last."""
        bootstrap = ("import runpy, sys; sys.path.insert(0, %r); "
                     "sys.path.append('/usr/lib/python3/dist-packages'); "
                     "runpy.run_path(%r, run_name='__main__')" % (
                         ARGS.sdk, os.path.join(ARGS.source_dir, "examples", "sdk", name)))
        started = time.monotonic()
        result = subprocess.run([sys.executable, "-c", bootstrap], env=dict(os.environ),
                                capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stdout[-3000:] + result.stderr[-3000:])
        print("%s (%.1f s):\n%s" % (name, time.monotonic() - started, result.stdout))
        return result.stdout


class SdkCompatTest(SdkSuite):
    AMTD_FLAGS = ["--time-scale", "0.01", "--spot-seed", "3", "--spot-mean-seconds", "300"]

    def estimator(self, **extra):
        from sagemaker.estimator import Estimator
        return Estimator(image_uri="amt-local/toy-trainer:latest", role=ROLE, instance_count=1,
                         instance_type="ml.m5.large",
                         hyperparameters={"epochs": "4", "sleep_ms": "0"},
                         metric_definitions=METRICS,
                         output_path="s3://%s/output" % BUCKET,
                         sagemaker_session=self.session, **extra)

    def ranges(self):
        from sagemaker.tuner import ContinuousParameter, IntegerParameter
        return {"learning_rate": ContinuousParameter(1e-4, 1, "Logarithmic"),
                "num_layers": IntegerParameter(1, 8)}

    def test_1_s3_upload_and_list(self):
        from sagemaker.s3 import S3Downloader
        self.assertEqual(self.session.default_bucket(), BUCKET)
        data = os.path.join(self.work, "train.csv")
        with open(data, "w") as f:
            f.write("x,y\n1,2\n")
        uri = self.session.upload_data(data, bucket=BUCKET, key_prefix="data")
        self.assertEqual(uri, "s3://%s/data/train.csv" % BUCKET)
        self.assertEqual(S3Downloader.read_file(uri, sagemaker_session=self.session),
                         "x,y\n1,2\n")
        big = os.path.join(self.work, "big.bin")
        content = os.urandom(9 * 1024 * 1024)  # over the SDK's 8 MB multipart threshold
        with open(big, "wb") as f:
            f.write(content)
        self.session.upload_data(big, bucket=BUCKET, key_prefix="data")
        self.assertGreaterEqual(CALLS["s3.UploadPart"], 2)  # it went in parts
        listed = S3Downloader.list("s3://%s/data" % BUCKET, sagemaker_session=self.session)
        self.assertEqual(sorted(listed), ["s3://%s/data/big.bin" % BUCKET,
                                          "s3://%s/data/train.csv" % BUCKET])
        # The objects are the files a training job's channel reads.
        with open(os.path.join(self.amtd.data_dir, "s3", BUCKET, "data", "big.bin"), "rb") as f:
            self.assertEqual(f.read(), content)
        downloaded = os.path.join(self.work, "downloaded")
        S3Downloader.download("s3://%s/data/big.bin" % BUCKET, downloaded,
                              sagemaker_session=self.session)
        with open(os.path.join(downloaded, "big.bin"), "rb") as f:
            self.assertEqual(f.read(), content)

    def test_2_bayesian_tuner_with_auto_early_stopping(self):
        from sagemaker.tuner import HyperparameterTuner, WarmStartConfig, WarmStartTypes
        tuner = HyperparameterTuner(self.estimator(), "val_loss", self.ranges(), METRICS,
                                    strategy="Bayesian", objective_type="Minimize", max_jobs=4,
                                    max_parallel_jobs=2, early_stopping_type="Auto",
                                    base_tuning_job_name="sdk-bayes")
        tuner.fit(wait=True)
        best = tuner.best_training_job()
        self.assertTrue(best.startswith("sdk-bayes"), best)
        attached = HyperparameterTuner.attach(tuner.latest_tuning_job.name,
                                              sagemaker_session=self.session)
        self.assertEqual(attached.early_stopping_type, "Auto")
        frame = attached.analytics().dataframe()
        self.assertEqual(len(frame), 4)
        estimator = attached.best_estimator()
        self.assertEqual(estimator.latest_training_job.name, best)

        warm = HyperparameterTuner(
            self.estimator(), "val_loss", self.ranges(), METRICS, strategy="Bayesian",
            objective_type="Minimize", max_jobs=2, max_parallel_jobs=2,
            base_tuning_job_name="sdk-warm",
            warm_start_config=WarmStartConfig(WarmStartTypes.IDENTICAL_DATA_AND_ALGORITHM,
                                              parents={tuner.latest_tuning_job.name}))
        warm.fit(wait=True)
        self.assertEqual(warm.describe()["HyperParameterTuningJobStatus"], "Completed")

    def test_3_hyperband_tuner(self):
        from sagemaker.tuner import HyperparameterTuner
        tuner = HyperparameterTuner(
            self.estimator(), "val_loss", self.ranges(), METRICS, strategy="Hyperband",
            objective_type="Minimize", max_jobs=3, max_parallel_jobs=3,
            strategy_config=__import__("sagemaker.tuner", fromlist=["x"]).StrategyConfig(
                __import__("sagemaker.tuner", fromlist=["x"]).HyperbandStrategyConfig(
                    min_resource=1, max_resource=4)),
            base_tuning_job_name="sdk-hyperband")
        tuner.fit(wait=True)
        self.assertEqual(tuner.describe()["HyperParameterTuningJobStatus"], "Completed")

    def test_4_spot_estimator_fit_with_logs(self):
        # fit() tails the job's log from CloudWatch Logs (DescribeLogStreams, GetLogEvents) as it
        # does on SageMaker: polls every 10 s and describes the job every 30 s, so this takes
        # about 40 s whatever the job's length.
        estimator = self.estimator(use_spot_instances=True, max_run=3600, max_wait=7200,
                                   checkpoint_s3_uri="s3://%s/checkpoints/spot" % BUCKET)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            estimator.fit(logs=True, job_name="sdk-spot")
        printed = out.getvalue()
        self.assertIn("amt-toy-trainer: learning_rate=", printed)
        self.assertEqual(printed.count("val_loss="), 4, printed)  # epochs=4, once each
        self.assertIn("training complete after 4 epochs", printed)
        # The SDK prints DescribeTrainingJob's TrainingTimeInSeconds and BillableTimeInSeconds,
        # and the savings as (1 - billable / training) x 100 %.
        job = self.session.sagemaker_client.describe_training_job(TrainingJobName="sdk-spot")
        training, billable = job["TrainingTimeInSeconds"], job["BillableTimeInSeconds"]
        self.assertGreaterEqual(training, 1)
        self.assertLessEqual(billable, training)
        self.assertIn("Training seconds: %d\n" % training, printed)
        self.assertIn("Billable seconds: %d\n" % billable, printed)
        self.assertIn("Managed Spot Training savings: %.1f%%" % ((1 - billable / training) * 100),
                      printed)
        print("spot fit: training %d s, billable %d s" % (training, billable))

    def test_5_training_job_analytics(self):
        from sagemaker.analytics import TrainingJobAnalytics
        self.estimator().fit(logs=False, job_name="sdk-analytics")
        frame = TrainingJobAnalytics("sdk-analytics", metric_names=["val_loss"],
                                     sagemaker_session=self.session).dataframe()
        # CloudWatch's 60 s periods: a job of a second has one, two if it spans a minute's end.
        self.assertIn(len(frame), (1, 2), frame)
        self.assertEqual(list(frame["metric_name"].unique()), ["val_loss"])
        self.assertEqual(frame["timestamp"].iloc[0], 0.0)
        self.assertTrue(((frame["value"] > 0) & (frame["value"] < 10)).all(), frame)

    def test_6_the_sdk_example_runs_as_written(self):
        out = self.run_example("tune.py")
        self.assertIn("training data: s3://amt-local-sdk/sdk-example/train", out)
        self.assertRegex(out, r"best training job: sdk-example-\S+")
        self.assertRegex(out, r"model: s3://amt-local-sdk/output/sdk-example-\S+/output/"
                              r"model.tar.gz \d+ bytes")

    def write_source(self, name, train_py, files=None):
        source = os.path.join(self.work, name)
        os.makedirs(source, exist_ok=True)
        with open(os.path.join(source, "train.py"), "w") as f:
            f.write(train_py)
        for file_name, text in (files or {}).items():
            with open(os.path.join(source, file_name), "w") as f:
                f.write(text)
        return source

    def test_7_script_mode_sklearn_estimator_tuned(self):
        # A framework estimator (SKLearn) with entry_point and source_dir: the SDK uploads
        # sourcedir.tar.gz and sends the script-mode hyperparameters; amtd runs the scikit-learn
        # image's job with amt-script-runner, as the training toolkit runs it in the container.
        from sagemaker.sklearn import SKLearn
        from sagemaker.tuner import ContinuousParameter, HyperparameterTuner
        source = self.write_source("sklearn-src", SCRIPT_MODE_TRAIN_PY, {
            "helpers.py": "def loss(lr, epoch):\n    return abs(lr - 0.1) + 1.0 / epoch\n"})
        data = os.path.join(self.work, "script-data")
        os.makedirs(data, exist_ok=True)
        with open(os.path.join(data, "train.csv"), "w") as f:
            f.write("1,2\n3,4\n")
        train_uri = self.session.upload_data(data, key_prefix="script-mode/train")
        estimator = SKLearn(entry_point="train.py", source_dir=source, framework_version="1.2-1",
                            role=ROLE, instance_type="ml.m5.large", instance_count=1,
                            hyperparameters={"epochs": 4, "optimizer": "adam"},
                            output_path="s3://%s/script-output" % BUCKET,
                            sagemaker_session=self.session)
        tuner = HyperparameterTuner(
            estimator, "val_loss", {"learning-rate": ContinuousParameter(0.001, 1.0)},
            [{"Name": "val_loss", "Regex": "val_loss=([0-9.]+)"}], objective_type="Minimize",
            strategy="Bayesian", max_jobs=3, max_parallel_jobs=3, early_stopping_type="Auto",
            base_tuning_job_name="sdk-script")
        tuner.fit({"train": train_uri}, wait=True)
        self.assertEqual(tuner.describe()["HyperParameterTuningJobStatus"], "Completed")
        best = tuner.best_training_job()
        job = self.session.sagemaker_client.describe_training_job(TrainingJobName=best)
        self.assertEqual(job["TrainingJobStatus"], "Completed", job.get("FailureReason"))
        self.assertIn("sagemaker-scikit-learn", job["AlgorithmSpecification"]["TrainingImage"])
        # The script's arguments, environment and files were the toolkit's.
        artifact = job["ModelArtifacts"]["S3ModelArtifacts"]
        bucket, key = artifact[len("s3://"):].split("/", 1)
        body = self.session.boto_session.client("s3").get_object(Bucket=bucket, Key=key)["Body"]
        import tarfile
        with tarfile.open(fileobj=io.BytesIO(body.read()), mode="r:gz") as tar:
            model = json.load(tar.extractfile("./model.json"))
        self.assertEqual(model["argv"][:4], ["--epochs", "4", "--learning-rate", model["argv"][3]])
        self.assertEqual(model["argv"][4:], ["--optimizer", "adam"])
        self.assertEqual(model["user_entry_point"], "train.py")
        self.assertEqual(model["module_name"], "train")
        self.assertEqual(json.loads(model["hps"])["optimizer"], "adam")
        self.assertEqual(model["train_files"], ["train.csv"])
        self.assertTrue(model["cwd"].endswith("/code"), model["cwd"])
        self.assertEqual(model["framework_params"]["sagemaker_estimator_class_name"], "SKLearn")

    def test_8_script_mode_failure_reason_is_the_toolkits(self):
        from sagemaker.sklearn import SKLearn
        source = self.write_source("failing-src", "def f():\n    raise ValueError(\"boom: bad value\")\nf()\n")
        estimator = SKLearn(entry_point="train.py", source_dir=source, framework_version="1.2-1",
                            role=ROLE, instance_type="ml.m5.large", instance_count=1,
                            output_path="s3://%s/script-output" % BUCKET,
                            sagemaker_session=self.session)
        with self.assertRaises(Exception):
            estimator.fit(logs=False, job_name="sdk-script-fails")
        job = self.session.sagemaker_client.describe_training_job(
            TrainingJobName="sdk-script-fails")
        self.assertEqual(job["TrainingJobStatus"], "Failed")
        self.assertRegex(job["FailureReason"],
                         r'^AlgorithmError: ExecuteUserScriptError:\nExitCode 1\nErrorMessage '
                         r'"raise ValueError\("boom: bad value"\)\n ValueError: boom: bad value"'
                         r'\nCommand "\S*python3\S* train.py"')


    def test_9_builtin_xgboost_tuned_on_validation_auc(self):
        # AWS's canonical AMT example's shape: the built-in XGBoost algorithm (no entry point),
        # CSV with the label first, objective validation:auc and no metric definitions: the
        # algorithm's own, which SageMaker (and amtd) supply.
        from sagemaker import image_uris
        from sagemaker.estimator import Estimator
        from sagemaker.inputs import TrainingInput
        from sagemaker.tuner import (ContinuousParameter, HyperbandStrategyConfig,
                                     HyperparameterTuner, IntegerParameter, StrategyConfig)
        import random
        rng = random.Random(7)
        folder = os.path.join(self.work, "xgb-data")
        for channel, rows in (("train", 300), ("validation", 100)):
            os.makedirs(os.path.join(folder, channel), exist_ok=True)
            with open(os.path.join(folder, channel, "data.csv"), "w") as f:
                for _ in range(rows):
                    x1, x2 = rng.random(), rng.random()
                    label = 1 if x1 + 0.3 * x2 + rng.gauss(0, 0.15) > 0.65 else 0
                    f.write("%d,%.4f,%.4f\n" % (label, x1, x2))
        inputs = {c: TrainingInput(self.session.upload_data(os.path.join(folder, c),
                                                            key_prefix="xgb/" + c),
                                   content_type="text/csv")
                  for c in ("train", "validation")}
        image = image_uris.retrieve("xgboost", "us-east-1", "1.7-1")
        estimator = Estimator(image_uri=image, role=ROLE, instance_count=1,
                              instance_type="ml.m5.large",
                              output_path="s3://%s/xgb-output" % BUCKET,
                              hyperparameters={"objective": "binary:logistic", "num_round": 20},
                              sagemaker_session=self.session)
        tuner = HyperparameterTuner(
            estimator, "validation:auc",
            {"eta": ContinuousParameter(0.05, 0.5), "max_depth": IntegerParameter(1, 5)},
            objective_type="Maximize", strategy="Hyperband", max_jobs=4, max_parallel_jobs=2,
            # num_round is not one of the names SageMaker infers MaxResource from: say it.
            strategy_config=StrategyConfig(HyperbandStrategyConfig(min_resource=1,
                                                                   max_resource=20)),
            base_tuning_job_name="sdk-xgb")
        tuner.fit(inputs, wait=True)
        self.assertEqual(tuner.describe()["HyperParameterTuningJobStatus"], "Completed")
        best = tuner.describe()["BestTrainingJob"]
        objective = best["FinalHyperParameterTuningJobObjectiveMetric"]
        self.assertEqual(objective["MetricName"], "validation:auc")
        self.assertGreater(objective["Value"], 0.8)
        job = self.session.sagemaker_client.describe_training_job(
            TrainingJobName=best["TrainingJobName"])
        names = [m["Name"] for m in job["AlgorithmSpecification"]["MetricDefinitions"]]
        self.assertIn("validation:auc", names)
        self.assertIn("ObjectiveMetric", names)
        artifact = job["ModelArtifacts"]["S3ModelArtifacts"]
        bucket, key = artifact[len("s3://"):].split("/", 1)
        body = self.session.boto_session.client("s3").get_object(Bucket=bucket, Key=key)["Body"]
        import tarfile
        with tarfile.open(fileobj=io.BytesIO(body.read()), mode="r:gz") as tar:
            self.assertIn("xgboost-model", [m.name.lstrip("./") for m in tar.getmembers()])
        print("built-in XGBoost: best validation:auc %.4f (%s)" % (
            objective["Value"], best["TrainingJobName"]))

    def test_9b_multi_algorithm_tuner_from_an_estimator_dict(self):
        # HyperparameterTuner.create(estimator_dict=...): one tuning job over two algorithms, the
        # toy trainer and a scikit-learn script, each with its own objective metric and ranges.
        from sagemaker.sklearn import SKLearn
        from sagemaker.tuner import ContinuousParameter, HyperparameterTuner
        source = self.write_source("multi-src", SCRIPT_MODE_TRAIN_PY, {
            "helpers.py": "def loss(lr, epoch):\n    return abs(lr - 0.1) + 1.0 / epoch\n"})
        data = os.path.join(self.work, "multi-data")
        os.makedirs(data, exist_ok=True)
        with open(os.path.join(data, "train.csv"), "w") as f:
            f.write("1,2\n")
        train_uri = self.session.upload_data(data, key_prefix="multi/train")
        script = SKLearn(entry_point="train.py", source_dir=source, framework_version="1.2-1",
                         role=ROLE, instance_type="ml.m5.large", instance_count=1,
                         hyperparameters={"epochs": 2}, output_path="s3://%s/multi" % BUCKET,
                         sagemaker_session=self.session)
        tuner = HyperparameterTuner.create(
            estimator_dict={"toy": self.estimator(), "script": script},
            objective_metric_name_dict={"toy": "val_loss", "script": "script_loss"},
            hyperparameter_ranges_dict={
                "toy": self.ranges(),
                "script": {"learning-rate": ContinuousParameter(0.001, 1.0)}},
            metric_definitions_dict={
                "toy": METRICS,
                "script": [{"Name": "script_loss", "Regex": "val_loss=([0-9.]+)"}]},
            strategy="Random", objective_type="Minimize", max_jobs=4, max_parallel_jobs=2,
            base_tuning_job_name="sdk-multi")
        tuner.fit(inputs={"script": {"train": train_uri}}, include_cls_metadata={}, wait=True)
        described = tuner.describe()
        self.assertEqual(described["HyperParameterTuningJobStatus"], "Completed")
        self.assertNotIn("TrainingJobDefinition", described)
        self.assertEqual([d["DefinitionName"] for d in described["TrainingJobDefinitions"]],
                         ["script", "toy"])  # the SDK sends them sorted by name
        self.assertEqual(described["TrainingJobStatusCounters"]["Completed"], 4)
        # Two trials each (round-robin), every summary naming its definition and its metric.
        frame = tuner.analytics().dataframe()
        self.assertEqual(sorted(frame["TrainingJobDefinitionName"]),
                         ["script", "script", "toy", "toy"])
        summaries = self.session.sagemaker_client.list_training_jobs_for_hyper_parameter_tuning_job(
            HyperParameterTuningJobName=tuner.latest_tuning_job.name)["TrainingJobSummaries"]
        for summary in summaries:
            self.assertEqual(
                summary["FinalHyperParameterTuningJobObjectiveMetric"]["MetricName"],
                {"toy": "val_loss", "script": "script_loss"}[summary["TrainingJobDefinitionName"]])
            self.assertEqual(set(summary["TunedHyperParameters"]),
                             {"toy": {"learning_rate", "num_layers"},
                              "script": {"learning-rate"}}[summary["TrainingJobDefinitionName"]])
        # The best job across both algorithms, and the estimator of its definition.
        best = described["BestTrainingJob"]
        values = [s["FinalHyperParameterTuningJobObjectiveMetric"]["Value"] for s in summaries]
        self.assertEqual(best["FinalHyperParameterTuningJobObjectiveMetric"]["Value"], min(values))
        estimator = tuner.best_estimator()
        self.assertEqual(estimator.latest_training_job.name, tuner.best_training_job())
        self.assertIsInstance(estimator, SKLearn if best["TrainingJobDefinitionName"] == "script"
                              else type(self.estimator()))
        attached = HyperparameterTuner.attach(
            tuner.latest_tuning_job.name, sagemaker_session=self.session,
            estimator_cls={"toy": "sagemaker.estimator.Estimator",
                           "script": "sagemaker.sklearn.estimator.SKLearn"})
        self.assertEqual(sorted(attached.estimator_dict), ["script", "toy"])
        self.assertEqual(attached.objective_metric_name_dict,
                         {"toy": "val_loss", "script": "script_loss"})
        self.assertIsInstance(attached.estimator_dict["script"], SKLearn)

    def test_9c_autotune_chooses_the_ranges(self):
        # HyperparameterTuner(autotune=True): the SDK sends the estimator's hyperparameters as
        # AutoParameters (but those kept static); amtd chooses their ranges and the unset
        # settings, runs them, and Describe shows what it chose.
        from sagemaker.estimator import Estimator
        from sagemaker.tuner import HyperparameterTuner
        estimator = Estimator(
            image_uri="amt-local/toy-trainer:latest", role=ROLE, instance_count=1,
            instance_type="ml.m5.large", metric_definitions=METRICS,
            hyperparameters={"epochs": "3", "sleep_ms": "0", "learning_rate": "0.1",
                             "num_layers": "2", "optimizer": "adam"},
            output_path="s3://%s/autotune" % BUCKET, sagemaker_session=self.session)
        tuner = HyperparameterTuner(estimator, "val_loss", None, metric_definitions=METRICS,
                                    objective_type="Minimize", max_jobs=4, max_parallel_jobs=2,
                                    autotune=True,
                                    hyperparameters_to_keep_static=["epochs", "sleep_ms"],
                                    base_tuning_job_name="sdk-autotune")
        tuner.fit(wait=True)
        described = tuner.describe()
        self.assertEqual(described["HyperParameterTuningJobStatus"], "Completed")
        self.assertEqual(described["Autotune"], {"Mode": "Enabled"})
        config = described["HyperParameterTuningJobConfig"]
        self.assertEqual(config["ParameterRanges"]["ContinuousParameterRanges"], [
            {"Name": "learning_rate", "MinValue": "0.01", "MaxValue": "1",
             "ScalingType": "Logarithmic"}])
        self.assertEqual(config["ParameterRanges"]["IntegerParameterRanges"], [
            {"Name": "num_layers", "MinValue": "1", "MaxValue": "20",
             "ScalingType": "Logarithmic"}])
        self.assertEqual(sorted(p["Name"] for p in config["ParameterRanges"]["AutoParameters"]),
                         ["learning_rate", "num_layers", "optimizer"])
        self.assertEqual(config["TuningJobCompletionCriteria"],
                         {"ConvergenceDetected": {"CompleteOnConvergence": "Enabled"}})
        definition = described["TrainingJobDefinition"]
        self.assertEqual(definition["StaticHyperParameters"]["optimizer"], "adam")
        self.assertEqual(definition["RetryStrategy"], {"MaximumRetryAttempts": 2})
        self.assertEqual(described["TrainingJobStatusCounters"]["Completed"], 4)
        for job in tuner.analytics().dataframe().to_dict("records"):
            self.assertTrue(0.01 <= float(job["learning_rate"]) <= 1, job)
            self.assertTrue(1 <= int(float(job["num_layers"])) <= 20, job)
        attached = HyperparameterTuner.attach(tuner.latest_tuning_job.name,
                                              sagemaker_session=self.session)
        self.assertEqual(sorted(r["Name"] for kind in attached.hyperparameter_ranges().values()
                                for r in kind), ["learning_rate", "num_layers"])

class SdkExamplesTest(SdkSuite):
    """examples/sdk/'s scripts with real training code, run as written against an amtd started as
    their docstrings say (the time scale of SageMaker itself; a spot interruption 4 s into
    training, once per job)."""
    AMTD_FLAGS = ["--spot-interrupt-after", "2", "--spot-max-interruptions", "1"]

    def test_10_the_script_mode_examples_run_as_written(self):
        out = self.run_example("sklearn_tuning.py")
        match = re.search(r"best training job: sklearn-example-\S+ val_loss ([0-9.]+)", out)
        self.assertIsNotNone(match, out)
        self.assertLess(float(match.group(1)), 0.5)
        out = self.run_example("xgboost_builtin_tuning.py")
        match = re.search(r"best training job: xgb-example-\S+ validation:auc ([0-9.]+)", out)
        self.assertIsNotNone(match, out)
        self.assertGreater(float(match.group(1)), 0.95)

    def test_11_transfer_learning_warm_start_from_the_sklearn_tuning_job(self):
        # After test_10: its sklearn-example-* tuning job is the parent.
        out = self.run_example("sklearn_warm_start.py")
        parent = re.search(r"^parent (sklearn-example-\S+) \(200 training rows\): 8 training "
                           r"jobs, (\d+) with an objective", out, re.M)
        self.assertIsNotNone(parent, out)
        self.assertGreater(int(parent.group(2)), 0)
        self.assertRegex(out, r"child sklearn-warm-\S+ \(400 training rows\): warm start "
                              r"TransferLearning from %s\n" % re.escape(parent.group(1)))
        best = re.search(r"best of the child: sklearn-warm-\S+ val_loss ([0-9.]+)", out)
        self.assertIsNotNone(best, out)
        self.assertLess(float(best.group(1)), 0.5)

    def test_12_pytorch_spot_training_resumes_from_its_checkpoint(self):
        out = self.run_example("pytorch_spot.py")
        jobs = {label: (interruptions, loss) for label, interruptions, loss in re.findall(
            r"^(on-demand|spot) +pytorch-\S+: Completed, (\d) interruption\(s\), final val_loss "
            r"([0-9.]+),", out, re.M)}
        self.assertEqual(sorted(jobs), ["on-demand", "spot"], out)
        self.assertEqual(jobs["on-demand"][0], "0")
        self.assertEqual(jobs["spot"][0], "1")
        self.assertEqual(jobs["spot"][1], jobs["on-demand"][1])  # to the last digit printed
        attempt = re.search(r"^spot attempt 2: (resuming from checkpoint at epoch (\d+)|no "
                            r"checkpoint: training from the start) \(the last epoch logged "
                            r"before: (\d+|none)\)$", out, re.M)
        self.assertIsNotNone(attempt, out)
        if attempt.group(2) is not None:  # it resumed where the first attempt's log ends
            self.assertIn(int(attempt.group(2)) - int(attempt.group(3)), (0, 1), out)
        else:  # interrupted before the first epoch ended: nothing to resume from
            self.assertEqual(attempt.group(3), "none", out)
        self.assertIn("same final val_loss as uninterrupted: True", out)
        self.assertRegex(out, r"model: s3://amt-local-sdk/\S+/output/model.tar.gz holds model.pt")
        billed = re.search(r"^spot .* training (\d+) s, billable (\d+) s$", out, re.M)
        # BillableTimeInSeconds: the training seconds of both attempts less the 70% spot discount.
        training = int(billed.group(1))
        self.assertEqual(int(billed.group(2)), max(1, math.floor(training * (1 - 0.7) + 0.5)), out)


# A training script as SageMaker users write them: argparse hyperparameters, SM_* variables, a
# helper module beside it, metrics printed per epoch, the model written into SM_MODEL_DIR.
SCRIPT_MODE_TRAIN_PY = """import argparse, json, os, sys
from helpers import loss

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--learning-rate", type=float, default=0.5)
parser.add_argument("--optimizer", type=str, default="sgd")
parser.add_argument("--model-dir", type=str, default=os.environ.get("SM_MODEL_DIR"))
args = parser.parse_args()
for epoch in range(1, args.epochs + 1):
    print("epoch=%d val_loss=%.4f" % (epoch, loss(args.learning_rate, epoch)), flush=True)
with open(os.path.join(args.model_dir, "model.json"), "w") as f:
    json.dump({"argv": sys.argv[1:], "user_entry_point": os.environ["SM_USER_ENTRY_POINT"],
               "module_name": os.environ["SM_MODULE_NAME"], "hps": os.environ["SM_HPS"],
               "train_files": sorted(os.listdir(os.environ["SM_CHANNEL_TRAIN"])),
               "cwd": os.getcwd(),
               "framework_params": json.loads(os.environ["SM_FRAMEWORK_PARAMS"])}, f)
"""


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--source-dir", required=True)
    p.add_argument("--sdk", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                 "..", "..", "..", "shared", "vendor",
                                                 "sagemaker-python-sdk"))
    ARGS, rest = p.parse_known_args()
    problem = import_sdk()
    if problem is not None:
        print("SKIPPED: the SageMaker Python SDK does not import here (%s); see "
              "tests/compat/sdk_compat_test.py" % problem)
        return 0
    result = unittest.main(argv=[sys.argv[0]] + rest, verbosity=2, exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
