#include "cli/output.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/json.h"
#include "google/protobuf/descriptor.h"

namespace amt::cli {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using Json = nlohmann::ordered_json;

// ordered_json keeps members in the order we insert them; plain nlohmann::json would sort them.
Json Parse(const std::string& json) {
  return Json::parse(json, /*cb=*/nullptr, /*allow_exceptions=*/false);
}

std::string Dump(const Json& value) {
  // ensure_ascii=false like the aws cli; `replace` keeps dump() from throwing on bad UTF-8.
  return value.dump(4, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

Json Reorder(const Json& value, const Descriptor* descriptor);

Json ReorderField(const Json& value, const FieldDescriptor* field) {
  if (field->is_map()) {
    // Map entries come in no particular order from protobuf: sort them so output is stable.
    const FieldDescriptor* entry_value = field->message_type()->map_value();
    std::vector<std::string> keys;
    for (const auto& item : value.items()) keys.push_back(item.key());
    std::sort(keys.begin(), keys.end());
    Json out = Json::object();
    for (const std::string& key : keys) out[key] = ReorderField(value.at(key), entry_value);
    return out;
  }
  if (field->type() != FieldDescriptor::TYPE_MESSAGE) return value;
  if (!field->is_repeated()) return Reorder(value, field->message_type());
  Json out = Json::array();
  for (const Json& element : value) out.push_back(Reorder(element, field->message_type()));
  return out;
}

// Puts members in the order the proto declares them, which is SageMaker's member order.
// protobuf's printer moves members printed only because of always_print_primitive_fields
// (empty lists and maps) to the front.
Json Reorder(const Json& value, const Descriptor* descriptor) {
  if (!value.is_object()) return value;
  Json out = Json::object();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    const auto it = value.find(field->json_name());
    if (it != value.end()) out[field->json_name()] = ReorderField(*it, field);
  }
  // Members the descriptor does not know (none today) keep their place at the end.
  for (const auto& item : value.items()) {
    if (!out.contains(item.key())) out[item.key()] = item.value();
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> ReindentJson(const std::string& json) {
  const Json parsed = Parse(json);
  if (parsed.is_discarded()) return absl::InvalidArgumentError("not valid JSON: " + json);
  return Dump(parsed);
}

std::string FormatResponse(const google::protobuf::Message& response) {
  const std::string json = ProtoToJson(response);
  const Json parsed = Parse(json);
  // ProtoToJson always prints valid JSON; the fallback only keeps a surprise visible.
  if (parsed.is_discarded()) return json + "\n";
  if (parsed.is_object() && parsed.empty()) return "";
  return Dump(Reorder(parsed, response.GetDescriptor())) + "\n";
}

}  // namespace amt::cli
