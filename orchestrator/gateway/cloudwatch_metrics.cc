#include "orchestrator/gateway/cloudwatch_metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "common/text.h"
#include "common/utf8.h"
#include "nlohmann/json.hpp"
#include "orchestrator/auth/auth_errors.h"
#include "orchestrator/gateway/cbor.h"
#include "orchestrator/gateway/query_protocol.h"
#include "orchestrator/gateway/xml.h"

namespace amt::gateway {
namespace {

namespace text = ::amt::auth::text;  // common/text.h

using nlohmann::json;

constexpr std::string_view kService = "GraniteServiceVersion20100801";
constexpr std::string_view kCborPathPrefix = "/service/GraniteServiceVersion20100801/operation/";
constexpr std::string_view kQueryVersion = "2010-08-01";
constexpr std::string_view kXmlns = "http://monitoring.amazonaws.com/doc/2010-08-01/";
constexpr std::string_view kNamespace = "/aws/sagemaker/TrainingJobs";
constexpr std::string_view kHostSuffix = "/algo-1";
constexpr char kJsonContentType[] = "application/x-amz-json-1.0";
constexpr char kCborContentType[] = "application/cbor";
constexpr size_t kListMetricsPage = 500;
constexpr size_t kMaxQueries = 500;
constexpr int64_t kDefaultMaxDatapoints = 100'800;

// The reply members that are timestamps (epoch seconds in the JSON shape): CBOR tags them,
// the query protocol writes them in ISO 8601.
const std::set<std::string, std::less<>>& TimestampMembers() {
  static const auto* members = new std::set<std::string, std::less<>>{"Timestamp", "Timestamps"};
  return *members;
}

struct Refusal {
  int status;
  std::string name;
  std::string message;
};

Refusal InvalidValue(std::string message) {
  return {400, "InvalidParameterValue", std::move(message)};
}

Refusal Missing(std::string_view parameter) {
  return {400, "MissingParameter", text::Cat("The parameter ", parameter, " is required.")};
}

template <typename T>
using Result = std::variant<T, Refusal>;

// ---------------------------------------------------------------------------------------------
// The wire: which protocol, which operation, the request as one JSON value, the reply's bytes.

enum class Protocol { kCbor, kJson, kQuery };

std::optional<Protocol> ProtocolOf(const HttpRequest& request) {
  if (request.method != "POST") return std::nullopt;
  if (request.target.starts_with(kCborPathPrefix)) return Protocol::kCbor;
  const std::string* target = request.Header("x-amz-target");
  if (target != nullptr && target->starts_with(kService) && target->size() > kService.size() &&
      (*target)[kService.size()] == '.') {
    return Protocol::kJson;
  }
  // After the JSON check: JSON 1.0 requests are signed for "monitoring" too.
  if (target == nullptr && query::IsQueryRequest(request, "monitoring", kQueryVersion)) {
    return Protocol::kQuery;
  }
  return std::nullopt;
}

// The query protocol's form as the JSON protocols' body, so that one decoder reads all three:
// "Dimensions.member.1.Name=x" is {"Dimensions": [{"Name": "x"}]}, and the members that are not
// strings in the JSON shape (timestamps, integers, booleans) are converted by name.
class FormDecoder {
 public:
  static Result<json> Decode(const query::Form& form) {
    json body = json::object();
    for (const auto& [key, value] : form) {
      if (key == "Action" || key == "Version") continue;
      const std::vector<std::string_view> path = text::Split(key, ".", /*skip_empty=*/false);
      Result<json> leaf = Leaf(path, key, value);
      if (const Refusal* refusal = std::get_if<Refusal>(&leaf)) return *refusal;
      if (!Insert(body, path, 0, std::get<json>(std::move(leaf)))) {
        return InvalidValue(text::Cat("The parameter ", key, " is malformed or repeated."));
      }
    }
    Finalize(body);
    return body;
  }

 private:
  // Lists are built as objects under this key, by zero-padded index, until Finalize.
  static constexpr char kListKey[] = "\x01list";

