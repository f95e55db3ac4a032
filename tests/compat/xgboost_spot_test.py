#!/usr/bin/env python3
"""The built-in XGBoost algorithm on managed spot, end to end through amtd (issue 33): a spot job
is interrupted mid-training, restarts, resumes from the newest checkpoint round and ends with the
same model as an uninterrupted run of the same job.

Run by CTest (tests/compat/CMakeLists.txt, compat.xgboost_spot) with the pyenv python (boto3
1.43); the jobs run with /usr/bin/python3's xgboost (Debian's python3-xgboost 1.7), which also
loads the two models to compare them:

    python3 tests/compat/xgboost_spot_test.py --bin-dir build/bin --source-dir .

One amtd (--spot-interrupt-after 5 --spot-max-interruptions 1, --time-scale 1: every spot job's
first attempt gets SIGTERM 5 s into its training, the second runs to its end) runs two jobs at
once with boto3's CreateTrainingJob only: the XGBoost image URI the SDK names
(image_uris.retrieve("xgboost", "us-east-1", "1.7-1")), File mode, CSV train and validation
channels (label first, no header) uploaded to amtd's S3, 60 rounds of binary:logistic with a
fixed seed, each with a CheckpointConfig; one with EnableManagedSpotTraining, the other without.
The data (50,000 rows x 20 features, max_depth 8, nthread 1) makes a round take about 0.25 s on
an idle 2-core machine (60 rounds: about 15 s after a second or two of start-up), so the
interruption lands some rounds in and well before the end; on a loaded machine start-up and rounds
only get slower, and a SIGTERM that comes before the first round still lets the algorithm finish
round 0 and checkpoint it (it stops after the round under way), so the resume is from a round
N > 0 whatever the timing. The assertions are on what amtd recorded, never on times: the spot
job's status transitions (Interrupted, then a restart), the checkpoints in its S3 prefix, its
CloudWatch log (the first attempt printed rounds 0..N-1, the second says it loaded checkpoint N-1
and resumes at N, its eval lines go on from [N], and the whole job's eval lines are the
uninterrupted job's, no round missing or printed twice), and its model.tar.gz's xgboost-model,
byte for byte and by its predictions on the validation data, against the uninterrupted job's.
"""

import argparse
import io
import json
import os
import random
import re
import subprocess
import sys
import tarfile
import time
import unittest

import boto3

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python",
                                "src"))
import amt_local  # noqa: E402

ARGS = None
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
BUCKET = "xgboost-spot"
# What the SDK's image_uris.retrieve("xgboost", "us-east-1", "1.7-1") returns.
XGBOOST_IMAGE = "683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-xgboost:1.7-1"
NUM_ROUND = 60
HYPERPARAMETERS = {"num_round": str(NUM_ROUND), "objective": "binary:logistic",
                   "max_depth": "8", "eta": "0.1", "seed": "7", "nthread": "1",
                   "eval_metric": "auc"}
SPOT_JOB = "xgb-spot"
REFERENCE_JOB = "xgb-uninterrupted"
LOG_GROUP = "/aws/sagemaker/TrainingJobs"
# An eval line as CloudWatch shows it: "[N]#011train-auc:...#011validation-auc:..." (the tab as
# #011, as on SageMaker).
EVAL_LINE = re.compile(r"^\[(\d+)\](?:#011|\t)")
PYTHON_WITH_XGBOOST = "/usr/bin/python3"

# Run by /usr/bin/python3: both models' predictions on the validation CSV, as JSON.
COMPARE_MODELS = r"""
import json, sys, warnings
import numpy, xgboost
warnings.simplefilter("ignore")
data = numpy.loadtxt(sys.argv[3], delimiter=",", ndmin=2)
matrix = xgboost.DMatrix(data[:, 1:], label=data[:, 0])
out = {}
for name, path in (("spot", sys.argv[1]), ("reference", sys.argv[2])):
    booster = xgboost.Booster(model_file=path)
    out[name] = {"rounds": booster.num_boosted_rounds(),
                 "predictions": [float(p) for p in booster.predict(matrix)]}
print(json.dumps(out))
"""


def write_csv(path, rows, features, rng):
    # Label first, no header; noisy labels, so that every tree grows to max_depth.
    with open(path, "w") as f:
        for _ in range(rows):
            x = [rng.random() for _ in range(features)]
            label = 1 if x[0] + 0.3 * x[1] + rng.gauss(0, 0.15) > 0.65 else 0
            f.write("%d,%s\n" % (label, ",".join("%.4f" % v for v in x)))


