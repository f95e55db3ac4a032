// AWS's own error for a refused signature, as the service would send it: the error code, the
// exact message and the HTTP status. Two families differ: the AWS JSON services (SageMaker,
// on the coral front end: *Exception codes, mostly HTTP 400) and S3 (REST-XML codes, mostly
// HTTP 403). Each text in auth_errors.cc names where it was found: captures of real responses
// in issue threads first, then emulators that copy AWS (mhart/dynalite for the JSON front end,
// LocalStack, MinIO and versitygw for S3). Where no source was found the choice is marked
// "ours" in the table.
#ifndef AMT_ORCHESTRATOR_AUTH_AUTH_ERRORS_H_
#define AMT_ORCHESTRATOR_AUTH_AUTH_ERRORS_H_

#include <string>

#include "orchestrator/auth/sigv4.h"

namespace amt::auth {

struct AwsAuthError {
  std::string code;     // "InvalidSignatureException", "SignatureDoesNotMatch", ...
  std::string message;  // the exact text AWS sends
  int http_status = 0;
};

// The error of an AWS JSON 1.0/1.1 service (the body's "__type" without any namespace, and
// "message"). A signature mismatch carries the canonical request and string to sign after the
// message, as AWS does.
AwsAuthError JsonServiceAuthError(const AuthFailure& failure);

// The error of S3 (<Error><Code>, <Message>). S3 adds elements the AuthFailure holds the values
// of, for the S3 handler to render: RequestTimeTooSkewed has RequestTime, ServerTime and
// MaxAllowedSkewMilliseconds; "Request has expired" has X-Amz-Expires, Expires and ServerTime;
// InvalidAccessKeyId and SignatureDoesNotMatch have AWSAccessKeyId, the latter also
// StringToSign, SignatureProvided and CanonicalRequest.
AwsAuthError S3AuthError(const AuthFailure& failure);

}  // namespace amt::auth

#endif  // AMT_ORCHESTRATOR_AUTH_AUTH_ERRORS_H_
