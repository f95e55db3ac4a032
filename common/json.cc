#include "common/json.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "amt/v1/aws.pb.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"

namespace amt {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using Json = nlohmann::ordered_json;  // keeps members in insertion order

Json AwsShape(const Json& value, const Descriptor* descriptor);

Json AwsShapeField(const Json& value, const FieldDescriptor* field) {
  if (field->is_map()) {
    // Map entries come in no particular order from protobuf: sorted, so output is stable.
    const FieldDescriptor* entry_value = field->message_type()->map_value();
    std::vector<std::string> keys;
    for (const auto& item : value.items()) keys.push_back(item.key());
    std::sort(keys.begin(), keys.end());
    Json out = Json::object();
    for (const std::string& key : keys) out[key] = AwsShapeField(value.at(key), entry_value);
    return out;
  }
  if (field->is_repeated() && value.is_array()) {
    Json out = Json::array();
    for (const Json& element : value) {
      // A repeated field's elements are shaped like its single value.
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        out.push_back(AwsShape(element, field->message_type()));
      } else if (element.is_string() && field->cpp_type() == FieldDescriptor::CPPTYPE_INT64) {
        out.push_back(std::stoll(element.get<std::string>()));
      } else if (element.is_string() && field->cpp_type() == FieldDescriptor::CPPTYPE_UINT64) {
        out.push_back(std::stoull(element.get<std::string>()));
      } else {
        out.push_back(element);
      }
    }
    return out;
  }
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    return AwsShape(value, field->message_type());
  }
  if (value.is_string() && field->cpp_type() == FieldDescriptor::CPPTYPE_INT64) {
    return std::stoll(value.get<std::string>());
  }
  if (value.is_string() && field->cpp_type() == FieldDescriptor::CPPTYPE_UINT64) {
    return std::stoull(value.get<std::string>());
  }
  return value;
}

Json AwsShape(const Json& value, const Descriptor* descriptor) {
  if (!value.is_object()) return value;  // well-known types print as scalars
  Json out = Json::object();
  std::set<std::string> known;
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    known.insert(field->json_name());
    const auto it = value.find(field->json_name());
    if (it == value.end() || field->options().GetExtension(v1::aws_internal)) continue;
    // protobuf prints every empty list and map; SageMaker leaves out a member with no value.
    if (field->is_repeated() && it->empty() && !field->options().GetExtension(v1::aws_required)) {
      continue;
    }
    out[field->json_name()] = AwsShapeField(*it, field);
  }
  // Members the descriptor does not know (none today) keep their place at the end.
  for (const auto& item : value.items()) {
    if (!known.contains(item.key())) out[item.key()] = item.value();
  }
  return out;
}

}  // namespace

absl::Status JsonToProto(std::string_view json, google::protobuf::Message* message) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  const auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), message, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(std::string(status.message()));
  }
  return absl::OkStatus();
}

std::string ProtoToJson(const google::protobuf::Message& message, bool pretty) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = pretty;
  // Plain (non-optional) scalars are the counters: SageMaker prints their zeros. Fields declared
  // `optional` have presence and are printed only when set.
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = false;
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  return out;
}

std::string ProtoToAwsJson(const google::protobuf::Message& message) {
  const std::string json = ProtoToJson(message);
  const Json parsed = Json::parse(json, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return json;  // ProtoToJson prints valid JSON; keep a surprise visible
  // ensure_ascii=false like the aws cli; `replace` keeps dump() from throwing on bad UTF-8.
  return AwsShape(parsed, message.GetDescriptor())
      .dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace amt
