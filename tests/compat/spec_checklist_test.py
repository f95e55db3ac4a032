#!/usr/bin/env python3
"""The spec's checklist ("Emulator must-haves that moto lacks", the last section of
../shared/spec/sagemaker-amt.md), one test per item, through boto3 against a real amtd running
real trainers: a regression in fidelity to SageMaker fails CI here.

Run by CTest (tests/compat/CMakeLists.txt) with the pyenv python (boto3/botocore 1.43):

    python3 tests/compat/spec_checklist_test.py --bin-dir build/bin --source-dir .

amtd runs with --time-scale 0.01 (SageMaker's 120 s stop grace is 1.2 s, a MaxRuntimeInSeconds of
100 is 1 s) and every spot job is interrupted once, 1 s into its training.
"""

import argparse
import io
import json
import os
import re
import stat
import sys
import tarfile
import time
import unittest

import boto3
import botocore.exceptions
import botocore.session

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python",
                                "src"))
import amt_local  # noqa: E402

ARGS = None
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
BUCKET = "spec-checklist"
TOY = "amt-local/toy-trainer:latest"
FAILING = "amt-local/failing-trainer:latest"
METRICS = [{"Name": "val_loss", "Regex": "val_loss=([0-9.eE+-]+)"},
           {"Name": "validation:loss",
            "Regex": r".*\[[0-9]+\].*#011validation-loss:([-+]?[0-9]*\.?[0-9]+).*"}]

# A trainer that shows what it was given (the /opt/ml contract), then exits as told: `exit` (an
# exit code), `failure` (a text for output/failure), `ignore_sigterm` (it must then be killed).
CONTRACT_TRAINER = r"""#!/usr/bin/python3
import json, os, signal, sys, time
config = os.environ["SM_INPUT_CONFIG_DIR"]
hps = json.load(open(os.path.join(config, "hyperparameters.json")))
if hps.get("ignore_sigterm") == "1":
    signal.signal(signal.SIGTERM, lambda *_: print("SIGTERM received, ignored", flush=True))
    print("waiting", flush=True)
    while True:
        time.sleep(0.05)
seen = {"hyperparameters": hps,
        "resourceconfig": json.load(open(os.path.join(config, "resourceconfig.json"))),
        "inputdataconfig": json.load(open(os.path.join(config, "inputdataconfig.json"))),
        "train_files": sorted(os.listdir(os.environ["SM_CHANNEL_TRAIN"])),
        "argv": sys.argv[1:]}
with open(os.path.join(os.environ["SM_MODEL_DIR"], "seen.json"), "w") as f:
    json.dump(seen, f)
os.makedirs(os.environ["SM_OUTPUT_DATA_DIR"], exist_ok=True)
with open(os.path.join(os.environ["SM_OUTPUT_DATA_DIR"], "extra.txt"), "w") as f:
    f.write("output data")
print("loss\t=0.25", flush=True)
if "failure" in hps:
    with open(os.path.join(os.environ["SM_OUTPUT_DIR"], "failure"), "w") as f:
        f.write(hps["failure"])
sys.exit(int(hps.get("exit", "0")))
"""


def toy_job(name, **hyperparameters):
    hps = {"learning_rate": "0.01", "num_layers": "4", "optimizer": "adam", "epochs": "3"}
    hps.update({k: str(v) for k, v in hyperparameters.items()})
    return {"TrainingJobName": name, "HyperParameters": hps,
            "AlgorithmSpecification": {"TrainingImage": TOY, "TrainingInputMode": "File",
                                       "MetricDefinitions": METRICS},
            "RoleArn": ROLE, "OutputDataConfig": {"S3OutputPath": "s3://%s/out" % BUCKET},
            "ResourceConfig": {"InstanceType": "ml.m5.large", "InstanceCount": 1,
                               "VolumeSizeInGB": 10},
            "StoppingCondition": {"MaxRuntimeInSeconds": 3600}}


