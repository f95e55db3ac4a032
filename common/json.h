// Proto <-> JSON with SageMaker's member names (the json_name of every field).
#ifndef AMT_COMMON_JSON_H_
#define AMT_COMMON_JSON_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "google/protobuf/message.h"

namespace amt {

// Parses a SageMaker request body into `message`. Unknown members are ignored (SageMaker shapes
// have members amt-local does not model), null reads as absent, and a member of the wrong JSON
// type is InvalidArgument in the AWS protocols' words, with the member's path: "STRING_VALUE can
// not be converted to an Integer (member ResourceLimits.MaxParallelTrainingJobs)"; no coercion
// ("2" is not 2). Malformed JSON is InvalidArgument with protobuf's description of where.
absl::Status JsonToProto(std::string_view json, google::protobuf::Message* message);

// Prints `message` as SageMaker does: PascalCase members, zero counters included, unset optional
// members left out. `pretty` indents by 4 spaces, like the aws cli. A message that cannot be
// printed (a well-known type out of JSON's range; SageMaker's messages have none) gives an
// InternalFailure error body that names it, never "".
std::string ProtoToJson(const google::protobuf::Message& message, bool pretty = false);

// ProtoToJson as SageMaker's AWS JSON carries it, compact: empty lists and maps left out unless
// marked (aws_required), fields marked aws_internal left out (amt/v1/aws.proto), members in the
// order the proto
// declares them (SageMaker's member order; protobuf's printer moves empty lists and maps first),
// map keys sorted (stable output), and 64-bit integers as JSON numbers (protobuf prints them as
// strings; AWS Longs such as ShuffleConfig.Seed are numbers).
std::string ProtoToAwsJson(const google::protobuf::Message& message);

}  // namespace amt

#endif  // AMT_COMMON_JSON_H_
