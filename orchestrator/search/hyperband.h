// SageMaker's Hyperband strategy, search side: every new configuration is random, "chosen
// randomly" after a stop (spec §2), reproducible from (seed, trial index) alone, with the sampler
// and per-trial seeding of RandomStrategy (random.h). With the same RandomSeed, Hyperband and
// Random therefore propose the same configurations in the same order; what differs is when their
// jobs stop. The stopping side (rungs, reduction factor, brackets, MaxResource) is
// amt::stopping::EvaluateAsha in orchestrator/stopping/asha.h, which amtd calls on every objective
// emission.
#ifndef AMT_ORCHESTRATOR_SEARCH_HYPERBAND_H_
#define AMT_ORCHESTRATOR_SEARCH_HYPERBAND_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "absl/status/statusor.h"
#include "orchestrator/search/search_space.h"
#include "orchestrator/search/strategy.h"

namespace amt::search {

class HyperbandStrategy final : public Strategy {
 public:
  // InvalidArgument when `space` fails SearchSpace::Validate().
  static absl::StatusOr<std::unique_ptr<HyperbandStrategy>> Create(SearchSpace space,
                                                                   uint64_t seed);

  // A random combination for trial `index`; ignores `history` (ASHA decides who continues, not
  // which configuration comes next). InvalidArgument when `index` < 0. Thread-safe (no mutable
  // state).
  absl::StatusOr<Assignment> Suggest(const History& history, int64_t index) override;

  // Unbounded here; SageMaker's 750-job limit for Hyperband is a validation rule.
  std::optional<int64_t> MaxTrials() const override { return std::nullopt; }

 private:
  HyperbandStrategy(SearchSpace space, uint64_t seed) : space_(std::move(space)), seed_(seed) {}

  const SearchSpace space_;
  const uint64_t seed_;
};

}  // namespace amt::search

#endif  // AMT_ORCHESTRATOR_SEARCH_HYPERBAND_H_
