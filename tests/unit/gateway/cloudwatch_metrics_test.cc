#include "orchestrator/gateway/cloudwatch_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/json.h"
#include "nlohmann/json.hpp"
#include "orchestrator/gateway/cbor.h"
#include "tests/unit/api/api_fixture.h"

namespace amt::gateway {
namespace {

using nlohmann::json;

constexpr double kStart = 1'700'000'000.0;  // the fixture's clock; a multiple of 60 is 1699999980

class CloudWatchMetricsHandlerTest : public api::ApiFixture {
 protected:
  // A training job with MetricDefinitions loss=..., running on the fixture's worker.
  void Job(const std::string& name) {
    v1::CreateTrainingJobRequest request = api::TrainingJobRequest(name);
    auto* metric = request.mutable_algorithm_specification()->add_metric_definitions();
    metric->set_name("loss");
    metric->set_regex("loss=([0-9.]+)");
    ASSERT_TRUE(api_->CreateTrainingJob(request).ok());
    StartAndLog(name, {});
  }
  // Job `name` prints `text` at `at` (epoch seconds).
  void Print(const std::string& name, const std::string& text, double at) {
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
      line->set_timestamp(at);
      orchestrator_->OnWorkerReport("w1", nullptr, logs);
    });
  }
  HttpResponse Cbor(const std::string& operation, const json& body) {
    HttpRequest request;
    request.method = "POST";
    request.target = "/service/GraniteServiceVersion20100801/operation/" + operation;
    request.headers["smithy-protocol"] = "rpc-v2-cbor";
    request.body = EncodeCbor(body, {"StartTime", "EndTime"});
    request.request_id = "11111111-2222-4333-8444-555555555555";
    EXPECT_TRUE(handler_.Accepts(request));
    return handler_.Handle(request);
  }
  HttpResponse Json10(const std::string& operation, const json& body) {
    HttpRequest request;
    request.method = "POST";
    request.target = "/";
    request.headers["x-amz-target"] = "GraniteServiceVersion20100801." + operation;
    request.body = body.dump();
    EXPECT_TRUE(handler_.Accepts(request));
    return handler_.Handle(request);
  }
  static json Query(const std::string& job, std::vector<std::string> statistics) {
    return {{"Namespace", "/aws/sagemaker/TrainingJobs"},
            {"MetricName", "loss"},
            {"Dimensions", {{{"Name", "TrainingJobName"}, {"Value", job}}}},
            {"StartTime", static_cast<int64_t>(kStart)},
            {"EndTime", static_cast<int64_t>(kStart) + 600},
            {"Period", 60},
            {"Statistics", statistics}};
  }

  std::map<std::string, int64_t> lines_;
  CloudWatchMetricsHandler handler_{*api_};
};

TEST_F(CloudWatchMetricsHandlerTest, AcceptsCloudWatchsCborPathAndJsonTarget) {
  HttpRequest request;
  request.method = "POST";
  request.target = "/";
  request.headers["x-amz-target"] = "Logs_20140328.GetLogEvents";
  EXPECT_FALSE(handler_.Accepts(request));
  request.headers["x-amz-target"] = "GraniteServiceVersion20100801.GetMetricStatistics";
  EXPECT_TRUE(handler_.Accepts(request));
  request.headers.clear();
  request.target = "/service/GraniteServiceVersion20100801/operation/GetMetricStatistics";
  EXPECT_TRUE(handler_.Accepts(request));
}

