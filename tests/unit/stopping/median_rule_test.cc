#include "orchestrator/stopping/median_rule.h"

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

const Objective kLoss{"val_loss", /*minimize=*/true};
const Objective kAccuracy{"val_acc", /*minimize=*/false};

JobCurve Done(std::string name, std::vector<double> values) {
  return {std::move(name), 0, std::move(values), JobState::kCompleted};
}

JobCurve Stopped(std::string name, std::vector<double> values) {
  return {std::move(name), 0, std::move(values), JobState::kStopped};
}

JobCurve Running(std::string name, std::vector<double> values) {
  return {std::move(name), 0, std::move(values), JobState::kRunning};
}

// Running averages to epoch 2: 1, 2 and 3; median 2.
std::vector<JobCurve> ThreeFinished() {
  return {Done("a", {1, 1, 1}), Done("b", {2, 2, 2}), Done("c", {3, 3, 3})};
}

// The spec's defaults with a comparison at every epoch (grace_epochs 0), so that short curves
// exercise the comparison itself; the grace period has tests of its own.
MedianRuleOptions EveryEpoch() {
  MedianRuleOptions options;
  options.grace_epochs = 0;
  return options;
}

Decision MustEvaluate(const JobCurve& current, const std::vector<JobCurve>& previous,
                      const Objective& objective, const MedianRuleOptions& options = EveryEpoch()) {
  absl::StatusOr<Decision> decision = EvaluateMedianRule(current, previous, objective, options);
  EXPECT_THAT(decision, IsOk());
  return decision.value_or(Decision{});
}

TEST(MedianRuleOptions, DefaultsFollowTheSpec) {
  const MedianRuleOptions options;
  EXPECT_EQ(options.reference, MedianRuleOptions::Reference::kCompletedOrStoppedJobs);
  EXPECT_EQ(options.min_reference_jobs, 1);
  EXPECT_FALSE(options.compare_best_so_far);
  EXPECT_EQ(options.grace_epochs, 2);
}

TEST(EvaluateMedianRule, StopsWhenValueIsAboveMedianWhenMinimizing) {
  Decision d = MustEvaluate(Running("cur", {5, 2.5}), ThreeFinished(), kLoss);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.rule, "median");
  EXPECT_EQ(d.reason, Reason::kWorse);
  EXPECT_EQ(d.epoch, 2);
  EXPECT_EQ(d.value, 2.5);
  EXPECT_EQ(d.threshold, 2.0);
  EXPECT_EQ(d.reference_jobs, 3);
  EXPECT_EQ(d.explanation,
            "epoch 2: val_loss 2.5 > 2, the median of the running averages to epoch 2 of 3 "
            "completed or stopped jobs: stop");
}

TEST(EvaluateMedianRule, ContinuesWhenValueEqualsMedian) {
  Decision d = MustEvaluate(Running("cur", {5, 2}), ThreeFinished(), kLoss);
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.reason, Reason::kNotWorse);
  EXPECT_EQ(d.threshold, 2.0);
  EXPECT_EQ(d.explanation,
            "epoch 2: val_loss 2 <= 2, the median of the running averages to epoch 2 of 3 "
            "completed or stopped jobs: continue");
}

TEST(EvaluateMedianRule, ComparesWithRunningAveragesNotValuesAtTheEpoch) {
  // At epoch 2 every reference is at 0, but their running averages are 2.
  std::vector<JobCurve> previous = {Done("a", {4, 0}), Done("b", {4, 0}), Done("c", {4, 0})};
  Decision d = MustEvaluate(Running("cur", {1, 1.5}), previous, kLoss);
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.threshold, 2.0);
}

TEST(EvaluateMedianRule, StopsWhenValueIsBelowMedianWhenMaximizing) {
  // Running averages to epoch 1: 0.8 and 0.9; the median of an even count is their mean.
  std::vector<JobCurve> previous = {Done("a", {0.8}), Done("b", {0.9})};
  Decision d = MustEvaluate(Running("cur", {0.84}), previous, kAccuracy);
  EXPECT_TRUE(d.stop);
  EXPECT_DOUBLE_EQ(*d.threshold, 0.85);
  EXPECT_EQ(d.explanation,
            "epoch 1: val_acc 0.84 < 0.85, the median of the running averages to epoch 1 of 2 "
            "completed or stopped jobs: stop");
  Decision better = MustEvaluate(Running("cur", {0.86}), previous, kAccuracy);
  EXPECT_FALSE(better.stop);
  EXPECT_EQ(better.explanation,
            "epoch 1: val_acc 0.86 >= 0.85, the median of the running averages to epoch 1 of 2 "
            "completed or stopped jobs: continue");
}

