#!/usr/bin/python3
"""End-to-end overhead per job-slot, as a user's integration test sees it (issue 38).

One command (after a build):
    /usr/bin/python3 bench/orchestrator/end_to_end.py [--jobs 200] [--parallel 2] [--poll-ms 50] \
        [--work-dir DIR]

amtd runs on its own (build/bin/amtd on free ports, its local worker with --slots PARALLEL). A
Random tuning job of JOBS trivial training jobs (the toy trainer, 1 epoch), PARALLEL at a time, is
created with the amt CLI, and DescribeHyperParameterTuningJob is polled through the HTTP endpoint
(boto3) every POLL_MS until it is Completed. Baseline, in the same run: the same trainer started
JOBS times with posix_spawn, PARALLEL at a time, each in a prepared /opt/ml-like folder. The
overhead per job-slot is (amtd's wall time - the baseline's) * PARALLEL / JOBS.

Where the time goes: amtd's, amt-worker's and its jobs' (amt-job-shim and the trainer) CPU
seconds during the run (/proc), the CLI's
create call, and per training job, from ListTrainingJobsForHyperParameterTuningJob, the median
gap between a job's end and the next launch in its slot and the median time from a job's creation
to its training start and from its training end to its Completed state being visible.
"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "src"))
import amt_local  # noqa: E402


def cpu_seconds(pid, children=False):
    """User + system CPU seconds of `pid` itself, or (children=True) of its reaped children."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(v) for v in (fields[13:15] if children else fields[11:13]))
    return ticks / os.sysconf("SC_CLK_TCK")


def unjournaled_ext4(path):
    """Whether `path` lies on an ext4 file system without a journal (no /proc/fs/jbd2 entry for
    its device). Such an ext4 allocates no inode that was freed in the last 5 s (305 s while its
    inode-table block is still dirty) and checks each one it passes over, so every file a run
    creates costs more the more files earlier runs deleted in the last few minutes."""
    dev = os.stat(path).st_dev
    try:
        name = pathlib.Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}").resolve().name
    except OSError:
        return False
    if not pathlib.Path(f"/proc/fs/ext4/{name}").exists():
        return False
    return not any(pathlib.Path("/proc/fs/jbd2").glob(f"{name}-*"))


def bare(trainer, jobs, parallel, work):
    """Seconds to run `trainer train` `jobs` times, `parallel` at a time, with posix_spawn."""
    envs = []
    for i in range(jobs):
        d = work / f"b{i}"
        for sub in ("config", "model", "output"):
            (d / sub).mkdir(parents=True)
        (d / "config" / "hyperparameters.json").write_text(json.dumps(
            {"learning_rate": "0.01", "num_layers": str(1 + i % 8), "epochs": "1"}))
        envs.append(dict(os.environ, SM_INPUT_CONFIG_DIR=str(d / "config"),
                         SM_MODEL_DIR=str(d / "model"), SM_OUTPUT_DIR=str(d / "output")))
    devnull = os.open(os.devnull, os.O_WRONLY)
    start = time.monotonic()
    running = set()
    for env in envs:
        if len(running) >= parallel:
            pid, _ = os.wait()
            running.discard(pid)
        running.add(os.posix_spawn(trainer, [trainer, "train"], env,
                                   file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)]))
    while running:
        pid, _ = os.wait()
        running.discard(pid)
    elapsed = time.monotonic() - start
    os.close(devnull)
    return elapsed


def request(jobs, parallel):
    job = json.loads((ROOT / "examples" / "random-tuning.json").read_text())
    job["HyperParameterTuningJobName"] = "end-to-end"
    job["HyperParameterTuningJobConfig"]["ResourceLimits"] = {
        "MaxNumberOfTrainingJobs": jobs, "MaxParallelTrainingJobs": parallel}
    job["TrainingJobDefinition"]["StaticHyperParameters"] = {"epochs": "1"}
    job["TrainingJobDefinition"]["AlgorithmSpecification"]["TrainingImage"] = str(
        ROOT / "build" / "bin" / "amt-toy-trainer")
    return job


