// The contract every search strategy passes. A new strategy adds one line to Cases().
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <system_error>
#include <vector>

#include "orchestrator/search/strategy.h"
#include "tests/support/status_matchers.h"

namespace amt::search {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

struct StrategyCase {
  std::string name;
  // Builds the strategy over `space` with `seed`.
  std::function<absl::StatusOr<std::unique_ptr<Strategy>>(const SearchSpace&, uint64_t)> make;
  bool numeric_ranges;  // accepts integer and continuous ranges (Grid: categorical only)
  bool seed_dependent;  // different seeds give different trials (Grid: deterministic)
};

// Readable test names in CTest and failure output.
void PrintTo(const StrategyCase& c, std::ostream* os) { *os << c.name; }

std::vector<StrategyCase> Cases() {
  auto by_name = [](std::string name) {
    return
        [name](const SearchSpace& space, uint64_t seed) { return MakeStrategy(name, space, seed); };
  };
  return {
      {"Random", by_name("Random"), /*numeric_ranges=*/true, /*seed_dependent=*/true},
      {"Grid", by_name("Grid"), /*numeric_ranges=*/false, /*seed_dependent=*/false},
      {"Hyperband", by_name("Hyperband"), /*numeric_ranges=*/true, /*seed_dependent=*/true},
      {"Bayesian", by_name("Bayesian"), /*numeric_ranges=*/true, /*seed_dependent=*/true},
  };
}

std::optional<int64_t> ParseInt(const std::string& text) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<double> ParseDouble(const std::string& text) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

// A deterministic objective so history-driven strategies see structure.
double Objective(const Assignment& params) {
  double total = 0;
  for (const auto& [name, value] : params) {
    if (std::optional<double> x = ParseDouble(value)) {
      total += std::fabs(*x);
    } else {
      total += static_cast<double>(value.size());
    }
  }
  return total;
}

class StrategyContractTest : public ::testing::TestWithParam<StrategyCase> {
 protected:
  static constexpr int64_t kTrials = 40;

  // Every kind and every scaling when the strategy takes numeric ranges; three categoricals
  // (24 combinations) otherwise.
  SearchSpace Space() const {
    SearchSpace space;
    if (GetParam().numeric_ranges) {
      space.integers.push_back({"depth", -3, 7, Scaling::kLinear});
      space.integers.push_back({"trees", 1, 1000, Scaling::kLogarithmic});
      space.integers.push_back({"batch", 16, 16, Scaling::kAuto});
      space.continuous.push_back({"alpha", -1.5, 2.5, Scaling::kAuto});
      space.continuous.push_back({"lr", 1e-6, 1e-1, Scaling::kLogarithmic});
      space.continuous.push_back({"momentum", 0.5, 0.999, Scaling::kReverseLogarithmic});
    }
    space.categorical.push_back({"optimizer", {"sgd", "adam", "\"rmsprop\""}});
    space.categorical.push_back({"booster", {"gbtree", "dart"}});
    space.categorical.push_back({"loss", {"l1", "l2", "huber", "log cosh"}});
    return space;
  }

  std::unique_ptr<Strategy> Make(const SearchSpace& space, uint64_t seed) const {
    absl::StatusOr<std::unique_ptr<Strategy>> strategy = GetParam().make(space, seed);
    EXPECT_THAT(strategy, IsOk());
    return strategy.ok() ? std::move(*strategy) : nullptr;
  }

  int64_t TrialCount(const Strategy& strategy) const {
    return std::min(kTrials, strategy.MaxTrials().value_or(kTrials));
  }

