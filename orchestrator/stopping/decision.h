// What the early-stopping rules see and what they answer: the objective curve of a training job
// (its objective-metric emissions in order), the objective being optimised, and a Decision that
// records the values compared and explains itself in one sentence (for `amt explain`).
//
// An "epoch" is the ordinal of an objective-metric emission of one training job (spec §1 and §14:
// SageMaker sees only log lines; the n-th line matching the objective regex is epoch n, all hosts
// merged). Both rules (median_rule.h, asha.h) are pure functions of these types: no I/O, no clock.
#ifndef AMT_ORCHESTRATOR_STOPPING_DECISION_H_
#define AMT_ORCHESTRATOR_STOPPING_DECISION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace amt::stopping {

// Where a training job is, as the median rule's reference set needs it. The caller leaves Failed
// jobs out (their curves say nothing about what a configuration reaches).
enum class JobState {
  kRunning,    // InProgress (or Stopping)
  kCompleted,  // Completed: ran to its end
  kStopped,    // Stopped: early-stopped by a rule, or by StopTrainingJob
};

// One training job's objective-metric emissions so far.
struct JobCurve {
  std::string job;  // training-job name; used to skip the evaluated job if a caller passes it twice
  int64_t index = 0;           // 0-based launch index in the tuning job (Hyperband's bracket)
  std::vector<double> values;  // values[e - 1] is epoch e's value; must be finite
  JobState state = JobState::kRunning;  // the median rule's reference sets depend on it
  // The epochs the job runs by itself (its epochs-like hyperparameter), 0 when unknown. Hyperband
  // leaves a job whose last epoch is MaxResource to end by itself (AshaOptions); one that emits
  // more than that is stopped at the next emission.
  int64_t last_epoch = 0;
};

// The tuning job's objective (HyperParameterTuningJobObjective).
struct Objective {
  std::string metric_name;  // MetricName, shown in explanations
  bool minimize = true;     // Type == "Minimize"
};

// Why a rule decided what it decided; stable names for storage via ReasonName().
enum class Reason {
  kNotWorse,            // median: compared, not strictly worse than the median: continue
  kWorse,               // median: compared, strictly worse than the median: stop
  kTooFewReferences,    // median: fewer reference jobs than required: continue, nothing compared
  kGracePeriod,         // median: within the job's first grace_epochs epochs: continue
  kBelowMinResource,    // hyperband: epoch < MinResource: continue
  kNotARung,            // hyperband: this epoch is no rung of the job's bracket: continue
  kTooFewAtRung,        // hyperband: fewer than reduction-factor jobs at the rung: continue
  kInTopFraction,       // hyperband: within the top 1/eta at the rung: continue
  kOutsideTopFraction,  // hyperband: outside the top 1/eta at the rung: stop
  kReachedMaxResource,  // hyperband: epoch >= MaxResource: stop
  kLastEpoch,           // hyperband: MaxResource reached at the job's own last epoch: continue
};

// "not_worse", "worse", "too_few_references", "grace_period", "below_min_resource", "not_a_rung",
// "too_few_at_rung", "in_top_fraction", "outside_top_fraction", "reached_max_resource",
// "last_epoch".
std::string_view ReasonName(Reason reason);

// One decision of a rule on one emission of one job. Every decision, stop or continue, carries the
// values it compared, so the caller can persist it and explain it later. After a stop the caller
// stops the job and evaluates none of its later emissions (a trainer being stopped may still
// print some during its grace period).
struct Decision {
  bool stop = false;
  std::string rule;  // "median" | "hyperband"
  Reason reason = Reason::kNotWorse;
  int64_t epoch = 0;  // 1-based emission count of the evaluated job
  double value = 0;   // the job's compared value (this epoch's, or its best so far: see options)
  // The median of the reference jobs' running averages (median rule), or the rung's cut-off, the
  // worst value still in the top 1/eta (hyperband). Absent when nothing was compared.
  std::optional<double> threshold;
  // Median rule: the jobs whose running averages formed the median (or that were available, when
  // too few). Hyperband: the jobs of the bracket at this rung, the evaluated job included.
  int64_t reference_jobs = 0;
  int64_t bracket = 0;  // hyperband: the job's bracket; 0 for the median rule
  // One sentence a person can read, e.g. "epoch 3: val_loss 0.52 > 0.41, the median of the running
  // averages to epoch 3 of 4 completed or stopped jobs: stop".
  std::string explanation;
};

// `a` and `b` as text with the fewest significant digits (at least 6, at most 17) that tell them
// apart, so an explanation never reads "0.41 > 0.41". Exposed for the rules and their tests.
std::pair<std::string, std::string> FormatCompared(double a, double b);

// `v` with 6 significant digits (%g).
std::string FormatValue(double v);

}  // namespace amt::stopping

#endif  // AMT_ORCHESTRATOR_STOPPING_DECISION_H_
