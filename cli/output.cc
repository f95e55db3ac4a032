#include "cli/output.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/json.h"

namespace amt::cli {
namespace {

using Json = nlohmann::ordered_json;

// ordered_json keeps members in the order we insert them; plain nlohmann::json would sort them.
Json Parse(const std::string& json) {
  return Json::parse(json, /*cb=*/nullptr, /*allow_exceptions=*/false);
}

std::string Dump(const Json& value) {
  // ensure_ascii=false like the aws cli; `replace` keeps dump() from throwing on bad UTF-8.
  return value.dump(4, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace

absl::StatusOr<std::string> ReindentJson(const std::string& json) {
  const Json parsed = Parse(json);
  if (parsed.is_discarded()) return absl::InvalidArgumentError("not valid JSON: " + json);
  return Dump(parsed);
}

std::string FormatResponse(const google::protobuf::Message& response) {
  const std::string json = ProtoToAwsJson(response);  // SageMaker's member order and types
  const Json parsed = Parse(json);
  // ProtoToAwsJson always prints valid JSON; the fallback only keeps a surprise visible.
  if (parsed.is_discarded()) return json + "\n";
  if (parsed.is_object() && parsed.empty()) return "";
  return Dump(parsed) + "\n";
}

}  // namespace amt::cli
