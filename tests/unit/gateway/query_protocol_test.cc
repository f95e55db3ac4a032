#include "orchestrator/gateway/query_protocol.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace amt::gateway::query {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

HttpRequest FormPost(std::string body) {
  HttpRequest request;
  request.method = "POST";
  request.target = "/";
  request.headers["content-type"] = "application/x-www-form-urlencoded; charset=utf-8";
  request.body = std::move(body);
  request.request_id = "11111111-2222-4333-8444-555555555555";
  return request;
}

TEST(ParseForm, DecodesPercentEscapesAndPlusSigns) {
  EXPECT_THAT(
      ParseForm("Action=GetMetricStatistics&Namespace=%2Faws%2Fsagemaker&Label=a+b%2Bc"
                "&&flag&Empty="),
      ElementsAre(Pair("Action", "GetMetricStatistics"), Pair("Namespace", "/aws/sagemaker"),
                  Pair("Label", "a b+c"), Pair("flag", ""), Pair("Empty", "")));
  // A '%' without two hex digits stays as it is.
  EXPECT_THAT(ParseForm("a=100%&b=%zz&c=%4"),
              ElementsAre(Pair("a", "100%"), Pair("b", "%zz"), Pair("c", "%4")));
  EXPECT_THAT(ParseForm(""), ElementsAre());
}

TEST(FormValue, FindsTheFirstPairOfAName) {
  const Form form = ParseForm("a=1&b=2&a=3");
  ASSERT_NE(FormValue(form, "a"), nullptr);
  EXPECT_EQ(*FormValue(form, "a"), "1");
  EXPECT_EQ(FormValue(form, "c"), nullptr);
}

TEST(ScopeService, ReadsTheCredentialScopeOfTheHeaderOrAPresignedUrl) {
  HttpRequest request = FormPost("");
  EXPECT_EQ(ScopeService(request), std::nullopt);
  request.headers["authorization"] =
      "AWS4-HMAC-SHA256 Credential=AKID/20261201/us-east-1/sts/aws4_request, "
      "SignedHeaders=host;x-amz-date, Signature=abc";
  EXPECT_EQ(ScopeService(request), "sts");
  request.headers["authorization"] = "AWS4-HMAC-SHA256 Credential=AKID/20261201";
  EXPECT_EQ(ScopeService(request), std::nullopt);
  request.headers.erase("authorization");
  request.target = "/?X-Amz-Credential=AKID%2F20261201%2Fus-east-1%2Fmonitoring%2Faws4_request";
  EXPECT_EQ(ScopeService(request), "monitoring");
}

TEST(IsQueryRequest, NeedsTheServicesScopeOrUnsignedItsVersion) {
  HttpRequest request = FormPost("Action=GetCallerIdentity&Version=2011-06-15");
  EXPECT_TRUE(IsQueryRequest(request, "sts", "2011-06-15"));
  EXPECT_FALSE(IsQueryRequest(request, "monitoring", "2010-08-01"));
  // Signed for another service: never, whatever the body says.
  request.headers["authorization"] =
      "AWS4-HMAC-SHA256 Credential=AKID/20261201/us-east-1/monitoring/aws4_request, "
      "SignedHeaders=host, Signature=abc";
  EXPECT_FALSE(IsQueryRequest(request, "sts", "2011-06-15"));
  EXPECT_TRUE(IsQueryRequest(request, "monitoring", "2010-08-01"));
  // Unsigned: a form with Action= and the Version, POSTed to /.
  request.headers.erase("authorization");
  request.body = "Version=2011-06-15";
  EXPECT_FALSE(IsQueryRequest(request, "sts", "2011-06-15"));
  request.body = "Action=GetCallerIdentity&Version=2011-06-15";
  request.headers["content-type"] = "application/json";
  EXPECT_FALSE(IsQueryRequest(request, "sts", "2011-06-15"));
  request.headers["content-type"] = "Application/X-WWW-Form-Urlencoded";
  EXPECT_TRUE(IsQueryRequest(request, "sts", "2011-06-15"));
  request.target = "/bucket";
  EXPECT_FALSE(IsQueryRequest(request, "sts", "2011-06-15"));
  request.target = "/";
  request.method = "GET";
  EXPECT_FALSE(IsQueryRequest(request, "sts", "2011-06-15"));
}

TEST(ErrorReply, WritesTheErrorResponseShape) {
  const HttpResponse response = ErrorReply("https://sts.amazonaws.com/doc/2011-06-15/", 400,
                                           "InvalidAction", "no <such> action", "req-1");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(response.content_type, "text/xml");
  EXPECT_THAT(response.headers, ElementsAre(Pair("x-amzn-RequestId", "req-1")));
  EXPECT_THAT(response.body,
              ::testing::EndsWith(
                  "<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><Error>"
                  "<Type>Sender</Type><Code>InvalidAction</Code><Message>no &lt;such&gt; action"
                  "</Message></Error><RequestId>req-1</RequestId></ErrorResponse>"));
  EXPECT_NE(ErrorReply("x", 500, "InternalFailure", "m", "r").body.find("<Type>Receiver</Type>"),
            std::string::npos);
}

TEST(AuthErrorReply, UsesTheQueryServicesCodes) {
  auth::AuthFailure failure;
  failure.reason = auth::AuthFailureReason::kUnknownAccessKey;
  HttpResponse response = AuthErrorReply("x", failure, "r");
  EXPECT_EQ(response.status, 403);
  EXPECT_NE(response.body.find("<Code>InvalidClientTokenId</Code><Message>The security token "
                               "included in the request is invalid.</Message>"),
            std::string::npos);
  failure.reason = auth::AuthFailureReason::kSignatureMismatch;
  response = AuthErrorReply("x", failure, "r");
  EXPECT_EQ(response.status, 403);
  EXPECT_NE(response.body.find("<Code>SignatureDoesNotMatch</Code>"), std::string::npos);
  failure.reason = auth::AuthFailureReason::kMissingAuthentication;
  response = AuthErrorReply("x", failure, "r");
  EXPECT_NE(response.body.find("<Code>MissingAuthenticationToken</Code>"), std::string::npos);
}

TEST(Iso8601, FormatsAndParsesWhatBotocoreSends) {
  EXPECT_EQ(FormatIso8601(1'700'000'000), "2023-11-14T22:13:20Z");
  EXPECT_EQ(FormatIso8601(1'700'000'000.25), "2023-11-14T22:13:20.250Z");
  EXPECT_EQ(FormatIso8601(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatIso8601(951782400), "2000-02-29T00:00:00Z");
  EXPECT_EQ(ParseTimestamp("2023-11-14T22:13:20Z"), 1'700'000'000.0);
  EXPECT_EQ(ParseTimestamp("2023-11-14T22:13:20.250000Z"), 1'700'000'000.25);
  EXPECT_EQ(ParseTimestamp("2023-11-14T23:13:20+01:00"), 1'700'000'000.0);
  EXPECT_EQ(ParseTimestamp("2023-11-14T22:13:20"), 1'700'000'000.0);
  EXPECT_EQ(ParseTimestamp("1700000000"), 1'700'000'000.0);
  EXPECT_EQ(ParseTimestamp("2000-02-29T00:00:00Z"), 951782400.0);
  EXPECT_EQ(ParseTimestamp("2023-13-01T00:00:00Z"), std::nullopt);
  EXPECT_EQ(ParseTimestamp("2023-11-14"), std::nullopt);
  EXPECT_EQ(ParseTimestamp("yesterday"), std::nullopt);
  EXPECT_EQ(ParseTimestamp(""), std::nullopt);
}

}  // namespace
}  // namespace amt::gateway::query
