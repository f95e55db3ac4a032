#include "orchestrator/search/hyperband.h"

#include <gtest/gtest.h>

#include <memory>

#include "orchestrator/search/random.h"
#include "tests/support/status_matchers.h"

namespace amt::search {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

SearchSpace Space() {
  SearchSpace space;
  space.integers.push_back({"layers", 1, 8, Scaling::kLinear});
  space.continuous.push_back({"learning_rate", 1e-4, 1e-1, Scaling::kLogarithmic});
  space.categorical.push_back({"optimizer", {"sgd", "adam"}});
  return space;
}

TEST(HyperbandStrategy, ProposesRandomsConfigurationsWhenSeedIsTheSame) {
  std::unique_ptr<HyperbandStrategy> hyperband = HyperbandStrategy::Create(Space(), 7).value();
  std::unique_ptr<RandomStrategy> random = RandomStrategy::Create(Space(), 7).value();
  for (int64_t i = 0; i < 50; ++i) {
    EXPECT_EQ(hyperband->Suggest(History{}, i).value(), random->Suggest(History{}, i).value())
        << "trial " << i;
  }
}

TEST(HyperbandStrategy, IgnoresResultsOfEarlierTrials) {
  std::unique_ptr<HyperbandStrategy> hyperband = HyperbandStrategy::Create(Space(), 3).value();
  History history;
  history.trials.push_back({hyperband->Suggest(History{}, 0).value(), TrialState::kSucceeded, 0.1});
  history.trials.push_back({hyperband->Suggest(History{}, 1).value(), TrialState::kFailed, {}});
  EXPECT_EQ(hyperband->Suggest(history, 2).value(), hyperband->Suggest(History{}, 2).value());
}

TEST(HyperbandStrategy, HasNoTrialLimit) {
  EXPECT_EQ(HyperbandStrategy::Create(Space(), 1).value()->MaxTrials(), std::nullopt);
}

TEST(HyperbandStrategy, RejectsInvalidSpace) {
  SearchSpace space;
  space.integers.push_back({"n", 10, 1, Scaling::kLinear});
  absl::StatusOr<std::unique_ptr<HyperbandStrategy>> hyperband =
      HyperbandStrategy::Create(space, 1);
  EXPECT_THAT(hyperband,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Integer parameter range 'n': MinValue is greater than MaxValue."));
}

TEST(MakeStrategy, CreatesHyperbandWithoutTrialLimit) {
  absl::StatusOr<std::unique_ptr<Strategy>> strategy = MakeStrategy("Hyperband", Space(), 5);
  ASSERT_THAT(strategy, IsOk());
  EXPECT_EQ((*strategy)->MaxTrials(), std::nullopt);
  EXPECT_EQ((*strategy)->Suggest(History{}, 4).value(),
            HyperbandStrategy::Create(Space(), 5).value()->Suggest(History{}, 4).value());
}

}  // namespace
}  // namespace amt::search
