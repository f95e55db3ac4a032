#!/usr/bin/env python3
"""Orchestrator overhead: trials per second through amtd vs. the same trainer processes run bare.

One command (after a build):
    /usr/bin/python3 bench/orchestrator/throughput.py [--trials 400] [--parallel 4] [--epochs 3]

Baseline, measured in the same run: the toy trainer launched `trials` times directly, `parallel`
at a time, each in a prepared /opt/ml-like folder (what a hand-written loop would do). Then the
same number of trials as one Random tuning job through `amt run` (embedded amtd, a local
amt-worker, SQLite state, metric parsing, model.tar.gz upload). Prints both wall times, trials/s
and the overhead per trial, and saves them as JSON.
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
        bare = baseline(os.path.join(a.bin, "amt-toy-trainer"), a.trials, a.parallel, a.epochs, work)
        amtd = through_amtd(os.path.join(a.bin, "amt"), a.trials, a.parallel, a.epochs, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = {
        "trials": a.trials, "parallel": a.parallel, "epochs": a.epochs,
        "bare_seconds": round(bare, 3), "amtd_seconds": round(amtd, 3),
        "bare_trials_per_second": round(a.trials / bare, 1),
        "amtd_trials_per_second": round(a.trials / amtd, 1),
        "overhead_ms_per_trial_slot": round((amtd - bare) * 1000 * a.parallel / a.trials, 2),
        "ratio_amtd_to_bare": round(amtd / bare, 2),
    }
    print(f"{a.trials} trials, {a.parallel} at a time, {a.epochs} epochs each (toy trainer)")
    print(f"| run                  | wall s | trials/s |")
    print(f"|----------------------|--------|----------|")
    print(f"| bare processes       | {bare:6.2f} | {a.trials / bare:8.1f} |")
    print(f"| amt run (amtd+worker)| {amtd:6.2f} | {a.trials / amtd:8.1f} |")
    print(f"ratio amtd/bare {result['ratio_amtd_to_bare']}, overhead "
          f"{result['overhead_ms_per_trial_slot']} ms per trial per slot")
    pathlib.Path(a.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
