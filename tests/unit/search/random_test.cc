#include "orchestrator/search/random.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/support/status_matchers.h"

namespace amt::search {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

constexpr int kDraws = 2000;
constexpr uint64_t kSeed = 42;

std::unique_ptr<RandomStrategy> MustCreate(SearchSpace space, uint64_t seed = kSeed) {
  absl::StatusOr<std::unique_ptr<RandomStrategy>> random =
      RandomStrategy::Create(std::move(space), seed);
  EXPECT_THAT(random, IsOk());
  return random.ok() ? std::move(*random) : nullptr;
}

// The values of `name` in trials 0..kDraws-1.
std::vector<std::string> Draw(RandomStrategy& random, const std::string& name) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < kDraws; ++i) out.push_back(random.Suggest(History{}, i).value().at(name));
  return out;
}

std::vector<double> DrawContinuous(const ContinuousParameter& p) {
  SearchSpace space;
  space.continuous.push_back(p);
  std::unique_ptr<RandomStrategy> random = MustCreate(space);
  std::vector<double> out;
  if (random == nullptr) return out;
  for (const std::string& text : Draw(*random, p.name)) out.push_back(std::stod(text));
  return out;
}

std::vector<int64_t> DrawInteger(const IntegerParameter& p) {
  SearchSpace space;
  space.integers.push_back(p);
  std::unique_ptr<RandomStrategy> random = MustCreate(space);
  std::vector<int64_t> out;
  if (random == nullptr) return out;
  for (const std::string& text : Draw(*random, p.name)) out.push_back(std::stoll(text));
  return out;
}

template <typename T>
T Median(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

TEST(RandomStrategy, LogarithmicContinuousMedianIsNearGeometricMean) {
  const std::vector<double> v = DrawContinuous({"lr", 1e-4, 1.0, Scaling::kLogarithmic});
  ASSERT_EQ(v.size(), static_cast<size_t>(kDraws));
  // Geometric mean of [1e-4, 1] is 1e-2; the median of log10 has a standard error near 0.05.
  EXPECT_NEAR(std::log10(Median(v)), -2.0, 0.2);
  for (double x : v) {
    EXPECT_GE(x, 1e-4);
    EXPECT_LE(x, 1.0);
  }
}

TEST(RandomStrategy, LinearContinuousMedianIsNearMidpoint) {
  const std::vector<double> v = DrawContinuous({"x", 1e-4, 1.0, Scaling::kLinear});
  ASSERT_EQ(v.size(), static_cast<size_t>(kDraws));
  EXPECT_NEAR(Median(v), 0.5, 0.05);
}

TEST(RandomStrategy, ReverseLogarithmicConcentratesNearOne) {
  const std::vector<double> v =
      DrawContinuous({"momentum", 0.0, 0.999, Scaling::kReverseLogarithmic});
  ASSERT_EQ(v.size(), static_cast<size_t>(kDraws));
  // 1 - x is log-uniform over [0.001, 1]: its median is near 10^-1.5, so x's median near 0.968.
  EXPECT_NEAR(std::log10(1.0 - Median(v)), -1.5, 0.2);
  const auto above = std::count_if(v.begin(), v.end(), [](double x) { return x > 0.9; });
  EXPECT_GT(above, kDraws * 6 / 10);  // a linear draw would put 10% there
  for (double x : v) {
    EXPECT_GE(x, 0.0);
    EXPECT_LE(x, 0.999);
  }
}

TEST(RandomStrategy, LogarithmicIntegerMedianIsNearGeometricMean) {
  const std::vector<int64_t> v = DrawInteger({"trees", 1, 1000, Scaling::kLogarithmic});
  ASSERT_EQ(v.size(), static_cast<size_t>(kDraws));
  EXPECT_NEAR(std::log10(static_cast<double>(Median(v))), 1.5, 0.2);
  EXPECT_EQ(*std::min_element(v.begin(), v.end()), 1);
  EXPECT_LE(*std::max_element(v.begin(), v.end()), 1000);
}

TEST(RandomStrategy, LinearIntegerHitsEveryValueOfInclusiveRange) {
  const std::vector<int64_t> v = DrawInteger({"depth", -5, 5, Scaling::kLinear});
  const std::set<int64_t> seen(v.begin(), v.end());
  EXPECT_EQ(seen, std::set<int64_t>({-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5}));
  std::map<int64_t, int> counts;
  for (int64_t x : v) ++counts[x];
  for (const auto& [value, count] : counts) {
    EXPECT_GT(count, kDraws / 11 / 2) << value;  // expected about 182 each
    EXPECT_LT(count, kDraws / 11 * 2) << value;
  }
}

TEST(RandomStrategy, IntegerSpanningAllOfInt64StaysInRange) {
  const std::vector<int64_t> v = DrawInteger({"n", std::numeric_limits<int64_t>::min(),
                                              std::numeric_limits<int64_t>::max(), Scaling::kAuto});
  const auto negative = std::count_if(v.begin(), v.end(), [](int64_t x) { return x < 0; });
  EXPECT_GT(negative, kDraws / 4);
  EXPECT_LT(negative, kDraws * 3 / 4);
}

TEST(RandomStrategy, LogarithmicIntegerNearInt64MaxStaysInRange) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  for (int64_t x : DrawInteger({"n", max - 10, max, Scaling::kLogarithmic})) {
    EXPECT_GE(x, max - 10);
  }
}

