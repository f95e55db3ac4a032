#include "orchestrator/stopping/asha.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/support/status_matchers.h"

namespace amt::stopping {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const Objective kLoss{"val_loss", /*minimize=*/true};
const Objective kAccuracy{"val_acc", /*minimize=*/false};

AshaOptions Options(int64_t min_resource, int64_t max_resource, int64_t brackets = 1) {
  AshaOptions options;
  options.min_resource = min_resource;
  options.max_resource = max_resource;
  options.brackets = brackets;
  return options;
}

JobCurve Job(std::string name, int64_t index, std::vector<double> values) {
  return {std::move(name), index, std::move(values), JobState::kRunning};
}

// Five jobs of bracket 0 with values 0.1 ... 0.5 at epoch 1.
std::vector<JobCurve> FiveAtFirstRung() {
  return {Job("a", 0, {0.1}), Job("b", 1, {0.2, 0.2}), Job("c", 2, {0.3}), Job("d", 3, {0.4}),
          Job("e", 4, {0.5})};
}

Decision MustEvaluate(const JobCurve& current, const std::vector<JobCurve>& others,
                      const Objective& objective, const AshaOptions& options) {
  absl::StatusOr<Decision> decision = EvaluateAsha(current, others, objective, options);
  EXPECT_THAT(decision, IsOk());
  return decision.value_or(Decision{});
}

TEST(Rungs, ArePowersOfReductionFactorBelowMaxResource) {
  EXPECT_THAT(Rungs(Options(1, 81)), ElementsAre(1, 3, 9, 27));
  EXPECT_THAT(Rungs(Options(2, 20)), ElementsAre(2, 6, 18));
  EXPECT_THAT(Rungs(Options(1, 82)), ElementsAre(1, 3, 9, 27, 81));
  EXPECT_THAT(Rungs(Options(5, 5)), IsEmpty());
}

TEST(Rungs, StartEtaTimesLaterInEachBracket) {
  const AshaOptions options = Options(1, 81, 5);
  EXPECT_THAT(Rungs(options, 1), ElementsAre(3, 9, 27));
  EXPECT_THAT(Rungs(options, 3), ElementsAre(27));
  EXPECT_THAT(Rungs(options, 4), IsEmpty());
}

TEST(Rungs, DoNotOverflowNearInt64Max) {
  AshaOptions options = Options(1, std::numeric_limits<int64_t>::max());
  options.reduction_factor = 1000;
  EXPECT_EQ(Rungs(options).size(), 7u);  // 1e0 ... 1e18
  EXPECT_THAT(Rungs(options, 7), IsEmpty());
}

TEST(MaxBrackets, IsOnePlusTheRungsOfBracketZero) {
  EXPECT_EQ(MaxBrackets(Options(1, 81)), 5);
  EXPECT_EQ(MaxBrackets(Options(1, 10)), 4);
  EXPECT_EQ(MaxBrackets(Options(7, 7)), 1);
}

TEST(EffectiveBrackets, ClampsToMaxBrackets) {
  EXPECT_EQ(EffectiveBrackets(Options(1, 81, 3)), 3);
  EXPECT_EQ(EffectiveBrackets(Options(1, 81, 9)), 5);
  EXPECT_EQ(EffectiveBrackets(Options(1, 2, 3)), 2);
}

TEST(AshaOptions, DefaultsToReductionFactorThreeAndThreeBrackets) {
  AshaOptions options;
  EXPECT_EQ(options.min_resource, 1);
  EXPECT_EQ(options.reduction_factor, 3);
  EXPECT_EQ(options.brackets, 3);
  EXPECT_EQ(options.allocation, AshaOptions::Allocation::kCostCapped);
  EXPECT_EQ(options.few_at_rung, AshaOptions::FewAtRung::kBest);
  options.max_resource = 81;
  EXPECT_EQ(ValidateAshaOptions(options), absl::OkStatus());
}

AshaOptions RoundRobin(int64_t max_resource, int64_t brackets) {
  AshaOptions options = Options(1, max_resource, brackets);
  options.allocation = AshaOptions::Allocation::kRoundRobin;
  return options;
}

TEST(BracketOf, AssignsLaunchIndicesRoundRobin) {
  const AshaOptions options = RoundRobin(27, 3);
  EXPECT_EQ(BracketOf(0, options), 0);
  EXPECT_EQ(BracketOf(1, options), 1);
  EXPECT_EQ(BracketOf(2, options), 2);
  EXPECT_EQ(BracketOf(3, options), 0);
  EXPECT_EQ(BracketOf(7, Options(1, 81)), 0);
  EXPECT_EQ(BracketOf(5, RoundRobin(2, 3)), 1);  // two brackets in use
}

AshaOptions ByBudget(int64_t max_resource, int64_t brackets) {
  AshaOptions options = Options(1, max_resource, brackets);
  options.allocation = AshaOptions::Allocation::kByBudget;
  return options;
}

TEST(BracketWeights, AreOneEachForRoundRobin) {
  EXPECT_THAT(BracketWeights(RoundRobin(27, 3)), ElementsAre(1, 1, 1));
  EXPECT_THAT(BracketWeights(RoundRobin(2, 3)), ElementsAre(1, 1));
}

TEST(ExpectedEpochs, FollowTheShareOfJobsStillRunningAfterEachRung) {
  // Rungs 1, 3, 9 keep a third each: 1 + 2/3 + 6/9 + 18/27 = 3; rungs 3, 9: 3 + 6/3 + 18/9 = 7.
  const AshaOptions options = Options(1, 27, 4);
  EXPECT_DOUBLE_EQ(ExpectedEpochs(options, 0), 3.0);
  EXPECT_DOUBLE_EQ(ExpectedEpochs(options, 1), 7.0);
  EXPECT_DOUBLE_EQ(ExpectedEpochs(options, 2), 15.0);
  EXPECT_DOUBLE_EQ(ExpectedEpochs(options, 3), 27.0);  // no rung: every job runs to MaxResource
  EXPECT_DOUBLE_EQ(ExpectedEpochs(Options(1, 81), 1), 3 + 6 / 3.0 + 18 / 9.0 + 54 / 27.0);
  EXPECT_DOUBLE_EQ(ExpectedEpochs(Options(1, 10), 1), 3 + 6 / 3.0 + 1 / 9.0);  // up to 10
}

TEST(BracketWeights, TiltRoundRobinTowardBracketZeroUntilAJobCostsNoMoreThanUnderHyperband) {
  // MaxResource 27: brackets cost 3, 7, 15 epochs per job (round robin 8.33); Hyperband's shares
  // 27 : 12 : 6 : 4 over its four brackets cost 363 / 49 = 7.41. w = 2 is the smallest whole
  // weight with (3w + 22) / (w + 2) <= 7.41 (w = 1.63 would tie).
  EXPECT_THAT(BracketWeights(Options(1, 27, 3)), ElementsAre(2, 1, 1));
  // MaxResource 81: round robin costs 11.22, under Hyperband's 11.77: unchanged.
  EXPECT_THAT(BracketWeights(Options(1, 81, 3)), ElementsAre(1, 1, 1));
  // MaxResource 9: 2.33, 5, 9 (round robin 5.44) against 73 / 17 = 4.29: w = 2.76 -> 3.
  EXPECT_THAT(BracketWeights(Options(1, 9, 3)), ElementsAre(3, 1, 1));
  // MaxResource 2, both brackets in use: 1.33 and 2 against Hyperband's 3 : 2 parts, 1.6.
  EXPECT_THAT(BracketWeights(Options(1, 2, 3)), ElementsAre(2, 1));
  EXPECT_THAT(BracketWeights(Options(1, 27, 1)), ElementsAre(1));  // nothing to tilt
  for (int64_t max_resource :
       std::vector<int64_t>{1, 2, 3, 5, 27, 100, 243, 1000, int64_t{1} << 40}) {
    const AshaOptions options = Options(1, max_resource, 3);
    const std::vector<int64_t> weights = BracketWeights(options);
    double cost = 0;
    double parts = 0;
    for (size_t b = 0; b < weights.size(); ++b) {
      cost += static_cast<double>(weights[b]) * ExpectedEpochs(options, static_cast<int64_t>(b));
      parts += static_cast<double>(weights[b]);
    }
    AshaOptions hyperband = Options(1, max_resource, MaxBrackets(options));
    hyperband.allocation = AshaOptions::Allocation::kByBudget;
    const std::vector<int64_t> shares = BracketWeights(hyperband);
    double hyperband_cost = 0;
    double hyperband_parts = 0;
    for (size_t b = 0; b < shares.size(); ++b) {
      hyperband_cost +=
          static_cast<double>(shares[b]) * ExpectedEpochs(hyperband, static_cast<int64_t>(b));
      hyperband_parts += static_cast<double>(shares[b]);
    }
    EXPECT_LE(cost / parts, hyperband_cost / hyperband_parts * (1 + 1e-9)) << max_resource;
  }
}

TEST(BracketOf, InterleavesTheCostCappedShares) {
  const AshaOptions options = Options(1, 27, 3);  // the default allocation: parts 2, 1, 1
  std::vector<int64_t> brackets;
  for (int64_t i = 0; i < 8; ++i) brackets.push_back(BracketOf(i, options));
  EXPECT_THAT(brackets, ElementsAre(0, 1, 2, 0, 0, 1, 2, 0));
  EXPECT_EQ(BracketOf(7, Options(1, 81, 3)), 1);  // round robin at 81
}

TEST(BracketWeights, AreHyperbandsSharesByBudget) {
  EXPECT_THAT(BracketWeights(ByBudget(81, 3)), ElementsAre(9, 5, 3));
  EXPECT_THAT(BracketWeights(ByBudget(81, 5)), ElementsAre(81, 34, 15, 8, 5));
  EXPECT_THAT(BracketWeights(ByBudget(27, 9)), ElementsAre(27, 12, 6, 4));  // 4 brackets in use
}

TEST(BracketWeights, AreScaledDownBeyond4096) {
  // 10 brackets: 19683, 7290, ..., 10 parts, 31439 in all.
  const std::vector<int64_t> weights = BracketWeights(ByBudget(20000, 10));
  EXPECT_THAT(weights, ElementsAre(2564, 949, 356, 135, 52, 21, 8, 3, 1, 1));
}

TEST(BracketOf, InterleavesBracketsByBudget) {
  const AshaOptions options = ByBudget(81, 3);  // parts 9, 5, 3: a period of 17
  std::vector<int64_t> period;
  for (int64_t i = 0; i < 17; ++i) period.push_back(BracketOf(i, options));
  EXPECT_THAT(period, ElementsAre(0, 1, 0, 2, 0, 1, 0, 2, 0, 1, 0, 1, 0, 2, 0, 1, 0));
  for (int64_t i = 0; i < 17; ++i) EXPECT_EQ(BracketOf(i + 17 * 5, options), period[i]) << i;
}

TEST(BracketWeights, AreTheGivenSharesWhenSet) {
  AshaOptions options = Options(1, 27, 3);
  options.bracket_weights = {2};
  EXPECT_THAT(BracketWeights(options), ElementsAre(2, 1, 1));  // the others get 1 part
  options.bracket_weights = {4, 3, 2, 1};
  EXPECT_THAT(BracketWeights(options), ElementsAre(4, 3, 2));  // 3 brackets in use
  options.allocation = AshaOptions::Allocation::kByBudget;
  EXPECT_THAT(BracketWeights(options), ElementsAre(4, 3, 2));  // they override the allocation
}

TEST(BracketOf, InterleavesTheGivenShares) {
  AshaOptions options = Options(1, 27, 3);
  options.bracket_weights = {2, 1, 1};  // a period of 4; round robin would give 1 at index 4
  std::vector<int64_t> brackets;
  for (int64_t i = 0; i < 8; ++i) brackets.push_back(BracketOf(i, options));
  EXPECT_THAT(brackets, ElementsAre(0, 1, 2, 0, 0, 1, 2, 0));
  // EvaluateAsha uses the same brackets: index 4 is judged in bracket 0, at its rung 1.
  const Decision d = MustEvaluate(Job("cur", 4, {0.3}), {Job("a", 0, {0.1})}, kLoss, options);
  EXPECT_EQ(d.bracket, 0);
  EXPECT_TRUE(d.stop);
}

TEST(EvaluateAsha, ComparesWithinTheBudgetAllocatedBracket) {
  // By budget with 3 brackets, indices 0, 2, 4 are in bracket 0 and 1 in bracket 1.
  std::vector<JobCurve> others = {Job("a", 0, {0.1}), Job("b", 1, {0.01}), Job("c", 2, {0.2})};
  Decision d = MustEvaluate(Job("cur", 4, {0.3}), others, kLoss, ByBudget(81, 3));
  EXPECT_EQ(d.bracket, 0);
  EXPECT_EQ(d.reference_jobs, 3);
  EXPECT_EQ(d.threshold, 0.1);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(MustEvaluate(Job("cur", 3, {0.3}), others, kLoss, ByBudget(81, 3)).bracket, 2);
}

TEST(ValidateAshaOptions, NamesTheInvalidField) {
  EXPECT_EQ(ValidateAshaOptions(Options(1, 81)), absl::OkStatus());
  EXPECT_EQ(ValidateAshaOptions(Options(0, 81)).message(),
            "AshaOptions.min_resource must be at least 1; got 0.");
  EXPECT_EQ(ValidateAshaOptions(Options(9, 5)).message(),
            "AshaOptions.max_resource (5) must be at least min_resource (9).");
  AshaOptions eta = Options(1, 81);
  eta.reduction_factor = 1;
  EXPECT_EQ(ValidateAshaOptions(eta).message(),
            "AshaOptions.reduction_factor must be at least 2; got 1.");
  EXPECT_EQ(ValidateAshaOptions(Options(1, 81, 0)).message(),
            "AshaOptions.brackets must be at least 1; got 0.");
  EXPECT_EQ(ValidateAshaOptions(Options(1, 81, 6)), absl::OkStatus());  // clamped to 5
  AshaOptions weights = Options(1, 81, 3);
  weights.bracket_weights = {2, 0};
  EXPECT_EQ(ValidateAshaOptions(weights).message(),
            "AshaOptions.bracket_weights[1] must be at least 1; got 0.");
  weights.bracket_weights = {4000, 97};
  EXPECT_EQ(ValidateAshaOptions(weights).message(),
            "AshaOptions.bracket_weights must add up to at most 4096.");
  weights.bracket_weights = {4000, 96};
  EXPECT_EQ(ValidateAshaOptions(weights), absl::OkStatus());
}

TEST(EvaluateAsha, NeverStopsBeforeMinResource) {
  Decision d = MustEvaluate(Job("cur", 9, {100}), FiveAtFirstRung(), kLoss, Options(3, 81));
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.rule, "hyperband");
  EXPECT_EQ(d.reason, Reason::kBelowMinResource);
  EXPECT_EQ(d.explanation, "epoch 1: below MinResource 3: continue");
}

