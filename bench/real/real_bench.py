#!/usr/bin/python3
"""Real training problems: amtd's strategies against Optuna's TPE and Random (bench/README.md).

Every trial of amtd's strategies is a real training job: amtd (build/bin, on free ports, its local
worker with --slots 2) runs bench/real/train, which trains an XGBoost or scikit-learn model on a
data set that ships with scikit-learn and prints its validation loss; the tuning jobs are created
with the amt CLI (Debian's botocore predates RandomSeed; one trial at a time each, RandomSeed =
the seed) and read back with boto3's ListTrainingJobsForHyperParameterTuningJob. Optuna 3.1 (Debian's python3-optuna, installed
with apt-get when missing) runs TPESampler and RandomSampler, seeded, in-process on the same
evaluate() with the same ranges.

Early stopping: our Hyperband (StrategyConfig MinResource 1, MaxResource 27) against Optuna's TPE
and Random with HyperbandPruner(1, 27, reduction_factor=3) ("TPE+HB", "OptunaRandom+HB"), on the
XGBoost problems with the boosting rounds as the resource (an epoch is 10 rounds; the trainer
prints the validation loss after each; num_round leaves the ranges). A stopped trial's result is
its last report (SageMaker's final objective of a stopped job). Epochs are counted from each
job's log through amtd's Logs API, and from Optuna's reports.

One run of the largest budget per (problem, strategy, seed), whose first 20 trials are what a
20-trial tuning job would run, except for the strategies that size their search by the budget
(BUDGET_AWARE: Bayesian's space-filling start is at most a quarter of MaxNumberOfTrainingJobs),
which also run each smaller budget, as "Bayesian@20" in --out files. Reported per problem and
budget: the median and 80th percentile over seeds of the best validation loss, and whether
Bayesian is below TPE beyond seed noise (a one-sided Mann-Whitney U test over the seeds, p <
0.05); over all trials of a strategy: repeated points, trials with a continuous hyperparameter on
a bound of its range, and returns to a bound an earlier trial of the run found bad (its loss worse
than the run's median so far); for the early-stopping strategies, the median epochs per run too.
`--merge` reuses the runs of an earlier --out file. With `--direct`, `--parallel P` runs ours with
P trials out at once (bench/README.md, "Real training problems, 4 trials at a time").

    /usr/bin/python3 bench/real/real_bench.py --bin build/bin --seeds 10 --out /tmp/real.json
    /usr/bin/python3 bench/real/real_bench.py --bin build/bin --seeds 3 --budgets 20 \
        --problems xgb-breast-cancer --strategies Bayesian,TPE
"""

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python", "src"))
sys.path.insert(0, os.path.join(HERE, "..", "bayes"))
import problems  # noqa: E402
from compare import ensure_optuna  # noqa: E402  (installs python3-optuna, then re-runs this)

OURS = ("Bayesian", "Random", "Hyperband")
OPTUNA = ("TPE", "OptunaRandom", "TPE+HB", "OptunaRandom+HB")
# Strategies that stop trials early: they run the XGBoost problems with the boosting rounds as the
# resource (problems.HYPERBAND_RANGES, MaxResource problems.HYPERBAND_MAX_EPOCHS), and are
# compared among themselves, on best loss and on epochs (one epoch = ROUNDS_PER_EPOCH rounds).
EARLY_STOPPING = ("Hyperband", "TPE+HB", "OptunaRandom+HB")
# Strategies whose trials depend on MaxNumberOfTrainingJobs: a run per budget.
BUDGET_AWARE = ("Bayesian",)


def run_name(strategy, budget, a):
    """The results key's strategy for `strategy` at `budget`: "Bayesian@20" for a budget-aware
    strategy's smaller budgets, else the strategy (its largest-budget run, cut to `budget`)."""
    if strategy in BUDGET_AWARE and budget < max(a.budgets):
        return "%s@%d" % (strategy, budget)
    return strategy


