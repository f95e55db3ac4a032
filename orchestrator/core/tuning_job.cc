#include "orchestrator/core/tuning_job.h"

#include <cmath>
#include <cstdio>

#include "orchestrator/core/training_job.h"

namespace amt::core {

v1::HyperParameterTrainingJobSummary SummaryOf(
    const v1::TrainingJobRecord& job, const v1::HyperParameterTuningJobObjective& objective) {
  const auto& d = job.describe();
  v1::HyperParameterTrainingJobSummary s;
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

void RecomputeTuningView(v1::TuningJobRecord& tuning,
                         const std::vector<const v1::TrainingJobRecord*>& jobs) {
  auto* d = tuning.mutable_describe();
  v1::TrainingJobStatusCounters status;
  v1::ObjectiveStatusCounters objective;
  const v1::TrainingJobRecord* best = nullptr;
  const auto& obj = d->hyper_parameter_tuning_job_config().hyper_parameter_tuning_job_objective();
  for (const auto* job : jobs) {
    const auto& s = job->describe().training_job_status();
    if (s == kCompleted) {
      status.set_completed(status.completed() + 1);
    } else if (s == kStopped) {
      status.set_stopped(status.stopped() + 1);
    } else if (s == kFailed) {
      if (job->failure_kind() == "RetryableError") {
        status.set_retryable_error(status.retryable_error() + 1);
      } else {
        status.set_non_retryable_error(status.non_retryable_error() + 1);
      }
    } else {
      status.set_in_progress(status.in_progress() + 1);
    }
    if (job->objective_status() == "Succeeded") {
      objective.set_succeeded(objective.succeeded() + 1);
      if (job->has_objective() &&
          (best == nullptr || Better(job->objective(), best->objective(), obj.type()))) {
        best = job;
      }
    } else if (job->objective_status() == "Failed") {
      objective.set_failed(objective.failed() + 1);
    } else {
      objective.set_pending(objective.pending() + 1);
    }
  }
  *d->mutable_training_job_status_counters() = status;
  *d->mutable_objective_status_counters() = objective;
  if (best != nullptr) {
    *d->mutable_best_training_job() = SummaryOf(*best, obj);
  } else {
    d->clear_best_training_job();
  }
}

int RunningJobs(const std::vector<const v1::TrainingJobRecord*>& jobs) {
  int n = 0;
  for (const auto* job : jobs) n += IsTerminal(*job) ? 0 : 1;
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

}  // namespace amt::core