def tuning_job(name, strategy="Random", jobs=4, parallel=2, epochs=3, image=TOY, seed=7,
               ranges=None, statics=None):
    config = {"Strategy": strategy,
              "HyperParameterTuningJobObjective": {"Type": "Minimize", "MetricName": "val_loss"},
              "ResourceLimits": {"MaxParallelTrainingJobs": parallel},
              "ParameterRanges": ranges or {
                  "ContinuousParameterRanges": [{"Name": "learning_rate", "MinValue": "0.0001",
                                                 "MaxValue": "1",
                                                 "ScalingType": "Logarithmic"}],
                  "IntegerParameterRanges": [{"Name": "num_layers", "MinValue": "1",
                                              "MaxValue": "8"}]},
              "RandomSeed": seed}
    if jobs is not None:
        config["ResourceLimits"]["MaxNumberOfTrainingJobs"] = jobs
    static = {"epochs": str(epochs)}
    static.update(statics or {})
    return {"HyperParameterTuningJobName": name, "HyperParameterTuningJobConfig": config,
            "TrainingJobDefinition": {
                "StaticHyperParameters": static,
                "AlgorithmSpecification": {"TrainingImage": image, "TrainingInputMode": "File",
                                           "MetricDefinitions": METRICS},
                "RoleArn": ROLE, "OutputDataConfig": {"S3OutputPath": "s3://%s/out" % BUCKET},
                "ResourceConfig": {"InstanceType": "ml.m5.large", "InstanceCount": 1,
                                   "VolumeSizeInGB": 10},
                "StoppingCondition": {"MaxRuntimeInSeconds": 3600}}}


class SpecChecklistTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.amtd = amt_local.Amtd(
            ARGS.bin_dir, "--time-scale", "0.01", "--spot-interrupt-after", "1",
            "--spot-max-interruptions", "1", slots=4,
            image_map=os.path.join(ARGS.source_dir, "examples", "image-map.json"),
            prefix="amt-spec-checklist-")
        cls.addClassCleanup(cls.amtd.close)
        cls.work = cls.amtd.work  # the data dir's parent, for the tests' own files too
        kwargs = dict(region_name="us-east-1", endpoint_url=cls.amtd.url,
                      aws_access_key_id="test", aws_secret_access_key="test")
        cls.sm = boto3.client("sagemaker", **kwargs)
        cls.s3 = boto3.client("s3", **kwargs)
        cls.logs = boto3.client("logs", **kwargs)
        cls.s3.create_bucket(Bucket=BUCKET)
        cls.trainer = os.path.join(cls.work, "contract-trainer")
        with open(cls.trainer, "w") as f:
            f.write(CONTRACT_TRAINER)
        os.chmod(cls.trainer, os.stat(cls.trainer).st_mode | stat.S_IEXEC)

    # --- helpers: poll as SageMaker users do (no waiter exists for tuning jobs) ---

    def wait_training(self, name, timeout=120):
        deadline = time.monotonic() + timeout
        while True:
            d = self.sm.describe_training_job(TrainingJobName=name)
            if d["TrainingJobStatus"] in ("Completed", "Failed", "Stopped"):
                return d
            self.assertLess(time.monotonic(), deadline, "%s did not end" % name)
            time.sleep(0.05)

    def wait_status(self, name, secondary, timeout=60):
        deadline = time.monotonic() + timeout
        while self.sm.describe_training_job(TrainingJobName=name)["SecondaryStatus"] != secondary:
            self.assertLess(time.monotonic(), deadline, "%s never %s" % (name, secondary))
            time.sleep(0.02)

    def wait_tuning(self, name, timeout=180):
        deadline = time.monotonic() + timeout
        while True:
            d = self.sm.describe_hyper_parameter_tuning_job(HyperParameterTuningJobName=name)
            if d["HyperParameterTuningJobStatus"] in ("Completed", "Failed", "Stopped"):
                return d
            self.assertLess(time.monotonic(), deadline, "%s did not end" % name)
            time.sleep(0.05)

    def run_tuning(self, job):
        self.sm.create_hyper_parameter_tuning_job(**job)
        return self.wait_tuning(job["HyperParameterTuningJobName"])

    def summaries(self, tuning_name):
        pages = self.sm.get_paginator("list_training_jobs_for_hyper_parameter_tuning_job")
        return [s for page in pages.paginate(HyperParameterTuningJobName=tuning_name)
                for s in page["TrainingJobSummaries"]]

    def log_lines(self, job_name):
        streams = self.logs.describe_log_streams(logGroupName="/aws/sagemaker/TrainingJobs",
                                                 logStreamNamePrefix=job_name)["logStreams"]
        self.assertEqual(len(streams), 1, streams)
        events = self.logs.get_log_events(logGroupName="/aws/sagemaker/TrainingJobs",
                                          logStreamName=streams[0]["logStreamName"],
                                          startFromHead=True)["events"]
        return [e["message"] for e in events]

    def tar_members(self, uri):
        bucket, key = uri[len("s3://"):].split("/", 1)
        body = self.s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as tar:
            return {m.name.lstrip("./"): tar.extractfile(m).read() for m in tar.getmembers()
                    if m.isfile()}

    def client_error(self, call, **kwargs):
        with self.assertRaises(botocore.exceptions.ClientError) as caught:
            call(**kwargs)
        return caught.exception.response["Error"]["Code"], caught.exception.response["Error"][
            "Message"]

    # --- the checklist ---

    def test_01_training_job_state_machine(self):
        self.sm.create_training_job(**toy_job("item1-completed"))
        d = self.wait_training("item1-completed")
        self.assertEqual((d["TrainingJobStatus"], d["SecondaryStatus"]), ("Completed", "Completed"))
        transitions = d["SecondaryStatusTransitions"]
        self.assertEqual([t["Status"] for t in transitions],
                         ["Starting", "Downloading", "Training", "Uploading", "Completed"])
        self.assertTrue(all("StartTime" in t and t["StatusMessage"] for t in transitions),
                        transitions)
        self.assertTrue(all("EndTime" in t for t in transitions[:-1]), transitions)
        self.assertLessEqual(d["TrainingStartTime"], d["TrainingEndTime"])
        self.assertGreaterEqual(d["TrainingTimeInSeconds"], 1)
        self.assertEqual(d["BillableTimeInSeconds"], d["TrainingTimeInSeconds"])

        self.sm.create_training_job(**toy_job("item1-stopped", epochs=100000, sleep_ms=20))
        self.wait_status("item1-stopped", "Training")
        self.sm.stop_training_job(TrainingJobName="item1-stopped")
        self.assertIn(self.sm.describe_training_job(TrainingJobName="item1-stopped")[
            "TrainingJobStatus"], ("Stopping", "Stopped"))
        d = self.wait_training("item1-stopped")
        self.assertEqual((d["TrainingJobStatus"], d["SecondaryStatus"]), ("Stopped", "Stopped"))
        self.assertIn("Stopping", [t["Status"] for t in d["SecondaryStatusTransitions"]])

        job = toy_job("item1-max-runtime", epochs=100000, sleep_ms=20)
        job["StoppingCondition"] = {"MaxRuntimeInSeconds": 100}  # 1 s at --time-scale 0.01
        self.sm.create_training_job(**job)
        d = self.wait_training("item1-max-runtime")
        self.assertEqual((d["TrainingJobStatus"], d["SecondaryStatus"]),
                         ("Stopped", "MaxRuntimeExceeded"))

    def test_02_the_opt_ml_contract_exit_codes_failure_reason_and_stop_signals(self):
        os.makedirs(os.path.join(self.work, "train"))
        with open(os.path.join(self.work, "train", "rows.csv"), "w") as f:
            f.write("1,2\n")
        self.s3.upload_file(os.path.join(self.work, "train", "rows.csv"), BUCKET,
                            "data/train/rows.csv")
        job = toy_job("item2-contract", alpha="0.5")
        job["AlgorithmSpecification"] = {"TrainingImage": self.trainer,
                                         "TrainingInputMode": "File"}
        job["InputDataConfig"] = [{"ChannelName": "train", "ContentType": "text/csv",
                                   "DataSource": {"S3DataSource": {
                                       "S3DataType": "S3Prefix",
                                       "S3Uri": "s3://%s/data/train" % BUCKET}}}]
        self.sm.create_training_job(**job)
        d = self.wait_training("item2-contract")
        self.assertEqual(d["TrainingJobStatus"], "Completed", d.get("FailureReason"))
        model = self.tar_members(d["ModelArtifacts"]["S3ModelArtifacts"])
        seen = json.loads(model["seen.json"])
        self.assertEqual(seen["hyperparameters"]["alpha"], "0.5")  # strings, as SageMaker writes
        self.assertEqual(seen["resourceconfig"]["current_host"], "algo-1")
        self.assertEqual(seen["resourceconfig"]["hosts"], ["algo-1"])
        self.assertEqual(seen["inputdataconfig"]["train"]["ContentType"], "text/csv")
        self.assertEqual(seen["train_files"], ["rows.csv"])
        self.assertEqual(seen["argv"], ["train"])
        output = d["ModelArtifacts"]["S3ModelArtifacts"].replace("model.tar.gz", "output.tar.gz")
        self.assertEqual(self.tar_members(output), {"extra.txt": b"output data"})

        job["TrainingJobName"] = "item2-failure"
        job["HyperParameters"] = {"exit": "3", "failure": "x" * 2000}
        self.sm.create_training_job(**job)
        d = self.wait_training("item2-failure")
        self.assertEqual(d["TrainingJobStatus"], "Failed")
        self.assertTrue(d["FailureReason"].startswith("AlgorithmError: xxx"), d["FailureReason"])
        self.assertLessEqual(len(d["FailureReason"]), 1024)
        job["TrainingJobName"] = "item2-client-error"
        job["HyperParameters"] = {"exit": "2", "failure": "ClientError: the training data is empty"}
        self.sm.create_training_job(**job)
        self.assertEqual(self.wait_training("item2-client-error")["FailureReason"],
                         "ClientError: the training data is empty")

        job["TrainingJobName"] = "item2-sigkill"
        job["HyperParameters"] = {"ignore_sigterm": "1"}
        self.sm.create_training_job(**job)
        deadline = time.monotonic() + 60
        while "waiting" not in self.log_lines_or_none("item2-sigkill"):  # its handler is set
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.05)
        self.sm.stop_training_job(TrainingJobName="item2-sigkill")
        d = self.wait_training("item2-sigkill")
        self.assertEqual(d["TrainingJobStatus"], "Stopped")
        # SIGTERM first (the trainer saw it and ignored it), SIGKILL after the grace.
        self.assertIn("SIGTERM received, ignored", self.log_lines("item2-sigkill"))

    def log_lines_or_none(self, job_name):
        try:
            return self.log_lines(job_name)
        except (AssertionError, botocore.exceptions.ClientError):
            return []

    def test_03_logs_metrics_and_the_objective(self):
        self.sm.create_training_job(**toy_job("item3-metrics", epochs=4))
        d = self.wait_training("item3-metrics")
        lines = self.log_lines("item3-metrics")
        tabbed = [line for line in lines if line.startswith("[4]")]
        self.assertEqual(len(tabbed), 1, lines)
        self.assertIn("#011validation-loss:", tabbed[0])  # a tab shows as #011, as on SageMaker
        last = re.search(r"val_loss=([0-9.]+)", [l for l in lines if "val_loss=" in l][-1])
        final = {m["MetricName"]: m["Value"] for m in d["FinalMetricDataList"]}
        self.assertAlmostEqual(final["val_loss"], float(last.group(1)), places=5)
        self.assertAlmostEqual(final["validation:loss"], float(last.group(1)), places=5)

    def test_04_the_tuning_scheduler(self):
        d = self.run_tuning(tuning_job("item4-tuning", jobs=5, parallel=2))
        self.assertEqual(d["HyperParameterTuningJobStatus"], "Completed")
        self.assertEqual(d["TrainingJobStatusCounters"]["Completed"], 5)
        self.assertEqual(d["ObjectiveStatusCounters"]["Succeeded"], 5)
        self.assertEqual(
            d["TrainingJobDefinition"]["StaticHyperParameters"]["_tuning_objective_metric"],
            "val_loss")
        self.assertIn("RuntimeInSeconds", d["ConsumedResources"])
        self.assertIn("NumberOfTrainingJobsObjectiveNotImproving", d["TuningJobCompletionDetails"])
        summaries = self.summaries("item4-tuning")
        self.assertEqual(len(summaries), 5)
        for s in summaries:
            self.assertRegex(s["TrainingJobName"], r"^item4-tuning-00[1-5]-[0-9a-f]{8}$")
            self.assertEqual(set(s["TunedHyperParameters"]), {"learning_rate", "num_layers"})
            job = self.sm.describe_training_job(TrainingJobName=s["TrainingJobName"])
            self.assertEqual(job["HyperParameters"]["_tuning_objective_metric"], "val_loss")
        # Never more than MaxParallelTrainingJobs at once.
        for s in summaries:
            at = s["TrainingStartTime"]
            running = [o for o in summaries if o["TrainingStartTime"] <= at < o["TrainingEndTime"]]
            self.assertLessEqual(len(running), 2)
        best = min(summaries, key=lambda s: s["FinalHyperParameterTuningJobObjectiveMetric"]["Value"])
        self.assertEqual(d["BestTrainingJob"]["TrainingJobName"], best["TrainingJobName"])

    def test_05_strategies(self):
        first = self.run_tuning(tuning_job("item5-random-a", jobs=3, seed=11))
        second = self.run_tuning(tuning_job("item5-random-b", jobs=3, seed=11))
        def by_index(name):
            return [s["TunedHyperParameters"] for s in sorted(
                self.summaries(name), key=lambda s: s["TrainingJobName"])]
        self.assertEqual(by_index("item5-random-a"), by_index("item5-random-b"))
        self.assertEqual(first["HyperParameterTuningJobStatus"], "Completed")
        self.assertEqual(second["HyperParameterTuningJobStatus"], "Completed")

        grid = {"CategoricalParameterRanges": [
            {"Name": "optimizer", "Values": ["sgd", "adam"]},
            {"Name": "num_layers", "Values": ["1", "2", "4"]}]}
        d = self.run_tuning(tuning_job("item5-grid", "Grid", jobs=None, parallel=4, ranges=grid))
        self.assertEqual(d["TrainingJobStatusCounters"]["Completed"], 6)
        combos = {(s["TunedHyperParameters"]["optimizer"], s["TunedHyperParameters"]["num_layers"])
                  for s in self.summaries("item5-grid")}
        self.assertEqual(len(combos), 6)
        code, message = self.client_error(
            self.sm.create_hyper_parameter_tuning_job,
            **tuning_job("item5-grid-bad", "Grid", jobs=5, ranges=grid))
        self.assertEqual((code, message), ("ValidationException",
                                           "For the Grid strategy, MaxNumberOfTrainingJobs (5) "
                                           "must equal the number of hyperparameter combinations "
                                           "(6) or be omitted."))
        code, _ = self.client_error(self.sm.create_hyper_parameter_tuning_job,
                                    **tuning_job("item5-grid-cont", "Grid", jobs=None))
        self.assertEqual(code, "ValidationException")

        bayes = [self.run_tuning(tuning_job("item5-bayes-%s" % n, "Bayesian", jobs=3, parallel=1,
                                            seed=5)) for n in "ab"]
        self.assertEqual([b["HyperParameterTuningJobStatus"] for b in bayes], ["Completed"] * 2)
        self.assertEqual(by_index("item5-bayes-a"), by_index("item5-bayes-b"))

        hyperband = tuning_job("item5-hyperband", "Hyperband", jobs=3, parallel=3, epochs=9)
        self.assertEqual(self.run_tuning(hyperband)["HyperParameterTuningJobStatus"], "Completed")
        no_epochs = tuning_job("item5-hyperband-bad", "Hyperband", jobs=3)
        del no_epochs["TrainingJobDefinition"]["StaticHyperParameters"]["epochs"]
        self.assertEqual(self.client_error(self.sm.create_hyper_parameter_tuning_job, **no_epochs),
                         ("ValidationException",
                          "MaxResource parameter is not provided and could not be inferred from "
                          "provided static hyperparameters of TrainingJobDefinition."))

    def test_06_auto_early_stopping(self):
        with open(os.path.join(ARGS.source_dir, "examples", "auto-early-stopping.json")) as f:
            job = json.load(f)
        job["HyperParameterTuningJobName"] = "item6-auto"
        d = self.run_tuning(job)
        self.assertEqual(d["HyperParameterTuningJobStatus"], "Completed")
        stopped = [s for s in self.summaries("item6-auto") if s["TrainingJobStatus"] == "Stopped"]
        self.assertGreater(len(stopped), 0)
        for s in stopped:
            job = self.sm.describe_training_job(TrainingJobName=s["TrainingJobName"])
            stopping = [t for t in job["SecondaryStatusTransitions"] if t["Status"] == "Stopping"]
            self.assertIn("median", stopping[0]["StatusMessage"])
            self.assertIn("FinalHyperParameterTuningJobObjectiveMetric", s)  # its last value

    def test_07_completion_criteria_runtime_and_early_failure(self):
        job = tuning_job("item7-target", jobs=20, parallel=1)
        job["HyperParameterTuningJobConfig"]["TuningJobCompletionCriteria"] = {
            "TargetObjectiveMetricValue": 10.0}  # the first job reaches it
        d = self.run_tuning(job)
        self.assertEqual((d["HyperParameterTuningJobStatus"],
                          d["TrainingJobStatusCounters"]["Completed"]), ("Completed", 1))

        job = tuning_job("item7-not-improving", jobs=20, parallel=1,
                         ranges={"CategoricalParameterRanges": [
                             {"Name": "optimizer", "Values": ["sgd"]}]})
        job["HyperParameterTuningJobConfig"]["TuningJobCompletionCriteria"] = {
            "BestObjectiveNotImproving": {"MaxNumberOfTrainingJobsNotImproving": 3}}
        d = self.run_tuning(job)
        self.assertEqual(d["HyperParameterTuningJobStatus"], "Completed")
        self.assertEqual(d["TrainingJobStatusCounters"]["Completed"], 4)  # 1 best, 3 not better
        self.assertEqual(d["TuningJobCompletionDetails"]["NumberOfTrainingJobsObjectiveNotImproving"],
                         3)

        job["HyperParameterTuningJobName"] = "item7-convergence"
        job["HyperParameterTuningJobConfig"]["TuningJobCompletionCriteria"] = {
            "ConvergenceDetected": {"CompleteOnConvergence": "Enabled"}}
        d = self.run_tuning(job)
        self.assertEqual(d["HyperParameterTuningJobStatus"], "Completed")
        self.assertIn("ConvergenceDetectedTime", d["TuningJobCompletionDetails"])
        self.assertLess(d["TrainingJobStatusCounters"]["Completed"], 20)

        job = tuning_job("item7-runtime", jobs=20, parallel=2, epochs=100000,
                         statics={"sleep_ms": "20"})
        job["HyperParameterTuningJobConfig"]["ResourceLimits"]["MaxRuntimeInSeconds"] = 120
        d = self.run_tuning(job)
        self.assertEqual(d["HyperParameterTuningJobStatus"], "Completed")
        self.assertEqual(d["TrainingJobStatusCounters"]["Stopped"], 2)

        d = self.run_tuning(tuning_job("item7-early-failure", jobs=8, parallel=1, image=FAILING))
        self.assertEqual(d["HyperParameterTuningJobStatus"], "Failed")
        self.assertIn("No training job succeeded after 5 attempts", d["FailureReason"])
        d = self.run_tuning(tuning_job("item7-all-failed", jobs=2, parallel=2, image=FAILING))
        self.assertEqual(d["HyperParameterTuningJobStatus"], "Failed")
        self.assertIn("All training jobs failed", d["FailureReason"])

    def test_08_stops_and_listing(self):
        job = tuning_job("item8-stop", jobs=6, parallel=2, epochs=100000,
                         statics={"sleep_ms": "20"})
        self.sm.create_hyper_parameter_tuning_job(**job)
        deadline = time.monotonic() + 60
        while len(self.summaries("item8-stop")) < 2:
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.02)
        self.sm.stop_hyper_parameter_tuning_job(HyperParameterTuningJobName="item8-stop")
        d = self.wait_tuning("item8-stop")
        self.assertEqual(d["HyperParameterTuningJobStatus"], "Stopped")
        self.assertEqual({s["TrainingJobStatus"] for s in self.summaries("item8-stop")},
                         {"Stopped"})

        self.run_tuning(tuning_job("item8-list", jobs=12, parallel=4, epochs=2))
        page = self.sm.list_training_jobs_for_hyper_parameter_tuning_job(
            HyperParameterTuningJobName="item8-list")
        self.assertEqual(len(page["TrainingJobSummaries"]), 10)  # MaxResults defaults to 10
        rest = self.sm.list_training_jobs_for_hyper_parameter_tuning_job(
            HyperParameterTuningJobName="item8-list", NextToken=page["NextToken"])
        self.assertEqual(len(rest["TrainingJobSummaries"]), 2)
        self.assertNotIn("NextToken", rest)
        ordered = self.sm.list_training_jobs_for_hyper_parameter_tuning_job(
            HyperParameterTuningJobName="item8-list", SortBy="FinalObjectiveMetricValue",
            SortOrder="Ascending", MaxResults=100)["TrainingJobSummaries"]
        values = [s["FinalHyperParameterTuningJobObjectiveMetric"]["Value"] for s in ordered]
        self.assertEqual(values, sorted(values))
        self.assertEqual(self.sm.list_training_jobs_for_hyper_parameter_tuning_job(
            HyperParameterTuningJobName="item8-list", StatusEquals="Stopped")[
                "TrainingJobSummaries"], [])

    def test_09_warm_start(self):
        # Its jobs take 1.5 s (3 epochs of 0.5 s), so the child below is created while it runs,
        # however slowly this machine answers the request in between.
        parent = tuning_job("item9-parent", "Bayesian", jobs=3, parallel=3,
                            statics={"sleep_ms": "500"})
        self.sm.create_hyper_parameter_tuning_job(**parent)
        child = tuning_job("item9-child", "Bayesian", jobs=2, parallel=2,
                           statics={"sleep_ms": "0"})  # the parent's hyperparameters, as warm start needs
        child["WarmStartConfig"] = {
            "ParentHyperParameterTuningJobs": [{"HyperParameterTuningJobName": "item9-parent"}],
            "WarmStartType": "IdenticalDataAndAlgorithm"}
        code, message = self.client_error(self.sm.create_hyper_parameter_tuning_job, **child)
        self.assertEqual(code, "ValidationException")
        self.assertIn("item9-parent is InProgress", message)
        self.wait_tuning("item9-parent")
        d = self.run_tuning(child)
        self.assertEqual(d["HyperParameterTuningJobStatus"], "Completed")
        everyone = self.summaries("item9-parent") + self.summaries("item9-child")
        best = min(everyone, key=lambda s: s["FinalHyperParameterTuningJobObjectiveMetric"]["Value"])
        self.assertEqual(d["OverallBestTrainingJob"]["TrainingJobName"], best["TrainingJobName"])

        other = dict(child, HyperParameterTuningJobName="item9-objective")
        other["HyperParameterTuningJobConfig"] = dict(
            child["HyperParameterTuningJobConfig"],
            HyperParameterTuningJobObjective={"Type": "Minimize", "MetricName": "validation:loss"})
        code, message = self.client_error(self.sm.create_hyper_parameter_tuning_job, **other)
        self.assertEqual(code, "ValidationException")
        self.assertIn("warm start needs the same objective", message)
        six = dict(child, HyperParameterTuningJobName="item9-six")
        six["WarmStartConfig"] = dict(child["WarmStartConfig"], ParentHyperParameterTuningJobs=[
            {"HyperParameterTuningJobName": "item9-parent"}] * 6)
        code, message = self.client_error(self.sm.create_hyper_parameter_tuning_job, **six)
        self.assertEqual(code, "ValidationException")
        self.assertIn("Member must have length less than or equal to 5", message)

    def test_10_managed_spot(self):
        job = toy_job("item10-spot", epochs=40, sleep_ms=50)
        job["EnableManagedSpotTraining"] = True
        job["StoppingCondition"] = {"MaxRuntimeInSeconds": 3600, "MaxWaitTimeInSeconds": 7200}
        job["CheckpointConfig"] = {"S3Uri": "s3://%s/checkpoints/item10" % BUCKET}
        self.sm.create_training_job(**job)
        d = self.wait_training("item10-spot")
        self.assertEqual(d["TrainingJobStatus"], "Completed", d.get("FailureReason"))
        self.assertIn("Interrupted", [t["Status"] for t in d["SecondaryStatusTransitions"]])
        self.assertLess(d["BillableTimeInSeconds"], d["TrainingTimeInSeconds"])
        lines = self.log_lines("item10-spot")
        # The second attempt resumed from its checkpoint: every one of the 40 epochs ran.
        epochs = [int(m.group(1)) for m in map(re.compile(r"^epoch=(\d+) ").match, lines) if m]
        self.assertEqual(sorted(set(epochs)), list(range(1, 41)))

        bad = toy_job("item10-bad-wait")
        bad["EnableManagedSpotTraining"] = True
        bad["StoppingCondition"] = {"MaxRuntimeInSeconds": 3600, "MaxWaitTimeInSeconds": 60}
        self.assertEqual(self.client_error(self.sm.create_training_job, **bad)[0],
                         "ValidationException")
        not_spot = toy_job("item10-no-spot")
        not_spot["StoppingCondition"] = {"MaxRuntimeInSeconds": 3600, "MaxWaitTimeInSeconds": 7200}
        self.assertEqual(self.client_error(self.sm.create_training_job, **not_spot),
                         ("ValidationException",
                          "Invalid MaxWaitTimeInSeconds. It is only supported when "
                          "EnableManagedSpotTraining is set to true"))

    def test_11_server_side_validation_and_error_codes(self):
        bad = tuning_job("item11_bad")
        code, message = self.client_error(self.sm.create_hyper_parameter_tuning_job, **bad)
        self.assertEqual(code, "ValidationException")
        self.assertEqual(message,
                         "1 validation error detected: Value 'item11_bad' at "
                         "'hyperParameterTuningJobName' failed to satisfy constraint: Member must "
                         "satisfy regular expression pattern: ^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,31}")
        self.assertEqual(self.client_error(self.sm.describe_training_job, TrainingJobName="nope"),
                         ("ValidationException", "Requested resource not found."))
        code, _ = self.client_error(self.sm.describe_hyper_parameter_tuning_job,
                                    HyperParameterTuningJobName="nope")
        self.assertEqual(code, "ResourceNotFound")
        self.sm.create_training_job(**toy_job("item11-twice"))
        code, message = self.client_error(self.sm.create_training_job, **toy_job("item11-twice"))
        self.assertEqual(code, "ResourceInUse")
        self.assertIn("a training job with this name already exists", message)

    def test_12_describe_echoes_the_request_as_sagemaker_does(self):
        job = tuning_job("item12-echo", jobs=1, parallel=1)
        self.sm.create_hyper_parameter_tuning_job(**job)
        d = self.sm.describe_hyper_parameter_tuning_job(HyperParameterTuningJobName="item12-echo")
        ranges = d["HyperParameterTuningJobConfig"]["ParameterRanges"]
        self.assertEqual(ranges["CategoricalParameterRanges"], [])  # empty lists echoed
        self.assertEqual(d["TrainingJobDefinition"]["StaticHyperParameters"],
                         {"epochs": "3", "_tuning_objective_metric": "val_loss"})
        created = d["CreationTime"]
        self.assertEqual(created.microsecond % 1000, 0)  # millisecond timestamps
        self.wait_tuning("item12-echo")


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--source-dir", required=True)
    ARGS, rest = p.parse_known_args()
    model = botocore.session.get_session().get_service_model("sagemaker")
    if "RandomSeed" not in model.shape_for("HyperParameterTuningJobConfig").members:
        print("SKIPPED: botocore %s predates RandomSeed, which these tests send; run them with a "
              "newer boto3 (the SDK's pyenv python)" % botocore.__version__)
        return
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
