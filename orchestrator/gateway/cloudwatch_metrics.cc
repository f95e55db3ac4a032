#include "orchestrator/gateway/cloudwatch_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "common/utf8.h"
#include "nlohmann/json.hpp"
#include "orchestrator/auth/auth_errors.h"
#include "orchestrator/gateway/cbor.h"

namespace amt::gateway {
namespace {

using nlohmann::json;

constexpr std::string_view kService = "GraniteServiceVersion20100801";
constexpr std::string_view kCborPathPrefix = "/service/GraniteServiceVersion20100801/operation/";
constexpr std::string_view kNamespace = "/aws/sagemaker/TrainingJobs";
constexpr char kJsonContentType[] = "application/x-amz-json-1.0";
constexpr char kCborContentType[] = "application/cbor";

struct Refusal {
  int status;
  std::string name;
  std::string message;
};

Refusal InvalidValue(std::string message) {
  return {400, "InvalidParameterValue", std::move(message)};
}

enum class Protocol { kCbor, kJson };

// The operation a request names, or nullopt when it is not CloudWatch's.
std::optional<std::pair<Protocol, std::string>> OperationOf(const HttpRequest& request) {
  if (request.method != "POST") return std::nullopt;
  if (request.target.starts_with(kCborPathPrefix)) {
    std::string operation = request.target.substr(kCborPathPrefix.size());
    if (const size_t query = operation.find('?'); query != std::string::npos) {
      operation.resize(query);
    }
    return std::make_pair(Protocol::kCbor, operation);
  }
  const std::string* target = request.Header("x-amz-target");
  if (target != nullptr && target->starts_with(kService) && target->size() > kService.size() &&
      (*target)[kService.size()] == '.') {
    return std::make_pair(Protocol::kJson, target->substr(kService.size() + 1));
  }
  return std::nullopt;
}

HttpResponse Reply(Protocol protocol, int status, const json& body) {
  HttpResponse response;
  response.status = status;
  if (protocol == Protocol::kCbor) {
    response.content_type = kCborContentType;
    response.headers.emplace_back("smithy-protocol", "rpc-v2-cbor");
    response.body = EncodeCbor(body, {"Timestamp"});
  } else {
    response.content_type = kJsonContentType;
    response.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  return response;
}

HttpResponse ErrorReply(Protocol protocol, const Refusal& refusal) {
  return Reply(protocol, refusal.status, {{"__type", refusal.name}, {"message", refusal.message}});
}

// A statistic of the values of one period.
double Statistic(const std::string& name, const std::vector<double>& values) {
  if (name == "SampleCount") return static_cast<double>(values.size());
  double sum = 0;
  for (double v : values) sum += v;
  if (name == "Sum") return sum;
  if (name == "Average") return sum / static_cast<double>(values.size());
  if (name == "Minimum") return *std::min_element(values.begin(), values.end());
  return *std::max_element(values.begin(), values.end());  // Maximum
}

class GetMetricStatistics {
 public:
  explicit GetMetricStatistics(const api::SageMakerApi& api) : api_(api) {}

  std::variant<json, Refusal> operator()(const json& in) const {
    for (const char* required : {"Namespace", "MetricName", "StartTime", "EndTime", "Period"}) {
      if (!in.contains(required) || in[required].is_null()) {
        return Refusal{400, "MissingParameter",
                       std::string("The parameter ") + required + " is required."};
      }
    }
    if (!in["Namespace"].is_string() || !in["MetricName"].is_string() ||
        !in["StartTime"].is_number() || !in["EndTime"].is_number() ||
        !in["Period"].is_number_integer() ||
        (in.contains("Dimensions") && !in["Dimensions"].is_array()) ||
        (in.contains("Statistics") && !in["Statistics"].is_array())) {
      return Refusal{400, "SerializationException",
                     "A member of GetMetricStatistics has the wrong type."};
    }
    if (in.contains("ExtendedStatistics") && !in["ExtendedStatistics"].empty()) {
      return InvalidValue("amt-local does not compute ExtendedStatistics (percentiles).");
    }
    std::vector<std::string> statistics;
    for (const json& s : in.value("Statistics", json::array())) {
      const std::string name = s.is_string() ? s.get<std::string>() : "";
      if (name != "SampleCount" && name != "Average" && name != "Sum" && name != "Minimum" &&
          name != "Maximum") {
        return InvalidValue(
            "The parameter Statistics must be one of SampleCount, Average, Sum, "
            "Minimum, Maximum.");
      }
      statistics.push_back(name);
    }
    if (statistics.empty()) {
      return Refusal{400, "InvalidParameterCombination",
                     "Must specify either Statistics or ExtendedStatistics, but not both."};
    }
    const int64_t period = in["Period"].get<int64_t>();
    if (period < 1 || (period > 60 && period % 60 != 0) || (period < 60 && 60 % period != 0)) {
      return InvalidValue("The parameter Period must be 1, 5, 10, 30, or a multiple of 60.");
    }
    const double start = in["StartTime"].get<double>();
    const double end = in["EndTime"].get<double>();
    if (!(start < end)) {
      return InvalidValue("The parameter StartTime must be less than the parameter EndTime.");
    }
    const std::string metric = in["MetricName"].get<std::string>();
    json reply = {{"Label", metric}, {"Datapoints", json::array()}};
    const std::optional<std::string> job = JobOf(in.value("Dimensions", json::array()));
    if (in["Namespace"] != kNamespace || !job) return reply;

    absl::StatusOr<std::vector<v1::MetricPoint>> points = api_.ReadTrainingJobMetrics(*job);
    if (!points.ok()) {
      if (points.status().code() == absl::StatusCode::kInternal ||
          points.status().code() == absl::StatusCode::kUnavailable) {
        return Refusal{500, "InternalServiceError", std::string(points.status().message())};
      }
      return reply;  // no such job: no datapoints
    }
    // Periods aligned as CloudWatch aligns them: StartTime rounded down to the period.
    const double first = std::floor(start / static_cast<double>(period)) * period;
    std::map<int64_t, std::vector<double>> periods;
    for (const v1::MetricPoint& point : *points) {
      if (point.metric_name() != metric || point.timestamp() < first || point.timestamp() >= end) {
        continue;
      }
      const auto index = static_cast<int64_t>((point.timestamp() - first) / period);
      periods[index].push_back(point.value());
    }
    for (const auto& [index, values] : periods) {
      json datapoint = {{"Timestamp", static_cast<int64_t>(first) + index * period}};
      for (const std::string& s : statistics) datapoint[s] = Statistic(s, values);
      datapoint["Unit"] = "None";
      reply["Datapoints"].push_back(std::move(datapoint));
    }
    return reply;
  }

 private:
  // The training job the dimensions name: exactly {TrainingJobName=<job>} or
  // {Host=<job>/algo-1}, the two series SageMaker publishes.
  static std::optional<std::string> JobOf(const json& dimensions) {
    if (dimensions.size() != 1 || !dimensions[0].is_object()) return std::nullopt;
    const std::string name = dimensions[0].value("Name", "");
    const std::string value = dimensions[0].value("Value", "");
    if (name == "TrainingJobName" && !value.empty()) return value;
    if (name == "Host" && value.ends_with("/algo-1")) {
      return value.substr(0, value.size() - std::string_view("/algo-1").size());
    }
    return std::nullopt;
  }

  const api::SageMakerApi& api_;
};

}  // namespace

std::string_view CloudWatchMetricsHandler::Description() const {
  return "CloudWatch's GetMetricStatistics, training jobs' metrics (Smithy RPC v2 CBOR: POST "
         "/service/GraniteServiceVersion20100801/operation/<Operation>; AWS JSON 1.0)";
}

bool CloudWatchMetricsHandler::Accepts(const HttpRequest& request) const {
  return OperationOf(request).has_value();
}

HttpResponse CloudWatchMetricsHandler::Handle(const HttpRequest& request) const {
  const auto [protocol, operation] = *OperationOf(request);
  std::optional<json> body;
  if (protocol == Protocol::kCbor) {
    body = request.body.empty() ? std::optional<json>(json::object()) : DecodeCbor(request.body);
  } else if (!InvalidUtf8Offset(request.body).has_value()) {
    json parsed =
        json::parse(request.body.empty() ? std::string_view("{}") : std::string_view(request.body),
                    nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_discarded()) body = std::move(parsed);
  }
  HttpResponse response;
  if (!body || !body->is_object()) {
    response = ErrorReply(
        protocol, {400, "SerializationException",
                   protocol == Protocol::kCbor ? "The request body is not a CBOR map."
                                               : "The request body must be a JSON object."});
  } else if (operation != "GetMetricStatistics") {
    response = ErrorReply(
        protocol, {400, "UnknownOperationException",
                   "amt-local serves GetMetricStatistics of CloudWatch, not " + operation + "."});
  } else {
    auto result = GetMetricStatistics(api_)(*body);
    if (const Refusal* refusal = std::get_if<Refusal>(&result)) {
      response = ErrorReply(protocol, *refusal);
    } else {
      response = Reply(protocol, 200, std::get<json>(result));
    }
  }
  response.headers.emplace_back("x-amzn-RequestId", request.request_id);
  return response;
}

HttpResponse CloudWatchMetricsHandler::BodyTooLarge(const HttpRequest& request,
                                                    size_t limit_bytes) const {
  const Protocol protocol = OperationOf(request)->first;
  HttpResponse response = ErrorReply(protocol, {413, "SerializationException",
                                                "The request body exceeds the limit of " +
                                                    std::to_string(limit_bytes) + " bytes."});
  response.headers.emplace_back("x-amzn-RequestId", request.request_id);
  return response;
}

HttpResponse CloudWatchMetricsHandler::Unauthenticated(const HttpRequest& request,
                                                       const auth::AuthFailure& failure) const {
  const auth::AwsAuthError error = auth::JsonServiceAuthError(failure);
  HttpResponse response =
      ErrorReply(OperationOf(request)->first, {error.http_status, error.code, error.message});
  response.headers.emplace_back("x-amzn-RequestId", request.request_id);
  return response;
}

}  // namespace amt::gateway
