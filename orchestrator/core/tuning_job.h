// Tuning-job bookkeeping: pure functions that derive what SageMaker reports about a tuning job
// (counters, BestTrainingJob, job summaries, the 1% improvement rule) from its training jobs.
// Counters are always recomputed from the training jobs, so they cannot drift.
#ifndef AMT_ORCHESTRATOR_CORE_TUNING_JOB_H_
#define AMT_ORCHESTRATOR_CORE_TUNING_JOB_H_

#include <string>
#include <vector>

#include "amt/v1/state.pb.h"

namespace amt::core {

// HyperParameterTrainingJobSummary of a tuning-launched training job.
v1::HyperParameterTrainingJobSummary SummaryOf(
    const v1::TrainingJobRecord& job, const v1::HyperParameterTuningJobObjective& objective);

// True when `candidate` beats `best` for the objective type (Minimize unless "Maximize").
bool Better(double candidate, double best, const std::string& objective_type);

// True when `candidate` improves on `best` by at least 1% of |best| (SageMaker's "by 1% or greater"
// for BestObjectiveNotImproving and convergence; relative improvement is our reading, see README).
bool ImprovesByOnePercent(double candidate, double best, const std::string& objective_type);

// Recomputes TrainingJobStatusCounters, ObjectiveStatusCounters and BestTrainingJob of `tuning`
// from `jobs` (all training jobs it launched). Best: highest/lowest objective among Succeeded jobs,
// the earliest launched on ties.
void RecomputeTuningView(v1::TuningJobRecord& tuning,
                         const std::vector<const v1::TrainingJobRecord*>& jobs);

// Number of its training jobs not yet terminal.
int RunningJobs(const std::vector<const v1::TrainingJobRecord*>& jobs);

// Name of the index-th (1-based) training job of a tuning job:
// <tuning-name>-<NNN>-<8 lowercase hex>, the hex a hash of (tuning ARN, creation time, index) so
// names are stable for a job but differ between tuning jobs. (SageMaker's exact scheme is
// UNCONFIRMED; this is the commonly seen shape.)
std::string TrainingJobNameFor(const v1::TuningJobRecord& tuning, int index);

}  // namespace amt::core

#endif  // AMT_ORCHESTRATOR_CORE_TUNING_JOB_H_
