// A tuning job's own rules: one or several training-job definitions, the strategy and its job
// limits, Hyperband (validation_internal.h); and the public helpers about Grid and Hyperband.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "orchestrator/validation/definitions.h"
#include "orchestrator/validation/validation.h"
#include "orchestrator/validation/validation_internal.h"

namespace amt::validation {

using internal::ParseInteger;

namespace {

// SageMaker.
constexpr char kMaxResourceNotInferred[] =
    "MaxResource parameter is not provided and could not be inferred from provided static "
    "hyperparameters of TrainingJobDefinition.";

// The static hyperparameters Hyperband reads MaxResource from, in SageMaker's order.
constexpr const char* kEpochKeys[] = {"epochs", "numepochs", "n-epochs", "n_epochs", "num_epochs"};

}  // namespace

namespace internal {
namespace {

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

}  // namespace

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

}  // namespace internal

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
