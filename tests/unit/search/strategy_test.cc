#include "orchestrator/search/strategy.h"

#include <gtest/gtest.h>

#include <memory>

#include "orchestrator/search/bayesian.h"
#include "tests/support/status_matchers.h"

namespace amt::search {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

SearchSpace CategoricalSpace() {
  SearchSpace space;
  space.categorical.push_back({"booster", {"gbtree", "dart"}});
  space.categorical.push_back({"objective", {"reg:squarederror", "reg:tweedie", "reg:gamma"}});
  return space;
}

TEST(MakeStrategy, CreatesRandomWithoutTrialLimit) {
  SearchSpace space = CategoricalSpace();
  space.continuous.push_back({"eta", 0.01, 0.3, Scaling::kLogarithmic});
  absl::StatusOr<std::unique_ptr<Strategy>> strategy = MakeStrategy("Random", space, 1);
  ASSERT_THAT(strategy, IsOk());
  EXPECT_EQ((*strategy)->MaxTrials(), std::nullopt);
  absl::StatusOr<Assignment> params = (*strategy)->Suggest(History{}, 0);
  ASSERT_THAT(params, IsOk());
  EXPECT_EQ(params->size(), 3u);
}

TEST(MakeStrategy, GivesBayesianThePriorObservations) {
  // Warm start: five of the six combinations are known, and Bayesian never re-suggests a known
  // combination while another exists, so its first trial is the sixth.
  std::vector<PriorObservation> prior;
  for (const char* booster : {"gbtree", "dart"}) {
    for (const char* objective : {"reg:squarederror", "reg:tweedie", "reg:gamma"}) {
      if (std::string(booster) == "dart" && std::string(objective) == "reg:gamma") continue;
      prior.push_back({{{"booster", booster}, {"objective", objective}}, 1.0});
    }
  }
  absl::StatusOr<std::unique_ptr<Strategy>> strategy =
      MakeStrategy("Bayesian", CategoricalSpace(), 1, prior);
  ASSERT_THAT(strategy, IsOk());
  absl::StatusOr<Assignment> first = (*strategy)->Suggest(History{}, 0);
  ASSERT_THAT(first, IsOk());
  EXPECT_EQ(*first, (Assignment{{"booster", "dart"}, {"objective", "reg:gamma"}}));
}

TEST(MakeStrategy, GivesBayesianTheBudget) {
  // Six parameters: a design of 9 trials, or a quarter of a 20-trial budget.
  SearchSpace space;
  for (int i = 0; i < 6; ++i) {
    space.continuous.push_back({"p" + std::to_string(i), 0, 1, Scaling::kLinear});
  }
  auto design = [&](int64_t max_trials) {
    std::unique_ptr<Strategy> strategy = MakeStrategy("Bayesian", space, 1, {}, max_trials).value();
    return static_cast<BayesianStrategy*>(strategy.get())->initial_design_size();
  };
  EXPECT_EQ(design(0), 9);
  EXPECT_EQ(design(20), 5);
  EXPECT_EQ(design(100), 9);
}

TEST(MakeStrategy, CreatesGridWithCombinationCount) {
  absl::StatusOr<std::unique_ptr<Strategy>> strategy = MakeStrategy("Grid", CategoricalSpace(), 1);
  ASSERT_THAT(strategy, IsOk());
  EXPECT_EQ((*strategy)->MaxTrials(), 6);
}

TEST(MakeStrategy, BuildsEverySageMakerStrategy) {
  for (const char* name : {"Random", "Grid", "Hyperband", "Bayesian"}) {
    absl::StatusOr<std::unique_ptr<Strategy>> strategy = MakeStrategy(name, CategoricalSpace(), 1);
    EXPECT_THAT(strategy, IsOk()) << name;
  }
}

TEST(MakeStrategy, RejectsUnknownOrMiscasedName) {
  absl::StatusOr<std::unique_ptr<Strategy>> strategy =
      MakeStrategy("random", CategoricalSpace(), 1);
  EXPECT_THAT(strategy,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Unknown strategy 'random'; expected Bayesian, Random, Hyperband or Grid."));
}

TEST(MakeStrategy, RejectsInvalidSpace) {
  SearchSpace space;
  space.integers.push_back({"n", 10, 1, Scaling::kLinear});
  absl::StatusOr<std::unique_ptr<Strategy>> strategy = MakeStrategy("Random", space, 1);
  EXPECT_THAT(strategy,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Integer parameter range 'n': MinValue is greater than MaxValue."));
}

TEST(MakeStrategy, RejectsGridOverNumericRanges) {
  SearchSpace space = CategoricalSpace();
  space.integers.push_back({"max_depth", 1, 10, Scaling::kAuto});
  absl::StatusOr<std::unique_ptr<Strategy>> strategy = MakeStrategy("Grid", space, 1);
  EXPECT_THAT(
      strategy,
      StatusIs(absl::StatusCode::kInvalidArgument,
               "The Grid strategy supports only categorical parameter ranges; 'max_depth' is an "
               "integer or continuous range."));
}

}  // namespace
}  // namespace amt::search
