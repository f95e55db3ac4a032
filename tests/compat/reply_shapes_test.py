#!/usr/bin/env python3
"""Every reply of every SageMaker operation amtd serves, checked against botocore's output shape.

Run by CTest (tests/compat/CMakeLists.txt) with a python whose botocore has the SageMaker model
(the SDK's botocore 1.43 under pyenv when present, else Debian's):

    python3 tests/compat/reply_shapes_test.py --bin-dir build/bin --source-dir .

Starts build/bin/amtd on free ports, runs training and tuning jobs of every kind the examples
have (Random, Bayesian with Auto early stopping, Hyperband, Grid, warm start, spot with
checkpoints, a failing trainer), sends every served operation as raw AWS JSON 1.1 over HTTP, and
validates each raw reply body against the operation's output shape in botocore's service model:
no member the shape does not define, every required member present, types, enums, string and
list lengths, patterns and numeric ranges. Raw bodies, not boto3's parsed results: botocore's parser
accepts (and hides) extra members and wrong types.
"""

import argparse
import json
import os
import re
import sys
import time
import unittest
import urllib.request

import botocore
import botocore.session

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python",
                                "src"))
import amt_local  # noqa: E402

ARGS = None


def validate(value, shape, path="$"):
    """The list of problems of `value` against botocore `shape` (empty when it conforms)."""
    kind = shape.type_name
    meta = shape.metadata
    errors = []
    if kind == "structure":
        if not isinstance(value, dict):
            return ["%s: %s expected an object, got %r" % (path, shape.name, value)]
        for key, member in value.items():
            if key not in shape.members:
                errors.append("%s.%s: not a member of %s" % (path, key, shape.name))
            else:
                errors += validate(member, shape.members[key], path + "." + key)
        for key in shape.required_members:
            if key not in value:
                errors.append("%s.%s: required member of %s missing" % (path, key, shape.name))
        return errors
    if kind == "list":
        if not isinstance(value, list):
            return ["%s: %s expected a list, got %r" % (path, shape.name, value)]
        errors += bounds(len(value), meta, path, "length")
        for i, item in enumerate(value):
            errors += validate(item, shape.member, "%s[%d]" % (path, i))
        return errors
    if kind == "map":
        if not isinstance(value, dict):
            return ["%s: %s expected a map, got %r" % (path, shape.name, value)]
        errors += bounds(len(value), meta, path, "entries")
        for key, item in value.items():
            errors += validate(key, shape.key, "%s{%s}" % (path, key))
            errors += validate(item, shape.value, "%s[%r]" % (path, key))
        return errors
    if kind == "string":
        if not isinstance(value, str):
            return ["%s: %s expected a string, got %r" % (path, shape.name, value)]
        if shape.enum and value not in shape.enum:
            errors.append("%s: %r is not one of %s's %s" % (path, value, shape.name, shape.enum))
        pattern = compiled_pattern(meta.get("pattern"))
        if pattern is not None and pattern.fullmatch(value) is None:
            errors.append("%s: %r does not match %s's pattern %s" % (
                path, value, shape.name, meta["pattern"]))
        return errors + bounds(len(value), meta, path, "length")
    if kind in ("integer", "long"):
        if not isinstance(value, int) or isinstance(value, bool):
            return ["%s: %s expected an integer, got %r" % (path, shape.name, value)]
        return bounds(value, meta, path, "value")
    if kind in ("float", "double"):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return ["%s: %s expected a number, got %r" % (path, shape.name, value)]
        return bounds(value, meta, path, "value")
    if kind == "boolean":
        return [] if isinstance(value, bool) else ["%s: expected a boolean, got %r" % (path, value)]
    if kind == "timestamp":
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return ["%s: expected epoch seconds, got %r" % (path, value)]
        return []
    return ["%s: unhandled shape type %s" % (path, kind)]


PATTERNS = {}


