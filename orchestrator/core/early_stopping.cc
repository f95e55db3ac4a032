#include "orchestrator/core/early_stopping.h"

#include <algorithm>

#include "orchestrator/core/training_job.h"
#include "orchestrator/stopping/asha.h"
#include "orchestrator/validation/definitions.h"
#include "orchestrator/validation/validation.h"

namespace amt::core {
namespace {

stopping::JobCurve CurveOf(const v1::TrainingJobRecord& job) {
  stopping::JobCurve c;
  c.job = job.describe().training_job_name();
  c.index = job.index() - 1;
  c.values.assign(job.objective_history().begin(), job.objective_history().end());
  const auto& s = job.describe().training_job_status();
  c.state = s == kCompleted ? stopping::JobState::kCompleted
            : s == kStopped ? stopping::JobState::kStopped
                            : stopping::JobState::kRunning;
  c.last_epoch = validation::EpochsHyperParameter(job.describe().hyper_parameters()).value_or(0);
  return c;
}

v1::StoppingDecision ToRecord(const stopping::Decision& decision, EarlyStoppingMode mode) {
  v1::StoppingDecision out;
  out.set_rule(mode == EarlyStoppingMode::kHyperband ? "Hyperband" : "Median");
  out.set_epoch(static_cast<int32_t>(decision.epoch));
  out.set_value(decision.value);
  if (decision.threshold.has_value()) out.set_threshold(*decision.threshold);
  out.set_reference_jobs(static_cast<int32_t>(decision.reference_jobs));
  out.set_stop(decision.stop);
  out.set_explanation(decision.explanation);
  return out;
}

}  // namespace

EarlyStoppingMode EarlyStoppingModeOf(const v1::TuningJobRecord& tuning) {
  const auto& config = tuning.describe().hyper_parameter_tuning_job_config();
  if (config.strategy() == "Hyperband") return EarlyStoppingMode::kHyperband;
  if (config.training_job_early_stopping_type() == "Auto") return EarlyStoppingMode::kAuto;
  return EarlyStoppingMode::kOff;
}

std::string_view EarlyStoppingModeName(EarlyStoppingMode mode) {
  switch (mode) {
    case EarlyStoppingMode::kAuto:
      return "Auto";
    case EarlyStoppingMode::kHyperband:
      return "Hyperband";
    case EarlyStoppingMode::kOff:
      break;
  }
  return "Off";
}

std::optional<v1::StoppingDecision> EvaluateEarlyStopping(
    const v1::TrainingJobRecord& job, const v1::TuningJobRecord& tuning,
    const std::vector<const v1::TrainingJobRecord*>& jobs, const EarlyStoppingOptions& options) {
  const EarlyStoppingMode mode = EarlyStoppingModeOf(tuning);
  if (mode == EarlyStoppingMode::kOff) return std::nullopt;
  const bool hyperband = mode == EarlyStoppingMode::kHyperband;
  const auto& definition = validation::DefinitionAt(tuning.describe(), job.definition());
  stopping::Objective objective;
  objective.metric_name = definition.objective.metric_name();
  objective.minimize = definition.objective.type() != "Maximize";
  std::vector<stopping::JobCurve> others;
  for (const auto* other : jobs) {
    // Failed jobs' curves say nothing about what a configuration reaches: left out.
    if (other->describe().training_job_name() == job.describe().training_job_name() ||
        other->objective_history().empty() || other->describe().training_job_status() == kFailed) {
      continue;
    }
    if (!hyperband && other->index() >= job.index()) continue;
    others.push_back(CurveOf(*other));
  }
  absl::StatusOr<stopping::Decision> decision;
  if (hyperband) {
    stopping::AshaOptions asha;
    asha.min_resource = tuning.hyperband_min_resource();
    asha.max_resource = tuning.hyperband_max_resource();
    asha.reduction_factor = options.hyperband_reduction_factor;
    asha.brackets = std::min<int64_t>(options.hyperband_brackets, stopping::MaxBrackets(asha));
    asha.stop_at_last_epoch = options.hyperband_stop_last_epoch;
    asha.allocation = options.hyperband_allocation;
    asha.few_at_rung = options.hyperband_few_at_rung;
    decision = stopping::EvaluateAsha(CurveOf(job), others, objective, asha);
  } else {
    decision = stopping::EvaluateMedianRule(CurveOf(job), others, objective, options.median_rule);
  }
  if (!decision.ok()) return std::nullopt;
  return ToRecord(*decision, mode);
}

std::vector<v1::MedianReferencePoint> MedianReferenceOf(
    const v1::TuningJobRecord& tuning, const std::vector<const v1::TrainingJobRecord*>& jobs,
    const EarlyStoppingOptions& options) {
  std::vector<v1::MedianReferencePoint> out;
  if (EarlyStoppingModeOf(tuning) != EarlyStoppingMode::kAuto) return out;
  std::vector<stopping::JobCurve> curves;
  for (const auto* job : jobs) {
    if (job->objective_history().empty() || job->describe().training_job_status() == kFailed) {
      continue;
    }
    curves.push_back(CurveOf(*job));
  }
  absl::StatusOr<std::vector<stopping::MedianPoint>> line =
      stopping::MedianReferenceCurve(curves, options.median_rule);
  if (!line.ok()) return out;  // options are validated when amtd starts
  out.reserve(line->size());
  for (const stopping::MedianPoint& point : *line) {
    v1::MedianReferencePoint& p = out.emplace_back();
    p.set_epoch(static_cast<int32_t>(point.epoch));
    p.set_median(point.median);
    p.set_reference_jobs(static_cast<int32_t>(point.reference_jobs));
  }
  return out;
}

}  // namespace amt::core
