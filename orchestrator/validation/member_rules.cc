#include "orchestrator/validation/member_rules.h"

#include <functional>
#include <utility>

#include "orchestrator/validation/instance_types.h"

namespace amt::validation {
namespace {

// Patterns as botocore's model (and so SageMaker's messages) spell them. The name patterns carry
// the leading '^' that SageMaker's messages show.
constexpr char kTuningJobNamePattern[] = "^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,31}";
constexpr char kTrainingJobNamePattern[] = "^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}";
constexpr char kDefinitionNamePattern[] = "^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,63}";
constexpr char kRoleArnPattern[] = R"(^arn:aws[a-z\-]*:iam::\d{12}:role/?[a-zA-Z_0-9+=,.@\-_/]+$)";
constexpr char kS3UriPattern[] = "^(https|s3)://([^/]+)/?(.*)$";
constexpr char kChannelNamePattern[] = R"([A-Za-z0-9\.\-_]+)";
constexpr char kEnvironmentKeyPattern[] = "[a-zA-Z_][a-zA-Z0-9_]*";
constexpr char kEnvironmentValuePattern[] = R"([\S\s]*)";
constexpr char kNameContainsPattern[] = R"([a-zA-Z0-9\-]+)";
constexpr char kExperimentEntityNamePattern[] = "^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,119}";
constexpr char kAnyLine[] = ".*";
constexpr char kNonEmptyLine[] = ".+";
constexpr char kResourceArnPattern[] = "arn:aws[a-z-]*:sagemaker:[a-z0-9-]*:[0-9]{12}:.+";

const std::vector<std::string> kInputModes = {"Pipe", "File", "FastFile"};
const std::vector<std::string> kSortOrders = {"Ascending", "Descending"};
const std::vector<std::string> kTrainingJobStatuses = {"InProgress", "Completed", "Failed",
                                                       "Stopping",   "Stopped",   "Deleting"};
const StringShape kHyperParameterKey{.min_length = 0, .max_length = 256, .pattern = kAnyLine};
const StringShape kHyperParameterValue{.min_length = 0, .max_length = 2500, .pattern = kAnyLine};
const StringShape kEnvironmentKey{.max_length = 512, .pattern = kEnvironmentKeyPattern};
const StringShape kEnvironmentValue{.max_length = 512, .pattern = kEnvironmentValuePattern};

MemberRule TuningJobName(bool required) {
  return {
      .required = required, .min_length = 1, .max_length = 32, .pattern = kTuningJobNamePattern};
}
MemberRule S3Uri(bool required) {
  return {.required = required, .max_length = 1024, .pattern = kS3UriPattern};
}
MemberRule RoleArn() {
  return {.required = true, .min_length = 20, .max_length = 2048, .pattern = kRoleArnPattern};
}
MemberRule MetricDefinitionsList() { return {.min_length = 0, .max_length = 40}; }
MemberRule Channels() { return {.min_length = 1, .max_length = 20}; }
MemberRule Tags() { return {.min_length = 0, .max_length = 50}; }
// SageMaker checks InstanceType against botocore's TrainingInstanceType enum (instance_types.cc,
// regenerated from a newer botocore by scripts/gen-instance-types.py when AWS adds types).
MemberRule InstanceType(bool required) {
  return {.required = required, .enum_values = TrainingInstanceTypes()};
}
MemberRule AtLeast(int64_t min, bool required = false) {
  return {.required = required, .min_value = min};
}
MemberRule Between(int64_t min, int64_t max, bool required = false) {
  return {.required = required, .min_value = min, .max_value = max};
}
MemberRule OneOf(std::vector<std::string> values, bool required = false) {
  return {.required = required, .enum_values = std::move(values)};
}
MemberRule Required() { return {.required = true}; }
MemberRule HyperParameterMap() {
  return {.max_length = 100, .key = kHyperParameterKey, .value = kHyperParameterValue};
}
MemberRule EnvironmentMap(int64_t max_entries) {
  return {.max_length = max_entries, .key = kEnvironmentKey, .value = kEnvironmentValue};
}
MemberRule RangeBound() { return {.required = true, .max_length = 256, .pattern = kAnyLine}; }
MemberRule NextToken() { return {.max_length = 8192, .pattern = kAnyLine}; }
MemberRule MaxResults() { return Between(1, 100); }
MemberRule NameContains() { return {.max_length = 63, .pattern = kNameContainsPattern}; }

// Adds the rule of one member, named "<Message>.<field>".
using Add = std::function<void(const std::string& field, MemberRule rule)>;

// CreateHyperParameterTuningJob.
void AddTuningJobRules(const Add& add) {
  add("CreateHyperParameterTuningJobRequest.hyper_parameter_tuning_job_name", TuningJobName(true));
  add("CreateHyperParameterTuningJobRequest.hyper_parameter_tuning_job_config", Required());
  add("CreateHyperParameterTuningJobRequest.training_job_definitions",
      {.min_length = 1, .max_length = 10});
  add("CreateHyperParameterTuningJobRequest.tags", Tags());
  add("HyperParameterTuningJobConfig.strategy",
      OneOf({"Bayesian", "Random", "Hyperband", "Grid"}, true));
  add("HyperParameterTuningJobConfig.resource_limits", Required());
  add("HyperParameterTuningJobConfig.training_job_early_stopping_type", OneOf({"Off", "Auto"}));
  add("HyperParameterTuningJobConfig.random_seed", AtLeast(0));
  add("HyperbandStrategyConfig.min_resource", AtLeast(1));
  add("HyperbandStrategyConfig.max_resource", AtLeast(1));
  add("HyperParameterTuningJobObjective.type", OneOf({"Maximize", "Minimize"}, true));
  add("HyperParameterTuningJobObjective.metric_name",
      {.required = true, .min_length = 1, .max_length = 255, .pattern = kNonEmptyLine});
  add("ResourceLimits.max_number_of_training_jobs", AtLeast(1));
  add("ResourceLimits.max_parallel_training_jobs", AtLeast(1, true));
  add("ResourceLimits.max_runtime_in_seconds", Between(120, 15768000));
  add("ParameterRanges.integer_parameter_ranges", {.min_length = 0, .max_length = 30});
  add("ParameterRanges.continuous_parameter_ranges", {.min_length = 0, .max_length = 30});
  add("ParameterRanges.categorical_parameter_ranges", {.min_length = 0, .max_length = 30});
  add("ParameterRanges.auto_parameters", {.min_length = 0, .max_length = 100});
  for (const std::string shape : {"IntegerParameterRange", "ContinuousParameterRange"}) {
    add(shape + ".name", RangeBound());
    add(shape + ".min_value", RangeBound());
    add(shape + ".max_value", RangeBound());
    add(shape + ".scaling_type", OneOf({"Auto", "Linear", "Logarithmic", "ReverseLogarithmic"}));
  }
  add("CategoricalParameterRange.name", RangeBound());
  add("CategoricalParameterRange.values",
      {.required = true,
       .min_length = 1,
       .max_length = 30,
       .item = StringShape{.max_length = 256, .pattern = kAnyLine}});
  add("AutoParameter.name", RangeBound());
  add("AutoParameter.value_hint", RangeBound());
  add("BestObjectiveNotImproving.max_number_of_training_jobs_not_improving", AtLeast(3));
  add("ConvergenceDetected.complete_on_convergence", OneOf({"Disabled", "Enabled"}));
  add("HyperParameterTuningJobWarmStartConfig.parent_hyper_parameter_tuning_jobs",
      {.required = true, .min_length = 1, .max_length = 5});
  add("HyperParameterTuningJobWarmStartConfig.warm_start_type",
      OneOf({"IdenticalDataAndAlgorithm", "TransferLearning"}, true));
  add("ParentHyperParameterTuningJob.hyper_parameter_tuning_job_name", TuningJobName(false));
  add("Autotune.mode", OneOf({"Enabled"}, true));
}

// The training job definition of a tuning job.
void AddTrainingDefinitionRules(const Add& add) {
  add("HyperParameterTrainingJobDefinition.definition_name",
      {.min_length = 1, .max_length = 64, .pattern = kDefinitionNamePattern});
  add("HyperParameterTrainingJobDefinition.static_hyper_parameters", HyperParameterMap());
  add("HyperParameterTrainingJobDefinition.algorithm_specification", Required());
  add("HyperParameterTrainingJobDefinition.role_arn", RoleArn());
  add("HyperParameterTrainingJobDefinition.input_data_config", Channels());
  add("HyperParameterTrainingJobDefinition.output_data_config", Required());
  add("HyperParameterTrainingJobDefinition.stopping_condition", Required());
  add("HyperParameterTrainingJobDefinition.environment", EnvironmentMap(48));
  add("HyperParameterAlgorithmSpecification.training_image", {.max_length = 255});
  add("HyperParameterAlgorithmSpecification.training_input_mode", OneOf(kInputModes, true));
  add("HyperParameterAlgorithmSpecification.algorithm_name", {.min_length = 1, .max_length = 170});
  add("HyperParameterAlgorithmSpecification.metric_definitions", MetricDefinitionsList());
  add("HyperParameterTuningResourceConfig.instance_type", InstanceType(false));
  add("HyperParameterTuningResourceConfig.instance_count", AtLeast(0));
  add("HyperParameterTuningResourceConfig.volume_size_in_gb", AtLeast(0));
  add("HyperParameterTuningResourceConfig.allocation_strategy", OneOf({"Prioritized"}));
  add("HyperParameterTuningResourceConfig.instance_configs", {.min_length = 1, .max_length = 6});
  add("HyperParameterTuningInstanceConfig.instance_type", InstanceType(true));
  add("HyperParameterTuningInstanceConfig.instance_count", AtLeast(0, true));
  add("HyperParameterTuningInstanceConfig.volume_size_in_gb", AtLeast(0, true));
}

// CreateTrainingJob's Debugger, Profiler, TensorBoard, Experiments members (botocore's shapes).
void AddDebuggingRules(const Add& add) {
  const StringShape config_key{.min_length = 1, .max_length = 256, .pattern = kAnyLine};
  const StringShape config_value{.min_length = 0, .max_length = 256, .pattern = kAnyLine};
  const MemberRule config_map{
      .min_length = 0, .max_length = 20, .key = config_key, .value = config_value};
  const MemberRule directory{.min_length = 0, .max_length = 4096, .pattern = kAnyLine};
  const MemberRule experiment_name{
      .min_length = 1, .max_length = 120, .pattern = kExperimentEntityNamePattern};
  add("CreateTrainingJobRequest.debug_rule_configurations", {.min_length = 0, .max_length = 20});
  add("CreateTrainingJobRequest.profiler_rule_configurations", {.min_length = 0, .max_length = 20});
  add("DebugHookConfig.local_path", directory);
  add("DebugHookConfig.s3_output_path", S3Uri(true));
  add("DebugHookConfig.hook_parameters", config_map);
  add("DebugHookConfig.collection_configurations", {.min_length = 0, .max_length = 20});
  add("CollectionConfiguration.collection_name",
      {.min_length = 1, .max_length = 256, .pattern = kAnyLine});
  add("CollectionConfiguration.collection_parameters", config_map);
  add("RuleConfiguration.rule_configuration_name",
      {.required = true, .min_length = 1, .max_length = 256, .pattern = kAnyLine});
  add("RuleConfiguration.local_path", directory);
  add("RuleConfiguration.s3_output_path", S3Uri(false));
  add("RuleConfiguration.rule_evaluator_image",
      {.required = true, .min_length = 0, .max_length = 255, .pattern = kAnyLine});
  add("RuleConfiguration.volume_size_in_gb", AtLeast(0));
  add("RuleConfiguration.rule_parameters",
      {.min_length = 0, .max_length = 100, .key = config_key, .value = config_value});
  add("TensorBoardOutputConfig.local_path", directory);
  add("TensorBoardOutputConfig.s3_output_path", S3Uri(true));
  add("ExperimentConfig.experiment_name", experiment_name);
  add("ExperimentConfig.trial_name", experiment_name);
  add("ExperimentConfig.trial_component_display_name", experiment_name);
  add("ExperimentConfig.run_name", experiment_name);
  add("ProfilerConfig.s3_output_path", S3Uri(false));
  add("ProfilerConfig.profiling_parameters", config_map);
  // UpdateTrainingJob's.
  add("UpdateTrainingJobRequest.training_job_name",
      {.required = true, .min_length = 1, .max_length = 63, .pattern = kTrainingJobNamePattern});
  add("UpdateTrainingJobRequest.profiler_rule_configurations", {.min_length = 0, .max_length = 20});
  add("ProfilerConfigForUpdate.s3_output_path", S3Uri(false));
  add("ProfilerConfigForUpdate.profiling_parameters", config_map);
  add("ResourceConfigForUpdate.keep_alive_period_in_seconds", Between(0, 21600, true));
}

// CreateTrainingJob.
void AddTrainingJobRules(const Add& add) {
  add("CreateTrainingJobRequest.training_job_name",
      {.required = true, .min_length = 1, .max_length = 63, .pattern = kTrainingJobNamePattern});
  add("CreateTrainingJobRequest.hyper_parameters", HyperParameterMap());
  add("CreateTrainingJobRequest.algorithm_specification", Required());
  add("CreateTrainingJobRequest.role_arn", RoleArn());
  add("CreateTrainingJobRequest.input_data_config", Channels());
  add("CreateTrainingJobRequest.output_data_config", Required());
  add("CreateTrainingJobRequest.resource_config", Required());
  add("CreateTrainingJobRequest.stopping_condition", Required());
  add("CreateTrainingJobRequest.tags", Tags());
  add("CreateTrainingJobRequest.environment", EnvironmentMap(100));
  add("AlgorithmSpecification.training_image", {.max_length = 255});
  add("AlgorithmSpecification.algorithm_name", {.min_length = 1, .max_length = 170});
  add("AlgorithmSpecification.training_input_mode", OneOf(kInputModes, true));
  add("AlgorithmSpecification.metric_definitions", MetricDefinitionsList());
  add("AlgorithmSpecification.container_entrypoint",
      {.min_length = 1,
       .max_length = 100,
       .item = StringShape{.min_length = 1, .max_length = 256}});
  add("AlgorithmSpecification.container_arguments",
      {.min_length = 1,
       .max_length = 100,
       .item = StringShape{.min_length = 1, .max_length = 256}});
  AddDebuggingRules(add);
}

// Shapes shared by both.
void AddSharedShapeRules(const Add& add) {
  add("MetricDefinition.name",
      {.required = true, .min_length = 1, .max_length = 255, .pattern = kNonEmptyLine});
  add("MetricDefinition.regex",
      {.required = true, .min_length = 1, .max_length = 500, .pattern = kNonEmptyLine});
  add("Channel.channel_name",
      {.required = true, .min_length = 1, .max_length = 64, .pattern = kChannelNamePattern});
  add("Channel.data_source", Required());
  add("Channel.content_type", {.max_length = 256});
  add("Channel.compression_type", OneOf({"None", "Gzip"}));
  add("Channel.record_wrapper_type", OneOf({"None", "RecordIO"}));
  add("Channel.input_mode", OneOf(kInputModes));
  add("S3DataSource.s3_data_type",
      OneOf({"S3Prefix", "ManifestFile", "AugmentedManifestFile"}, true));
  add("S3DataSource.s3_uri", S3Uri(true));
  add("S3DataSource.s3_data_distribution_type", OneOf({"FullyReplicated", "ShardedByS3Key"}));
  add("S3DataSource.attribute_names",
      {.max_length = 16, .item = StringShape{.min_length = 1, .max_length = 256}});
  add("OutputDataConfig.kms_key_id", {.max_length = 2048});
  add("OutputDataConfig.s3_output_path", S3Uri(true));
  add("OutputDataConfig.compression_type", OneOf({"GZIP", "NONE"}));
  add("ResourceConfig.instance_type", InstanceType(false));
  add("ResourceConfig.instance_count", AtLeast(0));
  add("ResourceConfig.volume_size_in_gb", AtLeast(0));
  add("ResourceConfig.keep_alive_period_in_seconds", Between(0, 21600));
  add("ResourceConfig.instance_groups", {.max_length = 5});
  add("InstanceGroup.instance_type", InstanceType(true));
  add("InstanceGroup.instance_count", AtLeast(0, true));
  add("InstanceGroup.instance_group_name",
      {.required = true, .min_length = 1, .max_length = 64, .pattern = kNonEmptyLine});
  add("StoppingCondition.max_runtime_in_seconds", AtLeast(1));
  add("StoppingCondition.max_wait_time_in_seconds", AtLeast(1));
  add("StoppingCondition.max_pending_time_in_seconds", Between(7200, 2419200));
  add("CheckpointConfig.s3_uri", S3Uri(true));
  add("CheckpointConfig.local_path", {.max_length = 4096});
  add("RetryStrategy.maximum_retry_attempts", Between(1, 30, true));
  add("Tag.key", {.required = true, .min_length = 1, .max_length = 128});
  add("Tag.value", {.required = true, .min_length = 0, .max_length = 256});
}

// List operations.
void AddListRules(const Add& add) {
  add("ListHyperParameterTuningJobsRequest.next_token", NextToken());
  add("ListHyperParameterTuningJobsRequest.max_results", MaxResults());
  add("ListHyperParameterTuningJobsRequest.sort_by", OneOf({"Name", "Status", "CreationTime"}));
  add("ListHyperParameterTuningJobsRequest.sort_order", OneOf(kSortOrders));
  add("ListHyperParameterTuningJobsRequest.name_contains", NameContains());
  add("ListHyperParameterTuningJobsRequest.status_equals",
      OneOf({"Completed", "InProgress", "Failed", "Stopped", "Stopping", "Deleting",
             "DeleteFailed"}));
  add("ListTrainingJobsRequest.next_token", NextToken());
  add("ListTrainingJobsRequest.max_results", MaxResults());
  add("ListTrainingJobsRequest.name_contains", NameContains());
  add("ListTrainingJobsRequest.status_equals", OneOf(kTrainingJobStatuses));
  add("ListTrainingJobsRequest.sort_by", OneOf({"Name", "CreationTime", "Status"}));
  add("ListTrainingJobsRequest.sort_order", OneOf(kSortOrders));
  add("ListTrainingJobsForHyperParameterTuningJobRequest.hyper_parameter_tuning_job_name",
      TuningJobName(true));
  add("ListTrainingJobsForHyperParameterTuningJobRequest.next_token", NextToken());
  add("ListTrainingJobsForHyperParameterTuningJobRequest.max_results", MaxResults());
  add("ListTrainingJobsForHyperParameterTuningJobRequest.status_equals",
      OneOf(kTrainingJobStatuses));
  add("ListTrainingJobsForHyperParameterTuningJobRequest.sort_by",
      OneOf({"Name", "CreationTime", "Status", "FinalObjectiveMetricValue"}));
  add("ListTrainingJobsForHyperParameterTuningJobRequest.sort_order", OneOf(kSortOrders));
}

// AddTags, ListTags, DeleteTags.
void AddTagRules(const Add& add) {
  const MemberRule arn{.required = true, .max_length = 256, .pattern = kResourceArnPattern};
  add("AddTagsRequest.resource_arn", arn);
  add("AddTagsRequest.tags", {.required = true, .min_length = 0, .max_length = 50});
  add("ListTagsRequest.resource_arn", arn);
  add("ListTagsRequest.next_token", NextToken());
  add("ListTagsRequest.max_results", AtLeast(50));
  add("DeleteTagsRequest.resource_arn", arn);
  add("DeleteTagsRequest.tag_keys", {.required = true,
                                     .min_length = 1,
                                     .max_length = 50,
                                     .item = StringShape{.min_length = 1, .max_length = 128}});
}

}  // namespace

const StringShape& TuningJobNameShape() {
  static const StringShape shape{
      .min_length = 1, .max_length = 32, .pattern = kTuningJobNamePattern};
  return shape;
}

const StringShape& TrainingJobNameShape() {
  static const StringShape shape{
      .min_length = 1, .max_length = 63, .pattern = kTrainingJobNamePattern};
  return shape;
}

RuleTable BuildMemberRules() {
  RuleTable t;
  const Add add = [&t](const std::string& field, MemberRule rule) {
    t.emplace("amt.v1." + field, std::move(rule));
  };
  AddTuningJobRules(add);
  AddTrainingDefinitionRules(add);
  AddTrainingJobRules(add);
  AddSharedShapeRules(add);
  AddListRules(add);
  AddTagRules(add);
  return t;
}

}  // namespace amt::validation
