// SageMaker's Random strategy: every trial an independent random combination within the ranges,
// reproducible from (seed, trial index) alone. It is also Hyperband's search side (MakeStrategy
// gives it for "Hyperband": new configurations are "chosen randomly", spec §2; what differs is
// when jobs stop, stopping/asha.h), and the sampler other strategies reuse for their random
// starting points.
//
// Sampling, per parameter:
// - Integer, Linear or Auto: uniform over the integers of [min, max].
// - Integer, Logarithmic: x log-uniform over [min, max + 1), then floor(x), clamped to [min, max];
//   so P(k) is proportional to log((k + 1) / k).
// - Continuous, Linear or Auto: uniform over [min, max].
// - Continuous, Logarithmic: log-uniform over [min, max].
// - Continuous, ReverseLogarithmic: 1 - y with y log-uniform over [1 - max, 1 - min] (dense near
// 1).
// - Categorical: each value with equal probability.
// Auto is linear because SageMaker "initially assumes linear" and Random never learns a scale.
// Continuous results are clamped to [min, max] after the floating-point arithmetic, so the range
// holds exactly (and a parameter with min == max always gives min).
//
// Reproducibility: trial i uses its own std::mt19937_64 seeded with SplitMix64-mixed (seed, i), so
// it does not depend on other trials. Uniform variates are built from raw engine output (53-bit
// doubles, rejection sampling for integers) rather than <random>'s distributions, whose
// algorithms the C++ standard leaves to the library: the same seed gives the same trials with any
// standard library. Parameters are drawn in the order integers, continuous, categorical, each list
// in the order of the space.
#ifndef AMT_ORCHESTRATOR_SEARCH_RANDOM_H_
#define AMT_ORCHESTRATOR_SEARCH_RANDOM_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <random>

#include "absl/status/statusor.h"
#include "orchestrator/search/search_space.h"
#include "orchestrator/search/strategy.h"

namespace amt::search {

// The 64-bit seed of trial `index`'s engine: SplitMix64 finalizers over seed and index, so nearby
// seeds and nearby indices give unrelated streams.
uint64_t TrialSeed(uint64_t seed, int64_t index);

// One random combination of `space` (which must pass SearchSpace::Validate()), drawn from `engine`
// as documented above.
Assignment SampleAssignment(const SearchSpace& space, std::mt19937_64& engine);

class RandomStrategy final : public Strategy {
 public:
  // InvalidArgument when `space` fails SearchSpace::Validate().
  static absl::StatusOr<std::unique_ptr<RandomStrategy>> Create(SearchSpace space, uint64_t seed);

  // Ignores `history` (Random's choices never depend on results). Thread-safe (no mutable state).
  absl::StatusOr<Assignment> Suggest(const History& history, int64_t index) override;
  std::optional<int64_t> MaxTrials() const override { return std::nullopt; }
  bool UsesHistory() const override { return false; }

 private:
  RandomStrategy(SearchSpace space, uint64_t seed) : space_(std::move(space)), seed_(seed) {}

  const SearchSpace space_;
  const uint64_t seed_;
};

}  // namespace amt::search

#endif  // AMT_ORCHESTRATOR_SEARCH_RANDOM_H_
