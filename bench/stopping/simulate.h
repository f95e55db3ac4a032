// In-process tuning-job simulation for the early-stopping benchmark: one strategy's configurations
// trained one after another (parallelism 1) on the curves of curve_family.h, with early stopping
// Off, Auto (the median rule) or Hyperband (ASHA), using the same amt_search and amt_stopping code
// amtd runs. Sequential on purpose: the first N trials of a longer run are exactly an N-trial run,
// so one run per seed gives both the N-trial results and the epochs needed to reach a regret.
#ifndef AMT_BENCH_STOPPING_SIMULATE_H_
#define AMT_BENCH_STOPPING_SIMULATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/stopping/curve_family.h"
#include "orchestrator/stopping/asha.h"
#include "orchestrator/stopping/median_rule.h"

namespace amt::bench {

enum class Method { kOff, kAuto, kHyperband };

struct TrialRecord {
  int64_t epochs = 0;    // objective emissions before the job ended (all of them were trained)
  double reported = 0;   // the last emitted (observed) loss: the job's final objective
  double true_loss = 0;  // the noise-free loss at the job's last epoch
};

struct SimulationOptions {
  int64_t max_epochs = 81;  // a job that is not stopped runs this many epochs (= MaxResource)
  int64_t trials = 400;     // trials simulated per seed
  stopping::MedianRuleOptions median;
  stopping::AshaOptions asha;  // max_resource is set to max_epochs
};

// The configurations `strategy` ("Random" or "Hyperband") proposes for trials 0..count-1 with
// `seed` over BenchSpace().
absl::StatusOr<std::vector<Config>> Configurations(const std::string& strategy, uint64_t seed,
                                                   int64_t count);

// Trains `configs` in order on `problem` with `method`; one record per trial.
absl::StatusOr<std::vector<TrialRecord>> Simulate(Method method, const Problem& problem,
                                                  const std::vector<Config>& configs,
                                                  const SimulationOptions& options);

// Epochs used by the first `n` trials.
int64_t EpochsOf(const std::vector<TrialRecord>& trials, int64_t n);

// Regret after the first `n` trials: the true loss of the trial with the best reported final
// objective (SageMaker's BestTrainingJob) minus `optimum`.
double RegretOf(const std::vector<TrialRecord>& trials, int64_t n, double optimum);

// Epochs used until the regret first drops to `target` or below; nullopt if it never does.
std::optional<int64_t> EpochsToReach(const std::vector<TrialRecord>& trials, double target,
                                     double optimum);

}  // namespace amt::bench

#endif  // AMT_BENCH_STOPPING_SIMULATE_H_
