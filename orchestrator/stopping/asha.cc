#include "orchestrator/stopping/asha.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>

namespace amt::stopping {
namespace {

std::string NonFinite(const JobCurve& job, int64_t epoch) {
  return "Training job '" + job.job + "' has a non-finite objective value at epoch " +
         std::to_string(epoch) + ".";
}

std::string Join(const std::vector<int64_t>& xs) {
  std::string out;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(xs[i]);
  }
  return out;
}

// Rung epochs from `first`, eta apart, below max_resource; saturating instead of overflowing.
std::vector<int64_t> RungsFrom(int64_t first, const AshaOptions& options) {
  std::vector<int64_t> rungs;
  if (options.reduction_factor < 2) return rungs;  // invalid options: no rung, no endless loop
  for (int64_t r = first; r > 0 && r < options.max_resource;) {
    rungs.push_back(r);
    if (r > options.max_resource / options.reduction_factor) break;
    r *= options.reduction_factor;
  }
  return rungs;
}

// min_resource * eta^bracket, or 0 when it would exceed max_resource (no rung).
int64_t FirstRung(const AshaOptions& options, int64_t bracket) {
  int64_t r = options.min_resource;
  if (options.reduction_factor < 2) return 0;
  for (int64_t s = 0; s < bracket; ++s) {
    if (r > options.max_resource / options.reduction_factor) return 0;
    r *= options.reduction_factor;
  }
  return r;
}

}  // namespace

int64_t MaxBrackets(const AshaOptions& options) {
  if (options.max_resource < options.min_resource) return 1;
  return 1 + static_cast<int64_t>(RungsFrom(options.min_resource, options).size());
}

absl::Status ValidateAshaOptions(const AshaOptions& options) {
  if (options.min_resource < 1) {
    return absl::InvalidArgumentError("AshaOptions.min_resource must be at least 1; got " +
                                      std::to_string(options.min_resource) + ".");
  }
  if (options.max_resource < options.min_resource) {
    return absl::InvalidArgumentError(
        "AshaOptions.max_resource (" + std::to_string(options.max_resource) +
        ") must be at least min_resource (" + std::to_string(options.min_resource) + ").");
  }
  if (options.reduction_factor < 2) {
    return absl::InvalidArgumentError("AshaOptions.reduction_factor must be at least 2; got " +
                                      std::to_string(options.reduction_factor) + ".");
  }
  if (options.brackets < 1) {
    return absl::InvalidArgumentError("AshaOptions.brackets must be at least 1; got " +
                                      std::to_string(options.brackets) + ".");
  }
  return absl::OkStatus();
}

int64_t EffectiveBrackets(const AshaOptions& options) {
  return std::min(options.brackets, MaxBrackets(options));
}

int64_t BracketOf(int64_t index, const AshaOptions& options) {
  return index % EffectiveBrackets(options);
}

std::vector<int64_t> Rungs(const AshaOptions& options, int64_t bracket) {
  const int64_t first = FirstRung(options, bracket);
  if (first == 0) return {};
  return RungsFrom(first, options);
}

