#include "common/json.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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

// The AWS JSON protocols' word for a JSON value's kind, as their SerializationException
// messages print it ("STRING_VALUE can not be converted to an Integer").
const char* TokenName(const Json& value) {
  if (value.is_string()) return "STRING_VALUE";
  if (value.is_number()) return "NUMBER_VALUE";
  if (value.is_boolean()) return "BOOLEAN_VALUE";
  if (value.is_object()) return "START_OBJECT";
  if (value.is_array()) return "START_ARRAY";
  return "VALUE_NULL";
}

// The shape type a field holds, with its article, as the AWS message names it.
const char* ShapeTypeName(const FieldDescriptor* field) {
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_UINT32:
      return "an Integer";
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT64:
      return "a Long";
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return "a Double";
    case FieldDescriptor::CPPTYPE_FLOAT:
      return "a Float";
    case FieldDescriptor::CPPTYPE_BOOL:
      return "a Boolean";
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return "a Structure";
    default:
      return "a String";
  }
}

bool SingleValueFits(const Json& value, const FieldDescriptor* field) {
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT64:
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT:
      return value.is_number();
    case FieldDescriptor::CPPTYPE_BOOL:
      return value.is_boolean();
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return value.is_object();
    default:
      return value.is_string();  // strings and (none today) enums
  }
}

absl::Status TypeMismatch(const Json& value, const char* type, const std::string& path) {
  return absl::InvalidArgumentError(
      absl::StrCat(TokenName(value), " can not be converted to ", type, " (member ", path, ")"));
}

absl::Status CheckMemberTypes(const Json& object, const Descriptor* descriptor,
                              const std::string& path);

absl::Status CheckSingleValue(const Json& value, const FieldDescriptor* field,
                              const std::string& path) {
  if (!SingleValueFits(value, field)) return TypeMismatch(value, ShapeTypeName(field), path);
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    return CheckMemberTypes(value, field->message_type(), path);
  }
  return absl::OkStatus();
}

absl::Status CheckField(const Json& value, const FieldDescriptor* field, const std::string& path) {
  if (value.is_null()) return absl::OkStatus();  // AWS reads null as "not given"
  if (field->is_map()) {
    if (!value.is_object()) return TypeMismatch(value, "a Map", path);
    const FieldDescriptor* entry = field->message_type()->map_value();
    for (const auto& item : value.items()) {
      const std::string item_path = absl::StrCat(path, ".", item.key());
      if (absl::Status s = CheckSingleValue(item.value(), entry, item_path); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  if (field->is_repeated()) {
    if (!value.is_array()) return TypeMismatch(value, "a List", path);
    for (size_t i = 0; i < value.size(); ++i) {
      const std::string item_path = absl::StrCat(path, "[", i, "]");
      if (absl::Status s = CheckSingleValue(value[i], field, item_path); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  return CheckSingleValue(value, field, path);
}

// AWS's JSON protocols bind each member to its shape's type and refuse a value of another JSON
// type (a request with "MaxParallelTrainingJobs": "2" is a SerializationException); protobuf's
// parser would coerce "2" to 2 and "true" to true. Unknown members are ignored, as AWS does.
absl::Status CheckMemberTypes(const Json& object, const Descriptor* descriptor,
                              const std::string& path) {
  for (const auto& item : object.items()) {
    const FieldDescriptor* field = nullptr;
    for (int i = 0; i < descriptor->field_count() && field == nullptr; ++i) {
      if (descriptor->field(i)->json_name() == item.key()) field = descriptor->field(i);
    }
    if (field == nullptr) continue;
    const std::string member = path.empty() ? item.key() : absl::StrCat(path, ".", item.key());
    if (absl::Status s = CheckField(item.value(), field, member); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status JsonToProto(std::string_view json, google::protobuf::Message* message) {
  // Parse errors are left to protobuf's parser below, whose message says where.
  const Json parsed = Json::parse(json, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object()) {
    if (absl::Status s = CheckMemberTypes(parsed, message->GetDescriptor(), ""); !s.ok()) return s;
  }
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
  const auto status = google::protobuf::util::MessageToJsonString(message, &out, options);
  if (!status.ok()) {
    // Only well-known types out of JSON's range (a Duration or Timestamp past year 9999) fail to
    // print, and SageMaker's messages hold none: a failure is a bug, answered as one, not as "".
    return Json{{"__type", "InternalFailure"},
                {"message", "cannot print " + message.GetTypeName() +
                                " as JSON: " + std::string(status.message())}}
        .dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
  }
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