def split_name(name, a):
    """(strategy, budget) of a run_name()."""
    strategy, _, budget = name.partition("@")
    return strategy, int(budget) if budget else max(a.budgets)


def runs_problem(strategy, problem):
    return strategy not in EARLY_STOPPING or problems.PROBLEMS[problem][0] == "xgboost"


def ranges_json(problem, strategy):
    return (problems.HYPERBAND_RANGES if strategy in EARLY_STOPPING
            else problems.PROBLEMS[problem][4])


def ranges_of(problem, strategy="Bayesian"):
    """(name, kind, lo, hi, log) per hyperparameter of `problem` as `strategy` searches it."""
    ranges = ranges_json(problem, strategy)
    out = []
    for kind, key in (("float", "ContinuousParameterRanges"), ("int", "IntegerParameterRanges")):
        for r in ranges.get(key, []):
            out.append((r["Name"], kind, float(r["MinValue"]), float(r["MaxValue"]),
                        r.get("ScalingType") == "Logarithmic"))
    return out


# --- amtd's strategies ---------------------------------------------------------------------------

def tuning_request(name, problem, strategy, seed, budget, epoch_seconds):
    static = {"problem": problem}
    config = {}
    if strategy == "Hyperband":
        static["epochs"] = str(problems.HYPERBAND_MAX_EPOCHS)
        static["epoch_seconds"] = repr(epoch_seconds)
        config = {"StrategyConfig": {"HyperbandStrategyConfig": {
            "MinResource": 1, "MaxResource": problems.HYPERBAND_MAX_EPOCHS}}}
    return {
        "HyperParameterTuningJobName": name,
        "HyperParameterTuningJobConfig": {
            "Strategy": strategy,
            "RandomSeed": seed,
            **config,
            "HyperParameterTuningJobObjective": {"Type": "Minimize",
                                                 "MetricName": "validation:loss"},
            "ResourceLimits": {"MaxNumberOfTrainingJobs": budget,
                               "MaxParallelTrainingJobs": 1},
            "ParameterRanges": ranges_json(problem, strategy)},
        "TrainingJobDefinition": {
            "AlgorithmSpecification": {
                "TrainingImage": os.path.join(HERE, "train"), "TrainingInputMode": "File",
                "MetricDefinitions": [{"Name": "validation:loss",
                                       "Regex": "validation-loss: ([-+0-9.eE]+)"}]},
            "RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole",
            "OutputDataConfig": {"S3OutputPath": "s3://real-bench/output"},
            "ResourceConfig": {"InstanceType": "ml.m5.large", "InstanceCount": 1,
                               "VolumeSizeInGB": 10},
            "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
            "StaticHyperParameters": static}}


def epochs_of_job(logs, job):
    """The objective lines job `job` printed (its epochs), read back through amtd's Logs API."""
    group = "/aws/sagemaker/TrainingJobs"
    streams = logs.describe_log_streams(logGroupName=group, logStreamNamePrefix=job + "/")
    count = 0
    for stream in streams["logStreams"]:
        kwargs = {"logGroupName": group, "logStreamName": stream["logStreamName"],
                  "startFromHead": True}
        while True:
            reply = logs.get_log_events(**kwargs)
            count += sum("validation-loss:" in e["message"] for e in reply["events"])
            if not reply["events"] or reply.get("nextForwardToken") in (None, kwargs.get("nextToken")):
                break
            kwargs["nextToken"] = reply["nextForwardToken"]
    return count


