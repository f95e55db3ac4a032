#include "orchestrator/validation/validation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "absl/strings/str_join.h"
#include "amt/v1/tuning.pb.h"
#include "common/errors.h"
#include "common/json.h"
#include "orchestrator/validation/instance_types.h"
#include "tests/support/requests.h"
#include "tests/support/status_matchers.h"

namespace amt::validation {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

// The minimal body of spec Appendix A, from the Random example (examples/random-tuning.json).
v1::CreateHyperParameterTuningJobRequest Tuning() {
  return ::amt::testing::TuningRequest("random-tuning.json", R"json({
    "HyperParameterTuningJobName": "demo-tune",
    "HyperParameterTuningJobConfig": {
      "HyperParameterTuningJobObjective": {"MetricName": "val:loss"},
      "ResourceLimits": {"MaxNumberOfTrainingJobs": 4},
      "ParameterRanges": {
        "ContinuousParameterRanges": [
          {"Name": "lr", "MinValue": "0.0001", "MaxValue": "0.1", "ScalingType": "Logarithmic"}],
        "IntegerParameterRanges": null, "CategoricalParameterRanges": null},
      "RandomSeed": null},
    "TrainingJobDefinition": {
      "StaticHyperParameters": {"epochs": "10", "sleep_ms": null},
      "AlgorithmSpecification": {
        "TrainingImage": "123456789012.dkr.ecr.us-east-1.amazonaws.com/my-algo:latest",
        "MetricDefinitions": [{"Name": "val:loss", "Regex": "val_loss=([0-9.eE+-]+)"}]},
      "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"}}})json");
}

// The training-job example (examples/training-job.json) with a "train" channel.
v1::CreateTrainingJobRequest Training() {
  return ::amt::testing::TrainingRequest("training-job.json", R"json({
    "TrainingJobName": "demo-train",
    "HyperParameters": null, "CheckpointConfig": null, "Environment": null,
    "AlgorithmSpecification": {"TrainingImage": "my-algo",
      "MetricDefinitions": [{"Name": "val:loss", "Regex": "val_loss=([0-9.eE+-]+)"}]},
    "InputDataConfig": [{"ChannelName": "train", "DataSource": {"S3DataSource": {
        "S3DataType": "S3Prefix", "S3Uri": "s3://bucket/train"}}}],
    "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"}})json");
}

MATCHER_P(IsValidationError, message, "") {
  if (arg.code() != absl::StatusCode::kInvalidArgument) {
    *result_listener << "code " << absl::StatusCodeToString(arg.code());
    return false;
  }
  return ::testing::ExplainMatchResult(::testing::Eq(std::string(message)),
                                       std::string(arg.message()), result_listener);
}

std::string One(const std::string& violation) {
  return "1 validation error detected: " + violation;
}

absl::Status Validate(const v1::CreateHyperParameterTuningJobRequest& r) {
  return ValidateCreateHyperParameterTuningJob(r);
}

v1::HyperParameterTuningJobConfig* Config(v1::CreateHyperParameterTuningJobRequest* r) {
  return r->mutable_hyper_parameter_tuning_job_config();
}
v1::HyperParameterTrainingJobDefinition* Definition(v1::CreateHyperParameterTuningJobRequest* r) {
  return r->mutable_training_job_definition();
}
v1::ParameterRanges* Ranges(v1::CreateHyperParameterTuningJobRequest* r) {
  return Config(r)->mutable_parameter_ranges();
}

// ---------------- stage 1: member constraints ----------------

TEST(ValidateCreateHyperParameterTuningJob, AcceptsAppendixAMinimalRequest) {
  EXPECT_THAT(Validate(Tuning()), IsOk());
}

TEST(ValidateCreateHyperParameterTuningJob, ErrorMapsToValidationException) {
  auto r = Tuning();
  r.set_hyper_parameter_tuning_job_name("demo_tune");
  const absl::Status status = Validate(r);
  EXPECT_EQ(SageMakerErrorName(status.code()), "ValidationException");
  EXPECT_THAT(status, IsValidationError(One(
                          "Value 'demo_tune' at 'hyperParameterTuningJobName' failed to satisfy "
                          "constraint: Member must satisfy regular expression pattern: "
                          "^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,31}")));
}

TEST(ValidateCreateHyperParameterTuningJob, ReportsMissingRequiredTopLevelMembers) {
  EXPECT_THAT(Validate(v1::CreateHyperParameterTuningJobRequest()),
              IsValidationError(
                  "2 validation errors detected: Value null at 'hyperParameterTuningJobName' "
                  "failed to satisfy constraint: Member must not be null; Value null at "
                  "'hyperParameterTuningJobConfig' failed to satisfy constraint: Member must not "
                  "be null"));
}

TEST(ValidateCreateHyperParameterTuningJob, CollectsSeveralMemberErrorsIntoOneMessage) {
  auto r = Tuning();
  const std::string name(33, 'a');
  r.set_hyper_parameter_tuning_job_name(name);
  Config(&r)->set_strategy("Smart");
  Config(&r)->mutable_resource_limits()->clear_max_parallel_training_jobs();
  Definition(&r)->clear_role_arn();
  Definition(&r)->mutable_algorithm_specification()->set_training_input_mode("Stream");
  EXPECT_THAT(
      Validate(r),
      IsValidationError(
          "6 validation errors detected: Value '" + name +
          "' at 'hyperParameterTuningJobName' failed to satisfy constraint: Member must satisfy "
          "regular expression pattern: ^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,31}; Value '" +
          name +
          "' at 'hyperParameterTuningJobName' failed to satisfy constraint: Member must have "
          "length less than or equal to 32; Value 'Smart' at "
          "'hyperParameterTuningJobConfig.strategy' failed to satisfy constraint: Member must "
          "satisfy enum value set: [Bayesian, Random, Hyperband, Grid]; Value null at "
          "'hyperParameterTuningJobConfig.resourceLimits.maxParallelTrainingJobs' failed to "
          "satisfy constraint: Member must not be null; Value 'Stream' at "
          "'trainingJobDefinition.algorithmSpecification.trainingInputMode' failed to satisfy "
          "constraint: Member must satisfy enum value set: [Pipe, File, FastFile]; Value null at "
          "'trainingJobDefinition.roleArn' failed to satisfy constraint: Member must not be "
          "null"));
}

