#include "cli/input.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <string>

#include "amt/v1/tuning.pb.h"
#include "tests/support/status_matchers.h"
#include "tests/support/temp_dir.h"

namespace amt::cli {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

using ::amt::testing::TempDir;
using ::amt::testing::WriteFile;

TEST(ReadCliInputJson, ReturnsInlineJsonAsIs) {
  const absl::StatusOr<std::string> json = ReadCliInputJson("  {\"TrainingJobName\": \"t\"}");
  ASSERT_THAT(json, IsOk());
  EXPECT_EQ(*json, "  {\"TrainingJobName\": \"t\"}");
}

TEST(ReadCliInputJson, ReadsFileUrl) {
  const TempDir temp;
  const std::string path = temp.str() + "/cli_input_file_url.json";
  WriteFile(path, R"({"A": 1})");
  const absl::StatusOr<std::string> json = ReadCliInputJson("file://" + path);
  ASSERT_THAT(json, IsOk());
  EXPECT_EQ(*json, R"({"A": 1})");
}

TEST(ReadCliInputJson, ReadsBarePath) {
  const TempDir temp;
  const std::string path = temp.str() + "/cli_input_bare.json";
  WriteFile(path, R"({"B": 2})");
  const absl::StatusOr<std::string> json = ReadCliInputJson(path);
  ASSERT_THAT(json, IsOk());
  EXPECT_EQ(*json, R"({"B": 2})");
}

TEST(ReadCliInputJson, ExpandsTildeToHome) {
  const TempDir temp;
  WriteFile(temp / "cli_input_home.json", R"({"C": 3})");
  const char* old_home = getenv("HOME");
  const std::string saved = old_home == nullptr ? "" : old_home;
  setenv("HOME", temp.str().c_str(), 1);
  const absl::StatusOr<std::string> json = ReadCliInputJson("file://~/cli_input_home.json");
  setenv("HOME", saved.c_str(), 1);
  ASSERT_THAT(json, IsOk());
  EXPECT_EQ(*json, R"({"C": 3})");
}

TEST(ReadCliInputJson, ReportsMissingFileLikeTheAwsCli) {
  const absl::StatusOr<std::string> json = ReadCliInputJson("file:///no/such/job.json");
  EXPECT_THAT(json, StatusIs(absl::StatusCode::kInvalidArgument,
                             "Error parsing parameter 'cli-input-json': Unable to load paramfile "
                             "file:///no/such/job.json: No such file or directory"));
}

TEST(ReadCliInputJson, ReportsDirectoryAsUnreadable) {
  const absl::StatusOr<std::string> json = ReadCliInputJson("/");
  EXPECT_THAT(json,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Error parsing parameter 'cli-input-json': Unable to load paramfile /: Is a "
                       "directory"));
}

TEST(LoadCliInputJson, ParsesSageMakerMembersIgnoringUnknownOnes) {
  v1::CreateTrainingJobRequest request;
  ASSERT_THAT(LoadCliInputJson(R"({"TrainingJobName": "t1", "HyperParameters": {"lr": "0.1"},
                                   "ExperimentConfig": {"ExperimentName": "x"}})",
                               &request),
              IsOk());
  EXPECT_EQ(request.training_job_name(), "t1");
  EXPECT_EQ(request.hyper_parameters().at("lr"), "0.1");
}

TEST(LoadCliInputJson, ReportsSyntaxErrorWithTheJsonReceived) {
  v1::CreateTrainingJobRequest request;
  const absl::Status status = LoadCliInputJson("{x", &request);
  EXPECT_THAT(
      status,
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          "Error parsing parameter 'cli-input-json': Invalid JSON: parse error at line 1, "
          "column 2: syntax error while parsing object key - invalid literal; last read: '{x'; "
          "expected string literal\nJSON received: {x"));
}

