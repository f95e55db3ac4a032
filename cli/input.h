// `--cli-input-json`, as the aws cli reads it: `file://path`, a bare path, or inline JSON.
#ifndef AMT_CLI_INPUT_H_
#define AMT_CLI_INPUT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message.h"

namespace amt::cli {

// Returns the JSON text `value` names: the contents of the file for `file://path` or for a bare
// path, or `value` itself when it starts (after blanks) with '{' or '['. A leading `~/` in a
// path is the home directory. InvalidArgument with the aws cli's text when the file cannot be
// read: "Error parsing parameter 'cli-input-json': Unable to load paramfile <value>: <reason>".
absl::StatusOr<std::string> ReadCliInputJson(const std::string& value);

// Reads `value` as above and parses it into `message` (SageMaker member names; unknown members
// are ignored, as amt::JsonToProto does). InvalidArgument, with the text to print:
//   "Error parsing parameter 'cli-input-json': Invalid JSON: <parser message>\nJSON received:
//   <text>"
//     when the text is not JSON or not a JSON object;
//   "Parameter validation failed:\n<message>" when a member has the wrong type.
absl::Status LoadCliInputJson(const std::string& value, google::protobuf::Message* message);

}  // namespace amt::cli

#endif  // AMT_CLI_INPUT_H_