TEST(ValidateCreateHyperParameterTuningJob, RequiresStrategyAndResourceLimits) {
  auto r = Tuning();
  Config(&r)->clear_strategy();
  Config(&r)->clear_resource_limits();
  EXPECT_THAT(Validate(r),
              IsValidationError(
                  "2 validation errors detected: Value null at "
                  "'hyperParameterTuningJobConfig.strategy' failed to satisfy constraint: Member "
                  "must not be null; Value null at 'hyperParameterTuningJobConfig.resourceLimits' "
                  "failed to satisfy constraint: Member must not be null"));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksResourceLimitsBounds) {
  auto r = Tuning();
  v1::ResourceLimits* limits = Config(&r)->mutable_resource_limits();
  limits->set_max_number_of_training_jobs(0);
  limits->set_max_parallel_training_jobs(0);
  limits->set_max_runtime_in_seconds(119);
  EXPECT_THAT(
      Validate(r),
      IsValidationError(
          "3 validation errors detected: Value '0' at "
          "'hyperParameterTuningJobConfig.resourceLimits.maxNumberOfTrainingJobs' failed to "
          "satisfy constraint: Member must have value greater than or equal to 1; Value '0' at "
          "'hyperParameterTuningJobConfig.resourceLimits.maxParallelTrainingJobs' failed to "
          "satisfy constraint: Member must have value greater than or equal to 1; Value '119' at "
          "'hyperParameterTuningJobConfig.resourceLimits.maxRuntimeInSeconds' failed to satisfy "
          "constraint: Member must have value greater than or equal to 120"));
  limits->set_max_number_of_training_jobs(4);
  limits->set_max_parallel_training_jobs(2);
  limits->set_max_runtime_in_seconds(15768001);
  EXPECT_THAT(Validate(r),
              IsValidationError(One(
                  "Value '15768001' at "
                  "'hyperParameterTuningJobConfig.resourceLimits.maxRuntimeInSeconds' failed to "
                  "satisfy constraint: Member must have value less than or equal to 15768000")));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksObjectiveTypeAndMetricName) {
  auto r = Tuning();
  auto* objective = Config(&r)->mutable_hyper_parameter_tuning_job_objective();
  objective->set_type("Maximise");
  objective->set_metric_name("");
  EXPECT_THAT(
      Validate(r),
      IsValidationError(
          "3 validation errors detected: Value 'Maximise' at "
          "'hyperParameterTuningJobConfig.hyperParameterTuningJobObjective.type' failed to "
          "satisfy constraint: Member must satisfy enum value set: [Maximize, Minimize]; Value '' "
          "at 'hyperParameterTuningJobConfig.hyperParameterTuningJobObjective.metricName' failed "
          "to satisfy constraint: Member must satisfy regular expression pattern: .+; Value '' at "
          "'hyperParameterTuningJobConfig.hyperParameterTuningJobObjective.metricName' failed to "
          "satisfy constraint: Member must have length greater than or equal to 1"));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksScalingTypeAndEarlyStoppingType) {
  auto r = Tuning();
  Ranges(&r)->mutable_continuous_parameter_ranges(0)->set_scaling_type("Log");
  Config(&r)->set_training_job_early_stopping_type("OFF");
  EXPECT_THAT(
      Validate(r),
      IsValidationError(
          "2 validation errors detected: Value 'Log' at "
          "'hyperParameterTuningJobConfig.parameterRanges.continuousParameterRanges.1.member."
          "scalingType' failed to satisfy constraint: Member must satisfy enum value set: [Auto, "
          "Linear, Logarithmic, ReverseLogarithmic]; Value 'OFF' at "
          "'hyperParameterTuningJobConfig.trainingJobEarlyStoppingType' failed to satisfy "
          "constraint: Member must satisfy enum value set: [Off, Auto]"));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksRangeListSizes) {
  auto r = Tuning();
  Ranges(&r)->clear_continuous_parameter_ranges();
  std::string rendered = "[";
  for (int i = 0; i < 31; ++i) {
    auto* range = Ranges(&r)->add_integer_parameter_ranges();
    range->set_name("p" + std::to_string(i));
    range->set_min_value("1");
    range->set_max_value("2");
    rendered += (i == 0 ? "" : ", ") + std::string("{Name: p") + std::to_string(i) +
                ", MinValue: 1, MaxValue: 2}";
  }
  rendered += "]";
  EXPECT_THAT(Validate(r),
              IsValidationError(
                  One("Value '" + rendered +
                      "' at 'hyperParameterTuningJobConfig.parameterRanges.integerParameterRanges' "
                      "failed to satisfy constraint: Member must have length less than or equal to "
                      "30")));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksCategoricalValues) {
  auto r = Tuning();
  auto* range = Ranges(&r)->add_categorical_parameter_ranges();
  range->set_name("opt");
  const std::string long_value(257, 'v');
  range->add_values("adam");
  range->add_values(long_value);
  EXPECT_THAT(
      Validate(r),
      IsValidationError(
          One("Value '[adam, " + long_value +
              "]' at "
              "'hyperParameterTuningJobConfig.parameterRanges.categoricalParameterRanges.1.member."
              "values' failed to satisfy constraint: Member must satisfy constraint: [Member must "
              "have length less than or equal to 256, Member must satisfy regular expression "
              "pattern: .*]")));
  range->clear_values();
  std::string rendered = "[";
  for (int i = 0; i < 31; ++i) {
    range->add_values(std::to_string(i));
    rendered += (i == 0 ? "" : ", ") + std::to_string(i);
  }
  rendered += "]";
  EXPECT_THAT(
      Validate(r),
      IsValidationError(
          One("Value '" + rendered +
              "' at "
              "'hyperParameterTuningJobConfig.parameterRanges.categoricalParameterRanges.1.member."
              "values' failed to satisfy constraint: Member must have length less than or equal to "
              "30")));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksRangeBoundLengths) {
  auto r = Tuning();
  const std::string long_bound(257, '1');
  Ranges(&r)->mutable_continuous_parameter_ranges(0)->set_max_value(long_bound);
  EXPECT_THAT(Validate(r),
              IsValidationError(
                  One("Value '" + long_bound +
                      "' at "
                      "'hyperParameterTuningJobConfig.parameterRanges.continuousParameterRanges.1."
                      "member.maxValue' failed to satisfy constraint: Member must have length less "
                      "than or equal to 256")));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksStaticHyperParameterValues) {
  auto r = Tuning();
  const std::string long_value(2501, 'x');
  (*Definition(&r)->mutable_static_hyper_parameters())["blob"] = long_value;
  EXPECT_THAT(Validate(r),
              IsValidationError(
                  One("Value '{blob=" + long_value +
                      ", epochs=10}' at 'trainingJobDefinition.staticHyperParameters' failed to "
                      "satisfy constraint: Map value must satisfy constraint: [Member must have "
                      "length less than or equal to 2500, Member must have length greater than or "
                      "equal to 0, Member must satisfy regular expression pattern: .*]")));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksStaticHyperParameterCount) {
  auto r = Tuning();
  auto* statics = Definition(&r)->mutable_static_hyper_parameters();
  statics->clear();
  for (int i = 0; i < 101; ++i) (*statics)["h" + std::to_string(1000 + i)] = "1";
  const absl::Status status = Validate(r);
  EXPECT_THAT(
      status,
      StatusIs(absl::StatusCode::kInvalidArgument,
               ::testing::StartsWith("1 validation error detected: Value '{h1000=1, h1001=1, ")));
  EXPECT_THAT(std::string(status.message()),
              ::testing::EndsWith(", h1100=1}' at 'trainingJobDefinition.staticHyperParameters' "
                                  "failed to satisfy constraint: Member must have length less "
                                  "than or equal to 100"));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksMetricDefinitionMembers) {
  auto r = Tuning();
  auto* metric = Definition(&r)->mutable_algorithm_specification()->add_metric_definitions();
  metric->set_name(std::string(256, 'n'));
  metric->set_regex(std::string(501, 'r'));
  EXPECT_THAT(
      Validate(r),
      IsValidationError(
          "2 validation errors detected: Value '" + std::string(256, 'n') +
          "' at 'trainingJobDefinition.algorithmSpecification.metricDefinitions.2.member.name' "
          "failed to satisfy constraint: Member must have length less than or equal to 255; "
          "Value '" +
          std::string(501, 'r') +
          "' at 'trainingJobDefinition.algorithmSpecification.metricDefinitions.2.member.regex' "
          "failed to satisfy constraint: Member must have length less than or equal to 500"));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksMetricDefinitionCount) {
  auto r = Tuning();
  auto* spec = Definition(&r)->mutable_algorithm_specification();
  for (int i = 0; i < 40; ++i) {
    auto* metric = spec->add_metric_definitions();
    metric->set_name("m");
    metric->set_regex("m=(.*)");
  }
  const absl::Status status = Validate(r);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument,
                               ::testing::EndsWith(
                                   "' at 'trainingJobDefinition.algorithmSpecification."
                                   "metricDefinitions' failed to satisfy constraint: Member must "
                                   "have length less than or equal to 40")));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksTrainingImageLength) {
  auto r = Tuning();
  const std::string image(256, 'i');
  Definition(&r)->mutable_algorithm_specification()->set_training_image(image);
  EXPECT_THAT(
      Validate(r),
      IsValidationError(One("Value '" + image +
                            "' at 'trainingJobDefinition.algorithmSpecification.trainingImage' "
                            "failed to satisfy constraint: Member must have length less than "
                            "or equal to 255")));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksRoleArnPattern) {
  auto r = Tuning();
  Definition(&r)->set_role_arn("arn:aws:iam::1234:role/Short");
  EXPECT_THAT(Validate(r),
              IsValidationError(One(
                  "Value 'arn:aws:iam::1234:role/Short' at 'trainingJobDefinition.roleArn' failed "
                  "to satisfy constraint: Member must satisfy regular expression pattern: "
                  "^arn:aws[a-z\\-]*:iam::\\d{12}:role/?[a-zA-Z_0-9+=,.@\\-_/]+$")));
  Definition(&r)->set_role_arn("arn:aws-cn:iam::123456789012:role/path/Role+x");
  EXPECT_THAT(Validate(r), IsOk());
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksS3OutputPath) {
  auto r = Tuning();
  Definition(&r)->mutable_output_data_config()->set_s3_output_path("/tmp/out");
  EXPECT_THAT(Validate(r),
              IsValidationError(One(
                  "Value '/tmp/out' at 'trainingJobDefinition.outputDataConfig.s3OutputPath' "
                  "failed to satisfy constraint: Member must satisfy regular expression pattern: "
                  "^(https|s3)://([^/]+)/?(.*)$")));
  Definition(&r)->mutable_output_data_config()->clear_s3_output_path();
  EXPECT_THAT(Validate(r),
              IsValidationError(One(
                  "Value null at 'trainingJobDefinition.outputDataConfig.s3OutputPath' failed to "
                  "satisfy constraint: Member must not be null")));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksResourceConfig) {
  auto r = Tuning();
  auto* resources = Definition(&r)->mutable_resource_config();
  resources->set_instance_type("m5.large");
  resources->set_instance_count(-1);
  resources->set_volume_size_in_gb(-1);
  EXPECT_THAT(
      Validate(r),
      IsValidationError(
          "3 validation errors detected: Value 'm5.large' at "
          "'trainingJobDefinition.resourceConfig.instanceType' failed to satisfy constraint: "
          "Member must satisfy enum value set: [" +
          absl::StrJoin(TrainingInstanceTypes(), ", ") +
          "]; Value "
          "'-1' at 'trainingJobDefinition.resourceConfig.instanceCount' failed to satisfy "
          "constraint: Member must have value greater than or equal to 0; Value '-1' at "
          "'trainingJobDefinition.resourceConfig.volumeSizeInGB' failed to satisfy constraint: "
          "Member must have value greater than or equal to 0"));
  resources->set_instance_type("ml.p4de.24xlarge");
  resources->set_instance_count(0);
  resources->set_volume_size_in_gb(0);
  EXPECT_THAT(Validate(r), IsOk());
}

