#!/usr/bin/env python3
"""Scale: does the cost of one training job grow with the number already in the tuning job?

One command (after a build), with a python that has boto3 (the pyenv one has 1.43):
    python3 bench/orchestrator/scale.py [--jobs 10000] [--parallel 4] [--window 1000]

One Random tuning job of `jobs` trivial toy-trainer jobs (1 epoch), `parallel` at a time, created
through amtd's HTTP gateway with boto3, as a SageMaker user would. While it runs, a client
describes the tuning job and lists its first 100 training jobs by objective every `interval`
seconds (0.05 by default; 0 calls back to back), timing each call, both the whole boto3 call and
its HTTP round trip alone. Reported, all from the same run:
  - throughput (finished jobs per second) over the first `window` jobs and over the last
    `window` jobs, and their ratio (target: last >= 0.8 x first, a flat cost per job);
  - DescribeHyperParameterTuningJob and ListTrainingJobsForHyperParameterTuningJob latency, p50
    and p99, over the calls made while the last `window` jobs ran (target: p99 < 20 ms);
  - amtd's peak resident memory (VmHWM; target < 100 MB at 10,000 jobs);
  - the data directory's size per finished job (target <= 10 KB).
Saves the numbers to bench/orchestrator/scale.json.
"""
import argparse
import json
import os
import pathlib
import statistics
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "src"))
import amt_local  # noqa: E402


def percentile(values, p):
    values = sorted(values)
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def du(path):
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except FileNotFoundError:
                pass
    return total