def through_amtd(a, work):
    import boto3
    out = {}
    with amt_local.Amtd(a.bin, *a.amtd_flag, slots=a.parallel, quiet=True,
                        data_dir=work / "data") as amtd:
        sm = boto3.client("sagemaker", **amtd.boto3_kwargs())
        sm.list_hyper_parameter_tuning_jobs()  # the connection, before the clock starts
        worker = int(subprocess.run(["pgrep", "-P", str(amtd.pid), "amt-worker"],
                                    capture_output=True, text=True).stdout.split()[0])
        path = work / "request.json"
        path.write_text(json.dumps(request(a.jobs, a.parallel)))
        cpu0 = cpu_seconds(amtd.pid), cpu_seconds(worker), cpu_seconds(worker, children=True)
        start = time.monotonic()
        start_epoch = time.time()
        subprocess.run(amtd.amt_command("create-hyper-parameter-tuning-job",
                                        "--cli-input-json", "file://" + str(path)),
                       check=True, capture_output=True)
        out["create_s"] = time.monotonic() - start
        polls = 0
        while True:
            polls += 1
            status = sm.describe_hyper_parameter_tuning_job(
                HyperParameterTuningJobName="end-to-end")["HyperParameterTuningJobStatus"]
            if status != "InProgress":
                break
            time.sleep(a.poll_ms / 1000)
        out["wall_s"] = time.monotonic() - start
        seen_epoch = time.time()
        out["status"] = status
        out["polls"] = polls
        out["amtd_cpu_s"] = cpu_seconds(amtd.pid) - cpu0[0]
        out["worker_cpu_s"] = cpu_seconds(worker) - cpu0[1]
        out["jobs_cpu_s"] = cpu_seconds(worker, children=True) - cpu0[2]  # shims + trainers
        pages = sm.get_paginator("list_training_jobs_for_hyper_parameter_tuning_job").paginate(
            HyperParameterTuningJobName="end-to-end", MaxResults=100)
        summaries = [s for page in pages for s in page["TrainingJobSummaries"]]
    summaries.sort(key=lambda s: s["CreationTime"])
    ts = lambda s, k: s[k].timestamp() if k in s else None  # noqa: E731
    out["create_to_start_ms"] = 1000 * statistics.median(
        ts(s, "TrainingStartTime") - ts(s, "CreationTime") for s in summaries
        if ts(s, "TrainingStartTime"))
    out["train_ms"] = 1000 * statistics.median(
        ts(s, "TrainingEndTime") - ts(s, "TrainingStartTime") for s in summaries
        if ts(s, "TrainingEndTime"))
    # A slot's next launch follows the end of one of its jobs: each creation after the first
    # PARALLEL, matched with the latest end before it.
    ends = sorted(ts(s, "TrainingEndTime") for s in summaries if ts(s, "TrainingEndTime"))
    gaps = []
    for s in summaries[a.parallel:]:
        before = [e for e in ends if e <= ts(s, "CreationTime")]
        if before:
            gaps.append(ts(s, "CreationTime") - before[-1])
    out["end_to_next_launch_ms"] = 1000 * statistics.median(gaps) if gaps else None
    out["jobs"] = len(summaries)
    # The fixed part of the run: from the CLI's start to the first training start, and from the
    # last training end to the poll that saw Completed.
    starts = [ts(s, "TrainingStartTime") for s in summaries if ts(s, "TrainingStartTime")]
    out["first_start_ms"] = 1000 * (min(starts) - start_epoch) if starts else None
    out["last_end_to_seen_ms"] = 1000 * (seen_epoch - ends[-1]) if ends else None
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=200)
    p.add_argument("--parallel", type=int, default=2)
    p.add_argument("--poll-ms", type=float, default=50)
    p.add_argument("--bin", default=str(ROOT / "build" / "bin"))
    p.add_argument("--json", help="also write the results here")
    p.add_argument("--work-dir", help="where the run's files go (amtd's data, the jobs' folders, "
                   "the baseline's folders); default: the system's temporary directory")
    p.add_argument("--amtd-flag", action="append", default=[],
                   help="one more amtd flag (repeat; e.g. --amtd-flag=--sqlite-sync=normal)")
    a = p.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="amt-e2e-", dir=a.work_dir))
    if unjournaled_ext4(work):
        print(f"note: {work.parent} is on ext4 without a journal: back-to-back runs slow down "
              "(inodes freed by earlier runs are skipped, one by one, for up to 5 minutes); "
              "see bench/README.md, or pass --work-dir on a journaled file system",
              file=sys.stderr)
    try:
        base = bare(os.path.join(a.bin, "amt-toy-trainer"), a.jobs, a.parallel, work / "bare")
        r = through_amtd(a, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    r["bare_s"] = base
    r["overhead_ms_per_job_slot"] = (r["wall_s"] - base) * 1000 * a.parallel / a.jobs
    print(f"{a.jobs} jobs, {a.parallel} at a time, Describe every {a.poll_ms:g} ms")
    print(f"bare posix_spawn loop   {base:7.3f} s  {a.jobs / base:7.1f} jobs/s")
    print(f"amtd (CLI create)       {r['wall_s']:7.3f} s  {a.jobs / r['wall_s']:7.1f} jobs/s  "
          f"({r['status']}, {r['jobs']} jobs, {r['polls']} polls)")
    print(f"overhead per job-slot   {r['overhead_ms_per_job_slot']:.2f} ms (target <= 5)")
    print(f"where: CLI create {r['create_s'] * 1000:.0f} ms; CPU amtd {r['amtd_cpu_s']:.2f} s, "
          f"amt-worker {r['worker_cpu_s']:.2f} s, its jobs (amt-job-shim and the trainer) "
          f"{r['jobs_cpu_s']:.2f} s; per job (medians): creation to training "
          f"start {r['create_to_start_ms']:.1f} ms, training {r['train_ms']:.1f} ms, a slot's "
          f"end to its next launch {r['end_to_next_launch_ms']:.1f} ms")
    print(f"fixed part: the CLI's start to the first training start "
          f"{r['first_start_ms']:.0f} ms, the last training end to the poll that saw Completed "
          f"{r['last_end_to_seen_ms']:.0f} ms")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(r, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