def compiled_pattern(pattern):
    """The model's pattern as a Python regex, matched against the whole value as SageMaker's own
    validation does (its messages anchor them: "pattern: ^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}");
    None when there is none, or it uses what Python's re lacks (Java's
    \\p{...} classes): those are counted in PATTERNS as unchecked."""
    if pattern is None:
        return None
    if pattern not in PATTERNS:
        try:
            PATTERNS[pattern] = re.compile(pattern)
        except re.error:
            PATTERNS[pattern] = None
    return PATTERNS[pattern]


def bounds(number, meta, path, what):
    errors = []
    if "min" in meta and number < meta["min"]:
        errors.append("%s: %s %s under the minimum %s" % (path, what, number, meta["min"]))
    if "max" in meta and number > meta["max"]:
        errors.append("%s: %s %s over the maximum %s" % (path, what, number, meta["max"]))
    return errors


def raw_call(url, operation, body):
    """(status, parsed reply) of one raw AWS JSON 1.1 request to amtd at `url`."""
    request = urllib.request.Request(
        url + "/", data=json.dumps(body).encode(), method="POST",
        headers={"X-Amz-Target": "SageMaker." + operation,
                 "Content-Type": "application/x-amz-json-1.1"})
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def example(name):
    with open(os.path.join(ARGS.source_dir, "examples", name)) as f:
        return json.load(f)


class ReplyShapesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = botocore.session.get_session().get_service_model("sagemaker")
        cls.amtd = amt_local.Amtd(
            ARGS.bin_dir, "--time-scale", "0.01", "--spot-seed", "7", slots=4,
            image_map=os.path.join(ARGS.source_dir, "examples", "image-map.json"),
            prefix="amt-reply-shapes-")
        cls.addClassCleanup(cls.amtd.close)
        cls.checked = {}

    @classmethod
    def tearDownClass(cls):
        cls.amtd.close()
        print("replies checked against botocore %s's output shapes: %s" % (
            botocore.__version__, ", ".join("%s x%d" % kv for kv in sorted(cls.checked.items()))))
        print("string patterns checked: %d; not checkable with Python's re: %s" % (
            sum(1 for p in PATTERNS.values() if p is not None),
            sorted(k for k, p in PATTERNS.items() if p is None)))

    def raw(self, operation, body):
        return raw_call(self.amtd.url, operation, body)

    def call(self, operation, body):
        status, reply = self.raw(operation, body)
        self.assertEqual(status, 200, "%s: %s" % (operation, reply))
        shape = self.model.operation_model(operation).output_shape
        # An operation without an output shape (StopTrainingJob) answers an empty object.
        problems = validate(reply, shape) if shape is not None else (
            [] if reply == {} else ["a reply for an operation with no output: %r" % reply])
        self.assertEqual(problems, [], "%s reply: %s" % (operation, json.dumps(reply)))
        self.checked[operation] = self.checked.get(operation, 0) + 1
        return reply

    def wait_tuning(self, name, timeout=240):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            d = self.call("DescribeHyperParameterTuningJob", {"HyperParameterTuningJobName": name})
            if d["HyperParameterTuningJobStatus"] in ("Completed", "Failed", "Stopped"):
                return d
            time.sleep(0.2)
        self.fail("%s did not end" % name)

    def wait_training(self, name, timeout=240):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            d = self.call("DescribeTrainingJob", {"TrainingJobName": name})
            if d["TrainingJobStatus"] in ("Completed", "Failed", "Stopped"):
                return d
            time.sleep(0.2)
        self.fail("%s did not end" % name)

    def check_tuning_job(self, job):
        name = job["HyperParameterTuningJobName"]
        self.call("CreateHyperParameterTuningJob", job)
        self.call("DescribeHyperParameterTuningJob", {"HyperParameterTuningJobName": name})
        final = self.wait_tuning(name)
        for sort in ("Name", "CreationTime", "Status", "FinalObjectiveMetricValue"):
            self.call("ListTrainingJobsForHyperParameterTuningJob",
                      {"HyperParameterTuningJobName": name, "SortBy": sort, "MaxResults": 2})
        jobs = self.call("ListTrainingJobsForHyperParameterTuningJob",
                         {"HyperParameterTuningJobName": name})["TrainingJobSummaries"]
        for summary in jobs[:2]:
            self.call("DescribeTrainingJob", {"TrainingJobName": summary["TrainingJobName"]})
        return final

    def test_the_validator_finds_each_kind_of_problem(self):
        shape = self.model.operation_model("DescribeTrainingJob").output_shape
        reply = {"TrainingJobName": "bad_name!", "TrainingJobArn": "not-an-arn",
                 "TrainingJobStatus": "Running", "SecondaryStatus": "Completed",
                 "AlgorithmSpecification": {"TrainingInputMode": "File"},
                 "ResourceConfig": {"VolumeSizeInGB": 1, "InstanceCount": "1"},
                 "StoppingCondition": {}, "CreationTime": 1.0, "Surprise": 1}
        problems = "\n".join(validate(reply, shape))
        for expected in ("$.Surprise: not a member of DescribeTrainingJobResponse",
                         "$.TrainingJobName: 'bad_name!' does not match",
                         "$.TrainingJobArn: 'not-an-arn' does not match",
                         "$.TrainingJobStatus: 'Running' is not one of",
                         "$.ResourceConfig.InstanceCount: TrainingInstanceCount expected an "
                         "integer", "$.ModelArtifacts: required member of "
                         "DescribeTrainingJobResponse missing"):
            self.assertIn(expected, problems)

    def test_every_kind_of_tuning_job(self):
        for file, name in (("random-tuning.json", "shape-random"),
                           ("auto-early-stopping.json", "shape-auto"),
                           ("bayesian-tuning.json", "shape-bayes"),
                           ("hyperband.json", "shape-hyperband"),
                           ("grid-tuning.json", "shape-grid"),
                           ("multi-algorithm.json", "shape-multi"),
                           ("autotune.json", "shape-autotune")):
            job = example(file)
            job["HyperParameterTuningJobName"] = name
            limits = job["HyperParameterTuningJobConfig"].setdefault("ResourceLimits", {})
            if "MaxNumberOfTrainingJobs" in limits:
                limits["MaxNumberOfTrainingJobs"] = min(limits["MaxNumberOfTrainingJobs"], 4)
            self.check_tuning_job(job)
        warm = example("warm-start.json")
        warm["HyperParameterTuningJobName"] = "shape-warm"
        warm["WarmStartConfig"]["ParentHyperParameterTuningJobs"] = [
            {"HyperParameterTuningJobName": "shape-random"}]
        warm["HyperParameterTuningJobConfig"]["ResourceLimits"]["MaxNumberOfTrainingJobs"] = 2
        self.check_tuning_job(warm)
        self.call("ListHyperParameterTuningJobs", {})
        self.call("ListHyperParameterTuningJobs", {"MaxResults": 2, "SortBy": "CreationTime"})

    def test_tags_of_a_tuning_job_and_of_the_jobs_it_launches(self):
        job = example("random-tuning.json")
        job["HyperParameterTuningJobName"] = "shape-tags"
        job["HyperParameterTuningJobConfig"]["ResourceLimits"]["MaxNumberOfTrainingJobs"] = 1
        job["Tags"] = [{"Key": "team", "Value": "ml"}]
        arn = self.call("CreateHyperParameterTuningJob", job)["HyperParameterTuningJobArn"]
        self.wait_tuning("shape-tags")
        self.assertEqual(self.call("ListTags", {"ResourceArn": arn})["Tags"],
                         [{"Key": "team", "Value": "ml"}])
        trial = self.call("ListTrainingJobsForHyperParameterTuningJob",
                          {"HyperParameterTuningJobName": "shape-tags"})["TrainingJobSummaries"][0]
        # A tuning job's tags reach the training jobs it launches.
        self.assertEqual(self.call("ListTags", {"ResourceArn": trial["TrainingJobArn"]})["Tags"],
                         [{"Key": "team", "Value": "ml"}])
        self.call("AddTags", {"ResourceArn": arn, "Tags": [{"Key": "cost", "Value": "1"}]})
        self.call("DeleteTags", {"ResourceArn": arn, "TagKeys": ["team"]})
        self.assertEqual(self.call("ListTags", {"ResourceArn": arn, "MaxResults": 50})["Tags"],
                         [{"Key": "cost", "Value": "1"}])
        self.call("DeleteTags", {"ResourceArn": arn, "TagKeys": ["cost"]})
        self.assertEqual(self.call("ListTags", {"ResourceArn": arn})["Tags"], [])

    def test_a_stopped_tuning_job(self):
        job = example("random-tuning.json")
        job["HyperParameterTuningJobName"] = "shape-stopped-tuning"
        job["TrainingJobDefinition"]["StaticHyperParameters"]["epochs"] = "1000"
        self.call("CreateHyperParameterTuningJob", job)
        self.call("StopHyperParameterTuningJob",
                  {"HyperParameterTuningJobName": "shape-stopped-tuning"})
        self.assertEqual(self.wait_tuning("shape-stopped-tuning")["HyperParameterTuningJobStatus"],
                         "Stopped")

    def test_training_jobs_completed_spot_failed_and_stopped(self):
        plain = example("training-job.json")
        plain["TrainingJobName"] = "shape-plain"
        # The members the SageMaker SDK sends by default, and the other Debugger, Profiler,
        # TensorBoard and Experiments ones: echoed in Describe, with rule statuses.
        plain["DebugHookConfig"] = {
            "S3OutputPath": "s3://amt-local-examples/debug",
            "CollectionConfigurations": [
                {"CollectionName": "losses", "CollectionParameters": {"save_interval": "5"}}]}
        plain["DebugRuleConfigurations"] = [{
            "RuleConfigurationName": "LossNotDecreasing", "RuleEvaluatorImage": "rules:latest",
            "RuleParameters": {"rule_to_invoke": "LossNotDecreasing"}}]
        plain["ProfilerConfig"] = {"S3OutputPath": "s3://amt-local-examples/profiler",
                                   "ProfilingIntervalInMilliseconds": 500}
        plain["ProfilerRuleConfigurations"] = [{
            "RuleConfigurationName": "ProfilerReport", "RuleEvaluatorImage": "rules:latest"}]
        plain["TensorBoardOutputConfig"] = {"S3OutputPath": "s3://amt-local-examples/tb"}
        plain["ExperimentConfig"] = {"ExperimentName": "shapes", "TrialName": "plain"}
        plain["RemoteDebugConfig"] = {"EnableRemoteDebug": False}
        plain["InfraCheckConfig"] = {"EnableInfraCheck": False}
        self.call("CreateTrainingJob", plain)
        described = self.wait_training("shape-plain")
        for member in ("DebugHookConfig", "DebugRuleConfigurations", "ProfilerConfig",
                       "ProfilerRuleConfigurations", "TensorBoardOutputConfig",
                       "ExperimentConfig", "RemoteDebugConfig", "InfraCheckConfig"):
            self.assertEqual(described[member], plain[member], member)
        self.assertEqual(described["ProfilingStatus"], "Enabled")
        self.assertEqual(
            [(s["RuleConfigurationName"], s["RuleEvaluationStatus"])
             for s in described["DebugRuleEvaluationStatuses"]
             + described["ProfilerRuleEvaluationStatuses"]],
            [("LossNotDecreasing", "Stopped"), ("ProfilerReport", "Stopped")])
        spot = example("spot-training.json")
        spot["TrainingJobName"] = "shape-spot"
        self.call("CreateTrainingJob", spot)
        self.wait_training("shape-spot")
        failing = example("training-job.json")
        failing["TrainingJobName"] = "shape-failing"
        failing["AlgorithmSpecification"]["TrainingImage"] = "amt-local/failing-trainer:latest"
        self.call("CreateTrainingJob", failing)
        self.wait_training("shape-failing")
        stopped = example("training-job.json")
        stopped["TrainingJobName"] = "shape-stopped"
        stopped["HyperParameters"] = dict(stopped.get("HyperParameters", {}), epochs="1000")
        self.call("CreateTrainingJob", stopped)
        self.call("StopTrainingJob", {"TrainingJobName": "shape-stopped"})
        self.wait_training("shape-stopped")
        self.call("ListTrainingJobs", {})
        self.call("ListTrainingJobs", {"MaxResults": 2, "StatusEquals": "Completed"})

    def test_delete_and_update(self):
        # UpdateTrainingJob of a running job, DeleteTrainingJob and DeleteHyperParameterTuningJob
        # once they ended; each refused, with SageMaker's error names, while the job runs.
        running = example("training-job.json")
        running["TrainingJobName"] = "shape-update"
        running["HyperParameters"] = dict(running.get("HyperParameters", {}), epochs="1000",
                                          sleep_ms="10")
        self.call("CreateTrainingJob", running)
        deadline = time.monotonic() + 60
        while self.call("DescribeTrainingJob", {"TrainingJobName": "shape-update"})[
                "SecondaryStatus"] != "Training" and time.monotonic() < deadline:
            time.sleep(0.1)
        update = self.call("UpdateTrainingJob", {
            "TrainingJobName": "shape-update",
            "ProfilerConfig": {"S3OutputPath": "s3://amt-local-examples/profiler"},
            "ProfilerRuleConfigurations": [{"RuleConfigurationName": "ProfilerReport",
                                            "RuleEvaluatorImage": "rules:latest"}],
            "ResourceConfig": {"KeepAlivePeriodInSeconds": 60}})
        self.assertTrue(update["TrainingJobArn"].endswith(":training-job/shape-update"), update)
        described = self.call("DescribeTrainingJob", {"TrainingJobName": "shape-update"})
        self.assertEqual(described["ResourceConfig"]["KeepAlivePeriodInSeconds"], 60)
        self.assertEqual(described["ProfilingStatus"], "Enabled")
        status, error = self.raw("DeleteTrainingJob", {"TrainingJobName": "shape-update"})
        self.assertEqual((status, error["__type"]), (400, "ResourceInUse"), error)
        status, error = self.raw("UpdateTrainingJob", {
            "TrainingJobName": "shape-update", "ResourceConfig": {"KeepAlivePeriodInSeconds": -1}})
        self.assertEqual((status, error["__type"]), (400, "ValidationException"), error)
        self.call("StopTrainingJob", {"TrainingJobName": "shape-update"})
        self.wait_training("shape-update")
        self.call("DeleteTrainingJob", {"TrainingJobName": "shape-update"})
        status, error = self.raw("DescribeTrainingJob", {"TrainingJobName": "shape-update"})
        self.assertEqual((status, error["__type"]), (400, "ValidationException"), error)

        job = example("random-tuning.json")
        job["HyperParameterTuningJobName"] = "shape-delete"
        job["HyperParameterTuningJobConfig"]["ResourceLimits"]["MaxNumberOfTrainingJobs"] = 1
        self.call("CreateHyperParameterTuningJob", job)
        status, error = self.raw("DeleteHyperParameterTuningJob",
                                       {"HyperParameterTuningJobName": "shape-delete"})
        self.assertEqual((status, error["__type"]), (400, "ResourceInUse"), error)
        self.wait_tuning("shape-delete")
        trial = self.call("ListTrainingJobsForHyperParameterTuningJob", {
            "HyperParameterTuningJobName": "shape-delete"})["TrainingJobSummaries"][0]
        self.call("DeleteHyperParameterTuningJob", {"HyperParameterTuningJobName": "shape-delete"})
        status, error = self.raw("DescribeHyperParameterTuningJob",
                                       {"HyperParameterTuningJobName": "shape-delete"})
        self.assertEqual((status, error["__type"]), (400, "ResourceNotFound"), error)
        # Its training job outlives it.
        self.call("DescribeTrainingJob", {"TrainingJobName": trial["TrainingJobName"]})


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--source-dir", required=True)
    ARGS, rest = p.parse_known_args()
    print("botocore %s from %s" % (botocore.__version__, os.path.dirname(botocore.__file__)))
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
