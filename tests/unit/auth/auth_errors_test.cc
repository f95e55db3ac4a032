#include "orchestrator/auth/auth_errors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "tests/unit/auth/test_signer.h"

namespace amt::auth {

// So that gMock prints an AwsAuthError readably.
void PrintTo(const AwsAuthError& error, std::ostream* os) {
  *os << "{" << error.code << ", \"" << error.message << "\", " << error.http_status << "}";
}

namespace {

using ::amt::auth::testing::ExampleCredentials;
using ::amt::auth::testing::ExampleGet;
using ::amt::auth::testing::HeaderSigned;
using ::amt::auth::testing::kSignedAt;
using ::amt::auth::testing::QuerySigned;
using ::amt::auth::testing::SignSpec;

// Field by field, so a failure shows which one differs.
MATCHER_P3(IsAwsError, code, message, status, "") {
  return ::testing::ExplainMatchResult(::testing::Eq(code), arg.code, result_listener) &&
         ::testing::ExplainMatchResult(::testing::Eq(message), arg.message, result_listener) &&
         ::testing::ExplainMatchResult(::testing::Eq(status), arg.http_status, result_listener);
}

AuthFailure FailureOf(const SigV4Request& request) {
  const AuthResult result = VerifySigV4(request, ExampleCredentials());
  EXPECT_FALSE(result.ok());
  return result.ok() ? AuthFailure{} : result.failure();
}

SigV4Request WithAuthorization(std::string authorization, bool with_date = true) {
  SigV4Request request = ExampleGet();
  if (with_date) request.headers.emplace_back("X-Amz-Date", "20150830T123600Z");
  request.headers.emplace_back("Authorization", std::move(authorization));
  return request;
}

SignSpec PresignSpec() { return SignSpec{.service = "s3", .signed_headers = "host"}; }

TEST(JsonServiceAuthError, MissingToken) {
  EXPECT_THAT(
      JsonServiceAuthError(FailureOf(ExampleGet())),
      IsAwsError("MissingAuthenticationTokenException", "Missing Authentication Token", 403));
}

TEST(JsonServiceAuthError, IncompleteSignatureQuotesTheHeader) {
  EXPECT_THAT(
      JsonServiceAuthError(FailureOf(WithAuthorization("AWS4-HMAC-SHA256 Signature=abc", false))),
      IsAwsError("IncompleteSignatureException",
                 "Authorization header requires 'Credential' parameter. Authorization header "
                 "requires 'SignedHeaders' parameter. Authorization header requires existence of "
                 "either a 'X-Amz-Date' or a 'Date' header. "
                 "Authorization=AWS4-HMAC-SHA256 Signature=abc",
                 400));
  EXPECT_THAT(JsonServiceAuthError(FailureOf(ExampleGet("/?X-Amz-Algorithm=AWS4-HMAC-SHA256&"
                                                        "X-Amz-Credential=a&X-Amz-Signature=b&"
                                                        "X-Amz-SignedHeaders=host"))),
              IsAwsError("IncompleteSignatureException",
                         "AWS query-string parameters must include 'X-Amz-Date'. AWS query-string "
                         "parameters must include 'X-Amz-Expires'. Re-examine the query-string "
                         "parameters.",
                         400));
}

TEST(JsonServiceAuthError, ComponentWithoutEqualSign) {
  const std::string header =
      "AWS4-HMAC-SHA256 Credential= AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
      "SignedHeaders=host;x-amz-date, Signature=abc";
  EXPECT_THAT(JsonServiceAuthError(FailureOf(WithAuthorization(header))),
              IsAwsError("IncompleteSignatureException",
                         "'AKIDEXAMPLE/20150830/us-east-1/service/aws4_request' not a valid "
                         "key=value pair (missing equal-sign) in Authorization header: '" +
                             header + "'.",
                         400));
}

TEST(JsonServiceAuthError, BothForms) {
  EXPECT_THAT(
      JsonServiceAuthError(FailureOf(HeaderSigned(ExampleGet("/?X-Amz-Algorithm=x")))),
      IsAwsError("InvalidSignatureException",
                 "Found both 'X-Amz-Algorithm' as a query-string param and 'Authorization' as "
                 "HTTP header.",
                 400));
}

TEST(JsonServiceAuthError, MalformedDate) {
  SigV4Request request = ExampleGet();
  request.headers.emplace_back("X-Amz-Date", "201");
  EXPECT_THAT(JsonServiceAuthError(FailureOf(HeaderSigned(request))),
              IsAwsError("IncompleteSignatureException",
                         "Date must be in ISO-8601 'basic format'. Got '201'. See "
                         "http://en.wikipedia.org/wiki/ISO_8601",
                         400));
}

TEST(JsonServiceAuthError, ExpiredAndNotYetCurrent) {
  SigV4Request request = HeaderSigned(ExampleGet());
  request.now = kSignedAt + 1000;
  EXPECT_THAT(JsonServiceAuthError(FailureOf(request)),
              IsAwsError("InvalidSignatureException",
                         "Signature expired: 20150830T123600Z is now earlier than "
                         "20150830T123740Z (20150830T125240Z - 15 min.)",
                         400));
  request.now = kSignedAt - 1000;
  EXPECT_THAT(JsonServiceAuthError(FailureOf(request)),
              IsAwsError("InvalidSignatureException",
                         "Signature not yet current: 20150830T123600Z is still later than "
                         "20150830T123420Z (20150830T121920Z + 15 min.)",
                         400));
  request.now = kSignedAt + 100;
  const AuthResult result =
      VerifySigV4(request, ExampleCredentials(), VerifyOptions{.max_clock_skew_seconds = 90});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(JsonServiceAuthError(result.failure()).message,
            "Signature expired: 20150830T123600Z is now earlier than 20150830T123610Z "
            "(20150830T123740Z - 90 sec.)");
}

TEST(JsonServiceAuthError, HostAlgorithmAndCredentialScope) {
  EXPECT_THAT(JsonServiceAuthError(
                  FailureOf(HeaderSigned(ExampleGet(), SignSpec{.signed_headers = "x-amz-date"}))),
              IsAwsError("InvalidSignatureException",
                         "'Host' must be a 'SignedHeader' in the AWS Authorization.", 400));
  EXPECT_THAT(JsonServiceAuthError(FailureOf(WithAuthorization(
                  "AWS4-HMAC-SHA25 Credential=a/b/c/d/e, SignedHeaders=host, Signature=x"))),
              IsAwsError("IncompleteSignatureException",
                         "Unsupported AWS 'algorithm': 'AWS4-HMAC-SHA25' (only AWS4-HMAC-SHA256 "
                         "for now). ",
                         400));
  EXPECT_THAT(JsonServiceAuthError(FailureOf(WithAuthorization(
                  "AWS4-HMAC-SHA256 Credential=a/b/c/d, SignedHeaders=host, Signature=x"))),
              IsAwsError("IncompleteSignatureException",
                         "Credential must have exactly 5 slash-delimited elements, e.g. "
                         "keyid/date/region/service/term, got 'a/b/c/d'",
                         400));
  EXPECT_THAT(
      JsonServiceAuthError(FailureOf(HeaderSigned(ExampleGet(), SignSpec{.terminator = "e"}))),
      IsAwsError("InvalidSignatureException",
                 "Credential should be scoped with a valid terminator: 'aws4_request', not 'e'. ",
                 400));
  EXPECT_THAT(JsonServiceAuthError(
                  FailureOf(HeaderSigned(ExampleGet(), SignSpec{.scope_date = "20150831"}))),
              IsAwsError("InvalidSignatureException",
                         "Date in Credential scope does not match YYYYMMDD from ISO-8601 version "
                         "of date from HTTP: '20150831' != '20150830', from '20150830T123600Z'. ",
                         400));
}

TEST(JsonServiceAuthError, UnknownKey) {
  EXPECT_THAT(JsonServiceAuthError(FailureOf(HeaderSigned(ExampleGet(), SignSpec{.key_id = "X"}))),
              IsAwsError("UnrecognizedClientException",
                         "The security token included in the request is invalid.", 400));
}

TEST(JsonServiceAuthError, SignatureMismatchEchoesTheCanonicalRequest) {
  EXPECT_THAT(
      JsonServiceAuthError(FailureOf(HeaderSigned(ExampleGet(), SignSpec{.secret = "wrong"}))),
      IsAwsError(
          "InvalidSignatureException",
          "The request signature we calculated does not match the signature you provided. Check "
          "your AWS Secret Access Key and signing method. Consult the service documentation for "
          "details.\n\nThe Canonical String for this request should have been\n'GET\n/\n\n"
          "host:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n"
          "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'\n\n"
          "The String-to-Sign should have been\n'AWS4-HMAC-SHA256\n20150830T123600Z\n"
          "20150830/us-east-1/service/aws4_request\n"
          "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63'\n",
          400));
}

TEST(S3AuthError, MissingOrForeignAuthentication) {
  EXPECT_THAT(S3AuthError(FailureOf(ExampleGet())),
              IsAwsError("AccessDenied", "Access Denied", 403));
  EXPECT_THAT(S3AuthError(FailureOf(WithAuthorization("Bearer x"))),
              IsAwsError("InvalidArgument", "Unsupported Authorization Type", 400));
  EXPECT_THAT(S3AuthError(FailureOf(WithAuthorization("AWS AKIDEXAMPLE:c2lnbmF0dXJl"))),
              IsAwsError("InvalidRequest",
                         "The authorization mechanism you have provided is not supported. Please "
                         "use AWS4-HMAC-SHA256.",
                         400));
  // boto3's default S3 presigned URL (Signature Version 2 in the query): the same answer, not
  // a bare "Access Denied".
  EXPECT_THAT(S3AuthError(FailureOf(ExampleGet(
                  "/bucket/key?AWSAccessKeyId=AKIDEXAMPLE&Signature=c2ln&Expires=1700000000"))),
              IsAwsError("InvalidRequest",
                         "The authorization mechanism you have provided is not supported. Please "
                         "use AWS4-HMAC-SHA256.",
                         400));
  EXPECT_THAT(
      S3AuthError(FailureOf(HeaderSigned(ExampleGet("/?X-Amz-Algorithm=x")))),
      IsAwsError("InvalidArgument",
                 "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, "
                 "Signature query string parameter or the Authorization header should be "
                 "specified",
                 400));
}

TEST(S3AuthError, MalformedHeader) {
  EXPECT_THAT(S3AuthError(FailureOf(WithAuthorization("AWS4-HMAC-SHA256 Signature=abc"))),
              IsAwsError("AuthorizationHeaderMalformed",
                         "The authorization header is malformed; the authorization header "
                         "requires three components: Credential, SignedHeaders, and Signature.",
                         400));
  EXPECT_THAT(S3AuthError(FailureOf(WithAuthorization(
                  "AWS4-HMAC-SHA256 Credential=a/b/c/d/e, SignedHeaders=host, Signature=x",
                  /*with_date=*/false))),
              IsAwsError("AccessDenied",
                         "AWS authentication requires a valid Date or x-amz-date header", 403));
  EXPECT_THAT(S3AuthError(FailureOf(WithAuthorization(
                  "AWS4-HMAC-SHA256 Credential=a/b/c, SignedHeaders=host, Signature=x"))),
              IsAwsError("AuthorizationHeaderMalformed",
                         "The authorization header is malformed; the Credential is mal-formed; "
                         "expecting \"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\".",
                         400));
  EXPECT_THAT(
      S3AuthError(FailureOf(HeaderSigned(ExampleGet(), SignSpec{.scope_date = "20150831"}))),
      IsAwsError("AuthorizationHeaderMalformed",
                 "The authorization header is malformed; Invalid credential date. Date is "
                 "not the same as X-Amz-Date.",
                 400));
  EXPECT_THAT(S3AuthError(FailureOf(HeaderSigned(ExampleGet(), SignSpec{.terminator = "x"}))),
              IsAwsError("AuthorizationHeaderMalformed",
                         "The authorization header is malformed; incorrect terminal \"x\". This "
                         "endpoint uses \"aws4_request\".",
                         400));
}

TEST(S3AuthError, MalformedQuery) {
  EXPECT_THAT(S3AuthError(FailureOf(ExampleGet("/?X-Amz-Algorithm=AWS4-HMAC-SHA256"))),
              IsAwsError("AuthorizationQueryParametersError",
                         "Query-string authentication version 4 requires the X-Amz-Algorithm, "
                         "X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and "
                         "X-Amz-Expires parameters.",
                         400));
  EXPECT_THAT(S3AuthError(FailureOf(QuerySigned(ExampleGet(), PresignSpec(), "604801"))),
              IsAwsError("AuthorizationQueryParametersError",
                         "X-Amz-Expires must be less than a week (in seconds); that is, the given "
                         "X-Amz-Expires must be less than 604800 seconds",
                         400));
  SignSpec wrong_date = PresignSpec();
  wrong_date.scope_date = "20150831";
  EXPECT_THAT(S3AuthError(FailureOf(QuerySigned(ExampleGet(), wrong_date, "60"))),
              IsAwsError("AuthorizationQueryParametersError",
                         "Invalid credential date \"20150831\". This date is not the same as "
                         "X-Amz-Date: \"20150830\".",
                         400));
}

TEST(S3AuthError, TimeAndExpiry) {
  SigV4Request request = HeaderSigned(ExampleGet(), SignSpec{.service = "s3"});
  request.now = kSignedAt + 901;
  EXPECT_THAT(S3AuthError(FailureOf(request)),
              IsAwsError("RequestTimeTooSkewed",
                         "The difference between the request time and the current time is too "
                         "large.",
                         403));
  SigV4Request presigned = QuerySigned(ExampleGet(), PresignSpec(), "60");
  presigned.now = kSignedAt + 61;
  EXPECT_THAT(S3AuthError(FailureOf(presigned)),
              IsAwsError("AccessDenied", "Request has expired", 403));
  presigned.now = kSignedAt - 901;
  EXPECT_THAT(S3AuthError(FailureOf(presigned)),
              IsAwsError("AccessDenied", "Request is not yet valid", 403));
}

TEST(S3AuthError, KeySignatureAndPayload) {
  const SignSpec s3{.service = "s3"};
  SignSpec unknown = s3;
  unknown.key_id = "AKIDOTHER";
  EXPECT_THAT(S3AuthError(FailureOf(HeaderSigned(ExampleGet(), unknown))),
              IsAwsError("InvalidAccessKeyId",
                         "The AWS Access Key Id you provided does not exist in our records.", 403));
  SignSpec wrong_secret = s3;
  wrong_secret.secret = "wrong";
  EXPECT_THAT(S3AuthError(FailureOf(HeaderSigned(ExampleGet(), wrong_secret))),
              IsAwsError("SignatureDoesNotMatch",
                         "The request signature we calculated does not match the signature you "
                         "provided. Check your key and signing method.",
                         403));
  SigV4Request tampered = ExampleGet();
  tampered.headers.emplace_back("x-amz-content-sha256", Sha256Hex("abc"));
  SignSpec with_hash = s3;
  with_hash.signed_headers = "host;x-amz-content-sha256;x-amz-date";
  tampered = HeaderSigned(tampered, with_hash);
  tampered.body = "abd";
  EXPECT_THAT(S3AuthError(FailureOf(tampered)),
              IsAwsError("XAmzContentSHA256Mismatch",
                         "The provided 'x-amz-content-sha256' header does not match what was "
                         "computed.",
                         400));
}

}  // namespace
}  // namespace amt::auth
