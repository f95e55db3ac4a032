#include "orchestrator/gateway/cloudwatch/cloudwatch_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/json.h"
#include "common/text.h"
#include "nlohmann/json.hpp"
#include "orchestrator/gateway/cbor.h"
#include "orchestrator/gateway/xml.h"
#include "tests/unit/api/api_fixture.h"

namespace amt::gateway {
namespace {

namespace text = ::amt::auth::text;  // common/text.h

using nlohmann::json;

constexpr double kStart = 1'700'000'000.0;  // the fixture's clock; a multiple of 60 is 1699999980

class CloudWatchMetricsHandlerTest : public api::ApiFixture {
 protected:
  // A training job with MetricDefinitions loss=..., running on the fixture's worker.
  void Job(const std::string& name, const std::vector<std::string>& more_metrics = {}) {
    v1::CreateTrainingJobRequest request = api::TrainingJobRequest(name);
    auto* metric = request.mutable_algorithm_specification()->add_metric_definitions();
    metric->set_name("loss");
    metric->set_regex("loss=([0-9.]+)");
    for (const std::string& more : more_metrics) {
      auto* definition = request.mutable_algorithm_specification()->add_metric_definitions();
      definition->set_name(more);
      definition->set_regex(more + "=([0-9.]+)");
    }
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
  // The query protocol: a form, signed for "monitoring" as botocore 1.29 signs it.
  HttpResponse Form(const std::string& body) {
    HttpRequest request;
    request.method = "POST";
    request.target = "/";
    request.headers["content-type"] = "application/x-www-form-urlencoded; charset=utf-8";
    request.headers["authorization"] =
        "AWS4-HMAC-SHA256 Credential=AKID/20231114/us-east-1/monitoring/aws4_request, "
        "SignedHeaders=host, Signature=0123";
    request.body = body;
    request.request_id = "11111111-2222-4333-8444-555555555555";
    EXPECT_TRUE(handler_.Accepts(request));
    return handler_.Handle(request);
  }
  static xml::Element Xml(const HttpResponse& response) {
    absl::StatusOr<xml::Element> element = xml::Parse(response.body);
    EXPECT_TRUE(element.ok()) << element.status() << response.body;
    return element.ok() ? *element : xml::Element();
  }
  // The text of the element at `path` ("A/B/C") under `root`, "<missing>" when there is none.
  static std::string Text(const xml::Element& root, const std::string& path) {
    const xml::Element* at = &root;
    for (std::string_view name : text::Split(path, "/", true)) {
      at = at->Child(name);
      if (at == nullptr) return "<missing>";
    }
    return at->text;
  }
  // Two jobs with loss values, "a" (loss 4, 2 at kStart + 1, + 30; 1 at + 70) and "b" (loss
  // and acc).
  void TwoJobs() {
    ConnectWorker(/*slots=*/4);  // every job runs on the worker that reports its lines
    Job("a");
    Job("b", {"acc"});
    Print("a", "loss=4", kStart + 1);
    Print("a", "loss=2", kStart + 30);
    Print("a", "loss=1", kStart + 70);
    Print("b", "loss=3 acc=0.5", kStart + 10);
  }
  static json DataQuery(const std::string& id, const std::string& job, const std::string& stat) {
    return {{"Id", id},
            {"MetricStat",
             {{"Metric",
               {{"Namespace", "/aws/sagemaker/TrainingJobs"},
                {"MetricName", "loss"},
                {"Dimensions", {{{"Name", "TrainingJobName"}, {"Value", job}}}}}},
              {"Period", 60},
              {"Stat", stat}}}};
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
                   "amt-local serves GetMetricStatistics, GetMetricData and ListMetrics of "
                   "CloudWatch, not PutMetricData."}}));
  HttpRequest garbage;
  garbage.method = "POST";
  garbage.target = "/service/GraniteServiceVersion20100801/operation/GetMetricStatistics";
  garbage.body = "\xff\xff";
  EXPECT_EQ(DecodeCbor(handler_.Handle(garbage).body)->at("__type"), "SerializationException");
}

TEST_F(CloudWatchMetricsHandlerTest, AcceptsTheQueryProtocolSignedForMonitoring) {
  HttpRequest request;
  request.method = "POST";
  request.target = "/";
  request.headers["content-type"] = "application/x-www-form-urlencoded; charset=utf-8";
  request.body = "Action=ListMetrics&Version=2010-08-01";
  EXPECT_TRUE(handler_.Accepts(request));  // unsigned, by its Version
  request.body = "Action=GetCallerIdentity&Version=2011-06-15";
  EXPECT_FALSE(handler_.Accepts(request));
  request.headers["authorization"] =
      "AWS4-HMAC-SHA256 Credential=AKID/20231114/us-east-1/sts/aws4_request, "
      "SignedHeaders=host, Signature=0123";
  EXPECT_FALSE(handler_.Accepts(request));
  request.headers["authorization"] =
      "AWS4-HMAC-SHA256 Credential=AKID/20231114/us-east-1/monitoring/aws4_request, "
      "SignedHeaders=host, Signature=0123";
  EXPECT_TRUE(handler_.Accepts(request));
}