TEST(EvaluateAsha, StopsAtMaxResource) {
  Decision d = MustEvaluate(Job("cur", 0, {0.9, 0.5, 0.3}), {}, kLoss, Options(1, 3));
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, Reason::kReachedMaxResource);
  EXPECT_EQ(d.epoch, 3);
  EXPECT_EQ(d.value, 0.3);
  EXPECT_EQ(d.threshold, std::nullopt);
  EXPECT_EQ(d.explanation, "epoch 3: val_loss 0.3; reached MaxResource 3: stop");
}

TEST(EvaluateAsha, LeavesAJobWhoseLastEpochIsMaxResourceToEndByItself) {
  JobCurve current = Job("cur", 0, {0.9, 0.5, 0.3});
  current.last_epoch = 3;
  Decision d = MustEvaluate(current, {}, kLoss, Options(1, 3));
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.reason, Reason::kLastEpoch);
  EXPECT_EQ(ReasonName(d.reason), "last_epoch");
  EXPECT_EQ(d.epoch, 3);
  EXPECT_EQ(d.explanation,
            "epoch 3: val_loss 0.3; reached MaxResource 3, its last epoch: it ends by itself: "
            "continue");
}

TEST(EvaluateAsha, StopsAtMaxResourceAJobWithMoreEpochsOrMoreEmissions) {
  JobCurve longer = Job("cur", 0, {0.9, 0.5, 0.3});
  longer.last_epoch = 10;
  EXPECT_EQ(MustEvaluate(longer, {}, kLoss, Options(1, 3)).reason, Reason::kReachedMaxResource);
  // Printing the objective more often than its epochs say: stopped at the next emission.
  JobCurve chatty = Job("cur", 0, {0.9, 0.5, 0.3, 0.3});
  chatty.last_epoch = 3;
  Decision d = MustEvaluate(chatty, {}, kLoss, Options(1, 3));
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, Reason::kReachedMaxResource);
}

