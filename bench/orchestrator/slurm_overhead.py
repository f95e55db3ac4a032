#!/usr/bin/env python3
"""Overhead per training job through Slurm (amtd --executor slurm) vs. amtd's local worker.

One command (after a build, as root; starts and stops its own one-machine Slurm cluster with
scripts/slurm-up.sh unless SLURM_CONF is already set):
    /usr/bin/python3 bench/orchestrator/slurm_overhead.py [--jobs 40] [--parallel 4]

The same Random tuning job of `jobs` trivial toy-trainer jobs (1 epoch, no sleep), `parallel` at
a time, runs twice in one run: through amtd with its local worker (`parallel` slots), then
through amtd --executor slurm (each attempt one Slurm job running a one-shot amt-worker; the
cluster offers 4 CPUs, each job asks for 1). Prints both wall times from creation to the tuning
job's end and the difference per job-slot: (T_slurm - T_local) x parallel / jobs, the time Slurm
adds to each job (sbatch, scheduling, the one-shot worker's start and connection, squeue
polling). Saves the figures as JSON (--out).
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def start_amtd(binary, data_dir, image_map, extra):
    process = subprocess.Popen(
        [str(binary), "--port", "0", "--data-dir", str(data_dir), "--image-map", str(image_map)]
        + extra, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = process.stdout.readline()
    match = re.search(r"amtd listening on (\S+)", line)
    if not match:
        process.kill()
        raise SystemExit("amtd did not start: %r" % line)
    return process, match.group(1)


def run_once(bin_dir, work, name, jobs, parallel, extra):
    work.mkdir(parents=True)
    job = json.loads((ROOT / "examples" / "random-tuning.json").read_text())
    job["HyperParameterTuningJobName"] = name
    job["HyperParameterTuningJobConfig"]["ResourceLimits"] = {
        "MaxNumberOfTrainingJobs": jobs, "MaxParallelTrainingJobs": parallel}
    job["TrainingJobDefinition"]["StaticHyperParameters"] = {"epochs": "1", "sleep_ms": "0"}
    path = work / "job.json"
    path.write_text(json.dumps(job))
    image_map = work / "image-map.json"
    image_map.write_text((ROOT / "examples" / "image-map.json").read_text()
                         .replace("${IMAGE_MAP_DIR}", str(ROOT / "examples"))
                         .replace("${AMT_BIN}", str(bin_dir)))
    amtd, endpoint = start_amtd(bin_dir / "amtd", work / "data", image_map, extra)
    try:
        env = dict(os.environ, AMT_ENDPOINT=endpoint)
        start = time.monotonic()
        subprocess.run([str(bin_dir / "amt"), "create-hyper-parameter-tuning-job",
                        "--cli-input-json", "file://" + str(path)], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        watch = subprocess.run([str(bin_dir / "amt"), "watch", name], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        elapsed = time.monotonic() - start
        if watch.returncode != 0:
            raise SystemExit("the tuning job %s did not complete" % name)
        return elapsed
    finally:
        amtd.terminate()
        amtd.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=40)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--bin-dir", default=str(ROOT / "build" / "bin"))
    parser.add_argument("--out", default=str(ROOT / "bench" / "orchestrator" / "slurm_overhead.json"))
    args = parser.parse_args()
    bin_dir = pathlib.Path(args.bin_dir)
    work = pathlib.Path(tempfile.mkdtemp(prefix="amt-slurm-bench-"))
    own_cluster = "SLURM_CONF" not in os.environ
    slurm_root = work / "slurm"
    if own_cluster:
        env = dict(os.environ, AMT_SLURM_ROOT=str(slurm_root), AMT_SLURM_CPUS="4",
                   AMT_SLURM_CLEAN="1")
        up = subprocess.run(["bash", str(ROOT / "scripts" / "slurm-up.sh")], env=env,
                            capture_output=True, text=True)
        if up.returncode != 0:
            raise SystemExit("slurm-up.sh failed:\n" + up.stderr)
        os.environ["SLURM_CONF"] = str(slurm_root / "slurm.conf")
    try:
        local = run_once(bin_dir, work / "local", "bench-local", args.jobs, args.parallel,
                         ["--slots", str(args.parallel)])
        slurm = run_once(bin_dir, work / "slurm-run", "bench-slurm", args.jobs, args.parallel,
                         ["--executor", "slurm", "--slurm-resource-scale", "0.5",
                          "--max-slurm-jobs", str(args.parallel)])
    finally:
        if own_cluster:
            subprocess.run(["bash", str(ROOT / "scripts" / "slurm-down.sh")],
                           env=dict(os.environ, AMT_SLURM_ROOT=str(slurm_root)))
        shutil.rmtree(work, ignore_errors=True)
    per_slot_ms = (slurm - local) * args.parallel / args.jobs * 1000
    result = {
        "jobs": args.jobs, "parallel": args.parallel,
        "local_seconds": round(local, 3), "slurm_seconds": round(slurm, 3),
        "local_ms_per_job_slot": round(local * args.parallel / args.jobs * 1000, 1),
        "slurm_ms_per_job_slot": round(slurm * args.parallel / args.jobs * 1000, 1),
        "slurm_overhead_ms_per_job_slot": round(per_slot_ms, 1),
    }
    print(json.dumps(result, indent=2))
    pathlib.Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
