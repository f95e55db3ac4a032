// SageMaker's Grid strategy: every combination of the categorical values exactly once.
//
// Order (SageMaker does not document one): trial index i is i written in mixed radix over the
// categorical ranges in the order of the space, the first range the most significant digit
// (slowest), the last range the least significant (fastest), each range's values in the order
// given. For {a: [x, y], b: [1, 2, 3]}: (x,1) (x,2) (x,3) (y,1) (y,2) (y,3).
#ifndef AMT_ORCHESTRATOR_SEARCH_GRID_H_
#define AMT_ORCHESTRATOR_SEARCH_GRID_H_

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "orchestrator/search/search_space.h"
#include "orchestrator/search/strategy.h"

namespace amt::search {

class GridStrategy final : public Strategy {
 public:
  // InvalidArgument when `space` fails SearchSpace::Validate() or has integer or continuous
  // ranges (SageMaker's Grid accepts categorical ranges only). A space without ranges has one
  // (empty) combination. Grids larger than INT64_MAX combinations are capped at INT64_MAX
  // (SearchSpace::GridSize()); validation limits real grids to 750.
  static absl::StatusOr<std::unique_ptr<GridStrategy>> Create(SearchSpace space);

  // Ignores `history`. OutOfRange when `index` >= MaxTrials(); InvalidArgument when `index` < 0.
  // Thread-safe (no mutable state).
  absl::StatusOr<Assignment> Suggest(const History& history, int64_t index) override;

  // SearchSpace::GridSize().
  std::optional<int64_t> MaxTrials() const override { return size_; }
  bool UsesHistory() const override { return false; }

 private:
  explicit GridStrategy(SearchSpace space) : space_(std::move(space)), size_(space_.GridSize()) {}

  const SearchSpace space_;
  const int64_t size_;
};

}  // namespace amt::search

#endif  // AMT_ORCHESTRATOR_SEARCH_GRID_H_