TEST(EvaluateAsha, StopsAtTheLastEpochWhenAsked) {
  JobCurve current = Job("cur", 0, {0.9, 0.5, 0.3});
  current.last_epoch = 3;
  AshaOptions options = Options(1, 3);
  options.stop_at_last_epoch = true;
  Decision d = MustEvaluate(current, {}, kLoss, options);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, Reason::kReachedMaxResource);
}

TEST(EvaluateAsha, ContinuesBetweenRungs) {
  Decision d = MustEvaluate(Job("cur", 0, {9, 9}), FiveAtFirstRung(), kLoss, Options(1, 81));
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.reason, Reason::kNotARung);
  EXPECT_EQ(d.explanation, "epoch 2: not a rung of bracket 0 (rungs 1, 3, 9, 27): continue");
  Decision last = MustEvaluate(Job("cur", 4, {9}), {}, kLoss, RoundRobin(81, 5));
  EXPECT_EQ(last.bracket, 4);
  EXPECT_EQ(last.explanation, "epoch 1: not a rung of bracket 4 (which has none): continue");
}

TEST(EvaluateAsha, ContinuesWithFewerThanReductionFactorJobsAtRungWhenAsked) {
  std::vector<JobCurve> others = {Job("a", 0, {0.1})};
  AshaOptions options = Options(1, 81);
  options.few_at_rung = AshaOptions::FewAtRung::kContinue;
  Decision d = MustEvaluate(Job("cur", 1, {0.9}), others, kLoss, options);
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.reason, Reason::kTooFewAtRung);
  EXPECT_EQ(d.reference_jobs, 2);
  EXPECT_EQ(d.threshold, std::nullopt);
  EXPECT_EQ(d.explanation,
            "epoch 1: rung of bracket 0: val_loss 0.9; 2 jobs at this rung, fewer than the "
            "reduction factor 3: continue");
}

