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

ARGS = None
AWS = "/usr/bin/aws"
KEY, SECRET = "AKIDAMTLOCALTEST", "amt-local-test-secret/0123456789abcdef"


class Amtd:
    def __init__(self, work, *extra):
        self.process = subprocess.Popen(
            [os.path.join(ARGS.bin_dir, "amtd"), "--port", "0", "--no-local-worker",
             "--data-dir", os.path.join(work, "data"), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.first_line = self.process.stdout.readline()

    def url(self):
        line = self.first_line
        if "http://" not in line:
            raise RuntimeError("amtd did not print its HTTP endpoint: %r %s" % (
                line, self.process.stderr.read()))
        return line[line.index("http://"):].split()[0]

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(timeout=60)


class CredentialsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.TemporaryDirectory()
        cls.credentials = os.path.join(cls.work.name, "credentials")
        with open(cls.credentials, "w") as f:
            f.write("[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n" % (
                KEY, SECRET))
        cls.amtd = Amtd(cls.work.name, "--credentials", cls.credentials)
        cls.endpoint = cls.amtd.url()

    @classmethod
    def tearDownClass(cls):
        cls.amtd.stop()
        cls.work.cleanup()

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


class BindingTest(unittest.TestCase):
    def test_a_non_loopback_address_needs_credentials_or_insecure(self):
        with tempfile.TemporaryDirectory() as work:
            refused = Amtd(work, "--host", "0.0.0.0")
            refused.process.wait(timeout=60)
            self.assertNotEqual(refused.process.returncode, 0)
            self.assertIn("refusing to listen on 0.0.0.0 without --credentials",
                          refused.process.stderr.read())
            accepted = Amtd(work, "--host", "0.0.0.0", "--insecure")
            try:
                self.assertIn("http://", accepted.first_line)
            finally:
                accepted.stop()


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--bin-dir", required=True)
    ARGS, rest = p.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
