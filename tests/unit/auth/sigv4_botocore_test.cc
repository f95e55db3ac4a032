// Real botocore signatures verify: botocore_sign.py signs requests with Debian's botocore (its
// Python SigV4Auth/S3SigV4Auth/S3SigV4QueryAuth and, when awscrt is installed, the CRT signers
// boto3 uses by default), and each must pass VerifySigV4 as it would reach amtd.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "nlohmann/json.hpp"
#include "orchestrator/auth/auth_errors.h"
#include "orchestrator/auth/sigv4.h"

namespace amt::auth {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kKeyId[] = "AKIDBOTOCORE";
constexpr char kSecret[] = "bOtOcOrE/sEcReT+kEy";

struct Signed {
  std::string name;
  std::string service;
  SigV4Request request;
};

// Runs the script once for the whole test program (a second's worth of Python start-up).
const std::vector<Signed>& BotocoreRequests() {
  static const auto* requests = [] {
    auto* out = new std::vector<Signed>();
    const std::string command = std::string(AMT_PYTHON3) + " " + AMT_BOTOCORE_SIGN_SCRIPT + " " +
                                kKeyId + " '" + kSecret + "'";
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return out;
    std::string text;
    char buffer[4096];
    size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) text.append(buffer, n);
    if (::pclose(pipe) != 0) return out;
    for (const nlohmann::json& entry : nlohmann::json::parse(text)) {
      Signed s{entry.at("name"), entry.at("service"), {}};
      s.request.method = entry.at("method");
      s.request.target = entry.at("target");
      for (const nlohmann::json& header : entry.at("headers")) {
        s.request.headers.emplace_back(header.at(0), header.at(1));
      }
      absl::Base64Unescape(entry.at("body_base64").get<std::string>(), &s.request.body);
      // Received half a minute after botocore signed it.
      s.request.now = entry.at("now").get<int64_t>() + 30;
      out->push_back(std::move(s));
    }
    return out;
  }();
  return *requests;
}

Credentials BotocoreCredentials(const std::string& secret) {
  return *Credentials::Parse(std::string("[botocore]\naws_access_key_id = ") + kKeyId +
                                 "\naws_secret_access_key = " + secret + "\n",
                             "test");
}

std::vector<std::string> Names() {
  std::vector<std::string> names;
  for (const Signed& s : BotocoreRequests()) names.push_back(s.name);
  return names;
}

TEST(BotocoreSignatures, ScriptSignedEveryKindOfRequest) {
  // Both signers when awscrt is there (Debian's python3-boto3 depends on it), else Python's.
  const std::vector<std::string> names = Names();
  ASSERT_GE(names.size(), 5u) << "botocore_sign.py failed; is python3-boto3 installed?";
  EXPECT_THAT(names, ::testing::IsSupersetOf({"python/sagemaker-describe", "python/s3-get-object",
                                              "python/s3-put-object", "python/s3-presigned-get",
                                              "python/lambda-invoke"}));
}

TEST(BotocoreSignatures, Verify) {
  const Credentials credentials = BotocoreCredentials(kSecret);
  for (const Signed& s : BotocoreRequests()) {
    const AuthResult result = VerifySigV4(s.request, credentials);
    ASSERT_TRUE(result.ok()) << s.name << ": " << result.failure().detail << "\n"
                             << result.failure().canonical_request;
    EXPECT_EQ(result.principal().access_key_id, kKeyId) << s.name;
    EXPECT_EQ(result.principal().profile, "botocore") << s.name;
    EXPECT_EQ(result.principal().region, "us-east-1") << s.name;
    EXPECT_EQ(result.principal().service, s.service) << s.name;
    EXPECT_EQ(result.principal().presigned, s.name.ends_with("presigned-get")) << s.name;
  }
}

TEST(BotocoreSignatures, AreRefusedUnderAnotherSecret) {
  const Credentials credentials = BotocoreCredentials("not/the+secret");
  for (const Signed& s : BotocoreRequests()) {
    const AuthResult result = VerifySigV4(s.request, credentials);
    ASSERT_FALSE(result.ok()) << s.name;
    EXPECT_EQ(result.failure().reason, AuthFailureReason::kSignatureMismatch) << s.name;
  }
}

TEST(BotocoreSignatures, MismatchOfTheSageMakerCallReadsAsAwsWouldSendIt) {
  const Credentials credentials = BotocoreCredentials("not/the+secret");
  for (const Signed& s : BotocoreRequests()) {
    if (s.name != "python/sagemaker-describe") continue;
    const AwsAuthError error = JsonServiceAuthError(VerifySigV4(s.request, credentials).failure());
    EXPECT_EQ(error.code, "InvalidSignatureException");
    EXPECT_EQ(error.http_status, 400);
    EXPECT_THAT(error.message,
                StartsWith("The request signature we calculated does not match the signature "
                           "you provided."));
    EXPECT_THAT(error.message,
                HasSubstr("\n\nThe Canonical String for this request should have been\n'POST\n/\n"
                          "\ncontent-type:application/x-amz-json-1.1\nhost:127.0.0.1:7071\n"
                          "x-amz-date:20261201T000000Z\n"
                          "x-amz-target:SageMaker.DescribeHyperParameterTuningJob\n"));
  }
}

}  // namespace
}  // namespace amt::auth
