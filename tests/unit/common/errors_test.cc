#include "common/errors.h"

#include <gtest/gtest.h>

namespace amt {
namespace {

TEST(SageMakerErrorName, MapsEveryCodeBothWays) {
  const std::pair<absl::StatusCode, std::string_view> table[] = {
      {absl::StatusCode::kInvalidArgument, "ValidationException"},
      {absl::StatusCode::kAlreadyExists, "ResourceInUse"},
      {absl::StatusCode::kNotFound, "ResourceNotFound"},
      {absl::StatusCode::kResourceExhausted, "ResourceLimitExceeded"},
      {absl::StatusCode::kFailedPrecondition, "ConflictException"},
      {absl::StatusCode::kUnavailable, "ServiceUnavailable"},
  };
  for (const auto& [code, name] : table) {
    EXPECT_EQ(SageMakerErrorName(code), name);
    EXPECT_EQ(StatusCodeForSageMakerError(name), code);
  }
  EXPECT_EQ(SageMakerErrorName(absl::StatusCode::kInternal), "InternalFailure");
  EXPECT_EQ(StatusCodeForSageMakerError("NoSuchThing"), absl::StatusCode::kUnknown);
}

TEST(ServiceUnavailableError, IsUnavailable) {
  EXPECT_EQ(ServiceUnavailableError("later").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(ServiceUnavailableError("later").message(), "later");
}

}  // namespace
}  // namespace amt