def status_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--jobs", type=int, default=10000)
    p.add_argument("--parallel", type=int, default=4)
    p.add_argument("--window", type=int, default=1000)
    p.add_argument("--interval", type=float, default=0.05,
                   help="seconds between one Describe+List pair and the next (0: back to back)")
    p.add_argument("--amtd-arg", action="append", default=[],
                   help="an extra amtd flag, e.g. --amtd-arg=--sqlite-sync=normal (repeatable)")
    p.add_argument("--bin-dir", default=str(ROOT / "build" / "bin"))
    p.add_argument("--out", default=str(ROOT / "bench" / "orchestrator" / "scale.json"))
    args = p.parse_args()
    window = min(args.window, args.jobs // 2)

    with amt_local.Amtd(args.bin_dir, *args.amtd_arg, slots=args.parallel,
                        image_map=ROOT / "examples" / "image-map.json",
                        prefix="amt-scale-") as amtd:
        result = measure(args, window, amtd)
    print("%d jobs, %d at a time (toy trainer, 1 epoch), through the HTTP gateway with boto3"
          % (args.jobs, args.parallel))
    print("| measure | value |\n|---|---|")
    for key, value in result.items():
        print("| %s | %s |" % (key, value))
    pathlib.Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


def measure(args, window, amtd):
    """Runs the tuning job through `amtd` (an amt_local.Amtd); the figures."""
    data = pathlib.Path(amtd.data_dir)
    sm = amtd.client("sagemaker")

    job = json.loads((ROOT / "examples" / "random-tuning.json").read_text())
    job["HyperParameterTuningJobName"] = "scale"
    job["HyperParameterTuningJobConfig"]["ResourceLimits"] = {
        "MaxNumberOfTrainingJobs": args.jobs, "MaxParallelTrainingJobs": args.parallel}
    job["TrainingJobDefinition"]["StaticHyperParameters"] = {"epochs": "1"}

    finished = []  # (time, finished jobs, amtd CPU seconds)
    calls = {"describe": [], "list": []}  # (finished jobs when called, seconds, HTTP seconds)

    # The HTTP round trip alone (amtd's share of a call), beside the whole boto3 call (which adds
    # botocore's request signing and its parsing of the reply).
    session = sm._endpoint.http_session
    plain_send = session.send
    http = []

    def timed_send(request):
        start = time.perf_counter()
        response = plain_send(request)
        http.append(time.perf_counter() - start)
        return response

    session.send = timed_send
    ticks = os.sysconf("SC_CLK_TCK")

    def cpu_seconds(pid):  # user + system time of all of a process's threads
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / ticks

    worker_pid = []

    def worker_cpu():  # amtd's local amt-worker (its trainers are not counted)
        if not worker_pid:
            try:
                worker_pid.append(int((data / "worker.pid").read_text().split()[0]))
            except (FileNotFoundError, ValueError, IndexError):
                return 0.0
        try:
            return cpu_seconds(worker_pid[0])
        except FileNotFoundError:
            return 0.0
    done = threading.Event()

    def finished_jobs(d):
        c = d["TrainingJobStatusCounters"]
        return c["Completed"] + c["Stopped"] + c["NonRetryableError"] + c["RetryableError"]

    def client():
        while not done.is_set():
            start = time.perf_counter()
            d = sm.describe_hyper_parameter_tuning_job(HyperParameterTuningJobName="scale")
            took = time.perf_counter() - start
            n = finished_jobs(d)
            finished.append((time.monotonic(), n, cpu_seconds(amtd.pid), worker_cpu()))
            calls["describe"].append((n, took, http[-1]))
            start = time.perf_counter()
            sm.list_training_jobs_for_hyper_parameter_tuning_job(
                HyperParameterTuningJobName="scale", SortBy="FinalObjectiveMetricValue",
                SortOrder="Ascending", MaxResults=100)
            calls["list"].append((n, time.perf_counter() - start, http[-1]))
            if d["HyperParameterTuningJobStatus"] != "InProgress":
                done.set()
            done.wait(args.interval)

    started = time.monotonic()
    sm.create_hyper_parameter_tuning_job(**job)
    thread = threading.Thread(target=client)
    thread.start()
    thread.join()
    wall = time.monotonic() - started
    peak_kb = status_kb(amtd.pid, "VmHWM")
    rss_kb = status_kb(amtd.pid, "VmRSS")
    amtd.stop()
    disk = du(data)

    def at(n):  # (time, amtd CPU seconds, worker CPU seconds) when `n` jobs had first finished
        return next((t, c, w) for t, k, c, w in finished if k >= n)

    first = window / (at(window)[0] - started)
    last = window / (at(args.jobs)[0] - at(args.jobs - window)[0])
    # amtd's CPU time per finished job over the same windows: the cost per job without the
    # machine's other load (wall-clock throughput also moves with whatever else runs).
    cpu_first = (at(window)[1] - finished[0][2]) / (window - finished[0][1])
    cpu_last = (at(args.jobs)[1] - at(args.jobs - window)[1]) / window
    worker_first = (at(window)[2] - finished[0][3]) / (window - finished[0][1])
    worker_last = (at(args.jobs)[2] - at(args.jobs - window)[2]) / window
    late = [c for c in calls["describe"] if c[0] >= args.jobs - window]
    late_list = [c for c in calls["list"] if c[0] >= args.jobs - window]

    def ms(values, p):
        return round(1000 * percentile(values, p), 1)
    result = {
        "jobs": args.jobs, "parallel": args.parallel, "window": window, "wall_s": round(wall, 1),
        "throughput_first_jobs_per_s": round(first, 1),
        "throughput_last_jobs_per_s": round(last, 1), "ratio_last_first": round(last / first, 2),
        "amtd_cpu_ms_per_job_first": round(1000 * cpu_first, 2),
        "amtd_cpu_ms_per_job_last": round(1000 * cpu_last, 2),
        "cpu_ratio_last_first": round(cpu_last / cpu_first, 2),
        "worker_cpu_ms_per_job_first": round(1000 * worker_first, 2),
        "worker_cpu_ms_per_job_last": round(1000 * worker_last, 2),
        "describe_ms_p50": ms([c[1] for c in late], 50),
        "describe_ms_p99": ms([c[1] for c in late], 99),
        "describe_http_ms_p50": ms([c[2] for c in late], 50),
        "describe_http_ms_p99": ms([c[2] for c in late], 99),
        "list_ms_p50": ms([c[1] for c in late_list], 50),
        "list_ms_p99": ms([c[1] for c in late_list], 99),
        "list_http_ms_p50": ms([c[2] for c in late_list], 50),
        "list_http_ms_p99": ms([c[2] for c in late_list], 99),
        "amtd_peak_rss_mb": round(peak_kb / 1024, 1), "amtd_rss_mb": round(rss_kb / 1024, 1),
        "data_dir_mb": round(disk / 2**20, 1), "disk_kb_per_job": round(disk / 1024 / args.jobs, 1),
        "calls": len(calls["describe"]),
    }
    return result


if __name__ == "__main__":
    main()
