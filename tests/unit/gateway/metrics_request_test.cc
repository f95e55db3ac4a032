#include "orchestrator/gateway/cloudwatch/metrics_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "nlohmann/json.hpp"
#include "orchestrator/gateway/cbor.h"

namespace amt::gateway::cloudwatch {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

HttpRequest Post(std::string target, std::string body) {
  HttpRequest request;
  request.method = "POST";
  request.target = std::move(target);
  request.body = std::move(body);
  return request;
}

TEST(ProtocolOf, TellsCborJsonAndQueryApart) {
  EXPECT_EQ(ProtocolOf(Post("/service/GraniteServiceVersion20100801/operation/ListMetrics", "")),
            Protocol::kCbor);
  HttpRequest json_request = Post("/", "{}");
  json_request.headers["x-amz-target"] = "GraniteServiceVersion20100801.ListMetrics";
  EXPECT_EQ(ProtocolOf(json_request), Protocol::kJson);
  HttpRequest query = Post("/", "Action=ListMetrics&Version=2010-08-01");
  query.headers["content-type"] = "application/x-www-form-urlencoded";
  EXPECT_EQ(ProtocolOf(query), Protocol::kQuery);
  EXPECT_EQ(ProtocolOf(Post("/", "{}")), std::nullopt);
}

TEST(DecodeCall, ReadsTheOperationAndBodyOfEachProtocol) {
  const HttpRequest cbor = Post("/service/GraniteServiceVersion20100801/operation/ListMetrics?x=1",
                                EncodeCbor({{"MetricName", "loss"}}));
  Result<Call> call = DecodeCall(cbor, Protocol::kCbor);
  ASSERT_TRUE(std::holds_alternative<Call>(call));
  EXPECT_EQ(std::get<Call>(call).operation, "ListMetrics");
  EXPECT_EQ(std::get<Call>(call).body, json({{"MetricName", "loss"}}));

  HttpRequest query = Post("/",
                           "Action=GetMetricStatistics&Version=2010-08-01&Dimensions.member.1.Name="
                           "TrainingJobName&Dimensions.member.1.Value=j&Period=60");
  query.headers["content-type"] = "application/x-www-form-urlencoded";
  call = DecodeCall(query, Protocol::kQuery);
  ASSERT_TRUE(std::holds_alternative<Call>(call));
  EXPECT_EQ(std::get<Call>(call).operation, "GetMetricStatistics");
  EXPECT_EQ(
      std::get<Call>(call).body,
      json({{"Dimensions", {{{"Name", "TrainingJobName"}, {"Value", "j"}}}}, {"Period", 60}}));

  HttpRequest bad_json = Post("/", "[]");
  bad_json.headers["x-amz-target"] = "GraniteServiceVersion20100801.ListMetrics";
  call = DecodeCall(bad_json, Protocol::kJson);
  ASSERT_TRUE(std::holds_alternative<Refusal>(call));
  EXPECT_EQ(std::get<Refusal>(call).name, "SerializationException");
}

TEST(DecodeGetMetricStatistics, ChecksStatisticsPeriodAndTimes) {
  const json valid = {{"Namespace", "/aws/sagemaker/TrainingJobs"},
                      {"MetricName", "loss"},
                      {"StartTime", 0},
                      {"EndTime", 600},
                      {"Period", 60},
                      {"Statistics", {"Average", "Maximum"}}};
  Result<StatisticsRequest> request = DecodeGetMetricStatistics(valid);
  ASSERT_TRUE(std::holds_alternative<StatisticsRequest>(request));
  EXPECT_THAT(std::get<StatisticsRequest>(request).statistics, ElementsAre("Average", "Maximum"));
  EXPECT_EQ(std::get<StatisticsRequest>(request).metric.metric_name, "loss");

  json bad_period = valid;
  bad_period["Period"] = 7;
  request = DecodeGetMetricStatistics(bad_period);
  ASSERT_TRUE(std::holds_alternative<Refusal>(request));
  EXPECT_EQ(std::get<Refusal>(request).name, "InvalidParameterValue");
  EXPECT_THAT(std::get<Refusal>(request).message, HasSubstr("multiple of 60"));

  json missing = valid;
  missing.erase("EndTime");
  request = DecodeGetMetricStatistics(missing);
  ASSERT_TRUE(std::holds_alternative<Refusal>(request));
  EXPECT_EQ(std::get<Refusal>(request).name, "MissingParameter");
}

TEST(DecodeGetMetricData, RefusesExpressionsAndRepeatedIds) {
  const json stat = {{"Metric", {{"MetricName", "loss"}}}, {"Period", 60}, {"Stat", "Average"}};
  Result<MetricDataRequest> request =
      DecodeGetMetricData({{"StartTime", 0},
                           {"EndTime", 60},
                           {"NextToken", "2"},
                           {"MetricDataQueries", {{{"Id", "a"}, {"MetricStat", stat}}}}});
  ASSERT_TRUE(std::holds_alternative<MetricDataRequest>(request));
  EXPECT_EQ(std::get<MetricDataRequest>(request).offset, 2u);
  EXPECT_EQ(std::get<MetricDataRequest>(request).max_datapoints, kDefaultMaxDatapoints);
  EXPECT_EQ(std::get<MetricDataRequest>(request).queries[0].label, "loss");

  request = DecodeGetMetricData(
      {{"StartTime", 0},
       {"EndTime", 60},
       {"MetricDataQueries", {{{"Id", "a"}, {"Expression", "SUM(METRICS())"}}}}});
  ASSERT_TRUE(std::holds_alternative<Refusal>(request));
  EXPECT_THAT(std::get<Refusal>(request).message, HasSubstr("does not evaluate metric math"));

  request = DecodeGetMetricData(
      {{"StartTime", 0},
       {"EndTime", 60},
       {"MetricDataQueries",
        {{{"Id", "a"}, {"MetricStat", stat}}, {{"Id", "a"}, {"MetricStat", stat}}}}});
  ASSERT_TRUE(std::holds_alternative<Refusal>(request));
  EXPECT_THAT(std::get<Refusal>(request).message, HasSubstr("is not unique"));
}

TEST(DecodeListMetrics, RefusesABadToken) {
  Result<ListMetricsRequest> request = DecodeListMetrics({{"NextToken", "500"}});
  ASSERT_TRUE(std::holds_alternative<ListMetricsRequest>(request));
  EXPECT_EQ(std::get<ListMetricsRequest>(request).offset, 500u);
  request = DecodeListMetrics({{"NextToken", "x"}});
  ASSERT_TRUE(std::holds_alternative<Refusal>(request));
  EXPECT_EQ(std::get<Refusal>(request).message, "The parameter NextToken is not valid.");
}

}  // namespace
}  // namespace amt::gateway::cloudwatch
