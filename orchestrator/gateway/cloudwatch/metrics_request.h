// The decoding half of the CloudWatch metrics handler (cloudwatch_metrics.h answers): which of
// CloudWatch's three protocols a request speaks (Smithy RPC v2 CBOR, AWS JSON 1.0, the AWS query
// protocol), its operation and its body as one JSON value (the query protocol's form turned into
// the JSON shape), and each operation's request struct, its members type-checked and its values
// checked as CloudWatch checks them. Pure: no API, no I/O. Errors are Refusals in CloudWatch's
// names (the handler renders them in the request's protocol).
#ifndef AMT_ORCHESTRATOR_GATEWAY_CLOUDWATCH_METRICS_REQUEST_H_
#define AMT_ORCHESTRATOR_GATEWAY_CLOUDWATCH_METRICS_REQUEST_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "nlohmann/json.hpp"
#include "orchestrator/gateway/protocol_handler.h"

namespace amt::gateway::cloudwatch {

inline constexpr int64_t kDefaultMaxDatapoints = 100'800;

struct Refusal {
  int status;
  std::string name;
  std::string message;
};

// InvalidParameterValue with `message`.
Refusal InvalidValue(std::string message);

template <typename T>
using Result = std::variant<T, Refusal>;

enum class Protocol { kCbor, kJson, kQuery };

// The protocol of a request CloudWatch's handler accepts; nullopt for any other request.
std::optional<Protocol> ProtocolOf(const HttpRequest& request);

// A request's operation and its body as one JSON object.
struct Call {
  std::string operation;
  nlohmann::json body;
};
// The operation and body of `request`, which speaks `protocol`: SerializationException for a
// body that is not a CBOR map or a JSON object, InvalidParameterValue for a form value of the
// wrong shape.
Result<Call> DecodeCall(const HttpRequest& request, Protocol protocol);

struct Dimension {
  std::string name;
  std::optional<std::string> value;  // always set in a metric; optional in ListMetrics' filters
};

struct Metric {
  std::optional<std::string> name_space;
  std::string metric_name;
  std::vector<Dimension> dimensions;
};

// GetMetricStatistics.
struct StatisticsRequest {
  Metric metric;
  double start = 0;
  double end = 0;
  int64_t period = 0;
  std::vector<std::string> statistics;
  std::optional<std::string> unit;
};

Result<StatisticsRequest> DecodeGetMetricStatistics(const nlohmann::json& in);

// ListMetrics.
struct ListMetricsRequest {
  std::optional<std::string> name_space;
  std::optional<std::string> metric_name;
  std::vector<Dimension> filters;
  size_t offset = 0;
};

Result<ListMetricsRequest> DecodeListMetrics(const nlohmann::json& in);

// GetMetricData.
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

Result<MetricDataRequest> DecodeGetMetricData(const nlohmann::json& in);

}  // namespace amt::gateway::cloudwatch

#endif  // AMT_ORCHESTRATOR_GATEWAY_CLOUDWATCH_METRICS_REQUEST_H_
