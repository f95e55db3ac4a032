#include "orchestrator/search/bayesian.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/status_matchers.h"

namespace amt::search {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

using Objective = std::function<double(const Assignment&)>;

double Get(const Assignment& a, const std::string& name) { return std::stod(a.at(name)); }

SearchSpace Box2() {
  SearchSpace space;
  space.continuous.push_back({"x", 0, 1, Scaling::kLinear});
  space.continuous.push_back({"y", 0, 1, Scaling::kLinear});
  return space;
}

// A smooth bowl with its minimum 0 at (0.3, 0.7).
double Bowl(const Assignment& a) {
  const double dx = Get(a, "x") - 0.3;
  const double dy = Get(a, "y") - 0.7;
  return dx * dx + 2 * dy * dy;
}

std::unique_ptr<Strategy> Make(SearchSpace space, uint64_t seed, BayesianOptions options = {}) {
  absl::StatusOr<std::unique_ptr<Strategy>> strategy =
      BayesianStrategy::Create(std::move(space), seed, std::move(options));
  EXPECT_THAT(strategy, IsOk());
  return strategy.ok() ? std::move(*strategy) : nullptr;
}

// Runs `n` sequential trials, each finished before the next is suggested.
History RunTrials(Strategy& strategy, int n, const Objective& f, bool minimize = true) {
  History history;
  history.minimize = minimize;
  for (int i = 0; i < n; ++i) {
    Assignment params = strategy.Suggest(history, i).value();
    history.trials.push_back({params, TrialState::kSucceeded, f(params)});
  }
  return history;
}

double Best(const History& history) {
  double best = INFINITY;
  for (const Trial& t : history.trials) {
    if (t.objective.has_value()) best = std::min(best, *t.objective);
  }
  return best;
}

TEST(BayesianStrategy, CreateRejectsAnInvalidSpace) {
  SearchSpace space;
  space.continuous.push_back({"lr", 0, 1, Scaling::kLogarithmic});
  absl::StatusOr<std::unique_ptr<Strategy>> strategy = BayesianStrategy::Create(space, 1);
  EXPECT_THAT(strategy, StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("lr")));
}

TEST(BayesianStrategy, MakeStrategyBuildsIt) {
  absl::StatusOr<std::unique_ptr<Strategy>> strategy = MakeStrategy("Bayesian", Box2(), 1);
  ASSERT_THAT(strategy, IsOk());
  EXPECT_EQ((*strategy)->MaxTrials(), std::nullopt);
  EXPECT_THAT((*strategy)->Suggest(History{}, 0), IsOk());
}

TEST(BayesianStrategy, DesignSizeFollowsTheParameterCountTheBudgetAndPriors) {
  auto design_size = [](SearchSpace space, BayesianOptions options = {}) {
    auto strategy = BayesianStrategy::Create(std::move(space), 1, std::move(options)).value();
    return static_cast<BayesianStrategy*>(strategy.get())->initial_design_size();
  };
  EXPECT_EQ(design_size(Box2()), 5);
  SearchSpace wide;
  for (int i = 0; i < 12; ++i) {
    wide.continuous.push_back({"p" + std::to_string(i), 0, 1, Scaling::kLinear});
  }
  EXPECT_EQ(design_size(wide), 10);
  // A known budget caps the design at a quarter of it (rounded up, at least 2): more of a small
  // tuning job follows the model.
  SearchSpace six;
  for (int i = 0; i < 6; ++i) {
    six.continuous.push_back({"p" + std::to_string(i), 0, 1, Scaling::kLinear});
  }
  auto with_budget = [](int64_t max_trials) {
    BayesianOptions o;
    o.max_trials = max_trials;
    return o;
  };
  EXPECT_EQ(design_size(six), 9);
  EXPECT_EQ(design_size(six, with_budget(20)), 5);
  EXPECT_EQ(design_size(six, with_budget(21)), 6);
  EXPECT_EQ(design_size(six, with_budget(50)), 9);
  EXPECT_EQ(design_size(six, with_budget(4)), 2);
  EXPECT_EQ(design_size(wide, with_budget(100)), 10);
  BayesianOptions explicit_size = with_budget(20);
  explicit_size.initial_design_size = 8;
  EXPECT_EQ(design_size(six, explicit_size), 8);
  BayesianOptions options;
  options.initial_design_size = 3;
  options.prior_observations = {{{{"x", "0.5"}, {"y", "0.5"}}, 1.0}};
  EXPECT_EQ(design_size(Box2(), options), 2);
}

