#include "common/json.h"

#include "google/protobuf/util/json_util.h"

namespace amt {

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

}  // namespace amt
