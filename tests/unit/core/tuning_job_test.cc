#include "orchestrator/core/tuning_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>

#include "orchestrator/core/training_job.h"

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

TEST(TuningJob, RecountFinishedJobsCountsEndedJobsButNotRetryableFailures) {
  v1::TuningJobRecord t;
  t.set_finished(1);  // as saved before amtd died between a job's end and this record
  t.set_succeeded(0);
  std::vector<v1::TrainingJobRecord> jobs(5);
  const char* statuses[] = {"Completed", "Stopped", "Failed", "Failed", "InProgress"};
  const char* objective_status[] = {"Succeeded", "Succeeded", "Failed", "Failed", "Pending"};
  for (int i = 0; i < 5; ++i) {
    jobs[i].mutable_describe()->set_training_job_status(statuses[i]);
    jobs[i].set_objective_status(objective_status[i]);
  }
  jobs[2].set_failure_kind("NonRetryableError");
  jobs[3].set_failure_kind("RetryableError");
  std::vector<const v1::TrainingJobRecord*> ptrs;
  for (const auto& j : jobs) ptrs.push_back(&j);
  RecountFinishedJobs(t, ptrs);
  EXPECT_EQ(t.finished(), 3);
  EXPECT_EQ(t.succeeded(), 2);
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

// A Minimize tuning job with budget `max_jobs`, InProgress.
v1::TuningJobRecord Running(int max_jobs) {
  v1::TuningJobRecord t;
  auto* d = t.mutable_describe();
  d->set_hyper_parameter_tuning_job_name("demo");
  d->set_hyper_parameter_tuning_job_status("InProgress");
  d->set_creation_time(10);
  auto* objective = d->mutable_hyper_parameter_tuning_job_config()
                        ->mutable_hyper_parameter_tuning_job_objective();
  objective->set_type("Minimize");
  objective->set_metric_name("loss");
  t.set_max_jobs(max_jobs);
  return t;
}

v1::TrainingJobRecord Ended(const std::string& name, const std::string& status,
                            std::optional<double> objective) {
  v1::TrainingJobRecord j;
  j.mutable_describe()->set_training_job_name(name);
  j.mutable_describe()->set_training_job_status(status);
  j.set_objective_status(objective.has_value() ? "Succeeded" : "Failed");
  if (objective.has_value()) j.set_objective(*objective);
  return j;
}

// A settled tally gives the view a full pass gives, whatever order jobs end in, while counting
// each ended job once.
TEST(TuningJob, SettledJobsGiveTheSameViewAsAFullPass) {
  v1::TuningJobRecord t;
  t.mutable_describe()
      ->mutable_hyper_parameter_tuning_job_config()
      ->mutable_hyper_parameter_tuning_job_objective()
      ->set_type("Minimize");
  std::vector<v1::TrainingJobRecord> jobs(40);
  for (size_t i = 0; i < jobs.size(); ++i) {
    jobs[i].mutable_describe()->set_training_job_name("j" + std::to_string(i));
    jobs[i].mutable_describe()->set_training_job_status("InProgress");
    jobs[i].set_objective_status("Pending");
  }
  std::vector<const v1::TrainingJobRecord*> launched;
  SettledJobs settled;
  v1::TuningJobRecord incremental = t;
  // Jobs launch in order, four running at a time, and end out of order (every third one fails,
  // objectives repeat so that ties are decided by launch order).
  for (size_t i = 0; i < jobs.size(); ++i) {
    launched.push_back(&jobs[i]);
    if (i >= 3) {
      const size_t ending = i - 3 + (i % 2 == 0 ? 1 : 0);
      for (size_t e : {i - 3, ending}) {
        auto& job = jobs[e];
        if (IsTerminal(job)) continue;
        if (e % 3 == 0) {
          job.mutable_describe()->set_training_job_status("Failed");
          job.set_objective_status("Failed");
        } else {
          job.mutable_describe()->set_training_job_status("Completed");
          job.set_objective_status("Succeeded");
          job.set_objective(static_cast<double>((e * 7) % 5));
        }
      }
    }
    RecomputeTuningView(incremental, launched, &settled);
    v1::TuningJobRecord full = t;
    RecomputeTuningView(full, launched);
    ASSERT_EQ(incremental.describe().SerializeAsString(), full.describe().SerializeAsString())
        << "after launch " << i;
    EXPECT_EQ(RunningJobs(launched, &settled), RunningJobs(launched));
  }
  EXPECT_GT(settled.count, 30u);  // the ended leading jobs are not counted again
  EXPECT_EQ(incremental.describe().best_training_job().training_job_name(), "j5");  // 0, earliest
}

TEST(TuningJobStateMachine, EndCauseRoundTripsThroughTheStoredName) {
  v1::TuningJobRecord t;
  EXPECT_EQ(EndCauseOf(t), EndCause::kNone);
  BeginEnding(t, EndCause::kNotImproving);
  EXPECT_EQ(t.end_cause(), "not_improving");  // as earlier versions stored it
  EXPECT_EQ(EndCauseOf(t), EndCause::kNotImproving);
  t.set_end_cause("runtime");
  EXPECT_EQ(EndCauseOf(t), EndCause::kRuntime);
}

TEST(TuningJobStateMachine, MayLaunchUntilTheBudgetOrAnEndCause) {
  auto t = Running(2);
  EXPECT_TRUE(MayLaunch(t));
  t.set_launched(2);
  EXPECT_FALSE(MayLaunch(t));
  t.set_launched(1);
  BeginEnding(t, EndCause::kTarget);
  EXPECT_FALSE(MayLaunch(t));
  auto stopped = Running(2);
  MarkTuningStopping(stopped, 20);
  EXPECT_FALSE(MayLaunch(stopped));
  EXPECT_TRUE(IsActive(stopped));
  EXPECT_TRUE(stopped.stop_requested());
  EXPECT_EQ(stopped.describe().last_modified_time(), 20);
}

TEST(TuningJobStateMachine, FiveFailuresReachEarlyFailureAndEndFailed) {
  auto t = Running(10);
  t.set_launched(5);
  std::vector<v1::TrainingJobRecord> jobs;
  for (int i = 0; i < 5; ++i) jobs.push_back(Ended("j" + std::to_string(i), "Failed", {}));
  std::vector<const v1::TrainingJobRecord*> all;
  EndCause reached = EndCause::kNone;
  for (const auto& j : jobs) {
    all.push_back(&j);
    reached = RecordFinishedJob(t, j, all, 5, 30);
    if (reached != EndCause::kNone) break;
  }
  EXPECT_EQ(reached, EndCause::kEarlyFailure);
  BeginEnding(t, reached);
  ASSERT_TRUE(EndIfDone(t, all, 5, 40));
  EXPECT_EQ(t.describe().hyper_parameter_tuning_job_status(), "Failed");
  EXPECT_EQ(t.describe().failure_reason(),
            "No training job succeeded after 5 attempts. Please take a look at the training job "
            "failures to get more details.");
  EXPECT_EQ(t.describe().hyper_parameter_tuning_end_time(), 40);
  EXPECT_EQ(t.describe().consumed_resources().runtime_in_seconds(), 30);
  EXPECT_EQ(t.describe().training_job_status_counters().non_retryable_error(), 5);
}

TEST(TuningJobStateMachine, InfrastructureFailuresNeverCountTowardEarlyFailure) {
  auto t = Running(10);
  std::vector<v1::TrainingJobRecord> jobs;
  for (int i = 0; i < 6; ++i) {
    jobs.push_back(Ended("j" + std::to_string(i), "Failed", {}));
    jobs.back().set_failure_kind("RetryableError");  // its worker was lost
  }
  std::vector<const v1::TrainingJobRecord*> all;
  for (const auto& j : jobs) {
    all.push_back(&j);
    EXPECT_EQ(RecordFinishedJob(t, j, all, 5, 30), EndCause::kNone) << j.DebugString();
  }
  EXPECT_EQ(t.finished(), 0);
  EXPECT_EQ(t.describe().training_job_status_counters().retryable_error(), 6);
}

// Issue 14: CompleteOnConvergence never fired, even over 15 identical results. The rule:
// converged once kDefaultConvergenceJobs (10) jobs in a row did not improve the best by 1%.
TEST(TuningJob, ConvergesAfterTenJobsInARowWithoutAOnePercentImprovement) {
  auto t = Running(20);
  t.mutable_describe()
      ->mutable_hyper_parameter_tuning_job_config()
      ->mutable_tuning_job_completion_criteria()
      ->mutable_convergence_detected()
      ->set_complete_on_convergence("Enabled");
  std::vector<v1::TrainingJobRecord> jobs;
  jobs.reserve(15);
  std::vector<const v1::TrainingJobRecord*> all;
  std::vector<EndCause> causes;
  for (int i = 0; i < 15; ++i) {
    jobs.push_back(Ended("j" + std::to_string(i), "Completed", 0.5));
    all.push_back(&jobs.back());
    causes.push_back(RecordFinishedJob(t, jobs.back(), all, 5, 100 + i));
    if (causes.back() != EndCause::kNone) break;
  }
  // The first sets the best; the 11th is the 10th in a row not improving it.
  ASSERT_EQ(causes.size(), 11u);
  EXPECT_EQ(causes.back(), EndCause::kConvergence);
  const auto& details = t.describe().tuning_job_completion_details();
  EXPECT_EQ(details.number_of_training_jobs_objective_not_improving(), 10);
  EXPECT_EQ(details.convergence_detected_time(), 110);
  // Disabled (or absent), the same results never converge; a smaller window converges sooner.
  auto off = Running(20);
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(RecordFinishedJob(off, jobs[i], all, 5, 100 + i), EndCause::kNone);
  }
  EXPECT_FALSE(off.describe().tuning_job_completion_details().has_convergence_detected_time());
  auto quick = Running(20);
  quick.mutable_describe()
      ->mutable_hyper_parameter_tuning_job_config()
      ->mutable_tuning_job_completion_criteria()
      ->mutable_convergence_detected()
      ->set_complete_on_convergence("Enabled");
  EXPECT_EQ(RecordFinishedJob(quick, jobs[0], all, 5, 1, 2), EndCause::kNone);
  EXPECT_EQ(RecordFinishedJob(quick, jobs[1], all, 5, 2, 2), EndCause::kNone);
  EXPECT_EQ(RecordFinishedJob(quick, jobs[2], all, 5, 3, 2), EndCause::kConvergence);
  BeginEnding(quick, EndCause::kConvergence);
  EXPECT_EQ(EndCauseOf(quick), EndCause::kConvergence);
  ASSERT_TRUE(EndIfDone(quick, {&jobs[0]}, 5, 4));
  EXPECT_EQ(quick.describe().hyper_parameter_tuning_job_status(), "Completed");
}