def run_ours(a, runs):
    """{(problem, strategy, seed): [(params, loss, epochs)] in launch order} for amtd's
    strategies; epochs is None where a trial always trains to the end."""
    import boto3
    import amt_local
    out = {}
    with amt_local.Amtd(a.bin, slots=a.slots, quiet=True, prefix="amt-real-") as amtd:
        sm = boto3.client("sagemaker", **amtd.boto3_kwargs())
        logs = boto3.client("logs", **amtd.boto3_kwargs())
        names = {}
        for i, (problem, run, seed) in enumerate(runs):
            strategy, budget = split_name(run, a)
            name = "real-%d-%s-%d" % (i, run.lower().replace("@", "-"), seed)  # <= 32 characters
            names[name] = (problem, run, seed)
            # The amt CLI: Debian's botocore (1.29) predates RandomSeed.
            path = os.path.join(amtd.work, name + ".json")
            with open(path, "w") as f:
                json.dump(tuning_request(name, problem, strategy, seed, budget, a.epoch_seconds), f)
            created = subprocess.run(amtd.amt_command("create-hyper-parameter-tuning-job",
                                                      "--cli-input-json", "file://" + path),
                                     capture_output=True, text=True)
            if created.returncode != 0:
                sys.exit("[real] amt create-hyper-parameter-tuning-job: " + created.stderr)
        pending = set(names)
        while pending:
            for name in sorted(pending):
                status = sm.describe_hyper_parameter_tuning_job(
                    HyperParameterTuningJobName=name)["HyperParameterTuningJobStatus"]
                if status in ("Completed", "Failed", "Stopped"):
                    pending.discard(name)
                    if status != "Completed":
                        print("[real] %s ended %s" % (name, status), flush=True)
            if pending:
                time.sleep(1)
        for name, key in names.items():
            pages = sm.get_paginator("list_training_jobs_for_hyper_parameter_tuning_job").paginate(
                HyperParameterTuningJobName=name, MaxResults=100)
            summaries = [s for page in pages for s in page["TrainingJobSummaries"]]
            summaries.sort(key=lambda s: s["TrainingJobName"])
            trials = []
            for s in summaries:
                metric = s.get("FinalHyperParameterTuningJobObjectiveMetric")
                loss = float(metric["Value"]) if metric else float("inf")
                epochs = (epochs_of_job(logs, s["TrainingJobName"])
                          if key[1] in EARLY_STOPPING else None)
                trials.append(({k: v for k, v in s["TunedHyperParameters"].items()}, loss,
                               epochs))
            out[key] = trials
    return out


def api_float(text):
    """`text`'s number as boto3 reads it from amtd: the API's objective is a 32-bit float, which
    protobuf's JSON prints with 6 significant digits when they read back the same, else 9."""
    import numpy
    value = numpy.float32(float(text))
    short = "%.6g" % value
    return float(short if numpy.float32(float(short)) == value else "%.9g" % value)


def run_direct(job):
    """(key, [(params, loss, None)]) for one of amtd's strategies (not Hyperband) driven by
    strategy_loop (--direct): the same strategy, seeded by RandomSeed as amtd seeds it, on the
    objective bench/real/train prints (`%.10g`), evaluated in this process. Checked: seeds 1-2 of
    all four problems give amtd's 50 trials exactly."""
    problem, run, seed, strategy, budget, binary, design, options, parallel = job
    command = [binary, "--strategy", strategy, "--seed", str(seed), "--max-trials", str(budget),
               "--parallel", str(parallel), "--ranges", json.dumps(ranges_json(problem, strategy))]
    if design:
        command += ["--design", str(design)]
    for option in options:
        command += ["--option", option]
    loop = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    trials = []
    for _ in range(budget):
        params = json.loads(loop.stdout.readline())
        loss = "%.10g" % problems.evaluate(problem, params)
        loop.stdin.write(loss + "\n")
        loop.stdin.flush()
        trials.append((params, api_float(loss), None))
    loop.stdin.close()
    if loop.wait() != 0:
        sys.exit("[real] strategy_loop failed")
    return (problem, run, seed), trials


# --- Optuna ---------------------------------------------------------------------------------------

