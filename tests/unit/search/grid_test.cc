#include "orchestrator/search/grid.h"

#include <gtest/gtest.h>

#include <set>

namespace amt::search {
namespace {

SearchSpace TwoByThree() {
  SearchSpace space;
  space.categorical.push_back({"a", {"x", "y"}});
  space.categorical.push_back({"b", {"1", "2", "3"}});
  return space;
}

std::unique_ptr<GridStrategy> MustCreate(SearchSpace space) {
  absl::StatusOr<std::unique_ptr<GridStrategy>> grid = GridStrategy::Create(std::move(space));
  EXPECT_TRUE(grid.ok()) << grid.status();
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
    ASSERT_TRUE(params.ok()) << params.status();
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
  EXPECT_EQ(params.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(params.status().message(),
            "The grid has 6 combinations; trial index 6 is past the last one.");
  EXPECT_EQ(grid->Suggest(History{}, 1000).status().code(), absl::StatusCode::kOutOfRange);
}

TEST(GridStrategy, RejectsNegativeIndex) {
  std::unique_ptr<GridStrategy> grid = MustCreate(TwoByThree());
  ASSERT_NE(grid, nullptr);
  absl::StatusOr<Assignment> params = grid->Suggest(History{}, -1);
  EXPECT_EQ(params.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(params.status().message(), "Trial index -1 is negative.");
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
  EXPECT_EQ(grid->Suggest(History{}, 1).status().code(), absl::StatusCode::kOutOfRange);
}

TEST(GridStrategy, RejectsContinuousRange) {
  SearchSpace space = TwoByThree();
  space.continuous.push_back({"eta", 0.1, 0.2, Scaling::kLinear});
  absl::StatusOr<std::unique_ptr<GridStrategy>> grid = GridStrategy::Create(space);
  EXPECT_EQ(grid.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(grid.status().message(),
            "The Grid strategy supports only categorical parameter ranges; 'eta' is an integer or "
            "continuous range.");
}

}  // namespace
}  // namespace amt::search
