// SageMaker's Bayesian strategy: Gaussian-process Bayesian optimisation with Expected
// Improvement, seeded and pure like every strategy (a suggestion is a function of the space,
// the seed, the options, the history and the trial index; see strategy.h).
//
// How a suggestion is made (details in the files bayesian_internal.h lists and the gp_*.h
// headers):
// - The first trials (initial_design_size(): at most a quarter of MaxNumberOfTrainingJobs, fewer
//   when prior observations are given) follow a space-filling design: the most spread-out of
//   several seeded Latin hypercubes.
// - Afterwards a GP (gp_model.h: Matern-5/2, one length scale per parameter, noise, MAP
//   hyperparameters with restarts) models the warped objective (gp_warping.h) over the unit-cube
//   encoding (gp_encoding.h). Auto-scaled ranges spanning a factor of 10 or more are encoded
//   linearly or logarithmically, whichever gives the higher fitted marginal likelihood once 10
//   objectives are known (SageMaker "initially assumes linear" and infers log scaling).
// - Running trials (kPending) are fantasised: the GP is conditioned on their posterior mean
//   ("kriging believer"), which shrinks its uncertainty there, and a fantasy below the best
//   result becomes the incumbent, so parallel suggestions spread out instead of piling onto one
//   point (BayesianOptions::fantasy_samples averages over sampled outcomes instead). Running
//   trials, at their believed values, rank with the results for the centres of the local
//   candidates, so the next suggestion can step on from where the batch is heading, and the
//   candidates that are otherwise uniform over the space come from a trust region (TuRBO): a
//   box around the best result (for every other candidate, around the best of the results and
//   the running trials at their believed values) whose side grows after successes and shrinks
//   after failures (bench/README.md, "Trust region while trials run"). The
//   acquisition is also penalised around each running trial (local penalisation, Gonzalez et
//   al. 2016): by the probability that a point lies outside the ball the trial's outcome is
//   expected to rule out, given an estimated Lipschitz constant of the objective. And the
//   suggestion is the minimiser of a lower confidence bound instead (exploiting, GP-BUCB) when
//   the penalised EI rates it nearly as well as its own best (BayesianOptions::batch_lcb_kappa).
// - Failed trials and trials without an objective are kept as observations with the worst
//   objective seen so far: the model learns that the region is bad, the strategy never proposes
//   the same hyperparameters again, and a job whose failures are deterministic (out of memory
//   at a large batch size) moves away. The exact hyperparameters of any earlier trial (any
//   state) or prior observation are never suggested again while another combination exists.
// - log Expected Improvement is maximised over seeded random and local candidates (local steps
//   reflected at the range bounds), the best refined by projected L-BFGS; integers are rounded
//   and categoricals one-hot throughout. The acquisition GP's prior mean is the worst result so
//   far (BayesianOptions::prior_mean_quantile), so far from every trial (the box's corners and
//   edges) it expects no improvement and does not run there. A continuous range's bound where
//   every earlier trial did worse than the median is not proposed again, nor one a running
//   trial is on before any trial there has done well (BayesianOptions::avoid_bad_bounds).
// - Kernel hyperparameters are refitted on a schedule (on every new result up to 100 results,
//   then whenever the number of finished trials has grown by 50%, on the first finished trials
//   in launch order), on at most 200 results, and cached by the data they were fitted to: the
//   cache changes speed only, never a suggestion. At 750 results a suggestion takes about 40 ms
//   and a refit adds about 30 ms (bench/README.md).
#ifndef AMT_ORCHESTRATOR_SEARCH_BAYESIAN_H_
#define AMT_ORCHESTRATOR_SEARCH_BAYESIAN_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "orchestrator/search/gp_model.h"
#include "orchestrator/search/search_space.h"
#include "orchestrator/search/strategy.h"