def run_optuna(job):
    problem, strategy, seed, budget = job
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = (optuna.samplers.TPESampler(seed=seed) if strategy.startswith("TPE") else
               optuna.samplers.RandomSampler(seed=seed))
    pruner = None
    if strategy in EARLY_STOPPING:
        pruner = optuna.pruners.HyperbandPruner(
            min_resource=1, max_resource=problems.HYPERBAND_MAX_EPOCHS, reduction_factor=3)
    # HyperbandPruner hashes the study's name into its brackets: a fixed name keeps runs repeatable.
    study = optuna.create_study(study_name="real-%s-%s-%d" % (problem, strategy, seed),
                                sampler=sampler, pruner=pruner)
    specs = ranges_of(problem, strategy)
    trials = []

    def objective(trial):
        params = {}
        for name, kind, lo, hi, log in specs:
            if kind == "int":
                params[name] = str(trial.suggest_int(name, int(lo), int(hi), log=log))
            else:
                params[name] = repr(trial.suggest_float(name, lo, hi, log=log))
        if pruner is None:
            loss = problems.evaluate(problem, params)
            trials.append((params, loss, None))
            return loss
        reported = []

        def report(epoch, value):
            reported.append(value)
            trial.report(value, epoch)
            return trial.should_prune()

        # A pruned trial's result is its last report, as a stopped job's final objective is its
        # last emission in SageMaker.
        loss = problems.evaluate_epochs(problem, params, problems.HYPERBAND_MAX_EPOCHS, report)
        trials.append((params, loss, len(reported)))
        if len(reported) < problems.HYPERBAND_MAX_EPOCHS:
            raise optuna.TrialPruned()
        return loss

    study.optimize(objective, n_trials=budget)
    return (problem, strategy, seed), trials


# --- statistics -----------------------------------------------------------------------------------

def percentile(values, q):
    values = sorted(values)
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def waste(problem, strategy, trials, parallel=1):
    """(repeats, trials on a bound, returns to a bad bound) of one run. A bound (a continuous
    range's MinValue or MaxValue) is bad once trials have used it and the best of them is worse
    than the median of the run's results so far: going back to it wastes a trial. With `parallel`
    trials out at once (--direct --parallel, results in launch order), a trial is judged on the
    results known when it was suggested, those of the trials `parallel` or more before it."""
    specs = [s for s in ranges_of(problem, strategy) if s[1] == "float"]
    seen = set()
    repeats = on_bound = bad_returns = 0
    best_at = {}  # (name, bound) -> the best loss of the known trials there
    losses = []  # of the known trials

    def bounds_of(params):
        return [(name, v) for name, _, lo, hi, _ in specs
                for v in (float(params[name]),) if v in (lo, hi)]

    for i, (params, _, _) in enumerate(trials):
        known = i - parallel + 1  # trials[:known] have reported
        while len(losses) < known:
            done_params, done_loss, _ = trials[len(losses)]
            for b in bounds_of(done_params):
                best_at[b] = min(best_at.get(b, done_loss), done_loss)
            losses.append(done_loss)
        key = tuple(sorted((k, float(v)) for k, v in params.items()))
        repeats += key in seen
        seen.add(key)
        bounds = bounds_of(params)
        on_bound += bool(bounds)
        if losses:
            median = statistics.median(losses)
            bad_returns += any(b in best_at and best_at[b] > median for b in bounds)
    return repeats, on_bound, bad_returns


# (ours, theirs) pairs judged beyond seed noise: is ours below theirs?
JUDGED = (("Bayesian", "TPE"), ("Hyperband", "TPE+HB"))