TEST(BayesianStrategy, InitialDesignIsALatinHypercube) {
  std::unique_ptr<Strategy> strategy = Make(Box2(), 4);
  ASSERT_NE(strategy, nullptr);
  History history;
  std::set<int> x_cells;
  std::set<int> y_cells;
  for (int i = 0; i < 5; ++i) {
    // The design ignores results: ask without telling.
    const Assignment a = strategy->Suggest(history, i).value();
    x_cells.insert(static_cast<int>(Get(a, "x") * 5));
    y_cells.insert(static_cast<int>(Get(a, "y") * 5));
  }
  EXPECT_EQ(x_cells.size(), 5u);
  EXPECT_EQ(y_cells.size(), 5u);
}

TEST(BayesianStrategy, ConvergesOnASmoothBowl) {
  std::unique_ptr<Strategy> strategy = Make(Box2(), 11);
  ASSERT_NE(strategy, nullptr);
  const History history = RunTrials(*strategy, 25, Bowl);
  EXPECT_LT(Best(history), 1e-4);
}

// XGBoost's ranges as AWS's notebooks write them, and a loss like its validation logloss: eta = 0
// learns nothing (0.693 whatever the rest), elsewhere a smooth bowl inside the ranges.
SearchSpace XgboostRanges() {
  SearchSpace space;
  space.continuous.push_back({"eta", 0, 1, Scaling::kLinear});
  space.continuous.push_back({"alpha", 0, 2, Scaling::kLinear});
  space.continuous.push_back({"min_child_weight", 1, 10, Scaling::kLinear});
  space.continuous.push_back({"subsample", 0.5, 1, Scaling::kLinear});
  space.integers.push_back({"max_depth", 1, 10, Scaling::kLinear});
  space.integers.push_back({"num_round", 50, 300, Scaling::kLinear});
  return space;
}

double XgboostLoss(const Assignment& a) {
  const double eta = Get(a, "eta");
  if (eta == 0) return 0.693;
  auto square = [](double v) { return v * v; };
  const double d = square(eta - 0.25) + 0.02 * square(Get(a, "alpha") - 0.7) +
                   0.002 * square(Get(a, "min_child_weight") - 3) +
                   0.2 * square(Get(a, "subsample") - 0.8) +
                   0.001 * square(Get(a, "max_depth") - 5);
  return 0.13 + d + 0.05 * std::exp(-Get(a, "num_round") / 100);
}

// The issue-38 failure: the acquisition ran to the edges of the box (where the GP is most
// uncertain and its mean the average), putting trials on range bounds and back on eta = 0 after
// eta = 0 had returned the worst loss.
TEST(BayesianStrategy, DoesNotCrowdTheBoundsOrReturnToABadOne) {
  const SearchSpace space = XgboostRanges();
  int on_bound = 0;
  int trials = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    std::unique_ptr<Strategy> strategy = Make(space, seed);
    const History history = RunTrials(*strategy, 30, XgboostLoss);
    std::set<Assignment> seen;
    bool eta_zero_seen = false;
    for (const Trial& t : history.trials) {
      EXPECT_TRUE(seen.insert(t.params).second) << "seed " << seed << " repeats a point";
      const bool eta_zero = Get(t.params, "eta") == 0;
      EXPECT_FALSE(eta_zero && eta_zero_seen) << "seed " << seed << " returned to eta = 0";
      eta_zero_seen |= eta_zero;
      bool bound = false;
      for (const ContinuousParameter& p : space.continuous) {
        const double v = Get(t.params, p.name);
        bound |= v == p.min_value || v == p.max_value;
      }
      on_bound += bound;
      ++trials;
    }
  }
  // With prior_mean_quantile 0.5 (about a plain zero-mean GP) 34 of these 120 trials lay on a
  // bound, and seed 2 went back to eta = 0.
  EXPECT_LE(on_bound, trials / 10);
}

