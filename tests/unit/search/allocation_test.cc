#include "orchestrator/search/allocation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "tests/support/status_matchers.h"

namespace amt::search {
namespace {

using ::amt::testing::StatusIs;
using Capacity = std::vector<std::optional<int64_t>>;

constexpr uint64_t kSeed = 7;

std::vector<std::optional<int>> Deals(Allocation allocation, const Capacity& capacity, int n) {
  std::vector<std::optional<int>> out;
  for (int i = 0; i < n; ++i) out.push_back(DefinitionOfTrial(allocation, capacity, kSeed, i));
  return out;
}

TEST(Allocation, ParsesTheTwoRulesAndRefusesOthers) {
  EXPECT_EQ(ParseAllocation("round-robin").value(), Allocation::kRoundRobin);
  EXPECT_EQ(ParseAllocation("random").value(), Allocation::kRandom);
  EXPECT_THAT(ParseAllocation("greedy"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(AllocationName(Allocation::kRandom), "random");
  EXPECT_EQ(AllocationName(Allocation::kRoundRobin), "round-robin");
}

TEST(Allocation, RoundRobinDealsInRequestOrder) {
  const Capacity unbounded(3, std::nullopt);
  EXPECT_THAT(Deals(Allocation::kRoundRobin, unbounded, 7),
              ::testing::ElementsAre(0, 1, 2, 0, 1, 2, 0));
}

TEST(Allocation, RoundRobinSkipsADefinitionThatRanOut) {
  // Grid definitions of 1, 3 and 2 combinations: 6 trials, then nothing.
  const Capacity grid = {1, 3, 2};
  EXPECT_THAT(Deals(Allocation::kRoundRobin, grid, 7),
              ::testing::ElementsAre(0, 1, 2, 1, 2, 1, std::nullopt));
}

TEST(Allocation, RandomIsReproducibleCoversEveryDefinitionAndRespectsCapacity) {
  const Capacity unbounded(3, std::nullopt);
  const auto deals = Deals(Allocation::kRandom, unbounded, 300);
  EXPECT_EQ(deals, Deals(Allocation::kRandom, unbounded, 300));
  std::vector<int> counts(3, 0);
  for (const auto& d : deals) ++counts.at(d.value());
  for (int c : counts) EXPECT_GT(c, 60) << "about 100 of 300 each";
  EXPECT_NE(deals, Deals(Allocation::kRoundRobin, unbounded, 300));
  const Capacity grid = {2, 2};
  std::vector<int> grid_counts(2, 0);
  for (const auto& d : Deals(Allocation::kRandom, grid, 4)) ++grid_counts.at(d.value());
  EXPECT_THAT(grid_counts, ::testing::ElementsAre(2, 2));
  EXPECT_EQ(DefinitionOfTrial(Allocation::kRandom, grid, kSeed, 4), std::nullopt);
}

TEST(Allocation, ASingleDefinitionGetsEveryTrial) {
  EXPECT_THAT(Deals(Allocation::kRandom, {std::nullopt}, 4), ::testing::ElementsAre(0, 0, 0, 0));
  EXPECT_THAT(Deals(Allocation::kRoundRobin, {std::nullopt}, 3), ::testing::ElementsAre(0, 0, 0));
}

TEST(Allocation, NoDefinitionOrANegativeIndexHasNone) {
  EXPECT_EQ(DefinitionOfTrial(Allocation::kRoundRobin, {}, kSeed, 0), std::nullopt);
  EXPECT_EQ(DefinitionOfTrial(Allocation::kRoundRobin, {std::nullopt}, kSeed, -1), std::nullopt);
}

// A definition's share is what DefinitionOfTrial deals it over the budget, under both rules.
TEST(Allocation, TrialsOfDefinitionCountsTheDeals) {
  const Capacity unbounded(3, std::nullopt);
  for (const Allocation allocation : {Allocation::kRoundRobin, Allocation::kRandom}) {
    const auto deals = Deals(allocation, unbounded, 20);
    int64_t sum = 0;
    for (int d = 0; d < 3; ++d) {
      const int64_t expected = std::count(deals.begin(), deals.end(), std::optional<int>(d));
      EXPECT_EQ(TrialsOfDefinition(allocation, 3, kSeed, d, 20), expected) << d;
      sum += expected;
    }
    EXPECT_EQ(sum, 20);
  }
  EXPECT_EQ(TrialsOfDefinition(Allocation::kRoundRobin, 3, kSeed, 0, 20), 7);
  EXPECT_EQ(TrialsOfDefinition(Allocation::kRoundRobin, 3, kSeed, 2, 20), 6);
  EXPECT_EQ(TrialsOfDefinition(Allocation::kRoundRobin, 1, kSeed, 0, 20), 20);
  EXPECT_EQ(TrialsOfDefinition(Allocation::kRoundRobin, 3, kSeed, 3, 20), 0);
  EXPECT_EQ(TrialsOfDefinition(Allocation::kRandom, 3, kSeed, -1, 20), 0);
  EXPECT_EQ(TrialsOfDefinition(Allocation::kRandom, 3, kSeed, 0, 0), 0);
}

}  // namespace
}  // namespace amt::search