TEST_F(CloudWatchMetricsHandlerTest, AnswersGetMetricStatisticsOverTheQueryProtocolInXml) {
  ConnectWorker();
  Job("curve");
  Print("curve", "loss=4", kStart + 1);
  Print("curve", "loss=2", kStart + 30);
  Print("curve", "loss=1", kStart + 50);
  // kStart is 2023-11-14T22:13:20Z; the first period starts at 22:13:00.
  const HttpResponse response = Form(
      "Action=GetMetricStatistics&Version=2010-08-01&Namespace=%2Faws%2Fsagemaker%2FTrainingJobs"
      "&MetricName=loss&Dimensions.member.1.Name=TrainingJobName&Dimensions.member.1.Value=curve"
      "&StartTime=2023-11-14T22%3A13%3A20Z&EndTime=2023-11-14T22%3A23%3A20Z&Period=60"
      "&Statistics.member.1=Average&Statistics.member.2=Maximum");
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.content_type, "text/xml");
  EXPECT_EQ(
      response.body,
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<GetMetricStatisticsResponse xmlns=\"http://monitoring.amazonaws.com/doc/2010-08-01/\">"
      "<GetMetricStatisticsResult><Datapoints>"
      "<member><Average>3</Average><Maximum>4</Maximum><Timestamp>2023-11-14T22:13:00Z"
      "</Timestamp><Unit>None</Unit></member>"
      "<member><Average>1</Average><Maximum>1</Maximum><Timestamp>2023-11-14T22:14:00Z"
      "</Timestamp><Unit>None</Unit></member>"
      "</Datapoints><Label>loss</Label></GetMetricStatisticsResult>"
      "<ResponseMetadata><RequestId>11111111-2222-4333-8444-555555555555</RequestId>"
      "</ResponseMetadata></GetMetricStatisticsResponse>");
}

TEST_F(CloudWatchMetricsHandlerTest, RefusesOverTheQueryProtocolInTheErrorResponseShape) {
  HttpResponse response = Form(
      "Action=GetMetricStatistics&Version=2010-08-01&Namespace=n&StartTime=2023-11-14T22%3A13%3A20Z"
      "&EndTime=2023-11-14T22%3A23%3A20Z&Period=60&Statistics.member.1=Average");
  EXPECT_EQ(response.status, 400);
  xml::Element error = Xml(response);
  EXPECT_EQ(error.name, "ErrorResponse");
  EXPECT_EQ(Text(error, "Error/Type"), "Sender");
  EXPECT_EQ(Text(error, "Error/Code"), "MissingParameter");
  EXPECT_EQ(Text(error, "Error/Message"), "The parameter MetricName is required.");
  EXPECT_EQ(Text(error, "RequestId"), "11111111-2222-4333-8444-555555555555");

  response = Form("Action=GetMetricStatistics&Version=2010-08-01&StartTime=last+week");
  EXPECT_EQ(Text(Xml(response), "Error/Message"),
            "The parameter StartTime must be an ISO 8601 timestamp, not 'last week'.");
  response = Form("Action=GetMetricStatistics&Version=2010-08-01&Period=sixty");
  EXPECT_EQ(Text(Xml(response), "Error/Code"), "InvalidParameterValue");
  response = Form("Action=PutMetricData&Version=2010-08-01");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(Text(Xml(response), "Error/Code"), "InvalidAction");
  EXPECT_EQ(Text(Xml(response), "Error/Message"),
            "amt-local serves GetMetricStatistics, GetMetricData and ListMetrics of CloudWatch, "
            "not PutMetricData.");
}

