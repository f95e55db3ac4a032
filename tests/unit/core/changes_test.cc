// DeleteHyperParameterTuningJob, DeleteTrainingJob and UpdateTrainingJob through the Orchestrator.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/json.h"
#include "tests/unit/core/orchestrator_fixture.h"

namespace amt::core {
namespace {

using ::testing::HasSubstr;

class ChangesTest : public OrchestratorTest {
 protected:
  // The fixture's Random tuning job of 4, run to its end: its 4 training jobs' starts.
  std::vector<v1::StartJob> RunTuningJob() {
    EXPECT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());
    auto link = Connect(8);
    for (int i = 0; i < 4; ++i) Succeed(link->Starts()[i], {0.5 - 0.1 * i});
    EXPECT_EQ(Describe().hyper_parameter_tuning_job_status(), "Completed");
    return link->Starts();
  }
};

TEST_F(ChangesTest, DeletingATuningJobKeepsItsTrainingJobsAndFreesItsName) {
  const auto starts = RunTuningJob();
  ASSERT_TRUE(orch_->DeleteTuningJob("DEMO").ok());
  EXPECT_EQ(orch_->DescribeTuningJob("demo").status().code(), absl::StatusCode::kNotFound);
  v1::ListTrainingJobsForHyperParameterTuningJobRequest list;
  list.set_hyper_parameter_tuning_job_name("demo");
  EXPECT_EQ(orch_->ListTrainingJobsForTuningJob(list).status().code(), absl::StatusCode::kNotFound);
  // "It does not delete training jobs": each is there, still naming the tuning job's ARN.
  const auto job = orch_->DescribeTrainingJob(starts[0].training_job_name());
  ASSERT_TRUE(job.ok());
  EXPECT_THAT(job->tuning_job_arn(), HasSubstr(":hyper-parameter-tuning-job/demo"));
  EXPECT_EQ(orch_->ListTrainingJobs({})->training_job_summaries_size(), 4);
  // The name is free, and the new tuning job starts with none of the old one's jobs.
  clock_.Advance(10);
  ASSERT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());
  const auto d = Describe();
  EXPECT_EQ(d.training_job_status_counters().completed(), 0);
  EXPECT_EQ(d.training_job_status_counters().in_progress(), 2);
  // Also after a restart: the old jobs are no longer linked to the name.
  orch_.reset();
  Rebuild();
  ASSERT_TRUE(orch_->Load().ok());
  EXPECT_EQ(Describe().training_job_status_counters().completed(), 0);
  EXPECT_EQ(orch_->ListTrainingJobs({})->training_job_summaries_size(), 6);
}

TEST_F(ChangesTest, ARunningTuningJobOrTheParentOfOneIsInUse) {
  ASSERT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());
  auto status = orch_->DeleteTuningJob("demo");
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists);  // ResourceInUse
  EXPECT_EQ(status.message(),
            "The hyperparameter tuning job demo is InProgress; only a tuning job that has ended "
            "(Completed, Stopped or Failed) can be deleted. Stop it first.");
  EXPECT_EQ(orch_->DeleteTuningJob("nope").code(), absl::StatusCode::kNotFound);

  auto link = Connect(8);
  for (int i = 0; i < 4; ++i) Succeed(link->Starts()[i], {0.5});
  auto child = TuningRequest();
  child.set_hyper_parameter_tuning_job_name("child");
  child.mutable_hyper_parameter_tuning_job_config()->set_strategy("Bayesian");
  auto* warm = child.mutable_warm_start_config();
  warm->add_parent_hyper_parameter_tuning_jobs()->set_hyper_parameter_tuning_job_name("demo");
  warm->set_warm_start_type("IdenticalDataAndAlgorithm");
  ASSERT_TRUE(orch_->CreateTuningJob(child).ok());
  status = orch_->DeleteTuningJob("demo");
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(status.message(),
            "The hyperparameter tuning job demo is a warm-start parent of the InProgress tuning "
            "job child; it can be deleted once that one has ended.");
}

TEST_F(ChangesTest, DeletingATrainingJobRemovesItsLogsAndMetrics) {
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob()).ok());
  auto link = Connect(1);
  const auto start = link->Starts().at(0);
  auto status = orch_->DeleteTrainingJob("solo");
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(status.message(),
            "The training job solo is InProgress; only a training job that has ended (Completed, "
            "Failed or Stopped) can be deleted.");
  Started(start);
  Log(start, {"loss=0.5"});
  Exit(start, 0);
  ASSERT_TRUE(orch_->ReadMetrics("solo").ok());
  ASSERT_TRUE(orch_->DeleteTrainingJob("Solo").ok());
  EXPECT_FALSE(orch_->DescribeTrainingJob("solo").ok());
  EXPECT_FALSE(orch_->ReadLogs("solo", 0, 10).ok());
  EXPECT_EQ(orch_->ListTrainingJobs({})->training_job_summaries_size(), 0);
  EXPECT_EQ(orch_->DeleteTrainingJob("solo").code(), absl::StatusCode::kNotFound);
  // The name can be used again, for a job with a log of its own.
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob()).ok());
  EXPECT_TRUE(orch_->ReadLogs("solo", 0, 10)->empty());
  // And the deletion survives a restart.
  orch_.reset();
  Rebuild();
  ASSERT_TRUE(orch_->Load().ok());
  EXPECT_EQ(orch_->ListTrainingJobs({})->training_job_summaries_size(), 1);
}

