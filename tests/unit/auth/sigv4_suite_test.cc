// AWS's Signature Version 4 test suite ("aws-sig-v4-test-suite", published in the AWS General
// Reference; the copy read was bazelbuild/bazel third_party/aws-sig-v4-test-suite, its .sreq
// files): key AKIDEXAMPLE / wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, region us-east-1, service
// "service", X-Amz-Date 20150830T123600Z. Each signed request must verify, and fail as a
// signature mismatch once one byte of its signature, body, a signed header or its target changes.
#include <gtest/gtest.h>

#include <string>

#include "orchestrator/auth/sigv4.h"
#include "tests/unit/auth/test_signer.h"

namespace amt::auth {
namespace {

using ::amt::auth::testing::ExampleCredentials;
using ::amt::auth::testing::HeaderValue;
using ::amt::auth::testing::kSignedAt;

struct SuiteHeader {
  const char* name;
  const char* value;
};

// `target` and the header values are the .sreq text verbatim (a header's value is everything
// after its ':'). Host, X-Amz-Date and Authorization are added to every case.
struct SuiteCase {
  const char* name;
  const char* method;
  const char* target;
  SuiteHeader headers[4];  // unused slots have a null name
  const char* body;
  const char* signed_headers;
  const char* signature;
};

constexpr char kVanillaSignature[] =
    "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31";

constexpr SuiteCase kSuiteCases[] = {
    {"get_vanilla", "GET", "/", {}, "", "host;x-amz-date", kVanillaSignature},
    {"get_vanilla_query_order_key_case",
     "GET",
     "/?Param2=value2&Param1=value1",
     {},
     "",
     "host;x-amz-date",
     "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"},
    {"get_vanilla_query_order_value",
     "GET",
     "/?Param1=value2&Param1=value1",
     {},
     "",
     "host;x-amz-date",
     "5772eed61e12b33fae39ee5e7012498b51d56abc0abb7c60486157bd471c4694"},
    {"get_vanilla_query_unreserved",
     "GET",
     "/?-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz="
     "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
     {},
     "",
     "host;x-amz-date",
     "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197"},
    {"get_vanilla_utf8_query",
     "GET",
     "/?\xE1\x88\xB4=bar",
     {},
     "",
     "host;x-amz-date",
     "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04"},
    {"get_vanilla_empty_query_key",
     "GET",
     "/?Param1=value1",
     {},
     "",
     "host;x-amz-date",
     "a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb"},
    {"get_header_value_trim",
     "GET",
     "/",
     {{"My-Header1", " value1"}, {"My-Header2", " \"a   b   c\""}},
     "",
     "host;my-header1;my-header2;x-amz-date",
     "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"},
    {"get_header_key_duplicate",
     "GET",
     "/",
     {{"My-Header1", "value2"}, {"My-Header1", "value2"}, {"My-Header1", "value1"}},
     "",
     "host;my-header1;x-amz-date",
     "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea"},
    {"get_header_value_order",
     "GET",
     "/",
     {{"My-Header1", "value4"},
      {"My-Header1", "value1"},
      {"My-Header1", "value3"},
      {"My-Header1", "value2"}},
     "",
     "host;my-header1;x-amz-date",
     "08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01"},
    {"get_unreserved",
     "GET",
     "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
     {},
     "",
     "host;x-amz-date",
     "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f"},
    {"get_utf8",
     "GET",
     "/\xE1\x88\xB4",
     {},
     "",
     "host;x-amz-date",
     "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85"},
    // normalize-path/: what the suite expects of a service other than S3.
    {"get_space",
     "GET",
     "/example space/",
     {},
     "",
     "host;x-amz-date",
     "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741"},
    {"get_slash", "GET", "//", {}, "", "host;x-amz-date", kVanillaSignature},
    {"get_slash_dot_slash", "GET", "/./", {}, "", "host;x-amz-date", kVanillaSignature},
    {"get_relative_relative",
     "GET",
     "/example1/example2/../..",
     {},
     "",
     "host;x-amz-date",
     kVanillaSignature},
    {"post_vanilla",
     "POST",
     "/",
     {},
     "",
     "host;x-amz-date",
     "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"},
    {"post_vanilla_empty_query_value",
     "POST",
     "/?Param1=value1",
     {},
     "",
     "host;x-amz-date",
     "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11"},
    {"post_header_key_sort",
     "POST",
     "/",
     {{"My-Header1", "value1"}},
     "",
     "host;my-header1;x-amz-date",
     "c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c"},
    {"post_header_value_case",
     "POST",
     "/",
     {{"My-Header1", "VALUE1"}},
     "",
     "host;my-header1;x-amz-date",
     "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d"},
    {"post_x_www_form_urlencoded",
     "POST",
     "/",
     {{"Content-Type", "application/x-www-form-urlencoded"}},
     "Param1=value1",
     "content-type;host;x-amz-date",
     "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"},
    {"post_x_www_form_urlencoded_parameters",
     "POST",
     "/",
     {{"Content-Type", "application/x-www-form-urlencoded; charset=utf8"}},
     "Param1=value1",
     "content-type;host;x-amz-date",
     "1a72ec8f64bd914b0e42e42607c7fbce7fb2c7465f63e3092b3b0d39fa77a6fe"},
    // post-sts-token/post-sts-header-before: the session token is signed like any header.
    {"post_sts_header_before",
     "POST",
     "/",
     {{"X-Amz-Security-Token",
       "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfp"
       "SPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPk"
       "yQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbq"
       "BAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA=="}},
     "",
     "host;x-amz-date;x-amz-security-token",
     "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"},
};

SigV4Request SuiteRequest(const SuiteCase& c, const std::string& signature) {
  SigV4Request request;
  request.method = c.method;
  request.target = c.target;
  request.headers = {{"Host", "example.amazonaws.com"}};
  for (const SuiteHeader& header : c.headers) {
    if (header.name != nullptr) request.headers.emplace_back(header.name, header.value);
  }
  request.headers.emplace_back("X-Amz-Date", "20150830T123600Z");
  request.headers.emplace_back(
      "Authorization",
      std::string("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/"
                  "aws4_request, SignedHeaders=") +
          c.signed_headers + ", Signature=" + signature);
  request.body = c.body;
  request.now = kSignedAt + 30;
  return request;
}

// One byte different: the last character moved to the next one ('f' wraps to '0').
std::string ChangeLastByte(std::string text) {
  char& c = text.back();
  c = c == 'f' ? '0' : static_cast<char>(c + 1);
  return text;
}

class SuiteTest : public ::testing::TestWithParam<SuiteCase> {
 protected:
  AuthResult Verify(const SigV4Request& request) { return VerifySigV4(request, credentials_); }
  // The reason a request is refused; a test failure when it is accepted.
  AuthFailureReason ReasonOf(const SigV4Request& request) {
    const AuthResult result = Verify(request);
    if (result.ok()) {
      ADD_FAILURE() << "accepted";
      return AuthFailureReason::kMissingAuthentication;
    }
    return result.failure().reason;
  }
  Credentials credentials_ = ExampleCredentials();
};

TEST_P(SuiteTest, SignatureVerifies) {
  const AuthResult result = Verify(SuiteRequest(GetParam(), GetParam().signature));
  ASSERT_TRUE(result.ok()) << result.failure().detail << "\n" << result.failure().canonical_request;
  EXPECT_EQ(result.principal().access_key_id, "AKIDEXAMPLE");
  EXPECT_EQ(result.principal().profile, "example");
  EXPECT_EQ(result.principal().region, "us-east-1");
  EXPECT_EQ(result.principal().service, "service");
  EXPECT_FALSE(result.principal().presigned);
}

TEST_P(SuiteTest, OneByteOfTheSignatureChangedIsAMismatch) {
  EXPECT_EQ(ReasonOf(SuiteRequest(GetParam(), ChangeLastByte(GetParam().signature))),
            AuthFailureReason::kSignatureMismatch);
}

TEST_P(SuiteTest, OneByteOfTheBodyChangedIsAMismatch) {
  SigV4Request request = SuiteRequest(GetParam(), GetParam().signature);
  request.body = request.body.empty() ? "x" : ChangeLastByte(request.body);
  EXPECT_EQ(ReasonOf(request), AuthFailureReason::kSignatureMismatch);
}

TEST_P(SuiteTest, OneByteOfASignedHeaderChangedIsAMismatch) {
  SigV4Request host_changed = SuiteRequest(GetParam(), GetParam().signature);
  HeaderValue(host_changed, "Host") = ChangeLastByte(HeaderValue(host_changed, "Host"));
  EXPECT_EQ(ReasonOf(host_changed), AuthFailureReason::kSignatureMismatch);
  // A second later, same day and within the skew: only the signature can tell.
  SigV4Request date_changed = SuiteRequest(GetParam(), GetParam().signature);
  HeaderValue(date_changed, "X-Amz-Date") = "20150830T123601Z";
  EXPECT_EQ(ReasonOf(date_changed), AuthFailureReason::kSignatureMismatch);
}

TEST_P(SuiteTest, OneByteOfTheTargetChangedIsAMismatch) {
  SigV4Request request = SuiteRequest(GetParam(), GetParam().signature);
  request.target += "x";
  EXPECT_EQ(ReasonOf(request), AuthFailureReason::kSignatureMismatch);
}

INSTANTIATE_TEST_SUITE_P(AwsSigV4TestSuite, SuiteTest, ::testing::ValuesIn(kSuiteCases),
                         [](const ::testing::TestParamInfo<SuiteCase>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace amt::auth
