#include "cli/errors.h"

#include "absl/status/status.h"
#include "common/errors.h"

namespace amt::cli {

CliError DescribeRpcError(const grpc::Status& status, const std::string& operation,
                          const std::string& endpoint) {
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      return {kExitOtherError, "\nCould not connect to the endpoint URL: \"" + endpoint + "\"\n"};
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return {kExitOtherError, "\nRead timeout on endpoint URL: \"" + endpoint + "\"\n"};
    default:
      break;
  }
  // gRPC and absl share the canonical code numbers, so the cast is exact.
  const std::string name(SageMakerErrorName(static_cast<absl::StatusCode>(status.error_code())));
  return {kExitServiceError, "\nAn error occurred (" + name + ") when calling the " + operation +
                                 " operation: " + status.error_message() + "\n"};
}

CliError UsageError(const std::string& message) { return {kExitUsage, "\n" + message + "\n"}; }

}  // namespace amt::cli
