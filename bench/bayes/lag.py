#!/usr/bin/python3
"""Where parallel Bayesian runs fall behind sequential ones, from bayes_bench's JSON.

bench/README.md ("Strategies vs Optuna TPE") judges 4 workers against one by the ratio of the
median simple regrets at 60 and 100 evaluations. That median mixes two things: how many runs have
found the global basin by then (the rest sit in a local minimum, regret `--basin` or more) and how
far the others have refined it. This prints both, per mode, and for the seeds whose runs are in
the basin in both modes: the evaluation at which each run first got under `--basin` and under
`--fine`, and the median regret curve with the parallel lag read off it (the k for which the
parallel median at n is nearest the sequential median at n - k, on a log scale).

It also prints how far the ratio itself can be trusted: its 95% interval from a paired bootstrap
over the seeds (both modes of a seed resampled together, as they share the space-filling start),
and what a lag costs where the budget falls: the sequential median's fall per evaluation over the
last 10 evaluations, and the ratio that a parallel run exactly `--workers` - 1 results behind the
sequential one would show (every suggestion made without the results still running, and nothing
else lost).

  build/bin/bayes_bench --seeds 80 --budget 60 --functions Hartmann6 --strategies Bayesian \\
      --no-latency --out /tmp/h6.json
  /usr/bin/python3 bench/bayes/lag.py /tmp/h6.json [--function Hartmann6] [--budget 60]

Several files (other seed sets, `--first-seed`) are pooled.
"""

import argparse
import json
import math
import random
import statistics
import sys

NEVER = 10**9


def load(paths, function):
    """{mode: {seed: [regret of trial i]}} for `function`, pooled over `paths`."""
    runs = {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        minimum = {f["name"]: f["minimum"] for f in data["functions"]}[function]
        for run in data["runs"]:
            if run["function"] != function or run.get("strategy", "Bayesian") != "Bayesian":
                continue
            runs.setdefault(run["mode"], {})[run["seed"]] = [v - minimum for v in run["values"]]
    return runs


def best_at(regrets, n):
    return min(regrets[:n])


def first_under(regrets, threshold):
    """1-based evaluation at which the best regret first falls under `threshold`, else NEVER."""
    best = math.inf
    for i, r in enumerate(regrets):
        best = min(best, r)
        if best < threshold:
            return i + 1
    return NEVER


def lag(seq_curve, par_curve, n):
    """The k >= 0 for which par_curve[n] is nearest seq_curve[n - k] in log regret."""
    target = math.log10(max(par_curve[n], 1e-12))
    return min(range(0, n), key=lambda k: abs(math.log10(max(seq_curve[n - k], 1e-12)) - target))


def bootstrap_interval(runs, seeds, budget, resamples):
    """95% interval of the parallel / sequential ratio of median regrets at `budget`."""
    at = {mode: {s: max(best_at(runs[mode][s], budget), 1e-6) for s in seeds}
          for mode in ("sequential", "parallel")}
    rng = random.Random(1)
    ratios = []
    for _ in range(resamples):
        sample = [rng.choice(seeds) for _ in seeds]
        ratios.append(statistics.median(at["parallel"][s] for s in sample) /
                      statistics.median(at["sequential"][s] for s in sample))
    ratios.sort()
    return ratios[int(0.025 * resamples)], ratios[int(0.975 * resamples) - 1]


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json", nargs="+", help="bayes_bench --out files (pooled)")
    parser.add_argument("--function", default="Hartmann6")
    parser.add_argument("--budget", type=int, default=60)
    parser.add_argument("--basin", type=float, default=0.05,
                        help="regret under which a run is in the global basin (Hartmann-6's "
                             "local minima are at 0.12 and 0.19)")
    parser.add_argument("--fine", type=float, default=1e-3)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--resamples", type=int, default=2000,
                        help="bootstrap resamples of the seeds for the ratio's interval")
    args = parser.parse_args()
    runs = load(args.json, args.function)
    if "sequential" not in runs or "parallel" not in runs:
        sys.exit("lag.py needs both modes' runs of %s" % args.function)
    seeds = sorted(set(runs["sequential"]) & set(runs["parallel"]))
    b = args.budget
    med = statistics.median

    print("%s, %d seeds, at %d evaluations" % (args.function, len(seeds), b))
    medians = {}
    for mode in ("sequential", "parallel"):
        at_b = [best_at(runs[mode][s], b) for s in seeds]
        inside = [r for r in at_b if r < args.basin]
        medians[mode] = med(at_b)
        print("  %-10s median %.3g; in the basin %d of %d, their median %.3g" %
              (mode, med(at_b), len(inside), len(seeds), med(inside) if inside else math.nan))
    ratio = max(medians["parallel"], 1e-6) / max(medians["sequential"], 1e-6)
    print("  parallel / sequential: %.2f (regrets floored at 1e-6, as compare.py does)" % ratio)
    low, high = bootstrap_interval(runs, seeds, b, args.resamples)
    print("  its 95%% interval, seeds resampled in pairs: %.2f - %.2f" % (low, high))
    seq_curve = [med(best_at(runs["sequential"][s], n) for s in seeds) for n in (b - 10, b)]
    if b > 10 and seq_curve[1] > 0:
        per_eval = (seq_curve[0] / seq_curve[1]) ** 0.1
        behind = args.workers - 1
        print("  sequential median falls %.3fx per evaluation over the last 10: a run %d results "
              "behind it would be at %.2fx" % (per_eval, behind, per_eval ** behind))

    both = [s for s in seeds
            if all(best_at(runs[mode][s], b) < args.basin for mode in ("sequential", "parallel"))]
    if not both:
        return
    print("Seeds in the basin by %d in both modes: %d" % (b, len(both)))
    for mode in ("sequential", "parallel"):
        entry = [first_under(runs[mode][s], args.basin) for s in both]
        fine = [first_under(runs[mode][s], args.fine) for s in both]
        after = med(f - e for e, f in zip(entry, fine))
        print("  %-10s under %g at a median %g, under %g at %g (%g after)" %
              (mode, args.basin, med(entry), args.fine, med(fine), after))
    curves = {}
    for mode in ("sequential", "parallel"):
        curves[mode] = [NEVER] + [med(best_at(runs[mode][s], n) for s in both)
                                  for n in range(1, b + 1)]
    print("  %5s %10s %10s %4s" % ("n", "sequential", "parallel", "lag"))
    for n in sorted(set(list(range(10, b + 1, 5)) + [b])):
        print("  %5d %10.3g %10.3g %4d" % (n, curves["sequential"][n], curves["parallel"][n],
                                           lag(curves["sequential"], curves["parallel"], n)))


if __name__ == "__main__":
    main()