namespace amt::search {

// PriorObservation (strategy.h): a result known before the tuning job started (warm start). Its
// params may use another range set: names outside the space are ignored; an observation missing
// a parameter of the space, naming an unknown categorical value or lying far outside a numeric
// range (more than half the range's width) is dropped.

struct BayesianOptions {
  std::vector<PriorObservation> prior_observations;
  // Trials of the space-filling design; 0 chooses max(5, min(10, parameters + 3)), and at most
  // a quarter of max_trials (at least 2) when that is known. Prior observations reduce it one
  // for one.
  int initial_design_size = 0;
  // The tuning job's MaxNumberOfTrainingJobs, 0 when unknown. A small budget gets a smaller
  // design, so that more of its trials follow the model: on the real problems of bench/README.md
  // ("Real training problems"), 5 design trials instead of 9 at 20 trials lowered breast
  // cancer's median best (60 seeds) from 0.1421 to 0.1380, while on the synthetic functions the
  // smaller design found Styblinski-Tang's global basin less often at 100 evaluations.
  int64_t max_trials = 0;
  // Learn whether Auto-scaled ranges are logarithmic (see above); false keeps them linear.
  bool learn_auto_scaling = true;
  // Fantasies of the running trials' outcomes: 1 conditions on the posterior mean ("kriging
  // believer"); S > 1 averages Expected Improvement over S joint posterior samples (Snoek et al.
  // 2012). The benchmark found no gain from sampling, so 1 is the default.
  int fantasy_samples = 1;
  // The acquisition GP's prior mean, as this quantile (0..1) of the warped objectives observed
  // so far: what the model expects where it knows nothing (far from every trial, which in more
  // than two dimensions means the corners and edges of the space). 1 expects the worst result
  // seen, so Expected Improvement there comes from uncertainty alone, not from a mean better than
  // most trials; 0.5 is about the zero mean of a plain standardised GP. bench/README.md ("Real
  // training problems") measured 1 against the plain mean: trials on a range bound 33% -> 15% of
  // the first 20, returns to bounds that had failed (eta = 0) about a third as many, and no
  // synthetic function worse. Kernel hyperparameters are fitted with the plain mean either way.
  double prior_mean_quantile = 1.0;
  // Skip candidates with a continuous hyperparameter exactly on a bound of its range when every
  // earlier trial on that bound did worse than the median result (or failed): the acquisition's
  // optimiser lands on bounds, and a stationary GP does not learn that a bound is a cliff
  // (XGBoost's eta = 0 learns nothing while eta = 0.05 may be best). A bound whose trials did
  // well stays open, as does the interior next to a bad one. bench/README.md ("Real training
  // problems") measured returns to bad bounds 18 -> 0 in 750 trials (3 problems, 5 seeds).
  // While trials run, a bound that a running trial is on is skipped too until a finished trial
  // there did at least as well as the median: one trial at a time tries an unproven bound
  // (4 at a time on the XGBoost problems, trials at eta = 0: up to 4 per run -> at most 1).
  bool avoid_bad_bounds = true;
  // While trials run, a suggestion may exploit instead of explore: the point that minimises the
  // lower confidence bound mean - batch_lcb_kappa * sd of the GP conditioned on the running
  // trials at their believed values (GP-BUCB, Desautels et al. 2014; the conditioning shrinks
  // the sd at the running trials, so the batch does not pile up) is suggested when the
  // penalised Expected Improvement there is at least e^-batch_lcb_tolerance of the best EI
  // found, and it lies at least 1e-3 from every running trial; otherwise EI's point is.
  // Penalised EI alone moves most of a batch far from the best result (its incumbent is the
  // running trials' believed value), and the bound alone stays in the first basin found.
  // bench/README.md ("Exploiting while trials run"): with 4 workers Hartmann-6's median regret
  // at 60 evaluations went from 2.68 to 1.30 times the sequential one (seeds 0-319; the batch
  // refines its basin faster), no other cell above 1.5. 0 turns it off.
  double batch_lcb_kappa = 1.25;
  double batch_lcb_tolerance = 2.0;
};

class BayesianStrategy final : public Strategy {
 public:
  // InvalidArgument when `space` fails SearchSpace::Validate().
  static absl::StatusOr<std::unique_ptr<Strategy>> Create(SearchSpace space, uint64_t seed,
                                                          BayesianOptions options = {});

  // InvalidArgument when `index` < 0. Failed and objective-less trials are handled as described
  // above; trials whose params do not fit the space are ignored. Not thread-safe (a cache of
  // hyperparameter fits is updated); amtd calls it on the orchestrator loop.
  absl::StatusOr<Assignment> Suggest(const History& history, int64_t index) override;
  std::optional<int64_t> MaxTrials() const override { return std::nullopt; }

  // The number of design trials (after prior observations).
  int initial_design_size() const { return static_cast<int>(design_.size()); }

 private:
  struct Fit {
    uint64_t key;
    GpHyperparameters hyperparameters;
    std::vector<bool> auto_log;
  };
  struct Data;

  BayesianStrategy(SearchSpace space, uint64_t seed, BayesianOptions options);

  Fit FitFor(const History& history);
  Assignment Acquire(const Data& data, const Fit& fit, std::mt19937_64& engine) const;
  Assignment SpreadOut(const Data& data, std::mt19937_64& engine) const;

  const SearchSpace space_;
  const uint64_t seed_;
  const BayesianOptions options_;
  std::vector<std::vector<double>> design_;  // coordinates of the design trials
  std::deque<Fit> cache_;                    // most recent first
};

}  // namespace amt::search

#endif  // AMT_ORCHESTRATOR_SEARCH_BAYESIAN_H_
