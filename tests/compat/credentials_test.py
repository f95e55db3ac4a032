#!/usr/bin/python3
"""amtd --credentials: boto3 and the aws cli sign with a key of the file or are refused as AWS refuses.

Run by CTest (tests/compat/CMakeLists.txt) with Debian's python3-boto3 and awscli:

    /usr/bin/python3 tests/compat/credentials_test.py --bin-dir build/bin

Starts build/bin/amtd on free ports with an AWS shared-credentials file and checks, with real
clients: a request signed with the file's key is served; a wrong secret, an unknown key and an
unsigned request get AWS's own error codes and HTTP statuses; and amtd refuses to listen on a
non-loopback address without credentials unless --insecure is given.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import unittest

import boto3
import botocore
import botocore.config
import botocore.exceptions

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python",
                                "src"))
import amt_local  # noqa: E402

ARGS = None
AWS = "/usr/bin/aws"
KEY, SECRET = "AKIDAMTLOCALTEST", "amt-local-test-secret/0123456789abcdef"


class CredentialsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.TemporaryDirectory()
        cls.addClassCleanup(cls.work.cleanup)
        cls.credentials = os.path.join(cls.work.name, "credentials")
        with open(cls.credentials, "w") as f:
            f.write("[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n" % (
                KEY, SECRET))
        cls.amtd = amt_local.Amtd(ARGS.bin_dir, "--credentials", cls.credentials, slots=1,
                                  data_dir=os.path.join(cls.work.name, "data"))
        cls.addClassCleanup(cls.amtd.close)
        cls.endpoint = cls.amtd.url

    def client(self, key=KEY, secret=SECRET, **config):
        return boto3.client(
            "sagemaker", endpoint_url=self.endpoint, region_name="us-east-1",
            aws_access_key_id=key, aws_secret_access_key=secret,
            config=botocore.config.Config(retries={"max_attempts": 0}, **config))

    def refused(self, client):
        with self.assertRaises(botocore.exceptions.ClientError) as caught:
            client.list_training_jobs()
        error = caught.exception.response
        return (error["Error"]["Code"], error["ResponseMetadata"]["HTTPStatusCode"],
                error["Error"]["Message"])

    def test_a_request_signed_with_the_files_key_is_served(self):
        self.assertEqual(self.client().list_training_jobs()["TrainingJobSummaries"], [])

    def test_a_wrong_secret_is_an_invalid_signature(self):
        code, status, message = self.refused(self.client(secret="not-the-secret"))
        self.assertEqual((code, status), ("InvalidSignatureException", 400))
        self.assertTrue(message.startswith(
            "The request signature we calculated does not match the signature you provided."),
            message)

    def test_an_unknown_key_is_an_unrecognized_client(self):
        code, status, message = self.refused(self.client(key="AKIDUNKNOWN"))
        self.assertEqual((code, status, message),
                         ("UnrecognizedClientException", 400,
                          "The security token included in the request is invalid."))

    def test_an_unsigned_request_misses_its_authentication_token(self):
        code, status, message = self.refused(
            self.client(signature_version=botocore.UNSIGNED))
        self.assertEqual((code, status, message),
                         ("MissingAuthenticationTokenException", 403,
                          "Missing Authentication Token"))

    def test_the_aws_cli_signs_with_the_same_file(self):
        env = dict(os.environ, AWS_SHARED_CREDENTIALS_FILE=self.credentials,
                   AWS_CONFIG_FILE=os.devnull, AWS_DEFAULT_REGION="us-east-1")
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
            env.pop(name, None)
        ok = subprocess.run([AWS, "sagemaker", "list-training-jobs", "--endpoint-url",
                             self.endpoint], env=env, capture_output=True, text=True)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        env["AWS_SECRET_ACCESS_KEY"], env["AWS_ACCESS_KEY_ID"] = "wrong", KEY
        bad = subprocess.run([AWS, "sagemaker", "list-training-jobs", "--endpoint-url",
                              self.endpoint], env=env, capture_output=True, text=True)
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("InvalidSignatureException", bad.stderr)


    def test_the_local_worker_registers_with_the_file_and_runs_a_job(self):
        client = self.client()
        client.create_training_job(
            TrainingJobName="signed-job",
            AlgorithmSpecification={
                "TrainingImage": os.path.join(os.path.abspath(ARGS.bin_dir), "amt-toy-trainer"),
                "TrainingInputMode": "File"},
            HyperParameters={"epochs": "2", "sleep_ms": "0"},
            RoleArn="arn:aws:iam::123456789012:role/SageMakerRole",
            OutputDataConfig={"S3OutputPath": "s3://amt-local-test/output"},
            ResourceConfig={"InstanceType": "ml.m5.large", "InstanceCount": 1,
                            "VolumeSizeInGB": 10},
            StoppingCondition={"MaxRuntimeInSeconds": 600})
        client.get_waiter("training_job_completed_or_stopped").wait(
            TrainingJobName="signed-job", WaiterConfig={"Delay": 1, "MaxAttempts": 120})
        self.assertEqual(
            client.describe_training_job(TrainingJobName="signed-job")["TrainingJobStatus"],
            "Completed")

    def test_the_amt_cli_needs_the_file_too(self):
        amt = self.amtd.amt_command()
        env = {k: v for k, v in os.environ.items() if not k.startswith("AMT_")}
        refused = subprocess.run(amt + ["list-training-jobs"], env=env, capture_output=True,
                                 text=True)
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("requires credentials", refused.stderr)
        served = subprocess.run(amt + ["--credentials", self.credentials, "list-training-jobs"],
                                env=env, capture_output=True, text=True)
        self.assertEqual(served.returncode, 0, served.stderr)
        self.assertIn("TrainingJobSummaries", served.stdout)


class BindingTest(unittest.TestCase):
    def test_a_non_loopback_address_needs_credentials_or_insecure(self):
        with tempfile.TemporaryDirectory() as work:
            data = os.path.join(work, "data")
            with self.assertRaises(amt_local.AmtdExited) as refused:
                amt_local.Amtd(ARGS.bin_dir, "--host", "0.0.0.0", data_dir=data,
                               local_worker=False, quiet=True)
            self.assertNotEqual(refused.exception.returncode, 0)
            self.assertIn("refusing to listen on 0.0.0.0 without --credentials",
                          refused.exception.stderr)
            with amt_local.Amtd(ARGS.bin_dir, "--host", "0.0.0.0", "--insecure",
                                data_dir=data, local_worker=False) as accepted:
                self.assertTrue(accepted.url.startswith("http://0.0.0.0:"), accepted.url)


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--bin-dir", required=True)
    ARGS, rest = p.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
