#!/usr/bin/python3
"""Hyperband vs Optuna 3.1's HyperbandPruner in the four cells of issue 38 (bench/README.md).

For each family and seed set, and each cell (MaxNumberOfTrainingJobs / MaxResource: 20/27, 50/27,
20/81, 50/81), runs the C++ harness (stopping_bench) with the Hyperband knobs given and Optuna's
HyperbandPruner on the same configurations and curves (stopping_bench.py's run_optuna), and prints
one line per cell: median epochs, median regret (with a paired bootstrap interval of the ratio and
the seeds on which ours is worse or better) and, as fractions of Off's epochs, the median epochs to
reach Off's regret (within the cell's jobs, up to 400 at 50/81, the one-third target's cell); "ok"
when Hyperband's epochs and regret are both at or under the pruner's, "par" when the epochs are and
the regret is not worse beyond the seeds' noise (its interval contains 1). POOL lines pool the seed
sets of a family (medians over all their seeds).

  /usr/bin/python3 bench/stopping/hyperband_cells.py --binary build/bin/stopping_bench \\
      [--families mild,strong] [--first-seeds 1,101] [--cache DIR] [harness knobs, e.g. --brackets 4]

Optuna's runs do not depend on the knobs: --cache DIR keeps them (one JSON per family, seed set
and MaxResource) for the next command.
"""

import argparse
import importlib.util
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CELLS = [(20, 27), (50, 27), (20, 81), (50, 81)]
SEEDS = 60
CAP = 400


def load_bench():
    """stopping_bench.py as a module (it installs Optuna when missing)."""
    argv, sys.argv = sys.argv, [sys.argv[0]]
    spec = importlib.util.spec_from_file_location("stopping_bench", os.path.join(HERE, "stopping_bench.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    sys.argv = argv
    return bench


def harness(binary, family, first, trials, max_epochs, knobs):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "harness.json")
        cap = CAP if (trials, max_epochs) == (50, 81) else trials  # "epochs to reach" is 50/81's
        subprocess.run(
            [binary, "--json=" + path, "--family", family, "--first-seed", str(first), "--seeds", str(SEEDS),
             "--max-epochs", str(max_epochs), "--trials", str(trials), "--cap", str(cap)] + knobs,
            check=True, stdout=subprocess.DEVNULL)
        with open(path) as f:
            return json.load(f)


def optuna_runs(bench, binary, family, first, max_epochs, cache):
    """{seed: {"optimum", "off", "optuna"}} over CAP trials (prefixes give the 20- and 50-job runs)."""
    path = cache and os.path.join(cache, "optuna_%s_%d_%d_%d.json" % (family, first, SEEDS, max_epochs))
    if path and os.path.exists(path):
        with open(path) as f:
            return {int(k): v for k, v in json.load(f).items()}
    data = harness(binary, family, first, CAP, max_epochs, [])
    bench.optuna.logging.set_verbosity(bench.optuna.logging.WARNING)
    runs = {e["seed"]: {"optimum": e["optimum"], "off": e["runs"]["off"],
                        "optuna": bench.run_optuna("optuna_hyperband", e, data)} for e in data["problems"]}
    if path:
        os.makedirs(cache, exist_ok=True)
        with open(path, "w") as f:
            json.dump(runs, f)
    return runs


def regret_interval(ours, theirs, resamples=2000):
    """95% interval of median(ours) / median(theirs) over seeds resampled in pairs (the two
    methods see the same configurations and curves on a seed), percentile bootstrap with a fixed
    generator so that a command prints the same interval every time."""
    rng = random.Random(20261206)
    n = len(ours)
    ratios = []
    for _ in range(resamples):
        picks = [rng.randrange(n) for _ in range(n)]
        ratios.append(statistics.median(ours[i] for i in picks) /
                      statistics.median(theirs[i] for i in picks))
    ratios.sort()
    return ratios[int(0.025 * resamples)], ratios[int(0.975 * resamples) - 1]


def line(label, n, max_epochs, cols):
    """One cell. "ok": epochs at or under the pruner's and median regret at or under; "par": epochs
    at or under and the regret's interval (regret_interval) contains 1, i.e. not worse beyond the
    seeds' noise; "--" otherwise. worse/better: seeds where our regret is above/below the pruner's."""
    hb_e, hb_r, hb_t, op_e, op_r, op_t = (statistics.median(c) for c in cols)
    low, high = regret_interval(cols[1], cols[4])
    worse = sum(a > b for a, b in zip(cols[1], cols[4]))
    better = sum(a < b for a, b in zip(cols[1], cols[4]))
    ok = "--"
    if hb_e <= op_e:
        ok = "ok" if hb_r <= op_r else ("par" if low <= 1 else "--")
    return ("%-3s %-14s %2d/%-2d epochs %5.0f vs %5.0f (%.3f)  regret %.5f vs %.5f (%.3f, 95%% %.2f-%.2f, "
            "worse on %d, better on %d)  to reach %s vs %s") % (
        ok, label, n, max_epochs, hb_e, op_e, hb_e / op_e, hb_r, op_r, hb_r / op_r, low, high, worse, better,
        "never" if math.isinf(hb_t) else "%.3f" % (hb_t / (n * max_epochs)),
        "never" if math.isinf(op_t) else "%.3f" % (op_t / (n * max_epochs)))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True, help="the stopping_bench executable")
    parser.add_argument("--families", default="mild")
    parser.add_argument("--first-seeds", default="1,101")
    parser.add_argument("--cache", help="directory that keeps Optuna's runs between commands")
    args, knobs = parser.parse_known_args()
    bench = load_bench()
    print("Hyperband knobs: %s; %d seeds per set; Hyperband vs Optuna HyperbandPruner" % (" ".join(knobs) or "defaults", SEEDS))
    for family in args.families.split(","):
        pooled = {cell: [[] for _ in range(6)] for cell in CELLS}
        for first in map(int, args.first_seeds.split(",")):
            for n, max_epochs in CELLS:
                optuna = optuna_runs(bench, args.binary, family, first, max_epochs, args.cache)
                data = harness(args.binary, family, first, n, max_epochs, knobs)
                cols = pooled[(n, max_epochs)]
                for entry in data["problems"]:
                    ref = optuna[entry["seed"]]
                    target = bench.regret_of(ref["off"], n, ref["optimum"])
                    for i, runs in enumerate((entry["runs"]["hyperband"], ref["optuna"])):
                        cols[3 * i].append(bench.epochs_of(runs, n))
                        cols[3 * i + 1].append(bench.regret_of(runs, n, ref["optimum"]))
                        cols[3 * i + 2].append(bench.epochs_to_reach(runs, target, ref["optimum"]))
                seeds = [c[-SEEDS:] for c in cols]
                print(line("%s %d-%d" % (family, first, first + SEEDS - 1), n, max_epochs, seeds), flush=True)
        for n, max_epochs in CELLS:
            print(line("%s POOL" % family, n, max_epochs, pooled[(n, max_epochs)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
