#!/usr/bin/python3
"""boto3 and the aws cli against amtd's AWS JSON gateway: real clients, real HTTP, real trainers.

Run by CTest (tests/compat/CMakeLists.txt) with Debian's python3-boto3 and awscli, which
scripts/install-deps.sh installs:

    /usr/bin/python3 tests/compat/sagemaker_compat_test.py --bin-dir build/bin --source-dir .

Starts build/bin/amtd on free ports with the examples' image map, then drives it the way a
SageMaker user's code does. Debian 12's botocore (1.29) predates RandomSeed, so the job files sent
through boto3 leave it out (botocore rejects members its model does not know).
"""

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time
import unittest

import boto3
import botocore.exceptions

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python",
                                "src"))
import amt_local  # noqa: E402

ARGS = None
AWS = "/usr/bin/aws"  # Debian's aws cli; a pip-installed one earlier on PATH may differ
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
               "AWS_DEFAULT_REGION": "us-east-1"}


def start_amtd(test_class, prefix):
    """amtd on free ports in a fresh temporary folder, with the examples' image map and three
    slots; stopped and removed when the class's tests are done (or its setUpClass failed)."""
    amtd = amt_local.Amtd(ARGS.bin_dir, prefix=prefix, slots=3,
                          image_map=os.path.join(ARGS.source_dir, "examples", "image-map.json"))
    test_class.addClassCleanup(amtd.close)
    return amtd


def job_file(name, budget=3, epochs=2):
    with open(os.path.join(ARGS.source_dir, "examples", "random-tuning.json")) as f:
        job = json.load(f)
    job["HyperParameterTuningJobName"] = name
    job["HyperParameterTuningJobConfig"].pop("RandomSeed", None)
    job["HyperParameterTuningJobConfig"]["ResourceLimits"] = {
        "MaxNumberOfTrainingJobs": budget, "MaxParallelTrainingJobs": 3}
    job["TrainingJobDefinition"]["StaticHyperParameters"] = {"epochs": str(epochs)}
    return job


class SageMakerCompatTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.amtd = start_amtd(cls, "amt-compat-")
        cls.sm = boto3.client("sagemaker", region_name="us-east-1", endpoint_url=cls.amtd.url,
                              aws_access_key_id="test", aws_secret_access_key="test")

    def wait_for_tuning_job(self, name, timeout=120):
        # No botocore waiter exists for tuning jobs: poll as SageMaker users do.
        deadline = time.monotonic() + timeout
        while True:
            d = self.sm.describe_hyper_parameter_tuning_job(HyperParameterTuningJobName=name)
            if d["HyperParameterTuningJobStatus"] not in ("InProgress", "Stopping"):
                return d
            self.assertLess(time.monotonic(), deadline, "tuning job %s did not end" % name)
            time.sleep(0.05)

    def aws(self, *args, service="sagemaker"):
        return subprocess.run([AWS, "--endpoint-url", self.amtd.url, "--output", "json",
                               service] + list(args),
                              env=dict(os.environ, **CREDENTIALS), capture_output=True, text=True)

    def test_boto3_runs_a_tuning_job_to_completion(self):
        created = self.sm.create_hyper_parameter_tuning_job(**job_file("boto-run"))
        self.assertEqual(created["HyperParameterTuningJobArn"],
                         "arn:aws:sagemaker:us-east-1:000000000000:hyper-parameter-tuning-job/boto-run")
        self.assertRegex(created["ResponseMetadata"]["RequestId"], r"^[0-9a-f-]{36}$")
        d = self.wait_for_tuning_job("boto-run")
        self.assertEqual(d["HyperParameterTuningJobStatus"], "Completed")
        self.assertEqual(d["TrainingJobStatusCounters"],
                         {"Completed": 3, "InProgress": 0, "RetryableError": 0,
                          "NonRetryableError": 0, "Stopped": 0})
        self.assertEqual(d["ObjectiveStatusCounters"], {"Succeeded": 3, "Pending": 0, "Failed": 0})
        # botocore turned the epoch seconds into datetimes.
        self.assertIsNotNone(d["CreationTime"].tzinfo)
        best = d["BestTrainingJob"]
        self.assertEqual(best["FinalHyperParameterTuningJobObjectiveMetric"]["MetricName"], "val_loss")
        self.assertEqual(best["TrainingJobStatus"], "Completed")

        paginator = self.sm.get_paginator("list_training_jobs_for_hyper_parameter_tuning_job")
        pages = list(paginator.paginate(HyperParameterTuningJobName="boto-run",
                                        PaginationConfig={"PageSize": 2}))
        self.assertEqual([len(p["TrainingJobSummaries"]) for p in pages], [2, 1])
        names = sorted(s["TrainingJobName"] for p in pages for s in p["TrainingJobSummaries"])
        self.assertEqual(len(set(names)), 3)
        self.assertTrue(all(n.startswith("boto-run-00") for n in names), names)

        job = self.sm.describe_training_job(TrainingJobName=best["TrainingJobName"])
        self.assertEqual(job["TrainingJobStatus"], "Completed")
        self.assertEqual(job["HyperParameters"]["epochs"], "2")
        self.assertIn("val_loss", [m["MetricName"] for m in job["FinalMetricDataList"]])
        # The one botocore waiter of the area works as is.
        self.sm.get_waiter("training_job_completed_or_stopped").wait(
            TrainingJobName=best["TrainingJobName"], WaiterConfig={"Delay": 1, "MaxAttempts": 5})

    def test_boto3_raises_sagemakers_exceptions(self):
        with self.assertRaises(self.sm.exceptions.ResourceNotFound) as caught:
            self.sm.describe_hyper_parameter_tuning_job(HyperParameterTuningJobName="missing")
        self.assertEqual(caught.exception.response["Error"]["Message"],
                         "Amazon SageMaker can't find a tuning job called missing. Type another name.")
        with self.assertRaises(botocore.exceptions.ClientError) as caught:
            self.sm.describe_training_job(TrainingJobName="missing")
        self.assertEqual(caught.exception.response["Error"],
                         {"Code": "ValidationException", "Message": "Requested resource not found."})
        self.sm.create_hyper_parameter_tuning_job(**job_file("boto-twice", budget=1))
        with self.assertRaises(self.sm.exceptions.ResourceInUse):
            self.sm.create_hyper_parameter_tuning_job(**job_file("boto-twice", budget=1))
        # botocore checks no pattern on the client (spec §6): the server's validation answers.
        with self.assertRaises(botocore.exceptions.ClientError) as caught:
            self.sm.create_hyper_parameter_tuning_job(**job_file("boto_bad!"))
        self.assertEqual(caught.exception.response["Error"]["Code"], "ValidationException")
        self.assertTrue(caught.exception.response["Error"]["Message"].startswith(
            "1 validation error detected: Value 'boto_bad!' at 'hyperParameterTuningJobName' "
            "failed to satisfy constraint: Member must satisfy regular expression pattern"),
            caught.exception.response["Error"]["Message"])
        self.wait_for_tuning_job("boto-twice")

    def test_boto3_stops_a_tuning_job(self):
        job = job_file("boto-stop", budget=6, epochs=200)
        job["TrainingJobDefinition"]["StaticHyperParameters"]["sleep_ms"] = "50"
        self.sm.create_hyper_parameter_tuning_job(**job)
        self.sm.stop_hyper_parameter_tuning_job(HyperParameterTuningJobName="boto-stop")
        d = self.wait_for_tuning_job("boto-stop")
        self.assertEqual(d["HyperParameterTuningJobStatus"], "Stopped")
        self.assertEqual(d["TrainingJobStatusCounters"]["Completed"], 0)

    def test_aws_cli_lists_describes_and_reports_errors(self):
        self.sm.create_hyper_parameter_tuning_job(**job_file("cli-run", budget=1))
        self.wait_for_tuning_job("cli-run")
        listed = self.aws("list-hyper-parameter-tuning-jobs", "--name-contains", "cli-run")
        self.assertEqual(listed.returncode, 0, listed.stderr)
        summaries = json.loads(listed.stdout)["HyperParameterTuningJobSummaries"]
        self.assertEqual([s["HyperParameterTuningJobName"] for s in summaries], ["cli-run"])
        self.assertEqual(summaries[0]["HyperParameterTuningJobStatus"], "Completed")
        described = self.aws("describe-hyper-parameter-tuning-job",
                             "--hyper-parameter-tuning-job-name", "cli-run")
        self.assertEqual(described.returncode, 0, described.stderr)
        self.assertEqual(json.loads(described.stdout)["TrainingJobStatusCounters"]["Completed"], 1)
        missing = self.aws("describe-training-job", "--training-job-name", "missing")
        self.assertEqual(missing.returncode, 254)
        self.assertIn("An error occurred (ValidationException) when calling the DescribeTrainingJob "
                      "operation: Requested resource not found.", missing.stderr)

    def test_boto3_and_aws_cli_read_a_training_jobs_log_from_cloudwatch_logs(self):
        self.sm.create_hyper_parameter_tuning_job(**job_file("logs-run", budget=1, epochs=3))
        self.wait_for_tuning_job("logs-run")
        job = self.sm.list_training_jobs_for_hyper_parameter_tuning_job(
            HyperParameterTuningJobName="logs-run")["TrainingJobSummaries"][0]["TrainingJobName"]
        created = self.sm.describe_training_job(TrainingJobName=job)["CreationTime"]
        logs = boto3.client("logs", region_name="us-east-1", endpoint_url=self.amtd.url,
                            aws_access_key_id="test", aws_secret_access_key="test")
        group = "/aws/sagemaker/TrainingJobs"
        streams = logs.describe_log_streams(logGroupName=group, logStreamNamePrefix=job + "/",
                                            orderBy="LogStreamName")["logStreams"]
        stream = "%s/algo-1-%d" % (job, int(created.timestamp()))
        self.assertEqual([s["logStreamName"] for s in streams], [stream])
        events = logs.get_log_events(logGroupName=group, logStreamName=stream,
                                     startFromHead=True)["events"]
        messages = [e["message"] for e in events]
        self.assertTrue(messages[0].startswith("amt-toy-trainer: learning_rate="), messages)
        self.assertEqual([m.split()[0] for m in messages if "val_loss=" in m],
                         ["epoch=1", "epoch=2", "epoch=3"])
        self.assertTrue(messages[-1].startswith("training complete after 3 epochs"), messages)
        self.assertEqual(sorted(e["timestamp"] for e in events), [e["timestamp"] for e in events])

        cli = self.aws("get-log-events", "--log-group-name", group, "--log-stream-name", stream,
                       "--start-from-head", service="logs")
        self.assertEqual(cli.returncode, 0, cli.stderr)
        self.assertEqual([e["message"] for e in json.loads(cli.stdout)["events"]], messages)
        with self.assertRaises(logs.exceptions.ResourceNotFoundException):
            logs.get_log_events(logGroupName=group, logStreamName="missing/algo-1-1")