TEST(LoadCliInputJson, RejectsJsonThatIsNotAnObject) {
  v1::CreateTrainingJobRequest request;
  const absl::Status status = LoadCliInputJson("[1, 2]", &request);
  EXPECT_THAT(
      status,
      StatusIs(absl::StatusCode::kInvalidArgument,
               "Error parsing parameter 'cli-input-json': Invalid JSON: the input must be a JSON "
               "object\nJSON received: [1, 2]"));
}

TEST(LoadCliInputJson, ReportsWrongMemberTypeAsParameterValidation) {
  v1::CreateTrainingJobRequest request;
  const absl::Status status = LoadCliInputJson(R"({"TrainingJobName": 3})", &request);
  EXPECT_THAT(
      status,
      StatusIs(absl::StatusCode::kInvalidArgument,
               "Parameter validation failed:\nNUMBER_VALUE can not be converted to a String "
               "(member TrainingJobName)"));
}

TEST(LoadCliInputJson, PassesOnFileErrors) {
  v1::CreateTrainingJobRequest request;
  const absl::Status status = LoadCliInputJson("missing-job.json", &request);
  EXPECT_THAT(
      status,
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          "Error parsing parameter 'cli-input-json': Unable to load paramfile missing-job.json: "
          "No such file or directory"));
}

}  // namespace
}  // namespace amt::cli

namespace amt::cli {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

TEST(KebabCase, SplitsWordsAndKeepsAcronymsAndDigitsWhole) {
  EXPECT_EQ(KebabCase("DescribeHyperParameterTuningJob"), "describe-hyper-parameter-tuning-job");
  EXPECT_EQ(KebabCase("AddTags"), "add-tags");
  EXPECT_EQ(KebabCase("S3OutputPath"), "s3-output-path");
  EXPECT_EQ(KebabCase("ResourceARN"), "resource-arn");
  EXPECT_EQ(KebabCase("VpcConfig"), "vpc-config");
  EXPECT_EQ(KebabCase("Tags"), "tags");
}

TEST(MemberFlags, AreTheAwsCliKebabCaseNames) {
  const auto flags = MemberFlags(v1::CreateTrainingJobRequest::descriptor());
  std::vector<std::string> names;
  for (const auto& [flag, field] : flags) names.push_back(flag);
  EXPECT_THAT(names, ::testing::Contains("--training-job-name"));
  EXPECT_THAT(names, ::testing::Contains("--hyper-parameters"));
  EXPECT_THAT(names, ::testing::Contains("--role-arn"));
  EXPECT_THAT(names, ::testing::Contains("--enable-managed-spot-training"));
}

TEST(LoadRequest, FlagsOverrideMembersOfTheInputJson) {
  v1::CreateTrainingJobRequest request;
  const absl::Status status = LoadRequest(
      R"({"TrainingJobName": "a", "RoleArn": "arn:old", "ResourceConfig": {"InstanceCount": 2,
          "InstanceType": "ml.m5.large"}})",
      {{"RoleArn", "arn:aws:iam::123456789012:role/New"},
       {"ResourceConfig", R"({"InstanceCount": 1})"},
       {"HyperParameters", R"({"epochs": "3"})"}},
      &request);
  ASSERT_THAT(status, IsOk());
  EXPECT_EQ(request.training_job_name(), "a");
  EXPECT_EQ(request.role_arn(), "arn:aws:iam::123456789012:role/New");
  EXPECT_EQ(request.resource_config().instance_count(), 1);
  EXPECT_FALSE(request.resource_config().has_instance_type());  // the member is replaced whole
  EXPECT_EQ(request.hyper_parameters().at("epochs"), "3");
}

TEST(LoadRequest, BadJsonInAFlagNamesTheFlag) {
  v1::CreateTrainingJobRequest request;
  const absl::Status status = LoadRequest("", {{"ResourceConfig", "{oops"}}, &request);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument,
                               "Error parsing parameter 'resource-config': Invalid JSON: {oops"));
}

}  // namespace
}  // namespace amt::cli
