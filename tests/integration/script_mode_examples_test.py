#!/usr/bin/env python3
"""The script-mode job files of examples/script-mode/ run as examples/README.md says, with
`amt run` (an embedded amtd and a local worker) and no SDK: stage.py writes the code and the data
into the data dir's S3 folder, then each job file runs and must end as the README says.

    /usr/bin/python3 tests/integration/script_mode_examples_test.py --bin-dir build/bin \
        --source-dir .

Needs Debian's python3-sklearn, python3-xgboost and python3-torch for /usr/bin/python3 (the
trainers' interpreter); prints SKIPPED and exits 0 when one does not import.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python",
                                "src"))
import amt_local  # noqa: E402

ARGS = None
PYTHON = "/usr/bin/python3"


class ScriptModeJobFilesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.TemporaryDirectory()
        cls.data = os.path.join(cls.work.name, "amt")
        examples = os.path.join(ARGS.source_dir, "examples", "script-mode")
        cls.examples = examples
        subprocess.run([PYTHON, os.path.join(examples, "stage.py"), cls.data], check=True,
                       capture_output=True, text=True)

    @classmethod
    def tearDownClass(cls):
        cls.work.cleanup()

    def amt_run(self, job_file, *flags):
        command = [os.path.join(ARGS.bin_dir, "amt"), "run",
                   os.path.join(self.examples, job_file), "--data-dir", self.data,
                   "--python", "sklearn=" + PYTHON, "--python", "xgboost=" + PYTHON,
                   "--python", "pytorch=" + PYTHON] + list(flags)
        started = time.monotonic()
        result = subprocess.run(command, capture_output=True, text=True, timeout=400)
        print("amt run %s (%.1f s):\n%s" % (job_file, time.monotonic() - started, result.stdout))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        return result.stdout

    def job_dirs(self, prefix):
        return sorted(glob.glob(os.path.join(self.data, "**", prefix + "*", "model"),
                                recursive=True))

    def model_members(self, job):
        artifact = os.path.join(self.data, "s3", "amt-local-examples", "output", job, "output",
                                "model.tar.gz")
        with tarfile.open(artifact, "r:gz") as tar:
            return sorted(m.name.lstrip("./") for m in tar.getmembers() if m.isfile())

    def best_of(self, out, metric):
        match = re.search(r"^Best training job: ([^,\s]+), %s=([0-9.eE+-]+)$" % re.escape(metric),
                          out, re.M)
        self.assertIsNotNone(match, out)
        return match.group(1), float(match.group(2))

    def test_1_sklearn_tuning_then_transfer_learning_warm_start(self):
        out = self.amt_run("sklearn-tuning.json", "--time-scale", "0.01")
        job, loss = self.best_of(out, "val_loss")
        self.assertTrue(job.startswith("sklearn-tuning-"), job)
        self.assertLess(loss, 0.5)
        self.assertEqual(self.model_members(job), ["model.joblib"])
        with_objective = int(re.search(r"^Objectives: Succeeded (\d+),", out, re.M).group(1))
        self.assertGreater(with_objective, 0)
        out = self.amt_run("sklearn-warm-start.json", "--time-scale", "0.01")
        # The parent's jobs that reached an objective are the child's first observations.
        self.assertIn("Warm start (TransferLearning) from sklearn-tuning: %d training jobs known"
                      % with_objective, out)
        job, loss = self.best_of(out, "val_loss")
        self.assertTrue(job.startswith("sklearn-warm-start-"), job)
        self.assertLess(loss, 0.5)

    def test_2_builtin_xgboost_hyperband_on_validation_auc(self):
        out = self.amt_run("xgboost-builtin-tuning.json", "--time-scale", "0.01")
        job, auc = self.best_of(out, "validation:auc")
        self.assertGreater(auc, 0.95)
        self.assertEqual(self.model_members(job), ["xgboost-model"])

    def test_3_pytorch_spot_training_resumes_from_its_checkpoint(self):
        # Interrupted 2 s into training (it trains about 5 s), once; the restart copies the checkpoints back.
        out = self.amt_run("pytorch-spot-training.json", "--spot-interrupt-after", "2",
                           "--spot-max-interruptions", "1")
        self.assertIn("Interrupted", out)
        lines = self.amt_logs("pytorch-spot").splitlines()
        print("pytorch-spot: attempt 2 began after epoch %d" % check_resumed_once(self, lines))
        final = re.findall(r"val_loss=([0-9.]+)", "\n".join(lines))[-1]
        self.assertEqual(final, self.uninterrupted_final_val_loss())
        self.assertEqual(self.model_members("pytorch-spot"), ["model.pt"])

    def amt_logs(self, job):
        # An amtd of `amt run`'s data dir, for `amt logs`: gRPC only, no worker.
        with amt_local.Amtd(ARGS.bin_dir, "--http-port", "-1", data_dir=self.data,
                            local_worker=False) as daemon:
            result = subprocess.run(daemon.amt_command("logs", job), capture_output=True,
                                    text=True, timeout=60)
            self.assertEqual(result.returncode, 0, result.stderr)
            return result.stdout

    def uninterrupted_final_val_loss(self):
        """The same script with the same data and hyperparameters, run once straight through."""
        root = os.path.join(self.data, "s3", "amt-local-examples", "script-mode")
        code = os.path.join(self.work.name, "pytorch-code")
        os.makedirs(code)
        with tarfile.open(os.path.join(root, "code", "pytorch", "sourcedir.tar.gz")) as tar:
            tar.extractall(code)
        env = dict(os.environ, SM_MODEL_DIR=self.work.name,
                   SM_CHANNEL_TRAIN=os.path.join(root, "digits", "train"),
                   SM_CHANNEL_VALIDATION=os.path.join(root, "digits", "validation"),
                   SM_CHECKPOINT_DIR=os.path.join(self.work.name, "checkpoints"))
        result = subprocess.run([PYTHON, "train.py", "--epochs", "150", "--lr", "0.05"], cwd=code,
                                env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        return re.findall(r"val_loss=([0-9.]+)", result.stdout)[-1]


def check_resumed_once(test, lines):
    """The log of examples/sdk/pytorch_src/train.py interrupted once: the second attempt begins
    where the first's last checkpoint left off (its epoch lines are printed once their checkpoint
    is saved, so: the last epoch logged, or the one after it when the interruption fell between
    the save and the print; the start when no epoch had ended) and goes on to the end. The first
    attempt says where it began too, unless the interruption came before the script printed."""
    runner = [i for i, line in enumerate(lines) if line.startswith("amt-script-runner: invoking")]
    test.assertEqual(len(runner), 2, "\n".join(lines))  # two attempts
    begins = [i for i, line in enumerate(lines)
              if line.startswith(("resuming from checkpoint at epoch ", "no checkpoint"))]
    test.assertTrue(begins and begins[-1] > runner[1], "\n".join(lines))
    epochs = [int(m.group(1)) for m in (re.match(r"epoch=(\d+) ", line) for line in lines) if m]
    first = [int(m.group(1)) for m in (re.match(r"epoch=(\d+) ", line)
                                       for line in lines[:runner[1]]) if m]
    resumed = lines[begins[-1]]
    if resumed.startswith("resuming"):
        checkpoint = int(resumed.split()[-1])
        test.assertIn(checkpoint, (first[-1], first[-1] + 1) if first else (1,), resumed)
    else:
        test.assertEqual(first, [], "\n".join(lines))  # nothing had been saved
        checkpoint = 0
    test.assertEqual(epochs[len(first):], list(range(checkpoint + 1, 151)))
    return checkpoint


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--source-dir", required=True)
    ARGS, rest = p.parse_known_args()
    missing = subprocess.run([PYTHON, "-c", "import sklearn, xgboost, torch"],
                             capture_output=True, text=True)
    if missing.returncode != 0:
        print("SKIPPED: %s cannot import scikit-learn, xgboost and torch: %s"
              % (PYTHON, missing.stderr.strip().splitlines()[-1:]))
        return 0
    result = unittest.main(argv=[sys.argv[0]] + rest, verbosity=2, exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