TEST(EvaluateMedianRule, IgnoresRunningJobsWhenReferenceIsTerminalJobs) {
  std::vector<JobCurve> previous = ThreeFinished();
  previous.push_back(Running("d", {0, 0, 0}));
  previous.push_back(Running("e", {0, 0, 0}));
  Decision d = MustEvaluate(Running("cur", {5, 2.5}), previous, kLoss);
  EXPECT_EQ(d.reference_jobs, 3);
  EXPECT_EQ(d.threshold, 2.0);
}

TEST(EvaluateMedianRule, IncludesRunningJobsWhenReferenceIsAllPreviousJobs) {
  std::vector<JobCurve> previous = ThreeFinished();
  previous.push_back(Running("d", {0, 0}));
  previous.push_back(Running("e", {0, 0}));
  MedianRuleOptions options = EveryEpoch();
  options.reference = MedianRuleOptions::Reference::kAllPreviousJobs;
  Decision d = MustEvaluate(Running("cur", {5, 1.5}), previous, kLoss, options);
  EXPECT_EQ(d.reference_jobs, 5);
  EXPECT_EQ(d.threshold, 1.0);  // averages 0, 0, 1, 2, 3
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.explanation,
            "epoch 2: val_loss 1.5 > 1, the median of the running averages to epoch 2 of 5 "
            "previous jobs: stop");
}

TEST(EvaluateMedianRule, CountsStoppedJobsByDefault) {
  std::vector<JobCurve> previous = {Done("a", {1, 1}), Stopped("b", {2, 2}), Stopped("c", {3, 3})};
  Decision d = MustEvaluate(Running("cur", {5, 2.5}), previous, kLoss);
  EXPECT_EQ(d.reference_jobs, 3);
  EXPECT_EQ(d.threshold, 2.0);
}

TEST(EvaluateMedianRule, IgnoresStoppedJobsWhenReferenceIsCompletedJobs) {
  std::vector<JobCurve> previous = {Done("a", {1, 1}), Stopped("b", {2, 2}), Done("c", {3, 3}),
                                    Running("d", {0, 0})};
  MedianRuleOptions options = EveryEpoch();
  options.reference = MedianRuleOptions::Reference::kCompletedJobs;
  Decision d = MustEvaluate(Running("cur", {5, 2.5}), previous, kLoss, options);
  EXPECT_EQ(d.reference_jobs, 2);
  EXPECT_EQ(d.threshold, 2.0);  // the mean of 1 and 3
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.explanation,
            "epoch 2: val_loss 2.5 > 2, the median of the running averages to epoch 2 of 2 "
            "completed jobs: stop");
}

TEST(EvaluateMedianRule, IgnoresJobsThatEndedBeforeTheEpoch) {
  std::vector<JobCurve> previous = ThreeFinished();
  previous.push_back(Done("short", {0.1}));
  Decision d = MustEvaluate(Running("cur", {5, 2.5}), previous, kLoss);
  EXPECT_EQ(d.reference_jobs, 3);
  EXPECT_EQ(d.threshold, 2.0);
}

TEST(EvaluateMedianRule, SkipsAReferenceNamedLikeTheCurrentJob) {
  std::vector<JobCurve> previous = ThreeFinished();
  previous.push_back(Done("cur", {100, 100}));
  EXPECT_EQ(MustEvaluate(Running("cur", {5, 2.5}), previous, kLoss).reference_jobs, 3);
}

TEST(EvaluateMedianRule, ContinuesWithoutComparingWhenTooFewReferences) {
  MedianRuleOptions options = EveryEpoch();
  options.min_reference_jobs = 3;
  std::vector<JobCurve> previous = {Done("a", {1, 1}), Done("b", {2, 2})};
  Decision d = MustEvaluate(Running("cur", {9, 9}), previous, kLoss, options);
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.reason, Reason::kTooFewReferences);
  EXPECT_EQ(d.threshold, std::nullopt);
  EXPECT_EQ(d.reference_jobs, 2);
  EXPECT_EQ(d.explanation,
            "epoch 2: val_loss 9; 2 completed or stopped jobs reached epoch 2, the rule needs 3: "
            "continue");
}

TEST(EvaluateMedianRule, FirstJobAlwaysContinuesByDefault) {
  Decision d = MustEvaluate(Running("first", {7}), {}, kLoss);
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.reason, Reason::kTooFewReferences);
  EXPECT_EQ(d.explanation,
            "epoch 1: val_loss 7; 0 completed or stopped jobs reached epoch 1, the rule needs 1: "
            "continue");
}

