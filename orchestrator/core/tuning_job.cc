#include "orchestrator/core/tuning_job.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/strings/match.h"
#include "common/errors.h"
#include "orchestrator/core/training_job.h"
#include "orchestrator/validation/definitions.h"

namespace amt::core {

v1::HyperParameterTrainingJobSummary SummaryOf(const v1::TrainingJobRecord& job,
                                               const v1::TuningJobRecord& tuning) {
  const auto& d = job.describe();
  const validation::DefinitionView definition =
      validation::DefinitionAt(tuning.describe(), job.definition());
  const v1::HyperParameterTuningJobObjective& objective = definition.objective;
  v1::HyperParameterTrainingJobSummary s;
  if (definition.definition.has_definition_name()) {
    s.set_training_job_definition_name(definition.definition.definition_name());
  }
  s.set_training_job_name(d.training_job_name());
  s.set_training_job_arn(d.training_job_arn());
  s.set_tuning_job_name(job.tuning_job_name());
  if (d.has_creation_time()) s.set_creation_time(d.creation_time());
  if (d.has_training_start_time()) s.set_training_start_time(d.training_start_time());
  if (d.has_training_end_time()) s.set_training_end_time(d.training_end_time());
  s.set_training_job_status(d.training_job_status());
  *s.mutable_tuned_hyper_parameters() = job.tuned_hyperparameters();
  if (d.has_failure_reason()) s.set_failure_reason(d.failure_reason());
  if (job.has_objective()) {
    auto* m = s.mutable_final_hyper_parameter_tuning_job_objective_metric();
    m->set_type(objective.type());
    m->set_metric_name(objective.metric_name());
    m->set_value(static_cast<float>(job.objective()));
  }
  if (!job.objective_status().empty()) s.set_objective_status(job.objective_status());
  return s;
}

bool Better(double candidate, double best, const std::string& objective_type) {
  return objective_type == "Maximize" ? candidate > best : candidate < best;
}

bool ImprovesByOnePercent(double candidate, double best, const std::string& objective_type) {
  const double gain = objective_type == "Maximize" ? candidate - best : best - candidate;
  return gain >= 0.01 * std::fabs(best) && gain > 0;
}

void JobTally::Add(const v1::TrainingJobRecord& job, const std::string& objective_type) {
  const auto& s = job.describe().training_job_status();
  if (s == kCompleted) {
    status.set_completed(status.completed() + 1);
  } else if (s == kStopped) {
    status.set_stopped(status.stopped() + 1);
  } else if (s == kFailed) {
    if (job.failure_kind() == "RetryableError") {
      status.set_retryable_error(status.retryable_error() + 1);
    } else {
      status.set_non_retryable_error(status.non_retryable_error() + 1);
    }
  } else {
    status.set_in_progress(status.in_progress() + 1);
  }
  if (job.objective_status() == "Succeeded") {
    objective.set_succeeded(objective.succeeded() + 1);
    if (job.has_objective() &&
        (best == nullptr || Better(job.objective(), best->objective(), objective_type))) {
      best = &job;
    }
  } else if (job.objective_status() == "Failed") {
    objective.set_failed(objective.failed() + 1);
  } else {
    objective.set_pending(objective.pending() + 1);
  }
}

void SettledJobs::Advance(const std::vector<const v1::TrainingJobRecord*>& jobs,
                          const std::string& objective_type) {
  if (count > jobs.size()) *this = SettledJobs();  // not the list it was made for: start over
  while (count < jobs.size() && IsTerminal(*jobs[count])) {
    tally.Add(*jobs[count], objective_type);
    ++count;
  }
}

void RecomputeTuningView(v1::TuningJobRecord& tuning,
                         const std::vector<const v1::TrainingJobRecord*>& jobs,
                         SettledJobs* settled) {
  auto* d = tuning.mutable_describe();
  const std::string& type = validation::ObjectiveTypeOf(*d);
  JobTally tally;
  size_t first = 0;
  if (settled != nullptr) {
    settled->Advance(jobs, type);
    tally = settled->tally;
    first = settled->count;
  }
  for (size_t i = first; i < jobs.size(); ++i) tally.Add(*jobs[i], type);
  *d->mutable_training_job_status_counters() = tally.status;
  *d->mutable_objective_status_counters() = tally.objective;
  if (tally.best != nullptr) {
    *d->mutable_best_training_job() = SummaryOf(*tally.best, tuning);
  } else {
    d->clear_best_training_job();
  }
}

int RunningJobs(const std::vector<const v1::TrainingJobRecord*>& jobs, const SettledJobs* settled) {
  const size_t first = settled != nullptr && settled->count <= jobs.size() ? settled->count : 0;
  int n = 0;
  for (size_t i = first; i < jobs.size(); ++i) n += IsTerminal(*jobs[i]) ? 0 : 1;
  return n;
}

std::string TrainingJobNameFor(const v1::TuningJobRecord& tuning, int index) {
  // FNV-1a over the tuning job's identity and the index.
  uint32_t h = 2166136261u;
  auto mix = [&h](const std::string& s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 16777619u;
    }
  };
  const auto& d = tuning.describe();
  char created[64];
  std::snprintf(created, sizeof created, "%.3f", d.creation_time());
  mix(d.hyper_parameter_tuning_job_arn());
  mix(created);
  mix(std::to_string(index));
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, "-%03d-%08x", index, h);
  return d.hyper_parameter_tuning_job_name() + suffix;
}