TEST(EvaluateAsha, StopsAllButTheBestWithFewerThanReductionFactorJobsAtRung) {
  std::vector<JobCurve> others = {Job("a", 0, {0.1})};
  Decision d = MustEvaluate(Job("cur", 1, {0.9}), others, kLoss, Options(1, 81));
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, Reason::kOutsideTopFraction);
  EXPECT_EQ(d.reference_jobs, 2);
  EXPECT_EQ(d.threshold, 0.1);
  EXPECT_EQ(d.explanation,
            "epoch 1: rung of bracket 0: val_loss 0.9 > 0.1, the best of the 2 jobs at this rung, "
            "fewer than the reduction factor 3, only the best continues: stop");
}

TEST(EvaluateAsha, ContinuesTheBestOrTiedWithFewerThanReductionFactorJobsAtRung) {
  std::vector<JobCurve> others = {Job("a", 0, {0.5})};
  Decision best = MustEvaluate(Job("cur", 1, {0.4}), others, kLoss, Options(1, 81));
  EXPECT_FALSE(best.stop);
  EXPECT_EQ(best.reason, Reason::kInTopFraction);
  EXPECT_EQ(best.threshold, 0.4);
  EXPECT_EQ(best.explanation,
            "epoch 1: rung of bracket 0: val_loss 0.4 <= 0.4, the best of the 2 jobs at this rung, "
            "fewer than the reduction factor 3, only the best continues: continue");
  EXPECT_FALSE(MustEvaluate(Job("cur", 1, {0.5}), others, kLoss, Options(1, 81)).stop);
  EXPECT_TRUE(MustEvaluate(Job("cur", 1, {0.4}), others, kAccuracy, Options(1, 81)).stop);
}