TEST(ValidateCreateHyperParameterTuningJob, AnInstanceTypeOfTheRightFormThatDoesNotExistIsRefused) {
  auto r = Tuning();
  Definition(&r)->mutable_resource_config()->set_instance_type("ml.fake.xlarge");
  EXPECT_THAT(Validate(r),
              IsValidationError(One(
                  "Value 'ml.fake.xlarge' at 'trainingJobDefinition.resourceConfig.instanceType' "
                  "failed to satisfy constraint: Member must satisfy enum value set: [" +
                  absl::StrJoin(TrainingInstanceTypes(), ", ") + "]")));
  // botocore 1.43's list: the first and the newest families are there.
  EXPECT_EQ(TrainingInstanceTypes().front(), "ml.m4.xlarge");
  EXPECT_THAT(TrainingInstanceTypes(), ::testing::Contains("ml.p5.48xlarge"));
  EXPECT_EQ(TrainingInstanceTypes().size(), 145u);
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksStoppingCondition) {
  auto r = Tuning();
  Definition(&r)->mutable_stopping_condition()->set_max_runtime_in_seconds(0);
  EXPECT_THAT(Validate(r),
              IsValidationError(One(
                  "Value '0' at 'trainingJobDefinition.stoppingCondition.maxRuntimeInSeconds' "
                  "failed to satisfy constraint: Member must have value greater than or equal to "
                  "1")));
  Definition(&r)->clear_stopping_condition();
  EXPECT_THAT(Validate(r), IsValidationError(One(
                               "Value null at 'trainingJobDefinition.stoppingCondition' failed to "
                               "satisfy constraint: Member must not be null")));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksEnvironmentKeysAndSize) {
  auto r = Tuning();
  (*Definition(&r)->mutable_environment())["MY-VAR"] = "1";
  EXPECT_THAT(Validate(r),
              IsValidationError(
                  One("Value '{MY-VAR=1}' at 'trainingJobDefinition.environment' failed to satisfy "
                      "constraint: Map keys must satisfy constraint: [Member must have length less "
                      "than or equal to 512, Member must satisfy regular expression pattern: "
                      "[a-zA-Z_][a-zA-Z0-9_]*]")));
  auto* env = Definition(&r)->mutable_environment();
  env->clear();
  for (int i = 0; i < 49; ++i) (*env)["V" + std::to_string(10 + i)] = "1";
  const absl::Status status = Validate(r);
  EXPECT_THAT(std::string(status.message()),
              ::testing::EndsWith("' at 'trainingJobDefinition.environment' failed to satisfy "
                                  "constraint: Member must have length less than or equal to "
                                  "48"));
  // Re-fetch the map: a Map pointer held across a reflection read goes stale for reflection.
  Definition(&r)->mutable_environment()->erase("V10");
  EXPECT_THAT(Validate(r), IsOk());
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksEnvironmentValueLength) {
  auto r = Tuning();
  const std::string value(513, 'x');
  (*Definition(&r)->mutable_environment())["A"] = value;
  EXPECT_THAT(Validate(r),
              IsValidationError(One(
                  "Value '{A=" + value +
                  "}' at 'trainingJobDefinition.environment' failed to satisfy constraint: Map "
                  "value must satisfy constraint: [Member must have length less than or equal to "
                  "512, Member must satisfy regular expression pattern: [\\S\\s]*]")));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksInputDataConfigChannels) {
  auto r = Tuning();
  auto* channel = Definition(&r)->add_input_data_config();
  channel->set_channel_name("train data");
  auto* s3 = channel->mutable_data_source()->mutable_s3_data_source();
  s3->set_s3_data_type("Prefix");
  s3->set_s3_uri("bucket/train");
  s3->set_s3_data_distribution_type("Sharded");
  const std::string at = "' at 'trainingJobDefinition.inputDataConfig.1.member.";
  EXPECT_THAT(
      Validate(r),
      IsValidationError(
          "4 validation errors detected: Value 'train data" + at +
          "channelName' failed to satisfy constraint: Member must satisfy regular expression "
          "pattern: [A-Za-z0-9\\.\\-_]+; Value 'Prefix" +
          at +
          "dataSource.s3DataSource.s3DataType' failed to satisfy constraint: Member must "
          "satisfy enum value set: [S3Prefix, ManifestFile, AugmentedManifestFile]; Value "
          "'bucket/train" +
          at +
          "dataSource.s3DataSource.s3Uri' failed to satisfy constraint: Member must satisfy "
          "regular expression pattern: ^(https|s3)://([^/]+)/?(.*)$; Value 'Sharded" +
          at +
          "dataSource.s3DataSource.s3DataDistributionType' failed to satisfy constraint: Member "
          "must satisfy enum value set: [FullyReplicated, ShardedByS3Key]"));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksChannelCount) {
  auto r = Tuning();
  for (int i = 0; i < 21; ++i) {
    auto* channel = Definition(&r)->add_input_data_config();
    channel->set_channel_name("c" + std::to_string(i));
    auto* s3 = channel->mutable_data_source()->mutable_s3_data_source();
    s3->set_s3_data_type("S3Prefix");
    s3->set_s3_uri("s3://b/c");
  }
  EXPECT_THAT(std::string(Validate(r).message()),
              ::testing::EndsWith("' at 'trainingJobDefinition.inputDataConfig' failed to "
                                  "satisfy constraint: Member must have length less than or "
                                  "equal to 20"));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksRetryStrategyBounds) {
  auto r = Tuning();
  Definition(&r)->mutable_retry_strategy()->set_maximum_retry_attempts(31);
  EXPECT_THAT(Validate(r),
              IsValidationError(
                  One("Value '31' at 'trainingJobDefinition.retryStrategy.maximumRetryAttempts' "
                      "failed to satisfy constraint: Member must have value less than or equal to "
                      "30")));
  Definition(&r)->mutable_retry_strategy()->set_maximum_retry_attempts(0);
  EXPECT_THAT(Validate(r),
              IsValidationError(One(
                  "Value '0' at 'trainingJobDefinition.retryStrategy.maximumRetryAttempts' "
                  "failed to satisfy constraint: Member must have value greater than or equal to "
                  "1")));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksTags) {
  auto r = Tuning();
  auto* tag = r.add_tags();
  tag->set_key("");
  tag->set_value(std::string(257, 'v'));
  EXPECT_THAT(Validate(r),
              IsValidationError(
                  "2 validation errors detected: Value '' at 'tags.1.member.key' failed to "
                  "satisfy constraint: Member must have length greater than or equal to 1; Value "
                  "'" +
                  std::string(257, 'v') +
                  "' at 'tags.1.member.value' failed to satisfy constraint: Member must have "
                  "length less than or equal to 256"));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksRandomSeedAndCompletionCriteria) {
  auto r = Tuning();
  Config(&r)->set_random_seed(-1);
  auto* criteria = Config(&r)->mutable_tuning_job_completion_criteria();
  criteria->mutable_best_objective_not_improving()->set_max_number_of_training_jobs_not_improving(
      2);
  criteria->mutable_convergence_detected()->set_complete_on_convergence("On");
  EXPECT_THAT(
      Validate(r),
      IsValidationError(
          "3 validation errors detected: Value '2' at "
          "'hyperParameterTuningJobConfig.tuningJobCompletionCriteria.bestObjectiveNotImproving."
          "maxNumberOfTrainingJobsNotImproving' failed to satisfy constraint: Member must have "
          "value greater than or equal to 3; Value 'On' at "
          "'hyperParameterTuningJobConfig.tuningJobCompletionCriteria.convergenceDetected."
          "completeOnConvergence' failed to satisfy constraint: Member must satisfy enum value "
          "set: [Disabled, Enabled]; Value '-1' at 'hyperParameterTuningJobConfig.randomSeed' "
          "failed to satisfy constraint: Member must have value greater than or equal to 0"));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksHyperbandResourceMinimums) {
  auto r = Tuning();
  Config(&r)->set_strategy("Hyperband");
  auto* hyperband = Config(&r)->mutable_strategy_config()->mutable_hyperband_strategy_config();
  hyperband->set_min_resource(0);
  hyperband->set_max_resource(0);
  EXPECT_THAT(
      Validate(r),
      IsValidationError(
          "2 validation errors detected: Value '0' at "
          "'hyperParameterTuningJobConfig.strategyConfig.hyperbandStrategyConfig.minResource' "
          "failed to satisfy constraint: Member must have value greater than or equal to 1; "
          "Value '0' at "
          "'hyperParameterTuningJobConfig.strategyConfig.hyperbandStrategyConfig.maxResource' "
          "failed to satisfy constraint: Member must have value greater than or equal to 1"));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksWarmStartConfig) {
  auto r = Tuning();
  auto* warm = r.mutable_warm_start_config();
  for (int i = 0; i < 6; ++i) {
    warm->add_parent_hyper_parameter_tuning_jobs()->set_hyper_parameter_tuning_job_name(
        "p" + std::to_string(i));
  }
  warm->set_warm_start_type("Identical");
  EXPECT_THAT(
      Validate(r),
      IsValidationError(
          "2 validation errors detected: Value '[{HyperParameterTuningJobName: p0}, "
          "{HyperParameterTuningJobName: p1}, {HyperParameterTuningJobName: p2}, "
          "{HyperParameterTuningJobName: p3}, {HyperParameterTuningJobName: p4}, "
          "{HyperParameterTuningJobName: p5}]' at "
          "'warmStartConfig.parentHyperParameterTuningJobs' failed to satisfy constraint: Member "
          "must have length less than or equal to 5; Value 'Identical' at "
          "'warmStartConfig.warmStartType' failed to satisfy constraint: Member must satisfy "
          "enum value set: [IdenticalDataAndAlgorithm, TransferLearning]"));
  warm->clear_parent_hyper_parameter_tuning_jobs();
  warm->clear_warm_start_type();
  EXPECT_THAT(Validate(r),
              IsValidationError(
                  "2 validation errors detected: Value null at "
                  "'warmStartConfig.parentHyperParameterTuningJobs' failed to satisfy constraint: "
                  "Member must not be null; Value null at 'warmStartConfig.warmStartType' failed "
                  "to satisfy constraint: Member must not be null"));
}

TEST(ValidateCreateHyperParameterTuningJob, ChecksEveryMultiAlgorithmDefinition) {
  auto r = Tuning();
  v1::HyperParameterTrainingJobDefinition definition = r.training_job_definition();
  r.clear_training_job_definition();
  definition.clear_role_arn();
  for (int i = 0; i < 11; ++i) *r.add_training_job_definitions() = definition;
  const std::string message(Validate(r).message());
  EXPECT_THAT(message, ::testing::StartsWith("12 validation errors detected: Value '["));
  EXPECT_THAT(message, ::testing::HasSubstr(
                           "' at 'trainingJobDefinitions' failed to satisfy constraint: Member "
                           "must have length less than or equal to 10; Value null at "
                           "'trainingJobDefinitions.1.member.roleArn' failed to satisfy "
                           "constraint: Member must not be null; "));
  EXPECT_THAT(message, ::testing::EndsWith(
                           "Value null at 'trainingJobDefinitions.11.member.roleArn' failed to "
                           "satisfy constraint: Member must not be null"));
}