namespace {

struct EndCauseEntry {
  EndCause cause;
  std::string_view name;
};
constexpr EndCauseEntry kEndCauses[] = {
    {EndCause::kEarlyFailure, "failed"},        {EndCause::kTarget, "target"},
    {EndCause::kNotImproving, "not_improving"}, {EndCause::kRuntime, "runtime"},
    {EndCause::kConvergence, "convergence"},
};

void SetTuningStatus(v1::TuningJobRecord& tuning, std::string_view status, double now) {
  tuning.mutable_describe()->set_hyper_parameter_tuning_job_status(std::string(status));
  tuning.mutable_describe()->set_last_modified_time(now);
}

// The criterion `job`'s end reaches, given the updated counters of `tuning`.
EndCause CriterionReached(const v1::TuningJobRecord& tuning, const v1::TrainingJobRecord& job,
                          int early_failure_attempts, int convergence_jobs) {
  const auto& config = tuning.describe().hyper_parameter_tuning_job_config();
  const std::string& type = validation::ObjectiveTypeOf(tuning.describe());
  const auto& criteria = config.tuning_job_completion_criteria();
  if (tuning.succeeded() == 0 && tuning.finished() >= early_failure_attempts) {
    return EndCause::kEarlyFailure;
  }
  if (job.objective_status() == "Succeeded" && criteria.has_target_objective_metric_value() &&
      (type == "Maximize" ? job.objective() >= criteria.target_objective_metric_value()
                          : job.objective() <= criteria.target_objective_metric_value())) {
    return EndCause::kTarget;
  }
  if (criteria.has_best_objective_not_improving() &&
      tuning.not_improving() >=
          criteria.best_objective_not_improving().max_number_of_training_jobs_not_improving()) {
    return EndCause::kNotImproving;
  }
  if (criteria.convergence_detected().complete_on_convergence() == "Enabled" &&
      tuning.not_improving() >= convergence_jobs) {
    return EndCause::kConvergence;
  }
  return EndCause::kNone;
}

}  // namespace

EndCause EndCauseOf(const v1::TuningJobRecord& tuning) {
  for (const auto& e : kEndCauses) {
    if (tuning.end_cause() == e.name) return e.cause;
  }
  return EndCause::kNone;
}

void BeginEnding(v1::TuningJobRecord& tuning, EndCause cause) {
  for (const auto& e : kEndCauses) {
    if (e.cause == cause) tuning.set_end_cause(std::string(e.name));
  }
}

absl::Status TuningJobNotFound(std::string_view name) {
  return ResourceNotFoundError("Amazon SageMaker can't find a tuning job called " +
                               std::string(name) + ". Type another name.");
}

bool IsActive(const v1::TuningJobRecord& tuning) {
  const auto& s = tuning.describe().hyper_parameter_tuning_job_status();
  return s == kTuningInProgress || s == kTuningStopping;
}

bool MayLaunch(const v1::TuningJobRecord& tuning) {
  return tuning.describe().hyper_parameter_tuning_job_status() == kTuningInProgress &&
         EndCauseOf(tuning) == EndCause::kNone && tuning.launched() < tuning.max_jobs();
}

void MarkTuningStopping(v1::TuningJobRecord& tuning, double now) {
  tuning.set_stop_requested(true);
  SetTuningStatus(tuning, kTuningStopping, now);
}

void RecountFinishedJobs(v1::TuningJobRecord& tuning,
                         const std::vector<const v1::TrainingJobRecord*>& jobs) {
  int finished = 0;
  int succeeded = 0;
  for (const auto* job : jobs) {
    if (!IsTerminal(*job)) continue;
    if (job->failure_kind() != "RetryableError") ++finished;
    if (job->objective_status() == "Succeeded") ++succeeded;
  }
  tuning.set_finished(finished);
  tuning.set_succeeded(succeeded);
}