TEST(TuningJobStateMachine, TargetAndNotImprovingAreReachedByTheJobThatMeetsThem) {
  auto t = Running(10);
  auto* criteria = t.mutable_describe()
                       ->mutable_hyper_parameter_tuning_job_config()
                       ->mutable_tuning_job_completion_criteria();
  criteria->set_target_objective_metric_value(0.1f);
  criteria->mutable_best_objective_not_improving()->set_max_number_of_training_jobs_not_improving(
      2);
  const auto a = Ended("a", "Completed", 1.0);
  const auto b = Ended("b", "Completed", 0.995);  // not 1% better
  const auto c = Ended("c", "Completed", 0.999);
  std::vector<const v1::TrainingJobRecord*> all = {&a};
  EXPECT_EQ(RecordFinishedJob(t, a, all, 5, 1), EndCause::kNone);
  all.push_back(&b);
  EXPECT_EQ(RecordFinishedJob(t, b, all, 5, 2), EndCause::kNone);
  EXPECT_EQ(t.not_improving(), 1);
  all.push_back(&c);
  EXPECT_EQ(RecordFinishedJob(t, c, all, 5, 3), EndCause::kNotImproving);
  EXPECT_EQ(t.describe()
                .tuning_job_completion_details()
                .number_of_training_jobs_objective_not_improving(),
            2);
  auto target = Running(10);
  *target.mutable_describe()->mutable_hyper_parameter_tuning_job_config() =
      t.describe().hyper_parameter_tuning_job_config();
  const auto d = Ended("d", "Completed", 0.05);
  EXPECT_EQ(RecordFinishedJob(target, d, {&d}, 5, 1), EndCause::kTarget);
}

