#include "orchestrator/core/job_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/json.h"
#include "google/protobuf/util/message_differencer.h"
#include "orchestrator/core/tuning_job.h"
#include "tests/support/requests.h"

namespace amt::core {
namespace {

using ::testing::Pair;
using ::testing::UnorderedElementsAre;

// The Random example with what a record echoes: a tuning resource config, spot, an environment,
// retries and a tag, and a static "lr" that the tuned "lr" overrides.
v1::CreateHyperParameterTuningJobRequest TuningRequest() {
  return ::amt::testing::TuningRequest("random-tuning.json", R"j({
    "HyperParameterTuningJobName": "demo",
    "HyperParameterTuningJobConfig": {
      "HyperParameterTuningJobObjective": {"MetricName": "loss"},
      "ResourceLimits": {"MaxNumberOfTrainingJobs": 4, "MaxParallelTrainingJobs": 1},
      "ParameterRanges": {
        "ContinuousParameterRanges": [{"Name": "lr", "MinValue": "0.001", "MaxValue": "0.1"}],
        "IntegerParameterRanges": null, "CategoricalParameterRanges": null}},
    "TrainingJobDefinition": {
      "StaticHyperParameters": {"epochs": "3", "lr": "static", "sleep_ms": null},
      "AlgorithmSpecification": {"TrainingImage": "toy:latest",
        "MetricDefinitions": [{"Name": "loss", "Regex": "loss=(\\S+)"}]},
      "OutputDataConfig": {"S3OutputPath": "s3://b/o"},
      "ResourceConfig": null,
      "HyperParameterTuningResourceConfig": {"InstanceConfigs": [
        {"InstanceType": "ml.c5.xlarge", "InstanceCount": 1, "VolumeSizeInGB": 5}]},
      "StoppingCondition": {"MaxRuntimeInSeconds": 60},
      "EnableManagedSpotTraining": true,
      "Environment": {"A": "1"},
      "RetryStrategy": {"MaximumRetryAttempts": 2}},
    "Tags": [{"Key": "team", "Value": "ml"}]})j");
}

TEST(JobBuilder, TuningJobRecordEchoesTheRequestWithTheObjectiveAsAStatic) {
  auto t = NewTuningJobRecord(TuningRequest(), {"us-east-1", "123456789012"}, 42, 100);
  ASSERT_TRUE(t.ok()) << t.status();
  const auto& d = t->describe();
  EXPECT_EQ(d.hyper_parameter_tuning_job_status(), "InProgress");
  EXPECT_EQ(d.hyper_parameter_tuning_job_arn(),
            "arn:aws:sagemaker:us-east-1:123456789012:hyper-parameter-tuning-job/demo");
  EXPECT_EQ(d.training_job_definition().static_hyper_parameters().at("_tuning_objective_metric"),
            "loss");
  EXPECT_EQ(d.creation_time(), 100);
  EXPECT_EQ(t->seed(), 42u);
  EXPECT_EQ(t->hyperband_max_resource(), 0);
  EXPECT_EQ(d.tags_size(), 1);
}

// Describe echoes the Debugger, Profiler, TensorBoard and Experiments members and fills in
// SageMaker's defaults (a live 2026 DescribeTrainingJob: CompressionType GZIP,
// EnableSageMakerMetricsTimeSeries false, the Enable* flags false, ProfilingStatus Disabled).
TEST(JobBuilder, ATrainingJobRecordEchoesDebuggingMembersAndSageMakersDefaults) {
  v1::CreateTrainingJobRequest r = ::amt::testing::TrainingRequest("training-job.json", R"j({
    "DebugHookConfig": {"S3OutputPath": "s3://b/o", "CollectionConfigurations": [
      {"CollectionName": "losses", "CollectionParameters": {"save_interval": "10"}}]},
    "DebugRuleConfigurations": [{"RuleConfigurationName": "LossNotDecreasing",
      "RuleEvaluatorImage": "rules:latest", "RuleParameters": {"rule_to_invoke": "LossNotDecreasing"}}],
    "ProfilerConfig": {"S3OutputPath": "s3://b/o", "ProfilingIntervalInMilliseconds": 500},
    "TensorBoardOutputConfig": {"S3OutputPath": "s3://b/tb"},
    "ExperimentConfig": {"ExperimentName": "exp", "TrialName": "trial"},
    "RemoteDebugConfig": {"EnableRemoteDebug": false},
    "InfraCheckConfig": {"EnableInfraCheck": true}})j");
  const auto d = NewTrainingJobRecord(r, RecordOptions{}, 100).describe();
  EXPECT_EQ(d.debug_hook_config().collection_configurations(0).collection_parameters().at(
                "save_interval"),
            "10");
  ASSERT_EQ(d.debug_rule_configurations_size(), 1);
  ASSERT_EQ(d.debug_rule_evaluation_statuses_size(), 1);
  EXPECT_EQ(d.debug_rule_evaluation_statuses(0).rule_configuration_name(), "LossNotDecreasing");
  EXPECT_EQ(d.debug_rule_evaluation_statuses(0).rule_evaluation_status(), "Stopped");
  EXPECT_EQ(d.profiler_config().profiling_interval_in_milliseconds(), 500);
  EXPECT_EQ(d.profiling_status(), "Enabled");
  EXPECT_EQ(d.tensor_board_output_config().s3_output_path(), "s3://b/tb");
  EXPECT_EQ(d.experiment_config().trial_name(), "trial");
  EXPECT_TRUE(d.has_remote_debug_config());
  EXPECT_TRUE(d.infra_check_config().enable_infra_check());
  EXPECT_EQ(d.output_data_config().compression_type(), "GZIP");
  EXPECT_EQ(d.output_data_config().kms_key_id(), "");
  EXPECT_TRUE(d.has_enable_managed_spot_training());
  EXPECT_FALSE(d.enable_managed_spot_training());
  EXPECT_TRUE(d.has_enable_network_isolation());
  EXPECT_TRUE(d.has_enable_inter_container_traffic_encryption());
  EXPECT_TRUE(d.algorithm_specification().has_enable_sage_maker_metrics_time_series());
  // Without a ProfilerConfig (or with DisableProfiler), profiling is Disabled.
  r.clear_profiler_config();
  EXPECT_EQ(NewTrainingJobRecord(r, RecordOptions{}, 100).describe().profiling_status(),
            "Disabled");
  r.mutable_profiler_config()->set_disable_profiler(true);
  EXPECT_EQ(NewTrainingJobRecord(r, RecordOptions{}, 100).describe().profiling_status(),
            "Disabled");
}

