#!/usr/bin/python3
"""The protocol of bench/real/strategy_loop (real_bench.py --direct): one JSON object of
hyperparameters per line, one objective per line back; the same seed gives the same trials; a
failed trial ("nan") is not proposed again; --parallel P keeps P trials out at once; bad flags
exit 2.

    strategy_loop_test.py PATH_TO_STRATEGY_LOOP
"""
import json
import math
import os
import select
import subprocess
import sys
import unittest

BINARY = None
RANGES = json.dumps({
    "ContinuousParameterRanges": [
        {"Name": "x", "MinValue": "0", "MaxValue": "1", "ScalingType": "Linear"}],
    "IntegerParameterRanges": [
        {"Name": "n", "MinValue": "1", "MaxValue": "20", "ScalingType": "Linear"}],
})


def bowl(params):
    return (float(params["x"]) - 0.3) ** 2 + ((int(params["n"]) - 12) / 20.0) ** 2


def run(trials, seed=5, objective=bowl, extra=()):
    """The `trials` suggestions of one loop, each answered with objective(params)."""
    loop = subprocess.Popen([BINARY, "--strategy", "Bayesian", "--seed", str(seed),
                             "--max-trials", str(trials), "--ranges", RANGES, *extra],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    out = []
    for _ in range(trials):
        params = json.loads(loop.stdout.readline())
        out.append(params)
        loop.stdin.write("%.10g\n" % objective(params))
        loop.stdin.flush()
    loop.stdin.close()
    return out, loop.wait()


class StrategyLoopTest(unittest.TestCase):
    def test_suggests_within_the_ranges_and_learns(self):
        trials, code = run(16)
        self.assertEqual(code, 0)
        self.assertEqual(len(trials), 16)
        for params in trials:
            self.assertEqual(sorted(params), ["n", "x"])
            self.assertTrue(0 <= float(params["x"]) <= 1)
            self.assertTrue(1 <= int(params["n"]) <= 20)
        # The design is 4 trials (a quarter of 16); the model's 12 get closer than all of them.
        self.assertLess(min(bowl(p) for p in trials[4:]), min(bowl(p) for p in trials[:4]))

    def test_the_same_seed_gives_the_same_trials(self):
        self.assertEqual(run(8)[0], run(8)[0])
        self.assertNotEqual(run(8)[0], run(8, seed=6)[0])

    def test_a_failed_trial_is_not_proposed_again(self):
        trials, code = run(10, objective=lambda p: math.nan)
        self.assertEqual(code, 0)
        self.assertEqual(len({json.dumps(p, sort_keys=True) for p in trials}), 10)

    def test_parallel_prints_that_many_trials_before_reading_an_objective(self):
        loop = subprocess.Popen([BINARY, "--strategy", "Bayesian", "--seed", "5", "--max-trials",
                                 "12", "--parallel", "3", "--ranges", RANGES],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)

        pending = b""

        def next_trial():
            # Read from the pipe itself (a buffered readline would take several lines at once and
            # hide them from select): a loop that waited for an objective first would leave this
            # without a line.
            nonlocal pending
            while b"\n" not in pending:
                ready, _, _ = select.select([loop.stdout], [], [], 60)
                self.assertTrue(ready, "strategy_loop printed no trial")
                chunk = os.read(loop.stdout.fileno(), 65536)
                self.assertTrue(chunk, "strategy_loop ended early")
                pending += chunk
            line, _, pending = pending.partition(b"\n")
            return json.loads(line)

        out = [next_trial() for _ in range(3)]
        while len(out) < 12:
            loop.stdin.write(b"%.10g\n" % bowl(out[len(out) - 3]))
            out.append(next_trial())
        for params in out[-3:]:
            loop.stdin.write(b"%.10g\n" % bowl(params))
        self.assertEqual(loop.wait(), 0)  # the 12 trials answered: it ends by itself
        self.assertEqual(pending + loop.stdout.read(), b"")
        loop.stdin.close()
        loop.stdout.close()
        self.assertEqual(len({json.dumps(p, sort_keys=True) for p in out}), 12)

    def test_parallel_1_is_the_sequential_loop_and_more_changes_the_trials(self):
        sequential = run(12)[0]
        self.assertEqual(run(12, extra=["--parallel", "1"])[0], sequential)
        parallel, code = run(12, extra=["--parallel", "3"])
        self.assertEqual(code, 0)
        # The design (3 trials, a quarter of 12) does not look at results; the model does, and
        # with 2 trials running it has fewer of them.
        self.assertEqual(parallel[:3], sequential[:3])
        self.assertNotEqual(parallel[3:], sequential[3:])

    def test_bad_flags_exit_2(self):
        for args in (["--seed", "1"], ["--ranges", RANGES, "--nope", "1"],
                     ["--ranges", RANGES, "--parallel", "0"],
                     ["--ranges", "{\"ContinuousParameterRanges\": 3}"],
                     ["--ranges", RANGES, "--option", "unknown=1"],
                     ["--ranges", RANGES, "--seed", "abc"]):
            result = subprocess.run([BINARY, *args], capture_output=True, text=True)
            self.assertEqual(result.returncode, 2, args)
            self.assertIn("strategy_loop", result.stderr)


if __name__ == "__main__":
    BINARY = sys.argv.pop(1)
    unittest.main()
