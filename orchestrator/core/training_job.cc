#include "orchestrator/core/training_job.h"

#include <algorithm>
#include <cmath>

#include "common/errors.h"
#include "common/instance_type.h"
#include "orchestrator/spot/spot.h"

namespace amt::core {
namespace {

constexpr size_t kMaxFailureReason = 1024;

void SetStatus(v1::TrainingJobRecord& job, std::string_view status) {
  job.mutable_describe()->set_training_job_status(std::string(status));
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// SageMaker reports whole seconds, at least 1 for a job that ran.
int WholeSeconds(double seconds) {
  return std::max(1, static_cast<int>(std::ceil(seconds - 1e-9)));
}

void FinishTimes(v1::TrainingJobRecord& job, double now) {
  auto* d = job.mutable_describe();
  d->set_training_end_time(now);
  if (d->enable_managed_spot_training()) {
    // Spot: the training phases of every attempt, billed at the spot discount (spec §8).
    const double current =
        job.attempt_training_start() > 0 ? now - job.attempt_training_start() : 0;
    const double trained = job.trained_seconds() + current;
    if (trained <= 0 && !d->has_training_start_time()) return;
    const int seconds = WholeSeconds(trained);
    d->set_training_time_in_seconds(seconds);
    spot::SpotOptions billing;
    billing.discount = job.spot_discount();
    d->set_billable_time_in_seconds(spot::BillableSeconds(billing, seconds));
    return;
  }
  if (d->has_training_start_time()) {
    const int seconds = WholeSeconds(now - d->training_start_time());
    d->set_training_time_in_seconds(seconds);
    d->set_billable_time_in_seconds(seconds);
  }
}

// ObjectiveStatus of a tuning-launched job once it is terminal: Succeeded when an objective value
// was emitted and the job Completed or was Stopped (SageMaker keeps the last emitted value of a
// stopped job), Failed otherwise.
void SetFinalObjectiveStatus(v1::TrainingJobRecord& job) {
  if (job.tuning_job_name().empty()) return;
  const auto& status = job.describe().training_job_status();
  const bool usable = job.has_objective() && (status == kCompleted || status == kStopped);
  job.set_objective_status(usable ? "Succeeded" : "Failed");
}

StopCause CauseFromName(std::string_view name) {
  if (name == "max_runtime") return StopCause::kMaxRuntime;
  if (name == "tuning") return StopCause::kTuningJob;
  if (name == "early_stopping") return StopCause::kEarlyStopping;
  if (name == "max_wait") return StopCause::kMaxWait;
  return StopCause::kUser;
}

void MarkStoppedFinal(v1::TrainingJobRecord& job, double now) {
  const StopCause cause = CauseFromName(job.stop_cause());
  SetStatus(job, kStopped);
  if (cause == StopCause::kMaxRuntime) {
    AddTransition(job, "MaxRuntimeExceeded",
                  "Training job exceeded the MaxRuntimeInSeconds provided", now);
  } else if (cause == StopCause::kMaxWait) {
    AddTransition(job, "MaxWaitTimeExceeded",
                  "Training job exceeded the MaxWaitTimeInSeconds provided", now);
  } else if (cause == StopCause::kEarlyStopping) {
    AddTransition(job, "Stopped", "Training job stopped by early stopping", now);
  } else {
    AddTransition(job, "Stopped", "Training job stopped", now);
  }
}

}  // namespace

std::string_view StopCauseName(StopCause cause) {
  switch (cause) {
    case StopCause::kUser:
      return "user";
    case StopCause::kTuningJob:
      return "tuning";
    case StopCause::kMaxRuntime:
      return "max_runtime";
    case StopCause::kEarlyStopping:
      return "early_stopping";
    case StopCause::kMaxWait:
      return "max_wait";
  }
  return "user";
}

bool IsTerminal(const v1::TrainingJobRecord& job) {
  const auto& s = job.describe().training_job_status();
  return s == kCompleted || s == kFailed || s == kStopped;
}

void AddTransition(v1::TrainingJobRecord& job, std::string_view secondary, std::string_view message,
                   double now) {
  auto* d = job.mutable_describe();
  auto* transitions = d->mutable_secondary_status_transitions();
  if (!transitions->empty()) {
    auto& last = *transitions->rbegin();
    // SageMaker keeps one entry per run of a secondary status and updates its StatusMessage as
    // the phase goes on (the SDK's secondary_training_status_message prints "the message
    // changed" when the count stays the same; a 2026 job's transitions were Starting, Pending,
    // Downloading, Training, Uploading, Completed: one Starting for its several messages).
    if (last.status() == secondary) {
      if (last.status_message() != message) {
        last.set_status_message(std::string(message));
        d->set_last_modified_time(now);
      }
      return;
    }
    if (!last.has_end_time()) last.set_end_time(now);
  }
  auto* t = transitions->Add();
  t->set_status(std::string(secondary));
  t->set_start_time(now);
  t->set_status_message(std::string(message));
  d->set_secondary_status(std::string(secondary));
  d->set_last_modified_time(now);
}

void MarkCreated(v1::TrainingJobRecord& job, double now) {
  SetStatus(job, kInProgress);
  job.mutable_describe()->set_creation_time(now);
  if (!job.tuning_job_name().empty()) job.set_objective_status("Pending");
  AddTransition(job, "Starting", "Starting the training job", now);
}

void MarkWaitingForCapacity(v1::TrainingJobRecord& job, double now) {
  AddTransition(job, "Starting", "Waiting for a free worker slot", now);
}

void MarkInterrupted(v1::TrainingJobRecord& job, double now) {
  job.set_interrupted(true);
  AddTransition(job, "Interrupted",
                "The Spot instances were interrupted; the job restarts from its checkpoints", now);
}

void MarkRestarting(v1::TrainingJobRecord& job, double now, std::string_view message) {
  if (job.attempt_training_start() > 0) {
    job.set_trained_seconds(job.trained_seconds() + (now - job.attempt_training_start()));
  }
  job.set_attempt_training_start(0);
  job.set_interrupted(false);
  job.set_worker_id("");
  AddTransition(job, "Starting", message, now);
}

void MarkLaunching(v1::TrainingJobRecord& job, double now) {
  AddTransition(job, "Starting", "Launching requested ML instances", now);
}

void MarkTraining(v1::TrainingJobRecord& job, double now) {
  auto* d = job.mutable_describe();
  if (!d->has_training_start_time()) d->set_training_start_time(now);
  job.set_attempt_training_start(now);
  // SageMaker's messages of a normal start, in its order (spec §11); here they pass in one
  // instant, so each status's entry ends with the phase's last message, as SageMaker's do.
  AddTransition(job, "Starting", "Preparing the instances for training", now);
  AddTransition(job, "Downloading", "Downloading input data", now);
  AddTransition(job, "Training", "Downloading the training image", now);
  AddTransition(job, "Training", "Training image download completed. Training in progress.", now);
}

void MarkStopping(v1::TrainingJobRecord& job, StopCause cause, double now,
                  std::string_view message) {
  if (IsTerminal(job) || job.describe().training_job_status() == kStopping) return;
  job.set_stop_cause(std::string(StopCauseName(cause)));
  SetStatus(job, kStopping);
  AddTransition(job, "Stopping", message, now);
}

void MarkStoppedBeforeStart(v1::TrainingJobRecord& job, StopCause cause, double now) {
  if (IsTerminal(job)) return;
  job.set_stop_cause(std::string(StopCauseName(cause)));
  SetStatus(job, kStopping);
  AddTransition(job, "Stopping", "Stopping the training job", now);
  MarkStoppedFinal(job, now);
  if (job.trained_seconds() > 0) {
    FinishTimes(job, now);  // a spot job stopped between attempts keeps its training time
  } else {
    job.mutable_describe()->set_training_end_time(now);
  }
  job.set_worker_id("");
  SetFinalObjectiveStatus(job);
}

std::string FailureReasonFor(const ExitReport& report) {
  std::string reason;
  const bool exited_ok = !report.launch_failed && !report.internal_error && report.signal == 0 &&
                         report.exit_code == 0;
  if (exited_ok && !report.upload_failure.empty()) {
    reason = "InternalServerError: The training job's output could not be uploaded: " +
             report.upload_failure;
  } else if (report.internal_error) {
    reason = "InternalServerError: " + (report.failure_reason.empty()
                                            ? std::string("We encountered an internal error.")
                                            : report.failure_reason);
  } else if (report.launch_failed) {
    reason = "ClientError: " + report.failure_reason;
  } else if (!report.failure_reason.empty()) {
    if (StartsWith(report.failure_reason, "AlgorithmError:") ||
        StartsWith(report.failure_reason, "ClientError:")) {
      reason = report.failure_reason;
    } else {
      reason = "AlgorithmError: " + report.failure_reason;
    }
  } else if (report.signal != 0) {
    reason = "AlgorithmError: the training process was killed by signal " +
             std::to_string(report.signal) + ". See the job logs for more information.";
  } else {
    reason = "AlgorithmError: Exit Code: " + std::to_string(report.exit_code) +
             ". See the job logs for more information.";
  }
  if (reason.size() > kMaxFailureReason) reason.resize(kMaxFailureReason);
  return reason;
}

void MarkExited(v1::TrainingJobRecord& job, const ExitReport& report, double now) {
  if (IsTerminal(job)) return;
  auto* d = job.mutable_describe();
  const bool stopping = d->training_job_status() == kStopping;
  const bool exited_ok = !report.launch_failed && !report.internal_error && report.signal == 0 &&
                         report.exit_code == 0;
  const bool upload_failed = exited_ok && !report.upload_failure.empty();
  const bool succeeded = exited_ok && !upload_failed;
  job.set_worker_id("");

  if (stopping && !report.launch_failed && !report.internal_error) {
    // SageMaker uploads what the job saved in model/ before it ends Stopped.
    if (report.model_uploaded) {
      AddTransition(job, "Uploading", "Uploading generated training model", now);
    }
    MarkStoppedFinal(job, now);
    FinishTimes(job, now);
  } else if (succeeded) {
    AddTransition(job, "Uploading", "Uploading generated training model", now);
    SetStatus(job, kCompleted);
    AddTransition(job, "Completed", "Training job completed", now);
    FinishTimes(job, now);
  } else {
    SetStatus(job, kFailed);
    d->set_failure_reason(FailureReasonFor(report));
    job.set_failure_kind(report.internal_error || upload_failed ? "RetryableError"
                                                                : "NonRetryableError");
    AddTransition(job, "Failed", "Training job failed", now);
    FinishTimes(job, now);
  }
  SetFinalObjectiveStatus(job);
}

WorkerNeed NeedOf(const v1::ResourceConfig& resources) {
  const int instances = std::max(1, resources.instance_count());
  const auto type = ResourcesOf(resources.instance_type());
  return WorkerNeed(instances, type.has_value() ? type->gpus * instances : 0);
}

WorkerNeed NeedOf(const v1::TrainingJobRecord& job) {
  return NeedOf(job.describe().resource_config());
}

absl::Status TrainingJobNotFound() { return ValidationError("Requested resource not found."); }

}  // namespace amt::core
