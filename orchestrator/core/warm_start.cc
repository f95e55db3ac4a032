#include "orchestrator/core/warm_start.h"

#include <map>
#include <string>

#include "common/errors.h"
#include "orchestrator/core/tuning_job.h"
#include "orchestrator/validation/definitions.h"

namespace amt::core {
namespace {

// "Continuous", "Integer" or "Categorical" for each tunable hyperparameter; Auto ranges count as
// "Auto" (their type is decided by SageMaker).
std::map<std::string, std::string> TunableTypes(const v1::ParameterRanges& ranges) {
  std::map<std::string, std::string> out;
  for (const auto& r : ranges.continuous_parameter_ranges()) out[r.name()] = "Continuous";
  for (const auto& r : ranges.integer_parameter_ranges()) out[r.name()] = "Integer";
  for (const auto& r : ranges.categorical_parameter_ranges()) out[r.name()] = "Categorical";
  for (const auto& r : ranges.auto_parameters()) out[r.name()] = "Auto";
  return out;
}

// Static plus tunable hyperparameters, without the objective AMT adds to the statics.
size_t HyperParameterCount(const v1::HyperParameterTrainingJobDefinition& definition,
                           const v1::ParameterRanges& ranges) {
  size_t n = TunableTypes(ranges).size();
  for (const auto& [name, value] : definition.static_hyper_parameters()) {
    n += name == kTuningObjectiveKey ? 0 : 1;
  }
  return n;
}

// Warm start's "changes" from a parent (spec §4): a hyperparameter tunable in the parent and
// static here counts 1, or its number of values when categorical; a static value changed counts 2.
int WarmStartChanges(const v1::HyperParameterTrainingJobDefinition& parent_definition,
                     const v1::ParameterRanges& parent_ranges,
                     const v1::HyperParameterTrainingJobDefinition& definition) {
  const auto& parent_statics = parent_definition.static_hyper_parameters();
  std::map<std::string, int> weight;  // parent's tunables: what making them static costs
  for (const auto& [name, type] : TunableTypes(parent_ranges)) weight[name] = 1;
  for (const auto& r : parent_ranges.categorical_parameter_ranges()) {
    weight[r.name()] = r.values_size();
  }
  int changes = 0;
  for (const auto& [name, value] : definition.static_hyper_parameters()) {
    if (name == kTuningObjectiveKey) continue;
    if (auto w = weight.find(name); w != weight.end()) {
      changes += w->second;
    } else if (auto p = parent_statics.find(name);
               p != parent_statics.end() && p->second != value) {
      changes += 2;
    }
  }
  return changes;
}

// The checks of one existing parent named `name`.
absl::Status CheckParent(const v1::CreateHyperParameterTuningJobRequest& request,
                         const std::string& name, const v1::TuningJobRecord& parent) {
  const auto& config = request.hyper_parameter_tuning_job_config();
  const auto& objective = config.hyper_parameter_tuning_job_objective();
  const auto& pd = parent.describe();
  const std::string& status = pd.hyper_parameter_tuning_job_status();
  if (status != kTuningCompleted && status != kTuningStopped && status != kTuningFailed) {
    return ValidationError("The parent tuning job " + name + " is " + status +
                           "; warm start needs parent tuning jobs that are Completed, Stopped "
                           "or Failed.");
  }
  if (validation::IsMultiAlgorithm(pd)) {  // ours
    return ValidationError("The parent tuning job " + name +
                           " has TrainingJobDefinitions; warm start is available only from and "
                           "for tuning jobs of a single algorithm (TrainingJobDefinition).");
  }
  const auto& pconfig = pd.hyper_parameter_tuning_job_config();
  const auto& pobjective = pconfig.hyper_parameter_tuning_job_objective();
  if (pobjective.metric_name() != objective.metric_name() ||
      pobjective.type() != objective.type()) {
    return ValidationError("The parent tuning job " + name + " has the objective " +
                           pobjective.type() + " " + pobjective.metric_name() +
                           "; warm start needs the same objective as this tuning job, " +
                           objective.type() + " " + objective.metric_name() + ".");
  }
  const size_t count =
      HyperParameterCount(request.training_job_definition(), config.parameter_ranges());
  const size_t pcount =
      HyperParameterCount(pd.training_job_definition(), pconfig.parameter_ranges());
  if (pcount != count) {
    return ValidationError("The parent tuning job " + name + " has " + std::to_string(pcount) +
                           " static and tunable hyperparameters and this tuning job has " +
                           std::to_string(count) +
                           "; warm start needs the same number (a hyperparameter may move "
                           "between static and tunable).");
  }
  if (const int changes = WarmStartChanges(pd.training_job_definition(), pconfig.parameter_ranges(),
                                           request.training_job_definition());
      changes > 10) {
    return ValidationError(
        "This tuning job makes " + std::to_string(changes) +
        " changes to the hyperparameters of the parent tuning job " + name +
        "; warm start allows at most 10 (a tunable hyperparameter made static counts 1, or its "
        "number of values when categorical; a changed static value counts 2).");
  }
  const auto types = TunableTypes(config.parameter_ranges());
  for (const auto& [hp, type] : TunableTypes(pconfig.parameter_ranges())) {
    const auto mine = types.find(hp);
    if (mine != types.end() && mine->second != type && mine->second != "Auto" && type != "Auto") {
      return ValidationError("The hyperparameter " + hp + " is " + type +
                             " in the parent tuning job " + name + " and " + mine->second +
                             " here; warm start does not allow changing its type.");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckWarmStart(const v1::CreateHyperParameterTuningJobRequest& request,
                            const std::vector<const v1::TuningJobRecord*>& parents) {
  const auto& config = request.hyper_parameter_tuning_job_config();
  if (config.strategy() != "Bayesian" && config.strategy() != "Random") {
    return ValidationError(
        "Warm start is available for the Bayesian and Random strategies; this tuning job uses " +
        config.strategy() + ".");
  }
  const auto& named = request.warm_start_config().parent_hyper_parameter_tuning_jobs();
  for (int i = 0; i < named.size(); ++i) {
    const std::string& name = named[i].hyper_parameter_tuning_job_name();
    const v1::TuningJobRecord* parent =
        static_cast<size_t>(i) < parents.size() ? parents[static_cast<size_t>(i)] : nullptr;
    if (parent == nullptr) return TuningJobNotFound(name);
    if (auto status = CheckParent(request, name, *parent); !status.ok()) return status;
  }
  return absl::OkStatus();
}

std::vector<search::PriorObservation> WarmStartObservations(
    const v1::TuningJobRecord& tuning,
    const std::vector<const v1::TrainingJobRecord*>& parent_jobs) {
  std::vector<search::PriorObservation> out;
  const auto& d = tuning.describe();
  if (!d.has_warm_start_config()) return out;
  const auto types = TunableTypes(d.hyper_parameter_tuning_job_config().parameter_ranges());
  for (const auto* job : parent_jobs) {
    if (job->objective_status() != "Succeeded" || !job->has_objective()) continue;
    search::PriorObservation observation;
    observation.objective = job->objective();
    const auto& hps = job->describe().hyper_parameters();
    for (const auto& [name, type] : types) {
      if (auto it = hps.find(name); it != hps.end()) observation.params[name] = it->second;
    }
    out.push_back(std::move(observation));
  }
  return out;
}

std::optional<v1::HyperParameterTrainingJobSummary> OverallBestTrainingJob(
    const v1::DescribeHyperParameterTuningJobResponse& tuning,
    const std::vector<const v1::TuningJobRecord*>& parents) {
  if (!tuning.has_warm_start_config() ||
      tuning.warm_start_config().warm_start_type() != "IdenticalDataAndAlgorithm") {
    return std::nullopt;
  }
  const std::string& type =
      tuning.hyper_parameter_tuning_job_config().hyper_parameter_tuning_job_objective().type();
  const v1::HyperParameterTrainingJobSummary* best =
      tuning.has_best_training_job() ? &tuning.best_training_job() : nullptr;
  for (const auto* parent : parents) {
    if (parent == nullptr || !parent->describe().has_best_training_job()) continue;
    const auto& candidate = parent->describe().best_training_job();
    if (best == nullptr ||
        Better(candidate.final_hyper_parameter_tuning_job_objective_metric().value(),
               best->final_hyper_parameter_tuning_job_objective_metric().value(), type)) {
      best = &candidate;
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

}  // namespace amt::core
