#!/usr/bin/env python3
"""amtd's transparent HTTPS endpoint: AWS clients reach amtd with `eval "$(amt env)"` and
nothing else, even where they pin AWS's own endpoints or ignore AWS_ENDPOINT_URL.

Every client here runs in its own process with the environment `amt env` exports, less
AWS_ENDPOINT_URL: so each request goes to https://<service>.<region>.amazonaws.com through amtd
as HTTPS_PROXY, verified with amtd's CA (AWS_CA_BUNDLE). Run by CTest (tests/compat/CMakeLists.txt)
with the pyenv python (boto3 1.43):

    python3 tests/compat/https_proxy_test.py --bin-dir build/bin \
        --sdk ../shared/vendor/sagemaker-python-sdk

The SDK's cases print a line and pass when `import sagemaker` fails (no vendored SDK).
"""

import argparse
import http.server
import json
import os
import stat
import subprocess
import sys
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python",
                                "src"))
import amt_local  # noqa: E402

ARGS = None


class HttpsProxyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.amtd = amt_local.Amtd(ARGS.bin_dir, prefix="amt-https-proxy-")
        cls.addClassCleanup(cls.amtd.close)
        cls.data, cls.url = cls.amtd.data_dir, cls.amtd.url
        # The environment after `eval "$(amt env)"`, less AWS_ENDPOINT_URL.
        cls.env = cls.amtd.amt_env(endpoint_url=False)

    def python(self, code, sdk=False):
        """Runs `code` with this interpreter in the proxy environment; returns its stdout. With
        `sdk`, the vendored SDK first on the path and Debian's packages (numpy, pandas) last, so
        that this interpreter's own boto3 is the one used."""
        if sdk:
            code = ("import sys; sys.path.insert(0, %r); "
                    "sys.path.append('/usr/lib/python3/dist-packages')\n" % ARGS.sdk) + code
        result = subprocess.run([sys.executable, "-c", code], env=self.env, capture_output=True,
                                text=True, timeout=120)
        self.assertEqual(result.returncode, 0, result.stdout[-3000:] + result.stderr[-3000:])
        return result.stdout

    def test_amt_env_exports_the_proxy(self):
        self.assertEqual(self.env["HTTPS_PROXY"], self.url)
        self.assertEqual(self.env["https_proxy"], self.url)
        self.assertIn("127.0.0.1", self.env["NO_PROXY"].split(","))
        self.assertEqual(self.env["AWS_CA_BUNDLE"], os.path.join(self.data, "proxy-ca.pem"))

    def test_the_ca_key_is_the_owners_only(self):
        mode = stat.S_IMODE(os.stat(os.path.join(self.data, "proxy-ca-key.pem")).st_mode)
        self.assertEqual(mode, 0o600)

    def test_boto3_reaches_sts_and_iam_through_the_proxy(self):
        out = self.python(
            "import boto3, json\n"
            "sts = boto3.client('sts')\n"
            "assert sts.meta.endpoint_url.startswith('https://sts.'), sts.meta.endpoint_url\n"
            "arn = sts.get_caller_identity()['Arn']\n"
            "role = arn.split('/')[1]\n"
            "print(json.dumps([arn, boto3.client('iam').get_role(RoleName=role)['Role']['Arn']]))\n")
        arn, role_arn = json.loads(out)
        self.assertRegex(arn, r"^arn:aws:sts::\d{12}:assumed-role/AmtLocalExecutionRole/amt-local$")
        self.assertRegex(role_arn, r"^arn:aws:iam::\d{12}:role/AmtLocalExecutionRole$")

    def test_boto3_sagemaker_at_its_own_endpoint(self):
        out = self.python(
            "import boto3\n"
            "sm = boto3.client('sagemaker')\n"
            "assert sm.meta.endpoint_url == 'https://api.sagemaker.us-east-1.amazonaws.com', "
            "sm.meta.endpoint_url\n"
            "print(len(sm.list_hyper_parameter_tuning_jobs()['HyperParameterTuningJobSummaries']))\n")
        self.assertEqual(out.strip(), "0")

    def test_boto3_s3_virtual_hosted_and_path_style(self):
        out = self.python(
            "import boto3\n"
            "from botocore.config import Config\n"
            "virtual = boto3.client('s3', config=Config(s3={'addressing_style': 'virtual'}))\n"
            "path = boto3.client('s3', config=Config(s3={'addressing_style': 'path'}))\n"
            "virtual.create_bucket(Bucket='proxy-bucket')\n"
            "virtual.put_object(Bucket='proxy-bucket', Key='a/b.txt', Body=b'through the proxy')\n"
            "print(path.get_object(Bucket='proxy-bucket', Key='a/b.txt')['Body'].read().decode())\n"
            "print([o['Key'] for o in virtual.list_objects_v2(Bucket='proxy-bucket')['Contents']])\n")
        self.assertEqual(out.splitlines(), ["through the proxy", "['a/b.txt']"])

    def test_debian_aws_cli_without_endpoint_url(self):
        result = subprocess.run(
            ["/usr/bin/aws", "sagemaker", "list-hyper-parameter-tuning-jobs", "--output", "json"],
            env=self.env, capture_output=True, text=True, timeout=120)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(json.loads(result.stdout)["HyperParameterTuningJobSummaries"], [])

    def test_sdk_execution_role_and_default_bucket_through_the_proxy_only(self):
        probe = subprocess.run(
            [sys.executable, "-c", "import sys; sys.path.insert(0, %r); "
             "sys.path.append('/usr/lib/python3/dist-packages'); import sagemaker" % ARGS.sdk],
            env=self.env, capture_output=True, text=True)
        if probe.returncode != 0:
            print("SKIP: the SageMaker SDK does not import: " + probe.stderr.strip()[-200:])
            return
        out = self.python(
            "import json, sagemaker\n"
            "role = sagemaker.get_execution_role()\n"
            "bucket = sagemaker.Session().default_bucket()\n"
            "print(json.dumps([role, bucket]))\n",
            sdk=True)
        role, bucket = json.loads(out.strip().splitlines()[-1])
        self.assertRegex(role, r"^arn:aws:iam::\d{12}:role/AmtLocalExecutionRole$")
        self.assertRegex(bucket, r"^sagemaker-us-east-1-\d{12}$")
        self.assertTrue(os.path.isdir(os.path.join(self.data, "s3", bucket)))

    def test_another_host_is_tunnelled_untouched(self):
        body = b"served by a local test server\n"

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            # --proxytunnel: CONNECT even for http://; --noproxy '': past NO_PROXY's 127.0.0.1.
            result = subprocess.run(
                ["curl", "-sS", "--fail", "--proxytunnel", "--noproxy", "", "-x", self.url,
                 "http://127.0.0.1:%d/file" % server.server_address[1]],
                capture_output=True, timeout=60)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(result.stdout, body)
        finally:
            server.shutdown()
            server.server_close()


class BeyondLoopbackTest(unittest.TestCase):
    def test_other_hosts_are_refused_and_aws_hosts_served(self):
        with amt_local.Amtd(ARGS.bin_dir, "--host", "0.0.0.0", "--insecure",
                            prefix="amt-https-proxy-") as amtd:
            url = "http://127.0.0.1:%d" % amtd.http_port
            result = subprocess.run(
                ["curl", "-sS", "--proxytunnel", "--noproxy", "", "-x", url,
                 "http://127.0.0.1:9/"], capture_output=True, text=True, timeout=60)
            self.assertNotEqual(result.returncode, 0)
            self.assertIn("403", result.stderr)
            result = subprocess.run(
                ["curl", "-sS", "--noproxy", "", "-x", url, "--cacert", amtd.proxy_ca,
                 "-d", "Action=GetCallerIdentity&Version=2011-06-15",
                 "https://sts.us-east-1.amazonaws.com/"],
                capture_output=True, text=True, timeout=60)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn("assumed-role/AmtLocalExecutionRole", result.stdout)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--sdk", default="")
    ARGS, rest = parser.parse_known_args()
    ARGS.bin_dir = os.path.abspath(ARGS.bin_dir)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