def training_job(name, spot):
    job = {"TrainingJobName": name, "HyperParameters": dict(HYPERPARAMETERS),
           "AlgorithmSpecification": {"TrainingImage": XGBOOST_IMAGE,
                                      "TrainingInputMode": "File"},
           "RoleArn": ROLE,
           "InputDataConfig": [
               {"ChannelName": channel, "ContentType": "text/csv",
                "DataSource": {"S3DataSource": {
                    "S3DataType": "S3Prefix", "S3Uri": "s3://%s/data/%s" % (BUCKET, channel),
                    "S3DataDistributionType": "FullyReplicated"}}}
               for channel in ("train", "validation")],
           "OutputDataConfig": {"S3OutputPath": "s3://%s/output" % BUCKET},
           "ResourceConfig": {"InstanceType": "ml.m5.xlarge", "InstanceCount": 1,
                              "VolumeSizeInGB": 10},
           "CheckpointConfig": {"S3Uri": "s3://%s/checkpoints/%s" % (BUCKET, name)},
           "StoppingCondition": {"MaxRuntimeInSeconds": 3600}}
    if spot:
        job["EnableManagedSpotTraining"] = True
        job["StoppingCondition"]["MaxWaitTimeInSeconds"] = 7200
    return job


class XgboostSpotTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.started = time.monotonic()
        cls.amtd = amt_local.Amtd(
            ARGS.bin_dir, "--python", "xgboost=" + PYTHON_WITH_XGBOOST, "--time-scale", "1",
            "--spot-interrupt-after", "5", "--spot-max-interruptions", "1", "--spot-seed", "1",
            slots=2, image_map=os.path.join(ARGS.source_dir, "examples", "image-map.json"),
            prefix="amt-xgboost-spot-")
        cls.addClassCleanup(cls.amtd.close)  # run even when setUpClass fails
        cls.work = cls.amtd.work  # the data dir's parent, for the test's own files too
        cls.run_both_jobs()

    @classmethod
    def run_both_jobs(cls):
        kwargs = dict(region_name="us-east-1", endpoint_url=cls.amtd.url,
                      aws_access_key_id="test", aws_secret_access_key="test")
        cls.sm = boto3.client("sagemaker", **kwargs)
        cls.s3 = boto3.client("s3", **kwargs)
        cls.logs = boto3.client("logs", **kwargs)
        cls.s3.create_bucket(Bucket=BUCKET)
        rng = random.Random(20261205)
        cls.validation_csv = os.path.join(cls.work, "validation.csv")
        for channel, rows, path in (
                ("train", 50000, os.path.join(cls.work, "train.csv")),
                ("validation", 5000, cls.validation_csv)):
            write_csv(path, rows, 20, rng)
            cls.s3.upload_file(path, BUCKET, "data/%s/%s.csv" % (channel, channel))
        # Both at once (two slots): the interrupted run and the one it must end like.
        cls.sm.create_training_job(**training_job(SPOT_JOB, spot=True))
        cls.sm.create_training_job(**training_job(REFERENCE_JOB, spot=False))
        cls.described = {name: cls.wait_training(name) for name in (SPOT_JOB, REFERENCE_JOB)}

    @classmethod
    def tearDownClass(cls):
        cls.amtd.close()
        print("xgboost spot run: %.1f s" % (time.monotonic() - cls.started))

    @classmethod
    def wait_training(cls, name, timeout=240):
        deadline = time.monotonic() + timeout
        while True:
            d = cls.sm.describe_training_job(TrainingJobName=name)
            if d["TrainingJobStatus"] in ("Completed", "Failed", "Stopped"):
                return d
            if time.monotonic() > deadline:
                raise AssertionError("%s did not end: %s" % (name, d["SecondaryStatus"]))
            time.sleep(0.2)

    def log_lines(self, job_name):
        streams = self.logs.describe_log_streams(logGroupName=LOG_GROUP,
                                                 logStreamNamePrefix=job_name)["logStreams"]
        self.assertEqual(len(streams), 1, streams)  # every attempt writes to the host's stream
        lines, token = [], None
        while True:
            kwargs = dict(logGroupName=LOG_GROUP, logStreamName=streams[0]["logStreamName"],
                          startFromHead=True)
            if token:
                kwargs["nextToken"] = token
            reply = self.logs.get_log_events(**kwargs)
            lines += [e["message"] for e in reply["events"]]
            if not reply["events"] or reply.get("nextForwardToken") in (None, token):
                return lines
            token = reply["nextForwardToken"]

    def resume(self, lines):
        """(N, the index of the line "Resuming from iteration N") of the spot job's log."""
        resumes = [(i, int(m.group(1))) for i, line in enumerate(lines)
                   for m in [re.match(r"^Resuming from iteration (\d+)$", line)] if m]
        self.assertEqual(len(resumes), 1, "\n".join(lines))
        return resumes[0][1], resumes[0][0]

    def model_file(self, described):
        uri = described["ModelArtifacts"]["S3ModelArtifacts"]
        bucket, key = uri[len("s3://"):].split("/", 1)
        body = self.s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as tar:
            members = {m.name.lstrip("./"): m for m in tar.getmembers() if m.isfile()}
            self.assertIn("xgboost-model", members, uri)
            return tar.extractfile(members["xgboost-model"]).read()

    def test_1_the_spot_job_was_interrupted_restarted_and_completed(self):
        d = self.described[SPOT_JOB]
        self.assertEqual(d["TrainingJobStatus"], "Completed", d.get("FailureReason"))
        self.assertTrue(d["EnableManagedSpotTraining"])
        transitions = [(t["Status"], t.get("StatusMessage", ""))
                       for t in d["SecondaryStatusTransitions"]]
        statuses = [status for status, _ in transitions]
        self.assertEqual(statuses.count("Interrupted"), 1, transitions)
        interrupted = statuses.index("Interrupted")
        # Training -> Interrupted -> Starting (the restart) -> Downloading -> Training, as
        # SageMaker documents a spot interruption, and the job's last status is Completed.
        self.assertEqual(statuses[interrupted - 1], "Training", transitions)
        self.assertEqual(statuses[interrupted + 1:interrupted + 4],
                         ["Starting", "Downloading", "Training"], transitions)
        self.assertIn("Spot instances were interrupted", transitions[interrupted][1],
                      transitions)
        self.assertEqual(statuses[-1], "Completed", transitions)
        # Billed at the spot discount (0.7): less than the training time of both attempts.
        self.assertLess(d["BillableTimeInSeconds"], d["TrainingTimeInSeconds"])

        reference = self.described[REFERENCE_JOB]
        self.assertEqual(reference["TrainingJobStatus"], "Completed",
                         reference.get("FailureReason"))
        self.assertNotIn("Interrupted",
                         [t["Status"] for t in reference["SecondaryStatusTransitions"]])

    def test_2_the_checkpoint_prefix_holds_the_rounds_checkpoints(self):
        for name in (SPOT_JOB, REFERENCE_JOB):
            prefix = "checkpoints/%s/" % name
            keys = [o["Key"][len(prefix):] for o in self.s3.list_objects_v2(
                Bucket=BUCKET, Prefix=prefix).get("Contents", [])]
            rounds = sorted(int(m.group(1)) for m in
                            map(re.compile(r"^xgboost-checkpoint\.(\d+)$").match, keys) if m)
            # Only checkpoints (no half-written temporaries), the last one the last round's.
            self.assertEqual(len(rounds), len(keys), keys)
            self.assertTrue(rounds, "%s: no checkpoint in s3://%s/%s" % (name, BUCKET, prefix))
            self.assertEqual(rounds[-1], NUM_ROUND - 1, keys)

    def test_3_the_second_attempt_resumed_from_the_latest_checkpoint_round(self):
        lines = self.log_lines(SPOT_JOB)
        n, at = self.resume(lines)
        # Interrupted after round 0 at least (the SIGTERM ends training after the round under
        # way, whose checkpoint is written first) and before the end.
        self.assertGreater(n, 0, "\n".join(lines))
        self.assertLess(n, NUM_ROUND, "\n".join(lines))
        loaded = [line for line in lines[:at] if line.startswith("Checkpoint loaded from ")]
        self.assertEqual(len(loaded), 1, "\n".join(lines))
        self.assertTrue(loaded[0].endswith("/xgboost-checkpoint.%d" % (n - 1)), loaded[0])
        rounds = lambda part: [int(m.group(1)) for m in map(EVAL_LINE.match, part) if m]
        # The first attempt ran rounds 0..N-1 (its newest checkpoint, N-1, is the one loaded);
        # the second goes on from [N], not from [0], to the last round.
        self.assertEqual(rounds(lines[:at]), list(range(0, n)), "\n".join(lines))
        self.assertEqual(rounds(lines[at:]), list(range(n, NUM_ROUND)), "\n".join(lines))

        # Round for round, the same evaluation as the uninterrupted job's.
        reference = self.log_lines(REFERENCE_JOB)
        self.assertFalse([line for line in reference if line.startswith("Resuming from")])
        evals = lambda part: [line for line in part if EVAL_LINE.match(line)]
        self.assertEqual(rounds(reference), list(range(NUM_ROUND)))
        self.assertEqual(evals(lines), evals(reference))
        print("the spot job was interrupted after round %d and resumed at round %d of %d"
              % (n - 1, n, NUM_ROUND))

    def test_4_the_spot_job_ends_with_the_uninterrupted_jobs_model(self):
        spot = self.model_file(self.described[SPOT_JOB])
        reference = self.model_file(self.described[REFERENCE_JOB])
        paths = []
        for name, body in (("spot", spot), ("reference", reference)):
            paths.append(os.path.join(self.work, "%s-xgboost-model" % name))
            with open(paths[-1], "wb") as f:
                f.write(body)
        result = subprocess.run([PYTHON_WITH_XGBOOST, "-c", COMPARE_MODELS] + paths +
                                [self.validation_csv], capture_output=True, text=True, timeout=120)
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        models = json.loads(result.stdout)
        self.assertEqual(models["spot"]["rounds"], NUM_ROUND)
        self.assertEqual(models["reference"]["rounds"], NUM_ROUND)
        self.assertEqual(len(models["spot"]["predictions"]), 5000)
        self.assertEqual(models["spot"]["predictions"], models["reference"]["predictions"])
        # Not only the same predictions: the same model file.
        self.assertEqual(spot, reference)


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--source-dir", required=True)
    ARGS, rest = p.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
