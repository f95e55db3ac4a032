#!/usr/bin/python3
"""Early stopping and Hyperband vs Optuna 3.1's pruners: the one command (bench/README.md).

Runs the C++ harness (stopping_bench: Random with early stopping Off, Random with Auto, Hyperband,
all in-process on simulated learning curves), then Optuna 3.1's MedianPruner and HyperbandPruner
on the same configurations and the same curves (curve_family.py, checked against the C++ family at
fixed points), and prints total epochs and final regret after --trials trials and the epochs each
method needs to reach Off's final regret, medians over the seeds, with the targets.

  /usr/bin/python3 bench/stopping/stopping_bench.py --binary build/bin/stopping_bench [--quick]

Other flags (--seeds, --first-seed, --trials, --cap, --max-epochs, --family, and the knobs --reference,
--min-reference-jobs, --best-so-far, --min-resource, --eta, --brackets, --allocation,
--few-at-rung, --weights; "--name=value" or "--name value") go to the C++ harness;
the Optuna side reads what it needs from the harness's JSON. Installs python3-optuna (Debian's
Optuna 3.1) with apt-get when it is missing.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

SYSTEM_PYTHON = "/usr/bin/python3"


def ensure_optuna():
    """Imports optuna, installing Debian's python3-optuna first when needed."""
    try:
        import optuna  # noqa: F401

        return
    except ImportError:
        pass
    installed = subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", "python3-optuna"], capture_output=True, text=True
    ).stdout.endswith("installed")
    if not installed:
        print("python3-optuna is missing: installing it with apt-get", file=sys.stderr)
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        cmd = sudo + ["apt-get", "install", "-y", "--no-install-recommends", "python3-optuna"]
        if subprocess.run(cmd, env=env).returncode != 0:
            subprocess.run(sudo + ["apt-get", "update"], env=env, check=True)
            subprocess.run(cmd, env=env, check=True)
    # Debian's package lives in the system interpreter's dist-packages.
    if os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PYTHON):
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON] + sys.argv)
    import optuna  # noqa: F401


ensure_optuna()
import optuna  # noqa: E402

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import curve_family as cf  # noqa: E402

METHODS = [
    ("off", "Random, early stopping Off"),
    ("auto", "Random, Auto"),
    ("auto_grace", "Random, Auto, grace %d"),
    ("hyperband", "Hyperband"),
    ("optuna_median", "Optuna MedianPruner"),
    ("optuna_hyperband", "Optuna HyperbandPruner"),
]


def find_binary():
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    candidates = []
    for entry in sorted(os.listdir(root)):
        path = os.path.join(root, entry, "bin", "stopping_bench")
        if entry.startswith("build") and os.access(path, os.X_OK):
            candidates.append((os.path.getmtime(path), path))
    if not candidates:
        sys.exit("stopping_bench not found under build*/bin: build it or pass --binary")
    return max(candidates)[1]


def check_agreement(data):
    """The Python family must reproduce the C++ doubles at the fixed points."""
    worst = 0.0
    for point in data["fixed_points"]:
        problem = cf.make_problem(data["family"]["name"], point["seed"])
        entry = data["problems"][point["seed"] - data["first_seed"]]
        lr, reg, layers = entry["configs"][point["index"]]
        config = cf.Config(lr, reg, layers)
        worst = max(
            worst,
            abs(cf.true_loss(problem, config, point["epoch"]) - point["true"]),
            abs(cf.observed_loss(problem, config, point["index"], point["epoch"]) - point["observed"]),
        )
    for entry in data["problems"]:
        problem = cf.make_problem(data["family"]["name"], entry["seed"])
        worst = max(worst, abs(problem.u_star - entry["u_star"]), abs(problem.r_star - entry["r_star"]))
        if not entry["same_configs"]:
            sys.exit("Random and Hyperband proposed different configurations for one seed")
    if worst > 1e-12:
        sys.exit("the C++ and Python curve families disagree: max difference %g" % worst)
    return len(data["fixed_points"]), worst


