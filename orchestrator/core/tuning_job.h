// Tuning-job status machine and bookkeeping: pure functions that move a TuningJobRecord through
// SageMaker's HyperParameterTuningJobStatus (InProgress -> Stopping -> Stopped, InProgress ->
// Completed | Failed), decide its completion criteria (EndCause) and derive what SageMaker
// reports about it (counters, BestTrainingJob, job summaries, the 1% improvement rule) from its
// training jobs. Counters are always recomputed from the training jobs, so they cannot drift.
// No I/O; the caller persists the record.
#ifndef AMT_ORCHESTRATOR_CORE_TUNING_JOB_H_
#define AMT_ORCHESTRATOR_CORE_TUNING_JOB_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "amt/v1/state.pb.h"

namespace amt::core {

// HyperParameterTuningJobStatus values.
inline constexpr std::string_view kTuningInProgress = "InProgress";
inline constexpr std::string_view kTuningCompleted = "Completed";
inline constexpr std::string_view kTuningFailed = "Failed";
inline constexpr std::string_view kTuningStopping = "Stopping";
inline constexpr std::string_view kTuningStopped = "Stopped";

// The static hyperparameter SageMaker adds to a tuning job's training jobs: the objective's name.
inline constexpr char kTuningObjectiveKey[] = "_tuning_objective_metric";

// Why a tuning job stops launching and ends before its budget is spent (TuningJobRecord.end_cause
// keeps the name, so records written by earlier versions read the same).
enum class EndCause {
  kNone,          // still launching, or ending because its budget is spent
  kEarlyFailure,  // its first N finished training jobs all failed ("failed")
  kTarget,        // TargetObjectiveMetricValue reached ("target")
  kNotImproving,  // BestObjectiveNotImproving ("not_improving")
  kRuntime,       // ResourceLimits.MaxRuntimeInSeconds ("runtime")
  kConvergence,   // ConvergenceDetected.CompleteOnConvergence Enabled ("convergence")
};

// CompleteOnConvergence's rule (AWS: "an internal algorithm" decides that an improvement of more
// than 1% over the best job is unlikely; "no job returns significant improvement"): converged
// once this many consecutive jobs with an objective have each failed to improve the best by 1%.
inline constexpr int kDefaultConvergenceJobs = 10;
// What RecomputeTuningView counts, over some of a tuning job's training jobs taken in launch
// order.
struct JobTally {
  v1::TrainingJobStatusCounters status;
  v1::ObjectiveStatusCounters objective;
  const v1::TrainingJobRecord* best = nullptr;  // the earliest launched among the best
  void Add(const v1::TrainingJobRecord& job, const std::string& objective_type);
};

// The leading run of a tuning job's training jobs (in launch order) that have all ended, tallied
// once: an ended job never changes, so RecomputeTuningView and RunningJobs go through only the
// jobs after it (about MaxParallelTrainingJobs of them), and a job's bookkeeping does not cost
// more the more jobs came before it. Valid for one tuning job's list of jobs while jobs are only
// appended to it; a default-constructed one starts over.
struct SettledJobs {
  size_t count = 0;
  JobTally tally;
  // Extends the run over the jobs after it that have ended.
  void Advance(const std::vector<const v1::TrainingJobRecord*>& jobs,
               const std::string& objective_type);
};

EndCause EndCauseOf(const v1::TuningJobRecord& tuning);
// Records the cause; the caller stops the running training jobs.
void BeginEnding(v1::TuningJobRecord& tuning, EndCause cause);

// ResourceNotFound "Amazon SageMaker can't find a tuning job called <name>. ..."
absl::Status TuningJobNotFound(std::string_view name);

// InProgress or Stopping: it still has work to finish.
bool IsActive(const v1::TuningJobRecord& tuning);
// InProgress, no end cause and budget left: it may launch another training job.
bool MayLaunch(const v1::TuningJobRecord& tuning);

// StopHyperParameterTuningJob accepted: Stopping, stop_requested.
void MarkTuningStopping(v1::TuningJobRecord& tuning, double now);

// Bookkeeping after one of its training jobs (`job`) ended: finished/succeeded counts (a
// RetryableError, an infrastructure failure, is not counted as finished), the
// not-improving streak (1% rule), the recomputed view over `jobs` (all its training jobs).
// Returns the completion criterion this reaches while the tuning job is InProgress and not yet
// ending (kNone when none): early failure after `early_failure_attempts` finished jobs without a
// success, TargetObjectiveMetricValue, BestObjectiveNotImproving, or convergence (with
// CompleteOnConvergence Enabled: `convergence_jobs` jobs in a row not improving by 1%; it sets
// TuningJobCompletionDetails.ConvergenceDetectedTime).
EndCause RecordFinishedJob(v1::TuningJobRecord& tuning, const v1::TrainingJobRecord& job,
                           const std::vector<const v1::TrainingJobRecord*>& jobs,
                           int early_failure_attempts, double now,
                           int convergence_jobs = kDefaultConvergenceJobs,
                           SettledJobs* settled = nullptr);

// Ends the tuning job when nothing is left to run: Stopped after a stop; Failed after early
// failure (SageMaker's "No training job succeeded after N attempts" text) or when no job
// succeeded; else Completed once it is ending or its budget is spent. Sets the end time and
// ConsumedResources. Returns whether it ended (false while `jobs` has a running job or trials
// remain to launch).
bool EndIfDone(v1::TuningJobRecord& tuning, const std::vector<const v1::TrainingJobRecord*>& jobs,
               int early_failure_attempts, double now, SettledJobs* settled = nullptr);

// Why `job` was stopped, for people watching a tuning job (WatchHyperParameterTuningJob's
// StopReasons); "" when it was not. An early stop quotes the decision that took it.
std::string StopReasonOf(const v1::TrainingJobRecord& job, const v1::TuningJobRecord& tuning);

// HyperParameterTrainingJobSummary of a training job `tuning` launched: the objective metric of
// the definition it was launched from, and that definition's name (TrainingJobDefinitionName)
// when it has one.
v1::HyperParameterTrainingJobSummary SummaryOf(const v1::TrainingJobRecord& job,
                                               const v1::TuningJobRecord& tuning);

// True when `candidate` beats `best` for the objective type (Minimize unless "Maximize").
bool Better(double candidate, double best, const std::string& objective_type);

// True when `candidate` improves on `best` by at least 1% of |best| (SageMaker's "by 1% or greater"
// for BestObjectiveNotImproving and convergence; relative improvement is our reading, see
// docs/sagemaker-mapping.md).
bool ImprovesByOnePercent(double candidate, double best, const std::string& objective_type);

// Recounts what RecordFinishedJob counts as jobs end (finished jobs, for early failure: all but
// RetryableError ones; succeeded ones) from `jobs`. For a restart: a job's end and its tuning
// job's record are two writes, and amtd may have died between them.
void RecountFinishedJobs(v1::TuningJobRecord& tuning,
                         const std::vector<const v1::TrainingJobRecord*>& jobs);

// Recomputes TrainingJobStatusCounters, ObjectiveStatusCounters and BestTrainingJob of `tuning`
// from `jobs` (all training jobs it launched, in launch order). Best: highest/lowest objective
// among Succeeded jobs, the earliest launched on ties. With `settled` (kept by the caller for
// this tuning job), the ended leading jobs are counted from it.
void RecomputeTuningView(v1::TuningJobRecord& tuning,
                         const std::vector<const v1::TrainingJobRecord*>& jobs,
                         SettledJobs* settled = nullptr);

// Number of its training jobs not yet terminal (those after `settled`'s run, when given).
int RunningJobs(const std::vector<const v1::TrainingJobRecord*>& jobs,
                const SettledJobs* settled = nullptr);

// Name of the index-th (1-based) training job of a tuning job:
// <tuning-name>-<NNN>-<8 lowercase hex>, the hex a hash of (tuning ARN, creation time, index) so
// names are stable for a job but differ between tuning jobs. (SageMaker's exact scheme is
// UNCONFIRMED; this is the commonly seen shape.)
std::string TrainingJobNameFor(const v1::TuningJobRecord& tuning, int index);

}  // namespace amt::core

#endif  // AMT_ORCHESTRATOR_CORE_TUNING_JOB_H_
