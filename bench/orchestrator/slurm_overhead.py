#!/usr/bin/env python3
"""Overhead per training job through Slurm (amtd --executor slurm) vs. amtd's local worker.

One command (after a build, as root; starts and stops its own one-machine Slurm cluster with
scripts/slurm-up.sh unless SLURM_CONF is already set):
    /usr/bin/python3 bench/orchestrator/slurm_overhead.py [--jobs 40] [--parallel 4]

The same Random tuning job of `jobs` trivial toy-trainer jobs (1 epoch, no sleep), `parallel` at
a time, runs twice in one run: through amtd with its local worker (`parallel` slots), then
through amtd --executor slurm (each attempt one Slurm job running a one-shot amt-worker; the
cluster offers 4 CPUs, each job asks for 1). Between them, the floor: the same trainer as plain
`sbatch --wrap` jobs. Prints the wall times (creation to the tuning job's end; first sbatch to
the last job's end) and the differences per job-slot, (T - T') x parallel / jobs: what Slurm adds
to a job (scheduling, the one-shot worker's start and connection, squeue polling) and what amtd
adds beyond bare Slurm. Saves the figures as JSON (--out).
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "src"))
import amt_local  # noqa: E402


def run_once(bin_dir, work, name, jobs, parallel, extra):
    work.mkdir(parents=True)
    job = json.loads((ROOT / "examples" / "random-tuning.json").read_text())
    job["HyperParameterTuningJobName"] = name
    job["HyperParameterTuningJobConfig"]["ResourceLimits"] = {
        "MaxNumberOfTrainingJobs": jobs, "MaxParallelTrainingJobs": parallel}
    job["TrainingJobDefinition"]["StaticHyperParameters"] = {"epochs": "1", "sleep_ms": "0"}
    path = work / "job.json"
    path.write_text(json.dumps(job))
    # amtd on free ports, its data dir in this run's folder; its stderr not shown.
    with amt_local.Amtd(bin_dir, *extra, data_dir=work / "data", quiet=True,
                        image_map=ROOT / "examples" / "image-map.json") as amtd:
        env = dict(os.environ, AMT_ENDPOINT=amtd.grpc)
        start = time.monotonic()
        subprocess.run([str(bin_dir / "amt"), "create-hyper-parameter-tuning-job",
                        "--cli-input-json", "file://" + str(path)], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        watch = subprocess.run([str(bin_dir / "amt"), "watch", name], env=env,
                               capture_output=True, text=True)
        elapsed = time.monotonic() - start
        if watch.returncode != 0:
            raise SystemExit("the tuning job %s did not complete:\n%s%s" %
                             (name, watch.stdout[-2000:], watch.stderr[-2000:]))
        return elapsed


def bare_slurm(bin_dir, work, jobs, parallel):
    """The floor: the same trainer as `jobs` plain Slurm jobs, each in a prepared folder, at
    most `parallel` at once (--cpus-per-task 1 on a 4-CPU node, and a dependency-free batch of
    sbatch calls), timed from the first sbatch to the last job's end as squeue sees it."""
    work.mkdir(parents=True)
    ids = []
    start = time.monotonic()
    for i in range(jobs):
        d = work / ("b%d" % i)
        (d / "config").mkdir(parents=True)
        (d / "model").mkdir()
        (d / "config" / "hyperparameters.json").write_text(
            json.dumps({"learning_rate": "0.01", "num_layers": str(1 + i % 8), "epochs": "1",
                        "sleep_ms": "0"}))
        script = ("SM_INPUT_CONFIG_DIR=%s SM_MODEL_DIR=%s SM_OUTPUT_DIR=%s exec %s train" %
                  (d / "config", d / "model", d, bin_dir / "amt-toy-trainer"))
        out = subprocess.run(["sbatch", "--parsable", "-o", "/dev/null", "-c", str(4 // parallel),
                              "-J", "bare-%d" % i, "--wrap", script],
                             capture_output=True, text=True, check=True)
        ids.append(out.stdout.strip().split(";")[0])
    pending = set(ids)
    while pending:
        listed = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i %T"],
                                capture_output=True, text=True, check=True).stdout.split("\n")
        states = dict(line.split() for line in listed if line.strip())
        pending = {i for i in pending if states.get(i) not in ("COMPLETED", "FAILED")}
        time.sleep(0.02)
    return time.monotonic() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=40)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--bin-dir", default=str(ROOT / "build" / "bin"))
    parser.add_argument("--out", default=str(ROOT / "bench" / "orchestrator" / "slurm_overhead.json"))
    args = parser.parse_args()
    bin_dir = pathlib.Path(args.bin_dir).resolve()
    work = pathlib.Path(tempfile.mkdtemp(prefix="amt-slurm-bench-"))
    work.chmod(0o755)  # munged wants every folder above its socket world-executable
    own_cluster = "SLURM_CONF" not in os.environ
    slurm_root = work / "slurm"
    if own_cluster:
        env = dict(os.environ, AMT_SLURM_ROOT=str(slurm_root), AMT_SLURM_CPUS="4",
                   AMT_SLURM_CLEAN="1")
        up = subprocess.run(["bash", str(ROOT / "scripts" / "slurm-up.sh")], env=env,
                            capture_output=True, text=True)
        if up.returncode != 0:
            shutil.rmtree(work, ignore_errors=True)
            raise SystemExit("slurm-up.sh failed:\n" + up.stderr)
        os.environ["SLURM_CONF"] = str(slurm_root / "slurm.conf")
    try:
        local = run_once(bin_dir, work / "local", "bench-local", args.jobs, args.parallel,
                         ["--slots", str(args.parallel)])
        bare = bare_slurm(bin_dir, work / "bare", args.jobs, args.parallel)
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
        "local_seconds": round(local, 3), "bare_slurm_seconds": round(bare, 3),
        "slurm_seconds": round(slurm, 3),
        "bare_slurm_ms_per_job_slot": round(bare * args.parallel / args.jobs * 1000, 1),
        "local_ms_per_job_slot": round(local * args.parallel / args.jobs * 1000, 1),
        "slurm_ms_per_job_slot": round(slurm * args.parallel / args.jobs * 1000, 1),
        "slurm_overhead_ms_per_job_slot": round(per_slot_ms, 1),
        # What amtd adds on top of Slurm's own cost per job.
        "amtd_over_bare_slurm_ms_per_job_slot": round(
            (slurm - bare) * args.parallel / args.jobs * 1000, 1),
    }
    print(json.dumps(result, indent=2))
    pathlib.Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