def run_optuna(kind, entry, data):
    """One sequential Optuna study over the harness's configurations: [(epochs, reported, true)]."""
    max_epochs = data["max_epochs"]
    problem = cf.make_problem(data["family"]["name"], entry["seed"])
    configs = [cf.Config(lr, reg, layers) for lr, reg, layers in entry["configs"]]
    if kind == "optuna_median":
        pruner = optuna.pruners.MedianPruner()  # n_startup_trials=5, n_warmup_steps=0
    else:
        pruner = optuna.pruners.HyperbandPruner(
            min_resource=1, max_resource=max_epochs, reduction_factor=3
        )
    study = optuna.create_study(
        study_name="stopping-bench-%d" % entry["seed"],  # HyperbandPruner hashes it into brackets
        direction="minimize",
        sampler=optuna.samplers.RandomSampler(seed=entry["seed"]),  # unused: configs are fixed
        pruner=pruner,
    )
    records = []

    def objective(trial):
        index = trial.number
        config = configs[index]
        value = None
        for epoch in range(1, max_epochs + 1):
            value = cf.observed_loss(problem, config, index, epoch)
            trial.report(value, epoch)
            if trial.should_prune():
                records.append((epoch, value, cf.true_loss(problem, config, epoch)))
                raise optuna.TrialPruned()
        records.append((max_epochs, value, cf.true_loss(problem, config, max_epochs)))
        return value

    study.optimize(objective, n_trials=len(configs))
    return records


def epochs_of(trials, n):
    return sum(t[0] for t in trials[:n])


def regret_of(trials, n, optimum):
    best = min(trials[:n], key=lambda t: t[1])  # the best reported final objective
    return best[2] - optimum


def epochs_to_reach(trials, target, optimum):
    epochs, best = 0, None
    for t in trials:
        epochs += t[0]
        if best is None or t[1] < best[1]:
            best = t
        if best[2] - optimum <= target:
            return epochs
    return math.inf