// A bound next to the best region that is itself useless: the learning rate's best values lie
// just above 0, where XGBoost learns nothing. Smooth everywhere else, so the GP expects eta = 0
// to be about as good as its neighbours.
double CliffAtZeroLoss(const Assignment& a) {
  const double eta = Get(a, "eta");
  if (eta == 0) return 0.693;
  auto square = [](double v) { return v * v; };
  return 0.13 + square(eta - 0.04) + 0.02 * square(Get(a, "alpha") - 0.1) +
         0.002 * square(Get(a, "min_child_weight") - 1.5) +
         0.2 * square(Get(a, "subsample") - 0.95) + 0.001 * square(Get(a, "max_depth") - 5) +
         0.05 * std::exp(-Get(a, "num_round") / 100);
}

// Trials on a continuous range's bound, and returns to a bound whose earlier trials were all
// worse than the median result so far, in 40 trials of CliffAtZeroLoss for seeds 1-6.
struct BoundVisits {
  int on_bound = 0;
  int bad_returns = 0;
};
BoundVisits VisitBounds(const BayesianOptions& options) {
  const SearchSpace space = XgboostRanges();
  BoundVisits visits;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    std::unique_ptr<Strategy> strategy = Make(space, seed, options);
    const History history = RunTrials(*strategy, 40, CliffAtZeroLoss);
    std::map<std::pair<std::string, double>, double> best_at;  // (name, bound) -> best loss
    std::vector<double> losses;
    for (const Trial& t : history.trials) {
      std::vector<std::pair<std::string, double>> bounds;
      for (const ContinuousParameter& p : space.continuous) {
        const double v = Get(t.params, p.name);
        if (v == p.min_value || v == p.max_value) bounds.push_back({p.name, v});
      }
      visits.on_bound += !bounds.empty();
      std::vector<double> sorted = losses;
      std::sort(sorted.begin(), sorted.end());
      for (const auto& b : bounds) {
        auto it = best_at.find(b);
        visits.bad_returns += it != best_at.end() && it->second > sorted[sorted.size() / 2];
      }
      losses.push_back(*t.objective);
      for (const auto& b : bounds) {
        auto [it, inserted] = best_at.emplace(b, *t.objective);
        if (!inserted) it->second = std::min(it->second, *t.objective);
      }
    }
  }
  return visits;
}

// Issue 38: once every trial on a range bound was worse than the median result, no trial goes
// back to that bound; bounds that did well stay open.
TEST(BayesianStrategy, DoesNotReturnToABoundWhoseTrialsWereBad) {
  const BoundVisits visits = VisitBounds(BayesianOptions{});
  EXPECT_EQ(visits.bad_returns, 0);
  // alpha = 0 and min_child_weight = 1 are near the best values.
  EXPECT_GT(visits.on_bound, 0);
  // Without the rule the optimiser goes back (to eta = 0 on seeds 2, 4 and 5).
  BayesianOptions without;
  without.avoid_bad_bounds = false;
  EXPECT_GE(VisitBounds(without).bad_returns, 3);
}

// The most trials that ran at once on eta = 0 before any finished there, over 40 trials of
// CliffAtZeroLoss run 4 at a time (each trial finishes when the fourth after it is suggested),
// seeds 1-6; and the trials on eta = 0 in all.
struct ConcurrentCliff {
  int most_at_once = 0;
  int trials = 0;
};
ConcurrentCliff RunFourAtATime(const BayesianOptions& options) {
  constexpr int kParallel = 4;
  ConcurrentCliff out;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    std::unique_ptr<Strategy> strategy = Make(XgboostRanges(), seed, options);
    History history;
    bool finished_there = false;
    for (int i = 0; i < 40; ++i) {
      if (i >= kParallel) {
        Trial& done = history.trials[static_cast<size_t>(i - kParallel)];
        done.state = TrialState::kSucceeded;
        done.objective = CliffAtZeroLoss(done.params);
        finished_there |= Get(done.params, "eta") == 0;
      }
      Assignment params = strategy->Suggest(history, i).value();
      history.trials.push_back({params, TrialState::kPending, std::nullopt});
      int running_there = 0;
      for (const Trial& t : history.trials) {
        running_there += t.state == TrialState::kPending && Get(t.params, "eta") == 0;
      }
      if (!finished_there) out.most_at_once = std::max(out.most_at_once, running_there);
      out.trials += Get(params, "eta") == 0;
    }
  }
  return out;
}

