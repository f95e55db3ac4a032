#include "orchestrator/validation/validation.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "orchestrator/validation/algorithms.h"
#include "orchestrator/validation/autotune.h"
#include "orchestrator/validation/definitions.h"
#include "orchestrator/validation/member_constraints.h"
#include "re2/re2.h"

// Stage-2 texts. SageMaker's real texts (spec section 6) are the constants marked "SageMaker";
// every other message in this file is ours, written because the spec has no real text for it.
namespace amt::validation {
namespace {

// SageMaker.
constexpr char kMetricRequired[] =
    "A metric is required for this hyperparameter tuning job objective. Provide a metric in the "
    "metric definitions.";
// SageMaker.
constexpr char kMaxResourceNotInferred[] =
    "MaxResource parameter is not provided and could not be inferred from provided static "
    "hyperparameters of TrainingJobDefinition.";
// SageMaker.
constexpr char kMaxWaitWithoutSpot[] =
    "Invalid MaxWaitTimeInSeconds. It is only supported when EnableManagedSpotTraining is set to "
    "true";

// AMT adds this static hyperparameter to every training job; it counts toward the 100.
constexpr char kTuningObjectiveMetric[] = "_tuning_objective_metric";
constexpr int kMaxHyperParameters = 100;

// The static hyperparameters Hyperband reads MaxResource from, in SageMaker's order.
constexpr const char* kEpochKeys[] = {"epochs", "numepochs", "n-epochs", "n_epochs", "num_epochs"};

// A whole-string integer; a leading '+' is accepted as Java's Integer.parseInt does.
std::optional<int64_t> ParseInteger(std::string_view text) {
  if (text.size() > 1 && text.front() == '+' && text[1] != '-') text.remove_prefix(1);
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// A whole-string finite number in decimal or scientific notation.
std::optional<double> ParseNumber(std::string_view text) {
  if (text.size() > 1 && text.front() == '+' && text[1] != '-') text.remove_prefix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() ||
      !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// --- shared by both Create operations ---

// Ours. SageMaker needs one of the two to know what to run; amt-local runs TrainingImage.
template <typename Spec>
absl::Status CheckAlgorithmSpecification(const Spec& spec, int max_metric_definitions) {
  if (!spec.has_training_image() && !spec.has_algorithm_name()) {
    return ValidationError(
        "AlgorithmSpecification must contain a TrainingImage or an AlgorithmName.");
  }
  if (spec.metric_definitions_size() > max_metric_definitions) {  // ours
    return ValidationError(absl::StrCat("The number of MetricDefinitions (",
                                        spec.metric_definitions_size(), ") exceeds the limit of ",
                                        max_metric_definitions, "."));
  }
  for (const v1::MetricDefinition& metric : spec.metric_definitions()) {
    RE2::Options options;
    options.set_log_errors(false);
    const RE2 regex(metric.regex(), options);
    if (!regex.ok()) {  // ours; the error part is RE2's
      return ValidationError(absl::StrCat("Invalid regular expression for metric '", metric.name(),
                                          "' in MetricDefinitions: ", regex.error()));
    }
  }
  return absl::OkStatus();
}

// Ours: the worker makes one directory per channel name, and every channel needs a source.
absl::Status CheckChannels(const google::protobuf::RepeatedPtrField<v1::Channel>& channels) {
  std::set<std::string> seen;
  for (const v1::Channel& channel : channels) {
    if (!seen.insert(channel.channel_name()).second) {
      return ValidationError(absl::StrCat("Channel names must be unique: '", channel.channel_name(),
                                          "' appears more than once in InputDataConfig."));
    }
    if (!channel.data_source().has_s3_data_source() &&
        !channel.data_source().has_file_system_data_source()) {
      return ValidationError(absl::StrCat("The DataSource of channel '", channel.channel_name(),
                                          "' must contain an S3DataSource or a "
                                          "FileSystemDataSource."));
    }
  }
  return absl::OkStatus();
}

// Ours: s3:// URIs are folders under amtd's S3 root (--s3-root), so a bucket or key with a "."
// or ".." segment, which would name a folder outside the bucket or the root once normalised, is
// refused.
absl::Status CheckS3Path(const std::string& member, const std::string& uri) {
  if (!absl::StartsWith(uri, "s3://")) return absl::OkStatus();
  for (absl::string_view segment : absl::StrSplit(absl::string_view(uri).substr(5), '/')) {
    if (segment == "." || segment == "..") {
      return ValidationError(absl::StrCat(
          member, " '", uri, "' has a '", segment,
          "' segment. amt-local keeps s3:// objects in folders under its S3 root (amtd "
          "--s3-root) and refuses paths that would leave their bucket."));
    }
  }
  return absl::OkStatus();
}

template <typename Definition>
absl::Status CheckS3Paths(const Definition& d) {
  for (const v1::Channel& channel : d.input_data_config()) {
    RETURN_IF_ERROR(CheckS3Path("S3Uri", channel.data_source().s3_data_source().s3_uri()));
  }
  RETURN_IF_ERROR(CheckS3Path("S3OutputPath", d.output_data_config().s3_output_path()));
  return CheckS3Path("CheckpointConfig.S3Uri", d.checkpoint_config().s3_uri());
}

// Managed spot (spec section 8): MaxWaitTimeInSeconds only with spot; with spot it is required
// and at least MaxRuntimeInSeconds (one day when absent).
template <typename Definition>
absl::Status CheckManagedSpot(const Definition& d) {
  const v1::StoppingCondition& stopping = d.stopping_condition();
  const bool spot = d.enable_managed_spot_training();
  if (!spot) {
    if (stopping.has_max_wait_time_in_seconds()) return ValidationError(kMaxWaitWithoutSpot);
    return absl::OkStatus();
  }
  if (!stopping.has_max_wait_time_in_seconds()) {  // ours
    return ValidationError(
        "Invalid MaxWaitTimeInSeconds. It is required when EnableManagedSpotTraining is set to "
        "true");
  }
  const int max_runtime = stopping.has_max_runtime_in_seconds() ? stopping.max_runtime_in_seconds()
                                                                : kDefaultMaxRuntimeInSeconds;
  if (stopping.max_wait_time_in_seconds() < max_runtime) {  // ours
    return ValidationError(absl::StrCat(
        "Invalid MaxWaitTimeInSeconds. It must be greater than or equal to MaxRuntimeInSeconds (",
        stopping.max_wait_time_in_seconds(), " < ", max_runtime, ")"));
  }
  return absl::OkStatus();
}

// --- CreateHyperParameterTuningJob ---

// Ours: integer and continuous bounds, and what each scaling type needs (spec section 3).
// MinValue == MaxValue is allowed for an integer range (a fixed value, one point) but not for a
// continuous one, whose scaling needs an interval of positive width.
absl::Status CheckIntegerRange(const v1::IntegerParameterRange& range) {
  const std::string where = absl::StrCat("IntegerParameterRange '", range.name(), "'");
  const std::optional<int64_t> min = ParseInteger(range.min_value());
  if (!min) {
    return ValidationError(
        absl::StrCat("MinValue '", range.min_value(), "' of ", where, " is not an integer."));
  }
  const std::optional<int64_t> max = ParseInteger(range.max_value());
  if (!max) {
    return ValidationError(
        absl::StrCat("MaxValue '", range.max_value(), "' of ", where, " is not an integer."));
  }
  if (*min > *max) {
    return ValidationError(absl::StrCat("MinValue (", range.min_value(), ") of ", where,
                                        " must be less than or equal to MaxValue (",
                                        range.max_value(), ")."));
  }
  if (range.scaling_type() == "ReverseLogarithmic") {
    return ValidationError(absl::StrCat(where,
                                        " cannot use ReverseLogarithmic scaling; it is supported "
                                        "only for ContinuousParameterRanges."));
  }
  if (range.scaling_type() == "Logarithmic" && *min <= 0) {
    return ValidationError(
        absl::StrCat(where, " uses Logarithmic scaling, which needs MinValue greater than 0."));
  }
  return absl::OkStatus();
}

absl::Status CheckContinuousRange(const v1::ContinuousParameterRange& range) {
  const std::string where = absl::StrCat("ContinuousParameterRange '", range.name(), "'");
  const std::optional<double> min = ParseNumber(range.min_value());
  if (!min) {
    return ValidationError(
        absl::StrCat("MinValue '", range.min_value(), "' of ", where, " is not a number."));
  }
  const std::optional<double> max = ParseNumber(range.max_value());
  if (!max) {
    return ValidationError(
        absl::StrCat("MaxValue '", range.max_value(), "' of ", where, " is not a number."));
  }
  if (*min >= *max) {
    return ValidationError(absl::StrCat("MinValue (", range.min_value(), ") of ", where,
                                        " must be less than MaxValue (", range.max_value(), ")."));
  }
  if (range.scaling_type() == "Logarithmic" && *min <= 0) {
    return ValidationError(
        absl::StrCat(where, " uses Logarithmic scaling, which needs MinValue greater than 0."));
  }
  if (range.scaling_type() == "ReverseLogarithmic" && (*min < 0 || *max >= 1)) {
    return ValidationError(absl::StrCat(
        where, " uses ReverseLogarithmic scaling, which needs 0 <= MinValue and MaxValue < 1."));
  }
  return absl::OkStatus();
}

// Ours, after the DG's rules (spec section 3): 30 tunable hyperparameters in total, 30 values per
// categorical range, names unique and not static, static + tunable + _tuning_objective_metric
// <= 100.
// With Autotune, AutoParameters have been turned into ranges (ApplyAutotune) and are only echoed.
absl::Status CheckRanges(const v1::ParameterRanges& ranges,
                         const google::protobuf::Map<std::string, std::string>& statics,
                         const Limits& limits, bool autotune) {
  if (ranges.auto_parameters_size() > 0 && !autotune) {
    return ValidationError(
        "AutoParameters are only supported with Autotune: add \"Autotune\": {\"Mode\": "
        "\"Enabled\"} to the request, or give the hyperparameters' ranges.");
  }
  const int tunable = ranges.integer_parameter_ranges_size() +
                      ranges.continuous_parameter_ranges_size() +
                      ranges.categorical_parameter_ranges_size();
  if (tunable > limits.max_tunable_parameters) {
    return ValidationError(absl::StrCat("The number of hyperparameter ranges (", tunable,
                                        ") exceeds the limit of ", limits.max_tunable_parameters,
                                        " tunable hyperparameters."));
  }
  for (const v1::CategoricalParameterRange& range : ranges.categorical_parameter_ranges()) {
    if (range.values_size() > limits.max_categorical_values) {
      return ValidationError(absl::StrCat("CategoricalParameterRange '", range.name(), "' has ",
                                          range.values_size(), " values; the limit is ",
                                          limits.max_categorical_values, "."));
    }
    std::set<std::string> values;
    for (const std::string& value : range.values()) {
      if (!values.insert(value).second) {
        return ValidationError(absl::StrCat("CategoricalParameterRange '", range.name(),
                                            "' lists the value '", value, "' more than once."));
      }
    }
  }
  std::vector<std::string> names;
  for (const auto& range : ranges.integer_parameter_ranges()) names.push_back(range.name());
  for (const auto& range : ranges.continuous_parameter_ranges()) names.push_back(range.name());
  for (const auto& range : ranges.categorical_parameter_ranges()) names.push_back(range.name());
  std::set<std::string> seen;
  for (const std::string& name : names) {
    if (!seen.insert(name).second) {
      return ValidationError(
          absl::StrCat("Hyperparameter '", name, "' is defined in more than one parameter range."));
    }
    if (statics.contains(name)) {
      return ValidationError(absl::StrCat("Hyperparameter '", name,
                                          "' cannot be both a static hyperparameter and a "
                                          "tunable parameter range."));
    }
  }
  const int statics_count =
      static_cast<int>(statics.size()) - (statics.contains(kTuningObjectiveMetric) ? 1 : 0);
  const int total = statics_count + tunable + 1;
  if (total > kMaxHyperParameters) {
    return ValidationError(absl::StrCat("The number of hyperparameters (", statics_count,
                                        " static + ", tunable,
                                        " tunable + _tuning_objective_metric = ", total,
                                        ") exceeds the limit of ", kMaxHyperParameters, "."));
  }
  for (const auto& range : ranges.integer_parameter_ranges()) {
    RETURN_IF_ERROR(CheckIntegerRange(range));
  }
  for (const auto& range : ranges.continuous_parameter_ranges()) {
    RETURN_IF_ERROR(CheckContinuousRange(range));
  }
  return absl::OkStatus();
}

// Ours (spec section 3 and the limits table): Grid is categorical-only and sizes itself (the
// sum over the definitions of each one's combinations); every other strategy needs
// MaxNumberOfTrainingJobs (SageMaker answers a missing one for non-Grid strategies with a
// ValidationException); both stay within the per-strategy limit.
absl::Status CheckStrategyAndLimits(const v1::CreateHyperParameterTuningJobRequest& r,
                                    const Limits& limits) {
  const v1::HyperParameterTuningJobConfig& config = r.hyper_parameter_tuning_job_config();
  const std::string& strategy = config.strategy();
  const v1::ResourceLimits& resource_limits = config.resource_limits();
  const int job_limit =
      strategy == "Random" ? limits.max_training_jobs_random : limits.max_training_jobs_other;
  if (strategy == "Grid") {
    int64_t combinations = 0;
    for (int i = 0; i < DefinitionCount(r); ++i) {
      const v1::ParameterRanges& ranges = DefinitionAt(r, i).ranges;
      if (ranges.integer_parameter_ranges_size() > 0 ||
          ranges.continuous_parameter_ranges_size() > 0) {
        return ValidationError(
            "The Grid strategy supports only CategoricalParameterRanges; IntegerParameterRanges "
            "and ContinuousParameterRanges must be empty.");
      }
      if (ranges.categorical_parameter_ranges_size() == 0) {
        return ValidationError("The Grid strategy needs at least one CategoricalParameterRange.");
      }
      combinations = std::min<int64_t>(combinations + GridCombinations(ranges),
                                       std::numeric_limits<int32_t>::max());
    }
    if (resource_limits.has_max_number_of_training_jobs() &&
        resource_limits.max_number_of_training_jobs() != combinations) {
      return ValidationError(
          absl::StrCat("For the Grid strategy, MaxNumberOfTrainingJobs (",
                       resource_limits.max_number_of_training_jobs(),
                       ") must equal the number of hyperparameter combinations (", combinations,
                       ") or be omitted."));
    }
    if (combinations > job_limit) {
      return ValidationError(absl::StrCat(
          "The Grid strategy would run ", combinations,
          " training jobs (one per hyperparameter combination), more than the limit of ", job_limit,
          " training jobs per tuning job."));
    }
  } else {
    if (!resource_limits.has_max_number_of_training_jobs()) {
      return ValidationError(
          absl::StrCat("MaxNumberOfTrainingJobs is required in ResourceLimits for the ", strategy,
                       " strategy."));
    }
    if (resource_limits.max_number_of_training_jobs() > job_limit) {
      return ValidationError(
          absl::StrCat("MaxNumberOfTrainingJobs (", resource_limits.max_number_of_training_jobs(),
                       ") exceeds the limit of ", job_limit,
                       " training jobs per tuning job for the ", strategy, " strategy."));
    }
  }
  if (resource_limits.max_parallel_training_jobs() > limits.max_parallel_training_jobs) {
    return ValidationError(
        absl::StrCat("MaxParallelTrainingJobs (", resource_limits.max_parallel_training_jobs(),
                     ") exceeds the limit of ", limits.max_parallel_training_jobs,
                     " concurrent training jobs per tuning job."));
  }
  return absl::OkStatus();
}

// Spec section 2; the texts are ours except kMaxResourceNotInferred.
absl::Status CheckHyperband(const v1::CreateHyperParameterTuningJobRequest& r) {
  const v1::HyperParameterTuningJobConfig& config = r.hyper_parameter_tuning_job_config();
  if (config.strategy() != "Hyperband") {
    if (config.has_strategy_config()) {
      return ValidationError("StrategyConfig is only supported when Strategy is Hyperband.");
    }
    return absl::OkStatus();
  }
  if (config.training_job_early_stopping_type() == "Auto") {
    return ValidationError(
        "TrainingJobEarlyStoppingType must be Off when Strategy is Hyperband; Hyperband has its "
        "own early stopping.");
  }
  ASSIGN_OR_RETURN(const int max_resource, HyperbandMaxResource(r));
  if (max_resource > kMaxHyperbandResource) {
    return ValidationError(absl::StrCat("MaxResource (", max_resource,
                                        ") must be less than or equal to ", kMaxHyperbandResource,
                                        "."));
  }
  const v1::HyperbandStrategyConfig& hyperband =
      config.strategy_config().hyperband_strategy_config();
  if (hyperband.has_min_resource() && hyperband.min_resource() > max_resource) {
    return ValidationError(absl::StrCat("MinResource (", hyperband.min_resource(),
                                        ") must be less than or equal to MaxResource (",
                                        max_resource, ")."));
  }
  return absl::OkStatus();
}

// One training-job definition's own rules (the objective and ranges that apply to it): what to
// run, the objective among its metrics, its resources, channels, ranges, S3 paths and spot.
// `where` names the definition in the texts about its members.
absl::Status CheckDefinition(const DefinitionView& view, const std::string& where,
                             const Limits& limits, bool autotune) {
  const v1::HyperParameterTrainingJobDefinition& definition = view.definition;
  const v1::HyperParameterAlgorithmSpecification& spec = definition.algorithm_specification();
  RETURN_IF_ERROR(CheckAlgorithmSpecification(spec, limits.max_metric_definitions));
  const std::string& objective = view.objective.metric_name();
  bool objective_defined = false;
  for (const v1::MetricDefinition& metric : spec.metric_definitions()) {
    objective_defined = objective_defined || metric.name() == objective;
  }
  // A built-in algorithm's metrics are SageMaker's own (AddBuiltInMetricDefinitions).
  if (spec.metric_definitions_size() == 0 &&
      IsBuiltInXgboost(spec.training_image(), definition.static_hyper_parameters())) {
    for (const v1::MetricDefinition& metric : BuiltInXgboostMetricDefinitions()) {
      objective_defined = objective_defined || metric.name() == objective;
    }
  }
  if (!objective_defined) return ValidationError(kMetricRequired);
  const bool resource_config = definition.has_resource_config();
  const bool tuning_resource_config = definition.has_hyper_parameter_tuning_resource_config();
  if (resource_config && tuning_resource_config) {  // ours
    return ValidationError(
        absl::StrCat("Provide either ResourceConfig or HyperParameterTuningResourceConfig in ",
                     where, ", not both."));
  }
  if (!resource_config && !tuning_resource_config) {  // ours
    return ValidationError(absl::StrCat(
        "Provide either ResourceConfig or HyperParameterTuningResourceConfig in ", where, "."));
  }
  RETURN_IF_ERROR(CheckChannels(definition.input_data_config()));
  RETURN_IF_ERROR(CheckRanges(view.ranges, definition.static_hyper_parameters(), limits, autotune));
  RETURN_IF_ERROR(CheckS3Paths(definition));
  return CheckManagedSpot(definition);
}

// Multi-algorithm tuning (TrainingJobDefinitions): the rules of the spec (no early stopping, no
// warm start, objective and ranges inside each definition) and amt-local's, all texts ours:
// every definition named, names unique; one objective direction for all, as BestTrainingJob
// compares their jobs (the SDK's HyperparameterTuner.create takes one objective_type too); no
// Hyperband, whose rungs are early stopping; the Environment maps at most 48 entries together.
absl::Status CheckMultiAlgorithm(const v1::CreateHyperParameterTuningJobRequest& r) {
  const v1::HyperParameterTuningJobConfig& config = r.hyper_parameter_tuning_job_config();
  if (config.has_hyper_parameter_tuning_job_objective() || config.has_parameter_ranges()) {
    return ValidationError(
        "With TrainingJobDefinitions, give each definition its TuningObjective and "
        "HyperParameterRanges; HyperParameterTuningJobConfig must not contain "
        "HyperParameterTuningJobObjective or ParameterRanges.");
  }
  if (config.training_job_early_stopping_type() == "Auto") {
    return ValidationError(
        "TrainingJobEarlyStoppingType must be Off with TrainingJobDefinitions: early stopping is "
        "available only when tuning a single algorithm (TrainingJobDefinition).");
  }
  if (config.strategy() == "Hyperband") {
    return ValidationError(
        "The Hyperband strategy needs a single TrainingJobDefinition: Hyperband stops training "
        "jobs early, and early stopping is available only when tuning a single algorithm.");
  }
  if (r.has_warm_start_config()) {
    return ValidationError(
        "WarmStartConfig is not supported with TrainingJobDefinitions: warm start is available "
        "only when tuning a single algorithm (TrainingJobDefinition).");
  }
  std::set<std::string> names;
  int environment_entries = 0;
  for (const v1::HyperParameterTrainingJobDefinition& d : r.training_job_definitions()) {
    if (!d.has_definition_name()) {
      return ValidationError(
          "Every item of TrainingJobDefinitions needs a DefinitionName when the tuning job has "
          "TrainingJobDefinitions.");
    }
    if (!names.insert(d.definition_name()).second) {
      return ValidationError(absl::StrCat("DefinitionName '", d.definition_name(),
                                          "' is used by more than one TrainingJobDefinitions "
                                          "item; definition names must be unique."));
    }
    if (!d.has_tuning_objective()) {
      return ValidationError(absl::StrCat("TrainingJobDefinitions item '", d.definition_name(),
                                          "' needs a TuningObjective."));
    }
    if (d.tuning_objective().type() != r.training_job_definitions(0).tuning_objective().type()) {
      return ValidationError(
          absl::StrCat("Every TuningObjective of TrainingJobDefinitions must have the same Type: '",
                       r.training_job_definitions(0).definition_name(), "' has ",
                       r.training_job_definitions(0).tuning_objective().type(), ", '",
                       d.definition_name(), "' has ", d.tuning_objective().type(), "."));
    }
    environment_entries += static_cast<int>(d.environment_size());
  }
  if (environment_entries > 48) {
    return ValidationError(absl::StrCat("The Environment maps of TrainingJobDefinitions have ",
                                        environment_entries,
                                        " entries together; the limit is 48 for all definitions."));
  }
  return absl::OkStatus();
}

absl::Status CheckTuningRules(const v1::CreateHyperParameterTuningJobRequest& r,
                              const Limits& limits) {
  const bool single = r.has_training_job_definition();
  const bool multi = IsMultiAlgorithm(r);
  if (single && multi) {  // ours
    return ValidationError(
        "Provide either TrainingJobDefinition or TrainingJobDefinitions, not both.");
  }
  if (!single && !multi) {  // ours
    return ValidationError("Provide either TrainingJobDefinition or TrainingJobDefinitions.");
  }
  if (multi) {
    RETURN_IF_ERROR(CheckMultiAlgorithm(r));
  } else if (!r.hyper_parameter_tuning_job_config().has_hyper_parameter_tuning_job_objective()) {
    return ValidationError(  // ours
        "HyperParameterTuningJobObjective is required in HyperParameterTuningJobConfig when "
        "TrainingJobDefinition is provided.");
  }
  for (int i = 0; i < DefinitionCount(r); ++i) {
    const std::string where =
        multi ? absl::StrCat("TrainingJobDefinitions item '",
                             r.training_job_definitions(i).definition_name(), "'")
              : "TrainingJobDefinition";
    RETURN_IF_ERROR(CheckDefinition(DefinitionAt(r, i), where, limits, r.has_autotune()));
  }
  RETURN_IF_ERROR(CheckStrategyAndLimits(r, limits));
  return CheckHyperband(r);
}

absl::Status CheckTrainingRules(const v1::CreateTrainingJobRequest& r) {
  RETURN_IF_ERROR(CheckAlgorithmSpecification(r.algorithm_specification(), 40));
  RETURN_IF_ERROR(CheckChannels(r.input_data_config()));
  RETURN_IF_ERROR(CheckS3Paths(r));
  return CheckManagedSpot(r);
}

absl::Status CheckMembersOf(const google::protobuf::Message& request) {
  ConstraintViolations violations;
  CheckMemberConstraints(request, "", &violations);
  return violations.ToStatus();
}

}  // namespace

absl::StatusOr<v1::CreateHyperParameterTuningJobRequest> CompleteCreateHyperParameterTuningJob(
    const v1::CreateHyperParameterTuningJobRequest& r, const Limits& limits) {
  RETURN_IF_ERROR(CheckMembersOf(r));
  v1::CreateHyperParameterTuningJobRequest completed = r;
  RETURN_IF_ERROR(ApplyAutotune(completed));
  RETURN_IF_ERROR(CheckTuningRules(completed, limits));
  AddBuiltInMetricDefinitions(completed);
  return completed;
}

absl::Status ValidateCreateHyperParameterTuningJob(
    const v1::CreateHyperParameterTuningJobRequest& r, const Limits& limits) {
  return CompleteCreateHyperParameterTuningJob(r, limits).status();
}

absl::Status ValidateCreateTrainingJob(const v1::CreateTrainingJobRequest& r) {
  RETURN_IF_ERROR(CheckMembersOf(r));
  return CheckTrainingRules(r);
}

absl::Status ValidateListHyperParameterTuningJobs(
    const v1::ListHyperParameterTuningJobsRequest& r) {
  return CheckMembersOf(r);
}

absl::Status ValidateListTrainingJobs(const v1::ListTrainingJobsRequest& r) {
  return CheckMembersOf(r);
}

absl::Status ValidateUpdateTrainingJob(const v1::UpdateTrainingJobRequest& r) {
  return CheckMembersOf(r);
}

absl::Status ValidateAddTags(const v1::AddTagsRequest& r) { return CheckMembersOf(r); }
absl::Status ValidateListTags(const v1::ListTagsRequest& r) { return CheckMembersOf(r); }
absl::Status ValidateDeleteTags(const v1::DeleteTagsRequest& r) { return CheckMembersOf(r); }

absl::Status ValidateListTrainingJobsForHyperParameterTuningJob(
    const v1::ListTrainingJobsForHyperParameterTuningJobRequest& r) {
  return CheckMembersOf(r);
}

absl::Status ValidateTuningJobName(const std::optional<std::string>& name,
                                   std::string_view member) {
  ConstraintViolations violations;
  CheckStringMember(name, std::string(member), TuningJobNameShape(), /*required=*/true,
                    &violations);
  return violations.ToStatus();
}

absl::Status ValidateTrainingJobName(const std::optional<std::string>& name,
                                     std::string_view member) {
  ConstraintViolations violations;
  CheckStringMember(name, std::string(member), TrainingJobNameShape(), /*required=*/true,
                    &violations);
  return violations.ToStatus();
}

int64_t GridCombinations(const v1::ParameterRanges& ranges) {
  if (ranges.categorical_parameter_ranges_size() == 0) return 0;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t combinations = 1;
  for (const v1::CategoricalParameterRange& range : ranges.categorical_parameter_ranges()) {
    const int64_t values = range.values_size();
    if (values == 0) return 0;
    if (combinations > kMax / values) return kMax;
    combinations *= values;
  }
  return combinations;
}

bool IsEpochsHyperParameter(std::string_view name) {
  return std::find(std::begin(kEpochKeys), std::end(kEpochKeys), name) != std::end(kEpochKeys);
}

std::optional<int> EpochsHyperParameter(
    const google::protobuf::Map<std::string, std::string>& hyper_parameters) {
  for (const char* key : kEpochKeys) {
    const auto it = hyper_parameters.find(key);
    if (it == hyper_parameters.end()) continue;
    std::string_view value = it->second;
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    const std::optional<int64_t> epochs = ParseInteger(value);
    if (!epochs || *epochs < 1 || *epochs > std::numeric_limits<int>::max()) return std::nullopt;
    return static_cast<int>(*epochs);
  }
  return std::nullopt;
}

absl::StatusOr<int> HyperbandMaxResource(const v1::CreateHyperParameterTuningJobRequest& r) {
  const v1::HyperbandStrategyConfig& hyperband =
      r.hyper_parameter_tuning_job_config().strategy_config().hyperband_strategy_config();
  if (hyperband.has_max_resource()) return hyperband.max_resource();
  const std::optional<int> epochs =
      EpochsHyperParameter(r.training_job_definition().static_hyper_parameters());
  if (!epochs) return ValidationError(kMaxResourceNotInferred);
  return *epochs;
}

}  // namespace amt::validation