  static Result<json> Leaf(const std::vector<std::string_view>& path, const std::string& key,
                           const std::string& value) {
    // The member a value is of: the last name in the path that is not a list's "member.N".
    std::string_view name;
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      if (*it != "member" && !text::AllDigits(*it)) {
        name = *it;
        break;
      }
    }
    // botocore sends an empty list as "Dimensions=".
    if (value.empty() && path.back() == name &&
        (name == "Dimensions" || name == "Statistics" || name == "ExtendedStatistics" ||
         name == "MetricDataQueries")) {
      return json::array();
    }
    if (name == "StartTime" || name == "EndTime") {
      const std::optional<double> seconds = query::ParseTimestamp(value);
      if (!seconds) {
        return InvalidValue(
            text::Cat("The parameter ", key, " must be an ISO 8601 timestamp, not '", value, "'."));
      }
      return *seconds;
    }
    if (name == "Period" || name == "MaxDatapoints") {
      int64_t number = 0;
      const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
      if (error != std::errc() || end != value.data() + value.size()) {
        return InvalidValue(
            text::Cat("The parameter ", key, " must be an integer, not '", value, "'."));
      }
      return number;
    }
    if (name == "ReturnData" || name == "IncludeLinkedAccounts") {
      if (value != "true" && value != "false") {
        return InvalidValue(
            text::Cat("The parameter ", key, " must be true or false, not '", value, "'."));
      }
      return value == "true";
    }
    return value;
  }

  static bool Insert(json& node, const std::vector<std::string_view>& path, size_t at, json leaf) {
    if (at == path.size()) {
      if (!node.is_null()) return false;
      node = std::move(leaf);
      return true;
    }
    if (!node.is_null() && !node.is_object()) return false;
    if (path[at] == "member") {
      if (at + 1 >= path.size() || !text::AllDigits(path[at + 1]) || path[at + 1].size() > 9) {
        return false;
      }
      int index = 0;
      std::from_chars(path[at + 1].data(), path[at + 1].data() + path[at + 1].size(), index);
      if (index < 1) return false;
      char padded[16];
      std::snprintf(padded, sizeof(padded), "%09d", index);
      return Insert(node[kListKey][padded], path, at + 2, std::move(leaf));
    }
    if (path[at].empty()) return false;
    return Insert(node[std::string(path[at])], path, at + 1, std::move(leaf));
  }

  static void Finalize(json& node) {
    if (!node.is_object()) return;
    if (const auto list = node.find(kListKey); list != node.end()) {
      json items = json::array();
      for (auto& item : list->items()) {  // by index: the keys are zero-padded
        Finalize(item.value());
        items.push_back(std::move(item.value()));
      }
      node = std::move(items);
      return;
    }
    for (auto& member : node.items()) Finalize(member.value());
  }
};

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

// ---------------------------------------------------------------------------------------------
// Decoding: the JSON value of a request into the operation's struct, its members type-checked.

// Member `name` of `object`; nullptr when absent or null.
const json* Find(const json& object, std::string_view name) {
  const auto it = object.find(name);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

Refusal WrongType(std::string_view path, std::string_view type) {
  return {400, "SerializationException", text::Cat("The member ", path, " must be ", type, ".")};
}

std::optional<Refusal> ReadString(const json& object, std::string_view name, std::string_view path,
                                  std::optional<std::string>* out) {
  const json* value = Find(object, name);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) return WrongType(path, "a string");
  *out = value->get<std::string>();
  return std::nullopt;
}

std::optional<Refusal> ReadInteger(const json& object, std::string_view name, std::string_view path,
                                   std::optional<int64_t>* out) {
  const json* value = Find(object, name);
  if (value == nullptr) return std::nullopt;
  if (!value->is_number_integer()) return WrongType(path, "an integer");
  *out = value->get<int64_t>();
  return std::nullopt;
}

std::optional<Refusal> ReadTime(const json& object, std::string_view name, std::string_view path,
                                std::optional<double>* out) {
  const json* value = Find(object, name);
  if (value == nullptr) return std::nullopt;
  if (!value->is_number()) return WrongType(path, "a timestamp");
  *out = value->get<double>();
  return std::nullopt;
}

std::optional<Refusal> ReadBool(const json& object, std::string_view name, std::string_view path,
                                std::optional<bool>* out) {
  const json* value = Find(object, name);
  if (value == nullptr) return std::nullopt;
  if (!value->is_boolean()) return WrongType(path, "a boolean");
  *out = value->get<bool>();
  return std::nullopt;
}

// An empty list when absent.
std::optional<Refusal> ReadList(const json& object, std::string_view name, std::string_view path,
                                json* out) {
  const json* value = Find(object, name);
  *out = json::array();
  if (value == nullptr) return std::nullopt;
  if (!value->is_array()) return WrongType(path, "a list");
  *out = *value;
  return std::nullopt;
}

struct Dimension {
  std::string name;
  std::optional<std::string> value;  // always set in a metric; optional in ListMetrics' filters
};

struct Metric {
  std::optional<std::string> name_space;
  std::string metric_name;
  std::vector<Dimension> dimensions;
};

// `object`'s Dimensions ("<prefix>Dimensions.member.N" in messages).
Result<std::vector<Dimension>> ReadDimensions(const json& object, const std::string& prefix,
                                              bool value_required) {
  json list;
  if (auto refusal = ReadList(object, "Dimensions", prefix + "Dimensions", &list)) return *refusal;
  std::vector<Dimension> dimensions;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = text::Cat(prefix, "Dimensions.member.", i + 1);
    if (!list[i].is_object()) return WrongType(path, "a structure");
    std::optional<std::string> name;
    Dimension dimension;
    if (auto refusal = ReadString(list[i], "Name", path + ".Name", &name)) return *refusal;
    if (auto refusal = ReadString(list[i], "Value", path + ".Value", &dimension.value)) {
      return *refusal;
    }
    if (!name) return Missing(path + ".Name");
    if (value_required && !dimension.value) return Missing(path + ".Value");
    dimension.name = *std::move(name);
    dimensions.push_back(std::move(dimension));
  }
  return dimensions;
}