// Issue 38: with trials running in parallel, a bound that a running trial is on and no finished
// trial has shown to be good is not proposed again until that trial reports: one trial finds out
// that eta = 0 learns nothing, not four at once.
TEST(BayesianStrategy, PutsOneRunningTrialAtATimeOnAnUntriedBound) {
  const ConcurrentCliff with = RunFourAtATime(BayesianOptions{});
  EXPECT_EQ(with.most_at_once, 1);  // eta = 0 is tried (the optimum is at 0.04), once at a time
  EXPECT_LE(with.trials, 6);        // and once per seed: when it reports, it is a bad bound
  BayesianOptions without;
  without.avoid_bad_bounds = false;
  EXPECT_GE(RunFourAtATime(without).most_at_once, 2);
}

TEST(BayesianStrategy, MaximisesWhenTheObjectiveIsMaximised) {
  std::unique_ptr<Strategy> strategy = Make(Box2(), 11);
  ASSERT_NE(strategy, nullptr);
  const History history = RunTrials(
      *strategy, 25, [](const Assignment& a) { return 5 - Bowl(a); }, /*minimize=*/false);
  double best = -INFINITY;
  for (const Trial& t : history.trials) best = std::max(best, *t.objective);
  EXPECT_GT(best, 5 - 1e-4);
}

TEST(BayesianStrategy, SameSeedAndHistoryGiveTheSameSuggestionWithOrWithoutCache) {
  std::unique_ptr<Strategy> warm = Make(Box2(), 3);
  ASSERT_NE(warm, nullptr);
  const History history = RunTrials(*warm, 15, Bowl);
  const Assignment from_warm = warm->Suggest(history, 15).value();
  std::unique_ptr<Strategy> cold = Make(Box2(), 3);
  EXPECT_EQ(cold->Suggest(history, 15).value(), from_warm);
  std::unique_ptr<Strategy> other_seed = Make(Box2(), 4);
  EXPECT_NE(other_seed->Suggest(history, 15).value(), from_warm);
}

TEST(BayesianStrategy, CachedFitsGiveTheColdAnswerPastTheRefitSchedule) {
  // 230 results: past the every-result fits (100) and the 200-point fit subsample, with a
  // trial still running from the start (it must not hold the fitted data back).
  std::unique_ptr<Strategy> random = MakeStrategy("Random", Box2(), 1).value();
  History history;
  for (int i = 0; i < 230; ++i) {
    Assignment params = random->Suggest(History{}, i).value();
    const bool running = i == 0;
    history.trials.push_back({params, running ? TrialState::kPending : TrialState::kSucceeded,
                              running ? std::nullopt : std::optional<double>(Bowl(params))});
  }
  std::unique_ptr<Strategy> warm = Make(Box2(), 3);
  ASSERT_NE(warm, nullptr);
  History shorter = history;
  shorter.trials.resize(215);
  ASSERT_THAT(warm->Suggest(shorter, 215), IsOk());
  const Assignment from_warm = warm->Suggest(history, 230).value();
  std::unique_ptr<Strategy> cold = Make(Box2(), 3);
  EXPECT_EQ(cold->Suggest(history, 230).value(), from_warm);
  EXPECT_LT(Bowl(from_warm), 1e-3);
}

TEST(BayesianStrategy, RunningTrialsGetDistinctSpreadOutCompanions) {
  std::unique_ptr<Strategy> strategy = Make(Box2(), 5);
  ASSERT_NE(strategy, nullptr);
  History history = RunTrials(*strategy, 12, Bowl);
  // Four workers: each suggestion sees the previous ones running.
  std::vector<Assignment> batch;
  for (int i = 12; i < 16; ++i) {
    Assignment params = strategy->Suggest(history, i).value();
    batch.push_back(params);
    history.trials.push_back({params, TrialState::kPending, std::nullopt});
  }
  for (size_t a = 0; a < batch.size(); ++a) {
    for (size_t b = a + 1; b < batch.size(); ++b) {
      const double d = std::hypot(Get(batch[a], "x") - Get(batch[b], "x"),
                                  Get(batch[a], "y") - Get(batch[b], "y"));
      EXPECT_GT(d, 1e-3) << a << " " << b;
    }
  }
}

