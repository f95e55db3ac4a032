#include "orchestrator/search/grid.h"

#include <string>
#include <utility>

#include "common/status_macros.h"

namespace amt::search {

absl::StatusOr<std::unique_ptr<GridStrategy>> GridStrategy::Create(SearchSpace space) {
  RETURN_IF_ERROR(space.Validate());
  if (!space.integers.empty() || !space.continuous.empty()) {
    const std::string name =
        space.integers.empty() ? space.continuous.front().name : space.integers.front().name;
    return absl::InvalidArgumentError(
        "The Grid strategy supports only categorical parameter ranges; '" + name +
        "' is an integer or continuous range.");
  }
  return std::unique_ptr<GridStrategy>(new GridStrategy(std::move(space)));
}

absl::StatusOr<Assignment> GridStrategy::Suggest(const History& /*history*/, int64_t index) {
  if (index < 0) {
    return absl::InvalidArgumentError("Trial index " + std::to_string(index) + " is negative.");
  }
  if (index >= size_) {
    return absl::OutOfRangeError("The grid has " + std::to_string(size_) +
                                 " combinations; trial index " + std::to_string(index) +
                                 " is past the last one.");
  }
  // Peel digits from the least significant (last) range upwards.
  Assignment params;
  int64_t rest = index;
  for (auto it = space_.categorical.rbegin(); it != space_.categorical.rend(); ++it) {
    const int64_t n = static_cast<int64_t>(it->values.size());
    params[it->name] = it->values[static_cast<size_t>(rest % n)];
    rest /= n;
  }
  return params;
}

}  // namespace amt::search