TEST(EvaluateAsha, ContinuesTheOnlyJobAtRung) {
  Decision d = MustEvaluate(Job("cur", 0, {0.9}), {}, kLoss, Options(1, 81));
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.reason, Reason::kInTopFraction);
  EXPECT_EQ(d.reference_jobs, 1);
  EXPECT_EQ(d.explanation,
            "epoch 1: rung of bracket 0: val_loss 0.9; the only job at this rung, fewer than the "
            "reduction factor 3, only the best continues: continue");
}

TEST(EvaluateAsha, StopsOutsideTopFraction) {
  // Six jobs at the rung, the best two continue: the cut-off is 0.2.
  Decision d = MustEvaluate(Job("cur", 5, {0.25}), FiveAtFirstRung(), kLoss, Options(1, 81));
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, Reason::kOutsideTopFraction);
  EXPECT_EQ(d.threshold, 0.2);
  EXPECT_EQ(d.reference_jobs, 6);
  EXPECT_EQ(d.explanation,
            "epoch 1: rung of bracket 0: val_loss 0.25 > 0.2, the cut-off for the top 1/3 (the "
            "best 2 of 6 jobs at this rung): stop");
}

TEST(EvaluateAsha, ContinuesInTopFractionAndOnTies) {
  Decision tie = MustEvaluate(Job("cur", 5, {0.2}), FiveAtFirstRung(), kLoss, Options(1, 81));
  EXPECT_FALSE(tie.stop);
  EXPECT_EQ(tie.reason, Reason::kInTopFraction);
  Decision best = MustEvaluate(Job("cur", 5, {0.15}), FiveAtFirstRung(), kLoss, Options(1, 81));
  EXPECT_FALSE(best.stop);
  EXPECT_EQ(best.threshold, 0.15);
  EXPECT_EQ(best.explanation,
            "epoch 1: rung of bracket 0: val_loss 0.15 <= 0.15, the cut-off for the top 1/3 (the "
            "best 2 of 6 jobs at this rung): continue");
}