// ---------------- stage 2: AMT rules ----------------

TEST(ValidateCreateHyperParameterTuningJob, RunsAmtRulesOnlyAfterMemberConstraintsPass) {
  auto r = Tuning();
  r.set_hyper_parameter_tuning_job_name("bad_name");
  Config(&r)->clear_hyper_parameter_tuning_job_objective();  // a stage-2 failure
  EXPECT_THAT(Validate(r),
              IsValidationError(One("Value 'bad_name' at 'hyperParameterTuningJobName' failed to "
                                    "satisfy constraint: Member must satisfy regular expression "
                                    "pattern: ^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,31}")));
}

TEST(ValidateCreateHyperParameterTuningJob, RejectsAutoParametersWithoutAutotune) {
  auto r = Tuning();
  auto* auto_parameter = Ranges(&r)->add_auto_parameters();
  auto_parameter->set_name("momentum");
  auto_parameter->set_value_hint("0.9");
  EXPECT_THAT(Validate(r), IsValidationError("AutoParameters are only supported with Autotune: add "
                                             "\"Autotune\": {\"Mode\": \"Enabled\"} to the "
                                             "request, or give the hyperparameters' ranges."));
  r.mutable_autotune()->set_mode("Enabled");
  EXPECT_THAT(Validate(r), IsOk());
}

TEST(ValidateCreateHyperParameterTuningJob, RejectsBothDefinitionForms) {
  auto r = Tuning();
  *r.add_training_job_definitions() = r.training_job_definition();
  EXPECT_THAT(Validate(r), IsValidationError("Provide either TrainingJobDefinition or "
                                             "TrainingJobDefinitions, not both."));
}

TEST(ValidateCreateHyperParameterTuningJob, RejectsMissingDefinition) {
  auto r = Tuning();
  r.clear_training_job_definition();
  EXPECT_THAT(Validate(r),
              IsValidationError("Provide either TrainingJobDefinition or TrainingJobDefinitions."));
}

// Appendix A as a multi-algorithm request: definitions "algo-a" and "algo-b", each with the
// objective and ranges that Appendix A has in HyperParameterTuningJobConfig.
v1::CreateHyperParameterTuningJobRequest MultiAlgorithm() {
  auto r = Tuning();
  v1::HyperParameterTrainingJobDefinition definition = r.training_job_definition();
  *definition.mutable_tuning_objective() = Config(&r)->hyper_parameter_tuning_job_objective();
  *definition.mutable_hyper_parameter_ranges() = Config(&r)->parameter_ranges();
  r.clear_training_job_definition();
  Config(&r)->clear_hyper_parameter_tuning_job_objective();
  Config(&r)->clear_parameter_ranges();
  for (const char* name : {"algo-a", "algo-b"}) {
    definition.set_definition_name(name);
    *r.add_training_job_definitions() = definition;
  }
  return r;
}

TEST(ValidateCreateHyperParameterTuningJob, AcceptsMultiAlgorithmTuning) {
  EXPECT_THAT(Validate(MultiAlgorithm()), IsOk());
}

TEST(ValidateCreateHyperParameterTuningJob, MultiAlgorithmObjectiveAndRangesAreInEachDefinition) {
  auto r = MultiAlgorithm();
  *Config(&r)->mutable_hyper_parameter_tuning_job_objective() =
      r.training_job_definitions(0).tuning_objective();
  constexpr char kInsideEachDefinition[] =
      "With TrainingJobDefinitions, give each definition its TuningObjective and "
      "HyperParameterRanges; HyperParameterTuningJobConfig must not contain "
      "HyperParameterTuningJobObjective or ParameterRanges.";
  EXPECT_THAT(Validate(r), IsValidationError(kInsideEachDefinition));
  r = MultiAlgorithm();
  *Config(&r)->mutable_parameter_ranges() = r.training_job_definitions(0).hyper_parameter_ranges();
  EXPECT_THAT(Validate(r), IsValidationError(kInsideEachDefinition));
  r = MultiAlgorithm();
  r.mutable_training_job_definitions(1)->clear_tuning_objective();
  EXPECT_THAT(Validate(r),
              IsValidationError("TrainingJobDefinitions item 'algo-b' needs a TuningObjective."));
}

TEST(ValidateCreateHyperParameterTuningJob, MultiAlgorithmRefusesEarlyStoppingWarmStartHyperband) {
  auto r = MultiAlgorithm();
  Config(&r)->set_training_job_early_stopping_type("Auto");
  EXPECT_THAT(Validate(r),
              IsValidationError("TrainingJobEarlyStoppingType must be Off with "
                                "TrainingJobDefinitions: early stopping is available only when "
                                "tuning a single algorithm (TrainingJobDefinition)."));
  r = MultiAlgorithm();
  auto* warm = r.mutable_warm_start_config();
  warm->add_parent_hyper_parameter_tuning_jobs()->set_hyper_parameter_tuning_job_name("parent");
  warm->set_warm_start_type("TransferLearning");
  EXPECT_THAT(Validate(r),
              IsValidationError("WarmStartConfig is not supported with TrainingJobDefinitions: "
                                "warm start is available only when tuning a single algorithm "
                                "(TrainingJobDefinition)."));
  r = MultiAlgorithm();
  Config(&r)->set_strategy("Hyperband");
  EXPECT_THAT(Validate(r),
              IsValidationError("The Hyperband strategy needs a single TrainingJobDefinition: "
                                "Hyperband stops training jobs early, and early stopping is "
                                "available only when tuning a single algorithm."));
}

TEST(ValidateCreateHyperParameterTuningJob, MultiAlgorithmDefinitionsAreNamedUniquely) {
  auto r = MultiAlgorithm();
  r.mutable_training_job_definitions(1)->clear_definition_name();
  EXPECT_THAT(Validate(r),
              IsValidationError("Every item of TrainingJobDefinitions needs a DefinitionName when "
                                "the tuning job has TrainingJobDefinitions."));
  r = MultiAlgorithm();
  r.mutable_training_job_definitions(1)->set_definition_name("algo-a");
  EXPECT_THAT(Validate(r), IsValidationError("DefinitionName 'algo-a' is used by more than one "
                                             "TrainingJobDefinitions item; definition names must "
                                             "be unique."));
  r = MultiAlgorithm();
  r.mutable_training_job_definitions(1)->set_definition_name("algo_b");
  EXPECT_THAT(std::string(Validate(r).message()),
              ::testing::HasSubstr("Value 'algo_b' at 'trainingJobDefinitions.2.member."
                                   "definitionName' failed to satisfy constraint: Member must "
                                   "satisfy regular expression pattern"));
}

TEST(ValidateCreateHyperParameterTuningJob, MultiAlgorithmObjectivesShareOneDirection) {
  auto r = MultiAlgorithm();
  r.mutable_training_job_definitions(1)->mutable_tuning_objective()->set_type("Maximize");
  EXPECT_THAT(Validate(r), IsValidationError("Every TuningObjective of TrainingJobDefinitions must "
                                             "have the same Type: 'algo-a' has Minimize, 'algo-b' "
                                             "has Maximize."));
  // Different metric names are fine: each algorithm reports its own.
  r = MultiAlgorithm();
  auto* b = r.mutable_training_job_definitions(1);
  b->mutable_tuning_objective()->set_metric_name("rmse");
  b->mutable_algorithm_specification()->mutable_metric_definitions(0)->set_name("rmse");
  EXPECT_THAT(Validate(r), IsOk());
}

TEST(ValidateCreateHyperParameterTuningJob, MultiAlgorithmChecksEachDefinitionsOwnRules) {
  auto r = MultiAlgorithm();
  // Its objective must be one of its own metrics.
  r.mutable_training_job_definitions(1)->mutable_tuning_objective()->set_metric_name("rmse");
  EXPECT_THAT(Validate(r), IsValidationError("A metric is required for this hyperparameter tuning "
                                             "job objective. Provide a metric in the metric "
                                             "definitions."));
  r = MultiAlgorithm();
  r.mutable_training_job_definitions(1)->clear_resource_config();
  EXPECT_THAT(Validate(r), IsValidationError("Provide either ResourceConfig or "
                                             "HyperParameterTuningResourceConfig in "
                                             "TrainingJobDefinitions item 'algo-b'."));
  r = MultiAlgorithm();
  (*r.mutable_training_job_definitions(1)->mutable_static_hyper_parameters())["lr"] = "0.1";
  EXPECT_THAT(Validate(r), IsValidationError("Hyperparameter 'lr' cannot be both a static "
                                             "hyperparameter and a tunable parameter range."));
}

TEST(ValidateCreateHyperParameterTuningJob, MultiAlgorithmEnvironmentsShareFortyEightEntries) {
  auto r = MultiAlgorithm();
  for (int i = 0; i < 25; ++i) {
    (*r.mutable_training_job_definitions(0)->mutable_environment())["A" + std::to_string(i)] = "x";
    (*r.mutable_training_job_definitions(1)->mutable_environment())["B" + std::to_string(i)] = "x";
  }
  EXPECT_THAT(Validate(r), IsValidationError("The Environment maps of TrainingJobDefinitions have "
                                             "50 entries together; the limit is 48 for all "
                                             "definitions."));
  r.mutable_training_job_definitions(1)->mutable_environment()->erase("B0");
  r.mutable_training_job_definitions(1)->mutable_environment()->erase("B1");
  EXPECT_THAT(Validate(r), IsOk());
}

