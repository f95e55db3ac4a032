#include "orchestrator/search/hyperband.h"

#include <random>
#include <string>
#include <utility>

#include "common/status_macros.h"
#include "orchestrator/search/random.h"

namespace amt::search {

absl::StatusOr<std::unique_ptr<HyperbandStrategy>> HyperbandStrategy::Create(SearchSpace space,
                                                                             uint64_t seed) {
  RETURN_IF_ERROR(space.Validate());
  return std::unique_ptr<HyperbandStrategy>(new HyperbandStrategy(std::move(space), seed));
}

absl::StatusOr<Assignment> HyperbandStrategy::Suggest(const History& /*history*/, int64_t index) {
  if (index < 0) {
    return absl::InvalidArgumentError("Trial index " + std::to_string(index) + " is negative.");
  }
  std::mt19937_64 engine(TrialSeed(seed_, index));
  return SampleAssignment(space_, engine);
}

}  // namespace amt::search
