#include "orchestrator/gateway/cloudwatch/cloudwatch_metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "nlohmann/json.hpp"
#include "orchestrator/auth/auth_errors.h"
#include "orchestrator/gateway/cbor.h"
#include "orchestrator/gateway/cloudwatch/metrics_request.h"
#include "orchestrator/gateway/query_protocol.h"
#include "orchestrator/gateway/xml.h"

namespace amt::gateway {
namespace {

using cloudwatch::Call;
using cloudwatch::DataQuery;
using cloudwatch::DecodeCall;
using cloudwatch::DecodeGetMetricData;
using cloudwatch::DecodeGetMetricStatistics;
using cloudwatch::DecodeListMetrics;
using cloudwatch::Dimension;
using cloudwatch::InvalidValue;
using cloudwatch::ListMetricsRequest;
using cloudwatch::Metric;
using cloudwatch::MetricDataRequest;
using cloudwatch::Protocol;
using cloudwatch::ProtocolOf;
using cloudwatch::Refusal;
using cloudwatch::Result;
using cloudwatch::StatisticsRequest;
using nlohmann::json;

constexpr std::string_view kXmlns = "http://monitoring.amazonaws.com/doc/2010-08-01/";
constexpr std::string_view kNamespace = "/aws/sagemaker/TrainingJobs";
constexpr std::string_view kHostSuffix = "/algo-1";
constexpr char kJsonContentType[] = "application/x-amz-json-1.0";
constexpr char kCborContentType[] = "application/cbor";
constexpr size_t kListMetricsPage = 500;

// The reply members that are timestamps (epoch seconds in the JSON shape): CBOR tags them,
// the query protocol writes them in ISO 8601.
const std::set<std::string, std::less<>>& TimestampMembers() {
  static const auto* members = new std::set<std::string, std::less<>>{"Timestamp", "Timestamps"};
  return *members;
}

// ---------------------------------------------------------------------------------------------
// The wire: the reply's bytes in the request's protocol (metrics_request.h decodes the request).

// A number as the query protocol's XML carries it: the shortest text that reads back the same.
std::string NumberText(const json& number) {
  if (number.is_number_integer()) return std::to_string(number.get<int64_t>());
  char text[64];
  const auto [end, error] = std::to_chars(text, text + sizeof(text), number.get<double>());
  return error == std::errc() ? std::string(text, end) : "0";
}

std::string ScalarText(const json& value, bool timestamp) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (timestamp && value.is_number()) return query::FormatIso8601(value.get<double>());
  if (value.is_number()) return NumberText(value);
  return "";
}

// The members of `object` as the query protocol's XML: a list's items as <member> elements.
void WriteXml(const json& object, xml::Writer& writer) {
  for (const auto& [name, value] : object.items()) {
    const bool timestamp = TimestampMembers().contains(name);
    if (value.is_null()) continue;
    if (value.is_object()) {
      writer.Open(name);
      WriteXml(value, writer);
      writer.Close();
    } else if (value.is_array()) {
      writer.Open(name);
      for (const json& item : value) {
        if (item.is_object()) {
          writer.Open("member");
          WriteXml(item, writer);
          writer.Close();
        } else {
          writer.Leaf("member", ScalarText(item, timestamp));
        }
      }
      writer.Close();
    } else {
      writer.Leaf(name, ScalarText(value, timestamp));
    }
  }
}

HttpResponse Reply(Protocol protocol, const std::string& operation, const json& body,
                   const std::string& request_id) {
  if (protocol == Protocol::kQuery) {
    xml::Writer writer(operation + "Response", kXmlns);
    writer.Open(operation + "Result");
    WriteXml(body, writer);
    writer.Close().Open("ResponseMetadata").Leaf("RequestId", request_id).Close();
    return query::Reply(200, std::move(writer).Finish(), request_id);
  }
  HttpResponse response;
  if (protocol == Protocol::kCbor) {
    response.content_type = kCborContentType;
    response.headers.emplace_back("smithy-protocol", "rpc-v2-cbor");
    response.body = EncodeCbor(body, TimestampMembers());
  } else {
    response.content_type = kJsonContentType;
    response.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  response.headers.emplace_back("x-amzn-RequestId", request_id);
  return response;
}

HttpResponse ErrorReply(Protocol protocol, const Refusal& refusal, const std::string& request_id) {
  if (protocol == Protocol::kQuery) {
    // The query protocol's codes where the JSON ones have no equivalent: an unknown Action is
    // InvalidAction; a value of the wrong shape (the JSON protocols' SerializationException)
    // is InvalidParameterValue.
    std::string code = refusal.name;
    if (code == "UnknownOperationException") code = "InvalidAction";
    if (code == "SerializationException") code = "InvalidParameterValue";
    return query::ErrorReply(kXmlns, refusal.status, code, refusal.message, request_id);
  }
  HttpResponse response =
      Reply(protocol, "", {{"__type", refusal.name}, {"message", refusal.message}}, request_id);
  response.status = refusal.status;
  return response;
}

// A training job's name from a metric's dimensions: exactly {TrainingJobName=<job>} or
// {Host=<job>/algo-1}, the two series SageMaker publishes.
std::optional<std::string> JobOf(const Metric& metric) {
  if (metric.name_space != kNamespace || metric.dimensions.size() != 1) return std::nullopt;
  const Dimension& dimension = metric.dimensions[0];
  const std::string value = dimension.value.value_or("");
  if (dimension.name == "TrainingJobName" && !value.empty()) return value;
  if (dimension.name == "Host" && value.size() > kHostSuffix.size() &&
      value.ends_with(kHostSuffix)) {
    return value.substr(0, value.size() - kHostSuffix.size());
  }
  return std::nullopt;
}

// A statistic of the values of one period.
double Statistic(std::string_view name, const std::vector<double>& values) {
  if (name == "SampleCount") return static_cast<double>(values.size());
  double sum = 0;
  for (double v : values) sum += v;
  if (name == "Sum") return sum;
  if (name == "Average") return sum / static_cast<double>(values.size());
  if (name == "Minimum") return *std::min_element(values.begin(), values.end());
  return *std::max_element(values.begin(), values.end());  // Maximum
}

// The values of a metric by period: each key is the period's start (epoch seconds).
using Periods = std::map<int64_t, std::vector<double>>;

// Reads the metric points of the jobs a request's metrics name, each job once.
class Series {
 public:
  explicit Series(const api::SageMakerApi& api) : api_(api) {}

  // The values of `metric` in the periods of [start rounded down to the period, end) that hold
  // one. None for another namespace, dimension set or unit (SageMaker's are "None"), or a job
  // that does not exist, as CloudWatch finds no datapoints; 500 when the store fails.
  Result<Periods> Of(const Metric& metric, double start, double end, int64_t period,
                     const std::optional<std::string>& unit) {
    Periods periods;
    const std::optional<std::string> job = JobOf(metric);
    if (!job || (unit && *unit != "None")) return periods;
    auto cached = points_.find(*job);
    if (cached == points_.end()) {
      absl::StatusOr<std::vector<v1::MetricPoint>> points = api_.ReadTrainingJobMetrics(*job);
      if (!points.ok()) {
        if (points.status().code() == absl::StatusCode::kInternal ||
            points.status().code() == absl::StatusCode::kUnavailable) {
          return Refusal{500, "InternalServiceError", std::string(points.status().message())};
        }
        points = std::vector<v1::MetricPoint>();  // no such job: no datapoints
      }
      cached = points_.emplace(*job, *std::move(points)).first;
    }
    // Periods aligned as CloudWatch aligns them: StartTime rounded down to the period.
    const double first = std::floor(start / static_cast<double>(period)) * period;
    for (const v1::MetricPoint& point : cached->second) {
      if (point.metric_name() != metric.metric_name || point.timestamp() < first ||
          point.timestamp() >= end) {
        continue;
      }
      const auto index = static_cast<int64_t>((point.timestamp() - first) / period);
      periods[static_cast<int64_t>(first) + index * period].push_back(point.value());
    }
    return periods;
  }

 private:
  const api::SageMakerApi& api_;
  std::map<std::string, std::vector<v1::MetricPoint>> points_;
};

Result<json> AnswerGetMetricStatistics(const StatisticsRequest& request, Series& series) {
  Result<Periods> periods =
      series.Of(request.metric, request.start, request.end, request.period, request.unit);
  if (const Refusal* refusal = std::get_if<Refusal>(&periods)) return *refusal;
  json reply = {{"Label", request.metric.metric_name}, {"Datapoints", json::array()}};
  for (const auto& [timestamp, values] : std::get<Periods>(periods)) {
    json datapoint = {{"Timestamp", timestamp}};
    for (const std::string& s : request.statistics) datapoint[s] = Statistic(s, values);
    datapoint["Unit"] = "None";
    reply["Datapoints"].push_back(std::move(datapoint));
  }
  return reply;
}

Result<json> AnswerListMetrics(const ListMetricsRequest& request, const api::SageMakerApi& api) {
  json metrics = json::array();
  if (!request.name_space || *request.name_space == kNamespace) {
    absl::StatusOr<std::vector<api::TrainingJobMetricNames>> jobs =
        api.ListTrainingJobMetricNames();
    if (!jobs.ok())
      return Refusal{500, "InternalServiceError", std::string(jobs.status().message())};
    for (const api::TrainingJobMetricNames& job : *jobs) {
      for (const std::string& name : job.metric_names) {
        if (request.metric_name && *request.metric_name != name) continue;
        // The two series SageMaker publishes for each metric of a job.
        for (const Dimension& series :
             {Dimension{"TrainingJobName", job.training_job_name},
              Dimension{"Host", job.training_job_name + std::string(kHostSuffix)}}) {
          const bool matches = std::all_of(request.filters.begin(), request.filters.end(),
                                           [&](const Dimension& filter) {
                                             return filter.name == series.name &&
                                                    (!filter.value || filter.value == series.value);
                                           });
          if (!matches) continue;
          metrics.push_back({{"Namespace", std::string(kNamespace)},
                             {"MetricName", name},
                             {"Dimensions", {{{"Name", series.name}, {"Value", *series.value}}}}});
        }
      }
    }
  }
  if (request.offset > metrics.size()) return InvalidValue("The parameter NextToken is not valid.");
  const size_t end = std::min(metrics.size(), request.offset + kListMetricsPage);
  json reply = {{"Metrics", json::array()}};
  for (size_t i = request.offset; i < end; ++i) reply["Metrics"].push_back(std::move(metrics[i]));
  if (end < metrics.size()) reply["NextToken"] = std::to_string(end);
  return reply;
}

// The datapoints of every query, in order, are one sequence paged by MaxDatapoints: a page holds
// the next MaxDatapoints of them, every query's result is in every page (empty once it is done),
// StatusCode PartialData while a result has more to come.
Result<json> AnswerGetMetricData(const MetricDataRequest& request, Series& series) {
  struct Values {
    std::vector<int64_t> timestamps;
    std::vector<double> values;
  };
  std::vector<std::pair<const DataQuery*, Values>> results;
  size_t total = 0;
  for (const DataQuery& query : request.queries) {
    if (!query.return_data) continue;
    Result<Periods> periods =
        series.Of(query.metric, request.start, request.end, query.period, query.unit);
    if (const Refusal* refusal = std::get_if<Refusal>(&periods)) return *refusal;
    Values values;
    for (const auto& [timestamp, in_period] : std::get<Periods>(periods)) {
      values.timestamps.push_back(timestamp);
      values.values.push_back(Statistic(query.stat, in_period));
    }
    if (!request.ascending) {
      std::reverse(values.timestamps.begin(), values.timestamps.end());
      std::reverse(values.values.begin(), values.values.end());
    }
    total += values.values.size();
    results.emplace_back(&query, std::move(values));
  }
  if (request.offset > total) {
    return Refusal{400, "InvalidNextToken", "The parameter NextToken is not valid."};
  }
  const size_t page_end =
      std::min<size_t>(total, request.offset + static_cast<size_t>(request.max_datapoints));
  json reply = {{"MetricDataResults", json::array()}, {"Messages", json::array()}};
  size_t before = 0;  // datapoints of the results before this one
  for (const auto& [query, values] : results) {
    const size_t count = values.values.size();
    // This result's part of [offset, page_end), as indexes into its own datapoints.
    const size_t from = std::clamp(request.offset, before, before + count) - before;
    const size_t to = std::clamp(page_end, before, before + count) - before;
    json result = {{"Id", query->id},
                   {"Label", query->label},
                   {"Timestamps", json::array()},
                   {"Values", json::array()},
                   {"StatusCode", to == count ? "Complete" : "PartialData"}};
    for (size_t i = from; i < to; ++i) {
      result["Timestamps"].push_back(values.timestamps[i]);
      result["Values"].push_back(values.values[i]);
    }
    reply["MetricDataResults"].push_back(std::move(result));
    before += count;
  }
  if (page_end < total) reply["NextToken"] = std::to_string(page_end);
  return reply;
}

template <typename Request, typename Answer>
Result<json> Serve(const json& in, Result<Request> (*decode)(const json&), Answer answer) {
  Result<Request> request = decode(in);
  if (const Refusal* refusal = std::get_if<Refusal>(&request)) return *refusal;
  return answer(std::get<Request>(request));
}

}  // namespace

std::string_view CloudWatchMetricsHandler::Description() const {
  return "CloudWatch's GetMetricStatistics, GetMetricData and ListMetrics, training jobs' "
         "metrics (Smithy RPC v2 CBOR: POST /service/GraniteServiceVersion20100801/operation/"
         "<Operation>; AWS JSON 1.0; AWS query: POST / with Action=, signed for monitoring)";
}

bool CloudWatchMetricsHandler::Accepts(const HttpRequest& request) const {
  return ProtocolOf(request).has_value();
}

HttpResponse CloudWatchMetricsHandler::Handle(const HttpRequest& request) const {
  const Protocol protocol = *ProtocolOf(request);
  Result<Call> call = DecodeCall(request, protocol);
  if (const Refusal* refusal = std::get_if<Refusal>(&call)) {
    return ErrorReply(protocol, *refusal, request.request_id);
  }
  const auto& [operation, body] = std::get<Call>(call);

  Series series(api_);
  std::optional<Result<json>> result;
  if (operation == "GetMetricStatistics") {
    result = Serve(body, &DecodeGetMetricStatistics, [&](const StatisticsRequest& r) {
      return AnswerGetMetricStatistics(r, series);
    });
  } else if (operation == "GetMetricData") {
    result = Serve(body, &DecodeGetMetricData,
                   [&](const MetricDataRequest& r) { return AnswerGetMetricData(r, series); });
  } else if (operation == "ListMetrics") {
    result = Serve(body, &DecodeListMetrics,
                   [&](const ListMetricsRequest& r) { return AnswerListMetrics(r, api_); });
  }
  if (!result) {
    return ErrorReply(protocol,
                      {400, "UnknownOperationException",
                       "amt-local serves GetMetricStatistics, GetMetricData and ListMetrics of "
                       "CloudWatch, not " +
                           operation + "."},
                      request.request_id);
  }
  if (const Refusal* refused = std::get_if<Refusal>(&*result)) {
    return ErrorReply(protocol, *refused, request.request_id);
  }
  return Reply(protocol, operation, std::get<json>(*result), request.request_id);
}

HttpResponse CloudWatchMetricsHandler::BodyTooLarge(const HttpRequest& request,
                                                    size_t limit_bytes) const {
  const Protocol protocol = *ProtocolOf(request);
  const std::string message =
      "The request body exceeds the limit of " + std::to_string(limit_bytes) + " bytes.";
  if (protocol == Protocol::kQuery) {
    return query::ErrorReply(kXmlns, 413, "RequestEntityTooLarge", message, request.request_id);
  }
  return ErrorReply(protocol, {413, "SerializationException", message}, request.request_id);
}

HttpResponse CloudWatchMetricsHandler::Unauthenticated(const HttpRequest& request,
                                                       const auth::AuthFailure& failure) const {
  const Protocol protocol = *ProtocolOf(request);
  if (protocol == Protocol::kQuery) {
    return query::AuthErrorReply(kXmlns, failure, request.request_id);
  }
  const auth::AwsAuthError error = auth::JsonServiceAuthError(failure);
  return ErrorReply(protocol, {error.http_status, error.code, error.message}, request.request_id);
}

}  // namespace amt::gateway