EndCause RecordFinishedJob(v1::TuningJobRecord& tuning, const v1::TrainingJobRecord& job,
                           const std::vector<const v1::TrainingJobRecord*>& jobs,
                           int early_failure_attempts, double now, int convergence_jobs,
                           SettledJobs* settled) {
  auto* d = tuning.mutable_describe();
  // An infrastructure failure (RetryableError: its worker was lost) says nothing about the
  // training code, so it never counts toward "No training job succeeded after N attempts".
  if (job.failure_kind() != "RetryableError") tuning.set_finished(tuning.finished() + 1);
  if (job.objective_status() == "Succeeded") {
    tuning.set_succeeded(tuning.succeeded() + 1);
    // Against the best before this job: a job does not improve on itself.
    const bool had_best = d->has_best_training_job();
    const double best =
        had_best
            ? d->best_training_job().final_hyper_parameter_tuning_job_objective_metric().value()
            : 0;
    const std::string& type = validation::ObjectiveTypeOf(*d);
    tuning.set_not_improving(!had_best || ImprovesByOnePercent(job.objective(), best, type)
                                 ? 0
                                 : tuning.not_improving() + 1);
    d->mutable_tuning_job_completion_details()->set_number_of_training_jobs_objective_not_improving(
        tuning.not_improving());
  }
  RecomputeTuningView(tuning, jobs, settled);
  d->set_last_modified_time(now);
  if (d->hyper_parameter_tuning_job_status() != kTuningInProgress ||
      EndCauseOf(tuning) != EndCause::kNone) {
    return EndCause::kNone;
  }
  const EndCause cause = CriterionReached(tuning, job, early_failure_attempts, convergence_jobs);
  if (cause == EndCause::kConvergence) {
    d->mutable_tuning_job_completion_details()->set_convergence_detected_time(now);
  }
  return cause;
}

bool EndIfDone(v1::TuningJobRecord& tuning, const std::vector<const v1::TrainingJobRecord*>& jobs,
               int early_failure_attempts, double now, SettledJobs* settled) {
  auto* d = tuning.mutable_describe();
  if (!IsActive(tuning) || RunningJobs(jobs, settled) > 0) return false;
  const EndCause cause = EndCauseOf(tuning);
  std::string_view final_status;
  if (d->hyper_parameter_tuning_job_status() == kTuningStopping) {
    final_status = kTuningStopped;
  } else if (cause == EndCause::kEarlyFailure) {
    final_status = kTuningFailed;
    d->set_failure_reason("No training job succeeded after " +
                          std::to_string(early_failure_attempts) +
                          " attempts. Please take a look at the training job failures to get more "
                          "details.");
  } else if (cause != EndCause::kNone) {
    // A completion criterion (TargetObjectiveMetricValue, BestObjectiveNotImproving, or
    // ResourceLimits.MaxRuntimeInSeconds, which AWS lists among them) ends the tuning job
    // Completed, whatever its running jobs had printed when they were stopped: the runtime limit
    // used to end it Failed "All training jobs failed" when no job had an objective yet, although
    // none had failed.
    final_status = kTuningCompleted;
  } else if (tuning.launched() >= tuning.max_jobs()) {
    final_status = tuning.succeeded() == 0 ? kTuningFailed : kTuningCompleted;
    if (tuning.succeeded() == 0) {
      d->set_failure_reason(
          "All training jobs failed. Please take a look at the training jobs failures to get more "
          "details.");
    }
  } else {
    return false;  // more trials to launch
  }
  RecomputeTuningView(tuning, jobs, settled);
  SetTuningStatus(tuning, final_status, now);
  d->set_hyper_parameter_tuning_end_time(now);
  d->mutable_consumed_resources()->set_runtime_in_seconds(
      static_cast<int>(std::max(0.0, now - d->creation_time())));
  return true;
}

std::string StopReasonOf(const v1::TrainingJobRecord& job, const v1::TuningJobRecord& tuning) {
  const std::string& cause = job.stop_cause();
  if (cause == StopCauseName(StopCause::kEarlyStopping)) {
    for (auto d = job.decisions().rbegin(); d != job.decisions().rend(); ++d) {
      if (!d->stop()) continue;
      std::string text = d->explanation();
      if (absl::EndsWith(text, ": stop")) text.resize(text.size() - 6);
      return (d->rule() == "Median" ? "median rule, " : "Hyperband, ") + text;
    }
    return "early stopping";
  }
  if (cause == StopCauseName(StopCause::kUser)) return "StopTrainingJob";
  if (cause == StopCauseName(StopCause::kMaxRuntime)) return "MaxRuntimeInSeconds reached";
  if (cause != StopCauseName(StopCause::kTuningJob)) return "";
  if (tuning.stop_requested()) return "the tuning job was stopped";
  switch (EndCauseOf(tuning)) {
    case EndCause::kTarget:
      return "the tuning job reached TargetObjectiveMetricValue";
    case EndCause::kNotImproving:
      return "the tuning job's best objective stopped improving";
    case EndCause::kRuntime:
      return "the tuning job reached its MaxRuntimeInSeconds";
    case EndCause::kConvergence:
      return "the tuning job converged";
    case EndCause::kEarlyFailure:
      return "the tuning job failed";
    case EndCause::kNone:
      break;
  }
  return "the tuning job ended";
}

}  // namespace amt::core
