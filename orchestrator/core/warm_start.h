// Warm start (WarmStartConfig): the checks on a child tuning job's parents, the parents' training
// jobs as the child's prior observations, and OverallBestTrainingJob. Pure functions over records
// the caller looks up; no I/O. SageMaker's texts for these rules are UNCONFIRMED (spec §4): the
// wording is ours and docs/sagemaker-mapping.md's table of choices lists the rules.
#ifndef AMT_ORCHESTRATOR_CORE_WARM_START_H_
#define AMT_ORCHESTRATOR_CORE_WARM_START_H_

#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "amt/v1/state.pb.h"
#include "orchestrator/search/strategy.h"

namespace amt::core {

// Checks `request`'s WarmStartConfig. `parents[i]` is the record of the i-th parent it names, or
// nullptr when no tuning job has that name. Errors: ResourceNotFound for a missing parent;
// ValidationException when the strategy is not Bayesian or Random, or a parent is not Completed,
// Stopped or Failed, has another objective, another number of static plus tunable
// hyperparameters, a tunable of another type, or more than 10 changes (a tunable made static
// counts 1, or its number of values when categorical; a changed static value counts 2).
absl::Status CheckWarmStart(const v1::CreateHyperParameterTuningJobRequest& request,
                            const std::vector<const v1::TuningJobRecord*>& parents);

// The parents' training jobs with an objective (`parent_jobs`, all jobs of all parents) as
// observations in `tuning`'s search space: every hyperparameter tunable here, whether the parent
// tuned it or held it static. Empty when `tuning` has no WarmStartConfig.
std::vector<search::PriorObservation> WarmStartObservations(
    const v1::TuningJobRecord& tuning,
    const std::vector<const v1::TrainingJobRecord*>& parent_jobs);

// OverallBestTrainingJob: for IdenticalDataAndAlgorithm, the best of the tuning job's own
// BestTrainingJob and its parents' (`parents`, nullptr entries skipped; the parents' own parents
// are not looked at, as in SageMaker); nullopt otherwise or when no job has an objective.
std::optional<v1::HyperParameterTrainingJobSummary> OverallBestTrainingJob(
    const v1::DescribeHyperParameterTuningJobResponse& tuning,
    const std::vector<const v1::TuningJobRecord*>& parents);

}  // namespace amt::core

#endif  // AMT_ORCHESTRATOR_CORE_WARM_START_H_