// Namespace, MetricName, Dimensions of `object` ("<prefix>MetricName" in messages).
Result<Metric> ReadMetric(const json& object, const std::string& prefix, bool namespace_required) {
  Metric metric;
  std::optional<std::string> name;
  if (auto refusal = ReadString(object, "Namespace", prefix + "Namespace", &metric.name_space)) {
    return *refusal;
  }
  if (auto refusal = ReadString(object, "MetricName", prefix + "MetricName", &name)) {
    return *refusal;
  }
  if (namespace_required && !metric.name_space) return Missing(prefix + "Namespace");
  if (!name) return Missing(prefix + "MetricName");
  metric.metric_name = *std::move(name);
  Result<std::vector<Dimension>> dimensions = ReadDimensions(object, prefix, true);
  if (const Refusal* refusal = std::get_if<Refusal>(&dimensions)) return *refusal;
  metric.dimensions = std::get<std::vector<Dimension>>(std::move(dimensions));
  return metric;
}

std::optional<Refusal> CheckPeriod(int64_t period, std::string_view path) {
  if (period < 1 || (period > 60 && period % 60 != 0) || (period < 60 && 60 % period != 0)) {
    return InvalidValue(
        text::Cat("The parameter ", path, " must be 1, 5, 10, 30, or a multiple of 60."));
  }
  return std::nullopt;
}