class AwsEndpointCompatTest(unittest.TestCase):
    """STS, CloudWatch and CloudWatch Logs reads of a real training job at amtd's one endpoint.

    Run twice by CTest: with Debian's boto3 1.26 (botocore 1.29 speaks CloudWatch's query
    protocol) and with the SDK's boto3 1.43 (CloudWatch over Smithy RPC v2 CBOR)."""

    GROUP = "/aws/sagemaker/TrainingJobs"
    NAMESPACE = "/aws/sagemaker/TrainingJobs"

    @classmethod
    def setUpClass(cls):
        cls.amtd = start_amtd(cls, "amt-compat-aws-")
        cls.clients = {}
        cls.sm = cls.client("sagemaker")
        cls.sm.create_hyper_parameter_tuning_job(**job_file("cw-run", budget=1, epochs=3))
        deadline = time.monotonic() + 120
        while cls.sm.describe_hyper_parameter_tuning_job(HyperParameterTuningJobName="cw-run")[
                "HyperParameterTuningJobStatus"] in ("InProgress", "Stopping"):
            assert time.monotonic() < deadline, "tuning job cw-run did not end"
            time.sleep(0.05)  # no botocore waiter for tuning jobs: poll as users do
        cls.job = cls.sm.list_training_jobs_for_hyper_parameter_tuning_job(
            HyperParameterTuningJobName="cw-run")["TrainingJobSummaries"][0]["TrainingJobName"]
        described = cls.sm.describe_training_job(TrainingJobName=cls.job)
        cls.start = described["CreationTime"] - datetime.timedelta(minutes=1)
        cls.end = described["TrainingEndTime"] + datetime.timedelta(minutes=1)
        cls.stream = "%s/algo-1-%d" % (cls.job, int(described["CreationTime"].timestamp()))
        # The val_loss values the trainer printed, from its log: what the metrics must sum to.
        events = cls.client("logs").get_log_events(logGroupName=cls.GROUP, logStreamName=cls.stream,
                                                   startFromHead=True)["events"]
        cls.val_losses = [float(m.group(1)) for e in events
                          for m in [re.search(r"val_loss=([0-9.eE+-]+)", e["message"])] if m]
        assert len(cls.val_losses) == 3, events

    @classmethod
    def client(cls, service):
        return boto3.client(service, region_name="us-east-1", endpoint_url=cls.amtd.url,
                            aws_access_key_id="test", aws_secret_access_key="test")

    def cloudwatch(self):
        cw = self.client("cloudwatch")
        old_botocore = tuple(int(p) for p in botocore.__version__.split(".")[:2]) < (1, 36)
        self.assertEqual(cw.meta.service_model.protocol,
                         "query" if old_botocore else "smithy-rpc-v2-cbor")
        return cw

    def test_sts_get_caller_identity(self):
        identity = self.client("sts").get_caller_identity()
        self.assertEqual({k: identity[k] for k in ("Account", "Arn")},
                         {"Account": "000000000000",
                          "Arn": "arn:aws:sts::000000000000:assumed-role/AmtLocalExecutionRole/"
                                 "amt-local"})
        self.assertRegex(identity["UserId"], r"^AROA[A-Z2-7]{17}:amt-local$")
        self.assertRegex(identity["ResponseMetadata"]["RequestId"], r"^[0-9a-f-]{36}$")

    def test_execution_role_as_the_sdk_finds_it(self):
        # What sagemaker.Session.get_caller_identity_arn() does after STS (session.py, v2.230):
        # the assumed role's ARN turned into the role's, then IAM's GetRole for its path.
        assumed = self.client("sts").get_caller_identity()["Arn"]
        role = re.sub(r"^(.+)sts::(\d+):assumed-role/(.+?)/.*$", r"\1iam::\2:role/\3", assumed)
        self.assertEqual(role, "arn:aws:iam::000000000000:role/AmtLocalExecutionRole")
        got = self.client("iam").get_role(RoleName=role[role.rfind("/") + 1:])["Role"]
        self.assertEqual(got["Arn"], role)
        self.assertEqual(got["Path"], "/")
        self.assertEqual(got["AssumeRolePolicyDocument"]["Statement"][0]["Principal"],
                         {"Service": "sagemaker.amazonaws.com"})  # botocore decoded it
        with self.assertRaises(botocore.exceptions.ClientError) as caught:
            self.client("iam").get_role(RoleName="SomeoneElse")
        self.assertEqual(caught.exception.response["Error"]["Code"], "NoSuchEntity")
        self.assertEqual(caught.exception.response["ResponseMetadata"]["HTTPStatusCode"], 404)

    def test_a_query_service_amtd_does_not_serve_answers_in_xml(self):
        with self.assertRaises(botocore.exceptions.ClientError) as caught:
            self.client("sns").list_topics()
        self.assertEqual(caught.exception.response["Error"]["Code"], "InvalidAction")
        self.assertIn("amt-local does not serve ListTopics of sns",
                      caught.exception.response["Error"]["Message"])

    def test_aws_cli_sts_get_caller_identity(self):
        cli = subprocess.run([AWS, "--endpoint-url", self.amtd.url, "--output", "json", "sts",
                              "get-caller-identity"],
                             env=dict(os.environ, **CREDENTIALS), capture_output=True, text=True)
        self.assertEqual(cli.returncode, 0, cli.stderr)
        self.assertEqual(json.loads(cli.stdout),
                         {"UserId": self.client("sts").get_caller_identity()["UserId"],
                          "Account": "000000000000",
                          "Arn": "arn:aws:sts::000000000000:assumed-role/AmtLocalExecutionRole/"
                                 "amt-local"})

    def test_cloudwatch_get_metric_statistics(self):
        reply = self.cloudwatch().get_metric_statistics(
            Namespace=self.NAMESPACE, MetricName="val_loss",
            Dimensions=[{"Name": "TrainingJobName", "Value": self.job}],
            StartTime=self.start, EndTime=self.end, Period=60,
            Statistics=["Sum", "SampleCount", "Maximum"])
        self.assertEqual(reply["Label"], "val_loss")
        points = reply["Datapoints"]
        self.assertEqual(sum(p["SampleCount"] for p in points), 3.0)
        self.assertAlmostEqual(sum(p["Sum"] for p in points), sum(self.val_losses), places=5)
        self.assertAlmostEqual(max(p["Maximum"] for p in points), max(self.val_losses), places=5)
        self.assertTrue(all(p["Unit"] == "None" and p["Timestamp"].tzinfo for p in points))

    def test_cloudwatch_list_metrics(self):
        cw = self.cloudwatch()
        listed = cw.list_metrics(Namespace=self.NAMESPACE,
                                 Dimensions=[{"Name": "TrainingJobName", "Value": self.job}])
        self.assertIn({"Namespace": self.NAMESPACE, "MetricName": "val_loss",
                       "Dimensions": [{"Name": "TrainingJobName", "Value": self.job}]},
                      listed["Metrics"])
        self.assertNotIn("NextToken", listed)
        pages = list(cw.get_paginator("list_metrics").paginate(MetricName="val_loss"))
        hosts = [m["Dimensions"] for p in pages for m in p["Metrics"]
                 if m["Dimensions"][0]["Name"] == "Host"]
        self.assertEqual(hosts, [[{"Name": "Host", "Value": self.job + "/algo-1"}]])

    def test_cloudwatch_get_metric_data(self):
        cw = self.cloudwatch()
        metric = {"Namespace": self.NAMESPACE, "MetricName": "val_loss",
                  "Dimensions": [{"Name": "Host", "Value": self.job + "/algo-1"}]}
        reply = cw.get_metric_data(
            MetricDataQueries=[
                {"Id": "total", "MetricStat": {"Metric": metric, "Period": 60, "Stat": "Sum"}},
                {"Id": "n", "MetricStat": {"Metric": metric, "Period": 60, "Stat": "SampleCount"},
                 "Label": "samples"}],
            StartTime=self.start, EndTime=self.end, ScanBy="TimestampAscending")
        results = {r["Id"]: r for r in reply["MetricDataResults"]}
        self.assertEqual(sorted(results), ["n", "total"])
        self.assertEqual(results["n"]["Label"], "samples")
        self.assertEqual(results["total"]["Label"], "val_loss")
        self.assertEqual(sum(results["n"]["Values"]), 3.0)
        self.assertAlmostEqual(sum(results["total"]["Values"]), sum(self.val_losses), places=5)
        stamps = results["total"]["Timestamps"]
        self.assertEqual(stamps, sorted(stamps))
        self.assertTrue(all(t.tzinfo for t in stamps))
        self.assertEqual({r["StatusCode"] for r in results.values()}, {"Complete"})
        with self.assertRaises(botocore.exceptions.ClientError) as caught:
            cw.get_metric_data(MetricDataQueries=[{"Id": "e", "Expression": "SUM(METRICS())"}],
                               StartTime=self.start, EndTime=self.end)
        self.assertEqual(caught.exception.response["Error"]["Code"], "InvalidParameterValue")

    def test_logs_filter_log_events(self):
        logs = self.client("logs")
        found = logs.filter_log_events(logGroupName=self.GROUP, logStreamNamePrefix=self.job + "/",
                                       filterPattern='"val_loss="')
        self.assertEqual(len(found["events"]), 3)
        self.assertTrue(all(e["logStreamName"] == self.stream and "val_loss=" in e["message"]
                            for e in found["events"]))
        self.assertNotIn("nextToken", found)
        one = logs.filter_log_events(logGroupName=self.GROUP, logStreamNames=[self.stream],
                                     filterPattern="epoch=2 val_loss")["events"]
        self.assertEqual([e["message"].split()[0] for e in one], ["epoch=2"])
        pages = list(logs.get_paginator("filter_log_events").paginate(
            logGroupName=self.GROUP, filterPattern="val_loss", PaginationConfig={"PageSize": 1}))
        self.assertEqual([e["eventId"] for p in pages for e in p["events"]],
                         [e["eventId"] for e in found["events"]])
        with self.assertRaises(logs.exceptions.InvalidParameterException):
            logs.filter_log_events(logGroupName=self.GROUP, filterPattern="{ $.level = 1 }")


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--source-dir", required=True)
    ARGS, rest = parser.parse_known_args()
    ARGS.bin_dir = os.path.abspath(ARGS.bin_dir)
    ARGS.source_dir = os.path.abspath(ARGS.source_dir)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
