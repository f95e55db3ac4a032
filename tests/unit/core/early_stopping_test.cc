#include "orchestrator/core/early_stopping.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace amt::core {
namespace {

v1::TuningJobRecord Tuning(const std::string& strategy, const std::string& early_stopping) {
  v1::TuningJobRecord t;
  auto* config = t.mutable_describe()->mutable_hyper_parameter_tuning_job_config();
  config->set_strategy(strategy);
  config->set_training_job_early_stopping_type(early_stopping);
  config->mutable_hyper_parameter_tuning_job_objective()->set_type("Minimize");
  config->mutable_hyper_parameter_tuning_job_objective()->set_metric_name("loss");
  t.set_hyperband_min_resource(1);
  t.set_hyperband_max_resource(9);
  return t;
}

v1::TrainingJobRecord Job(const std::string& name, int index, const std::string& status,
                          std::vector<double> curve) {
  v1::TrainingJobRecord j;
  j.mutable_describe()->set_training_job_name(name);
  j.mutable_describe()->set_training_job_status(status);
  j.set_index(index);
  for (double v : curve) j.add_objective_history(v);
  return j;
}

TEST(EarlyStopping, ModeFollowsStrategyThenEarlyStoppingType) {
  EXPECT_EQ(EarlyStoppingModeOf(Tuning("Hyperband", "Off")), EarlyStoppingMode::kHyperband);
  EXPECT_EQ(EarlyStoppingModeOf(Tuning("Random", "Auto")), EarlyStoppingMode::kAuto);
  EXPECT_EQ(EarlyStoppingModeOf(Tuning("Bayesian", "Off")), EarlyStoppingMode::kOff);
  EXPECT_EQ(EarlyStoppingModeName(EarlyStoppingMode::kAuto), "Auto");
  EXPECT_EQ(EarlyStoppingModeName(EarlyStoppingMode::kOff), "Off");
}

TEST(EarlyStopping, OffMakesNoDecision) {
  const auto tuning = Tuning("Random", "Off");
  const auto job = Job("b", 2, "InProgress", {9, 9, 9});
  EXPECT_FALSE(EvaluateEarlyStopping(job, tuning, {&job}, {}).has_value());
}

TEST(EarlyStopping, MedianRuleStopsAJobWorseThanEarlierJobsAndLeavesOutFailedAndLaterOnes) {
  const auto tuning = Tuning("Random", "Auto");
  const auto good = Job("a", 1, "Completed", {1, 1, 1});
  const auto failed = Job("f", 2, "Failed", {0.1, 0.1, 0.1});
  const auto later = Job("z", 9, "Completed", {50, 50, 50});
  const auto bad = Job("b", 3, "InProgress", {9, 9, 9});
  auto decision = EvaluateEarlyStopping(bad, tuning, {&good, &failed, &bad, &later}, {});
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->rule(), "Median");
  EXPECT_EQ(decision->epoch(), 3);
  EXPECT_TRUE(decision->stop());
  EXPECT_EQ(decision->reference_jobs(), 1);  // only "a": "f" failed, "z" launched after
  EXPECT_DOUBLE_EQ(decision->threshold(), 1);
  EXPECT_THAT(decision->explanation(), ::testing::HasSubstr("loss 9 > 1"));
}

TEST(EarlyStopping, HyperbandJudgesAgainstAllJobsAtItsRungs) {
  const auto tuning = Tuning("Hyperband", "Off");
  const auto job = Job("b", 1, "InProgress", {5});
  auto decision = EvaluateEarlyStopping(job, tuning, {&job}, {});
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->rule(), "Hyperband");
  EXPECT_EQ(decision->epoch(), 1);
}

// amtd --hyperband-few-at-rung reaches the rule: two jobs at a rung (fewer than eta = 3), the
// worse one stops with "best" and continues with "continue".
TEST(EarlyStopping, HyperbandFewAtRungOptionDecidesARungWithFewerThanEtaJobs) {
  const auto tuning = Tuning("Hyperband", "Off");
  const auto good = Job("a", 1, "InProgress", {1});
  const auto worse = Job("b", 2, "InProgress", {5});
  EarlyStoppingOptions options;
  options.hyperband_brackets = 1;
  auto best = EvaluateEarlyStopping(worse, tuning, {&good, &worse}, options);
  ASSERT_TRUE(best.has_value());
  EXPECT_TRUE(best->stop());
  options.hyperband_few_at_rung = stopping::AshaOptions::FewAtRung::kContinue;
  auto all = EvaluateEarlyStopping(worse, tuning, {&good, &worse}, options);
  ASSERT_TRUE(all.has_value());
  EXPECT_FALSE(all->stop());
}

}  // namespace
}  // namespace amt::core