TEST(ValidateCreateHyperParameterTuningJob, MultiAlgorithmGridRunsEveryDefinitionsCombinations) {
  auto r = MultiAlgorithm();
  Config(&r)->set_strategy("Grid");
  Config(&r)->mutable_resource_limits()->clear_max_number_of_training_jobs();
  for (int d = 0; d < 2; ++d) {
    auto* ranges = r.mutable_training_job_definitions(d)->mutable_hyper_parameter_ranges();
    ranges->clear_continuous_parameter_ranges();
    auto* range = ranges->add_categorical_parameter_ranges();
    range->set_name("lr");
    for (int v = 0; v < 2 + d; ++v) range->add_values(std::to_string(v));
  }
  EXPECT_THAT(Validate(r), IsOk());
  Config(&r)->mutable_resource_limits()->set_max_number_of_training_jobs(3);
  EXPECT_THAT(Validate(r), IsValidationError("For the Grid strategy, MaxNumberOfTrainingJobs (3) "
                                             "must equal the number of hyperparameter "
                                             "combinations (5) or be omitted."));
}

TEST(ValidateCreateHyperParameterTuningJob, RequiresObjectiveForSingleDefinition) {
  auto r = Tuning();
  Config(&r)->clear_hyper_parameter_tuning_job_objective();
  EXPECT_THAT(Validate(r),
              IsValidationError("HyperParameterTuningJobObjective is required in "
                                "HyperParameterTuningJobConfig when TrainingJobDefinition is "
                                "provided."));
}

TEST(ValidateCreateHyperParameterTuningJob, RequiresObjectiveMetricInMetricDefinitions) {
  auto r = Tuning();
  Config(&r)->mutable_hyper_parameter_tuning_job_objective()->set_metric_name("val:acc");
  EXPECT_THAT(Validate(r),
              IsValidationError("A metric is required for this hyperparameter tuning job "
                                "objective. Provide a metric in the metric definitions."));
  Definition(&r)->mutable_algorithm_specification()->clear_metric_definitions();
  EXPECT_THAT(Validate(r),
              IsValidationError("A metric is required for this hyperparameter tuning job "
                                "objective. Provide a metric in the metric definitions."));
}

TEST(ValidateCreateHyperParameterTuningJob, RejectsMetricRegexThatDoesNotCompile) {
  auto r = Tuning();
  Definition(&r)->mutable_algorithm_specification()->mutable_metric_definitions(0)->set_regex(
      "val_loss=([0-9.");
  EXPECT_THAT(Validate(r), IsValidationError("Invalid regular expression for metric 'val:loss' in "
                                             "MetricDefinitions: missing ]: [0-9."));
}

TEST(ValidateCreateHyperParameterTuningJob, RequiresTrainingImageOrAlgorithmName) {
  auto r = Tuning();
  Definition(&r)->mutable_algorithm_specification()->clear_training_image();
  EXPECT_THAT(Validate(r), IsValidationError("AlgorithmSpecification must contain a TrainingImage "
                                             "or an AlgorithmName."));
}

TEST(ValidateCreateHyperParameterTuningJob, AppliesTighterMetricDefinitionLimit) {
  auto r = Tuning();
  Limits limits;
  limits.max_metric_definitions = 0;
  EXPECT_THAT(ValidateCreateHyperParameterTuningJob(r, limits),
              IsValidationError("The number of MetricDefinitions (1) exceeds the limit of 0."));
}

TEST(ValidateCreateHyperParameterTuningJob, RequiresExactlyOneResourceConfig) {
  auto r = Tuning();
  Definition(&r)->clear_resource_config();
  EXPECT_THAT(Validate(r), IsValidationError("Provide either ResourceConfig or "
                                             "HyperParameterTuningResourceConfig in "
                                             "TrainingJobDefinition."));
  auto* tuning_resources = Definition(&r)->mutable_hyper_parameter_tuning_resource_config();
  tuning_resources->set_instance_type("ml.m5.large");
  tuning_resources->set_instance_count(1);
  tuning_resources->set_volume_size_in_gb(5);
  EXPECT_THAT(Validate(r), IsOk());
  Definition(&r)->mutable_resource_config()->set_volume_size_in_gb(5);
  EXPECT_THAT(Validate(r), IsValidationError("Provide either ResourceConfig or "
                                             "HyperParameterTuningResourceConfig in "
                                             "TrainingJobDefinition, not both."));
}

TEST(ValidateCreateHyperParameterTuningJob, RejectsDuplicateChannelNames) {
  auto r = Tuning();
  for (int i = 0; i < 2; ++i) {
    auto* channel = Definition(&r)->add_input_data_config();
    channel->set_channel_name("train");
    auto* s3 = channel->mutable_data_source()->mutable_s3_data_source();
    s3->set_s3_data_type("S3Prefix");
    s3->set_s3_uri("s3://b/train");
  }
  EXPECT_THAT(Validate(r), IsValidationError("Channel names must be unique: 'train' appears more "
                                             "than once in InputDataConfig."));
}

TEST(ValidateCreateHyperParameterTuningJob, RejectsChannelWithoutDataSourceContent) {
  auto r = Tuning();
  auto* channel = Definition(&r)->add_input_data_config();
  channel->set_channel_name("train");
  channel->mutable_data_source();
  EXPECT_THAT(Validate(r), IsValidationError("The DataSource of channel 'train' must contain an "
                                             "S3DataSource or a FileSystemDataSource."));
}

TEST(ValidateCreateHyperParameterTuningJob, LimitsTotalNumberOfRanges) {
  auto r = Tuning();
  for (int i = 0; i < 30; ++i) {
    auto* range = Ranges(&r)->add_categorical_parameter_ranges();
    range->set_name("c" + std::to_string(i));
    range->add_values("a");
  }
  EXPECT_THAT(Validate(r), IsValidationError("The number of hyperparameter ranges (31) exceeds "
                                             "the limit of 30 tunable hyperparameters."));
}

TEST(ValidateCreateHyperParameterTuningJob, AppliesTighterCategoricalValuesLimit) {
  auto r = Tuning();
  auto* range = Ranges(&r)->add_categorical_parameter_ranges();
  range->set_name("opt");
  range->add_values("adam");
  range->add_values("sgd");
  Limits limits;
  limits.max_categorical_values = 1;
  EXPECT_THAT(ValidateCreateHyperParameterTuningJob(r, limits),
              IsValidationError("CategoricalParameterRange 'opt' has 2 values; the limit is 1."));
}

TEST(ValidateCreateHyperParameterTuningJob, RejectsDuplicateCategoricalValues) {
  auto r = Tuning();
  auto* range = Ranges(&r)->add_categorical_parameter_ranges();
  range->set_name("opt");
  range->add_values("adam");
  range->add_values("adam");
  EXPECT_THAT(Validate(r), IsValidationError("CategoricalParameterRange 'opt' lists the value "
                                             "'adam' more than once."));
}

TEST(ValidateCreateHyperParameterTuningJob, RejectsDuplicateRangeNamesAcrossRangeTypes) {
  auto r = Tuning();
  auto* range = Ranges(&r)->add_categorical_parameter_ranges();
  range->set_name("lr");
  range->add_values("0.1");
  EXPECT_THAT(Validate(r), IsValidationError("Hyperparameter 'lr' is defined in more than one "
                                             "parameter range."));
}

TEST(ValidateCreateHyperParameterTuningJob, RejectsRangeThatIsAlsoStatic) {
  auto r = Tuning();
  (*Definition(&r)->mutable_static_hyper_parameters())["lr"] = "0.1";
  EXPECT_THAT(Validate(r), IsValidationError("Hyperparameter 'lr' cannot be both a static "
                                             "hyperparameter and a tunable parameter range."));
}

TEST(ValidateCreateHyperParameterTuningJob, CountsTuningObjectiveMetricTowardHundred) {
  auto r = Tuning();
  auto* statics = Definition(&r)->mutable_static_hyper_parameters();
  for (int i = 0; i < 98; ++i) (*statics)["s" + std::to_string(i)] = "1";  // 99 with epochs
  EXPECT_THAT(Validate(r),
              IsValidationError("The number of hyperparameters (99 static + 1 tunable + "
                                "_tuning_objective_metric = 101) exceeds the limit of 100."));
  Definition(&r)->mutable_static_hyper_parameters()->erase("s0");
  EXPECT_THAT(Validate(r), IsOk());
  (*Definition(&r)->mutable_static_hyper_parameters())["_tuning_objective_metric"] =
      "val:loss";  // counted once, not twice
  EXPECT_THAT(Validate(r), IsOk());
}

TEST(ValidateCreateHyperParameterTuningJob, RejectsNonIntegerIntegerBounds) {
  auto r = Tuning();
  auto* range = Ranges(&r)->add_integer_parameter_ranges();
  range->set_name("batch");
  range->set_min_value("1.5");
  range->set_max_value("8");
  EXPECT_THAT(Validate(r), IsValidationError("MinValue '1.5' of IntegerParameterRange 'batch' is "
                                             "not an integer."));
  range->set_min_value("+1");
  range->set_max_value("eight");
  EXPECT_THAT(Validate(r), IsValidationError("MaxValue 'eight' of IntegerParameterRange 'batch' "
                                             "is not an integer."));
}

TEST(ValidateCreateHyperParameterTuningJob, RejectsNonNumericContinuousBounds) {
  auto r = Tuning();
  auto* range = Ranges(&r)->mutable_continuous_parameter_ranges(0);
  range->set_min_value("small");
  EXPECT_THAT(Validate(r), IsValidationError("MinValue 'small' of ContinuousParameterRange 'lr' "
                                             "is not a number."));
  range->set_min_value("1e-4");
  range->set_max_value("inf");
  EXPECT_THAT(Validate(r), IsValidationError("MaxValue 'inf' of ContinuousParameterRange 'lr' is "
                                             "not a number."));
}

TEST(ValidateCreateHyperParameterTuningJob, AllowsEqualIntegerBoundsButNotReversedOnes) {
  auto r = Tuning();
  auto* range = Ranges(&r)->add_integer_parameter_ranges();
  range->set_name("batch");
  range->set_min_value("8");
  range->set_max_value("8");
  EXPECT_THAT(Validate(r), IsOk());
  range->set_min_value("9");
  EXPECT_THAT(Validate(r), IsValidationError("MinValue (9) of IntegerParameterRange 'batch' must "
                                             "be less than or equal to MaxValue (8)."));
}