TEST(EvaluateAsha, KeepsTheLargestValuesWhenMaximizing) {
  Decision d = MustEvaluate(Job("cur", 5, {0.35}), FiveAtFirstRung(), kAccuracy, Options(1, 81));
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.threshold, 0.4);
  EXPECT_EQ(d.explanation,
            "epoch 1: rung of bracket 0: val_acc 0.35 < 0.4, the cut-off for the top 1/3 (the "
            "best 2 of 6 jobs at this rung): stop");
  EXPECT_FALSE(
      MustEvaluate(Job("cur", 5, {0.45}), FiveAtFirstRung(), kAccuracy, Options(1, 81)).stop);
}

TEST(EvaluateAsha, ComparesValuesAtTheRungEpoch) {
  // At epoch 3 the others' values are 0.5, 0.6, 0.7 whatever came after.
  std::vector<JobCurve> others = {Job("a", 0, {1, 1, 0.5, 0.01}), Job("b", 1, {1, 1, 0.6}),
                                  Job("c", 2, {1, 1, 0.7, 0.01, 0.01})};
  Decision d = MustEvaluate(Job("cur", 3, {1, 1, 0.55}), others, kLoss, Options(1, 81));
  EXPECT_TRUE(d.stop);  // the best 1 of 4 is 0.5
  EXPECT_EQ(d.threshold, 0.5);
  EXPECT_EQ(d.reference_jobs, 4);
}

