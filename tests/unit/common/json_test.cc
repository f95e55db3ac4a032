#include "common/json.h"

#include <gmock/gmock.h>
#include <google/protobuf/duration.pb.h>
#include <gtest/gtest.h>

#include "amt/v1/tuning.pb.h"
#include "tests/support/status_matchers.h"

namespace amt {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

using ::testing::HasSubstr;
using ::testing::Not;

TEST(Json, ParsesSageMakerRequestBodyWithPascalCaseMembers) {
  v1::CreateHyperParameterTuningJobRequest req;
  ASSERT_THAT(JsonToProto(R"({
    "HyperParameterTuningJobName": "demo-tune",
    "HyperParameterTuningJobConfig": {
      "Strategy": "Random",
      "ResourceLimits": {"MaxNumberOfTrainingJobs": 4, "MaxParallelTrainingJobs": 2},
      "ParameterRanges": {"ContinuousParameterRanges": [
        {"Name": "lr", "MinValue": "0.0001", "MaxValue": "0.1", "ScalingType": "Logarithmic"}]}
    },
    "TrainingJobDefinition": {"StaticHyperParameters": {"epochs": "10"},
      "ResourceConfig": {"VolumeSizeInGB": 10}},
    "ExperimentConfig": {"ExperimentName": "unknown members are ignored"}
  })",
                          &req),
              IsOk());
  EXPECT_EQ(req.hyper_parameter_tuning_job_name(), "demo-tune");
  EXPECT_EQ(req.hyper_parameter_tuning_job_config().resource_limits().max_parallel_training_jobs(),
            2);
  EXPECT_EQ(req.hyper_parameter_tuning_job_config()
                .parameter_ranges()
                .continuous_parameter_ranges(0)
                .scaling_type(),
            "Logarithmic");
  EXPECT_EQ(req.training_job_definition().static_hyper_parameters().at("epochs"), "10");
  EXPECT_EQ(req.training_job_definition().resource_config().volume_size_in_gb(), 10);
}

TEST(Json, AMessageThatCannotBePrintedGivesAnErrorBodyNotNothing) {
  google::protobuf::Duration too_long;  // JSON's Duration ends at 315,576,000,000 s
  too_long.set_seconds(400'000'000'000);
  const std::string json = ProtoToJson(too_long);
  EXPECT_THAT(json, HasSubstr(R"("__type":"InternalFailure")"));
  EXPECT_THAT(json, HasSubstr("cannot print google.protobuf.Duration as JSON: "));
}

TEST(Json, RejectsWrongTypeWithInvalidArgument) {
  v1::CreateHyperParameterTuningJobRequest req;
  const auto status = JsonToProto(R"({"HyperParameterTuningJobName": 7})", &req);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument));
}