TEST(ValidateCreateHyperParameterTuningJob, RequiresContinuousMinBelowMax) {
  auto r = Tuning();
  Ranges(&r)->mutable_continuous_parameter_ranges(0)->set_min_value("0.1");
  EXPECT_THAT(Validate(r), IsValidationError("MinValue (0.1) of ContinuousParameterRange 'lr' "
                                             "must be less than MaxValue (0.1)."));
}

TEST(ValidateCreateHyperParameterTuningJob, RequiresPositiveMinimumForLogarithmicScaling) {
  auto r = Tuning();
  Ranges(&r)->mutable_continuous_parameter_ranges(0)->set_min_value("0");
  EXPECT_THAT(Validate(r), IsValidationError("ContinuousParameterRange 'lr' uses Logarithmic "
                                             "scaling, which needs MinValue greater than 0."));
  Ranges(&r)->clear_continuous_parameter_ranges();
  auto* range = Ranges(&r)->add_integer_parameter_ranges();
  range->set_name("batch");
  range->set_min_value("0");
  range->set_max_value("64");
  range->set_scaling_type("Logarithmic");
  EXPECT_THAT(Validate(r), IsValidationError("IntegerParameterRange 'batch' uses Logarithmic "
                                             "scaling, which needs MinValue greater than 0."));
}

TEST(ValidateCreateHyperParameterTuningJob, RejectsReverseLogarithmicIntegerRange) {
  auto r = Tuning();
  auto* range = Ranges(&r)->add_integer_parameter_ranges();
  range->set_name("batch");
  range->set_min_value("1");
  range->set_max_value("64");
  range->set_scaling_type("ReverseLogarithmic");
  EXPECT_THAT(Validate(r),
              IsValidationError("IntegerParameterRange 'batch' cannot use ReverseLogarithmic "
                                "scaling; it is supported only for ContinuousParameterRanges."));
}

TEST(ValidateCreateHyperParameterTuningJob, RequiresUnitIntervalForReverseLogarithmicScaling) {
  auto r = Tuning();
  auto* range = Ranges(&r)->mutable_continuous_parameter_ranges(0);
  range->set_scaling_type("ReverseLogarithmic");
  range->set_min_value("0.9");
  range->set_max_value("1");
  EXPECT_THAT(Validate(r),
              IsValidationError("ContinuousParameterRange 'lr' uses ReverseLogarithmic scaling, "
                                "which needs 0 <= MinValue and MaxValue < 1."));
  range->set_min_value("-0.1");
  range->set_max_value("0.5");
  EXPECT_THAT(Validate(r),
              IsValidationError("ContinuousParameterRange 'lr' uses ReverseLogarithmic scaling, "
                                "which needs 0 <= MinValue and MaxValue < 1."));
  range->set_min_value("0");
  range->set_max_value("0.999");
  EXPECT_THAT(Validate(r), IsOk());
}

v1::CreateHyperParameterTuningJobRequest GridRequest() {
  auto r = Tuning();
  Config(&r)->set_strategy("Grid");
  Config(&r)->mutable_resource_limits()->clear_max_number_of_training_jobs();
  Ranges(&r)->clear_continuous_parameter_ranges();
  auto* optimizer = Ranges(&r)->add_categorical_parameter_ranges();
  optimizer->set_name("optimizer");
  for (const char* v : {"adam", "sgd", "rmsprop"}) optimizer->add_values(v);
  auto* batch = Ranges(&r)->add_categorical_parameter_ranges();
  batch->set_name("batch");
  for (const char* v : {"32", "64"}) batch->add_values(v);
  return r;
}

TEST(ValidateCreateHyperParameterTuningJob, AcceptsGridWithoutMaxNumberOfTrainingJobs) {
  EXPECT_THAT(Validate(GridRequest()), IsOk());
}

TEST(ValidateCreateHyperParameterTuningJob, RejectsGridWithNonCategoricalRanges) {
  auto r = GridRequest();
  auto* range = Ranges(&r)->add_integer_parameter_ranges();
  range->set_name("depth");
  range->set_min_value("1");
  range->set_max_value("3");
  EXPECT_THAT(Validate(r),
              IsValidationError("The Grid strategy supports only CategoricalParameterRanges; "
                                "IntegerParameterRanges and ContinuousParameterRanges must be "
                                "empty."));
}

TEST(ValidateCreateHyperParameterTuningJob, RejectsGridWithoutCategoricalRanges) {
  auto r = GridRequest();
  Ranges(&r)->clear_categorical_parameter_ranges();
  EXPECT_THAT(Validate(r),
              IsValidationError("The Grid strategy needs at least one CategoricalParameterRange."));
}

TEST(ValidateCreateHyperParameterTuningJob, RequiresGridJobCountToEqualCombinations) {
  auto r = GridRequest();
  Config(&r)->mutable_resource_limits()->set_max_number_of_training_jobs(6);
  EXPECT_THAT(Validate(r), IsOk());
  Config(&r)->mutable_resource_limits()->set_max_number_of_training_jobs(10);
  EXPECT_THAT(Validate(r),
              IsValidationError("For the Grid strategy, MaxNumberOfTrainingJobs (10) must equal "
                                "the number of hyperparameter combinations (6) or be omitted."));
}

TEST(ValidateCreateHyperParameterTuningJob, LimitsGridCombinations) {
  auto r = GridRequest();
  auto* range = Ranges(&r)->add_categorical_parameter_ranges();
  range->set_name("seed");
  for (int i = 0; i < 30; ++i) range->add_values(std::to_string(i));
  auto* more = Ranges(&r)->add_categorical_parameter_ranges();
  more->set_name("more");
  for (const char* v : {"a", "b", "c", "d", "e"}) more->add_values(v);  // 6 * 30 * 5 = 900
  EXPECT_THAT(Validate(r),
              IsValidationError("The Grid strategy would run 900 training jobs (one per "
                                "hyperparameter combination), more than the limit of 750 training "
                                "jobs per tuning job."));
  Limits limits;
  limits.max_training_jobs_other = 900;
  EXPECT_THAT(ValidateCreateHyperParameterTuningJob(r, limits), IsOk());
}

TEST(ValidateCreateHyperParameterTuningJob, RequiresMaxNumberOfTrainingJobsOutsideGrid) {
  auto r = Tuning();
  Config(&r)->set_strategy("Bayesian");
  Config(&r)->mutable_resource_limits()->clear_max_number_of_training_jobs();
  EXPECT_THAT(Validate(r), IsValidationError("MaxNumberOfTrainingJobs is required in "
                                             "ResourceLimits for the Bayesian strategy."));
}

TEST(ValidateCreateHyperParameterTuningJob, LimitsTrainingJobsPerStrategy) {
  auto r = Tuning();
  Config(&r)->mutable_resource_limits()->set_max_number_of_training_jobs(10000);
  EXPECT_THAT(Validate(r), IsOk());  // Random may go to 10,000
  Config(&r)->mutable_resource_limits()->set_max_number_of_training_jobs(10001);
  EXPECT_THAT(Validate(r),
              IsValidationError("MaxNumberOfTrainingJobs (10001) exceeds the limit of 10000 "
                                "training jobs per tuning job for the Random strategy."));
  Config(&r)->set_strategy("Bayesian");
  Config(&r)->mutable_resource_limits()->set_max_number_of_training_jobs(751);
  EXPECT_THAT(Validate(r),
              IsValidationError("MaxNumberOfTrainingJobs (751) exceeds the limit of 750 training "
                                "jobs per tuning job for the Bayesian strategy."));
  Limits limits;
  limits.max_training_jobs_other = 800;
  EXPECT_THAT(ValidateCreateHyperParameterTuningJob(r, limits), IsOk());
}

TEST(ValidateCreateHyperParameterTuningJob, LimitsParallelTrainingJobs) {
  auto r = Tuning();
  Config(&r)->mutable_resource_limits()->set_max_parallel_training_jobs(101);
  EXPECT_THAT(Validate(r),
              IsValidationError("MaxParallelTrainingJobs (101) exceeds the limit of 100 concurrent "
                                "training jobs per tuning job."));
  Limits limits;
  limits.max_parallel_training_jobs = 10;
  Config(&r)->mutable_resource_limits()->set_max_parallel_training_jobs(11);
  EXPECT_THAT(ValidateCreateHyperParameterTuningJob(r, limits),
              IsValidationError("MaxParallelTrainingJobs (11) exceeds the limit of 10 concurrent "
                                "training jobs per tuning job."));
}

TEST(ValidateCreateHyperParameterTuningJob, RejectsStrategyConfigOutsideHyperband) {
  auto r = Tuning();
  Config(&r)->mutable_strategy_config()->mutable_hyperband_strategy_config()->set_max_resource(9);
  EXPECT_THAT(Validate(r),
              IsValidationError("StrategyConfig is only supported when Strategy is Hyperband."));
}

TEST(ValidateCreateHyperParameterTuningJob, AcceptsHyperbandWithInferredMaxResource) {
  auto r = Tuning();
  Config(&r)->set_strategy("Hyperband");
  EXPECT_THAT(Validate(r), IsOk());
}

TEST(ValidateCreateHyperParameterTuningJob, RejectsHyperbandWithAutoEarlyStopping) {
  auto r = Tuning();
  Config(&r)->set_strategy("Hyperband");
  Config(&r)->set_training_job_early_stopping_type("Auto");
  EXPECT_THAT(Validate(r),
              IsValidationError("TrainingJobEarlyStoppingType must be Off when Strategy is "
                                "Hyperband; Hyperband has its own early stopping."));
}

TEST(ValidateCreateHyperParameterTuningJob, RejectsHyperbandWithoutInferableMaxResource) {
  auto r = Tuning();
  Config(&r)->set_strategy("Hyperband");
  Definition(&r)->clear_static_hyper_parameters();
  EXPECT_THAT(Validate(r),
              IsValidationError("MaxResource parameter is not provided and could not be inferred "
                                "from provided static hyperparameters of TrainingJobDefinition."));
}