  // Suggests trials 0..n-1 in order, appending each as a finished trial, as amtd does.
  std::vector<Assignment> Run(Strategy& strategy, int64_t n, History* history) const {
    std::vector<Assignment> out;
    for (int64_t i = 0; i < n; ++i) {
      absl::StatusOr<Assignment> params = strategy.Suggest(*history, i);
      EXPECT_THAT(params, IsOk()) << "trial " << i;
      if (!params.ok()) break;
      out.push_back(*params);
      history->trials.push_back({*params, TrialState::kSucceeded, Objective(*params)});
    }
    return out;
  }
};

TEST_P(StrategyContractTest, SuggestionsStayInRangeForAllKinds) {
  const SearchSpace space = Space();
  std::unique_ptr<Strategy> strategy = Make(space, 11);
  ASSERT_NE(strategy, nullptr);
  History history;
  const std::vector<Assignment> trials = Run(*strategy, TrialCount(*strategy), &history);
  ASSERT_FALSE(trials.empty());
  for (const Assignment& params : trials) {
    for (const IntegerParameter& p : space.integers) {
      std::optional<int64_t> v = ParseInt(params.at(p.name));
      ASSERT_TRUE(v.has_value()) << p.name << "=" << params.at(p.name);
      EXPECT_GE(*v, p.min_value) << p.name;
      EXPECT_LE(*v, p.max_value) << p.name;
    }
    for (const ContinuousParameter& p : space.continuous) {
      std::optional<double> v = ParseDouble(params.at(p.name));
      ASSERT_TRUE(v.has_value()) << p.name << "=" << params.at(p.name);
      EXPECT_GE(*v, p.min_value) << p.name;
      EXPECT_LE(*v, p.max_value) << p.name;
    }
    for (const CategoricalParameter& p : space.categorical) {
      EXPECT_THAT(p.values, ::testing::Contains(params.at(p.name))) << p.name;
    }
  }
}

TEST_P(StrategyContractTest, AssignmentHoldsExactlyTheSpaceParameters) {
  const SearchSpace space = Space();
  std::unique_ptr<Strategy> strategy = Make(space, 3);
  ASSERT_NE(strategy, nullptr);
  History history;
  for (const Assignment& params : Run(*strategy, TrialCount(*strategy), &history)) {
    std::vector<std::string> names;
    for (const auto& [name, value] : params) names.push_back(name);
    std::vector<std::string> expected;
    for (const IntegerParameter& p : space.integers) expected.push_back(p.name);
    for (const ContinuousParameter& p : space.continuous) expected.push_back(p.name);
    for (const CategoricalParameter& p : space.categorical) expected.push_back(p.name);
    EXPECT_THAT(names, ::testing::UnorderedElementsAreArray(expected));
  }
}

TEST_P(StrategyContractTest, IntegersAreWrittenAsDecimalIntegers) {
  if (!GetParam().numeric_ranges) GTEST_SKIP() << GetParam().name << " takes no integer ranges";
  const SearchSpace space = Space();
  std::unique_ptr<Strategy> strategy = Make(space, 5);
  ASSERT_NE(strategy, nullptr);
  History history;
  for (const Assignment& params : Run(*strategy, TrialCount(*strategy), &history)) {
    for (const IntegerParameter& p : space.integers) {
      EXPECT_THAT(params.at(p.name), ::testing::MatchesRegex("-?[0-9]+")) << p.name;
    }
  }
}

TEST_P(StrategyContractTest, LogScaledRangesReachSmallMagnitudes) {
  if (!GetParam().numeric_ranges) GTEST_SKIP() << GetParam().name << " takes no numeric ranges";
  SearchSpace space;
  space.continuous.push_back({"lr", 1e-6, 1.0, Scaling::kLogarithmic});
  space.integers.push_back({"trees", 1, 1000000, Scaling::kLogarithmic});
  std::unique_ptr<Strategy> strategy = Make(space, 17);
  ASSERT_NE(strategy, nullptr);
  History history;
  int small_lr = 0;
  int small_trees = 0;
  for (int64_t i = 0; i < 100; ++i) {
    absl::StatusOr<Assignment> params = strategy->Suggest(history, i);
    ASSERT_THAT(params, IsOk());
    if (ParseDouble(params->at("lr")).value_or(1) < 1e-3) ++small_lr;
    if (ParseInt(params->at("trees")).value_or(1000000) < 1000) ++small_trees;
    // A flat objective: nothing to exploit, so the scale alone decides where trials go.
    history.trials.push_back({*params, TrialState::kSucceeded, 1.0});
  }
  // Linear sampling would put about 0.1% of trials there; log sampling about half.
  EXPECT_GE(small_lr, 20);
  EXPECT_GE(small_trees, 20);
}

TEST_P(StrategyContractTest, SameSeedReproducesTrials) {
  std::unique_ptr<Strategy> a = Make(Space(), 99);
  std::unique_ptr<Strategy> b = Make(Space(), 99);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  History history_a;
  History history_b;
  EXPECT_EQ(Run(*a, TrialCount(*a), &history_a), Run(*b, TrialCount(*b), &history_b));
}

TEST_P(StrategyContractTest, DifferentSeedsGiveDifferentTrials) {
  if (!GetParam().seed_dependent) GTEST_SKIP() << GetParam().name << " is deterministic";
  std::unique_ptr<Strategy> a = Make(Space(), 1);
  std::unique_ptr<Strategy> b = Make(Space(), 2);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  History history_a;
  History history_b;
  const std::vector<Assignment> trials_a = Run(*a, 20, &history_a);
  const std::vector<Assignment> trials_b = Run(*b, 20, &history_b);
  ASSERT_EQ(trials_a.size(), trials_b.size());
  int differing = 0;
  for (size_t i = 0; i < trials_a.size(); ++i) differing += trials_a[i] != trials_b[i];
  EXPECT_GE(differing, 15);
}

TEST_P(StrategyContractTest, SuggestIsPureWrtHistoryObjectAndCallOrder) {
  std::unique_ptr<Strategy> strategy = Make(Space(), 23);
  ASSERT_NE(strategy, nullptr);
  History history;
  const int64_t n = std::min<int64_t>(10, TrialCount(*strategy) - 1);
  Run(*strategy, n, &history);
  const History copy = history;

  absl::StatusOr<Assignment> first = strategy->Suggest(history, n);
  ASSERT_THAT(first, IsOk());
  EXPECT_EQ(strategy->Suggest(copy, n).value(), *first);
  EXPECT_EQ(strategy->Suggest(history, n).value(), *first);

  // A restarted amtd: a fresh strategy asked out of order rebuilds the same suggestion.
  std::unique_ptr<Strategy> restarted = Make(Space(), 23);
  ASSERT_NE(restarted, nullptr);
  ASSERT_THAT(restarted->Suggest(History{}, 0), IsOk());
  EXPECT_EQ(restarted->Suggest(copy, n).value(), *first);
}

TEST_P(StrategyContractTest, ReturnsOutOfRangePastMaxTrials) {
  std::unique_ptr<Strategy> strategy = Make(Space(), 4);
  ASSERT_NE(strategy, nullptr);
  const std::optional<int64_t> max = strategy->MaxTrials();
  if (!max.has_value()) {
    EXPECT_THAT(strategy->Suggest(History{}, 1000000), IsOk());
    return;
  }
  EXPECT_THAT(strategy->Suggest(History{}, *max - 1), IsOk());
  EXPECT_THAT(strategy->Suggest(History{}, *max), StatusIs(absl::StatusCode::kOutOfRange));
}

TEST_P(StrategyContractTest, RejectsNegativeIndex) {
  std::unique_ptr<Strategy> strategy = Make(Space(), 4);
  ASSERT_NE(strategy, nullptr);
  absl::StatusOr<Assignment> params = strategy->Suggest(History{}, -1);
  EXPECT_THAT(params, StatusIs(absl::StatusCode::kInvalidArgument, "Trial index -1 is negative."));
}

INSTANTIATE_TEST_SUITE_P(AllStrategies, StrategyContractTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<StrategyCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace amt::search
