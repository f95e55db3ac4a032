#include "orchestrator/gateway/iam.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "orchestrator/gateway/unserved_query.h"
#include "orchestrator/gateway/xml.h"

namespace amt::gateway {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

constexpr char kRequestId[] = "11111111-2222-4333-8444-555555555555";

HttpRequest FormPost(std::string body, std::string service = "iam") {
  HttpRequest request;
  request.method = "POST";
  request.target = "/";
  request.headers["content-type"] = "application/x-www-form-urlencoded; charset=utf-8";
  if (!service.empty()) {
    request.headers["authorization"] = "AWS4-HMAC-SHA256 Credential=AKID/20261201/us-east-1/" +
                                       service +
                                       "/aws4_request, SignedHeaders=host, Signature=0123";
  }
  request.body = std::move(body);
  request.request_id = kRequestId;
  return request;
}

ArnContext Arn() {
  ArnContext arn;
  arn.region = "eu-west-1";
  arn.account = "123456789012";
  arn.execution_role = "SageMakerRole";
  return arn;
}

// The ErrorResponse's Code and Message.
std::pair<std::string, std::string> ErrorOf(const HttpResponse& response) {
  absl::StatusOr<xml::Element> error = xml::Parse(response.body);
  if (!error.ok() || error->name != "ErrorResponse" || error->Child("Error") == nullptr) {
    return {"not an ErrorResponse", response.body};
  }
  return {error->Child("Error")->Child("Code")->text,
          error->Child("Error")->Child("Message")->text};
}

TEST(IamHandler, AcceptsSignedForIamOrUnsignedWithIamVersion) {
  const IamHandler handler(Arn());
  EXPECT_TRUE(handler.Accepts(FormPost("Action=GetRole&RoleName=x&Version=2010-05-08")));
  EXPECT_TRUE(handler.Accepts(FormPost("Action=GetRole&RoleName=x&Version=2010-05-08", "")));
  EXPECT_FALSE(handler.Accepts(FormPost("Action=GetCallerIdentity&Version=2011-06-15", "sts")));
  EXPECT_FALSE(handler.Accepts(FormPost("Action=GetCallerIdentity&Version=2011-06-15", "")));
}

TEST(IamHandler, AnswersGetRoleForTheExecutionRole) {
  const IamHandler handler(Arn());
  const HttpResponse response =
      handler.Handle(FormPost("Action=GetRole&RoleName=SageMakerRole&Version=2010-05-08"));
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.content_type, "text/xml");
  EXPECT_THAT(response.headers, ElementsAre(Pair("x-amzn-RequestId", kRequestId)));
  absl::StatusOr<xml::Element> reply = xml::Parse(response.body);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->name, "GetRoleResponse");
  ASSERT_NE(reply->Child("GetRoleResult"), nullptr);
  const xml::Element* role = reply->Child("GetRoleResult")->Child("Role");
  ASSERT_NE(role, nullptr);
  EXPECT_EQ(role->Child("Path")->text, "/");
  EXPECT_EQ(role->Child("RoleName")->text, "SageMakerRole");
  EXPECT_EQ(role->Child("Arn")->text, "arn:aws:iam::123456789012:role/SageMakerRole");
  EXPECT_EQ(role->Child("RoleId")->text, ExecutionRoleId(Arn()));
  EXPECT_THAT(role->Child("RoleId")->text, ::testing::MatchesRegex("AROA[A-Z2-7]{17}"));
  EXPECT_EQ(role->Child("CreateDate")->text, "2026-01-01T00:00:00Z");
  EXPECT_EQ(role->Child("MaxSessionDuration")->text, "3600");
  EXPECT_THAT(role->Child("AssumeRolePolicyDocument")->text,
              ::testing::HasSubstr("sagemaker.amazonaws.com"));
  EXPECT_EQ(reply->Child("ResponseMetadata")->Child("RequestId")->text, kRequestId);
}

TEST(IamHandler, AnswersNoSuchEntityForAnotherRoleAndInvalidActionForAnotherAction) {
  const IamHandler handler(Arn());
  HttpResponse response =
      handler.Handle(FormPost("Action=GetRole&RoleName=Other&Version=2010-05-08"));
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(ErrorOf(response),
            std::make_pair(std::string("NoSuchEntity"),
                           std::string("The role with name Other cannot be found.")));
  response = handler.Handle(FormPost("Action=GetRole&Version=2010-05-08"));
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(ErrorOf(response).first, "ValidationError");
  response = handler.Handle(FormPost("Action=ListRoles&Version=2010-05-08"));
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(ErrorOf(response),
            std::make_pair(std::string("InvalidAction"),
                           std::string("amt-local serves GetRole of IAM, not ListRoles.")));
}

TEST(ExecutionRole, IdsAreStableAndDifferByRole) {
  ArnContext other = Arn();
  other.execution_role = "Another";
  EXPECT_EQ(ExecutionRoleId(Arn()), ExecutionRoleId(Arn()));
  EXPECT_NE(ExecutionRoleId(Arn()), ExecutionRoleId(other));
  EXPECT_TRUE(IsRoleName("AmazonSageMaker-ExecutionRole-20260101T000000"));
  EXPECT_TRUE(IsRoleName("a+=,.@_-"));
  EXPECT_FALSE(IsRoleName(""));
  EXPECT_FALSE(IsRoleName("has space"));
  EXPECT_FALSE(IsRoleName("slash/role"));
  EXPECT_FALSE(IsRoleName(std::string(65, 'r')));
}

TEST(UnservedQueryHandler, AnswersAnyOtherQueryRequestWithInvalidActionInXml) {
  const UnservedQueryHandler handler;
  const HttpRequest sns = FormPost("Action=ListTopics&Version=2010-03-31", "sns");
  ASSERT_TRUE(handler.Accepts(sns));
  HttpResponse response = handler.Handle(sns);
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(response.content_type, "text/xml");
  EXPECT_EQ(ErrorOf(response),
            std::make_pair(std::string("InvalidAction"),
                           std::string("amt-local does not serve ListTopics of sns (API version "
                                       "2010-03-31).")));
  EXPECT_THAT(response.body,
              ::testing::HasSubstr("xmlns=\"https://sns.amazonaws.com/doc/2010-03-31/\""));
  const HttpRequest unsigned_request = FormPost("Action=ListQueues&Version=2012-11-05", "");
  ASSERT_TRUE(handler.Accepts(unsigned_request));
  EXPECT_EQ(ErrorOf(handler.Handle(unsigned_request)).second,
            "amt-local does not serve ListQueues (API version 2012-11-05).");
}

TEST(UnservedQueryHandler, LeavesEverythingElseToTheHandlersAfterIt) {
  const UnservedQueryHandler handler;
  HttpRequest no_version = FormPost("Action=ListTopics", "");
  EXPECT_FALSE(handler.Accepts(no_version));
  HttpRequest json = FormPost("{}", "sagemaker");
  json.headers["content-type"] = "application/x-amz-json-1.1";
  EXPECT_FALSE(handler.Accepts(json));
  HttpRequest s3_post = FormPost("Action=x&Version=y", "s3");
  s3_post.target = "/bucket?delete";
  EXPECT_FALSE(handler.Accepts(s3_post));
  HttpRequest get = FormPost("Action=x&Version=y", "");
  get.method = "GET";
  EXPECT_FALSE(handler.Accepts(get));
}

}  // namespace
}  // namespace amt::gateway