TEST(EvaluateMedianRule, ComparesBestSoFarWhenAsked) {
  JobCurve current = Running("cur", {1, 3});
  EXPECT_TRUE(MustEvaluate(current, ThreeFinished(), kLoss).stop);
  MedianRuleOptions options = EveryEpoch();
  options.compare_best_so_far = true;
  Decision d = MustEvaluate(current, ThreeFinished(), kLoss, options);
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.value, 1.0);
  EXPECT_EQ(d.explanation,
            "epoch 2: best val_loss so far 1 <= 2, the median of the running averages to epoch 2 "
            "of 3 completed or stopped jobs: continue");
  // Maximising, the best is the largest.
  std::vector<JobCurve> previous = {Done("a", {0.5, 0.5})};
  EXPECT_EQ(MustEvaluate(Running("cur", {0.9, 0.2}), previous, kAccuracy, options).value, 0.9);
}

TEST(EvaluateMedianRule, ComparesNothingDuringGraceEpochsTwoByDefault) {
  const MedianRuleOptions options;
  Decision d = MustEvaluate(Running("cur", {9, 9}), ThreeFinished(), kLoss, options);
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.reason, Reason::kGracePeriod);
  EXPECT_EQ(d.threshold, std::nullopt);
  EXPECT_EQ(d.explanation,
            "epoch 2: val_loss 9; the rule compares from epoch 3 (grace_epochs 2): "
            "continue");
  Decision third = MustEvaluate(Running("cur", {9, 9, 9}), ThreeFinished(), kLoss, options);
  EXPECT_TRUE(third.stop);
  EXPECT_EQ(third.threshold, 2.0);
}

TEST(EvaluateMedianRule, ShowsEnoughDigitsToTellCloseValuesApart) {
  std::vector<JobCurve> previous = {Done("a", {0.41})};
  Decision d = MustEvaluate(Running("cur", {0.4100001}), previous, kLoss);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.explanation,
            "epoch 1: val_loss 0.4100001 > 0.41, the median of the running averages to epoch 1 of "
            "1 completed or stopped job: stop");
}

TEST(EvaluateMedianRule, RejectsJobWithoutEmission) {
  absl::StatusOr<Decision> d = EvaluateMedianRule(Running("cur", {}), ThreeFinished(), kLoss, {});
  EXPECT_THAT(d, StatusIs(absl::StatusCode::kInvalidArgument,
                          "Training job 'cur' has no objective emission to evaluate."));
}

TEST(EvaluateMedianRule, RejectsNonFiniteValues) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  absl::StatusOr<Decision> own =
      EvaluateMedianRule(Running("cur", {1, nan}), {}, kLoss, EveryEpoch());
  EXPECT_THAT(own, StatusIs(absl::StatusCode::kInvalidArgument,
                            "Training job 'cur' has a non-finite objective value at epoch 2."));
  std::vector<JobCurve> previous = {Done("a", {std::numeric_limits<double>::infinity(), 1})};
  absl::StatusOr<Decision> ref =
      EvaluateMedianRule(Running("cur", {1, 1}), previous, kLoss, EveryEpoch());
  EXPECT_THAT(ref, StatusIs(absl::StatusCode::kInvalidArgument,
                            "Training job 'a' has a non-finite objective value at epoch 1."));
}

TEST(EvaluateMedianRule, RejectsMinReferenceJobsBelowOne) {
  MedianRuleOptions options = EveryEpoch();
  options.min_reference_jobs = 0;
  absl::StatusOr<Decision> d = EvaluateMedianRule(Running("cur", {1}), {}, kLoss, options);
  EXPECT_THAT(d, StatusIs(absl::StatusCode::kInvalidArgument,
                          "MedianRuleOptions.min_reference_jobs must be at least 1; got 0."));
  EXPECT_EQ(ValidateMedianRuleOptions(MedianRuleOptions{}), absl::OkStatus());
  MedianRuleOptions grace;
  grace.grace_epochs = -1;
  EXPECT_EQ(ValidateMedianRuleOptions(grace).message(),
            "MedianRuleOptions.grace_epochs must be at least 0; got -1.");
}

// ---------------------------------------------------------------- the reference line

std::vector<MedianPoint> MustLine(const std::vector<JobCurve>& jobs,
                                  const MedianRuleOptions& options = EveryEpoch()) {
  absl::StatusOr<std::vector<MedianPoint>> line = MedianReferenceCurve(jobs, options);
  EXPECT_THAT(line, IsOk());
  return line.value_or(std::vector<MedianPoint>{});
}