bool IsStatistic(std::string_view name) {
  return name == "SampleCount" || name == "Average" || name == "Sum" || name == "Minimum" ||
         name == "Maximum";
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

// ---------------------------------------------------------------------------------------------
// The operations: each decodes its struct from the request's JSON value, then answers it.

struct StatisticsRequest {
  Metric metric;
  double start = 0;
  double end = 0;
  int64_t period = 0;
  std::vector<std::string> statistics;
  std::optional<std::string> unit;
};

Result<StatisticsRequest> DecodeGetMetricStatistics(const json& in) {
  StatisticsRequest request;
  std::optional<double> start, end;
  std::optional<int64_t> period;
  json statistics, extended;
  if (auto refusal = ReadTime(in, "StartTime", "StartTime", &start)) return *refusal;
  if (auto refusal = ReadTime(in, "EndTime", "EndTime", &end)) return *refusal;
  if (auto refusal = ReadInteger(in, "Period", "Period", &period)) return *refusal;
  if (auto refusal = ReadList(in, "Statistics", "Statistics", &statistics)) return *refusal;
  if (auto refusal = ReadList(in, "ExtendedStatistics", "ExtendedStatistics", &extended)) {
    return *refusal;
  }
  if (auto refusal = ReadString(in, "Unit", "Unit", &request.unit)) return *refusal;
  Result<Metric> metric = ReadMetric(in, "", /*namespace_required=*/true);
  if (const Refusal* refusal = std::get_if<Refusal>(&metric)) return *refusal;
  request.metric = std::get<Metric>(std::move(metric));
  if (!start) return Missing("StartTime");
  if (!end) return Missing("EndTime");
  if (!period) return Missing("Period");
  if (!extended.empty()) {
    return InvalidValue("amt-local does not compute ExtendedStatistics (percentiles).");
  }
  for (const json& s : statistics) {
    const std::string name = s.is_string() ? s.get<std::string>() : "";
    if (!IsStatistic(name)) {
      return InvalidValue(
          "The parameter Statistics must be one of SampleCount, Average, Sum, Minimum, Maximum.");
    }
    request.statistics.push_back(name);
  }
  if (request.statistics.empty()) {
    return Refusal{400, "InvalidParameterCombination",
                   "Must specify either Statistics or ExtendedStatistics, but not both."};
  }
  if (auto refusal = CheckPeriod(*period, "Period")) return *refusal;
  if (!(*start < *end)) {
    return InvalidValue("The parameter StartTime must be less than the parameter EndTime.");
  }
  request.start = *start;
  request.end = *end;
  request.period = *period;
  return request;
}

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

struct ListMetricsRequest {
  std::optional<std::string> name_space;
  std::optional<std::string> metric_name;
  std::vector<Dimension> filters;
  size_t offset = 0;
};

// A ListMetrics or GetMetricData token: the index to go on from, in decimal.
std::optional<size_t> ParseToken(const std::string& token) {
  size_t offset = 0;
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), offset);
  if (token.empty() || error != std::errc() || end != token.data() + token.size()) {
    return std::nullopt;
  }
  return offset;
}

Result<ListMetricsRequest> DecodeListMetrics(const json& in) {
  ListMetricsRequest request;
  std::optional<std::string> token, recently_active;
  if (auto refusal = ReadString(in, "Namespace", "Namespace", &request.name_space)) {
    return *refusal;
  }
  if (auto refusal = ReadString(in, "MetricName", "MetricName", &request.metric_name)) {
    return *refusal;
  }
  if (auto refusal = ReadString(in, "NextToken", "NextToken", &token)) return *refusal;
  if (auto refusal = ReadString(in, "RecentlyActive", "RecentlyActive", &recently_active)) {
    return *refusal;
  }
  Result<std::vector<Dimension>> filters = ReadDimensions(in, "", /*value_required=*/false);
  if (const Refusal* refusal = std::get_if<Refusal>(&filters)) return *refusal;
  request.filters = std::get<std::vector<Dimension>>(std::move(filters));
  if (request.filters.size() > 10) {
    return InvalidValue("The collection Dimensions must not have a size greater than 10.");
  }
  if (recently_active && *recently_active != "PT3H") {
    return InvalidValue("The parameter RecentlyActive must be PT3H.");
  }
  if (token) {
    const std::optional<size_t> offset = ParseToken(*token);
    if (!offset) return InvalidValue("The parameter NextToken is not valid.");
    request.offset = *offset;
  }
  return request;
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

struct DataQuery {
  std::string id;
  std::string label;
  bool return_data = true;
  Metric metric;
  int64_t period = 0;
  std::string stat;
  std::optional<std::string> unit;
};

struct MetricDataRequest {
  std::vector<DataQuery> queries;
  double start = 0;
  double end = 0;
  bool ascending = false;
  int64_t max_datapoints = kDefaultMaxDatapoints;
  size_t offset = 0;
};

bool IsQueryId(std::string_view id) {
  if (id.empty() || id[0] < 'a' || id[0] > 'z') return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || text::IsDigit(c) || c == '_';
  });
}

