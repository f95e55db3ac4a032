// Exit codes and error texts of the amt client, copied from the aws cli so that scripts written
// for `aws sagemaker ...` can test `amt ...` the same way.
#ifndef AMT_CLI_ERRORS_H_
#define AMT_CLI_ERRORS_H_

#include <string>

#include "grpcpp/support/status.h"

namespace amt::cli {

// The aws cli's exit codes (aws cli v2 "return codes" page).
inline constexpr int kExitSuccess = 0;
// amt watch: the tuning job ended in a status other than Completed.
inline constexpr int kExitNotCompleted = 1;
// Bad usage or a parameter that cannot be parsed (aws cli: ParamValidationError / usage).
inline constexpr int kExitUsage = 252;
// The service answered with an error (aws cli: ClientError).
inline constexpr int kExitServiceError = 254;
// Anything else: no connection, timeout, pagination loop (aws cli: any other exception).
inline constexpr int kExitOtherError = 255;

// What the client prints to stderr for a failed call, and the exit code that goes with it.
struct CliError {
  int exit_code = kExitOtherError;
  std::string text;  // Printed as is; starts and ends with '\n' like the aws cli's messages.
};

// Translates a failed gRPC call of `operation` (a SageMaker operation name such as
// "CreateHyperParameterTuningJob") against `endpoint`:
//   UNAVAILABLE        -> "\nCould not connect to the endpoint URL: \"<endpoint>\"\n", 255
//   DEADLINE_EXCEEDED  -> "\nRead timeout on endpoint URL: \"<endpoint>\"\n", 255
//   anything else      -> "\nAn error occurred (<SageMaker name>) when calling the <operation>
//                          operation: <message>\n", 254
// `status` must not be OK.
CliError DescribeRpcError(const grpc::Status& status, const std::string& operation,
                          const std::string& endpoint);

// A client-side problem with the arguments (exit 252), printed like the aws cli's ParamError.
CliError UsageError(const std::string& message);

}  // namespace amt::cli

#endif  // AMT_CLI_ERRORS_H_
