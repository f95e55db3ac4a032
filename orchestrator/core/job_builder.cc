#include "orchestrator/core/job_builder.h"

#include <algorithm>

#include "common/errors.h"
#include "orchestrator/core/launch_plan.h"
#include "orchestrator/core/training_job.h"
#include "orchestrator/core/tuning_job.h"
#include "orchestrator/validation/definitions.h"
#include "orchestrator/validation/validation.h"

namespace amt::core {
namespace {

v1::AlgorithmSpecification FromTuningSpec(const v1::HyperParameterAlgorithmSpecification& a) {
  v1::AlgorithmSpecification out;
  if (a.has_training_image()) out.set_training_image(a.training_image());
  if (a.has_algorithm_name()) out.set_algorithm_name(a.algorithm_name());
  if (a.has_training_input_mode()) out.set_training_input_mode(a.training_input_mode());
  *out.mutable_metric_definitions() = a.metric_definitions();
  return out;
}

// The training job's ResourceConfig: the definition's, or the first instance config of a
// HyperParameterTuningResourceConfig.
v1::ResourceConfig ResourceConfigOf(const v1::HyperParameterTrainingJobDefinition& def) {
  if (def.has_resource_config()) return def.resource_config();
  v1::ResourceConfig rc;
  const auto& h = def.hyper_parameter_tuning_resource_config();
  if (h.has_instance_type()) rc.set_instance_type(h.instance_type());
  if (h.has_instance_count()) rc.set_instance_count(h.instance_count());
  if (h.has_volume_size_in_gb()) rc.set_volume_size_in_gb(h.volume_size_in_gb());
  if (!h.has_instance_type() && h.instance_configs_size() > 0) {
    const auto& ic = h.instance_configs(0);
    rc.set_instance_type(ic.instance_type());
    rc.set_instance_count(ic.instance_count());
    rc.set_volume_size_in_gb(ic.volume_size_in_gb());
  }
  return rc;
}

// amt-local does not run Debugger or Profiler rules (SageMaker runs each as a processing job):
// each rule's status says so, in a terminal status, so a client waiting for its rules ends.
v1::RuleEvaluationStatus NotEvaluated(const v1::RuleConfiguration& rule, double now) {
  v1::RuleEvaluationStatus status;
  status.set_rule_configuration_name(rule.rule_configuration_name());
  status.set_rule_evaluation_status("Stopped");
  status.set_status_details(
      "amt-local does not run Debugger or Profiler rules: this rule was not evaluated.");
  status.set_last_modified_time(now);
  return status;
}

// The Debugger, Profiler, TensorBoard, Experiments and remote-debugging members, echoed as
// SageMaker echoes them, with the rule statuses and ProfilingStatus SageMaker adds.
void CopyDebuggingConfig(const v1::CreateTrainingJobRequest& request, double now,
                         v1::DescribeTrainingJobResponse& d) {
  if (request.has_debug_hook_config()) *d.mutable_debug_hook_config() = request.debug_hook_config();
  if (request.has_experiment_config()) *d.mutable_experiment_config() = request.experiment_config();
  *d.mutable_debug_rule_configurations() = request.debug_rule_configurations();
  for (const auto& rule : request.debug_rule_configurations()) {
    *d.add_debug_rule_evaluation_statuses() = NotEvaluated(rule, now);
  }
  if (request.has_tensor_board_output_config()) {
    *d.mutable_tensor_board_output_config() = request.tensor_board_output_config();
  }
  if (request.has_profiler_config()) *d.mutable_profiler_config() = request.profiler_config();
  *d.mutable_profiler_rule_configurations() = request.profiler_rule_configurations();
  for (const auto& rule : request.profiler_rule_configurations()) {
    *d.add_profiler_rule_evaluation_statuses() = NotEvaluated(rule, now);
  }
  const bool profiling =
      request.has_profiler_config() && !request.profiler_config().disable_profiler();
  d.set_profiling_status(profiling ? "Enabled" : "Disabled");
  if (request.has_remote_debug_config()) {
    *d.mutable_remote_debug_config() = request.remote_debug_config();
  }
  if (request.has_infra_check_config()) {
    *d.mutable_infra_check_config() = request.infra_check_config();
  }
}

}  // namespace

v1::TrainingJobRecord NewTrainingJobRecord(const v1::CreateTrainingJobRequest& request,
                                           const RecordOptions& options, double now) {
  v1::TrainingJobRecord job;
  auto* d = job.mutable_describe();
  d->set_training_job_name(request.training_job_name());
  d->set_training_job_arn(TrainingJobArn(options.arn, request.training_job_name()));
  *d->mutable_hyper_parameters() = request.hyper_parameters();
  *d->mutable_algorithm_specification() = request.algorithm_specification();
  d->set_role_arn(request.role_arn());
  *d->mutable_input_data_config() = request.input_data_config();
  *d->mutable_output_data_config() = request.output_data_config();
  // SageMaker always returns KmsKeyId ("" when none was given); the SDK's Estimator.attach
  // reads it.
  if (!d->output_data_config().has_kms_key_id())
    d->mutable_output_data_config()->set_kms_key_id("");
  // SageMaker's defaults, as a live DescribeTrainingJob shows them for a request without them:
  // CompressionType GZIP, EnableSageMakerMetricsTimeSeries false, the three Enable* flags false,
  // ProfilingStatus Disabled.
  if (!d->output_data_config().has_compression_type()) {
    d->mutable_output_data_config()->set_compression_type("GZIP");
  }
  if (!d->algorithm_specification().has_enable_sage_maker_metrics_time_series()) {
    d->mutable_algorithm_specification()->set_enable_sage_maker_metrics_time_series(false);
  }
  *d->mutable_resource_config() = request.resource_config();
  if (request.has_vpc_config()) *d->mutable_vpc_config() = request.vpc_config();
  *d->mutable_stopping_condition() = request.stopping_condition();
  d->set_enable_network_isolation(request.enable_network_isolation());
  d->set_enable_inter_container_traffic_encryption(
      request.enable_inter_container_traffic_encryption());
  d->set_enable_managed_spot_training(request.enable_managed_spot_training());
  if (request.enable_managed_spot_training()) job.set_spot_discount(options.spot_discount);
  if (request.has_checkpoint_config()) {
    *d->mutable_checkpoint_config() = request.checkpoint_config();
  }
  CopyDebuggingConfig(request, now, *d);
  *d->mutable_environment() = request.environment();
  if (request.has_retry_strategy()) *d->mutable_retry_strategy() = request.retry_strategy();
  *d->mutable_tags() = request.tags();
  d->mutable_model_artifacts()->set_s3_model_artifacts(ModelArtifactUri(*d));
  MarkCreated(job, now);
  return job;
}

absl::Status ApplyTrainingJobUpdate(v1::TrainingJobRecord& job,
                                    const v1::UpdateTrainingJobRequest& request, double now) {
  auto& d = *job.mutable_describe();
  const bool profiler = request.has_profiler_config() ||
                        request.profiler_rule_configurations_size() > 0 ||
                        request.has_remote_debug_config();
  if (!profiler && !request.has_resource_config()) {  // ours
    return ValidationError(
        "UpdateTrainingJob needs at least one of ProfilerConfig, ProfilerRuleConfigurations, "
        "ResourceConfig and RemoteDebugConfig.");
  }
  if (profiler && d.training_job_status() != kInProgress) {  // ours
    return ValidationError("The training job " + d.training_job_name() + " is " +
                           d.training_job_status() +
                           ": its ProfilerConfig, ProfilerRuleConfigurations and "
                           "RemoteDebugConfig can be updated only while it is InProgress.");
  }
  if (request.has_profiler_config()) {
    const auto& update = request.profiler_config();
    auto& config = *d.mutable_profiler_config();
    if (update.has_s3_output_path()) config.set_s3_output_path(update.s3_output_path());
    if (update.has_profiling_interval_in_milliseconds()) {
      config.set_profiling_interval_in_milliseconds(update.profiling_interval_in_milliseconds());
    }
    for (const auto& [key, value] : update.profiling_parameters()) {
      (*config.mutable_profiling_parameters())[key] = value;
    }
    if (update.has_disable_profiler()) config.set_disable_profiler(update.disable_profiler());
    d.set_profiling_status(config.disable_profiler() ? "Disabled" : "Enabled");
  }
  for (const auto& rule : request.profiler_rule_configurations()) {
    auto* rules = d.mutable_profiler_rule_configurations();
    auto* statuses = d.mutable_profiler_rule_evaluation_statuses();
    const auto same = [&rule](const auto& r) {
      return r.rule_configuration_name() == rule.rule_configuration_name();
    };
    if (auto it = std::find_if(rules->begin(), rules->end(), same); it != rules->end()) {
      *it = rule;
    } else {
      *rules->Add() = rule;
    }
    if (auto it = std::find_if(statuses->begin(), statuses->end(), same); it != statuses->end()) {
      *it = NotEvaluated(rule, now);
    } else {
      *statuses->Add() = NotEvaluated(rule, now);
    }
  }
  if (request.has_remote_debug_config() &&
      request.remote_debug_config().has_enable_remote_debug()) {
    d.mutable_remote_debug_config()->set_enable_remote_debug(
        request.remote_debug_config().enable_remote_debug());
  }
  if (request.has_resource_config()) {
    d.mutable_resource_config()->set_keep_alive_period_in_seconds(
        request.resource_config().keep_alive_period_in_seconds());
  }
  d.set_last_modified_time(now);
  return absl::OkStatus();
}

v1::CreateTrainingJobRequest TrainingJobRequestFor(const v1::TuningJobRecord& tuning, int index,
                                                   int definition,
                                                   const search::Assignment& suggestion) {
  const auto& def = validation::DefinitionAt(tuning.describe(), definition).definition;
  v1::CreateTrainingJobRequest r;
  r.set_training_job_name(TrainingJobNameFor(tuning, index));
  *r.mutable_hyper_parameters() = def.static_hyper_parameters();
  for (const auto& [name, value] : suggestion) (*r.mutable_hyper_parameters())[name] = value;
  *r.mutable_algorithm_specification() = FromTuningSpec(def.algorithm_specification());
  r.set_role_arn(def.role_arn());
  *r.mutable_input_data_config() = def.input_data_config();
  *r.mutable_output_data_config() = def.output_data_config();
  *r.mutable_resource_config() = ResourceConfigOf(def);
  if (def.has_vpc_config()) *r.mutable_vpc_config() = def.vpc_config();
  *r.mutable_stopping_condition() = def.stopping_condition();
  if (def.has_enable_network_isolation()) {
    r.set_enable_network_isolation(def.enable_network_isolation());
  }
  if (def.has_enable_inter_container_traffic_encryption()) {
    r.set_enable_inter_container_traffic_encryption(
        def.enable_inter_container_traffic_encryption());
  }
  if (def.has_enable_managed_spot_training()) {
    r.set_enable_managed_spot_training(def.enable_managed_spot_training());
  }
  if (def.has_checkpoint_config()) *r.mutable_checkpoint_config() = def.checkpoint_config();
  *r.mutable_environment() = def.environment();
  if (def.has_retry_strategy()) *r.mutable_retry_strategy() = def.retry_strategy();
  *r.mutable_tags() = tuning.describe().tags();
  return r;
}

v1::TrainingJobRecord NewTuningTrainingJob(const v1::TuningJobRecord& tuning, int index,
                                           int definition, const search::Assignment& suggestion,
                                           const RecordOptions& options, double now) {
  v1::TrainingJobRecord job = NewTrainingJobRecord(
      TrainingJobRequestFor(tuning, index, definition, suggestion), options, now);
  job.set_definition(definition);
  const auto& td = tuning.describe();
  job.mutable_describe()->set_tuning_job_arn(td.hyper_parameter_tuning_job_arn());
  job.set_tuning_job_name(td.hyper_parameter_tuning_job_name());
  job.set_index(index);
  job.mutable_tuned_hyperparameters()->insert(suggestion.begin(), suggestion.end());
  return job;
}

absl::StatusOr<v1::TuningJobRecord> NewTuningJobRecord(
    const v1::CreateHyperParameterTuningJobRequest& request, const ArnContext& arn, uint64_t seed,
    double now) {
  const std::string& name = request.hyper_parameter_tuning_job_name();
  const auto& config = request.hyper_parameter_tuning_job_config();
  v1::TuningJobRecord t;
  auto* d = t.mutable_describe();
  d->set_hyper_parameter_tuning_job_name(name);
  d->set_hyper_parameter_tuning_job_arn(TuningJobArn(arn, name));
  *d->mutable_hyper_parameter_tuning_job_config() = config;
  if (request.has_training_job_definition()) {
    *d->mutable_training_job_definition() = request.training_job_definition();
  }
  *d->mutable_training_job_definitions() = request.training_job_definitions();
  std::vector<v1::HyperParameterTrainingJobDefinition*> definitions;
  if (d->has_training_job_definition()) definitions.push_back(d->mutable_training_job_definition());
  for (auto& definition : *d->mutable_training_job_definitions())
    definitions.push_back(&definition);
  for (v1::HyperParameterTrainingJobDefinition* definition : definitions) {
    // A definition with HyperParameterTuningResourceConfig (what the SDK's tuner sends) is
    // described with the ResourceConfig its training jobs get as well: the SDK's
    // HyperparameterTuner.attach reads TrainingJobDefinition.ResourceConfig.
    if (!definition->has_resource_config()) {
      *definition->mutable_resource_config() = ResourceConfigOf(*definition);
    }
    // SageMaker adds the objective to the static hyperparameters it echoes and passes on.
    (*definition->mutable_static_hyper_parameters())[kTuningObjectiveKey] =
        definition->has_tuning_objective()
            ? definition->tuning_objective().metric_name()
            : config.hyper_parameter_tuning_job_objective().metric_name();
  }
  if (request.has_warm_start_config()) {
    *d->mutable_warm_start_config() = request.warm_start_config();
  }
  if (request.has_autotune()) *d->mutable_autotune() = request.autotune();
  *d->mutable_tags() = request.tags();
  d->set_hyper_parameter_tuning_job_status(std::string(kTuningInProgress));
  d->set_creation_time(now);
  d->set_last_modified_time(now);
  d->mutable_training_job_status_counters();
  d->mutable_objective_status_counters();
  d->mutable_tuning_job_completion_details();
  d->mutable_consumed_resources();
  t.set_seed(seed);
  if (config.strategy() == "Hyperband") {
    auto max_resource = validation::HyperbandMaxResource(request);
    if (!max_resource.ok()) return max_resource.status();
    const auto& hb = config.strategy_config().hyperband_strategy_config();
    t.set_hyperband_min_resource(hb.has_min_resource() ? hb.min_resource() : 1);
    t.set_hyperband_max_resource(*max_resource);
  }
  return t;
}

}  // namespace amt::core