// The AWS JSON protocols do not coerce: each member must have its shape's JSON type.
TEST(Json, RefusesAMemberOfAnotherJsonTypeInsteadOfCoercingIt) {
  const auto parse = [](const std::string& json) {
    v1::CreateHyperParameterTuningJobRequest req;
    return JsonToProto(json, &req);
  };
  EXPECT_THAT(
      parse(
          R"({"HyperParameterTuningJobConfig": {"ResourceLimits": {"MaxParallelTrainingJobs": "2"}}})"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "STRING_VALUE can not be converted to an Integer (member "
               "HyperParameterTuningJobConfig.ResourceLimits.MaxParallelTrainingJobs)"));
  EXPECT_THAT(parse(R"({"TrainingJobDefinition": {"EnableManagedSpotTraining": "true"}})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "STRING_VALUE can not be converted to a Boolean (member "
                       "TrainingJobDefinition.EnableManagedSpotTraining)"));
  EXPECT_THAT(parse(R"({"TrainingJobDefinition": {"StaticHyperParameters": {"epochs": 10}}})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "NUMBER_VALUE can not be converted to a String (member "
                       "TrainingJobDefinition.StaticHyperParameters.epochs)"));
  EXPECT_THAT(parse(R"({"Tags": {"Key": "a", "Value": "b"}})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "START_OBJECT can not be converted to a List (member Tags)"));
  EXPECT_THAT(parse(R"({"Tags": [{"Key": "a", "Value": 1}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "NUMBER_VALUE can not be converted to a String (member Tags[0].Value)"));
  EXPECT_THAT(parse(R"({"WarmStartConfig": "none"})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "STRING_VALUE can not be converted to a Structure (member "
                       "WarmStartConfig)"));
  // Numbers of either JSON form, null for "not given", and unknown members are accepted.
  v1::CreateHyperParameterTuningJobRequest ok;
  ASSERT_TRUE(JsonToProto(R"({"HyperParameterTuningJobConfig": {"ResourceLimits":
      {"MaxParallelTrainingJobs": 2.0, "MaxNumberOfTrainingJobs": null}}, "Autotune2": "x"})",
                          &ok)
                  .ok());
  EXPECT_EQ(ok.hyper_parameter_tuning_job_config().resource_limits().max_parallel_training_jobs(),
            2);
  EXPECT_FALSE(
      ok.hyper_parameter_tuning_job_config().resource_limits().has_max_number_of_training_jobs());
}

TEST(Json, PrintsZeroCountersButNotUnsetOptionalMembers) {
  v1::DescribeHyperParameterTuningJobResponse resp;
  resp.set_hyper_parameter_tuning_job_name("t");
  resp.mutable_training_job_status_counters();
  const std::string json = ProtoToJson(resp);
  EXPECT_THAT(json, HasSubstr(R"("HyperParameterTuningJobName":"t")"));
  EXPECT_THAT(json, HasSubstr(R"("NonRetryableError":0)"));
  EXPECT_THAT(json, Not(HasSubstr("FailureReason")));
  EXPECT_THAT(json, Not(HasSubstr("BestTrainingJob")));
}

TEST(Json, PrintsAwsJsonInSageMakersMemberOrderWithLongsAsNumbers) {
  v1::Channel channel;
  channel.set_channel_name("train");
  channel.mutable_shuffle_config()->set_seed(1234567890123);
  EXPECT_EQ(ProtoToAwsJson(channel),
            R"({"ChannelName":"train","ShuffleConfig":{"Seed":1234567890123}})");

  v1::DescribeTrainingJobResponse job;
  (*job.mutable_hyper_parameters())["zeta"] = "1";
  (*job.mutable_hyper_parameters())["alpha"] = "2";
  job.set_training_job_name("j");
  const std::string json = ProtoToAwsJson(job);
  // TrainingJobName is declared before HyperParameters; map keys come sorted.
  EXPECT_LT(json.find("\"TrainingJobName\""), json.find("\"HyperParameters\""));
  EXPECT_THAT(json, HasSubstr(R"("HyperParameters":{"alpha":"2","zeta":"1"})"));
}

TEST(Json, LeavesOutEmptyListsAndMapsUnlessTheMemberIsRequired) {
  v1::DescribeTrainingJobResponse job;
  job.set_training_job_name("j");
  job.mutable_algorithm_specification()->set_training_image("img");
  // ContainerEntrypoint, InputDataConfig, HyperParameters, Environment, ... are all empty. (A
  // live SageMaker reply had "InputDataConfig": [], which botocore's model, min 1, does not
  // allow: amt-local follows the model.)
  EXPECT_EQ(ProtoToAwsJson(job),
            R"({"TrainingJobName":"j","AlgorithmSpecification":{"TrainingImage":"img"}})");
  // A List operation's summaries are a required member: printed even when there are none.
  EXPECT_EQ(ProtoToAwsJson(v1::ListTrainingJobsResponse()), R"({"TrainingJobSummaries":[]})");
}

TEST(Json, LeavesOutAmtLocalsOwnFieldsOnTheAwsWire) {
  v1::DescribeTrainingJobResponse job;
  job.set_training_job_name("j");
  auto* tag = job.add_tags();  // kept in the record; not a member of DescribeTrainingJob's output
  tag->set_key("team");
  tag->set_value("ml");
  EXPECT_EQ(ProtoToAwsJson(job), R"({"TrainingJobName":"j"})");
  EXPECT_THAT(ProtoToJson(job), HasSubstr("\"Tags\""));  // the plain printer keeps it
}

}  // namespace
}  // namespace amt