TEST(JobBuilder, ALaunchIsACreateTrainingJobRequestFromTheDefinition) {
  auto t = NewTuningJobRecord(TuningRequest(), {"us-east-1", "123456789012"}, 42, 100);
  ASSERT_TRUE(t.ok());
  const auto request = TrainingJobRequestFor(*t, 3, 0, {{"lr", "0.05"}});
  EXPECT_EQ(request.training_job_name(), TrainingJobNameFor(*t, 3));
  EXPECT_THAT(request.hyper_parameters(),
              UnorderedElementsAre(Pair("epochs", "3"), Pair("lr", "0.05"),
                                   Pair("_tuning_objective_metric", "loss")));
  EXPECT_EQ(request.resource_config().instance_type(), "ml.c5.xlarge");  // first instance config
  EXPECT_EQ(request.resource_config().volume_size_in_gb(), 5);
  EXPECT_TRUE(request.enable_managed_spot_training());
  EXPECT_EQ(request.environment().at("A"), "1");
  EXPECT_EQ(request.retry_strategy().maximum_retry_attempts(), 2);
  EXPECT_EQ(request.tags(0).key(), "team");  // the tuning job's tags reach its training jobs
  EXPECT_EQ(request.algorithm_specification().metric_definitions_size(), 1);
}

TEST(JobBuilder, ATuningLaunchAndACreateTrainingJobMakeTheSameRecord) {
  auto t = NewTuningJobRecord(TuningRequest(), {"us-east-1", "123456789012"}, 42, 100);
  ASSERT_TRUE(t.ok());
  const RecordOptions options{{"us-east-1", "123456789012"}, 0.7};
  auto launched = NewTuningTrainingJob(*t, 1, 0, {{"lr", "0.05"}}, options, 200);
  auto created =
      NewTrainingJobRecord(TrainingJobRequestFor(*t, 1, 0, {{"lr", "0.05"}}), options, 200);
  EXPECT_EQ(launched.describe().tuning_job_arn(), t->describe().hyper_parameter_tuning_job_arn());
  EXPECT_EQ(launched.tuning_job_name(), "demo");
  EXPECT_EQ(launched.index(), 1);
  EXPECT_THAT(launched.tuned_hyperparameters(), UnorderedElementsAre(Pair("lr", "0.05")));
  launched.mutable_describe()->clear_tuning_job_arn();
  launched.clear_tuning_job_name();
  launched.clear_index();
  launched.clear_tuned_hyperparameters();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(launched, created))
      << launched.DebugString() << "\nvs\n"
      << created.DebugString();
  EXPECT_EQ(created.describe().training_job_status(), "InProgress");
  EXPECT_EQ(created.describe().secondary_status(), "Starting");
  EXPECT_EQ(created.spot_discount(), 0.7);
  EXPECT_EQ(created.describe().model_artifacts().s3_model_artifacts(),
            "s3://b/o/" + created.describe().training_job_name() + "/output/model.tar.gz");
}

}  // namespace
}  // namespace amt::core
