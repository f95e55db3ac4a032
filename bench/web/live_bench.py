#!/usr/bin/env python3
"""The web page's live updates: does the page keep up with a trainer's emissions?

Starts a real amtd (build/bin/amtd, a temporary data dir) and, per rate, a tuning job of one toy
trainer that prints its objective R times a second for about 6 s; opens the job's page in Debian's
headless Chromium (driven by playwright-core from npm, bench/web/package.json) right away (with ?renderlog, the page records each render of the learning curves:
its time and the emissions it drew) and, once the job has ended, reads the emission times from the
job's log (CloudWatch Logs' GetLogEvents on amtd). For each render, the lag is how long before the
render the newest emission it drew was printed. Keeping up means the lag stays bounded (it does not
grow with the run) and the last render draws every emission. The baseline, in the same run, is a
trainer at 5 emissions/s. Target (issue 12): 50 emissions/s.

    /usr/bin/python3 bench/web/live_bench.py [--build build] [--rates 5,50]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python", "src"))
import amt_local  # noqa: E402


def post(url, target, body):
    request = urllib.request.Request(url + "/", data=json.dumps(body).encode(), method="POST",
                                     headers={"X-Amz-Target": target,
                                              "Content-Type": "application/x-amz-json-1.1"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def tuning_job(name, rate, seconds):
    with open(os.path.join(ROOT, "examples", "random-tuning.json")) as f:
        job = json.load(f)
    job["HyperParameterTuningJobName"] = name
    config = job["HyperParameterTuningJobConfig"]
    config["ResourceLimits"] = {"MaxNumberOfTrainingJobs": 1, "MaxParallelTrainingJobs": 1}
    config.pop("TrainingJobEarlyStoppingType", None)
    statics = job["TrainingJobDefinition"]["StaticHyperParameters"]
    statics["epochs"] = str(int(rate * seconds))
    statics["sleep_ms"] = str(int(1000 / rate))
    return job


def emission_times(url, job, metric):
    stream = post(url, "Logs_20140328.DescribeLogStreams",
                  {"logGroupName": "/aws/sagemaker/TrainingJobs", "logStreamNamePrefix": job + "/"})
    name = stream["logStreams"][0]["logStreamName"]
    times, token = [], None
    while True:
        body = {"logGroupName": "/aws/sagemaker/TrainingJobs", "logStreamName": name,
                "startFromHead": True}
        if token:
            body["nextToken"] = token
        page = post(url, "Logs_20140328.GetLogEvents", body)
        for event in page.get("events", []):
            if re.search(metric + r"=[0-9.eE+-]+", event["message"]):
                times.append(event["timestamp"] / 1000.0)
        if not page.get("events") or page.get("nextForwardToken") == token:
            break
        token = page["nextForwardToken"]
    return times


def run(url, rate, seconds, profile):
    name = "live-%d" % rate
    post(url, "SageMaker.CreateHyperParameterTuningJob", tuning_job(name, rate, seconds))
    # Real time (Chromium's --dump-dom runs a virtual clock): playwright-core drives it.
    log = subprocess.run(["node", os.path.join(HERE, "live.mjs"),
                          url + "/?renderlog#/tuning-jobs/" + name],
                         capture_output=True, text=True, timeout=400, check=True).stdout
    renders = [tuple(float(x) for x in line.split()) for line in log.split("\n") if line.strip()]
    training = post(url, "SageMaker.ListTrainingJobsForHyperParameterTuningJob",
                    {"HyperParameterTuningJobName": name})["TrainingJobSummaries"][0]["TrainingJobName"]
    times = emission_times(url, training, "val_loss")
    lags = [t - times[int(n) - 1] for t, n in renders if 0 < n <= len(times)]
    during = [t - times[int(n) - 1] for t, n in renders if 0 < n < len(times)]  # while it ran
    return {"rate": rate, "emissions": len(times), "renders": len(renders),
            "drawn_at_end": int(renders[-1][1]) if renders else 0,
            "lag_median_ms": 1000 * statistics.median(during) if during else float("nan"),
            "lag_max_ms": 1000 * max(during) if during else float("nan"),
            "lag_first_half_ms": 1000 * statistics.median(during[:len(during) // 2]) if len(during) > 1 else float("nan"),
            "lag_second_half_ms": 1000 * statistics.median(during[len(during) // 2:]) if len(during) > 1 else float("nan")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--rates", default="5,50")
    parser.add_argument("--seconds", type=float, default=6)
    args = parser.parse_args()
    if not os.path.isdir(os.path.join(HERE, "node_modules", "playwright-core")):
        # playwright-core, pinned by bench/web/package-lock.json (it drives Debian's chromium).
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=HERE,
                       check=True)
    # amtd on free ports (the page's among them) in a temporary folder, its output not shown.
    with amt_local.Amtd(os.path.join(args.build, "bin"), quiet=True, prefix="amt-live-",
                        image_map=os.path.join(ROOT, "examples", "image-map.json")) as amtd:
        rows = [run(amtd.url, int(r), args.seconds, os.path.join(amtd.work, "chromium"))
                for r in args.rates.split(",")]
    print("| emissions/s | emissions | renders | drawn at the end | lag median | lag max | "
          "lag, 1st half | lag, 2nd half |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %d | %d | %d | %d | %.0f ms | %.0f ms | %.0f ms | %.0f ms |" % (
            r["rate"], r["emissions"], r["renders"], r["drawn_at_end"], r["lag_median_ms"],
            r["lag_max_ms"], r["lag_first_half_ms"], r["lag_second_half_ms"]))
    top = rows[-1]
    kept = top["drawn_at_end"] == top["emissions"] and top["lag_second_half_ms"] < 2 * max(top["lag_first_half_ms"], 100)
    print("target: %d emissions/s kept up with (every emission drawn at the end, lag not growing): %s"
          % (top["rate"], "met" if kept else "MISSED"))


if __name__ == "__main__":
    main()