Result<DataQuery> DecodeDataQuery(const json& in, const std::string& path) {
  DataQuery query;
  std::optional<std::string> id, label, expression;
  std::optional<bool> return_data;
  if (!in.is_object()) return WrongType(path, "a structure");
  if (auto refusal = ReadString(in, "Id", path + ".Id", &id)) return *refusal;
  if (auto refusal = ReadString(in, "Label", path + ".Label", &label)) return *refusal;
  if (auto refusal = ReadString(in, "Expression", path + ".Expression", &expression)) {
    return *refusal;
  }
  if (auto refusal = ReadBool(in, "ReturnData", path + ".ReturnData", &return_data)) {
    return *refusal;
  }
  if (!id) return Missing(path + ".Id");
  if (!IsQueryId(*id)) {
    return InvalidValue(text::Cat("The value ", *id, " for parameter ", path,
                                  ".Id is not valid: it must start with a lowercase letter and "
                                  "hold only letters, digits and underscores."));
  }
  const json* stat = Find(in, "MetricStat");
  if (stat != nullptr && expression) {
    return Refusal{400, "InvalidParameterCombination",
                   text::Cat("The parameters ", path, ".MetricStat and ", path,
                             ".Expression are mutually exclusive.")};
  }
  if (expression) {
    return InvalidValue(
        text::Cat("amt-local does not evaluate metric math or Metrics Insights "
                  "expressions (",
                  path, ".Expression); query each metric with a MetricStat."));
  }
  if (stat == nullptr) {
    return Refusal{400, "InvalidParameterCombination",
                   text::Cat("The parameter ", path, " must have a MetricStat or an Expression.")};
  }
  const std::string stat_path = path + ".MetricStat";
  if (!stat->is_object()) return WrongType(stat_path, "a structure");
  const json* metric_json = Find(*stat, "Metric");
  if (metric_json == nullptr) return Missing(stat_path + ".Metric");
  if (!metric_json->is_object()) return WrongType(stat_path + ".Metric", "a structure");
  Result<Metric> metric = ReadMetric(*metric_json, stat_path + ".Metric.", false);
  if (const Refusal* refusal = std::get_if<Refusal>(&metric)) return *refusal;
  std::optional<int64_t> period;
  std::optional<std::string> statistic;
  if (auto refusal = ReadInteger(*stat, "Period", stat_path + ".Period", &period)) return *refusal;
  if (auto refusal = ReadString(*stat, "Stat", stat_path + ".Stat", &statistic)) return *refusal;
  if (auto refusal = ReadString(*stat, "Unit", stat_path + ".Unit", &query.unit)) return *refusal;
  if (!period) return Missing(stat_path + ".Period");
  if (!statistic) return Missing(stat_path + ".Stat");
  if (auto refusal = CheckPeriod(*period, stat_path + ".Period")) return *refusal;
  if (!IsStatistic(*statistic)) {
    return InvalidValue(
        text::Cat("amt-local computes the statistics SampleCount, Average, Sum, "
                  "Minimum and Maximum, not ",
                  *statistic, " (", stat_path, ".Stat)."));
  }
  query.id = *std::move(id);
  query.metric = std::get<Metric>(std::move(metric));
  query.label = label.value_or(query.metric.metric_name);
  query.return_data = return_data.value_or(true);
  query.period = *period;
  query.stat = *std::move(statistic);
  return query;
}

