#include "orchestrator/gateway/logs/logs_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "nlohmann/json.hpp"

namespace amt::gateway::logs {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Optional;
using ::testing::Pair;

Members Body(const json& body) {
  std::variant<Members, Refusal> members = DecodeBody(body.dump());
  EXPECT_TRUE(std::holds_alternative<Members>(members));
  return std::get<Members>(std::move(members));
}

TEST(DecodeBody, RefusesWhatIsNotAJsonObjectOfUtf8) {
  EXPECT_TRUE(std::holds_alternative<Members>(DecodeBody("")));
  std::variant<Members, Refusal> bad = DecodeBody("[1]");
  ASSERT_TRUE(std::holds_alternative<Refusal>(bad));
  EXPECT_EQ(std::get<Refusal>(bad).name, "SerializationException");
  EXPECT_EQ(std::get<Refusal>(bad).message, "The request body must be a JSON object.");
  bad = DecodeBody("{\"a\": \"\xff\"}");
  ASSERT_TRUE(std::holds_alternative<Refusal>(bad));
  EXPECT_EQ(std::get<Refusal>(bad).message, "The request body is not valid UTF-8.");
}

TEST(Tokens, ReadBackWhatTheyWrite) {
  EXPECT_THAT(ParseToken(Token('f', 42)), Optional(Pair('f', 42)));
  EXPECT_THAT(ParseToken(Token('b', 0)), Optional(Pair('b', 0)));
  EXPECT_EQ(ParseToken("x/1"), std::nullopt);
  EXPECT_EQ(ParseToken("f/-1"), std::nullopt);
  const StreamEvent event{1700, "job/algo-1-1700", 7, "line"};
  const std::optional<StreamEvent> back = ParseEventToken(EventToken(event));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->timestamp, 1700);
  EXPECT_EQ(back->sequence, 7);
  EXPECT_EQ(back->stream, "job/algo-1-1700");
  EXPECT_EQ(ParseEventToken("e/1/2/"), std::nullopt);
}

TEST(ParseFilterPattern, TakesPlainTermsAndQuotedPhrasesOnly) {
  std::variant<std::vector<std::string>, Refusal> terms = ParseFilterPattern("loss \"a b\"  x");
  ASSERT_TRUE(std::holds_alternative<std::vector<std::string>>(terms));
  EXPECT_THAT(std::get<std::vector<std::string>>(terms), ElementsAre("loss", "a b", "x"));
  terms = ParseFilterPattern("{ $.x = 1 }");
  ASSERT_TRUE(std::holds_alternative<Refusal>(terms));
  EXPECT_EQ(std::get<Refusal>(terms).name, "InvalidParameterException");
  EXPECT_THAT(std::get<Refusal>(terms).message, HasSubstr("plain terms and quoted phrases"));
}

TEST(DecodeGetLogEvents, ChecksGroupLimitAndToken) {
  std::variant<GetLogEventsRequest, Refusal> request =
      DecodeGetLogEvents(Body({{"logGroupName", "/aws/sagemaker/TrainingJobs"},
                               {"logStreamName", "job/algo-1-1"},
                               {"nextToken", Token('b', 5)}}));
  ASSERT_TRUE(std::holds_alternative<GetLogEventsRequest>(request));
  EXPECT_EQ(std::get<GetLogEventsRequest>(request).stream, "job/algo-1-1");
  EXPECT_THAT(std::get<GetLogEventsRequest>(request).position, Optional(Pair('b', 5)));

  request = DecodeGetLogEvents(Body({{"logGroupName", "/other"}, {"logStreamName", "s"}}));
  ASSERT_TRUE(std::holds_alternative<Refusal>(request));
  EXPECT_EQ(std::get<Refusal>(request).message, "The specified log group does not exist.");
  request = DecodeGetLogEvents(Body(
      {{"logGroupName", "/aws/sagemaker/TrainingJobs"}, {"logStreamName", "s"}, {"limit", 0}}));
  ASSERT_TRUE(std::holds_alternative<Refusal>(request));
  EXPECT_THAT(std::get<Refusal>(request).message, HasSubstr("value between 1 and 10000"));
  request = DecodeGetLogEvents(Body({{"logGroupName", 1}}));
  ASSERT_TRUE(std::holds_alternative<Refusal>(request));
  EXPECT_EQ(std::get<Refusal>(request).name, "SerializationException");
}

TEST(DecodeFilterLogEvents, MakesEndTimeExclusiveAndRefusesNamesWithAPrefix) {
  std::variant<FilterLogEventsRequest, Refusal> request =
      DecodeFilterLogEvents(Body({{"logGroupIdentifier",
                                   "arn:aws:logs:us-east-1:1:log-group:/aws/sagemaker/"
                                   "TrainingJobs:*"},
                                  {"endTime", 99},
                                  {"limit", 3}}));
  ASSERT_TRUE(std::holds_alternative<FilterLogEventsRequest>(request));
  EXPECT_EQ(std::get<FilterLogEventsRequest>(request).end, 100);
  EXPECT_EQ(std::get<FilterLogEventsRequest>(request).max, 3u);

  request = DecodeFilterLogEvents(Body({{"logGroupName", "/aws/sagemaker/TrainingJobs"},
                                        {"logStreamNames", {"a"}},
                                        {"logStreamNamePrefix", "a"}}));
  ASSERT_TRUE(std::holds_alternative<Refusal>(request));
  EXPECT_EQ(std::get<Refusal>(request).message,
            "logStreamNames and logStreamNamePrefix cannot both be specified.");
}

TEST(DecodeDescribeLogStreams, RefusesOrderByLastEventTimeWithAPrefix) {
  std::variant<DescribeLogStreamsRequest, Refusal> request =
      DecodeDescribeLogStreams(Body({{"logGroupName", "/aws/sagemaker/TrainingJobs"},
                                     {"orderBy", "LastEventTime"},
                                     {"descending", true}}));
  ASSERT_TRUE(std::holds_alternative<DescribeLogStreamsRequest>(request));
  EXPECT_TRUE(std::get<DescribeLogStreamsRequest>(request).by_last_event);
  EXPECT_TRUE(std::get<DescribeLogStreamsRequest>(request).descending);
  request = DecodeDescribeLogStreams(Body({{"logGroupName", "/aws/sagemaker/TrainingJobs"},
                                           {"orderBy", "LastEventTime"},
                                           {"logStreamNamePrefix", "j"}}));
  ASSERT_TRUE(std::holds_alternative<Refusal>(request));
  EXPECT_EQ(std::get<Refusal>(request).message,
            "Cannot order by LastEventTime with a logStreamNamePrefix.");
}

}  // namespace
}  // namespace amt::gateway::logs
