#include "cli/output.h"

#include <gtest/gtest.h>

#include "amt/v1/tuning.pb.h"
#include "tests/support/status_matchers.h"

namespace amt::cli {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

TEST(ReindentJson, IndentsWithFourSpacesKeepingMemberOrder) {
  const absl::StatusOr<std::string> json =
      ReindentJson(R"({"Zeta":1,"Alpha":{"List":[1,"two"],"Empty":[],"Obj":{}}})");
  ASSERT_THAT(json, IsOk());
  EXPECT_EQ(*json,
            "{\n"
            "    \"Zeta\": 1,\n"
            "    \"Alpha\": {\n"
            "        \"List\": [\n"
            "            1,\n"
            "            \"two\"\n"
            "        ],\n"
            "        \"Empty\": [],\n"
            "        \"Obj\": {}\n"
            "    }\n"
            "}");
}

TEST(ReindentJson, KeepsNonAsciiTextUnescaped) {
  const absl::StatusOr<std::string> json = ReindentJson(R"({"Value":"d\u00e9j\u00e0 vu"})");
  ASSERT_THAT(json, IsOk());
  EXPECT_EQ(*json, "{\n    \"Value\": \"déjà vu\"\n}");
}

TEST(ReindentJson, ReturnsInvalidArgumentForInvalidJson) {
  const absl::StatusOr<std::string> json = ReindentJson("{\"a\":");
  EXPECT_THAT(json, StatusIs(absl::StatusCode::kInvalidArgument, "not valid JSON: {\"a\":"));
}

TEST(FormatResponse, PrintsSageMakerMemberNamesWithTrailingNewline) {
  v1::CreateHyperParameterTuningJobResponse response;
  response.set_hyper_parameter_tuning_job_arn(
      "arn:aws:sagemaker:us-east-1:123456789012:hyper-parameter-tuning-job/demo");
  EXPECT_EQ(FormatResponse(response),
            "{\n"
            "    \"HyperParameterTuningJobArn\": "
            "\"arn:aws:sagemaker:us-east-1:123456789012:hyper-parameter-tuning-job/demo\"\n"
            "}\n");
}

TEST(FormatResponse, PrintsNothingForEmptyResponse) {
  EXPECT_EQ(FormatResponse(v1::StopTrainingJobResponse()), "");
  EXPECT_EQ(FormatResponse(v1::StopHyperParameterTuningJobResponse()), "");
}

TEST(FormatResponse, KeepsFieldOrderAndEpochSecondsWithMilliseconds) {
  v1::ListTrainingJobsResponse response;
  v1::TrainingJobSummary* job = response.add_training_job_summaries();
  job->set_training_job_name("train-1");
  job->set_creation_time(1704067200.517);
  job->set_training_job_status("InProgress");
  job->set_secondary_status("Training");
  response.set_next_token("tok");
  EXPECT_EQ(FormatResponse(response),
            "{\n"
            "    \"TrainingJobSummaries\": [\n"
            "        {\n"
            "            \"TrainingJobName\": \"train-1\",\n"
            "            \"CreationTime\": 1704067200.517,\n"
            "            \"TrainingJobStatus\": \"InProgress\",\n"
            "            \"SecondaryStatus\": \"Training\"\n"
            "        }\n"
            "    ],\n"
            "    \"NextToken\": \"tok\"\n"
            "}\n");
}

TEST(FormatResponse, LeavesOutEmptyListsAndMapsAndSortsMapKeys) {
  v1::DescribeTrainingJobResponse response;
  response.set_training_job_name("t");
  (*response.mutable_hyper_parameters())["zeta"] = "1";
  (*response.mutable_hyper_parameters())["alpha"] = "2";
  (*response.mutable_hyper_parameters())["mid"] = "3";
  response.set_role_arn("arn:aws:iam::1:role/r");
  EXPECT_EQ(FormatResponse(response),
            "{\n"
            "    \"TrainingJobName\": \"t\",\n"
            "    \"HyperParameters\": {\n"
            "        \"alpha\": \"2\",\n"
            "        \"mid\": \"3\",\n"
            "        \"zeta\": \"1\"\n"
            "    },\n"
            "    \"RoleArn\": \"arn:aws:iam::1:role/r\"\n"
            "}\n");
}

TEST(FormatResponse, PrintsEmptyListMember) {
  EXPECT_EQ(FormatResponse(v1::ListTrainingJobsResponse()),
            "{\n    \"TrainingJobSummaries\": []\n}\n");
}

TEST(FormatResponse, PrintsFloatObjectiveShortestForm) {
  v1::HyperParameterTrainingJobSummary summary;
  summary.mutable_final_hyper_parameter_tuning_job_objective_metric()->set_value(0.25f);
  summary.mutable_final_hyper_parameter_tuning_job_objective_metric()->set_metric_name("val:loss");
  EXPECT_EQ(FormatResponse(summary),
            "{\n"
            "    \"TunedHyperParameters\": {},\n"
            "    \"FinalHyperParameterTuningJobObjectiveMetric\": {\n"
            "        \"MetricName\": \"val:loss\",\n"
            "        \"Value\": 0.25\n"
            "    }\n"
            "}\n");
}

}  // namespace
}  // namespace amt::cli