Result<MetricDataRequest> DecodeGetMetricData(const json& in) {
  MetricDataRequest request;
  std::optional<double> start, end;
  std::optional<std::string> scan_by, token;
  std::optional<int64_t> max_datapoints;
  const json* queries = Find(in, "MetricDataQueries");
  if (queries != nullptr && !queries->is_array()) return WrongType("MetricDataQueries", "a list");
  if (auto refusal = ReadTime(in, "StartTime", "StartTime", &start)) return *refusal;
  if (auto refusal = ReadTime(in, "EndTime", "EndTime", &end)) return *refusal;
  if (auto refusal = ReadString(in, "ScanBy", "ScanBy", &scan_by)) return *refusal;
  if (auto refusal = ReadString(in, "NextToken", "NextToken", &token)) return *refusal;
  if (auto refusal = ReadInteger(in, "MaxDatapoints", "MaxDatapoints", &max_datapoints)) {
    return *refusal;
  }
  if (queries == nullptr) return Missing("MetricDataQueries");
  if (!start) return Missing("StartTime");
  if (!end) return Missing("EndTime");
  if (queries->empty() || queries->size() > kMaxQueries) {
    return InvalidValue("The parameter MetricDataQueries must hold 1 to 500 queries.");
  }
  std::set<std::string> ids;
  for (size_t i = 0; i < queries->size(); ++i) {
    Result<DataQuery> query =
        DecodeDataQuery((*queries)[i], text::Cat("MetricDataQueries.member.", i + 1));
    if (const Refusal* refusal = std::get_if<Refusal>(&query)) return *refusal;
    DataQuery& decoded = std::get<DataQuery>(query);
    if (!ids.insert(decoded.id).second) {
      return InvalidValue(text::Cat("The value ", decoded.id,
                                    " for parameter MetricDataQueries.member.", i + 1,
                                    ".Id is not unique."));
    }
    request.queries.push_back(std::move(decoded));
  }
  if (scan_by && *scan_by != "TimestampDescending" && *scan_by != "TimestampAscending") {
    return InvalidValue("The parameter ScanBy must be TimestampDescending or TimestampAscending.");
  }
  if (max_datapoints && *max_datapoints < 1) {
    return InvalidValue("The parameter MaxDatapoints must be at least 1.");
  }
  if (!(*start < *end)) {
    return InvalidValue("The parameter StartTime must be less than the parameter EndTime.");
  }
  if (token) {
    const std::optional<size_t> offset = ParseToken(*token);
    if (!offset) return Refusal{400, "InvalidNextToken", "The parameter NextToken is not valid."};
    request.offset = *offset;
  }
  request.start = *start;
  request.end = *end;
  request.ascending = scan_by && *scan_by == "TimestampAscending";
  request.max_datapoints = max_datapoints.value_or(kDefaultMaxDatapoints);
  return request;
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
  std::string operation;
  std::optional<json> body;
  std::optional<Refusal> refusal;
  switch (protocol) {
    case Protocol::kCbor: {
      operation = request.target.substr(kCborPathPrefix.size());
      if (const size_t query = operation.find('?'); query != std::string::npos) {
        operation.resize(query);
      }
      body = request.body.empty() ? std::optional<json>(json::object()) : DecodeCbor(request.body);
      if (!body || !body->is_object()) {
        refusal = Refusal{400, "SerializationException", "The request body is not a CBOR map."};
      }
      break;
    }
    case Protocol::kJson: {
      operation = request.Header("x-amz-target")->substr(kService.size() + 1);
      if (!InvalidUtf8Offset(request.body).has_value()) {
        json parsed = json::parse(
            request.body.empty() ? std::string_view("{}") : std::string_view(request.body), nullptr,
            /*allow_exceptions=*/false);
        if (!parsed.is_discarded()) body = std::move(parsed);
      }
      if (!body || !body->is_object()) {
        refusal = Refusal{400, "SerializationException", "The request body must be a JSON object."};
      }
      break;
    }
    case Protocol::kQuery: {
      const query::Form form =
          query::IsFormContentType(request) ? query::ParseForm(request.body) : query::Form();
      const std::string* action = query::FormValue(form, "Action");
      operation = action == nullptr ? "no action" : *action;
      Result<json> decoded = FormDecoder::Decode(form);
      if (const Refusal* bad = std::get_if<Refusal>(&decoded)) {
        refusal = *bad;
      } else {
        body = std::get<json>(std::move(decoded));
      }
      break;
    }
  }
  if (refusal) return ErrorReply(protocol, *refusal, request.request_id);

  Series series(api_);
  std::optional<Result<json>> result;
  if (operation == "GetMetricStatistics") {
    result = Serve(*body, &DecodeGetMetricStatistics, [&](const StatisticsRequest& r) {
      return AnswerGetMetricStatistics(r, series);
    });
  } else if (operation == "GetMetricData") {
    result = Serve(*body, &DecodeGetMetricData,
                   [&](const MetricDataRequest& r) { return AnswerGetMetricData(r, series); });
  } else if (operation == "ListMetrics") {
    result = Serve(*body, &DecodeListMetrics,
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
