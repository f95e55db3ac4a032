// `--cli-input-json`, as the aws cli reads it: `file://path`, a bare path, or inline JSON.
#ifndef AMT_CLI_INPUT_H_
#define AMT_CLI_INPUT_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

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

// The aws cli's spelling of a SageMaker name on the command line: words in lower case joined by
// '-', an acronym kept as one word (DescribeTrainingJob -> describe-training-job, S3Uri -> s3-uri,
// VpcConfig -> vpc-config, ResourceARN -> resource-arn).
std::string KebabCase(const std::string& name);

// The aws cli's per-member flags: "--kebab-case-name" for every top-level member of `type`, with
// the member's field, in declaration order (HyperParameterTuningJobConfig ->
// --hyper-parameter-tuning-job-config).
std::vector<std::pair<std::string, const google::protobuf::FieldDescriptor*>> MemberFlags(
    const google::protobuf::Descriptor* type);

// --cli-input-json (empty: none) with per-member flags on top, as the aws cli merges them:
// `members` maps a member's SageMaker name to the flag's text, which is taken as is for a string
// member and parsed as JSON for any other (`--resource-config '{"InstanceCount": 1}'`). Errors as
// LoadCliInputJson; a flag that is not valid JSON gives "Error parsing parameter
// '<flag>': Invalid JSON: ...".
absl::Status LoadRequest(const std::string& cli_input_json,
                         const std::map<std::string, std::string>& members,
                         google::protobuf::Message* message);

}  // namespace amt::cli

#endif  // AMT_CLI_INPUT_H_