def summarize(results, a):
    """{problem@budget: {strategy: {median, p80, bests[, epochs]}, "p": {ours<theirs: p}}} and
    {strategy: waste totals}."""
    table = {}
    for problem in a.problems:
        for budget in a.budgets:
            row = {}
            for strategy in a.strategies:
                if not runs_problem(strategy, problem):
                    continue
                runs = [results[(problem, run_name(strategy, budget, a), seed)][:budget]
                        for seed in range(1, a.seeds + 1)]
                bests = [min(loss for _, loss, _ in run) for run in runs]
                row[strategy] = {"median": statistics.median(bests),
                                 "p80": percentile(bests, 0.8), "bests": bests}
                if strategy in EARLY_STOPPING:
                    row[strategy]["epochs"] = statistics.median(
                        sum(epochs for _, _, epochs in run) for run in runs)
            row["p"] = {}
            for ours, theirs in JUDGED:
                if ours in row and theirs in row and a.seeds >= 3:
                    from scipy.stats import mannwhitneyu
                    row["p"]["%s<%s" % (ours, theirs)] = mannwhitneyu(
                        row[ours]["bests"], row[theirs]["bests"], alternative="less").pvalue
            table["%s@%d" % (problem, budget)] = row
    wasted = {}
    for strategy in a.strategies + [run_name(s, b, a) for s in a.strategies
                                    if s in BUDGET_AWARE for b in a.budgets[:-1]]:
        direct = split_name(strategy, a)[0] in ("Bayesian", "Random")
        parallel = a.parallel if direct else 1
        totals = [0, 0, 0, 0]
        for problem in a.problems:
            if not runs_problem(split_name(strategy, a)[0], problem):
                continue
            for seed in range(1, a.seeds + 1):
                trials = results[(problem, strategy, seed)]
                r, b, back = waste(problem, strategy, trials, parallel)
                totals = [totals[0] + len(trials), totals[1] + r, totals[2] + b,
                          totals[3] + back]
        wasted[strategy] = dict(zip(("trials", "repeats", "on_bound", "bad_bound_returns"),
                                    totals))
    return table, wasted


def print_table(table, wasted, a):
    for group in ([s for s in a.strategies if s not in EARLY_STOPPING],
                  [s for s in a.strategies if s in EARLY_STOPPING]):
        if not group:
            continue
        print("\n%-22s " % "problem@budget" + " ".join("%22s" % n for n in group) + "   p")
        for key, row in table.items():
            if not all(n in row for n in group):
                continue
            cells = ["%10.4g / %9.4g" % (row[n]["median"], row[n]["p80"]) for n in group]
            p = " ".join("%s %.3f" % (k, v) for k, v in row["p"].items()
                         if k.split("<")[0] in group)
            print("%-22s " % key + " ".join("%22s" % c for c in cells) + "   " + p)
            if group[0] in EARLY_STOPPING:
                print("%-22s " % "  epochs (median)" +
                      " ".join("%22g" % row[n]["epochs"] for n in group))
    print("(cells: median / 80th percentile of the best validation loss over %d seeds; epochs: "
          "one is %d boosting rounds, a full trial %d)" % (
              a.seeds, problems.ROUNDS_PER_EPOCH, problems.HYPERBAND_MAX_EPOCHS))
    print("\n%-16s %8s %8s %9s %18s" % ("strategy", "trials", "repeats", "on bound",
                                        "bad-bound returns"))
    for n, w in wasted.items():
        print("%-16s %8d %8d %9d %18d" % (n, w["trials"], w["repeats"], w["on_bound"],
                                          w["bad_bound_returns"]))