TEST(ValidateCreateHyperParameterTuningJob, LimitsHyperbandMaxResource) {
  auto r = Tuning();
  Config(&r)->set_strategy("Hyperband");
  (*Definition(&r)->mutable_static_hyper_parameters())["epochs"] = "20001";
  EXPECT_THAT(Validate(r),
              IsValidationError("MaxResource (20001) must be less than or equal to 20000."));
  auto* hyperband = Config(&r)->mutable_strategy_config()->mutable_hyperband_strategy_config();
  hyperband->set_max_resource(20000);
  EXPECT_THAT(Validate(r), IsOk());
}

TEST(ValidateCreateHyperParameterTuningJob, RequiresMinResourceAtMostMaxResource) {
  auto r = Tuning();
  Config(&r)->set_strategy("Hyperband");
  auto* hyperband = Config(&r)->mutable_strategy_config()->mutable_hyperband_strategy_config();
  hyperband->set_min_resource(11);  // MaxResource inferred from epochs=10
  EXPECT_THAT(Validate(r), IsValidationError(
                               "MinResource (11) must be less than or equal to MaxResource (10)."));
  hyperband->set_min_resource(10);
  EXPECT_THAT(Validate(r), IsOk());
}

TEST(ValidateCreateHyperParameterTuningJob, RejectsMaxWaitWithoutManagedSpot) {
  auto r = Tuning();
  Definition(&r)->mutable_stopping_condition()->set_max_wait_time_in_seconds(7200);
  EXPECT_THAT(Validate(r),
              IsValidationError("Invalid MaxWaitTimeInSeconds. It is only supported when "
                                "EnableManagedSpotTraining is set to true"));
}

TEST(ValidateCreateHyperParameterTuningJob, RequiresMaxWaitWithManagedSpot) {
  auto r = Tuning();
  Definition(&r)->set_enable_managed_spot_training(true);
  EXPECT_THAT(Validate(r), IsValidationError("Invalid MaxWaitTimeInSeconds. It is required when "
                                             "EnableManagedSpotTraining is set to true"));
}

TEST(ValidateCreateHyperParameterTuningJob, RequiresMaxWaitAtLeastMaxRuntime) {
  auto r = Tuning();
  Definition(&r)->set_enable_managed_spot_training(true);
  Definition(&r)->mutable_stopping_condition()->set_max_wait_time_in_seconds(3599);
  EXPECT_THAT(Validate(r),
              IsValidationError("Invalid MaxWaitTimeInSeconds. It must be greater than or equal to "
                                "MaxRuntimeInSeconds (3599 < 3600)"));
  Definition(&r)->mutable_stopping_condition()->set_max_wait_time_in_seconds(3600);
  EXPECT_THAT(Validate(r), IsOk());
}

TEST(ValidateCreateHyperParameterTuningJob, ComparesMaxWaitWithDefaultRuntimeOfOneDay) {
  auto r = Tuning();
  Definition(&r)->set_enable_managed_spot_training(true);
  Definition(&r)->mutable_stopping_condition()->clear_max_runtime_in_seconds();
  Definition(&r)->mutable_stopping_condition()->set_max_wait_time_in_seconds(86399);
  EXPECT_THAT(Validate(r),
              IsValidationError("Invalid MaxWaitTimeInSeconds. It must be greater than or equal to "
                                "MaxRuntimeInSeconds (86399 < 86400)"));
}

// ---------------- helpers ----------------

TEST(GridCombinations, MultipliesCategoricalSizes) {
  EXPECT_EQ(GridCombinations(GridRequest().hyper_parameter_tuning_job_config().parameter_ranges()),
            6);
}

TEST(GridCombinations, IsZeroWithoutCategoricalRanges) {
  EXPECT_EQ(GridCombinations(v1::ParameterRanges()), 0);
}

TEST(GridCombinations, SaturatesInsteadOfOverflowing) {
  v1::ParameterRanges ranges;
  for (int i = 0; i < 30; ++i) {
    auto* range = ranges.add_categorical_parameter_ranges();
    for (int j = 0; j < 30; ++j) range->add_values(std::to_string(j));
  }
  EXPECT_EQ(GridCombinations(ranges), std::numeric_limits<int64_t>::max());
}

TEST(HyperbandMaxResource, PrefersStrategyConfig) {
  auto r = Tuning();
  Config(&r)->mutable_strategy_config()->mutable_hyperband_strategy_config()->set_max_resource(81);
  const absl::StatusOr<int> max_resource = HyperbandMaxResource(r);
  ASSERT_THAT(max_resource, IsOk());
  EXPECT_EQ(*max_resource, 81);
}

TEST(HyperbandMaxResource, InfersFromFirstEpochKeyInSageMakerOrder) {
  auto r = Tuning();
  auto* statics = Definition(&r)->mutable_static_hyper_parameters();
  statics->clear();
  (*statics)["num_epochs"] = "5";
  (*statics)["n-epochs"] = "7";
  EXPECT_EQ(HyperbandMaxResource(r).value(), 7);
  (*statics)["numepochs"] = "\"12\"";  // JSON-encoded by the Python SDK
  EXPECT_EQ(HyperbandMaxResource(r).value(), 12);
}

TEST(HyperbandMaxResource, FailsWhenFirstEpochKeyIsNotAPositiveInteger) {
  auto r = Tuning();
  (*Definition(&r)->mutable_static_hyper_parameters())["epochs"] = "0";
  EXPECT_THAT(HyperbandMaxResource(r).status(),
              IsValidationError("MaxResource parameter is not provided and could not be inferred "
                                "from provided static hyperparameters of TrainingJobDefinition."));
}

// ---------------- CreateTrainingJob ----------------

TEST(ValidateCreateTrainingJob, AcceptsMinimalRequest) {
  EXPECT_THAT(ValidateCreateTrainingJob(Training()), IsOk());
}

std::string S3Refusal(const std::string& member, const std::string& uri,
                      const std::string& segment) {
  return member + " '" + uri + "' has a '" + segment +
         "' segment. amt-local keeps s3:// objects in folders under its S3 root (amtd --s3-root) "
         "and refuses paths that would leave their bucket.";
}

TEST(ValidateCreateTrainingJob, RefusesS3PathsThatWouldLeaveTheirBucket) {
  auto r = Training();
  r.mutable_output_data_config()->set_s3_output_path("s3://bucket/../../etc");
  EXPECT_THAT(ValidateCreateTrainingJob(r),
              IsValidationError("S3OutputPath 's3://bucket/../../etc' has a '..' segment. "
                                "amt-local keeps s3:// objects in folders under its S3 root (amtd "
                                "--s3-root) and refuses paths that would leave their bucket."));
  r = Training();
  ASSERT_GT(r.input_data_config_size(), 0);
  r.mutable_input_data_config(0)->mutable_data_source()->mutable_s3_data_source()->set_s3_uri(
      "s3://../x");
  EXPECT_THAT(ValidateCreateTrainingJob(r),
              IsValidationError(S3Refusal("S3Uri", "s3://../x", "..")));
  r = Training();
  r.mutable_checkpoint_config()->set_s3_uri("s3://b/ckpt/./x");
  EXPECT_THAT(ValidateCreateTrainingJob(r),
              IsValidationError(S3Refusal("CheckpointConfig.S3Uri", "s3://b/ckpt/./x", ".")));
  r = Training();
  r.mutable_output_data_config()->set_s3_output_path("s3://bucket/a..b/.hidden/out/");
  EXPECT_THAT(ValidateCreateTrainingJob(r), IsOk());  // dots inside a name are fine
}

TEST(ValidateCreateHyperParameterTuningJob, RefusesS3PathsThatWouldLeaveTheirBucket) {
  auto r = Tuning();
  Definition(&r)->mutable_output_data_config()->set_s3_output_path("s3://b/x/..");
  EXPECT_THAT(Validate(r), IsValidationError(S3Refusal("S3OutputPath", "s3://b/x/..", "..")));
}

TEST(ValidateCreateTrainingJob, ReportsEveryMissingRequiredMember) {
  EXPECT_THAT(
      ValidateCreateTrainingJob(v1::CreateTrainingJobRequest()),
      IsValidationError(
          "6 validation errors detected: Value null at 'trainingJobName' failed to satisfy "
          "constraint: Member must not be null; Value null at 'algorithmSpecification' failed to "
          "satisfy constraint: Member must not be null; Value null at 'roleArn' failed to "
          "satisfy constraint: Member must not be null; Value null at 'outputDataConfig' failed "
          "to satisfy constraint: Member must not be null; Value null at 'resourceConfig' failed "
          "to satisfy constraint: Member must not be null; Value null at 'stoppingCondition' "
          "failed to satisfy constraint: Member must not be null"));
}

TEST(ValidateCreateTrainingJob, ReportsUnderscoreInNameLikeSageMaker) {
  auto r = Training();
  const std::string name = "health_and_personal_care_inter_title-2018-09-06-05-57-49-470";
  r.set_training_job_name(name);
  EXPECT_THAT(ValidateCreateTrainingJob(r),
              IsValidationError(One("Value '" + name +
                                    "' at 'trainingJobName' failed to satisfy constraint: Member "
                                    "must satisfy regular expression pattern: "
                                    "^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}")));
}

TEST(ValidateCreateTrainingJob, AcceptsLongNameWithDashesWhenWithinLength) {
  auto r = Training();
  r.set_training_job_name("health-and-personal-care-inter-title-2018-09-06-05-57-49-470");
  EXPECT_THAT(ValidateCreateTrainingJob(r), IsOk());
  const std::string name = "health-and-personal-care-inter-title-2018-09-06-05-57-49-470-xyz";
  r.set_training_job_name(name);  // 64 characters, only the length fails
  EXPECT_THAT(ValidateCreateTrainingJob(r),
              IsValidationError(One("Value '" + name +
                                    "' at 'trainingJobName' failed to satisfy constraint: Member "
                                    "must have length less than or equal to 63")));
}

