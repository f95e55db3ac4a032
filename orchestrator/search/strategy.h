// The search-strategy interface (SageMaker's Strategy: Random, Grid, Bayesian and Hyperband),
// the trial history strategies learn from, and MakeStrategy.
//
// Strategies are pure: no I/O, no clock, no global RNG. A suggestion is a function of (strategy
// name, search space, seed, history, trial index) only, so a restarted amtd rebuilds every
// suggestion from the persisted history without saved strategy state.
#ifndef AMT_ORCHESTRATOR_SEARCH_STRATEGY_H_
#define AMT_ORCHESTRATOR_SEARCH_STRATEGY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "orchestrator/search/format.h"
#include "orchestrator/search/search_space.h"

namespace amt::search {

// Hyperparameter name -> value exactly as the trainer receives it (SageMaker passes strings).
// Holds exactly the parameters of the search space (static hyperparameters are added elsewhere).
using Assignment = std::map<std::string, std::string>;

enum class TrialState { kPending, kSucceeded, kFailed };

struct Trial {
  Assignment params;
  TrialState state = TrialState::kPending;
  std::optional<double> objective;  // the final objective metric, when the trial reported one
};

// Trials in launch order; the index of the next suggestion is normally trials.size().
struct History {
  std::vector<Trial> trials;
  bool minimize = true;  // HyperParameterTuningJobObjective.Type == "Minimize"
};

// A result known before the tuning job started: a warm-start parent's training job.
struct PriorObservation {
  Assignment params;
  double objective = 0;  // the same objective metric, same direction, as the tuning job
};

class Strategy {
 public:
  virtual ~Strategy() = default;

  // The hyperparameters of the trial with 0-based launch index `index`, given what is known.
  // Pure: the same (seed, space, history, index) gives the same answer, whatever was asked before
  // and whichever History object holds the trials. Errors: OutOfRange when the strategy has no
  // trial `index` (Grid past its last combination); InvalidArgument when `index` < 0.
  // Not thread-safe unless an implementation says so; amtd calls it on the orchestrator loop.
  virtual absl::StatusOr<Assignment> Suggest(const History& history, int64_t index) = 0;

  // Number of trials the strategy can produce, if finite (Grid), else nullopt.
  virtual std::optional<int64_t> MaxTrials() const = 0;

  // Whether Suggest reads `history` (Bayesian) or only the index (Random, Grid): a caller may
  // then pass an empty History instead of building one from every earlier trial.
  virtual bool UsesHistory() const { return true; }
};

// Creates the strategy SageMaker calls `name` (case-sensitive, as in the API) over `space`.
// Errors: InvalidArgument when `space` fails SearchSpace::Validate(), when the strategy cannot
// search it (Grid with integer or continuous ranges) or when `name` is not a SageMaker strategy;
// "Random", "Grid", "Hyperband" (random configurations; stopping is amtd's) or "Bayesian".
// `prior` (warm start) is what Bayesian learns from before its first trial, and `max_trials` (the
// tuning job's MaxNumberOfTrainingJobs, 0 when unknown) sizes its space-filling start
// (BayesianOptions::max_trials); the others, which learn nothing, ignore both.
absl::StatusOr<std::unique_ptr<Strategy>> MakeStrategy(std::string_view name, SearchSpace space,
                                                       uint64_t seed,
                                                       std::vector<PriorObservation> prior = {},
                                                       int64_t max_trials = 0);

}  // namespace amt::search

#endif  // AMT_ORCHESTRATOR_SEARCH_STRATEGY_H_