TEST(BayesianStrategy, RunningTrialsNearTheOptimumKeepTheNextSuggestionNearby) {
  // Running trials believed to be near the bowl's minimum centre local candidates too: the
  // next suggestion steps on near them instead of leaving the basin, and repeats none of them.
  std::unique_ptr<Strategy> strategy = Make(Box2(), 6);
  ASSERT_NE(strategy, nullptr);
  History history = RunTrials(*strategy, 15, Bowl);
  const std::vector<std::pair<double, double>> running = {{0.31, 0.70}, {0.29, 0.71}};
  for (const auto& [x, y] : running) {
    history.trials.push_back(
        {{{"x", std::to_string(x)}, {"y", std::to_string(y)}}, TrialState::kPending, std::nullopt});
  }
  const Assignment next = strategy->Suggest(history, 17).value();
  for (const auto& [x, y] : running) {
    EXPECT_GT(std::hypot(Get(next, "x") - x, Get(next, "y") - y), 1e-4);
  }
  EXPECT_LT(std::hypot(Get(next, "x") - 0.3, Get(next, "y") - 0.7), 0.15);
}

TEST(BayesianStrategy, FailedTrialsAreNeverSuggestedAgain) {
  // 2 x 3 = 6 combinations; the three with a = "bad" fail.
  SearchSpace space;
  space.categorical.push_back({"a", {"good", "bad"}});
  space.integers.push_back({"k", 1, 3, Scaling::kLinear});
  std::unique_ptr<Strategy> strategy = Make(space, 2);
  ASSERT_NE(strategy, nullptr);
  History history;
  std::set<Assignment> failed;
  for (int i = 0; i < 12; ++i) {
    Assignment params = strategy->Suggest(history, i).value();
    EXPECT_EQ(failed.count(params), 0u) << "trial " << i << " repeats a failed combination";
    if (params.at("a") == "bad") {
      failed.insert(params);
      history.trials.push_back({params, TrialState::kFailed, std::nullopt});
    } else {
      history.trials.push_back({params, TrialState::kSucceeded, Get(params, "k")});
    }
  }
}

TEST(BayesianStrategy, SucceededTrialsWithoutAnObjectiveCountAsFailed) {
  SearchSpace space;
  space.categorical.push_back({"c", {"a", "b", "c"}});
  std::unique_ptr<Strategy> strategy = Make(space, 2);
  ASSERT_NE(strategy, nullptr);
  History history;
  history.trials.push_back({{{"c", "a"}}, TrialState::kSucceeded, std::nullopt});
  history.trials.push_back({{{"c", "b"}}, TrialState::kSucceeded, 1.0});
  history.trials.push_back({{{"c", "c"}}, TrialState::kSucceeded, 2.0});
  // Every combination is known; the strategy repeats the best, never the objective-less one.
  for (int i = 3; i < 8; ++i) EXPECT_EQ(strategy->Suggest(history, i).value().at("c"), "b");
}

TEST(BayesianStrategy, KeepsSuggestingNewPointsWhenEverythingFails) {
  std::unique_ptr<Strategy> strategy = Make(Box2(), 8);
  ASSERT_NE(strategy, nullptr);
  History history;
  std::set<Assignment> seen;
  for (int i = 0; i < 15; ++i) {
    Assignment params = strategy->Suggest(history, i).value();
    EXPECT_TRUE(seen.insert(params).second) << i;
    history.trials.push_back({params, TrialState::kFailed, std::nullopt});
  }
}

TEST(BayesianStrategy, IgnoresTrialsThatDoNotFitTheSpace) {
  std::unique_ptr<Strategy> strategy = Make(Box2(), 8);
  ASSERT_NE(strategy, nullptr);
  History history = RunTrials(*strategy, 6, Bowl);
  history.trials.push_back({{{"x", "banana"}, {"y", "0.5"}}, TrialState::kSucceeded, -100.0});
  history.trials.push_back({{{"y", "0.5"}}, TrialState::kPending, std::nullopt});
  history.trials.push_back({{{"x", "0.5"}, {"y", "0.5"}}, TrialState::kSucceeded, NAN});
  absl::StatusOr<Assignment> params = strategy->Suggest(history, 9);
  ASSERT_THAT(params, IsOk());
  EXPECT_GE(Get(*params, "x"), 0.0);
  EXPECT_LE(Get(*params, "x"), 1.0);
}

