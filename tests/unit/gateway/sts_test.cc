#include "orchestrator/gateway/sts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "orchestrator/gateway/xml.h"

namespace amt::gateway {
namespace {

constexpr char kRequestId[] = "11111111-2222-4333-8444-555555555555";

HttpRequest StsPost(std::string body, bool signed_for_sts = true) {
  HttpRequest request;
  request.method = "POST";
  request.target = "/";
  request.headers["content-type"] = "application/x-www-form-urlencoded; charset=utf-8";
  if (signed_for_sts) {
    request.headers["authorization"] =
        "AWS4-HMAC-SHA256 Credential=AKID/20261201/us-east-1/sts/aws4_request, "
        "SignedHeaders=content-type;host;x-amz-date, Signature=0123";
  }
  request.body = std::move(body);
  request.request_id = kRequestId;
  return request;
}

ArnContext Arn(std::string region, std::string account) {
  ArnContext arn;
  arn.region = std::move(region);
  arn.account = std::move(account);
  return arn;
}

class StsHandlerTest : public ::testing::Test {
 protected:
  StsHandler handler_{Arn("eu-west-1", "123456789012")};
};

TEST_F(StsHandlerTest, AcceptsSignedForStsOrUnsignedWithStsVersion) {
  EXPECT_TRUE(handler_.Accepts(StsPost("Action=GetCallerIdentity&Version=2011-06-15")));
  EXPECT_TRUE(handler_.Accepts(StsPost("", /*signed_for_sts=*/true)));
  EXPECT_TRUE(handler_.Accepts(StsPost("Action=GetCallerIdentity&Version=2011-06-15", false)));
  EXPECT_FALSE(handler_.Accepts(StsPost("Action=GetMetricData&Version=2010-08-01", false)));
  HttpRequest sagemaker = StsPost("{}");
  sagemaker.headers["authorization"] =
      "AWS4-HMAC-SHA256 Credential=AKID/20261201/us-east-1/sagemaker/aws4_request, "
      "SignedHeaders=host, Signature=0123";
  EXPECT_FALSE(handler_.Accepts(sagemaker));
}

TEST_F(StsHandlerTest, AnswersGetCallerIdentityAsTheExecutionRoleAssumed) {
  const HttpResponse response =
      handler_.Handle(StsPost("Action=GetCallerIdentity&Version=2011-06-15"));
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.content_type, "text/xml");
  EXPECT_THAT(response.headers,
              ::testing::ElementsAre(::testing::Pair("x-amzn-RequestId", kRequestId)));
  EXPECT_EQ(response.body,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<GetCallerIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
            "<GetCallerIdentityResult>"
            "<Arn>arn:aws:sts::123456789012:assumed-role/AmtLocalExecutionRole/amt-local</Arn>"
            "<UserId>" +
                ExecutionRoleId(Arn("eu-west-1", "123456789012")) +
                ":amt-local</UserId><Account>123456789012</Account>"
                "</GetCallerIdentityResult><ResponseMetadata><RequestId>"
                "11111111-2222-4333-8444-555555555555</RequestId></ResponseMetadata>"
                "</GetCallerIdentityResponse>");
  // The same, unsigned.
  EXPECT_EQ(handler_.Handle(StsPost("Action=GetCallerIdentity&Version=2011-06-15", false)).body,
            response.body);
}

TEST(StsHandler, NamesTheConfiguredRoleAndSession) {
  ArnContext arn = Arn("us-west-2", "111122223333");
  arn.execution_role = "MySageMakerRole";
  arn.role_session = "alice";
  const StsHandler handler(arn);
  absl::StatusOr<xml::Element> reply =
      xml::Parse(handler.Handle(StsPost("Action=GetCallerIdentity&Version=2011-06-15")).body);
  ASSERT_TRUE(reply.ok()) << reply.status();
  const xml::Element* result = reply->Child("GetCallerIdentityResult");
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(result->Child("Arn")->text,
            "arn:aws:sts::111122223333:assumed-role/MySageMakerRole/alice");
  EXPECT_THAT(result->Child("UserId")->text, ::testing::MatchesRegex("AROA[A-Z2-7]{17}:alice"));
  EXPECT_EQ(result->Child("Account")->text, "111122223333");
}

TEST_F(StsHandlerTest, RefusesAnyOtherActionWithInvalidAction) {
  HttpResponse response =
      handler_.Handle(StsPost("Action=AssumeRole&Version=2011-06-15&RoleArn=x"));
  EXPECT_EQ(response.status, 400);
  absl::StatusOr<xml::Element> error = xml::Parse(response.body);
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_EQ(error->name, "ErrorResponse");
  ASSERT_NE(error->Child("Error"), nullptr);
  EXPECT_EQ(error->Child("Error")->Child("Type")->text, "Sender");
  EXPECT_EQ(error->Child("Error")->Child("Code")->text, "InvalidAction");
  EXPECT_EQ(error->Child("Error")->Child("Message")->text,
            "amt-local serves GetCallerIdentity of STS, not AssumeRole.");
  EXPECT_EQ(error->Child("RequestId")->text, kRequestId);

  response = handler_.Handle(StsPost("Version=2011-06-15"));
  EXPECT_EQ(response.status, 400);
  EXPECT_NE(response.body.find("<Message>amt-local serves GetCallerIdentity of STS, not no "
                               "action.</Message>"),
            std::string::npos);
}

TEST_F(StsHandlerTest, AnswersBodyTooLargeAndBadSignaturesInItsShape) {
  HttpResponse response = handler_.BodyTooLarge(StsPost(""), 1024);
  EXPECT_EQ(response.status, 413);
  EXPECT_NE(response.body.find("<Code>RequestEntityTooLarge</Code><Message>The request body "
                               "exceeds the limit of 1024 bytes.</Message>"),
            std::string::npos);
  auth::AuthFailure failure;
  failure.reason = auth::AuthFailureReason::kSignatureMismatch;
  response = handler_.Unauthenticated(StsPost(""), failure);
  EXPECT_EQ(response.status, 403);
  EXPECT_EQ(response.content_type, "text/xml");
  EXPECT_NE(response.body.find("<Code>SignatureDoesNotMatch</Code>"), std::string::npos);
}

}  // namespace
}  // namespace amt::gateway
