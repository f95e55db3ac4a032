// Hyperband's stopping side (Strategy=Hyperband): asynchronous successive halving (ASHA), which
// AWS names as SageMaker's algorithm (spec §2), over the resource "objective emissions" (epochs).
//
// Each job belongs to a bracket, a function of its launch index (round robin tilted to cost no
// more epochs than Hyperband, plain round robin, or Hyperband's budget-proportional shares:
// AshaOptions::allocation). Bracket s has rungs at the epochs MinResource * eta^(s + k),
// k = 0, 1, ..., below MaxResource. When a job emits the epoch of one of its bracket's rungs, it
// continues only if its value there is within the top 1/eta of the values at that rung of the
// bracket's jobs that have reached it, itself included; ties continue. A job reaching MaxResource
// is stopped. A job is never stopped before MinResource.
//
// Asynchronous: a job is judged once per rung, when it gets there, against whoever got there
// before; later arrivals never revive or stop it retroactively. With fewer than eta jobs at the
// rung (the first jobs of a tuning job) the top 1/eta is empty, and ASHA's promotion rule would
// hold them at the rung, which a stopping rule cannot do: AshaOptions::few_at_rung says whether
// they all continue or, as in Optuna, only the best of them.
//
// Pure: no I/O, no clock. New configurations are random (search/random.h).
#ifndef AMT_ORCHESTRATOR_STOPPING_ASHA_H_
#define AMT_ORCHESTRATOR_STOPPING_ASHA_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "orchestrator/stopping/decision.h"

namespace amt::stopping {

struct AshaOptions {
  // How launch indices are spread over the brackets.
  enum class Allocation {
    // index modulo the brackets in use.
    kRoundRobin,
    // Hyperband's shares (Li et al.; Optuna's HyperbandPruner): with B brackets, bracket b gets
    // ceil(B * eta^s / (s + 1)) parts, s = B - 1 - b, so the early-deciding brackets get most
    // jobs; the brackets are interleaved (smooth weighted round robin) so that a short tuning job
    // gets every bracket in about those proportions. BracketWeights() gives the parts.
    kByBudget,
    // Round robin, tilted toward bracket 0 just enough that a job is expected to cost no more
    // epochs than under Hyperband's own shares (kByBudget over all MaxBrackets() brackets):
    // bracket 0 gets the smallest whole number w of parts for which the mean of ExpectedEpochs()
    // with weights w, 1, ..., 1 is at most Hyperband's, the other brackets 1 part each (w = 1,
    // plain round robin, where round robin costs no more already). With eta 3 and 3 brackets:
    // 2, 1, 1 at MaxResource 27 (round robin 8.33 epochs per job, Hyperband's shares 7.41),
    // round robin at 81 (11.22 against 11.77). bench/README.md ("At or under HyperbandPruner's
    // epochs") measured it against Optuna's HyperbandPruner at 20 and 50 jobs.
    kCostCapped,
  };
  // What a rung decides when fewer than eta of the bracket's jobs have reached it.
  enum class FewAtRung {
    kContinue,  // every job continues (reason kTooFewAtRung)
    kBest,      // only a job at least as good as every other at the rung continues (Optuna's)
  };