TEST(MedianReferenceCurve, IsTheMedianOfRunningAveragesAtEachEpoch) {
  // Running averages: a 4, 3, 2; b 2, 2, 2; c 6, 5 (two epochs only).
  const std::vector<MedianPoint> line =
      MustLine({Done("a", {4, 2, 0}), Done("b", {2, 2, 2}), Stopped("c", {6, 4})});
  ASSERT_EQ(line.size(), 3u);
  EXPECT_EQ(line[0].epoch, 1);
  EXPECT_DOUBLE_EQ(line[0].median, 4);  // 4, 2, 6
  EXPECT_EQ(line[0].reference_jobs, 3);
  EXPECT_DOUBLE_EQ(line[1].median, 3);  // 3, 2, 5
  EXPECT_EQ(line[2].epoch, 3);
  EXPECT_DOUBLE_EQ(line[2].median, 2);  // 2, 2: c has no third epoch
  EXPECT_EQ(line[2].reference_jobs, 2);
}

TEST(MedianReferenceCurve, IsWhatTheRuleComparesAJobLaunchedAfterThemWith) {
  const std::vector<JobCurve> jobs = {Done("a", {4, 2, 0}), Done("b", {2, 2, 2}),
                                      Stopped("c", {6, 4}), Running("d", {9, 9, 9})};
  const std::vector<MedianPoint> line = MustLine(jobs);
  ASSERT_EQ(line.size(), 3u);
  for (const MedianPoint& point : line) {
    const Decision decision = MustEvaluate(
        Running("new", std::vector<double>(static_cast<size_t>(point.epoch), 100)), jobs, kLoss);
    ASSERT_TRUE(decision.threshold.has_value()) << "epoch " << point.epoch;
    EXPECT_DOUBLE_EQ(*decision.threshold, point.median) << "epoch " << point.epoch;
    EXPECT_EQ(decision.reference_jobs, point.reference_jobs) << "epoch " << point.epoch;
  }
}

TEST(MedianReferenceCurve, FollowsTheReferenceOption) {
  const std::vector<JobCurve> jobs = {Done("a", {1}), Stopped("b", {5}), Running("c", {9})};
  MedianRuleOptions options = EveryEpoch();
  EXPECT_DOUBLE_EQ(MustLine(jobs, options).at(0).median, 3);  // a and b
  options.reference = MedianRuleOptions::Reference::kCompletedJobs;
  EXPECT_DOUBLE_EQ(MustLine(jobs, options).at(0).median, 1);  // a
  options.reference = MedianRuleOptions::Reference::kAllPreviousJobs;
  EXPECT_DOUBLE_EQ(MustLine(jobs, options).at(0).median, 5);  // a, b and c
}

TEST(MedianReferenceCurve, StartsAfterTheGraceEpochsAndEndsWithTooFewReferences) {
  MedianRuleOptions options = EveryEpoch();
  options.grace_epochs = 1;
  options.min_reference_jobs = 2;
  const std::vector<MedianPoint> line =
      MustLine({Done("a", {1, 1, 1, 1}), Done("b", {3, 3, 3}), Done("c", {5, 5})}, options);
  ASSERT_EQ(line.size(), 2u);  // epoch 1 is the grace period; only a reaches epoch 4
  EXPECT_EQ(line[0].epoch, 2);
  EXPECT_DOUBLE_EQ(line[0].median, 3);
  EXPECT_EQ(line[1].epoch, 3);
  EXPECT_DOUBLE_EQ(line[1].median, 2);
}

TEST(MedianReferenceCurve, IsEmptyWithoutReferencesAndLeavesNonFiniteAveragesOut) {
  EXPECT_TRUE(MustLine({}).empty());
  EXPECT_TRUE(MustLine({Running("a", {1, 2})}).empty());
  const std::vector<MedianPoint> line =
      MustLine({Done("a", {1, std::numeric_limits<double>::infinity()}), Done("b", {3, 3}),
                Done("c", {5, 5})});
  ASSERT_EQ(line.size(), 2u);
  EXPECT_DOUBLE_EQ(line[0].median, 3);
  EXPECT_DOUBLE_EQ(line[1].median, 4);  // b and c: a's average to epoch 2 is infinite
  EXPECT_EQ(line[1].reference_jobs, 2);
}

TEST(MedianReferenceCurve, RefusesInvalidOptions) {
  MedianRuleOptions options;
  options.min_reference_jobs = 0;
  EXPECT_THAT(MedianReferenceCurve({Done("a", {1})}, options),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace amt::stopping
