#include "orchestrator/search/grid.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/support/status_matchers.h"

namespace amt::search {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

SearchSpace TwoByThree() {
  SearchSpace space;
  space.categorical.push_back({"a", {"x", "y"}});
  space.categorical.push_back({"b", {"1", "2", "3"}});
  return space;
}

std::unique_ptr<GridStrategy> MustCreate(SearchSpace space) {
  absl::StatusOr<std::unique_ptr<GridStrategy>> grid = GridStrategy::Create(std::move(space));
  EXPECT_THAT(grid, IsOk());
  return grid.ok() ? std::move(*grid) : nullptr;
}

TEST(GridStrategy, EnumeratesFirstParameterSlowestInGivenValueOrder) {
  std::unique_ptr<GridStrategy> grid = MustCreate(TwoByThree());
  ASSERT_NE(grid, nullptr);
  const std::vector<Assignment> expected = {
      {{"a", "x"}, {"b", "1"}}, {{"a", "x"}, {"b", "2"}}, {{"a", "x"}, {"b", "3"}},
      {{"a", "y"}, {"b", "1"}}, {{"a", "y"}, {"b", "2"}}, {{"a", "y"}, {"b", "3"}},
  };
  for (int64_t i = 0; i < 6; ++i) {
    absl::StatusOr<Assignment> params = grid->Suggest(History{}, i);
    ASSERT_THAT(params, IsOk());
    EXPECT_EQ(*params, expected[static_cast<size_t>(i)]) << "index " << i;
  }
}

TEST(GridStrategy, CountsEveryCombinationExactlyOnce) {
  SearchSpace space = TwoByThree();
  space.categorical.push_back({"c", {"p", "q", "r", "s"}});
  std::unique_ptr<GridStrategy> grid = MustCreate(space);
  ASSERT_NE(grid, nullptr);
  ASSERT_EQ(grid->MaxTrials(), 24);
  std::set<Assignment> seen;
  for (int64_t i = 0; i < 24; ++i) seen.insert(grid->Suggest(History{}, i).value());
  EXPECT_EQ(seen.size(), 24u);
}

TEST(GridStrategy, ReturnsOutOfRangePastLastCombination) {
  std::unique_ptr<GridStrategy> grid = MustCreate(TwoByThree());
  ASSERT_NE(grid, nullptr);
  absl::StatusOr<Assignment> params = grid->Suggest(History{}, 6);
  EXPECT_THAT(params, StatusIs(absl::StatusCode::kOutOfRange,
                               "The grid has 6 combinations; trial index 6 is past the last one."));
  EXPECT_THAT(grid->Suggest(History{}, 1000), StatusIs(absl::StatusCode::kOutOfRange));
}

TEST(GridStrategy, RejectsNegativeIndex) {
  std::unique_ptr<GridStrategy> grid = MustCreate(TwoByThree());
  ASSERT_NE(grid, nullptr);
  absl::StatusOr<Assignment> params = grid->Suggest(History{}, -1);
  EXPECT_THAT(params, StatusIs(absl::StatusCode::kInvalidArgument, "Trial index -1 is negative."));
}

TEST(GridStrategy, IgnoresHistory) {
  std::unique_ptr<GridStrategy> grid = MustCreate(TwoByThree());
  ASSERT_NE(grid, nullptr);
  History history;
  history.trials.push_back({{{"a", "y"}, {"b", "3"}}, TrialState::kSucceeded, 0.5});
  EXPECT_EQ(grid->Suggest(history, 0).value(), grid->Suggest(History{}, 0).value());
}

TEST(GridStrategy, HasOneEmptyCombinationWithoutRanges) {
  std::unique_ptr<GridStrategy> grid = MustCreate(SearchSpace{});
  ASSERT_NE(grid, nullptr);
  EXPECT_EQ(grid->MaxTrials(), 1);
  EXPECT_EQ(grid->Suggest(History{}, 0).value(), Assignment{});
  EXPECT_THAT(grid->Suggest(History{}, 1), StatusIs(absl::StatusCode::kOutOfRange));
}

TEST(GridStrategy, RejectsContinuousRange) {
  SearchSpace space = TwoByThree();
  space.continuous.push_back({"eta", 0.1, 0.2, Scaling::kLinear});
  absl::StatusOr<std::unique_ptr<GridStrategy>> grid = GridStrategy::Create(space);
  EXPECT_THAT(
      grid,
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          "The Grid strategy supports only categorical parameter ranges; 'eta' is an integer or "
          "continuous range."));
}

}  // namespace
}  // namespace amt::search
