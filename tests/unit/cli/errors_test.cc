#include "cli/errors.h"

#include <gtest/gtest.h>

namespace amt::cli {
namespace {

TEST(DescribeRpcError, NamesValidationExceptionLikeTheAwsCliForInvalidArgument) {
  const CliError error = DescribeRpcError(
      grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "Requested resource not found."),
      "DescribeTrainingJob", "127.0.0.1:7070");
  EXPECT_EQ(error.exit_code, 254);
  EXPECT_EQ(error.text,
            "\nAn error occurred (ValidationException) when calling the DescribeTrainingJob "
            "operation: Requested resource not found.\n");
}

TEST(DescribeRpcError, NamesResourceNotFoundForNotFound) {
  const CliError error = DescribeRpcError(
      grpc::Status(grpc::StatusCode::NOT_FOUND,
                   "Amazon SageMaker can't find a tuning job called demo. Type another name."),
      "DescribeHyperParameterTuningJob", "127.0.0.1:7070");
  EXPECT_EQ(error.exit_code, 254);
  EXPECT_EQ(error.text,
            "\nAn error occurred (ResourceNotFound) when calling the "
            "DescribeHyperParameterTuningJob operation: Amazon SageMaker can't find a tuning job "
            "called demo. Type another name.\n");
}

TEST(DescribeRpcError, NamesResourceInUseForAlreadyExists) {
  const CliError error = DescribeRpcError(grpc::Status(grpc::StatusCode::ALREADY_EXISTS, "taken"),
                                          "CreateHyperParameterTuningJob", "h:1");
  EXPECT_EQ(error.exit_code, 254);
  EXPECT_EQ(error.text,
            "\nAn error occurred (ResourceInUse) when calling the CreateHyperParameterTuningJob "
            "operation: taken\n");
}

TEST(DescribeRpcError, NamesInternalFailureForCodesWithoutSageMakerName) {
  const CliError error = DescribeRpcError(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "no"),
                                          "StopTrainingJob", "h:1");
  EXPECT_EQ(error.exit_code, 254);
  EXPECT_EQ(error.text,
            "\nAn error occurred (InternalFailure) when calling the StopTrainingJob operation: "
            "no\n");
}

TEST(DescribeRpcError, ReportsConnectionFailureWithExit255WhenUnavailable) {
  const CliError error =
      DescribeRpcError(grpc::Status(grpc::StatusCode::UNAVAILABLE, "failed to connect"),
                       "ListTrainingJobs", "127.0.0.1:7070");
  EXPECT_EQ(error.exit_code, 255);
  EXPECT_EQ(error.text, "\nCould not connect to the endpoint URL: \"127.0.0.1:7070\"\n");
}

TEST(DescribeRpcError, ReportsReadTimeoutWithExit255WhenDeadlineExceeded) {
  const CliError error = DescribeRpcError(
      grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded"), "X", "h:9");
  EXPECT_EQ(error.exit_code, 255);
  EXPECT_EQ(error.text, "\nRead timeout on endpoint URL: \"h:9\"\n");
}

TEST(UsageError, WrapsMessageInNewlinesWithExit252) {
  const CliError error =
      UsageError("Cannot specify --no-paginate along with pagination arguments: --page-size");
  EXPECT_EQ(error.exit_code, 252);
  EXPECT_EQ(error.text,
            "\nCannot specify --no-paginate along with pagination arguments: --page-size\n");
}

}  // namespace
}  // namespace amt::cli