def fmt(x, spec):
    return "never" if math.isinf(x) else format(x, spec)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", help="the stopping_bench executable (default: newest build*/bin)")
    parser.add_argument("--quick", action="store_true", help="5 seeds, 150 trials per seed")
    parser.add_argument("--keep-json", help="also write the combined results to this file")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is not met")
    args, harness_flags = parser.parse_known_args()
    binary = args.binary or find_binary()
    if args.quick:
        harness_flags = ["--quick"] + harness_flags

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "harness.json")
        started = time.monotonic()
        subprocess.run([binary, "--json=" + path] + harness_flags, check=True)
        cpp_seconds = time.monotonic() - started
        with open(path) as f:
            data = json.load(f)

    points, worst = check_agreement(data)
    print(
        "\nC++ and Python curve families agree at %d fixed points (max |difference| %g); "
        "all methods see the same configurations per seed." % (points, worst)
    )

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    started = time.monotonic()
    runs = {}
    for entry in data["problems"]:
        seed_runs = dict(entry["runs"])
        for kind in ("optuna_median", "optuna_hyperband"):
            seed_runs[kind] = run_optuna(kind, entry, data)
        runs[entry["seed"]] = seed_runs
    optuna_seconds = time.monotonic() - started

    n = data["trials"]
    summary = {}
    for key, _ in METHODS:
        epochs, regret, reach = [], [], []
        for entry in data["problems"]:
            optimum = entry["optimum"]
            seed_runs = runs[entry["seed"]]
            off_regret = regret_of(seed_runs["off"], n, optimum)
            trials = seed_runs[key]
            epochs.append(epochs_of(trials, n))
            regret.append(regret_of(trials, n, optimum))
            reach.append(epochs_to_reach(trials, off_regret, optimum))
        summary[key] = {
            "epochs": statistics.median(epochs),
            "regret": statistics.median(regret),
            "reach": statistics.median(reach),
            "reach_per_seed": reach,
        }

    knobs = data["knobs"]
    print(
        "\nFamily %s, %d seeds, %d trials per tuning job run one after another, MaxResource %d "
        "epochs; epochs to reach: up to %d trials per seed. Medians over seeds.\n"
        "Auto: reference=%s, min_reference_jobs=%d, compare_best_so_far=%s, grace_epochs=%d "
        "(second row: grace_epochs=%d). Hyperband: "
        "min_resource=%d, reduction_factor=%d, brackets=%d, allocation=%s, few_at_rung=%s%s. "
        "Optuna: MedianPruner() defaults "
        "(n_startup_trials=5), HyperbandPruner(min_resource=1, max_resource=%d, reduction_factor=3)."
        % (
            data["family"]["name"], data["seeds"], n, data["max_epochs"], data["cap"],
            knobs["reference"], knobs["min_reference_jobs"], str(knobs["compare_best_so_far"]).lower(),
            knobs["grace_epochs"], knobs["auto_grace"],
            knobs["min_resource"], knobs["reduction_factor"], knobs["brackets"], knobs["allocation"],
            knobs["few_at_rung"],
            ", bracket_weights=%s" % ",".join(map(str, knobs["bracket_weights"])) if knobs.get("bracket_weights") else "",
            data["max_epochs"],
        )
    )
    off = summary["off"]
    header = "| %-28s | %8s | %6s | %8s | %6s | %16s | %6s |" % (
        "method", "epochs", "vs Off", "regret", "vs Off", "epochs to reach", "vs Off",
    )
    print("\n" + header)
    print("|" + "|".join("-" * (len(c) + 0) for c in header.split("|")[1:-1]) + "|")
    for key, name in METHODS:
        s = summary[key]
        if key == "auto_grace":
            name = name % knobs["auto_grace"]
        print(
            "| %-28s | %8.0f | %6.3f | %8.5f | %6.3f | %16s | %6s |"
            % (
                name, s["epochs"], s["epochs"] / off["epochs"], s["regret"],
                s["regret"] / off["regret"], fmt(s["reach"], ".0f"),
                fmt(s["reach"] / off["epochs"], ".3f"),
            )
        )
    print(
        "\nepochs, regret: after %d trials. regret: true loss of the job with the best reported "
        "final objective minus the family's optimum at MaxResource. epochs to reach: epochs spent "
        "until the regret first falls to Off's final regret of the same seed ('vs Off' divides by "
        "Off's total epochs)." % n
    )

    hyperband = summary["hyperband"]
    omed, ohyp = summary["optuna_median"], summary["optuna_hyperband"]
    targets = []
    # The targets bind the first Auto row (the knobs given, amtd's defaults unless changed); the
    # second row's verdicts are printed for comparison and do not count for --strict.
    for key in ("auto", "auto_grace"):
        auto = summary[key]
        binding = key == "auto"
        label = "Auto" if binding else "(for comparison) Auto with grace_epochs=%d" % knobs["auto_grace"]
        targets += [
            ("%s uses at least 30%% fewer epochs than Off" % label,
             auto["epochs"] <= 0.7 * off["epochs"], "%.3f of Off's epochs" % (auto["epochs"] / off["epochs"]), binding),
            ("%s's final regret is no more than 10%% worse than Off's" % label,
             auto["regret"] <= 1.1 * off["regret"], "%.3f of Off's regret" % (auto["regret"] / off["regret"]), binding),
            ("%s needs no more epochs than Optuna's MedianPruner to reach Off's regret" % label,
             auto["reach"] <= omed["reach"], "%s vs %s" % (fmt(auto["reach"], ".0f"), fmt(omed["reach"], ".0f")), binding),
        ]
    targets += [
        ("Hyperband reaches Off's final regret with at most a third of Off's epochs",
         hyperband["reach"] <= off["epochs"] / 3,
         "%s of Off's epochs" % fmt(hyperband["reach"] / off["epochs"], ".3f"), True),
        ("Hyperband needs no more epochs than Optuna's HyperbandPruner to reach Off's regret",
         hyperband["reach"] <= ohyp["reach"], "%s vs %s" % (fmt(hyperband["reach"], ".0f"), fmt(ohyp["reach"], ".0f")), True),
    ]
    print("\nTargets:")
    for text, met, detail, _ in targets:
        verdict = "met" if met else "NOT MET"
        if detail.startswith("never vs never"):
            verdict = "tie"  # neither reaches Off's regret within --cap trials
        print("  [%s] %s (%s)" % (verdict, text, detail))
    print("\nTime: C++ harness %.1f s (4 rows), Optuna %.1f s (2 pruners)." % (cpp_seconds, optuna_seconds))

    if args.keep_json:
        with open(args.keep_json, "w") as f:
            json.dump({"harness": data, "optuna": {s: {k: runs[s][k] for k in ("optuna_median", "optuna_hyperband")} for s in runs}, "summary": summary}, f)
    if args.strict and not all(met for _, met, _, binding in targets if binding):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