TEST(TuningJobStateMachine, EndsOnlyWhenNothingRunsAndNothingIsLeftToLaunch) {
  auto t = Running(2);
  t.set_launched(1);
  const auto done = Ended("a", "Completed", 0.5);
  auto running = Ended("b", "InProgress", {});
  running.set_objective_status("Pending");
  EXPECT_FALSE(EndIfDone(t, {&done}, 5, 9));  // one more to launch
  t.set_launched(2);
  EXPECT_FALSE(EndIfDone(t, {&done, &running}, 5, 9));  // one still runs
  t.set_succeeded(1);
  ASSERT_TRUE(EndIfDone(t, {&done}, 5, 9));
  EXPECT_EQ(t.describe().hyper_parameter_tuning_job_status(), "Completed");
  EXPECT_FALSE(EndIfDone(t, {&done}, 5, 10));  // already ended
  auto stopping = Running(2);
  MarkTuningStopping(stopping, 5);
  ASSERT_TRUE(EndIfDone(stopping, {&done}, 5, 9));
  EXPECT_EQ(stopping.describe().hyper_parameter_tuning_job_status(), "Stopped");
}

TEST(TuningJobStateMachine, StopReasonsNameTheCause) {
  auto t = Running(2);
  v1::TrainingJobRecord j;
  EXPECT_EQ(StopReasonOf(j, t), "");
  j.set_stop_cause(std::string(StopCauseName(StopCause::kTuningJob)));
  BeginEnding(t, EndCause::kRuntime);
  EXPECT_EQ(StopReasonOf(j, t), "the tuning job reached its MaxRuntimeInSeconds");
  t.set_stop_requested(true);
  EXPECT_EQ(StopReasonOf(j, t), "the tuning job was stopped");
  j.set_stop_cause(std::string(StopCauseName(StopCause::kEarlyStopping)));
  auto* decision = j.add_decisions();
  decision->set_rule("Median");
  decision->set_stop(true);
  decision->set_explanation("epoch 3: loss 2 > 1: stop");
  EXPECT_EQ(StopReasonOf(j, t), "median rule, epoch 3: loss 2 > 1");
}

TEST(TuningJobStateMachine, TuningJobNotFoundIsSageMakersText) {
  EXPECT_EQ(TuningJobNotFound("x"),
            absl::NotFoundError("Amazon SageMaker can't find a tuning job called x. Type another "
                                "name."));
}

}  // namespace
}  // namespace amt::core
