#!/usr/bin/env python3
"""Signs a few requests with Debian's real botocore and prints them as JSON, for
sigv4_botocore_test.cc.

Usage: botocore_sign.py ACCESS_KEY_ID SECRET_ACCESS_KEY
Prints a JSON list; each entry: name, service, method, target (path and query as sent on the
wire), headers ([name, value] pairs, Host included: urllib3 adds it when sending), body_base64,
and now (the epoch seconds botocore signed at). Requests are made through real boto3 clients
(serialization included) and signed twice: by botocore's own Python signers (botocore.auth
SigV4Auth, S3SigV4Auth, S3SigV4QueryAuth; names "python/...") and, when python3-awscrt is
installed (Debian's boto3 pulls it in, and botocore then signs with it by default), by the CRT
signers of botocore.crt.auth (names "crt/..."). The clock is pinned so the output is
reproducible: both modules read datetime.datetime.utcnow(), replaced for those modules only.
No request leaves the process: a before-send hook captures the signed request and aborts.
"""

import base64
import datetime
import json
import sys
import types
from urllib.parse import urlsplit

import boto3
import botocore.auth
from botocore.config import Config

SIGNING_TIME = datetime.datetime(2026, 12, 1, 0, 0, 0)  # naive UTC, as utcnow() returns
ENDPOINT = "http://127.0.0.1:7071"


class _PinnedDatetime(datetime.datetime):
    @classmethod
    def utcnow(cls):
        return cls(SIGNING_TIME.year, SIGNING_TIME.month, SIGNING_TIME.day, SIGNING_TIME.hour,
                   SIGNING_TIME.minute, SIGNING_TIME.second)


# Only the signers see the pinned clock; the datetime module itself is left alone.
_PINNED = types.SimpleNamespace(datetime=_PinnedDatetime, timezone=datetime.timezone)
botocore.auth.datetime = _PINNED
try:
    import botocore.crt.auth
    botocore.crt.auth.datetime = _PINNED
    CRT_SIGNERS = botocore.crt.auth.CRT_AUTH_TYPE_MAPS
except ImportError:  # no awscrt: botocore signs in Python only
    CRT_SIGNERS = None

PYTHON_SIGNERS = {
    "v4": botocore.auth.SigV4Auth,
    "v4-query": botocore.auth.SigV4QueryAuth,
    "s3v4": botocore.auth.S3SigV4Auth,
    "s3v4-query": botocore.auth.S3SigV4QueryAuth,
}


class _Captured(Exception):
    def __init__(self, request):
        super().__init__("captured")
        self.request = request


def _capture(request, **_):
    raise _Captured(request)


def _entry(name, service, method, url, headers, body):
    parts = urlsplit(url)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    pairs = [[k, v.decode() if isinstance(v, bytes) else v] for k, v in headers.items()]
    if not any(k.lower() == "host" for k, _ in pairs):
        pairs.append(["Host", botocore.auth._host_from_url(url)])
    if body is None:
        body = b""
    elif isinstance(body, str):
        body = body.encode()
    elif hasattr(body, "read"):
        body = body.read()
    return {
        "name": name,
        "service": service,
        "method": method,
        "target": target,
        "headers": pairs,
        "body_base64": base64.b64encode(body).decode(),
        "now": int((SIGNING_TIME - datetime.datetime(1970, 1, 1)).total_seconds()),
    }


def _signed(client, name, service, call):
    client.meta.events.register("before-send", _capture)
    try:
        call()
    except _Captured as captured:
        r = captured.request
        return _entry(name, service, r.method, r.url, r.headers, r.body)
    raise RuntimeError(name + ": botocore sent nothing")


def _requests(prefix, key_id, secret):
    session = boto3.session.Session(aws_access_key_id=key_id, aws_secret_access_key=secret,
                                    region_name="us-east-1")
    sagemaker = session.client("sagemaker", endpoint_url=ENDPOINT)
    awslambda = session.client("lambda", endpoint_url=ENDPOINT)
    s3 = session.client("s3", endpoint_url=ENDPOINT,
                        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))
    out = [
        # AWS JSON 1.1: POST / with X-Amz-Target (the "v4" signer).
        _signed(sagemaker, prefix + "sagemaker-describe", "sagemaker", lambda: sagemaker.
                describe_hyper_parameter_tuning_job(HyperParameterTuningJobName="toy-random")),
        # S3 REST: a key whose path needs encoding and a query string (the "s3v4" signer).
        _signed(s3, prefix + "s3-get-object", "s3", lambda: s3.get_object(
            Bucket="amt-data", Key="train/part 1+(a)~é.csv",
            ResponseContentType="text/csv; charset=utf-8")),
        _signed(s3, prefix + "s3-put-object", "s3", lambda: s3.put_object(
            Bucket="amt-data", Key="models/model.tar.gz", Body=b"not really a tarball\n")),
        # REST-JSON, not S3: the ARN's ':' is %3A on the wire and %253A in the canonical URI.
        _signed(awslambda, prefix + "lambda-invoke", "lambda", lambda: awslambda.invoke(
            FunctionName="arn:aws:lambda:us-east-1:123456789012:function:toy",
            Qualifier="$LATEST", Payload=b'{"x": 1}')),
    ]
    # A presigned URL ("s3v4-query"): the client sends it later with only a Host header.
    url = s3.generate_presigned_url("get_object", ExpiresIn=600, Params={
        "Bucket": "amt-data", "Key": "output/job 7/model.tar.gz"})
    out.append(_entry(prefix + "s3-presigned-get", "s3", "GET", url, {}, b""))
    return out


def main():
    key_id, secret = sys.argv[1], sys.argv[2]
    # botocore looks its signer class up in AUTH_TYPE_MAPS for every request.
    botocore.auth.AUTH_TYPE_MAPS.update(PYTHON_SIGNERS)
    out = _requests("python/", key_id, secret)
    if CRT_SIGNERS is not None:
        botocore.auth.AUTH_TYPE_MAPS.update(CRT_SIGNERS)
        out += _requests("crt/", key_id, secret)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