TEST(ValidateCreateTrainingJob, ChecksHyperParametersAndEnvironmentSizes) {
  auto r = Training();
  for (int i = 0; i < 101; ++i) {
    (*r.mutable_hyper_parameters())["h" + std::to_string(100 + i)] = "1";
  }
  for (int i = 0; i < 100; ++i) (*r.mutable_environment())["E" + std::to_string(100 + i)] = "1";
  const std::string message(ValidateCreateTrainingJob(r).message());
  EXPECT_THAT(message, ::testing::StartsWith("1 validation error detected: "));
  EXPECT_THAT(message, ::testing::EndsWith("' at 'hyperParameters' failed to satisfy constraint: "
                                           "Member must have length less than or equal to 100"));
  (*r.mutable_environment())["E999"] = "1";
  EXPECT_THAT(std::string(ValidateCreateTrainingJob(r).message()),
              ::testing::StartsWith("2 validation errors detected: "));
}

TEST(ValidateCreateTrainingJob, ChecksCheckpointConfig) {
  auto r = Training();
  r.mutable_checkpoint_config()->set_local_path("/opt/ml/checkpoints");
  EXPECT_THAT(ValidateCreateTrainingJob(r),
              IsValidationError(One("Value null at 'checkpointConfig.s3Uri' failed to satisfy "
                                    "constraint: Member must not be null")));
  r.mutable_checkpoint_config()->set_s3_uri("file:///tmp/ckpt");
  EXPECT_THAT(ValidateCreateTrainingJob(r),
              IsValidationError(One("Value 'file:///tmp/ckpt' at 'checkpointConfig.s3Uri' failed "
                                    "to satisfy constraint: Member must satisfy regular "
                                    "expression pattern: ^(https|s3)://([^/]+)/?(.*)$")));
  r.mutable_checkpoint_config()->set_s3_uri("s3://bucket/ckpt");
  EXPECT_THAT(ValidateCreateTrainingJob(r), IsOk());
}

TEST(ValidateCreateTrainingJob, RejectsMetricRegexThatDoesNotCompile) {
  auto r = Training();
  r.mutable_algorithm_specification()->mutable_metric_definitions(0)->set_regex("loss=(\\d+");
  EXPECT_THAT(ValidateCreateTrainingJob(r),
              IsValidationError("Invalid regular expression for metric 'val:loss' in "
                                "MetricDefinitions: missing ): loss=(\\d+"));
}

TEST(ValidateCreateTrainingJob, RejectsDuplicateChannelNames) {
  auto r = Training();
  *r.add_input_data_config() = r.input_data_config(0);
  EXPECT_THAT(ValidateCreateTrainingJob(r),
              IsValidationError("Channel names must be unique: 'train' appears more than once in "
                                "InputDataConfig."));
}

TEST(ValidateCreateTrainingJob, AppliesManagedSpotRules) {
  auto r = Training();
  r.mutable_stopping_condition()->set_max_wait_time_in_seconds(7200);
  EXPECT_THAT(ValidateCreateTrainingJob(r),
              IsValidationError("Invalid MaxWaitTimeInSeconds. It is only supported when "
                                "EnableManagedSpotTraining is set to true"));
  r.set_enable_managed_spot_training(true);
  EXPECT_THAT(ValidateCreateTrainingJob(r), IsOk());
  r.mutable_stopping_condition()->set_max_wait_time_in_seconds(60);
  EXPECT_THAT(ValidateCreateTrainingJob(r),
              IsValidationError("Invalid MaxWaitTimeInSeconds. It must be greater than or equal "
                                "to MaxRuntimeInSeconds (60 < 3600)"));
  r.mutable_stopping_condition()->clear_max_wait_time_in_seconds();
  EXPECT_THAT(ValidateCreateTrainingJob(r),
              IsValidationError("Invalid MaxWaitTimeInSeconds. It is required when "
                                "EnableManagedSpotTraining is set to true"));
}

TEST(ValidateCreateTrainingJob, ChecksContainerEntrypointAndArguments) {
  auto r = Training();
  r.mutable_algorithm_specification()->add_container_entrypoint("python3");
  r.mutable_algorithm_specification()->add_container_arguments("");
  EXPECT_THAT(ValidateCreateTrainingJob(r),
              IsValidationError(One(
                  "Value '[]' at 'algorithmSpecification.containerArguments' failed to satisfy "
                  "constraint: Member must satisfy constraint: [Member must have length less "
                  "than or equal to 256, Member must have length greater than or equal to 1]")));
}

// ---------------- List operations and names ----------------

TEST(ValidateListHyperParameterTuningJobs, AcceptsEmptyRequest) {
  EXPECT_THAT(ValidateListHyperParameterTuningJobs({}), IsOk());
}

TEST(ValidateListHyperParameterTuningJobs, ChecksEveryConstrainedMember) {
  v1::ListHyperParameterTuningJobsRequest r;
  r.set_max_results(0);
  r.set_sort_by("LastModifiedTime");
  r.set_sort_order("Up");
  r.set_name_contains("my_job");
  r.set_status_equals("Running");
  EXPECT_THAT(
      ValidateListHyperParameterTuningJobs(r),
      IsValidationError(
          "5 validation errors detected: Value '0' at 'maxResults' failed to satisfy "
          "constraint: Member must have value greater than or equal to 1; Value "
          "'LastModifiedTime' at 'sortBy' failed to satisfy constraint: Member must satisfy enum "
          "value set: [Name, Status, CreationTime]; Value 'Up' at 'sortOrder' failed to satisfy "
          "constraint: Member must satisfy enum value set: [Ascending, Descending]; Value "
          "'my_job' at 'nameContains' failed to satisfy constraint: Member must satisfy regular "
          "expression pattern: [a-zA-Z0-9\\-]+; Value 'Running' at 'statusEquals' failed to "
          "satisfy constraint: Member must satisfy enum value set: [Completed, InProgress, "
          "Failed, Stopped, Stopping, Deleting, DeleteFailed]"));
}

TEST(ValidateListTrainingJobs, ChecksMaxResultsNameContainsAndEnums) {
  v1::ListTrainingJobsRequest r;
  r.set_max_results(101);
  const std::string long_name(64, 'a');
  r.set_name_contains(long_name);
  r.set_status_equals("Done");
  r.set_sort_by("FinalObjectiveMetricValue");
  EXPECT_THAT(
      ValidateListTrainingJobs(r),
      IsValidationError(
          "4 validation errors detected: Value '101' at 'maxResults' failed to satisfy "
          "constraint: Member must have value less than or equal to 100; Value '" +
          long_name +
          "' at 'nameContains' failed to satisfy constraint: Member must have length less than "
          "or equal to 63; Value 'Done' at 'statusEquals' failed to satisfy constraint: Member "
          "must satisfy enum value set: [InProgress, Completed, Failed, Stopping, Stopped, "
          "Deleting]; Value 'FinalObjectiveMetricValue' at 'sortBy' failed to satisfy "
          "constraint: Member must satisfy enum value set: [Name, CreationTime, Status]"));
}

TEST(ValidateListTrainingJobsForHyperParameterTuningJob, RequiresTuningJobName) {
  v1::ListTrainingJobsForHyperParameterTuningJobRequest r;
  EXPECT_THAT(ValidateListTrainingJobsForHyperParameterTuningJob(r),
              IsValidationError(One("Value null at 'hyperParameterTuningJobName' failed to "
                                    "satisfy constraint: Member must not be null")));
  r.set_hyper_parameter_tuning_job_name("demo-tune");
  r.set_sort_by("FinalObjectiveMetricValue");
  r.set_sort_order("Descending");
  r.set_status_equals("Completed");
  r.set_max_results(100);
  EXPECT_THAT(ValidateListTrainingJobsForHyperParameterTuningJob(r), IsOk());
  r.set_sort_by("Objective");
  EXPECT_THAT(ValidateListTrainingJobsForHyperParameterTuningJob(r),
              IsValidationError(One("Value 'Objective' at 'sortBy' failed to satisfy constraint: "
                                    "Member must satisfy enum value set: [Name, CreationTime, "
                                    "Status, FinalObjectiveMetricValue]")));
}

TEST(ValidateTuningJobName, ReportsNullPatternAndLength) {
  EXPECT_THAT(ValidateTuningJobName("demo-tune", "hyperParameterTuningJobName"), IsOk());
  EXPECT_THAT(ValidateTuningJobName(std::nullopt, "hyperParameterTuningJobName"),
              IsValidationError(One("Value null at 'hyperParameterTuningJobName' failed to "
                                    "satisfy constraint: Member must not be null")));
  EXPECT_THAT(ValidateTuningJobName("-x", "hyperParameterTuningJobName"),
              IsValidationError(One("Value '-x' at 'hyperParameterTuningJobName' failed to "
                                    "satisfy constraint: Member must satisfy regular expression "
                                    "pattern: ^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,31}")));
}

TEST(ValidateTrainingJobName, AcceptsSixtyThreeCharactersButNotSixtyFour) {
  EXPECT_THAT(ValidateTrainingJobName(std::string(63, 'a'), "trainingJobName"), IsOk());
  const std::string name(64, 'a');
  EXPECT_THAT(ValidateTrainingJobName(name, "trainingJobName"),
              IsValidationError(
                  "2 validation errors detected: Value '" + name +
                  "' at 'trainingJobName' failed to satisfy constraint: Member must satisfy "
                  "regular expression pattern: ^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}; Value '" +
                  name +
                  "' at 'trainingJobName' failed to satisfy constraint: Member must have length "
                  "less than or equal to 63"));
}

}  // namespace
}  // namespace amt::validation
