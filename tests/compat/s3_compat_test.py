#!/usr/bin/env python3
"""boto3 (1.43) and both aws clis against amtd's S3: real clients, real HTTP, the real S3 folder.

Run by CTest (tests/compat/CMakeLists.txt) with the pyenv python, whose boto3/botocore 1.43 sends
CRC32 checksums and `Expect: 100-continue` as it does against AWS:

    python3 tests/compat/s3_compat_test.py --bin-dir build/bin --source-dir .

Starts build/bin/amtd on free ports, then: every S3 operation amtd serves through boto3 with its
results and S3's errors checked; the aws cli's `s3 sync/ls/cp/rb` (Debian's v2 and the pyenv
v1 when present); and the whole path a SageMaker user takes: data uploaded with boto3 is a
training job's channel, and the job's model.tar.gz comes back through S3.
"""

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import time
import unittest

import boto3
import botocore.exceptions
from botocore.config import Config

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python",
                                "src"))
import amt_local  # noqa: E402

ARGS = None
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
               "AWS_DEFAULT_REGION": "us-east-1"}


class S3CompatTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.amtd = amt_local.Amtd(
            ARGS.bin_dir, slots=2, prefix="amt-s3-compat-",
            image_map=os.path.join(ARGS.source_dir, "examples", "image-map.json"))
        cls.addClassCleanup(cls.amtd.close)
        cls.work = cls.amtd.work  # the data dir's parent, for the tests' own files too
        session = boto3.Session(aws_access_key_id="test", aws_secret_access_key="test",
                                region_name="us-east-1")
        # No retries: an error must come back as the first answer, not after minutes.
        config = Config(retries={"max_attempts": 1, "mode": "standard"})
        cls.s3 = session.client("s3", endpoint_url=cls.amtd.url, config=config)
        cls.sm = session.client("sagemaker", endpoint_url=cls.amtd.url, config=config)

    def code_of(self, call, **kwargs):
        with self.assertRaises(botocore.exceptions.ClientError) as raised:
            call(**kwargs)
        return raised.exception.response["Error"]["Code"]

    def test_objects_listings_and_errors(self):
        s3 = self.s3
        s3.create_bucket(Bucket="objects")
        names = [b["Name"] for b in s3.list_buckets()["Buckets"]]
        self.assertIn("objects", names)
        s3.put_object(Bucket="objects", Key="dir/a b+c.txt", Body=b"hello",
                      ContentType="text/plain", Metadata={"origin": "compat"})
        got = s3.get_object(Bucket="objects", Key="dir/a b+c.txt")
        self.assertEqual(got["Body"].read(), b"hello")
        self.assertEqual(got["ContentType"], "text/plain")
        self.assertEqual(got["Metadata"], {"origin": "compat"})
        self.assertEqual(got["ETag"], '"5d41402abc4b2a76b9719d911017c592"')
        head = s3.head_object(Bucket="objects", Key="dir/a b+c.txt")
        self.assertEqual(head["ContentLength"], 5)
        ranged = s3.get_object(Bucket="objects", Key="dir/a b+c.txt", Range="bytes=1-3")
        self.assertEqual(ranged["Body"].read(), b"ell")
        self.assertEqual(ranged["ContentRange"], "bytes 1-3/5")

        for i in range(5):
            s3.put_object(Bucket="objects", Key="many/%02d" % i, Body=str(i).encode())
        pages = s3.get_paginator("list_objects_v2").paginate(
            Bucket="objects", Prefix="many/", PaginationConfig={"PageSize": 2})
        self.assertEqual([o["Key"] for page in pages for o in page.get("Contents", [])],
                         ["many/%02d" % i for i in range(5)])
        top = s3.list_objects(Bucket="objects", Delimiter="/")  # v1 with encoding-type=url
        self.assertEqual([p["Prefix"] for p in top["CommonPrefixes"]], ["dir/", "many/"])
        listed = s3.list_objects_v2(Bucket="objects", Prefix="dir/")
        self.assertEqual([o["Key"] for o in listed["Contents"]], ["dir/a b+c.txt"])

        s3.copy_object(Bucket="objects", Key="copy.txt",
                       CopySource={"Bucket": "objects", "Key": "dir/a b+c.txt"})
        self.assertEqual(s3.get_object(Bucket="objects", Key="copy.txt")["Body"].read(), b"hello")
        deleted = s3.delete_objects(Bucket="objects", Delete={
            "Objects": [{"Key": "copy.txt"}] + [{"Key": "many/%02d" % i} for i in range(5)]})
        self.assertEqual(len(deleted["Deleted"]), 6)

        self.assertEqual(self.code_of(s3.get_object, Bucket="objects", Key="nope"), "NoSuchKey")
        self.assertEqual(self.code_of(s3.list_objects_v2, Bucket="no-such-bucket"),
                         "NoSuchBucket")
        self.assertEqual(self.code_of(s3.head_bucket, Bucket="no-such-bucket"), "404")
        self.assertEqual(self.code_of(s3.get_object, Bucket="objects", Key="dir/a b+c.txt",
                                      Range="bytes=10-"), "InvalidRange")
        self.assertEqual(self.code_of(s3.delete_bucket, Bucket="objects"), "BucketNotEmpty")
        self.assertEqual(self.code_of(s3.put_object, Bucket="objects", Key="a/../b", Body=b"x"),
                         "InvalidArgument")
        self.assertEqual(self.code_of(s3.get_bucket_acl, Bucket="objects"), "NotImplemented")
        self.assertEqual(self.code_of(s3.create_bucket, Bucket="Not_Valid"), "InvalidBucketName")

    def test_keys_that_name_a_way_out_stay_inside_the_s3_folder(self):
        """Raw HTTP (boto3 would encode the '%' again): an encoded ".." or a NUL byte in a key is
        refused with S3's InvalidArgument; a double-encoded ".." or a backslash is a plain name,
        stored and read back inside the bucket's folder. Nothing appears beside the S3 folder."""
        import http.client
        import urllib.parse
        self.s3.create_bucket(Bucket="paths")
        s3_root = os.path.join(self.amtd.data_dir, "s3")
        outside_before = sorted(os.listdir(self.amtd.data_dir))
        url = urllib.parse.urlsplit(self.amtd.url)

        def call(method, path, body=b""):
            conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
            try:
                conn.request(method, path, body=body, headers={"Content-Length": str(len(body))})
                reply = conn.getresponse()
                return reply.status, reply.read().decode("utf-8", "replace")
            finally:
                conn.close()

        for key in ("%2e%2e/%2e%2e/escape", "a/%2E%2E/%2e%2e/%2e%2e/escape", "a%00b"):
            status, body = call("PUT", "/paths/" + key, b"x")
            self.assertEqual(status, 400, key)
            self.assertIn("<Code>InvalidArgument</Code>", body, key)
        for key, name in (("%252e%252e/%252e%252e/kept", "%2e%2e/%2e%2e/kept"),
                          ("..%5Cback", "..\\back")):
            status, _ = call("PUT", "/paths/" + key, b"inside")
            self.assertEqual(status, 200, key)
            self.assertEqual(self.s3.get_object(Bucket="paths", Key=name)["Body"].read(),
                             b"inside")
            self.assertTrue(os.path.isfile(os.path.join(s3_root, "paths", name)), name)
        keys = [o["Key"] for o in self.s3.list_objects_v2(Bucket="paths")["Contents"]]
        self.assertEqual(sorted(keys), sorted(["%2e%2e/%2e%2e/kept", "..\\back"]))
        self.assertEqual(sorted(os.listdir(self.amtd.data_dir)), outside_before)
        self.assertFalse(os.path.exists(os.path.join(self.amtd.data_dir, "escape")))
        self.assertFalse(os.path.exists(os.path.join(s3_root, "escape")))

    def test_concurrent_puts_of_one_key_leave_one_whole_object(self):
        """200 clients PUT different bodies to one key at once: each is answered 200, the object
        is then exactly one of the bodies, whole, and no partial upload is left in the bucket's
        folder."""
        import concurrent.futures
        import http.client
        import urllib.parse
        self.s3.create_bucket(Bucket="race")
        url = urllib.parse.urlsplit(self.amtd.url)
        bodies = [(b"%03d" % i) * 20000 for i in range(200)]  # 60 KB each, all different

        def put(body):
            conn = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
            try:
                conn.request("PUT", "/race/one-key", body=body,
                             headers={"Content-Length": str(len(body))})
                reply = conn.getresponse()
                reply.read()
                return reply.status
            finally:
                conn.close()

        with concurrent.futures.ThreadPoolExecutor(max_workers=len(bodies)) as pool:
            statuses = list(pool.map(put, bodies))
        self.assertEqual(statuses, [200] * len(bodies))
        stored = self.s3.get_object(Bucket="race", Key="one-key")["Body"].read()
        self.assertIn(stored, bodies)
        listed = self.s3.list_objects_v2(Bucket="race")
        self.assertEqual([(o["Key"], o["Size"]) for o in listed["Contents"]],
                         [("one-key", len(stored))])
        self.assertEqual(os.listdir(os.path.join(self.amtd.data_dir, "s3", "race")), ["one-key"])

    def test_multipart_transfer_both_ways(self):
        s3 = self.s3
        s3.create_bucket(Bucket="transfer")
        content = os.urandom(21 * 1024 * 1024)  # three parts of boto3's 8 MB
        source = os.path.join(self.work, "big.bin")
        with open(source, "wb") as f:
            f.write(content)
        s3.upload_file(source, "transfer", "big.bin")
        with open(os.path.join(self.amtd.data_dir, "s3", "transfer", "big.bin"), "rb") as f:
            self.assertEqual(f.read(), content)
        self.assertTrue(s3.head_object(Bucket="transfer", Key="big.bin")["ETag"].endswith('-3"'))
        target = os.path.join(self.work, "big.out")
        s3.download_file("transfer", "big.bin", target)  # ranged GETs
        with open(target, "rb") as f:
            self.assertEqual(f.read(), content)
        upload = s3.create_multipart_upload(Bucket="transfer", Key="small-parts")
        part = s3.upload_part(Bucket="transfer", Key="small-parts", PartNumber=1,
                              UploadId=upload["UploadId"], Body=b"too small")
        last = s3.upload_part(Bucket="transfer", Key="small-parts", PartNumber=2,
                              UploadId=upload["UploadId"], Body=b"end")
        self.assertEqual(self.code_of(
            s3.complete_multipart_upload, Bucket="transfer", Key="small-parts",
            UploadId=upload["UploadId"], MultipartUpload={"Parts": [
                {"PartNumber": 1, "ETag": part["ETag"]},
                {"PartNumber": 2, "ETag": last["ETag"]}]}), "EntityTooSmall")
        listed = s3.list_multipart_uploads(Bucket="transfer")
        self.assertEqual([(u["Key"], u["UploadId"]) for u in listed["Uploads"]],
                         [("small-parts", upload["UploadId"])])
        s3.abort_multipart_upload(Bucket="transfer", Key="small-parts",
                                  UploadId=upload["UploadId"])
        self.assertNotIn("Uploads", s3.list_multipart_uploads(Bucket="transfer"))
        self.assertEqual(self.code_of(
            s3.upload_part, Bucket="transfer", Key="small-parts", PartNumber=3,
            UploadId=upload["UploadId"], Body=b"x"), "NoSuchUpload")

    def test_uploaded_data_is_a_channel_and_the_model_comes_back(self):
        s3 = self.s3
        s3.create_bucket(Bucket="pipeline")
        for name in ("part-0.csv", "part-1.csv"):
            s3.put_object(Bucket="pipeline", Key="train/" + name, Body=b"1,2\n3,4\n")
        self.sm.create_training_job(
            TrainingJobName="s3-channel",
            AlgorithmSpecification={"TrainingImage": "amt-local/python-trainer:latest",
                                    "TrainingInputMode": "File"},
            HyperParameters={"epochs": "2", "sleep_ms": "0"},
            RoleArn="arn:aws:iam::123456789012:role/SageMakerRole",
            InputDataConfig=[{"ChannelName": "train", "DataSource": {"S3DataSource": {
                "S3DataType": "S3Prefix", "S3Uri": "s3://pipeline/train/"}}}],
            OutputDataConfig={"S3OutputPath": "s3://pipeline/output"},
            ResourceConfig={"InstanceType": "ml.m5.large", "InstanceCount": 1,
                            "VolumeSizeInGB": 10},
            StoppingCondition={"MaxRuntimeInSeconds": 600})
        waiter = self.sm.get_waiter("training_job_completed_or_stopped")
        waiter.wait(TrainingJobName="s3-channel", WaiterConfig={"Delay": 1, "MaxAttempts": 120})
        job = self.sm.describe_training_job(TrainingJobName="s3-channel")
        self.assertEqual(job["TrainingJobStatus"], "Completed", job.get("FailureReason"))
        artifact = job["ModelArtifacts"]["S3ModelArtifacts"]
        self.assertEqual(artifact, "s3://pipeline/output/s3-channel/output/model.tar.gz")
        body = s3.get_object(Bucket="pipeline", Key="output/s3-channel/output/model.tar.gz")
        with tarfile.open(fileobj=io.BytesIO(body["Body"].read()), mode="r:gz") as tar:
            self.assertIn("model.json", [m.name.lstrip("./") for m in tar.getmembers()])
        logs = boto3.Session(**{"aws_access_key_id": "test", "aws_secret_access_key": "test",
                                "region_name": "us-east-1"}).client(
            "logs", endpoint_url=self.amtd.url)
        stream = logs.describe_log_streams(logGroupName="/aws/sagemaker/TrainingJobs",
                                           logStreamNamePrefix="s3-channel/")["logStreams"][0]
        events = logs.get_log_events(logGroupName="/aws/sagemaker/TrainingJobs",
                                     logStreamName=stream["logStreamName"], startFromHead=True)
        self.assertTrue(any(e["message"].startswith("train channel: 2 file(s)")
                            for e in events["events"]), events["events"])

    def test_aws_cli_sync_ls_cp_and_rb(self):
        clis = [c for c in ("/usr/bin/aws", os.path.expanduser("~/.pyenv/shims/aws"))
                if os.path.exists(c)]
        self.assertTrue(clis, "no aws cli")
        env = dict(os.environ, **CREDENTIALS)
        for number, cli in enumerate(clis):
            bucket = "cli-%d" % number
            local = os.path.join(self.work, "sync-%d" % number)
            os.makedirs(os.path.join(local, "sub"))
            with open(os.path.join(local, "a.txt"), "w") as f:
                f.write("a")
            with open(os.path.join(local, "sub", "b c.txt"), "w") as f:
                f.write("bc")

            def aws(*args):
                result = subprocess.run([cli, "--endpoint-url", self.amtd.url] + list(args),
                                        env=env, capture_output=True, text=True, timeout=120)
                self.assertEqual(result.returncode, 0, "%s %s: %s" % (cli, args, result.stderr))
                return result.stdout

            aws("s3", "mb", "s3://" + bucket)
            aws("s3", "sync", local, "s3://%s/data/" % bucket)
            listing = aws("s3", "ls", "--recursive", "s3://%s/" % bucket)
            self.assertIn("data/a.txt", listing, cli)
            self.assertIn("data/sub/b c.txt", listing, cli)
            # A second sync finds nothing to do: sizes and times match.
            self.assertNotIn("upload:", aws("s3", "sync", local, "s3://%s/data/" % bucket))
            back = os.path.join(self.work, "back-%d.txt" % number)
            aws("s3", "cp", "s3://%s/data/sub/b c.txt" % bucket, back)
            with open(back) as f:
                self.assertEqual(f.read(), "bc")
            aws("s3", "rb", "--force", "s3://" + bucket)
            self.assertFalse(os.path.exists(os.path.join(self.amtd.data_dir, "s3", bucket)))


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--source-dir", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
