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

// BracketWeights' cap on the sum of the parts (the length of BracketOf's period).
constexpr double kMaxWeightTotal = 4096;

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
  int64_t total = 0;
  for (size_t b = 0; b < options.bracket_weights.size(); ++b) {
    const int64_t w = options.bracket_weights[b];
    if (w < 1) {
      return absl::InvalidArgumentError("AshaOptions.bracket_weights[" + std::to_string(b) +
                                        "] must be at least 1; got " + std::to_string(w) + ".");
    }
    if (static_cast<double>(w) > kMaxWeightTotal - static_cast<double>(total)) {
      return absl::InvalidArgumentError("AshaOptions.bracket_weights must add up to at most 4096.");
    }
    total += w;
  }
  return absl::OkStatus();
}

int64_t EffectiveBrackets(const AshaOptions& options) {
  return std::min(options.brackets, MaxBrackets(options));
}

double ExpectedEpochs(const AshaOptions& options, int64_t bracket) {
  const std::vector<int64_t> rungs = Rungs(options, bracket);
  if (rungs.empty()) return static_cast<double>(options.max_resource);
  const double eta = static_cast<double>(options.reduction_factor);
  double epochs = static_cast<double>(rungs.front());
  double running = 1;  // the share of the bracket's jobs still running
  for (size_t k = 1; k <= rungs.size(); ++k) {
    running /= eta;
    const int64_t end = k < rungs.size() ? rungs[k] : options.max_resource;
    epochs += static_cast<double>(end - rungs[k - 1]) * running;
  }
  return epochs;
}

namespace {

// Hyperband's parts over `brackets` brackets: ceil(B * eta^s / (s + 1)), s = B - 1 - b, in doubles
// (eta^s can exceed int64 for a huge MaxResource; the parts are then scaled anyway).
std::vector<double> HyperbandParts(const AshaOptions& options, int64_t brackets) {
  std::vector<double> parts(brackets);
  for (int64_t b = 0; b < brackets; ++b) {
    const int64_t s = brackets - 1 - b;
    parts[b] = std::ceil(static_cast<double>(brackets) *
                         std::pow(static_cast<double>(options.reduction_factor), s) / (s + 1));
  }
  return parts;
}

// kCostCapped's weights: w, 1, ..., 1 with the smallest whole w >= 1 whose mean expected epochs
// per job is at most that of Hyperband's parts over all its brackets.
std::vector<int64_t> CostCappedWeights(const AshaOptions& options, int64_t brackets) {
  std::vector<int64_t> weights(brackets, 1);
  if (brackets < 2) return weights;
  const int64_t all = MaxBrackets(options);
  const std::vector<double> parts = HyperbandParts(options, all);
  double hyperband = 0;
  double total = 0;
  for (int64_t b = 0; b < all; ++b) {
    hyperband += parts[b] * ExpectedEpochs(options, b);
    total += parts[b];
  }
  hyperband /= total;
  // Solve (w * c0 + rest) / (w + B - 1) <= hyperband for w, where c0 < hyperband unless every
  // bracket costs the same (one bracket's worth of rungs or none); then round robin.
  const double c0 = ExpectedEpochs(options, 0);
  double rest = 0;
  for (int64_t b = 1; b < brackets; ++b) rest += ExpectedEpochs(options, b);
  const double others = static_cast<double>(brackets - 1);
  if (rest <= hyperband * others || c0 >= hyperband) return weights;
  const double w = (rest - hyperband * others) / (hyperband - c0);
  weights[0] = static_cast<int64_t>(std::clamp(std::ceil(w - 1e-9), 1.0, kMaxWeightTotal - others));
  return weights;
}

}  // namespace

std::vector<int64_t> BracketWeights(const AshaOptions& options) {
  const int64_t brackets = EffectiveBrackets(options);
  if (!options.bracket_weights.empty()) {
    std::vector<int64_t> weights = options.bracket_weights;
    weights.resize(brackets, 1);
    return weights;
  }
  switch (options.allocation) {
    case AshaOptions::Allocation::kRoundRobin:
      return std::vector<int64_t>(brackets, 1);
    case AshaOptions::Allocation::kCostCapped:
      return CostCappedWeights(options, brackets);
    case AshaOptions::Allocation::kByBudget:
      break;
  }
  const std::vector<double> parts = HyperbandParts(options, brackets);
  double total = 0;
  for (double p : parts) total += p;
  const double scale = total > kMaxWeightTotal ? kMaxWeightTotal / total : 1.0;
  std::vector<int64_t> weights(brackets);
  for (int64_t b = 0; b < brackets; ++b) {
    weights[b] = std::max<int64_t>(1, static_cast<int64_t>(std::floor(parts[b] * scale)));
  }
  return weights;
}