TEST_F(ChangesTest, ATrainingJobOfARunningTuningJobIsInUse) {
  ASSERT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());
  auto link = Connect(8);
  const auto first = link->Starts()[0];
  Succeed(first, {0.5});
  const auto status = orch_->DeleteTrainingJob(first.training_job_name());
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(status.message(), "The training job " + first.training_job_name() +
                                  " belongs to the InProgress tuning job demo; it can be deleted "
                                  "once that one has ended.");
  for (int i = 1; i < 4; ++i) Succeed(link->Starts()[i], {0.4});
  ASSERT_TRUE(orch_->DeleteTrainingJob(first.training_job_name()).ok());
  v1::ListTrainingJobsForHyperParameterTuningJobRequest list;
  list.set_hyper_parameter_tuning_job_name("demo");
  EXPECT_EQ(orch_->ListTrainingJobsForTuningJob(list)->training_job_summaries_size(), 3);
  // The ended tuning job's counters are what they were when it ended.
  EXPECT_EQ(Describe().training_job_status_counters().completed(), 4);
}

TEST_F(ChangesTest, UpdateTrainingJobSetsTheProfilerRulesRemoteDebugAndKeepAlive) {
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob()).ok());
  auto link = Connect(1);
  const auto start = link->Starts().at(0);
  Started(start);
  clock_.Advance(5);
  v1::UpdateTrainingJobRequest update;
  ASSERT_TRUE(JsonToProto(R"j({"TrainingJobName": "solo",
      "ProfilerConfig": {"S3OutputPath": "s3://b/profile", "ProfilingIntervalInMilliseconds": 500},
      "ProfilerRuleConfigurations": [{"RuleConfigurationName": "LowGPU",
                                      "RuleEvaluatorImage": "rules:latest"}],
      "RemoteDebugConfig": {"EnableRemoteDebug": true},
      "ResourceConfig": {"KeepAlivePeriodInSeconds": 600}})j",
                          &update)
                  .ok());
  const auto updated = orch_->UpdateTrainingJob(update);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_THAT(updated->training_job_arn(), HasSubstr(":training-job/solo"));
  auto d = orch_->DescribeTrainingJob("solo");
  EXPECT_EQ(d->profiler_config().s3_output_path(), "s3://b/profile");
  EXPECT_EQ(d->profiler_config().profiling_interval_in_milliseconds(), 500);
  EXPECT_EQ(d->profiling_status(), "Enabled");
  ASSERT_EQ(d->profiler_rule_evaluation_statuses_size(), 1);
  EXPECT_EQ(d->profiler_rule_evaluation_statuses(0).rule_configuration_name(), "LowGPU");
  EXPECT_EQ(d->profiler_rule_evaluation_statuses(0).rule_evaluation_status(), "Stopped");
  EXPECT_TRUE(d->remote_debug_config().enable_remote_debug());
  EXPECT_EQ(d->resource_config().keep_alive_period_in_seconds(), 600);
  EXPECT_EQ(d->last_modified_time(), clock_.Now());
  // The same rule again replaces it; DisableProfiler turns ProfilingStatus off.
  update.clear_remote_debug_config();
  update.clear_resource_config();
  update.mutable_profiler_config()->set_disable_profiler(true);
  ASSERT_TRUE(orch_->UpdateTrainingJob(update).ok());
  d = orch_->DescribeTrainingJob("solo");
  EXPECT_EQ(d->profiler_rule_configurations_size(), 1);
  EXPECT_EQ(d->profiling_status(), "Disabled");

  Exit(start, 0);
  auto status = orch_->UpdateTrainingJob(update).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "The training job solo is Completed: its ProfilerConfig, ProfilerRuleConfigurations "
            "and RemoteDebugConfig can be updated only while it is InProgress.");
  v1::UpdateTrainingJobRequest keep_alive;
  keep_alive.set_training_job_name("solo");
  keep_alive.mutable_resource_config()->set_keep_alive_period_in_seconds(0);
  EXPECT_TRUE(orch_->UpdateTrainingJob(keep_alive).ok());
  keep_alive.clear_resource_config();
  EXPECT_EQ(orch_->UpdateTrainingJob(keep_alive).status().message(),
            "UpdateTrainingJob needs at least one of ProfilerConfig, ProfilerRuleConfigurations, "
            "ResourceConfig and RemoteDebugConfig.");
  keep_alive.set_training_job_name("nope");
  EXPECT_EQ(orch_->UpdateTrainingJob(keep_alive).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ChangesTest, AFailedWriteDeletesNothing) {
  RunTuningJob();
  faulty_.FailWrites(true);
  EXPECT_EQ(orch_->DeleteTuningJob("demo").code(), absl::StatusCode::kInternal);
  faulty_.FailWrites(false);
  EXPECT_TRUE(orch_->DescribeTuningJob("demo").ok());
}

}  // namespace
}  // namespace amt::core