  // HyperbandStrategyConfig.MinResource: no job is stopped before this epoch; the first rung of
  // bracket 0. SageMaker's default is undocumented; spec §14 suggests 1. Must be >= 1.
  int64_t min_resource = 1;
  // HyperbandStrategyConfig.MaxResource (or inferred from the static hyperparameters by the
  // caller): a job is stopped when it reaches it. Required: must be >= min_resource.
  int64_t max_resource = 0;
  // eta: a job continues at a rung when within the top 1/eta; rungs are eta times apart.
  // Undocumented by AWS; spec §14 suggests 3 (as do the ASHA paper, Optuna and Syne Tune).
  // Must be >= 2.
  int64_t reduction_factor = 3;
  // Number of brackets; at most MaxBrackets() are used (more would repeat the bracket without
  // rungs). 1 is plain ASHA (spec §2: SageMaker's Hyperband "uses ASHA"); each further bracket
  // starts its rungs eta times later, so the slow starters it holds get more epochs before their
  // first comparison. Undocumented by AWS; 3 is what bench/README.md measured best (1 stops too
  // many slow starters at epoch 1). Must be >= 1.
  int64_t brackets = 3;
  // A job reaching MaxResource at its own last epoch: false leaves it to end by itself (it ends
  // Completed, as a job that ran all its epochs); true stops it like any job reaching MaxResource
  // (it ends Stopped). SageMaker documents only "once a job reaches MaxResource it is stopped"
  // (spec §2, status UNCONFIRMED). A job with more epochs than MaxResource is stopped either way.
  bool stop_at_last_epoch = false;
  // Undocumented by AWS (spec §2 says only that SageMaker uses ASHA); bench/README.md measures
  // each at 20 and 50 jobs.
  Allocation allocation = Allocation::kCostCapped;
  FewAtRung few_at_rung = FewAtRung::kBest;
  // Explicit shares, overriding `allocation`'s: bracket b gets bracket_weights[b] parts,
  // interleaved as for kByBudget; a bracket in use beyond the list gets 1 part, entries beyond
  // EffectiveBrackets() are ignored. Empty (the default): `allocation` decides. For measuring other
  // shares with bench/stopping (bench/README.md); amtd does not set it. Entries must be >= 1 and
  // add up to at most 4096.
  std::vector<int64_t> bracket_weights;
};

// 1 + the number of rungs of bracket 0 (the last bracket then has no rung: it never stops a job
// early). Requires min_resource >= 1, reduction_factor >= 2.
int64_t MaxBrackets(const AshaOptions& options);

// The brackets in use: min(brackets, MaxBrackets()).
int64_t EffectiveBrackets(const AshaOptions& options);

// InvalidArgument naming the field when min_resource < 1, max_resource < min_resource,
// reduction_factor < 2, brackets < 1, or bracket_weights has an entry < 1 or adds up to more
// than 4096.
absl::Status ValidateAshaOptions(const AshaOptions& options);

// The epochs a job of `bracket` is expected to run if each of the bracket's rungs keeps 1/eta of
// the jobs that reach it: its first rung, plus each later stretch up to MaxResource times the
// share of jobs still running (MaxResource for a bracket without rungs). With eta 3 at
// MaxResource 27: 3, 7, 15 and 27 for brackets 0-3. Requires valid options.
double ExpectedEpochs(const AshaOptions& options, int64_t bracket);

// The parts of each bracket in use (EffectiveBrackets() entries): options.bracket_weights when set
// (1 for the brackets it does not cover); else under options.allocation, all 1 for kRoundRobin,
// Hyperband's ceil(B * eta^s / (s + 1)) for kByBudget, scaled down (each part at least 1) when
// they would add up to more than 4096, and w, 1, ..., 1 for kCostCapped (w at most 4096 - B + 1).
// Requires valid options.
std::vector<int64_t> BracketWeights(const AshaOptions& options);

// The bracket of the job launched with 0-based `index`, a function of (index, options) only, so a
// restarted amtd assigns the same brackets: index modulo EffectiveBrackets() for kRoundRobin
// without bracket_weights; otherwise position index modulo the sum of BracketWeights() in a smooth
// weighted round robin over the weights (ties to the lower bracket). Requires valid options and
// index >= 0. Cost: O(sum of weights * brackets) unless round robin.
int64_t BracketOf(int64_t index, const AshaOptions& options);

// The rung epochs of `bracket`, ascending: MinResource * eta^(bracket + k) < MaxResource.
// Requires valid options; empty for a bracket with no rung.
std::vector<int64_t> Rungs(const AshaOptions& options, int64_t bracket = 0);

// Decides on the latest emission of `current` (epoch e = current.values.size()). `others` holds
// every other job of the tuning job with its emissions so far (whatever their state, stopped ones
// included, any order; a job named like `current` is skipped); only those of current's bracket
// count. The Decision's rule is "hyperband", its bracket current's; reason kReachedMaxResource or
// kOutsideTopFraction (stop), kLastEpoch, kBelowMinResource, kNotARung, kTooFewAtRung or
// kInTopFraction (continue). At a rung, threshold is the cut-off (the worst value still in the top
// 1/eta, or the best value when fewer than eta jobs are there and few_at_rung is kBest) and
// reference_jobs the number of the bracket's jobs at the rung, current included. Errors:
// InvalidArgument for invalid options, a negative current.index, a `current` without emission, or a
// non-finite value the rule reads (naming the job and epoch). Cost: O(others) at a rung, O(log
// MaxResource) elsewhere.
absl::StatusOr<Decision> EvaluateAsha(const JobCurve& current, const std::vector<JobCurve>& others,
                                      const Objective& objective, const AshaOptions& options);

}  // namespace amt::stopping

#endif  // AMT_ORCHESTRATOR_STOPPING_ASHA_H_
