// SageMaker error names carried by absl::Status codes. Every module returns absl::Status; the
// edges (gRPC service, CLI, HTTP gateway) translate once with these functions.
//
//   InvalidArgument    <-> ValidationException
//   AlreadyExists      <-> ResourceInUse
//   NotFound           <-> ResourceNotFound
//   ResourceExhausted  <-> ResourceLimitExceeded
//   FailedPrecondition <-> ConflictException
//   Unavailable        <-> ServiceUnavailable (AWS's common error, HTTP 503)
//   anything else      <-> InternalFailure
#ifndef AMT_COMMON_ERRORS_H_
#define AMT_COMMON_ERRORS_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace amt {

// The SageMaker error code (the `__type` of the AWS JSON error) for a status code.
std::string_view SageMakerErrorName(absl::StatusCode code);

// The status code for a SageMaker error name; kUnknown for names not in the table.
absl::StatusCode StatusCodeForSageMakerError(std::string_view name);

// Convenience constructors, so call sites read like SageMaker's documentation.
inline absl::Status ValidationError(std::string_view message) {
  return absl::InvalidArgumentError(std::string(message));
}
inline absl::Status ResourceInUseError(std::string_view message) {
  return absl::AlreadyExistsError(std::string(message));
}
inline absl::Status ResourceNotFoundError(std::string_view message) {
  return absl::NotFoundError(std::string(message));
}
inline absl::Status ResourceLimitExceededError(std::string_view message) {
  return absl::ResourceExhaustedError(std::string(message));
}
inline absl::Status ServiceUnavailableError(std::string_view message) {
  return absl::UnavailableError(std::string(message));
}

}  // namespace amt

#endif  // AMT_COMMON_ERRORS_H_
