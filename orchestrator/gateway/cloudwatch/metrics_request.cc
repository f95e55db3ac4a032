#include "orchestrator/gateway/cloudwatch/metrics_request.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/text.h"
#include "common/utf8.h"
#include "orchestrator/gateway/cbor.h"
#include "orchestrator/gateway/query_protocol.h"

namespace amt::gateway::cloudwatch {
namespace {

namespace text = ::amt::auth::text;  // common/text.h

using nlohmann::json;

constexpr std::string_view kService = "GraniteServiceVersion20100801";
constexpr std::string_view kCborPathPrefix = "/service/GraniteServiceVersion20100801/operation/";
constexpr std::string_view kQueryVersion = "2010-08-01";
constexpr size_t kMaxQueries = 500;

Refusal Missing(std::string_view parameter) {
  return {400, "MissingParameter", text::Cat("The parameter ", parameter, " is required.")};
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

// A ListMetrics or GetMetricData token: the index to go on from, in decimal.
std::optional<size_t> ParseToken(const std::string& token) {
  size_t offset = 0;
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), offset);
  if (token.empty() || error != std::errc() || end != token.data() + token.size()) {
    return std::nullopt;
  }
  return offset;
}

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

}  // namespace

Refusal InvalidValue(std::string message) {
  return {400, "InvalidParameterValue", std::move(message)};
}

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

Result<Call> DecodeCall(const HttpRequest& request, Protocol protocol) {
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
  if (refusal) return *refusal;
  return Call{std::move(operation), *std::move(body)};
}

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

}  // namespace amt::gateway::cloudwatch
