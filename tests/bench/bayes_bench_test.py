#!/usr/bin/python3
"""bench/bayes/bayes_bench's --parallel-window FIRST:END (bench/README.md, "How far the miss can
be trusted"): 4 workers only for trials FIRST .. END - 1, one at a time otherwise. A parallel run
with an empty window is the sequential run, trial for trial; a window covering the run is the
plain parallel run; a window in between differs from both, and equals the sequential run before
FIRST (trial FIRST is the first launched while an earlier one runs); a window without its colon
exits 2. And --batch-lcb-kappa 0 (BayesianOptions::batch_lcb_kappa, the rule while trials run
before session 36) changes a parallel run but not a sequential one.

    bayes_bench_test.py PATH_TO_BAYES_BENCH
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

BINARY = None
COMMON = ["--seeds", "2", "--budget", "24", "--functions", "Branin", "--strategies", "Bayesian",
          "--no-latency", "--threads", "1"]


def values(mode, *extra):
    """{seed: the run's objective values in launch order} of one mode."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        subprocess.run([BINARY, *COMMON, "--modes", mode, *extra, "--out", out], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(out) as f:
            runs = json.load(f)["runs"]
    return {r["seed"]: r["values"] for r in runs}


class ParallelWindowTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sequential = values("sequential")
        cls.parallel = values("parallel")

    def test_an_empty_window_is_the_sequential_run(self):
        self.assertEqual(values("parallel", "--parallel-window", "0:0"), self.sequential)

    def test_a_window_over_the_whole_run_is_the_parallel_run(self):
        self.assertEqual(values("parallel", "--parallel-window", "0:1000"), self.parallel)
        self.assertNotEqual(self.parallel, self.sequential)

    def test_a_window_in_between_starts_as_the_sequential_run_and_then_differs(self):
        windowed = values("parallel", "--parallel-window", "12:18")
        for seed, run in windowed.items():
            self.assertEqual(run[:12], self.sequential[seed][:12])
            self.assertNotEqual(run[12], self.sequential[seed][12])
        self.assertNotEqual(windowed, self.sequential)
        self.assertNotEqual(windowed, self.parallel)

    def test_a_window_without_its_colon_exits_2(self):
        result = subprocess.run([BINARY, *COMMON, "--parallel-window", "12", "--out", "/dev/null"],
                                capture_output=True, text=True)
        self.assertEqual(result.returncode, 2)
        self.assertIn("--parallel-window needs FIRST:END", result.stderr)


class BatchLcbKappaTest(unittest.TestCase):
    def test_kappa_0_changes_the_parallel_runs_only(self):
        self.assertEqual(values("sequential", "--batch-lcb-kappa", "0"), values("sequential"))
        self.assertNotEqual(values("parallel", "--batch-lcb-kappa", "0"), values("parallel"))


if __name__ == "__main__":
    BINARY = sys.argv.pop(1)
    unittest.main()
