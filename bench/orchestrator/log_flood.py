#!/usr/bin/env python3
"""API latency while a training job floods its log: DescribeTrainingJob p50/p99 idle vs. flooded.

One command (after a build):
    /usr/bin/python3 bench/orchestrator/log_flood.py [--megabytes 20] [--metrics 40]
        [--line-bytes 100]   (issue 32's flood: --line-bytes 100000, 200 lines of 100 KB)

Starts build/bin/amtd (its local amt-worker, SQLite state, the AWS JSON gateway) on free ports.
Baseline, measured in the same run: DescribeTrainingJob of a finished job, called back to back
through boto3 for `--idle-seconds` while nothing runs. Then one training job whose trainer prints
`--megabytes` of log lines (about `--line-bytes` each, padded in the middle, every line carrying a
few of the values) with
`--metrics` MetricDefinitions, the shapes SageMaker users write (`name=([0-9.]+)`, the built-in
algorithms' `.*#quality_metric: ...` and `[0-9]+ ... train-rmse:(\\S+)` kinds); the same Describe
calls run until the flood job ends. Prints the latencies (ms) of both phases and their ratios, the
flood's wall time and how many metrics reached FinalMetricDataList; saves them as JSON.
Target (issue 9): flooded p99 <= 200 ms.

`--strict` exits 1 when the target is missed, the flood job did not complete, or fewer than
`--metrics` metrics reached FinalMetricDataList. CI runs issue 32's flood (200 lines of 100 KB,
40 regexes) as the test integration.edge_log_flood (tests/integration/CMakeLists.txt) with a
coarser `--p99-limit-ms`, asserting behaviour rather than speed on a shared 2-core machine: with
parsing on the orchestrator's loop the same flood took Describe to p99 5.8 s.
"""
import argparse
import json
import pathlib
import statistics
import sys
import threading
import time

import botocore.config

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "src"))
import amt_local  # noqa: E402

TRAINER = r'''#!/usr/bin/python3
import json, os, sys
hp = json.load(open(os.environ["SM_INPUT_CONFIG_DIR"] + "/hyperparameters.json"))
target, metrics = int(hp["bytes"]), int(hp["metrics"])
pad = "x" * max(0, int(hp.get("line_bytes", "100")) - 100)
out = sys.stdout
written = 0
step = 0
while written < target:
    m = step % metrics
    line = ("step %d/%d: m%d=%.6f m%d=%.6f %s#quality_metric: host=algo-1, epoch=%d, "
            "validation rmse <loss>=%.5f\n" % (step, target, m, 1.0 / (step + 1),
                                              (m + 7) % metrics, step * 1e-6, pad, step, 0.5))
    out.write(line)
    written += len(line)
    step += 1
print("training complete after %d lines" % step)
'''


def metric_definitions(count):
    defs = [{"Name": "validation:rmse",
             "Regex": r".*#quality_metric: host=\S+, epoch=\S+, validation rmse <loss>=(\S+)"}]
    for i in range(count - 1):
        if i % 3 == 0:
            regex = r"\bm%d=([0-9.eE+-]+)" % i
        elif i % 3 == 1:
            regex = r".*step [0-9]+/[0-9]+: .*m%d=([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?).*" % i
        else:
            regex = r"m%d=(\S+)" % i
        defs.append({"Name": "m%d" % i, "Regex": regex})
    return defs


def create_job(client, name, trainer, megabytes, metrics, line_bytes=100):
    client.create_training_job(
        TrainingJobName=name,
        AlgorithmSpecification={"TrainingImage": str(trainer), "TrainingInputMode": "File",
                                "MetricDefinitions": metric_definitions(metrics)},
        HyperParameters={"bytes": str(int(megabytes * 1e6)), "metrics": str(metrics),
                         "line_bytes": str(line_bytes)},
        RoleArn="arn:aws:iam::123456789012:role/SageMakerRole",
        OutputDataConfig={"S3OutputPath": "s3://amt-local-bench/output"},
        ResourceConfig={"InstanceType": "ml.m5.large", "InstanceCount": 1, "VolumeSizeInGB": 10},
        StoppingCondition={"MaxRuntimeInSeconds": 3600})


def describe_until(client, name, done):
    """Describe `name` back to back until done() is true; returns the latencies in ms."""
    latencies = []
    while not done():
        start = time.perf_counter()
        client.describe_training_job(TrainingJobName=name)
        latencies.append((time.perf_counter() - start) * 1000)
    return latencies


