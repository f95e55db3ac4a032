#!/usr/bin/env python3
"""amtd's edge under many concurrent S3 PUTs: ListTrainingJobs latency while 1,000 PUTs run.

One command (after a build):
    /usr/bin/python3 bench/gateway/many_puts.py [--puts 1000] [--kib 64] [--seconds 3]

Issue 32 measured that 1,000 concurrent PUTs made a ListTrainingJobs wait 3.3 s, when all HTTP
ran on one thread. Starts build/bin/amtd (SQLite, the HTTP gateway) on free ports with 20
finished training jobs to list. Baseline, measured in the same run: ListTrainingJobs through
boto3, back to back for `--seconds`, nothing else running. Then `--puts` PUTs of `--kib` KiB
objects, every one on a connection of its own and all started at once (a barrier; amtd's
--http-max-connections raised above `--puts`), while the
same ListTrainingJobs calls run in another process until the last PUT is answered. Prints both
phases' latencies and the PUTs' time; checks every object is there, whole; saves JSON.
Target (issue 32): ListTrainingJobs p99 <= 50 ms during the PUTs.

`--strict` exits 1 when the target is missed or an object is not whole. CI runs it as the test
integration.edge_many_puts with a coarser limit (a shared 2-core machine).
"""
import argparse
import hashlib
import http.client
import json
import multiprocessing
import pathlib
import statistics
import sys
import threading
import time
import urllib.parse

import boto3
import botocore.config

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "src"))
import amt_local  # noqa: E402


def summary(latencies):
    ordered = sorted(latencies)
    return {"calls": len(ordered), "p50_ms": round(statistics.median(ordered), 2),
            "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 2),
            "max_ms": round(ordered[-1], 2)}


def lister(kwargs):
    config = botocore.config.Config(retries={"max_attempts": 0}, read_timeout=120)
    return boto3.client("sagemaker", config=config, **kwargs)


def list_for(sm, done):
    latencies = []
    while not done():
        start = time.perf_counter()
        listed = sm.list_training_jobs(MaxResults=100)["TrainingJobSummaries"]
        latencies.append((time.perf_counter() - start) * 1000)
        assert len(listed) == 20, len(listed)
    return latencies


def list_until(kwargs, stop, results):
    sm = lister(kwargs)
    results["busy"] = list_for(sm, stop.is_set)


def put_all(url, count, body):
    """`count` PUTs on a connection each, started together; returns the statuses and seconds."""
    host = urllib.parse.urlsplit(url)
    barrier = threading.Barrier(count)
    statuses = [0] * count

    def put(i):
        connection = http.client.HTTPConnection(host.hostname, host.port, timeout=120)
        connection.connect()
        barrier.wait()
        connection.request("PUT", "/many/key-%04d" % i, body=body,
                           headers={"Content-Length": str(len(body))})
        statuses[i] = connection.getresponse().status
        connection.close()

    threads = [threading.Thread(target=put, args=(i,)) for i in range(count)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses, time.monotonic() - start


def run(a):
    body = hashlib.sha256(b"many").digest() * (a.kib * 1024 // 32)
    # amtd without credentials: the PUTs are plain HTTP, as from a script that does not sign.
    # Its cap on open connections (512 by default, against slow-loris clients) is raised above
    # the PUTs' count, so that every PUT is served.
    with amt_local.Amtd(a.bin, "--http-max-connections", str(a.puts + 64), slots=4,
                        prefix="amt-many-") as amtd:
        kwargs = amtd.boto3_kwargs()
        sm = lister(kwargs)
        s3 = boto3.client("s3", **kwargs)
        work = pathlib.Path(amtd.work)
        trainer = work / "done.sh"
        trainer.write_text("#!/bin/sh\necho done\n")
        trainer.chmod(0o755)
        for i in range(20):
            sm.create_training_job(
                TrainingJobName="listed-%02d" % i,
                AlgorithmSpecification={"TrainingImage": str(trainer),
                                        "TrainingInputMode": "File"},
                RoleArn="arn:aws:iam::123456789012:role/SageMakerRole",
                OutputDataConfig={"S3OutputPath": "s3://many-out/out"},
                ResourceConfig={"InstanceType": "ml.m5.large", "InstanceCount": 1,
                                "VolumeSizeInGB": 1},
                StoppingCondition={"MaxRuntimeInSeconds": 600})
        for i in range(20):  # all ended, so both phases list the same jobs
            while sm.describe_training_job(TrainingJobName="listed-%02d" % i)[
                    "TrainingJobStatus"] not in ("Completed", "Failed"):
                time.sleep(0.05)
        s3.create_bucket(Bucket="many")

        t_end = time.monotonic() + a.seconds
        idle = list_for(sm, lambda: time.monotonic() > t_end)

        ctx = multiprocessing.get_context("spawn")
        results = ctx.Manager().dict()
        stop = ctx.Event()
        listing = ctx.Process(target=list_until, args=(kwargs, stop, results))
        listing.start()
        statuses, seconds = put_all(amtd.url, a.puts, body)
        stop.set()
        listing.join()
        busy = list(results["busy"])

        stored = 0
        whole = 0
        paginator = s3.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket="many"):
            for o in page.get("Contents", []):
                stored += 1
                whole += o["Size"] == len(body)
    return {
        "puts": a.puts, "kib": a.kib, "idle": summary(idle), "puts_running": summary(busy),
        "puts_s": round(seconds, 2), "puts_answered_200": statuses.count(200),
        "objects_stored": stored, "objects_whole": whole,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", default=str(ROOT / "build" / "bin"))
    p.add_argument("--puts", type=int, default=1000)
    p.add_argument("--kib", type=int, default=64)
    p.add_argument("--seconds", type=float, default=3)
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when the target is missed or an object is not whole")
    p.add_argument("--p99-limit-ms", type=float, default=50,
                   help="the ListTrainingJobs p99 target while the PUTs run")
    p.add_argument("--json", help="also write the results here")
    a = p.parse_args()
    r = run(a)
    print(json.dumps(r, indent=2))
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(r, indent=2))
    failures = []
    if r["puts_answered_200"] != a.puts:
        failures.append("%d of %d PUTs answered 200" % (r["puts_answered_200"], a.puts))
    if r["objects_stored"] != a.puts or r["objects_whole"] != a.puts:
        failures.append("%d objects stored, %d whole, of %d" % (
            r["objects_stored"], r["objects_whole"], a.puts))
    if r["puts_running"]["p99_ms"] > a.p99_limit_ms:
        failures.append("ListTrainingJobs p99 %.1f ms > %.1f ms while the PUTs ran" % (
            r["puts_running"]["p99_ms"], a.p99_limit_ms))
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    if a.strict and failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
