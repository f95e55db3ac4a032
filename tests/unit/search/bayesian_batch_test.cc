// BayesianStrategy with trials running (bayesian.h): how a batch of 4 descends into a narrow
// basin, with and without the lower-confidence-bound pick (BayesianOptions::batch_lcb_kappa).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/search/bayesian.h"
#include "orchestrator/search/search_space.h"
#include "orchestrator/search/strategy.h"

namespace amt::search {
namespace {

constexpr int kDims = 6;

SearchSpace Box6() {
  SearchSpace space;
  for (int j = 0; j < kDims; ++j) {
    space.continuous.push_back({"x" + std::to_string(j), 0, 1, Scaling::kLinear});
  }
  return space;
}

// A narrow well (minimum -1 at kCentre, width about 0.2 to 0.4 per coordinate) on a gentle
// slope, as Hartmann-6's global basin: the search must find it, then descend into it.
double Well(const Assignment& a) {
  static constexpr double kCentre[kDims] = {0.2, 0.15, 0.48, 0.28, 0.31, 0.66};
  static constexpr double kCurvature[kDims] = {10, 3, 17, 3.5, 1.7, 8};
  double s = 0;
  double slope = 0;
  for (int j = 0; j < kDims; ++j) {
    const double d = std::stod(a.at("x" + std::to_string(j))) - kCentre[j];
    s += kCurvature[j] * d * d;
    slope += d * d;
  }
  return -std::exp(-s) + 0.05 * slope;
}

// The best value of `trials` trials run 4 at a time (each finishes when the fourth after it is
// suggested, as jobs that all take the same time), minus the minimum, for one seed.
double RegretFourAtATime(const BayesianOptions& options, uint64_t seed, int trials) {
  constexpr int kParallel = 4;
  std::unique_ptr<Strategy> strategy = BayesianStrategy::Create(Box6(), seed, options).value();
  History history;
  double best = INFINITY;
  for (int i = 0; i < trials + kParallel; ++i) {
    if (i >= kParallel) {
      Trial& done = history.trials[static_cast<size_t>(i - kParallel)];
      done.state = TrialState::kSucceeded;
      done.objective = Well(done.params);
      best = std::min(best, *done.objective);
    }
    if (i >= trials) continue;
    history.trials.push_back(
        {strategy->Suggest(history, i).value(), TrialState::kPending, std::nullopt});
  }
  return best + 1;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return (v[(v.size() - 1) / 2] + v[v.size() / 2]) / 2;
}

// Penalised Expected Improvement alone sends most of a batch far from the best result while the
// runs descend (its incumbent is the running trials' believed value); the bound's pick keeps
// part of it descending. Over seeds 1-16 at 40 trials the median regret is 0.0051 with the bound
// and 0.0092 without, and the bound's run is better in 11 of the 16.
TEST(BayesianBatch, TheBoundLetsFourAtATimeDescendFurther) {
  BayesianOptions with;
  with.max_trials = 40;
  BayesianOptions without = with;
  without.batch_lcb_kappa = 0;
  std::vector<double> regret_with;
  std::vector<double> regret_without;
  int better = 0;
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    regret_with.push_back(RegretFourAtATime(with, seed, 40));
    regret_without.push_back(RegretFourAtATime(without, seed, 40));
    better += regret_with.back() < regret_without.back();
  }
  EXPECT_LT(Median(regret_with), 0.7 * Median(regret_without));
  EXPECT_GE(better, 10);
}

// One trial at a time nothing runs, so the bound never applies: the runs are the same.
TEST(BayesianBatch, SequentialRunsDoNotUseTheBound) {
  BayesianOptions without;
  without.batch_lcb_kappa = 0;
  std::unique_ptr<Strategy> a = BayesianStrategy::Create(Box6(), 3).value();
  std::unique_ptr<Strategy> b = BayesianStrategy::Create(Box6(), 3, without).value();
  History history;
  for (int i = 0; i < 15; ++i) {
    const Assignment params = a->Suggest(history, i).value();
    ASSERT_EQ(params, b->Suggest(history, i).value()) << "trial " << i;
    history.trials.push_back({params, TrialState::kSucceeded, Well(params)});
  }
}

}  // namespace
}  // namespace amt::search
