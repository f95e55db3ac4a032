#include "orchestrator/gateway/logs/cloudwatch_logs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "nlohmann/json.hpp"
#include "tests/unit/api/api_fixture.h"

namespace amt::gateway {
namespace {

using nlohmann::json;

constexpr double kCreated = 1'700'000'000.0;  // the fixture's clock at creation
constexpr char kGroup[] = "/aws/sagemaker/TrainingJobs";

class CloudWatchLogsHandlerTest : public api::ApiFixture {
 protected:
  HttpResponse Post(const std::string& operation, const json& body) {
    return PostRaw(operation, body.dump());
  }
  HttpResponse PostRaw(const std::string& operation, const std::string& body) {
    HttpRequest request;
    request.method = "POST";
    request.target = "/";
    request.headers["x-amz-target"] = "Logs_20140328." + operation;
    request.body = body;
    request.request_id = "11111111-2222-4333-8444-555555555555";
    EXPECT_TRUE(handler_.Accepts(request)) << operation;
    return handler_.Handle(request);
  }
  static json Json(const HttpResponse& response) {
    const auto parsed = json::parse(response.body, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << response.body;
    return parsed;
  }
  // Creates training job `name` and has it print `lines` lines "line <i>", one per second of
  // the fake clock, the first at its creation.
  void JobWithLines(const std::string& name, int lines) {
    ASSERT_TRUE(api_->CreateTrainingJob(api::TrainingJobRequest(name)).ok());
    StartAndLog(name, {});
    for (int i = 0; i < lines; ++i) {
      Log(name, "line " + std::to_string(i));
      clock_.Advance(1);
    }
  }
  // One more line of the running job `name`, at the clock's time (of `host`, when set).
  void Log(const std::string& name, const std::string& text, const std::string& host = "") {
    loop_.Call([&] {
      int64_t attempt = 0;
      for (const auto& m : link_->sent) {
        if (m.has_start() && m.start().training_job_name() == name) attempt = m.start().attempt();
      }
      v1::WorkerMessage logs;
      v1::LogBatch& batch = *logs.mutable_logs();
      batch.set_training_job_name(name);
      batch.set_attempt(attempt);
      batch.set_first_line(lines_[name]++);
      auto* line = batch.add_lines();
      line->set_text(text);
      line->set_timestamp(clock_.Now());
      if (!host.empty()) line->set_host(host);
      orchestrator_->OnWorkerReport("w1", nullptr, logs);
    });
  }
  static std::vector<std::string> Messages(const json& reply) {
    std::vector<std::string> out;
    for (const auto& event : reply["events"]) out.push_back(event["message"]);
    return out;
  }
  std::map<std::string, int64_t> lines_;  // lines logged per job
  std::string Stream(const std::string& job) { return job + "/algo-1-1700000000"; }

  CloudWatchLogsHandler handler_{*api_, ArnContext{"eu-west-1", "123456789012"}};
};

TEST_F(CloudWatchLogsHandlerTest, AcceptsOnlyCloudWatchLogsTargets) {
  HttpRequest request;
  request.method = "POST";
  request.headers["x-amz-target"] = "SageMaker.DescribeTrainingJob";
  EXPECT_FALSE(handler_.Accepts(request));
  request.headers["x-amz-target"] = "Logs_20140328.GetLogEvents";
  EXPECT_TRUE(handler_.Accepts(request));
  request.method = "GET";
  EXPECT_FALSE(handler_.Accepts(request));
}

TEST_F(CloudWatchLogsHandlerTest, AJobHasAStreamOnceItHasPrintedALine) {
  ConnectWorker(/*slots=*/4);  // every job runs on the worker that reports its lines
  ASSERT_TRUE(api_->CreateTrainingJob(api::TrainingJobRequest("quiet")).ok());
  json reply = Json(Post("DescribeLogStreams", {{"logGroupName", kGroup}}));
  EXPECT_EQ(reply, json({{"logStreams", json::array()}}));

  StartAndLog("quiet", {"hello"});
  const HttpResponse response =
      Post("DescribeLogStreams", {{"logGroupName", kGroup}, {"logStreamNamePrefix", "quiet/"}});
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.content_type, "application/x-amz-json-1.1");
  const int64_t ms = static_cast<int64_t>(kCreated * 1000);
  EXPECT_EQ(Json(response),
            json({{"logStreams",
                   {{{"logStreamName", "quiet/algo-1-1700000000"},
                     {"creationTime", ms},
                     {"firstEventTimestamp", ms},
                     {"lastEventTimestamp", ms},
                     {"lastIngestionTime", ms},
                     {"arn",
                      "arn:aws:logs:eu-west-1:123456789012:log-group:/aws/sagemaker/"
                      "TrainingJobs:log-stream:quiet/algo-1-1700000000"},
                     {"storedBytes", 0}}}}}));
}

TEST_F(CloudWatchLogsHandlerTest, AMultiInstanceJobHasAStreamPerHostThatHoldsItsLines) {
  ConnectWorker(/*slots=*/3);
  v1::CreateTrainingJobRequest request = api::TrainingJobRequest("multi");
  request.mutable_resource_config()->set_instance_count(3);
  ASSERT_TRUE(api_->CreateTrainingJob(request).ok());
  StartAndLog("multi", {});
  Log("multi", "a1", "algo-1");
  clock_.Advance(1);
  Log("multi", "b2", "algo-2");
  clock_.Advance(1);
  Log("multi", "c1", "algo-1");
  const int64_t ms = static_cast<int64_t>(kCreated * 1000);

  // algo-3 has printed nothing: no stream yet.
  json reply = Json(
      Post("DescribeLogStreams", {{"logGroupName", kGroup}, {"logStreamNamePrefix", "multi/"}}));
  ASSERT_EQ(reply["logStreams"].size(), 2u);
  EXPECT_EQ(reply["logStreams"][0]["logStreamName"], "multi/algo-1-1700000000");
  EXPECT_EQ(reply["logStreams"][0]["firstEventTimestamp"], ms);
  EXPECT_EQ(reply["logStreams"][0]["lastEventTimestamp"], ms + 2000);
  EXPECT_EQ(reply["logStreams"][1]["logStreamName"], "multi/algo-2-1700000000");
  EXPECT_EQ(reply["logStreams"][1]["firstEventTimestamp"], ms + 1000);
  EXPECT_EQ(reply["logStreams"][1]["lastEventTimestamp"], ms + 1000);

  reply = Json(Post("GetLogEvents", {{"logGroupName", kGroup},
                                     {"logStreamName", "multi/algo-1-1700000000"},
                                     {"startFromHead", true}}));
  EXPECT_THAT(Messages(reply), ::testing::ElementsAre("a1", "c1"));
  reply = Json(Post("GetLogEvents", {{"logGroupName", kGroup},
                                     {"logStreamName", "multi/algo-2-1700000000"},
                                     {"startFromHead", true}}));
  EXPECT_THAT(Messages(reply), ::testing::ElementsAre("b2"));
  // At the end, the forward token comes back unchanged.
  const json again = Json(Post("GetLogEvents", {{"logGroupName", kGroup},
                                                {"logStreamName", "multi/algo-2-1700000000"},
                                                {"nextToken", reply["nextForwardToken"]}}));
  EXPECT_THAT(Messages(again), ::testing::IsEmpty());
  EXPECT_EQ(again["nextForwardToken"], reply["nextForwardToken"]);
  EXPECT_EQ(
      Post("GetLogEvents", {{"logGroupName", kGroup}, {"logStreamName", "multi/algo-3-1700000000"}})
          .status,
      400);

  reply =
      Json(Post("FilterLogEvents", {{"logGroupName", kGroup}, {"logStreamNamePrefix", "multi/"}}));
  ASSERT_EQ(reply["events"].size(), 3u);
  EXPECT_EQ(reply["events"][0]["logStreamName"], "multi/algo-1-1700000000");
  EXPECT_EQ(reply["events"][1]["logStreamName"], "multi/algo-2-1700000000");
  EXPECT_EQ(reply["events"][1]["message"], "b2");
  EXPECT_EQ(reply["events"][2]["message"], "c1");
}

TEST_F(CloudWatchLogsHandlerTest, ListsStreamsByPrefixInNameOrderAPageAtATime) {
  ConnectWorker(/*slots=*/4);  // every job runs on the worker that reports its lines
  JobWithLines("job-b", 1);
  JobWithLines("job-a", 1);
  JobWithLines("other", 1);
  json reply =
      Json(Post("DescribeLogStreams",
                {{"logGroupName", kGroup}, {"logStreamNamePrefix", "job-"}, {"limit", 1}}));
  ASSERT_EQ(reply["logStreams"].size(), 1u);
  EXPECT_EQ(reply["logStreams"][0]["logStreamName"], "job-a/algo-1-1700000001");
  ASSERT_TRUE(reply.contains("nextToken"));
  reply = Json(Post("DescribeLogStreams", {{"logGroupName", kGroup},
                                           {"logStreamNamePrefix", "job-"},
                                           {"limit", 1},
                                           {"nextToken", reply["nextToken"]}}));
  ASSERT_EQ(reply["logStreams"].size(), 1u);
  EXPECT_EQ(reply["logStreams"][0]["logStreamName"], "job-b/algo-1-1700000000");
  EXPECT_FALSE(reply.contains("nextToken"));

  reply = Json(Post("DescribeLogStreams", {{"logGroupName", kGroup}, {"descending", true}}));
  ASSERT_EQ(reply["logStreams"].size(), 3u);
  EXPECT_EQ(reply["logStreams"][0]["logStreamName"], "other/algo-1-1700000002");
}

TEST_F(CloudWatchLogsHandlerTest, ReadsForwardFromTheHeadAndHandsBackItsTokenAtTheEnd) {
  ConnectWorker(/*slots=*/4);  // every job runs on the worker that reports its lines
  JobWithLines("fwd", 5);
  const json request = {{"logGroupName", kGroup},
                        {"logStreamName", Stream("fwd")},
                        {"startFromHead", true},
                        {"limit", 2}};
  json reply = Json(Post("GetLogEvents", request));
  EXPECT_THAT(Messages(reply), ::testing::ElementsAre("line 0", "line 1"));
  EXPECT_EQ(reply["events"][1]["timestamp"], static_cast<int64_t>((kCreated + 1) * 1000));
  EXPECT_EQ(reply["events"][1]["ingestionTime"], reply["events"][1]["timestamp"]);
  std::vector<std::string> all = Messages(reply);
  for (int i = 0; i < 5 && !reply["events"].empty(); ++i) {
    json next = request;
    next["nextToken"] = reply["nextForwardToken"];
    const std::string token = reply["nextForwardToken"];
    reply = Json(Post("GetLogEvents", next));
    for (const auto& m : Messages(reply)) all.push_back(m);
    if (reply["events"].empty()) {
      EXPECT_EQ(reply["nextForwardToken"], token);
    }
  }
  EXPECT_TRUE(reply["events"].empty());
  EXPECT_THAT(all, ::testing::ElementsAre("line 0", "line 1", "line 2", "line 3", "line 4"));

  // A line printed later is there for the same token.
  json next = request;
  next["nextToken"] = reply["nextForwardToken"];
  Log("fwd", "late");
  EXPECT_THAT(Messages(Json(Post("GetLogEvents", next))), ::testing::ElementsAre("late"));
}

TEST_F(CloudWatchLogsHandlerTest, ReadsTheNewestByDefaultAndBackwardFromThere) {
  ConnectWorker(/*slots=*/4);  // every job runs on the worker that reports its lines
  JobWithLines("back", 5);
  const json request = {{"logGroupName", kGroup}, {"logStreamName", Stream("back")}, {"limit", 2}};
  json reply = Json(Post("GetLogEvents", request));
  EXPECT_THAT(Messages(reply), ::testing::ElementsAre("line 3", "line 4"));
  json older = request;
  older["nextToken"] = reply["nextBackwardToken"];
  reply = Json(Post("GetLogEvents", older));
  EXPECT_THAT(Messages(reply), ::testing::ElementsAre("line 1", "line 2"));
}

TEST_F(CloudWatchLogsHandlerTest, KeepsToTheTimeWindow) {
  ConnectWorker(/*slots=*/4);  // every job runs on the worker that reports its lines
  JobWithLines("window", 5);
  const int64_t start = static_cast<int64_t>((kCreated + 1) * 1000);
  const json reply = Json(Post("GetLogEvents", {{"logGroupName", kGroup},
                                                {"logStreamName", Stream("window")},
                                                {"startFromHead", true},
                                                {"startTime", start},
                                                {"endTime", start + 2000}}));
  EXPECT_THAT(Messages(reply), ::testing::ElementsAre("line 1", "line 2"));
}

TEST_F(CloudWatchLogsHandlerTest, RefusesAsCloudWatchLogsDoes) {
  ConnectWorker(/*slots=*/4);  // every job runs on the worker that reports its lines
  JobWithLines("refused", 1);
  auto error = [&](const std::string& operation, const json& body) {
    const HttpResponse response = Post(operation, body);
    EXPECT_EQ(response.status, 400) << body;
    return Json(response);
  };
  EXPECT_EQ(error("GetLogEvents", {{"logGroupName", "/aws/other"}, {"logStreamName", "x/y"}}),
            json({{"__type", "ResourceNotFoundException"},
                  {"message", "The specified log group does not exist."}}));
  EXPECT_EQ(error("GetLogEvents", {{"logGroupName", kGroup}, {"logStreamName", "nojob/algo-1-1"}}),
            json({{"__type", "ResourceNotFoundException"},
                  {"message", "The specified log stream does not exist."}}));
  // The job exists, the stream's time does not match its creation.
  EXPECT_EQ(error("GetLogEvents",
                  {{"logGroupName", kGroup}, {"logStreamName", "refused/algo-1-1"}})["__type"],
            "ResourceNotFoundException");
  EXPECT_EQ(error("GetLogEvents", {{"logGroupName", kGroup},
                                   {"logStreamName", Stream("refused")},
                                   {"nextToken", "nonsense"}}),
            json({{"__type", "InvalidParameterException"},
                  {"message", "The specified nextToken is invalid."}}));
  EXPECT_EQ(error("GetLogEvents", {{"logGroupName", kGroup},
                                   {"logStreamName", Stream("refused")},
                                   {"limit", 0}})["__type"],
            "InvalidParameterException");
  EXPECT_EQ(error("GetLogEvents", {{"logGroupName", kGroup}})["message"],
            "1 validation error detected: Value null at 'logStreamName' failed to satisfy "
            "constraint: Member must not be null");
  EXPECT_EQ(error("GetLogEvents", {{"logGroupName", 7}})["__type"], "SerializationException");
  EXPECT_EQ(error("DescribeLogStreams", {{"logGroupName", kGroup},
                                         {"orderBy", "LastEventTime"},
                                         {"logStreamNamePrefix", "r"}})["message"],
            "Cannot order by LastEventTime with a logStreamNamePrefix.");
  EXPECT_EQ(error("PutLogEvents", json::object())["__type"], "UnknownOperationException");
  const HttpResponse bad = PostRaw("GetLogEvents", "{\"logGroupName\": \"\xff\"}");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(Json(bad)["__type"], "SerializationException");
}

TEST_F(CloudWatchLogsHandlerTest, FiltersEventsOfEveryStreamInTimestampOrder) {
  ConnectWorker(/*slots=*/4);  // every job runs on the worker that reports its lines
  for (const char* job : {"fa", "fb"}) {
    ASSERT_TRUE(api_->CreateTrainingJob(api::TrainingJobRequest(job)).ok());
    StartAndLog(job, {});
  }
  Log("fa", "alpha one");
  clock_.Advance(1);
  Log("fb", "beta one");
  clock_.Advance(1);
  Log("fa", "alpha two error");
  clock_.Advance(1);
  Log("fb", "beta two error");
  const int64_t ms = static_cast<int64_t>(kCreated * 1000);

  json reply = Json(Post("FilterLogEvents", {{"logGroupName", kGroup}}));
  EXPECT_THAT(Messages(reply),
              ::testing::ElementsAre("alpha one", "beta one", "alpha two error", "beta two error"));
  ASSERT_EQ(reply["events"].size(), 4u);
  const json& second = reply["events"][1];
  EXPECT_EQ(second["logStreamName"], Stream("fb"));
  EXPECT_EQ(second["timestamp"], ms + 1000);
  EXPECT_EQ(second["ingestionTime"], ms + 1000);
  std::set<std::string> ids;
  for (const json& event : reply["events"]) {
    EXPECT_EQ(event["eventId"].get<std::string>().size(), 60u);
    ids.insert(event["eventId"].get<std::string>());
  }
  EXPECT_EQ(ids.size(), 4u);
  // Neither the deprecated searchedLogStreams nor a token when everything was returned.
  EXPECT_FALSE(reply.contains("searchedLogStreams"));
  EXPECT_FALSE(reply.contains("nextToken"));

  // Every term must be in the message; a quoted phrase is one term.
  EXPECT_THAT(Messages(Json(
                  Post("FilterLogEvents", {{"logGroupName", kGroup}, {"filterPattern", "error"}}))),
              ::testing::ElementsAre("alpha two error", "beta two error"));
  EXPECT_THAT(Messages(Json(Post("FilterLogEvents", {{"logGroupName", kGroup},
                                                     {"filterPattern", "\"two error\"  alpha"}}))),
              ::testing::ElementsAre("alpha two error"));
  EXPECT_THAT(Messages(Json(Post("FilterLogEvents",
                                 {{"logGroupName", kGroup}, {"filterPattern", "\"one error\""}}))),
              ::testing::ElementsAre());
  // By stream name, by prefix, by time (both ends inclusive).
  EXPECT_THAT(
      Messages(Json(Post("FilterLogEvents", {{"logGroupName", kGroup},
                                             {"logStreamNames", {Stream("fb"), "no/such"}}}))),
      ::testing::ElementsAre("beta one", "beta two error"));
  EXPECT_THAT(Messages(Json(Post("FilterLogEvents",
                                 {{"logGroupName", kGroup}, {"logStreamNamePrefix", "fa/"}}))),
              ::testing::ElementsAre("alpha one", "alpha two error"));
  EXPECT_THAT(Messages(Json(Post(
                  "FilterLogEvents",
                  {{"logGroupName", kGroup}, {"startTime", ms + 1000}, {"endTime", ms + 2000}}))),
              ::testing::ElementsAre("beta one", "alpha two error"));

  // A page at a time: nextToken while there are more.
  json request = {{"logGroupName", kGroup}, {"limit", 3}};
  reply = Json(Post("FilterLogEvents", request));
  EXPECT_THAT(Messages(reply), ::testing::ElementsAre("alpha one", "beta one", "alpha two error"));
  ASSERT_TRUE(reply.contains("nextToken"));
  request["nextToken"] = reply["nextToken"];
  reply = Json(Post("FilterLogEvents", request));
  EXPECT_THAT(Messages(reply), ::testing::ElementsAre("beta two error"));
  EXPECT_FALSE(reply.contains("nextToken"));
}

TEST_F(CloudWatchLogsHandlerTest, RefusesFilterPatternsBeyondPlainTerms) {
  ConnectWorker(/*slots=*/4);  // every job runs on the worker that reports its lines
  JobWithLines("pattern", 1);
  auto error = [&](const json& body) {
    const HttpResponse response = Post("FilterLogEvents", body);
    EXPECT_EQ(response.status, 400) << body;
    return Json(response);
  };
  EXPECT_EQ(error({{"logGroupName", kGroup}, {"filterPattern", "{ $.level = \"ERROR\" }"}}),
            json({{"__type", "InvalidParameterException"},
                  {"message",
                   "amt-local supports filter patterns of plain terms and quoted phrases only, "
                   "not '{ $.level = \"ERROR\" }' (JSON {...}, space-delimited [...], ?term, "
                   "-term and %regex% patterns are not supported)."}}));
  for (const char* pattern : {"?ERROR ?WARN", "loss -nan", "[ip, user]", "%err.r%"}) {
    const json refused = error({{"logGroupName", kGroup}, {"filterPattern", pattern}});
    EXPECT_EQ(refused["__type"], "InvalidParameterException") << pattern;
  }
  EXPECT_THAT(
      error({{"logGroupName", kGroup}, {"filterPattern", "a -b"}})["message"].get<std::string>(),
      ::testing::HasSubstr("only, not '-b' ("));
  EXPECT_EQ(error({{"logGroupName", kGroup}, {"filterPattern", "\"open"}})["message"],
            "Invalid filter pattern: the quoted phrase '\"open' is not closed.");
  EXPECT_EQ(error({{"logGroupName", kGroup},
                   {"logStreamNames", {Stream("pattern")}},
                   {"logStreamNamePrefix", "p"}})["message"],
            "logStreamNames and logStreamNamePrefix cannot both be specified.");
  EXPECT_EQ(error({{"logGroupName", kGroup}, {"nextToken", "f/1"}})["message"],
            "The specified nextToken is invalid.");
  EXPECT_EQ(error({{"logGroupName", kGroup}, {"limit", 10001}})["__type"],
            "InvalidParameterException");
  EXPECT_EQ(error({{"logGroupName", "/aws/other"}})["__type"], "ResourceNotFoundException");
  EXPECT_EQ(error({{"logGroupName", kGroup}, {"logStreamNames", "one"}})["__type"],
            "SerializationException");
}

}  // namespace
}  // namespace amt::gateway
