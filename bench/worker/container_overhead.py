#!/usr/bin/env python3
"""What a training container costs per job: the same trainer as a container and as a process.

One command (after a build, as root, with Debian's docker.io and busybox-static; podman for
--engine podman):
    /usr/bin/python3 bench/worker/container_overhead.py [--jobs 20] [--engine podman] [--json FILE]

Starts a private dockerd (tests/integration/private_dockerd.py: its own folder and socket),
builds the FROM-scratch busybox trainer of tests/integration/container_trainer/, and runs amtd
(build/bin) with --container-runtime docker and an image map that names a second image tag as
the same `train` script run by the machine's busybox as a host process. Then `--jobs` training
jobs one after the other for each: the baseline (the process, through the image map) and the
container, measured in the same run, each job from CreateTrainingJob (boto3) to Completed
(DescribeTrainingJob polled every 20 ms). Prints the medians and the difference, the
container's overhead per job; saves JSON with --json.
"""
import argparse
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "src"))
sys.path.insert(0, str(ROOT / "tests" / "integration"))
import amt_local  # noqa: E402
from private_dockerd import Dockerd, Podman, build_trainer_image, engine_or_reason  # noqa: E402

CONTAINER_IMAGE = "amt-bench/trainer:container"
PROCESS_IMAGE = "amt-bench/trainer:process"


def run_job(sm, name, image):
    started = time.monotonic()
    sm.create_training_job(
        TrainingJobName=name, HyperParameters={"x": "1.5"},
        AlgorithmSpecification={"TrainingImage": image, "TrainingInputMode": "File"},
        RoleArn="arn:aws:iam::123456789012:role/SageMakerRole",
        OutputDataConfig={"S3OutputPath": "s3://bench/output"},
        ResourceConfig={"InstanceType": "ml.m5.large", "InstanceCount": 1, "VolumeSizeInGB": 1},
        StoppingCondition={"MaxRuntimeInSeconds": 3600}, Environment={"MODE": ""})
    while True:
        status = sm.describe_training_job(TrainingJobName=name)["TrainingJobStatus"]
        if status != "InProgress":
            break
        time.sleep(0.02)
    if status != "Completed":
        raise RuntimeError("%s ended %s" % (name, status))
    return time.monotonic() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=str(ROOT / "build" / "bin"))
    parser.add_argument("--jobs", type=int, default=20)
    parser.add_argument("--json")
    parser.add_argument("--engine", choices=["docker", "podman"], default="docker",
                        help="the engine (podman: a private Podman, as integration.containers_podman)")
    args = parser.parse_args()
    reason = engine_or_reason(args.engine)
    if reason is not None:
        sys.exit("container_overhead: " + reason)
    with tempfile.TemporaryDirectory(prefix="cb") as work:
        dockerd = Dockerd(work) if args.engine == "docker" else Podman(work)
        try:
            build_trainer_image(dockerd, os.path.join(work, "image"), CONTAINER_IMAGE)
            # The process: the very script, /opt/ml being its job folder ($AMT_JOB_DIR) on a host.
            script = os.path.join(work, "train")
            with open(ROOT / "tests" / "integration" / "container_trainer" / "train") as f:
                text = f.read().replace("/opt/ml/", "$AMT_JOB_DIR/")
            with open(script, "w") as f:
                f.write(text)
            image_map = os.path.join(work, "image-map.json")
            with open(image_map, "w") as f:
                json.dump({PROCESS_IMAGE: ["/bin/busybox", "sh", script]}, f)
            if dockerd.host is not None:
                os.environ["DOCKER_HOST"] = dockerd.host
            with amt_local.Amtd(args.bin, "--container-runtime", args.engine, image_map=image_map,
                                slots=1, quiet=True) as amtd:
                sm = amtd.client("sagemaker")
                seconds = {"process": [], "container": []}
                for i in range(args.jobs):
                    # Interleaved, so both see the same machine.
                    seconds["process"].append(run_job(sm, "p-%d" % i, PROCESS_IMAGE))
                    seconds["container"].append(run_job(sm, "c-%d" % i, CONTAINER_IMAGE))
        finally:
            dockerd.docker("image", "rm", "--force", CONTAINER_IMAGE, check=False)
            dockerd.close()
    medians = {kind: statistics.median(values) for kind, values in seconds.items()}
    overhead = medians["container"] - medians["process"]
    print("jobs of each kind: %d (one at a time, create to Completed)" % args.jobs)
    print("process (image map)  median %.3f s" % medians["process"])
    print("container (%s)   median %.3f s" % (args.engine, medians["container"]))
    print("container overhead per job: %.3f s (%.2fx)" % (overhead,
                                                          medians["container"] / medians["process"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"engine": args.engine, "jobs": args.jobs, "seconds": seconds,
                       "median": medians,
                       "overhead_seconds": overhead}, f, indent=1)


if __name__ == "__main__":
    main()