TEST(RandomStrategy, CategoricalValuesAreRoughlyUniform) {
  SearchSpace space;
  space.categorical.push_back({"opt", {"sgd", "adam", "\"rmsprop\"", "adagrad"}});
  std::unique_ptr<RandomStrategy> random = MustCreate(space);
  ASSERT_NE(random, nullptr);
  std::map<std::string, int> counts;
  for (const std::string& v : Draw(*random, "opt")) ++counts[v];
  ASSERT_EQ(counts.size(), 4u);
  for (const auto& [value, count] : counts) {
    EXPECT_GT(count, 400) << value;  // expected 500, standard deviation about 19
    EXPECT_LT(count, 600) << value;
  }
}

TEST(RandomStrategy, AutoScalingSamplesLikeLinear) {
  SearchSpace linear;
  linear.integers.push_back({"n", 1, 1000, Scaling::kLinear});
  linear.continuous.push_back({"x", 1e-3, 10.0, Scaling::kLinear});
  SearchSpace automatic = linear;
  automatic.integers[0].scaling = Scaling::kAuto;
  automatic.continuous[0].scaling = Scaling::kAuto;
  std::unique_ptr<RandomStrategy> a = MustCreate(linear);
  std::unique_ptr<RandomStrategy> b = MustCreate(automatic);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  for (int64_t i = 0; i < 50; ++i) {
    EXPECT_EQ(a->Suggest(History{}, i).value(), b->Suggest(History{}, i).value()) << i;
  }
}

TEST(RandomStrategy, EqualBoundsAlwaysGiveThatValue) {
  SearchSpace space;
  space.integers.push_back({"n", 7, 7, Scaling::kLogarithmic});
  space.continuous.push_back({"x", 0.25, 0.25, Scaling::kLinear});
  space.continuous.push_back({"y", 0.3, 0.3, Scaling::kLogarithmic});
  space.continuous.push_back({"z", 0.9, 0.9, Scaling::kReverseLogarithmic});
  std::unique_ptr<RandomStrategy> random = MustCreate(space);
  ASSERT_NE(random, nullptr);
  const Assignment expected = {{"n", "7"}, {"x", "0.25"}, {"y", "0.3"}, {"z", "0.9"}};
  for (int64_t i = 0; i < 20; ++i) EXPECT_EQ(random->Suggest(History{}, i).value(), expected);
}

TEST(RandomStrategy, ContinuousValuesUseFormatContinuous) {
  SearchSpace space;
  space.continuous.push_back({"tiny", 1e-9, 1e-6, Scaling::kLogarithmic});
  space.continuous.push_back({"mid", 0.001, 0.1, Scaling::kLinear});
  std::unique_ptr<RandomStrategy> random = MustCreate(space);
  ASSERT_NE(random, nullptr);
  for (int64_t i = 0; i < 100; ++i) {
    const Assignment params = random->Suggest(History{}, i).value();
    EXPECT_THAT(params.at("tiny"), ::testing::HasSubstr("e-")) << i;
    EXPECT_EQ(params.at("mid").find('e'), std::string::npos) << params.at("mid");
    EXPECT_EQ(FormatContinuous(std::stod(params.at("mid"))), params.at("mid"));
  }
}

TEST(RandomStrategy, TrialDoesNotDependOnOtherTrialsOrHistory) {
  SearchSpace space;
  space.continuous.push_back({"x", 0.0, 1.0, Scaling::kLinear});
  std::unique_ptr<RandomStrategy> in_order = MustCreate(space);
  std::unique_ptr<RandomStrategy> direct = MustCreate(space);
  ASSERT_NE(in_order, nullptr);
  ASSERT_NE(direct, nullptr);
  History history;
  for (int64_t i = 0; i < 9; ++i) {
    history.trials.push_back(
        {in_order->Suggest(history, i).value(), TrialState::kSucceeded, static_cast<double>(i)});
  }
  EXPECT_EQ(in_order->Suggest(history, 9).value(), direct->Suggest(History{}, 9).value());
}

TEST(RandomStrategy, TrialSeedDiffersForNearbySeedsAndIndices) {
  std::set<uint64_t> seeds;
  for (uint64_t seed = 0; seed < 4; ++seed) {
    for (int64_t index = 0; index < 4; ++index) seeds.insert(TrialSeed(seed, index));
  }
  EXPECT_EQ(seeds.size(), 16u);
  EXPECT_EQ(TrialSeed(42, 3), TrialSeed(42, 3));
}

TEST(RandomStrategy, RejectsNegativeIndex) {
  std::unique_ptr<RandomStrategy> random = MustCreate(SearchSpace{});
  ASSERT_NE(random, nullptr);
  absl::StatusOr<Assignment> params = random->Suggest(History{}, -3);
  EXPECT_THAT(params, StatusIs(absl::StatusCode::kInvalidArgument, "Trial index -3 is negative."));
}

TEST(RandomStrategy, CreateRejectsInvalidSpace) {
  SearchSpace space;
  space.continuous.push_back({"lr", -1.0, 1.0, Scaling::kLogarithmic});
  absl::StatusOr<std::unique_ptr<RandomStrategy>> random = RandomStrategy::Create(space, 1);
  EXPECT_THAT(
      random,
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          "Continuous parameter range 'lr': Logarithmic scaling requires MinValue greater than "
          "0."));
}

}  // namespace
}  // namespace amt::search
