#include "orchestrator/core/tuning_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace amt::core {
namespace {

TEST(TuningJob, OnePercentRuleIsRelativeToTheBest) {
  EXPECT_TRUE(ImprovesByOnePercent(0.98, 1.0, "Minimize"));
  EXPECT_FALSE(ImprovesByOnePercent(0.995, 1.0, "Minimize"));
  EXPECT_TRUE(ImprovesByOnePercent(1.01, 1.0, "Maximize"));
  EXPECT_FALSE(ImprovesByOnePercent(1.0, 1.0, "Maximize"));
  EXPECT_TRUE(Better(0.5, 0.6, "Minimize"));
  EXPECT_TRUE(Better(0.7, 0.6, "Maximize"));
}

TEST(TuningJob, TrainingJobNamesAreTuningNameIndexAndStableHex) {
  v1::TuningJobRecord t;
  t.mutable_describe()->set_hyper_parameter_tuning_job_name("demo");
  t.mutable_describe()->set_hyper_parameter_tuning_job_arn("arn:x");
  t.mutable_describe()->set_creation_time(12.5);
  const std::string name = TrainingJobNameFor(t, 7);
  EXPECT_THAT(name, ::testing::MatchesRegex("demo-007-[0-9a-f]{8}"));
  EXPECT_EQ(name, TrainingJobNameFor(t, 7));
  EXPECT_NE(name.substr(9), TrainingJobNameFor(t, 8).substr(9));
}

TEST(TuningJob, CountersAndBestComeFromTheTrainingJobs) {
  v1::TuningJobRecord t;
  auto* objective = t.mutable_describe()
                        ->mutable_hyper_parameter_tuning_job_config()
                        ->mutable_hyper_parameter_tuning_job_objective();
  objective->set_type("Maximize");
  objective->set_metric_name("acc");
  std::vector<v1::TrainingJobRecord> jobs(4);
  const char* statuses[] = {"Completed", "Stopped", "Failed", "InProgress"};
  const char* objective_status[] = {"Succeeded", "Succeeded", "Failed", "Pending"};
  for (int i = 0; i < 4; ++i) {
    jobs[i].mutable_describe()->set_training_job_name("j" + std::to_string(i));
    jobs[i].mutable_describe()->set_training_job_status(statuses[i]);
    jobs[i].set_objective_status(objective_status[i]);
    jobs[i].set_tuning_job_name("t");
  }
  jobs[0].set_objective(0.8);
  jobs[1].set_objective(0.9);
  jobs[2].set_failure_kind("RetryableError");
  std::vector<const v1::TrainingJobRecord*> ptrs;
  for (const auto& j : jobs) ptrs.push_back(&j);
  RecomputeTuningView(t, ptrs);
  const auto& c = t.describe().training_job_status_counters();
  EXPECT_EQ(c.completed(), 1);
  EXPECT_EQ(c.stopped(), 1);
  EXPECT_EQ(c.retryable_error(), 1);
  EXPECT_EQ(c.in_progress(), 1);
  const auto& o = t.describe().objective_status_counters();
  EXPECT_EQ(o.succeeded(), 2);
  EXPECT_EQ(o.failed(), 1);
  EXPECT_EQ(o.pending(), 1);
  EXPECT_EQ(t.describe().best_training_job().training_job_name(), "j1");  // 0.9, maximised
  EXPECT_EQ(RunningJobs(ptrs), 1);
}

}  // namespace
}  // namespace amt::core
