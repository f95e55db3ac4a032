// Training-job status machine: pure functions that move a TrainingJobRecord through SageMaker's
// TrainingJobStatus / SecondaryStatus pairs, keeping SecondaryStatusTransitions, times and the
// tuning-job view (ObjectiveStatus) consistent. No I/O; the caller persists the record.
#ifndef AMT_ORCHESTRATOR_CORE_TRAINING_JOB_H_
#define AMT_ORCHESTRATOR_CORE_TRAINING_JOB_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "amt/v1/state.pb.h"
#include "orchestrator/core/worker_pool.h"  // WorkerNeed

namespace amt::core {

// TrainingJobStatus values.
inline constexpr std::string_view kInProgress = "InProgress";
inline constexpr std::string_view kCompleted = "Completed";
inline constexpr std::string_view kFailed = "Failed";
inline constexpr std::string_view kStopping = "Stopping";
inline constexpr std::string_view kStopped = "Stopped";

// Why a training job is being stopped; decides its final SecondaryStatus and StatusMessage.
enum class StopCause {
  kUser,           // StopTrainingJob
  kTuningJob,      // its tuning job was stopped or ended
  kMaxRuntime,     // StoppingCondition.MaxRuntimeInSeconds
  kEarlyStopping,  // AUTO early stopping / Hyperband
  kMaxWait,        // StoppingCondition.MaxWaitTimeInSeconds (managed spot)
};
std::string_view StopCauseName(StopCause cause);

// True for Completed, Failed and Stopped.
bool IsTerminal(const v1::TrainingJobRecord& job);

// Appends a SecondaryStatusTransition (closing the open one) and sets SecondaryStatus and
// LastModifiedTime. To the status already current it only updates that entry's StatusMessage
// (and LastModifiedTime when the message changes): SageMaker keeps one entry per run of a status.
void AddTransition(v1::TrainingJobRecord& job, std::string_view secondary, std::string_view message,
                   double now);

// InProgress/Starting: a freshly accepted job.
void MarkCreated(v1::TrainingJobRecord& job, double now);
// Still Starting: waiting for a free worker slot.
void MarkWaitingForCapacity(v1::TrainingJobRecord& job, double now);
// Managed spot: the current attempt's instances are taken back (Interrupted); the job restarts.
void MarkInterrupted(v1::TrainingJobRecord& job, double now);
// The attempt ended and the job starts again in place (a Spot interruption, or a retry after an
// internal error): its training time so far is kept, and it is back to Starting with `message`,
// waiting to be launched again.
void MarkRestarting(v1::TrainingJobRecord& job, double now, std::string_view message);
// Assigned to a worker: instances "launched".
void MarkLaunching(v1::TrainingJobRecord& job, double now);
// The process runs: Downloading, then Training; sets TrainingStartTime.
void MarkTraining(v1::TrainingJobRecord& job, double now);
// Stop accepted: Stopping/Stopping with `message`. Records the cause for the final status.
void MarkStopping(v1::TrainingJobRecord& job, StopCause cause, double now,
                  std::string_view message = "Stopping the training job");

// The process ended. `exit_code`/`signal` as reported; `failure_reason` from output/failure or the
// launcher. Chooses Completed, Failed or Stopped (the latter when a stop was requested) and fills
// end times, durations, FailureReason, ObjectiveStatus and the failure kind.
struct ExitReport {
  int exit_code = 0;
  int signal = 0;
  std::string failure_reason;
  bool launch_failed = false;
  bool model_uploaded = false;
  // An internal fault (worker lost): failed as RetryableError with an InternalServerError reason.
  bool internal_error = false;
  // Why the worker could not save model.tar.gz or output.tar.gz (a full disk, say), empty when
  // it could. A job that exited 0 then fails, as on SageMaker when the upload to S3 fails:
  // RetryableError, InternalServerError.
  std::string upload_failure;
};
void MarkExited(v1::TrainingJobRecord& job, const ExitReport& report, double now);

// A job that never reached a worker is stopped at once: Stopped/Stopped without running.
void MarkStoppedBeforeStart(v1::TrainingJobRecord& job, StopCause cause, double now);

// FailureReason text for an exit, following SageMaker: the failure file's text (category prefix
// "AlgorithmError: " added unless it already starts with "AlgorithmError:" or "ClientError:"),
// else "AlgorithmError: ..." describing the exit; cut to 1,024 characters.
std::string FailureReasonFor(const ExitReport& report);

// What a training job takes of its worker (worker_pool.h): its instances (ResourceConfig's
// InstanceCount, at least 1) and its InstanceType's GPUs times them.
WorkerNeed NeedOf(const v1::ResourceConfig& resources);
WorkerNeed NeedOf(const v1::TrainingJobRecord& job);

// ValidationException "Requested resource not found.": SageMaker's answer to a Describe of a
// training job it does not have.
absl::Status TrainingJobNotFound();

}  // namespace amt::core

#endif  // AMT_ORCHESTRATOR_CORE_TRAINING_JOB_H_