def wait_ended(client, name, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        d = client.describe_training_job(TrainingJobName=name)
        if d["TrainingJobStatus"] in ("Completed", "Failed", "Stopped"):
            return d
        time.sleep(0.05)
    raise RuntimeError("%s did not end within %d s" % (name, timeout))


def summary(latencies):
    ordered = sorted(latencies)
    return {"calls": len(ordered), "p50_ms": round(statistics.median(ordered), 2),
            "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 2),
            "max_ms": round(ordered[-1], 2)}


def run(a):
    # amtd (its local worker, SQLite, the HTTP gateway) on free ports in a temporary folder.
    with amt_local.Amtd(a.bin, slots=2, prefix="amt-flood-") as amtd:
        trainer = pathlib.Path(amtd.work) / "flood_trainer.py"
        trainer.write_text(TRAINER)
        trainer.chmod(0o755)
        client = amtd.client(
            "sagemaker", aws_access_key_id="bench", aws_secret_access_key="bench",
            config=botocore.config.Config(retries={"max_attempts": 0}, read_timeout=120))
        create_job(client, "idle", trainer, 0.001, a.metrics)
        wait_ended(client, "idle", 60)
        t_end = time.monotonic() + a.idle_seconds
        idle = describe_until(client, "idle", lambda: time.monotonic() > t_end)

        ended = threading.Event()
        result = {}

        def watch():
            result["final"] = wait_ended(client, "flood", a.timeout)
            ended.set()

        start = time.monotonic()
        create_job(client, "flood", trainer, a.megabytes, a.metrics, a.line_bytes)
        watcher = threading.Thread(target=watch)
        watcher.start()
        flooded = describe_until(client, "idle", ended.is_set)
        watcher.join()
        wall = time.monotonic() - start
    final = result["final"]
    return {
        "megabytes": a.megabytes, "metrics": a.metrics, "line_bytes": a.line_bytes,
        "idle": summary(idle), "flooded": summary(flooded),
        "flood_status": final["TrainingJobStatus"],
        "flood_seconds": round(wall, 2),
        "final_metrics": len(final.get("FinalMetricDataList", [])),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--megabytes", type=float, default=20)
    p.add_argument("--metrics", type=int, default=40)
    p.add_argument("--line-bytes", type=int, default=100)
    p.add_argument("--idle-seconds", type=float, default=3)
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--strict", action="store_true", help="exit 1 when the target is missed")
    p.add_argument("--p99-limit-ms", type=float, default=200,
                   help="the flooded Describe p99 target")
    p.add_argument("--bin", default=str(ROOT / "build" / "bin"))
    p.add_argument("--json", default=str(ROOT / "bench" / "orchestrator" / "log_flood.json"))
    a = p.parse_args()
    r = run(a)
    r["p99_ratio"] = round(r["flooded"]["p99_ms"] / r["idle"]["p99_ms"], 1)
    r["p50_ratio"] = round(r["flooded"]["p50_ms"] / r["idle"]["p50_ms"], 1)
    print("%-9s %8s %8s %8s %8s" % ("phase", "calls", "p50 ms", "p99 ms", "max ms"))
    for phase in ("idle", "flooded"):
        s = r[phase]
        print("%-9s %8d %8.2f %8.2f %8.2f" % (phase, s["calls"], s["p50_ms"], s["p99_ms"],
                                              s["max_ms"]))
    print("flooded/idle: p50 x%.1f, p99 x%.1f; flood of %.0f MB with %d metrics: %s in %.1f s, "
          "%d metrics in FinalMetricDataList" % (r["p50_ratio"], r["p99_ratio"], r["megabytes"],
                                                  r["metrics"], r["flood_status"],
                                                  r["flood_seconds"], r["final_metrics"]))
    met = r["flooded"]["p99_ms"] <= a.p99_limit_ms
    print("target flooded p99 <= %g ms: %s" % (a.p99_limit_ms, "met" if met else "NOT met"))
    whole = r["flood_status"] == "Completed" and r["final_metrics"] == r["metrics"]
    if not whole:
        print("the flood job ended %s with %d of %d metrics" % (r["flood_status"],
                                                              r["final_metrics"], r["metrics"]))
    met = met and whole
    pathlib.Path(a.json).write_text(json.dumps(r, indent=2) + "\n")
    return 0 if met or not a.strict else 1


if __name__ == "__main__":
    sys.exit(main())
