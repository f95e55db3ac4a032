#include "orchestrator/search/strategy.h"

#include <utility>

#include "common/status_macros.h"
#include "orchestrator/search/bayesian.h"
#include "orchestrator/search/grid.h"
#include "orchestrator/search/random.h"

namespace amt::search {

absl::StatusOr<std::unique_ptr<Strategy>> MakeStrategy(std::string_view name, SearchSpace space,
                                                       uint64_t seed,
                                                       std::vector<PriorObservation> prior,
                                                       int64_t max_trials) {
  const std::string strategy(name);
  // Hyperband's search side is Random (spec §2: new configurations are "chosen randomly"); its
  // stopping side is stopping::EvaluateAsha. With the same seed both propose the same trials.
  if (strategy == "Random" || strategy == "Hyperband") {
    ASSIGN_OR_RETURN(std::unique_ptr<RandomStrategy> random,
                     RandomStrategy::Create(std::move(space), seed));
    return std::unique_ptr<Strategy>(std::move(random));
  }
  if (strategy == "Grid") {
    ASSIGN_OR_RETURN(std::unique_ptr<GridStrategy> grid, GridStrategy::Create(std::move(space)));
    return std::unique_ptr<Strategy>(std::move(grid));
  }
  if (strategy == "Bayesian") {
    BayesianOptions options;
    options.prior_observations = std::move(prior);
    options.max_trials = max_trials;
    return BayesianStrategy::Create(std::move(space), seed, std::move(options));
  }
  return absl::InvalidArgumentError("Unknown strategy '" + strategy +
                                    "'; expected Bayesian, Random, Hyperband or Grid.");
}

}  // namespace amt::search
