// The Orchestrator's reads for explanations and the edge: the early-stopping decisions of a
// training job and the curves of a tuning job (the page), a job's log lines, metric points and
// log length (CloudWatch Logs and metrics, amt logs). Nothing here changes state.
#include <string>
#include <vector>

#include "orchestrator/core/early_stopping.h"
#include "orchestrator/core/orchestrator.h"
#include "orchestrator/validation/definitions.h"

namespace amt::core {

absl::StatusOr<v1::ExplainTrainingJobResponse> Orchestrator::ExplainTrainingJob(
    const std::string& name) {
  const auto* job = FindTraining(name);
  if (job == nullptr) return TrainingJobNotFound();
  v1::ExplainTrainingJobResponse out;
  out.set_training_job_name(job->describe().training_job_name());
  EarlyStoppingMode mode = EarlyStoppingMode::kOff;
  if (const auto* t = FindTuning(job->tuning_job_name())) {
    out.set_tuning_job_name(t->describe().hyper_parameter_tuning_job_name());
    mode = EarlyStoppingModeOf(*t);
  }
  out.set_early_stopping(std::string(EarlyStoppingModeName(mode)));
  *out.mutable_decisions() = job->decisions();
  *out.mutable_objective_values() = job->objective_history();
  *out.mutable_gpus() = job->gpus();
  return out;
}

absl::StatusOr<v1::ExplainHyperParameterTuningJobResponse>
Orchestrator::ExplainHyperParameterTuningJob(const std::string& name) {
  const auto* tuning = FindTuning(name);
  if (tuning == nullptr) return TuningJobNotFound(name);
  const EarlyStoppingMode mode = EarlyStoppingModeOf(*tuning);
  const auto& describe = tuning->describe();
  // The first definition's objective: a multi-algorithm tuning job's definitions each have one.
  const auto& objective = validation::DefinitionAt(describe, 0).objective;
  v1::ExplainHyperParameterTuningJobResponse out;
  out.set_hyper_parameter_tuning_job_name(describe.hyper_parameter_tuning_job_name());
  out.set_early_stopping(std::string(EarlyStoppingModeName(mode)));
  out.set_objective_metric_name(objective.metric_name());
  out.set_objective_type(objective.type());
  const auto& jobs = JobsOf(*tuning);
  for (const auto* job : jobs) {
    v1::TrainingJobCurve& curve = *out.add_training_jobs();
    curve.set_training_job_name(job->describe().training_job_name());
    curve.set_training_job_status(job->describe().training_job_status());
    *curve.mutable_objective_values() = job->objective_history();
    for (const v1::StoppingDecision& decision : job->decisions()) {
      if (decision.stop() || (mode == EarlyStoppingMode::kHyperband && decision.has_threshold())) {
        *curve.add_decisions() = decision;
      }
    }
  }
  for (auto& point : MedianReferenceOf(*tuning, jobs, options_.early_stopping)) {
    *out.add_median_reference() = std::move(point);
  }
  return out;
}

absl::StatusOr<std::vector<store::LogEntry>> Orchestrator::ReadLogs(const std::string& name,
                                                                    int64_t from, int limit,
                                                                    const std::string* host) {
  const auto* job = FindTraining(name);
  if (job == nullptr) return TrainingJobNotFound();
  if (host != nullptr) {
    return store_.ReadHostLogs(job->describe().training_job_name(), *host, from, limit);
  }
  return store_.ReadLogs(job->describe().training_job_name(), from, limit);
}

absl::StatusOr<std::vector<v1::MetricPoint>> Orchestrator::ReadMetrics(const std::string& name) {
  const auto* job = FindTraining(name);
  if (job == nullptr) return TrainingJobNotFound();
  return store_.ReadMetrics(job->describe().training_job_name());
}

absl::StatusOr<int64_t> Orchestrator::LogLength(const std::string& name) {
  const auto* job = FindTraining(name);
  if (job == nullptr) return TrainingJobNotFound();
  return job->next_log_sequence();
}

}  // namespace amt::core