TEST(EvaluateAsha, IgnoresJobsThatHaveNotReachedTheRung) {
  std::vector<JobCurve> others = {Job("a", 0, {0.1, 0.1}), Job("b", 1, {0.1, 0.1}),
                                  Job("c", 2, {0.1, 0.1, 0.1})};
  Decision d = MustEvaluate(Job("cur", 3, {0.5, 0.5, 0.5}), others, kLoss, Options(1, 81));
  EXPECT_EQ(d.threshold, 0.1);
  EXPECT_EQ(d.reference_jobs, 2);
}

TEST(EvaluateAsha, ComparesOnlyWithinTheJobsBracket) {
  // Two brackets: even indices in bracket 0 (rungs 1, 3, 9, 27), odd in bracket 1 (3, 9, 27).
  std::vector<JobCurve> others = {Job("a", 0, {0.1, 0.1, 0.1}), Job("b", 1, {0.9, 0.9, 0.9}),
                                  Job("c", 2, {0.1, 0.1, 0.1}), Job("d", 3, {0.9, 0.9, 0.9}),
                                  Job("e", 5, {0.9, 0.9, 0.9})};
  Decision first = MustEvaluate(Job("cur", 7, {0.5}), others, kLoss, Options(1, 81, 2));
  EXPECT_EQ(first.bracket, 1);
  EXPECT_EQ(first.reason, Reason::kNotARung);
  Decision d = MustEvaluate(Job("cur", 7, {0.5, 0.5, 0.5}), others, kLoss, Options(1, 81, 2));
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.reference_jobs, 4);
  EXPECT_EQ(d.threshold, 0.5);
  Decision even = MustEvaluate(Job("cur", 8, {0.5, 0.5, 0.5}), others, kLoss, Options(1, 81, 2));
  EXPECT_TRUE(even.stop);
  EXPECT_EQ(even.reference_jobs, 3);
}

TEST(EvaluateAsha, SkipsAnOtherJobNamedLikeTheCurrentJob) {
  std::vector<JobCurve> others = FiveAtFirstRung();
  others.push_back(Job("cur", 5, {0.01}));
  EXPECT_EQ(MustEvaluate(Job("cur", 5, {0.25}), others, kLoss, Options(1, 81)).reference_jobs, 6);
}

TEST(EvaluateAsha, RejectsInvalidInput) {
  absl::StatusOr<Decision> empty = EvaluateAsha(Job("cur", 0, {}), {}, kLoss, Options(1, 81));
  EXPECT_THAT(empty, StatusIs(absl::StatusCode::kInvalidArgument,
                              "Training job 'cur' has no objective emission to evaluate."));
  absl::StatusOr<Decision> negative = EvaluateAsha(Job("cur", -1, {1}), {}, kLoss, Options(1, 81));
  EXPECT_EQ(negative.status().message(), "Training job 'cur' has a negative index -1.");
  absl::StatusOr<Decision> options = EvaluateAsha(Job("cur", 0, {1}), {}, kLoss, Options(0, 81));
  EXPECT_EQ(options.status().message(), "AshaOptions.min_resource must be at least 1; got 0.");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  absl::StatusOr<Decision> own = EvaluateAsha(Job("cur", 0, {nan}), {}, kLoss, Options(1, 81));
  EXPECT_EQ(own.status().message(),
            "Training job 'cur' has a non-finite objective value at epoch 1.");
  std::vector<JobCurve> others = {Job("a", 0, {nan})};
  absl::StatusOr<Decision> ref = EvaluateAsha(Job("cur", 1, {1}), others, kLoss, Options(1, 81));
  EXPECT_EQ(ref.status().message(),
            "Training job 'a' has a non-finite objective value at epoch 1.");
}

}  // namespace
}  // namespace amt::stopping