namespace {

// The decisions that need no other job: MaxResource reached (stop, or continue when it is the
// job's own last epoch), below MinResource, or not a rung of its bracket (continue). nullopt
// when the epoch is a rung.
std::optional<Decision> DecideOffRung(Decision decision, const JobCurve& current,
                                      const Objective& objective, const AshaOptions& options) {
  const int64_t epoch = decision.epoch;
  const std::string at = "epoch " + std::to_string(epoch) + ": ";
  const std::string reached = at + objective.metric_name + " " + FormatValue(decision.value) +
                              "; reached MaxResource " + std::to_string(options.max_resource);
  if (epoch >= options.max_resource && !options.stop_at_last_epoch && current.last_epoch > 0 &&
      epoch == current.last_epoch) {
    decision.reason = Reason::kLastEpoch;
    decision.explanation = reached + ", its last epoch: it ends by itself: continue";
    return decision;
  }
  if (epoch >= options.max_resource) {
    decision.stop = true;
    decision.reason = Reason::kReachedMaxResource;
    decision.explanation = reached + ": stop";
    return decision;
  }
  if (epoch < options.min_resource) {
    decision.reason = Reason::kBelowMinResource;
    decision.explanation =
        at + "below MinResource " + std::to_string(options.min_resource) + ": continue";
    return decision;
  }
  const std::vector<int64_t> rungs = Rungs(options, decision.bracket);
  if (std::binary_search(rungs.begin(), rungs.end(), epoch)) return std::nullopt;
  decision.reason = Reason::kNotARung;
  decision.explanation = at + "not a rung of bracket " + std::to_string(decision.bracket) +
                         (rungs.empty() ? " (which has none)" : " (rungs " + Join(rungs) + ")") +
                         ": continue";
  return decision;
}

// At a rung: the jobs of its bracket that reached it are ranked by their value there, and the
// top 1/eta continue.
absl::StatusOr<Decision> DecideAtRung(Decision decision, const JobCurve& current,
                                      const std::vector<JobCurve>& others,
                                      const Objective& objective, const AshaOptions& options) {
  const int64_t epoch = decision.epoch;
  const double value = decision.value;
  std::vector<double> at_rung = {value};
  for (const JobCurve& job : others) {
    if (job.job == current.job || static_cast<int64_t>(job.values.size()) < epoch) continue;
    if (job.index < 0 || BracketOf(job.index, options) != decision.bracket) continue;
    const double v = job.values[epoch - 1];
    if (!std::isfinite(v)) return absl::InvalidArgumentError(NonFinite(job, epoch));
    at_rung.push_back(v);
  }
  const int64_t n = static_cast<int64_t>(at_rung.size());
  decision.reference_jobs = n;
  const std::string rung = "epoch " + std::to_string(epoch) + ": rung of bracket " +
                           std::to_string(decision.bracket) + ": " + objective.metric_name + " ";
  if (n < options.reduction_factor) {
    decision.reason = Reason::kTooFewAtRung;
    decision.explanation = rung + FormatValue(value) + "; " + std::to_string(n) +
                           (n == 1 ? " job" : " jobs") +
                           " at this rung, fewer than the reduction factor " +
                           std::to_string(options.reduction_factor) + ": continue";
    return decision;
  }
  // The cut-off is the k-th best value, k = floor(n / eta) >= 1.
  const int64_t keep = n / options.reduction_factor;
  if (objective.minimize) {
    std::nth_element(at_rung.begin(), at_rung.begin() + (keep - 1), at_rung.end());
  } else {
    std::nth_element(at_rung.begin(), at_rung.begin() + (keep - 1), at_rung.end(),
                     std::greater<double>());
  }
  const double cutoff = at_rung[keep - 1];
  decision.threshold = cutoff;
  decision.stop = objective.minimize ? value > cutoff : value < cutoff;
  decision.reason = decision.stop ? Reason::kOutsideTopFraction : Reason::kInTopFraction;
  const char* op =
      objective.minimize ? (decision.stop ? " > " : " <= ") : (decision.stop ? " < " : " >= ");
  auto [value_text, cutoff_text] = FormatCompared(value, cutoff);
  decision.explanation = rung + value_text + op + cutoff_text + ", the cut-off for the top 1/" +
                         std::to_string(options.reduction_factor) + " (the best " +
                         std::to_string(keep) + " of " + std::to_string(n) +
                         " jobs at this rung): " + (decision.stop ? "stop" : "continue");
  return decision;
}

}  // namespace

absl::StatusOr<Decision> EvaluateAsha(const JobCurve& current, const std::vector<JobCurve>& others,
                                      const Objective& objective, const AshaOptions& options) {
  if (absl::Status status = ValidateAshaOptions(options); !status.ok()) return status;
  if (current.index < 0) {
    return absl::InvalidArgumentError("Training job '" + current.job + "' has a negative index " +
                                      std::to_string(current.index) + ".");
  }
  const int64_t epoch = static_cast<int64_t>(current.values.size());
  if (epoch == 0) {
    return absl::InvalidArgumentError("Training job '" + current.job +
                                      "' has no objective emission to evaluate.");
  }
  const double value = current.values.back();
  if (!std::isfinite(value)) return absl::InvalidArgumentError(NonFinite(current, epoch));
  Decision decision;
  decision.rule = "hyperband";
  decision.epoch = epoch;
  decision.value = value;
  decision.bracket = BracketOf(current.index, options);
  if (auto off_rung = DecideOffRung(decision, current, objective, options)) return *off_rung;
  return DecideAtRung(std::move(decision), current, others, objective, options);
}

}  // namespace amt::stopping
