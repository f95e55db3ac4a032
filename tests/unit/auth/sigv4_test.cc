#include "orchestrator/auth/sigv4.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/status_matchers.h"
#include "tests/unit/auth/test_signer.h"

namespace amt::auth {
namespace {

using ::amt::auth::testing::ExampleCredentials;
using ::amt::auth::testing::ExampleGet;
using ::amt::auth::testing::HeaderSigned;
using ::amt::auth::testing::HeaderValue;
using ::amt::auth::testing::kSignedAt;
using ::amt::auth::testing::QuerySigned;
using ::amt::auth::testing::SignSpec;
using ::amt::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using R = AuthFailureReason;

class VerifySigV4Test : public ::testing::Test {
 protected:
  AuthResult Verify(const SigV4Request& request, VerifyOptions options = {}) {
    return VerifySigV4(request, credentials_, options);
  }
  // The failure of a request expected to be refused.
  AuthFailure Failure(const SigV4Request& request, VerifyOptions options = {}) {
    const AuthResult result = Verify(request, options);
    EXPECT_FALSE(result.ok()) << "accepted";
    return result.ok() ? AuthFailure{} : result.failure();
  }
  Credentials credentials_ = ExampleCredentials();
};

TEST_F(VerifySigV4Test, RefusesARequestWithoutAnyAuthentication) {
  const AuthFailure none = Failure(ExampleGet());
  EXPECT_EQ(none.reason, R::kMissingAuthentication);
  EXPECT_EQ(none.server_time, "20150830T123600Z");
  SigV4Request bearer = ExampleGet();
  bearer.headers.emplace_back("authorization", "Bearer abc");
  const AuthFailure other_scheme = Failure(bearer);
  EXPECT_EQ(other_scheme.reason, R::kMissingAuthentication);
  EXPECT_EQ(other_scheme.authorization, "Bearer abc");
}

TEST_F(VerifySigV4Test, RefusesBothTheHeaderAndTheQueryForm) {
  SigV4Request request = HeaderSigned(ExampleGet("/?X-Amz-Algorithm=AWS4-HMAC-SHA256"));
  EXPECT_EQ(Failure(request).reason, R::kAmbiguousAuthentication);
}

TEST_F(VerifySigV4Test, RefusesAComponentWithoutEqualSign) {
  SigV4Request request = ExampleGet();
  request.headers.emplace_back("X-Amz-Date", "20150830T123600Z");
  request.headers.emplace_back(
      "Authorization",
      "AWS4-HMAC-SHA256 Credential= AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
      "SignedHeaders=host;x-amz-date, Signature=abc");
  const AuthFailure failure = Failure(request);
  EXPECT_EQ(failure.reason, R::kMalformedAuthorization);
  EXPECT_EQ(failure.value, "AKIDEXAMPLE/20150830/us-east-1/service/aws4_request");
}

TEST_F(VerifySigV4Test, ListsWhatTheHeaderFormLacks) {
  SigV4Request request = ExampleGet();
  request.headers.emplace_back("Authorization", "AWS4-HMAC-SHA256 Signature=abc");
  const AuthFailure failure = Failure(request);
  EXPECT_EQ(failure.reason, R::kIncompleteSignature);
  EXPECT_FALSE(failure.presigned);
  EXPECT_THAT(failure.missing, ElementsAre("Credential", "SignedHeaders", "X-Amz-Date"));
}

TEST_F(VerifySigV4Test, ListsWhatTheQueryFormLacks) {
  const AuthFailure failure =
      Failure(ExampleGet("/?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20150830T123600Z"));
  EXPECT_EQ(failure.reason, R::kIncompleteSignature);
  EXPECT_TRUE(failure.presigned);
  EXPECT_THAT(failure.missing, ElementsAre("X-Amz-Credential", "X-Amz-Signature",
                                           "X-Amz-SignedHeaders", "X-Amz-Expires"));
}

TEST_F(VerifySigV4Test, RefusesADateNotInBasicFormat) {
  for (const char* date : {"2015-08-30T12:36:00Z", "20150230T123600Z", "20150830T123600",
                           "20150830T246000Z", "2015083OT123600Z"}) {
    SigV4Request request = ExampleGet();
    request.headers.emplace_back("X-Amz-Date", date);
    const AuthFailure failure = Failure(HeaderSigned(request));
    EXPECT_EQ(failure.reason, R::kMalformedDate) << date;
    EXPECT_EQ(failure.value, date);
  }
}

TEST_F(VerifySigV4Test, AcceptsASkewOfUpTo15MinutesEitherWay) {
  SigV4Request request = HeaderSigned(ExampleGet());
  request.now = kSignedAt + 900;
  EXPECT_TRUE(Verify(request).ok());
  request.now = kSignedAt - 900;
  EXPECT_TRUE(Verify(request).ok());
}

TEST_F(VerifySigV4Test, RefusesARequestSignedMoreThan15MinutesAgo) {
  SigV4Request request = HeaderSigned(ExampleGet());
  request.now = kSignedAt + 901;
  const AuthFailure failure = Failure(request);
  EXPECT_EQ(failure.reason, R::kRequestTooOld);
  EXPECT_EQ(failure.request_time, "20150830T123600Z");
  EXPECT_EQ(failure.server_time, "20150830T125101Z");
  EXPECT_EQ(failure.limit_time, "20150830T123601Z");
  EXPECT_EQ(failure.window_seconds, 900);
}

TEST_F(VerifySigV4Test, RefusesARequestSignedMoreThan15MinutesAhead) {
  SigV4Request request = HeaderSigned(ExampleGet());
  request.now = kSignedAt - 901;
  const AuthFailure failure = Failure(request);
  EXPECT_EQ(failure.reason, R::kRequestTooNew);
  EXPECT_EQ(failure.server_time, "20150830T122059Z");
  EXPECT_EQ(failure.limit_time, "20150830T123559Z");
}

TEST_F(VerifySigV4Test, TakesTheSkewFromTheOptions) {
  SigV4Request request = HeaderSigned(ExampleGet());
  request.now = kSignedAt + 61;
  EXPECT_EQ(Failure(request, VerifyOptions{.max_clock_skew_seconds = 60}).reason,
            R::kRequestTooOld);
  EXPECT_TRUE(Verify(request, VerifyOptions{.max_clock_skew_seconds = 61}).ok());
}

TEST_F(VerifySigV4Test, AcceptsAPresignedUrlUntilItExpires) {
  SignSpec spec;
  spec.service = "s3";
  spec.signed_headers = "host";
  SigV4Request request = QuerySigned(ExampleGet("/bucket/key%20one.txt"), spec, "600");
  request.now = kSignedAt + 600;
  const AuthResult result = Verify(request);
  ASSERT_TRUE(result.ok()) << result.failure().detail;
  EXPECT_TRUE(result.principal().presigned);
  EXPECT_EQ(result.principal().service, "s3");
  request.now = kSignedAt + 601;
  const AuthFailure failure = Failure(request);
  EXPECT_EQ(failure.reason, R::kPresignedUrlExpired);
  EXPECT_EQ(failure.window_seconds, 600);
  EXPECT_EQ(failure.limit_time, "20150830T123601Z");
}

TEST_F(VerifySigV4Test, RefusesAPresignedUrlFromTheFuture) {
  SigV4Request request = QuerySigned(ExampleGet(), SignSpec{.signed_headers = "host"}, "600");
  request.now = kSignedAt - 901;
  const AuthFailure failure = Failure(request);
  EXPECT_EQ(failure.reason, R::kRequestTooNew);
  EXPECT_TRUE(failure.presigned);
}

TEST_F(VerifySigV4Test, RefusesAnExpiresThatIsNotAWeekOrLess) {
  for (const char* expires : {"604801", "abc", "-1", "99999999999"}) {
    const AuthFailure failure =
        Failure(QuerySigned(ExampleGet(), SignSpec{.signed_headers = "host"}, expires));
    EXPECT_EQ(failure.reason, R::kInvalidExpires) << expires;
    EXPECT_EQ(failure.value, expires);
  }
  SigV4Request week = QuerySigned(ExampleGet(), SignSpec{.signed_headers = "host"}, "604800");
  EXPECT_TRUE(Verify(week).ok());
}

TEST_F(VerifySigV4Test, RefusesASignatureThatDoesNotCoverHost) {
  EXPECT_EQ(Failure(HeaderSigned(ExampleGet(), SignSpec{.signed_headers = "x-amz-date"})).reason,
            R::kHostNotSigned);
}

TEST_F(VerifySigV4Test, RefusesAnotherAlgorithm) {
  SigV4Request request = HeaderSigned(ExampleGet());
  std::string& authorization = HeaderValue(request, "Authorization");
  authorization.replace(0, 16, "AWS4-HMAC-SHA512");
  const AuthFailure failure = Failure(request);
  EXPECT_EQ(failure.reason, R::kUnsupportedAlgorithm);
  EXPECT_EQ(failure.value, "AWS4-HMAC-SHA512");
}

TEST_F(VerifySigV4Test, RefusesACredentialWithoutFiveParts) {
  SigV4Request request = ExampleGet();
  request.headers.emplace_back("X-Amz-Date", "20150830T123600Z");
  request.headers.emplace_back("Authorization",
                               "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1, "
                               "SignedHeaders=host;x-amz-date, Signature=abc");
  const AuthFailure failure = Failure(request);
  EXPECT_EQ(failure.reason, R::kMalformedCredential);
  EXPECT_EQ(failure.value, "AKIDEXAMPLE/20150830/us-east-1");
}

TEST_F(VerifySigV4Test, IgnoresATrailingSlashAfterTheCredential) {
  SigV4Request request = HeaderSigned(ExampleGet());
  std::string& authorization = HeaderValue(request, "Authorization");
  authorization.replace(authorization.find("aws4_request,"), 13, "aws4_request/,");
  EXPECT_TRUE(Verify(request).ok());
}

TEST_F(VerifySigV4Test, RefusesAScopeThatDoesNotEndInAws4Request) {
  const AuthFailure failure = Failure(HeaderSigned(ExampleGet(), SignSpec{.terminator = "x"}));
  EXPECT_EQ(failure.reason, R::kWrongTerminator);
  EXPECT_EQ(failure.value, "x");
  EXPECT_EQ(failure.access_key_id, "AKIDEXAMPLE");
}

TEST_F(VerifySigV4Test, RefusesAScopeDateOtherThanXAmzDatesDay) {
  const AuthFailure failure =
      Failure(HeaderSigned(ExampleGet(), SignSpec{.scope_date = "20150831"}));
  EXPECT_EQ(failure.reason, R::kScopeDateMismatch);
  EXPECT_EQ(failure.value, "20150831");
}

TEST_F(VerifySigV4Test, AcceptsAnyRegionAndService) {
  for (const char* service : {"sagemaker", "s3", "logs"}) {
    SignSpec spec{.region = "eu-west-3", .service = service};
    const AuthResult result = Verify(HeaderSigned(ExampleGet("/a%20b"), spec));
    ASSERT_TRUE(result.ok()) << service << ": " << result.failure().detail;
    EXPECT_EQ(result.principal().region, "eu-west-3");
    EXPECT_EQ(result.principal().service, service);
  }
}

TEST_F(VerifySigV4Test, RefusesAnUnknownAccessKey) {
  const AuthFailure failure = Failure(HeaderSigned(ExampleGet(), SignSpec{.key_id = "AKIDOTHER"}));
  EXPECT_EQ(failure.reason, R::kUnknownAccessKey);
  EXPECT_EQ(failure.value, "AKIDOTHER");
}

TEST_F(VerifySigV4Test, ReportsWhatTheSignatureWasComputedOverOnAMismatch) {
  const AuthFailure failure =
      Failure(HeaderSigned(ExampleGet(), SignSpec{.secret = "not-the-secret"}));
  EXPECT_EQ(failure.reason, R::kSignatureMismatch);
  EXPECT_EQ(failure.canonical_request,
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
            "host;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(failure.string_to_sign,
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
            "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63");
  EXPECT_EQ(failure.signature_provided.size(), 64u);
  EXPECT_THAT(failure.detail, Not(HasSubstr("not-the-secret")));
}

TEST_F(VerifySigV4Test, TakesThePayloadHashFromXAmzContentSha256) {
  SigV4Request unsigned_payload = ExampleGet();
  unsigned_payload.headers.emplace_back("x-amz-content-sha256", "UNSIGNED-PAYLOAD");
  unsigned_payload.body = "anything";
  EXPECT_TRUE(
      Verify(HeaderSigned(unsigned_payload,
                          SignSpec{.signed_headers = "host;x-amz-content-sha256;x-amz-date"}))
          .ok());

  SigV4Request hashed = ExampleGet();
  hashed.headers.emplace_back("x-amz-content-sha256", Sha256Hex("abc"));
  hashed.body = "abc";
  hashed = HeaderSigned(
      hashed, SignSpec{.service = "s3", .signed_headers = "host;x-amz-content-sha256;x-amz-date"});
  EXPECT_TRUE(Verify(hashed).ok());
  hashed.body = "abd";  // the signature still holds; the body is not what was signed
  const AuthFailure failure = Failure(hashed);
  EXPECT_EQ(failure.reason, R::kContentSha256Mismatch);
  EXPECT_EQ(failure.payload_sha256, Sha256Hex("abd"));
}

TEST_F(VerifySigV4Test, RefusesChunkedPayloadSigning) {
  SigV4Request request = ExampleGet();
  request.headers.emplace_back("x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD");
  const AuthFailure failure = Failure(HeaderSigned(
      request,
      SignSpec{.service = "s3", .signed_headers = "host;x-amz-content-sha256;x-amz-date"}));
  EXPECT_EQ(failure.reason, R::kUnsupportedPayload);
  EXPECT_EQ(failure.value, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD");
}

TEST_F(VerifySigV4Test, StatusIsUnauthenticatedWithTheDetail) {
  EXPECT_THAT(Verify(ExampleGet()).status(),
              StatusIs(absl::StatusCode::kUnauthenticated,
                       "no Authorization header and no X-Amz-Algorithm query parameter"));
  EXPECT_TRUE(Verify(HeaderSigned(ExampleGet())).status().ok());
}

}  // namespace
}  // namespace amt::auth
