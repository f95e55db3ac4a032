#include "common/errors.h"

namespace amt {

std::string_view SageMakerErrorName(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
      return "ValidationException";
    case absl::StatusCode::kAlreadyExists:
      return "ResourceInUse";
    case absl::StatusCode::kNotFound:
      return "ResourceNotFound";
    case absl::StatusCode::kResourceExhausted:
      return "ResourceLimitExceeded";
    case absl::StatusCode::kFailedPrecondition:
      return "ConflictException";
    case absl::StatusCode::kUnavailable:
      return "ServiceUnavailable";
    default:
      return "InternalFailure";
  }
}

absl::StatusCode StatusCodeForSageMakerError(std::string_view name) {
  if (name == "ValidationException") return absl::StatusCode::kInvalidArgument;
  if (name == "ResourceInUse") return absl::StatusCode::kAlreadyExists;
  if (name == "ResourceNotFound") return absl::StatusCode::kNotFound;
  if (name == "ResourceLimitExceeded") return absl::StatusCode::kResourceExhausted;
  if (name == "ConflictException") return absl::StatusCode::kFailedPrecondition;
  if (name == "ServiceUnavailable") return absl::StatusCode::kUnavailable;
  return absl::StatusCode::kUnknown;
}

}  // namespace amt