TEST_F(CloudWatchMetricsHandlerTest, ListsEachJobsMetricsWithValuesAsTwoSeries) {
  TwoJobs();
  Job("silent");  // no value yet: no metric
  auto metric = [](const std::string& name, const std::string& dimension,
                   const std::string& value) {
    return json({{"Namespace", "/aws/sagemaker/TrainingJobs"},
                 {"MetricName", name},
                 {"Dimensions", {{{"Name", dimension}, {"Value", value}}}}});
  };
  EXPECT_EQ(*DecodeCbor(Cbor("ListMetrics", json::object()).body),
            json({{"Metrics",
                   {metric("loss", "TrainingJobName", "a"), metric("loss", "Host", "a/algo-1"),
                    metric("acc", "TrainingJobName", "b"), metric("acc", "Host", "b/algo-1"),
                    metric("loss", "TrainingJobName", "b"), metric("loss", "Host", "b/algo-1")}}}));
  // Filters: metric name, a dimension by name, by name and value.
  EXPECT_EQ(json::parse(Json10("ListMetrics", {{"MetricName", "acc"}}).body),
            json({{"Metrics",
                   {metric("acc", "TrainingJobName", "b"), metric("acc", "Host", "b/algo-1")}}}));
  EXPECT_EQ(
      json::parse(Json10("ListMetrics", {{"Dimensions", {{{"Name", "Host"}}}}}).body)["Metrics"]
          .size(),
      3u);
  EXPECT_EQ(json::parse(Json10("ListMetrics",
                               {{"Namespace", "/aws/sagemaker/TrainingJobs"},
                                {"MetricName", "loss"},
                                {"Dimensions", {{{"Name", "TrainingJobName"}, {"Value", "a"}}}}})
                            .body),
            json({{"Metrics", {metric("loss", "TrainingJobName", "a")}}}));
  EXPECT_EQ(json::parse(Json10("ListMetrics", {{"Namespace", "AWS/EC2"}}).body),
            json({{"Metrics", json::array()}}));
  // A token is the index to go on from.
  EXPECT_EQ(json::parse(Json10("ListMetrics", {{"NextToken", "5"}}).body),
            json({{"Metrics", {metric("loss", "Host", "b/algo-1")}}}));
  const HttpResponse bad = Json10("ListMetrics", {{"NextToken", "x"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(json::parse(bad.body), json({{"__type", "InvalidParameterValue"},
                                         {"message", "The parameter NextToken is not valid."}}));

  // The query protocol, in XML.
  const xml::Element listed = Xml(
      Form("Action=ListMetrics&Version=2010-08-01&MetricName=acc&Dimensions.member.1.Name=Host"));
  const xml::Element* metrics = listed.Child("ListMetricsResult")->Child("Metrics");
  ASSERT_NE(metrics, nullptr);
  ASSERT_EQ(metrics->Children("member").size(), 1u);
  EXPECT_EQ(Text(*metrics->Child("member"), "MetricName"), "acc");
  EXPECT_EQ(Text(*metrics->Child("member"), "Namespace"), "/aws/sagemaker/TrainingJobs");
  EXPECT_EQ(Text(*metrics->Child("member"), "Dimensions/member/Name"), "Host");
  EXPECT_EQ(Text(*metrics->Child("member"), "Dimensions/member/Value"), "b/algo-1");
}

TEST_F(CloudWatchMetricsHandlerTest, GetsMetricDataNewestFirstAndPagesByMaxDatapoints) {
  TwoJobs();
  json request = {{"MetricDataQueries",
                   {DataQuery("a_avg", "a", "Average"), DataQuery("b_n", "b", "SampleCount")}},
                  {"StartTime", static_cast<int64_t>(kStart)},
                  {"EndTime", static_cast<int64_t>(kStart) + 600}};
  request["MetricDataQueries"][1]["Label"] = "b samples";
  const HttpResponse response = Cbor("GetMetricData", request);
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_NE(response.body.find("\xc1\x1a"), std::string::npos);  // tagged timestamps
  EXPECT_EQ(*DecodeCbor(response.body), json({{"MetricDataResults",
                                               {{{"Id", "a_avg"},
                                                 {"Label", "loss"},
                                                 {"Timestamps", {1700000040, 1699999980}},
                                                 {"Values", {1.0, 3.0}},
                                                 {"StatusCode", "Complete"}},
                                                {{"Id", "b_n"},
                                                 {"Label", "b samples"},
                                                 {"Timestamps", {1699999980}},
                                                 {"Values", {1.0}},
                                                 {"StatusCode", "Complete"}}}},
                                              {"Messages", json::array()}}));

  // Oldest first, one datapoint a page; ReturnData false leaves a query out.
  request["ScanBy"] = "TimestampAscending";
  request["MaxDatapoints"] = 1;
  request["MetricDataQueries"][1]["ReturnData"] = false;
  json page = json::parse(Json10("GetMetricData", request).body);
  EXPECT_EQ(page["MetricDataResults"], json({{{"Id", "a_avg"},
                                              {"Label", "loss"},
                                              {"Timestamps", {1699999980}},
                                              {"Values", {3.0}},
                                              {"StatusCode", "PartialData"}}}));
  ASSERT_TRUE(page.contains("NextToken"));
  request["NextToken"] = page["NextToken"];
  page = json::parse(Json10("GetMetricData", request).body);
  EXPECT_EQ(page["MetricDataResults"][0]["Timestamps"], json({1700000040}));
  EXPECT_EQ(page["MetricDataResults"][0]["StatusCode"], "Complete");
  EXPECT_FALSE(page.contains("NextToken"));

  // The query protocol: Timestamps in ISO 8601.
  const xml::Element data = Xml(Form(
      "Action=GetMetricData&Version=2010-08-01&StartTime=2023-11-14T22%3A13%3A20Z"
      "&EndTime=2023-11-14T22%3A23%3A20Z&ScanBy=TimestampAscending"
      "&MetricDataQueries.member.1.Id=m1"
      "&MetricDataQueries.member.1.MetricStat.Metric.Namespace=%2Faws%2Fsagemaker%2FTrainingJobs"
      "&MetricDataQueries.member.1.MetricStat.Metric.MetricName=loss"
      "&MetricDataQueries.member.1.MetricStat.Metric.Dimensions.member.1.Name=Host"
      "&MetricDataQueries.member.1.MetricStat.Metric.Dimensions.member.1.Value=a%2Falgo-1"
      "&MetricDataQueries.member.1.MetricStat.Period=60"
      "&MetricDataQueries.member.1.MetricStat.Stat=Maximum"
      "&MetricDataQueries.member.1.ReturnData=true"));
  const xml::Element* result =
      data.Child("GetMetricDataResult")->Child("MetricDataResults")->Child("member");
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(Text(*result, "Id"), "m1");
  EXPECT_EQ(Text(*result, "StatusCode"), "Complete");
  std::vector<std::string> timestamps, values;
  for (const xml::Element* t : result->Child("Timestamps")->Children("member")) {
    timestamps.push_back(t->text);
  }
  for (const xml::Element* v : result->Child("Values")->Children("member")) {
    values.push_back(v->text);
  }
  EXPECT_THAT(timestamps, ::testing::ElementsAre("2023-11-14T22:13:00Z", "2023-11-14T22:14:00Z"));
  EXPECT_THAT(values, ::testing::ElementsAre("4", "1"));
}

TEST_F(CloudWatchMetricsHandlerTest, RefusesExpressionsAndBadMetricDataQueries) {
  auto error = [&](const json& body) {
    const HttpResponse response = Json10("GetMetricData", body);
    EXPECT_EQ(response.status, 400) << body;
    return json::parse(response.body);
  };
  const json base = {{"MetricDataQueries", {DataQuery("m1", "a", "Average")}},
                     {"StartTime", static_cast<int64_t>(kStart)},
                     {"EndTime", static_cast<int64_t>(kStart) + 600}};
  json request = base;
  request["MetricDataQueries"] = {{{"Id", "e1"}, {"Expression", "SUM(METRICS())"}}};
  EXPECT_EQ(error(request),
            json({{"__type", "InvalidParameterValue"},
                  {"message",
                   "amt-local does not evaluate metric math or Metrics Insights expressions "
                   "(MetricDataQueries.member.1.Expression); query each metric with a "
                   "MetricStat."}}));
  request = base;
  request["MetricDataQueries"][0]["MetricStat"]["Stat"] = "p90";
  EXPECT_EQ(error(request)["message"],
            "amt-local computes the statistics SampleCount, Average, Sum, Minimum and Maximum, "
            "not p90 (MetricDataQueries.member.1.MetricStat.Stat).");
  request = base;
  request["MetricDataQueries"].push_back(DataQuery("m1", "b", "Sum"));
  EXPECT_EQ(error(request)["message"],
            "The value m1 for parameter MetricDataQueries.member.2.Id is not unique.");
  request = base;
  request["MetricDataQueries"][0]["Id"] = "M1";
  EXPECT_EQ(error(request)["__type"], "InvalidParameterValue");
  request = base;
  request["MetricDataQueries"][0]["MetricStat"].erase("Period");
  EXPECT_EQ(error(request), json({{"__type", "MissingParameter"},
                                  {"message",
                                   "The parameter MetricDataQueries.member.1.MetricStat.Period "
                                   "is required."}}));
  request = base;
  request.erase("MetricDataQueries");
  EXPECT_EQ(error(request)["message"], "The parameter MetricDataQueries is required.");
  request = base;
  request["ScanBy"] = "Sideways";
  EXPECT_EQ(error(request)["__type"], "InvalidParameterValue");
  request = base;
  request["NextToken"] = "nope";
  EXPECT_EQ(error(request), json({{"__type", "InvalidNextToken"},
                                  {"message", "The parameter NextToken is not valid."}}));
}

}  // namespace
}  // namespace amt::gateway
