// Hyperband's search side: MakeStrategy("Hyperband") is the Random strategy (new configurations
// are chosen randomly; ASHA in stopping/ decides who continues).
#include <gtest/gtest.h>

#include <memory>

#include "orchestrator/search/random.h"
#include "orchestrator/search/strategy.h"
#include "tests/support/status_matchers.h"

namespace amt::search {
namespace {

using ::amt::testing::StatusIs;

SearchSpace Space() {
  SearchSpace space;
  space.integers.push_back({"layers", 1, 8, Scaling::kLinear});
  space.continuous.push_back({"learning_rate", 1e-4, 1e-1, Scaling::kLogarithmic});
  space.categorical.push_back({"optimizer", {"sgd", "adam"}});
  return space;
}

TEST(HyperbandSearch, ProposesRandomsConfigurationsWhenSeedIsTheSame) {
  std::unique_ptr<Strategy> hyperband = MakeStrategy("Hyperband", Space(), 7).value();
  std::unique_ptr<RandomStrategy> random = RandomStrategy::Create(Space(), 7).value();
  for (int64_t i = 0; i < 50; ++i) {
    EXPECT_EQ(hyperband->Suggest(History{}, i).value(), random->Suggest(History{}, i).value())
        << "trial " << i;
  }
}

TEST(HyperbandSearch, IgnoresResultsOfEarlierTrials) {
  std::unique_ptr<Strategy> hyperband = MakeStrategy("Hyperband", Space(), 3).value();
  History history;
  history.trials.push_back({hyperband->Suggest(History{}, 0).value(), TrialState::kSucceeded, 0.1});
  history.trials.push_back({hyperband->Suggest(History{}, 1).value(), TrialState::kFailed, {}});
  EXPECT_EQ(hyperband->Suggest(history, 2).value(), hyperband->Suggest(History{}, 2).value());
}

TEST(HyperbandSearch, HasNoTrialLimit) {
  EXPECT_EQ(MakeStrategy("Hyperband", Space(), 1).value()->MaxTrials(), std::nullopt);
}

TEST(HyperbandSearch, RejectsInvalidSpace) {
  SearchSpace space;
  space.integers.push_back({"n", 10, 1, Scaling::kLinear});
  EXPECT_THAT(MakeStrategy("Hyperband", space, 1),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Integer parameter range 'n': MinValue is greater than MaxValue."));
}

}  // namespace
}  // namespace amt::search
