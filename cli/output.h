// JSON output like the aws cli's default `--output json`: SageMaker member names in SageMaker's
// member order, 4-space indentation, and nothing at all for an empty response.
#ifndef AMT_CLI_OUTPUT_H_
#define AMT_CLI_OUTPUT_H_

#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/message.h"

namespace amt::cli {

// Re-indents `json` (compact or indented) with 4 spaces, keeping member order. No trailing
// newline. InvalidArgument when `json` does not parse.
absl::StatusOr<std::string> ReindentJson(const std::string& json);

// What `amt` prints for a response: "" when the response has no members (the aws cli prints
// nothing for StopTrainingJob's `{}`), else the JSON with 4-space indentation plus '\n'. Members
// come in the order the proto declares them (SageMaker's order), map entries (HyperParameters,
// Environment, ...) sorted by key so that the output is stable.
std::string FormatResponse(const google::protobuf::Message& response);

}  // namespace amt::cli

#endif  // AMT_CLI_OUTPUT_H_
