#!/usr/bin/env python3
"""Orchestrator overhead: trials per second through amtd vs. the same trainer processes run bare.

One command (after a build):
    /usr/bin/python3 bench/orchestrator/throughput.py [--trials 400] [--parallel 4] [--epochs 3]

Baseline, measured in the same run: the toy trainer launched `trials` times directly, `parallel`
at a time, each in a prepared /opt/ml-like folder (what a hand-written loop would do). Then the
same number of trials as one Random tuning job through `amt run` (embedded amtd, a local
amt-worker, SQLite state, metric parsing, model.tar.gz upload). Prints both wall times, trials/s
and the overhead per trial, and saves them as JSON. The overhead is also given per job-slot in
the steady state: both sides are run a second time with only `parallel` trials, and that run's
time (amtd's and the worker's start, the tuning job's creation and end) is taken off both before
the difference is divided by the remaining trials.
"""
import argparse
import concurrent.futures
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def baseline(binary, trials, parallel, epochs, work):
    def one(i):
        d = work / f"b{i}"
        (d / "config").mkdir(parents=True)
        (d / "model").mkdir()
        (d / "output").mkdir()
        (d / "config" / "hyperparameters.json").write_text(
            json.dumps({"learning_rate": "0.01", "num_layers": str(1 + i % 8), "epochs": str(epochs)}))
        env = dict(os.environ, SM_INPUT_CONFIG_DIR=str(d / "config"), SM_MODEL_DIR=str(d / "model"),
                   SM_OUTPUT_DIR=str(d / "output"))
        subprocess.run([binary, "train"], env=env, stdout=subprocess.DEVNULL, check=True)

    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(parallel) as pool:
        list(pool.map(one, range(trials)))
    return time.monotonic() - start


def through_amtd(amt, trials, parallel, epochs, work):
    work.mkdir(parents=True, exist_ok=True)
    job = json.loads((ROOT / "examples" / "random-tuning.json").read_text())
    job["HyperParameterTuningJobName"] = "throughput"
    job["HyperParameterTuningJobConfig"]["ResourceLimits"] = {
        "MaxNumberOfTrainingJobs": trials, "MaxParallelTrainingJobs": parallel}
    job["TrainingJobDefinition"]["StaticHyperParameters"] = {"epochs": str(epochs)}
    path = work / "throughput.json"
    path.write_text(json.dumps(job))
    image_map = (ROOT / "examples" / "image-map.json").read_text().replace(
        "${IMAGE_MAP_DIR}", str(ROOT / "examples"))
    (work / "image-map.json").write_text(image_map)
    start = time.monotonic()
    subprocess.run([amt, "run", str(path), "--data-dir", str(work / "data"), "--quiet"],
                   stdout=subprocess.DEVNULL, check=True)
    return time.monotonic() - start


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=400)
    p.add_argument("--parallel", type=int, default=4)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--bin", default=str(ROOT / "build" / "bin"))
    p.add_argument("--json", default="bench/orchestrator/throughput.json")
    a = p.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="amt-throughput-"))
    try:
        trainer = os.path.join(a.bin, "amt-toy-trainer")
        amt = os.path.join(a.bin, "amt")
        bare = baseline(trainer, a.trials, a.parallel, a.epochs, work / "bare")
        amtd = through_amtd(amt, a.trials, a.parallel, a.epochs, work / "amtd")
        bare_small = baseline(trainer, a.parallel, a.parallel, a.epochs, work / "bare-small")
        amtd_small = through_amtd(amt, a.parallel, a.parallel, a.epochs, work / "amtd-small")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = {
        "trials": a.trials, "parallel": a.parallel, "epochs": a.epochs,
        "bare_seconds": round(bare, 3), "amtd_seconds": round(amtd, 3),
        "bare_trials_per_second": round(a.trials / bare, 1),
        "amtd_trials_per_second": round(a.trials / amtd, 1),
        "overhead_ms_per_trial_slot": round((amtd - bare) * 1000 * a.parallel / a.trials, 2),
        "ratio_amtd_to_bare": round(amtd / bare, 2),
        "bare_small_seconds": round(bare_small, 3), "amtd_small_seconds": round(amtd_small, 3),
        "steady_overhead_ms_per_trial_slot": round(
            ((amtd - amtd_small) - (bare - bare_small)) * 1000 * a.parallel
            / max(1, a.trials - a.parallel), 2),
    }
    print(f"{a.trials} trials, {a.parallel} at a time, {a.epochs} epochs each (toy trainer)")
    print(f"| run                  | wall s | trials/s |")
    print(f"|----------------------|--------|----------|")
    print(f"| bare processes       | {bare:6.2f} | {a.trials / bare:8.1f} |")
    print(f"| amt run (amtd+worker)| {amtd:6.2f} | {a.trials / amtd:8.1f} |")
    print(f"ratio amtd/bare {result['ratio_amtd_to_bare']}, overhead "
          f"{result['overhead_ms_per_trial_slot']} ms per trial per slot")
    print(f"with {a.parallel} trials: bare {bare_small:.2f} s, amt run {amtd_small:.2f} s; steady "
          f"overhead {result['steady_overhead_ms_per_trial_slot']} ms per trial per slot "
          f"(target <= 5)")
    pathlib.Path(a.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
