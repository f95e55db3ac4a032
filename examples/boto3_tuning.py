#!/usr/bin/python3
"""Runs a tuning-job file through amtd with boto3, exactly as against SageMaker.

Start amtd first (its AWS JSON gateway listens on 127.0.0.1:7071 by default):

    build/bin/amtd --data-dir .amt --image-map examples/image-map.json &
    /usr/bin/python3 examples/boto3_tuning.py examples/random-tuning.json [--endpoint-url URL]

The only difference from code written for SageMaker is `endpoint_url` (or the environment variable
AWS_ENDPOINT_URL_SAGEMAKER, which boto3 >= 1.28 reads by itself). Debian 12's boto3 (1.26) predates
RandomSeed, so this script drops members its botocore does not know and says so.
"""

import argparse
import json
import sys
import time

import boto3


def known_members(client, job):
    """Drops the members of HyperParameterTuningJobConfig this botocore's model lacks."""
    shape = client.meta.service_model.operation_model("CreateHyperParameterTuningJob").input_shape
    config_shape = shape.members["HyperParameterTuningJobConfig"]
    config = job["HyperParameterTuningJobConfig"]
    for name in [m for m in config if m not in config_shape.members]:
        print("note: this botocore does not know HyperParameterTuningJobConfig.%s; left out" % name,
              file=sys.stderr)
        del config[name]
    return job


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("job_file")
    parser.add_argument("--endpoint-url", default="http://127.0.0.1:7071")
    parser.add_argument("--region", default="us-east-1")
    args = parser.parse_args()

    sm = boto3.client("sagemaker", region_name=args.region, endpoint_url=args.endpoint_url,
                      aws_access_key_id="test", aws_secret_access_key="test")
    with open(args.job_file) as f:
        job = known_members(sm, json.load(f))
    name = job["HyperParameterTuningJobName"]
    print(sm.create_hyper_parameter_tuning_job(**job)["HyperParameterTuningJobArn"])

    while True:  # no botocore waiter exists for tuning jobs
        d = sm.describe_hyper_parameter_tuning_job(HyperParameterTuningJobName=name)
        counters = d["TrainingJobStatusCounters"]
        print("%s: %s, %s" % (name, d["HyperParameterTuningJobStatus"],
                              ", ".join("%s %d" % kv for kv in counters.items())))
        if d["HyperParameterTuningJobStatus"] not in ("InProgress", "Stopping"):
            break
        time.sleep(1)

    best = d.get("BestTrainingJob")
    if best:
        metric = best["FinalHyperParameterTuningJobObjectiveMetric"]
        print("best: %s %s=%g %s" % (best["TrainingJobName"], metric["MetricName"], metric["Value"],
                                     best["TunedHyperParameters"]))
    return 0 if d["HyperParameterTuningJobStatus"] == "Completed" else 1


if __name__ == "__main__":
    sys.exit(main())