def load_runs(path):
    """The runs of an earlier --out file (older files have no epochs per trial)."""
    with open(path) as f:
        data = json.load(f)
    return {(r["problem"], r["strategy"], r["seed"]):
            [tuple(t) if len(t) == 3 else (t[0], t[1], None) for t in r["trials"]]
            for r in data["runs"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default="build/bin", help="folder of amtd, amt-worker, amt")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budgets", default="20,50")
    parser.add_argument("--problems", default=",".join(problems.PROBLEMS))
    parser.add_argument("--strategies", default=",".join(OURS + OPTUNA),
                        help="any of %s (ours) and %s (Optuna's)" % (
                            ",".join(OURS), ",".join(OPTUNA)))
    parser.add_argument("--merge", action="append", default=[],
                        help="an earlier --out file whose runs are used instead of running them")
    parser.add_argument("--epoch-seconds", type=float, default=0.1,
                        help="the least time an epoch of our Hyperband's trainer takes (real "
                        "epochs take far longer than amtd's stop: its log shipper batches lines "
                        "for up to 50 ms; unpaced, an epoch of 10 rounds takes about 2 ms and a "
                        "stopped trial trains on for ten or more epochs before SIGTERM lands)")
    parser.add_argument("--slots", type=int, default=2, help="amtd's local worker's slots")
    parser.add_argument("--out", help="write every trial and the table as JSON")
    parser.add_argument("--direct", action="store_true",
                        help="run Bayesian and Random through strategy_loop (in --bin) instead of "
                        "amtd: the same trials as amtd's (the objective is what amtd parses), "
                        "without a process per trial")
    parser.add_argument("--design", type=int, default=0,
                        help="with --direct: BayesianOptions::initial_design_size (0: default)")
    parser.add_argument("--option", action="append", default=[],
                        help="with --direct: a BayesianOptions knob name=value (repeatable)")
    parser.add_argument("--parallel", type=int, default=1,
                        help="with --direct: trials out at once (MaxParallelTrainingJobs, every "
                        "job taking the same time: each later trial is suggested with the "
                        "others still running); Optuna's runs stay sequential")
    a = parser.parse_args()
    if a.parallel < 1 or (a.parallel > 1 and not a.direct):
        parser.error("--parallel needs --direct and a value of at least 1")
    a.budgets = sorted(int(b) for b in a.budgets.split(","))
    a.problems = a.problems.split(",")
    a.strategies = a.strategies.split(",")
    if any(s in OPTUNA for s in a.strategies):
        ensure_optuna()
    budget = max(a.budgets)
    seeds = range(1, a.seeds + 1)
    start = time.monotonic()
    results = {}
    for path in a.merge:
        results.update(load_runs(path))
    names = list(dict.fromkeys(run_name(s, b, a) for s in a.strategies for b in a.budgets))
    wanted = [(p, n, seed) for p in a.problems for n in names for seed in seeds
              if runs_problem(split_name(n, a)[0], p) and (p, n, seed) not in results]
    ours = [run for run in wanted if split_name(run[1], a)[0] in OURS]
    if a.direct:
        direct = [run for run in ours if run[1] != "Hyperband"]
        ours = [run for run in ours if run[1] == "Hyperband"]
        binary = os.path.join(a.bin, "strategy_loop")
        t = time.monotonic()
        with multiprocessing.Pool(a.slots) as pool:
            for key, trials in pool.imap_unordered(
                    run_direct, [run + split_name(run[1], a) +
                                 (binary, a.design, a.option, a.parallel)
                                 for run in direct]):
                results[key] = trials
        print("[real] direct: %d runs in %.0f s" % (len(direct), time.monotonic() - t),
              flush=True)
    if ours:
        results.update(run_ours(a, ours))
        print("[real] amtd: %d runs in %.0f s" % (len(ours), time.monotonic() - start),
              flush=True)
    theirs = [run + (budget,) for run in wanted if run[1] in OPTUNA]
    if theirs:
        t = time.monotonic()
        with multiprocessing.Pool(a.slots) as pool:
            for key, trials in pool.imap_unordered(run_optuna, theirs):
                results[key] = trials
        print("[real] Optuna: %d runs in %.0f s" % (len(theirs), time.monotonic() - t),
              flush=True)
    table, wasted = summarize(results, a)
    print_table(table, wasted, a)
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"table": table, "wasted": wasted,
                       "runs": [{"problem": k[0], "strategy": k[1], "seed": k[2], "trials": v}
                                for k, v in results.items()
                                if split_name(k[1], a)[0] in a.strategies]},
                      f, indent=1)


if __name__ == "__main__":
    main()
