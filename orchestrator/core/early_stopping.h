// The early-stopping adapter: turns a tuning job's training-job records into the curves the pure
// rules of stopping/ judge (AUTO's median rule, Hyperband's asynchronous successive halving) and
// their Decision into the StoppingDecision a record keeps. No I/O; the caller records the
// decision and stops the job.
#ifndef AMT_ORCHESTRATOR_CORE_EARLY_STOPPING_H_
#define AMT_ORCHESTRATOR_CORE_EARLY_STOPPING_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "amt/v1/state.pb.h"
#include "orchestrator/stopping/asha.h"
#include "orchestrator/stopping/median_rule.h"

namespace amt::core {

// The undocumented parts of AUTO early stopping and Hyperband (amtd flags, listed in
// docs/sagemaker-mapping.md).
struct EarlyStoppingOptions {
  // Which previous jobs form the median, how many are needed, current vs best, grace epochs.
  stopping::MedianRuleOptions median_rule;
  // Hyperband's reduction factor (eta) and number of brackets.
  int64_t hyperband_reduction_factor = 3;
  int64_t hyperband_brackets = 3;          // chosen with bench/stopping (see bench/README.md)
  bool hyperband_stop_last_epoch = false;  // stopping::AshaOptions::stop_at_last_epoch
  // How jobs go to brackets, and what a rung with fewer than eta jobs decides (AshaOptions).
  stopping::AshaOptions::Allocation hyperband_allocation =
      stopping::AshaOptions::Allocation::kCostCapped;
  stopping::AshaOptions::FewAtRung hyperband_few_at_rung = stopping::AshaOptions::FewAtRung::kBest;
};

enum class EarlyStoppingMode { kOff, kAuto, kHyperband };
// Hyperband when the strategy is Hyperband, else Auto when TrainingJobEarlyStoppingType is Auto.
EarlyStoppingMode EarlyStoppingModeOf(const v1::TuningJobRecord& tuning);
// "Off", "Auto" or "Hyperband" (ExplainTrainingJobResponse.early_stopping).
std::string_view EarlyStoppingModeName(EarlyStoppingMode mode);

// Judges `job`'s latest objective emission (its objective_history) against `jobs`, all training
// jobs of `tuning` (`job` among them or not). The median rule looks at the jobs launched before
// `job`, Hyperband at all; failed jobs and jobs with no emission are left out. nullopt when the
// tuning job uses neither rule, or the rule cannot judge (e.g. a non-finite value). The
// decision's timestamp is left for the caller to set.
std::optional<v1::StoppingDecision> EvaluateEarlyStopping(
    const v1::TrainingJobRecord& job, const v1::TuningJobRecord& tuning,
    const std::vector<const v1::TrainingJobRecord*>& jobs, const EarlyStoppingOptions& options);

// AUTO's median reference line now: what EvaluateEarlyStopping's median rule would compare a
// training job launched after all of `jobs` with, epoch by epoch (stopping::MedianReferenceCurve
// over the same curves, failed jobs and jobs with no emission left out). Empty when `tuning` does
// not use the median rule.
std::vector<v1::MedianReferencePoint> MedianReferenceOf(
    const v1::TuningJobRecord& tuning, const std::vector<const v1::TrainingJobRecord*>& jobs,
    const EarlyStoppingOptions& options);

}  // namespace amt::core

#endif  // AMT_ORCHESTRATOR_CORE_EARLY_STOPPING_H_