TEST(BayesianStrategy, PriorObservationsWarmStartTheSearch) {
  BayesianOptions options;
  // A parent job's results around the optimum, with a wider range for x and a static "epochs".
  for (double x : {-0.5, 0.1, 0.3, 0.5, 0.9, 1.2}) {
    for (double y : {0.2, 0.7, 0.95}) {
      Assignment params = {{"x", std::to_string(x)}, {"y", std::to_string(y)}, {"epochs", "10"}};
      options.prior_observations.push_back({params, Bowl(params)});
    }
  }
  auto strategy = BayesianStrategy::Create(Box2(), 6, options).value();
  // x = -0.5 and 1.2 lie within half a width of [0, 1] and are used: 18 priors, no design.
  EXPECT_EQ(static_cast<BayesianStrategy*>(strategy.get())->initial_design_size(), 0);
  const Assignment first = strategy->Suggest(History{}, 0).value();
  EXPECT_LT(Bowl(first), 0.02);
}

TEST(BayesianStrategy, DropsPriorObservationsThatCannotBeEncoded) {
  BayesianOptions options;
  options.prior_observations = {
      {{{"x", "3.0"}, {"y", "0.5"}}, 1.0},       // far outside the range
      {{{"x", "0.5"}}, 1.0},                     // y missing
      {{{"x", "0.5"}, {"y", "0.5"}}, INFINITY},  // no usable objective
  };
  auto strategy = BayesianStrategy::Create(Box2(), 6, options).value();
  EXPECT_EQ(static_cast<BayesianStrategy*>(strategy.get())->initial_design_size(), 5);
  EXPECT_THAT(strategy->Suggest(History{}, 7), IsOk());
}

TEST(BayesianStrategy, LearnsThatAnAutoRangeIsLogarithmic) {
  // The optimum sits at 1e-3 in an Auto range [1e-5, 1]: linear sampling would almost never
  // go below 0.01.
  SearchSpace space;
  space.continuous.push_back({"lr", 1e-5, 1.0, Scaling::kAuto});
  space.continuous.push_back({"x", 0, 1, Scaling::kLinear});
  const Objective f = [](const Assignment& a) {
    const double u = std::log10(Get(a, "lr")) + 3;
    const double v = Get(a, "x") - 0.5;
    return u * u + v * v;
  };
  std::unique_ptr<Strategy> strategy = Make(space, 1);
  ASSERT_NE(strategy, nullptr);
  const History history = RunTrials(*strategy, 40, f);
  EXPECT_LT(Best(history), 0.05);
  BayesianOptions fixed;
  fixed.learn_auto_scaling = false;
  std::unique_ptr<Strategy> linear = Make(space, 1, fixed);
  EXPECT_GT(Best(RunTrials(*linear, 40, f)), Best(history));
}

TEST(BayesianStrategy, FantasySamplesAlsoSpreadRunningTrials) {
  BayesianOptions options;
  options.fantasy_samples = 8;
  std::unique_ptr<Strategy> strategy = Make(Box2(), 5, options);
  ASSERT_NE(strategy, nullptr);
  History history = RunTrials(*strategy, 10, Bowl);
  history.trials.push_back(
      {strategy->Suggest(history, 10).value(), TrialState::kPending, std::nullopt});
  const Assignment next = strategy->Suggest(history, 11).value();
  EXPECT_NE(next, history.trials.back().params);
}

TEST(BayesianStrategy, SpaceWithoutSearchableParametersReturnsTheFixedValues) {
  SearchSpace space;
  space.integers.push_back({"batch", 32, 32, Scaling::kAuto});
  space.categorical.push_back({"opt", {"adam"}});
  std::unique_ptr<Strategy> strategy = Make(space, 1);
  ASSERT_NE(strategy, nullptr);
  const Assignment expected = {{"batch", "32"}, {"opt", "adam"}};
  EXPECT_EQ(strategy->Suggest(History{}, 0).value(), expected);
  EXPECT_EQ(strategy->Suggest(History{}, 9).value(), expected);
}

}  // namespace
}  // namespace amt::search