namespace {

// One period of the smooth weighted round robin over BracketWeights(): entry p is the bracket of
// every launch index congruent to p. Each step every bracket earns its weight and the richest
// (the lowest on ties) pays the period, so brackets alternate as evenly as their weights allow.
std::vector<int64_t> BracketPeriod(const AshaOptions& options) {
  const std::vector<int64_t> weights = BracketWeights(options);
  int64_t period = 0;
  for (int64_t w : weights) period += w;
  std::vector<int64_t> credit(weights.size(), 0);
  std::vector<int64_t> order(period);
  for (int64_t p = 0; p < period; ++p) {
    size_t richest = 0;
    for (size_t b = 0; b < weights.size(); ++b) {
      credit[b] += weights[b];
      if (credit[b] > credit[richest]) richest = b;
    }
    credit[richest] -= period;
    order[p] = static_cast<int64_t>(richest);
  }
  return order;
}

// BracketOf for many indices: the period is built once.
class BracketMap {
 public:
  explicit BracketMap(const AshaOptions& options)
      : round_robin_(options.allocation == AshaOptions::Allocation::kRoundRobin &&
                     options.bracket_weights.empty()),
        brackets_(EffectiveBrackets(options)),
        period_(round_robin_ ? std::vector<int64_t>{} : BracketPeriod(options)) {}
  int64_t operator()(int64_t index) const {
    if (round_robin_) return index % brackets_;
    return period_[index % static_cast<int64_t>(period_.size())];
  }

 private:
  bool round_robin_;
  int64_t brackets_;
  std::vector<int64_t> period_;
};

}  // namespace

int64_t BracketOf(int64_t index, const AshaOptions& options) { return BracketMap(options)(index); }

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
                                      const Objective& objective, const AshaOptions& options,
                                      const BracketMap& bracket_of) {
  const int64_t epoch = decision.epoch;
  const double value = decision.value;
  std::vector<double> at_rung = {value};
  for (const JobCurve& job : others) {
    if (job.job == current.job || static_cast<int64_t>(job.values.size()) < epoch) continue;
    if (job.index < 0 || bracket_of(job.index) != decision.bracket) continue;
    const double v = job.values[epoch - 1];
    if (!std::isfinite(v)) return absl::InvalidArgumentError(NonFinite(job, epoch));
    at_rung.push_back(v);
  }
  const int64_t n = static_cast<int64_t>(at_rung.size());
  decision.reference_jobs = n;
  const std::string rung = "epoch " + std::to_string(epoch) + ": rung of bracket " +
                           std::to_string(decision.bracket) + ": " + objective.metric_name + " ";
  const bool few = n < options.reduction_factor;
  if (few && options.few_at_rung == AshaOptions::FewAtRung::kContinue) {
    decision.reason = Reason::kTooFewAtRung;
    decision.explanation = rung + FormatValue(value) + "; " + std::to_string(n) +
                           (n == 1 ? " job" : " jobs") +
                           " at this rung, fewer than the reduction factor " +
                           std::to_string(options.reduction_factor) + ": continue";
    return decision;
  }
  // The cut-off is the k-th best value, k = floor(n / eta), or 1 when fewer than eta are there
  // (kBest: the top 1/eta is empty, and Optuna keeps the best).
  const int64_t keep = few ? 1 : n / options.reduction_factor;
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
  if (few) {
    const std::string why = " at this rung, fewer than the reduction factor " +
                            std::to_string(options.reduction_factor) + ", only the best continues";
    decision.explanation =
        n == 1 ? rung + FormatValue(value) + "; the only job" + why + ": continue"
               : rung + value_text + op + cutoff_text + ", the best of the " + std::to_string(n) +
                     " jobs" + why + ": " + (decision.stop ? "stop" : "continue");
    return decision;
  }
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
  const BracketMap bracket_of(options);
  decision.bracket = bracket_of(current.index);
  if (auto off_rung = DecideOffRung(decision, current, objective, options)) return *off_rung;
  return DecideAtRung(std::move(decision), current, others, objective, options, bracket_of);
}

}  // namespace amt::stopping