TEST_F(CloudWatchMetricsHandlerTest, AggregatesAJobsValuesIntoPeriods) {
  ConnectWorker();
  Job("curve");
  // 1699999980 is the minute before kStart: the periods are [..80, ..40), [..40, ..00), ...
  Print("curve", "epoch 1 loss=4", kStart + 1);
  Print("curve", "epoch 2 loss=2", kStart + 30);
  Print("curve", "epoch 3 loss=1", kStart + 50);
  Print("curve", "no metric here", kStart + 55);
  Print("curve", "epoch 4 loss=0.5", kStart + 3000);  // after EndTime
  const HttpResponse response =
      Cbor("GetMetricStatistics", Query("curve", {"Average", "Maximum", "SampleCount"}));
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.content_type, "application/cbor");
  EXPECT_THAT(response.headers, ::testing::Contains(std::make_pair(std::string("smithy-protocol"),
                                                                   std::string("rpc-v2-cbor"))));
  // The timestamps carry tag 1 (0xc1), as botocore needs them to be datetimes.
  EXPECT_NE(response.body.find("\xc1\x1a"), std::string::npos);
  EXPECT_EQ(DecodeCbor(response.body), json({{"Label", "loss"},
                                             {"Datapoints",
                                              {{{"Timestamp", 1699999980},
                                                {"Average", 3.0},
                                                {"Maximum", 4.0},
                                                {"SampleCount", 2.0},
                                                {"Unit", "None"}},
                                               {{"Timestamp", 1700000040},
                                                {"Average", 1.0},
                                                {"Maximum", 1.0},
                                                {"SampleCount", 1.0},
                                                {"Unit", "None"}}}}}));

  // AWS JSON 1.0, the per-host series.
  json host = Query("curve", {"Sum"});
  host["Dimensions"] = {{{"Name", "Host"}, {"Value", "curve/algo-1"}}};
  const HttpResponse json10 = Json10("GetMetricStatistics", host);
  EXPECT_EQ(json10.content_type, "application/x-amz-json-1.0");
  EXPECT_EQ(json::parse(json10.body)["Datapoints"],
            json({{{"Timestamp", 1699999980}, {"Sum", 6.0}, {"Unit", "None"}},
                  {{"Timestamp", 1700000040}, {"Sum", 1.0}, {"Unit", "None"}}}));
}

TEST_F(CloudWatchMetricsHandlerTest, FindsNoDatapointsForAnotherSeries) {
  ConnectWorker();
  Job("other");
  Print("other", "loss=1", kStart + 1);
  json query = Query("other", {"Average"});
  query["MetricName"] = "accuracy";
  EXPECT_EQ(DecodeCbor(Cbor("GetMetricStatistics", query).body),
            json({{"Label", "accuracy"}, {"Datapoints", json::array()}}));
  query = Query("missing-job", {"Average"});
  EXPECT_EQ(DecodeCbor(Cbor("GetMetricStatistics", query).body)->at("Datapoints"), json::array());
  query = Query("other", {"Average"});
  query["Namespace"] = "AWS/EC2";
  EXPECT_EQ(DecodeCbor(Cbor("GetMetricStatistics", query).body)->at("Datapoints"), json::array());
}

TEST_F(CloudWatchMetricsHandlerTest, RefusesAsCloudWatchDoes) {
  auto error = [&](const json& body) {
    const HttpResponse response = Cbor("GetMetricStatistics", body);
    EXPECT_EQ(response.status, 400);
    return *DecodeCbor(response.body);
  };
  json query = Query("j", {});
  EXPECT_EQ(error(query)["__type"], "InvalidParameterCombination");
  query = Query("j", {"Median"});
  EXPECT_EQ(error(query)["__type"], "InvalidParameterValue");
  query = Query("j", {"Average"});
  query["Period"] = 45;
  EXPECT_EQ(error(query)["message"],
            "The parameter Period must be 1, 5, 10, 30, or a multiple of 60.");
  query = Query("j", {"Average"});
  query["EndTime"] = query["StartTime"];
  EXPECT_EQ(error(query)["message"],
            "The parameter StartTime must be less than the parameter EndTime.");
  query = Query("j", {"Average"});
  query.erase("MetricName");
  EXPECT_EQ(error(query), json({{"__type", "MissingParameter"},
                                {"message", "The parameter MetricName is required."}}));
  EXPECT_EQ(*DecodeCbor(Cbor("PutMetricData", json::object()).body),
            json({{"__type", "UnknownOperationException"},
                  {"message",
                   "amt-local serves GetMetricStatistics of CloudWatch, not "
                   "PutMetricData."}}));
  HttpRequest garbage;
  garbage.method = "POST";
  garbage.target = "/service/GraniteServiceVersion20100801/operation/GetMetricStatistics";
  garbage.body = "\xff\xff";
  EXPECT_EQ(DecodeCbor(handler_.Handle(garbage).body)->at("__type"), "SerializationException");
}

}  // namespace
}  // namespace amt::gateway
