#include "orchestrator/core/training_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace amt::core {
namespace {

std::vector<std::string> Secondaries(const v1::TrainingJobRecord& job) {
  std::vector<std::string> out;
  for (const auto& t : job.describe().secondary_status_transitions()) out.push_back(t.status());
  return out;
}

TEST(TrainingJob, CompletedRunWalksSageMakersSecondaryStatuses) {
  v1::TrainingJobRecord job;
  job.set_tuning_job_name("t");
  MarkCreated(job, 100);
  MarkLaunching(job, 101);
  MarkTraining(job, 102);
  ExitReport exit;
  exit.model_uploaded = true;
  job.set_objective(0.5);
  MarkExited(job, exit, 110.2);
  EXPECT_EQ(job.describe().training_job_status(), "Completed");
  EXPECT_EQ(job.describe().secondary_status(), "Completed");
  EXPECT_THAT(Secondaries(job), ::testing::ElementsAre("Starting", "Downloading", "Training",
                                                       "Uploading", "Completed"));
  // One entry per status, carrying the phase's last message (SageMaker's texts).
  std::vector<std::string> messages;
  for (const auto& t : job.describe().secondary_status_transitions()) {
    messages.push_back(t.status_message());
  }
  EXPECT_THAT(messages, ::testing::ElementsAre(
                            "Preparing the instances for training", "Downloading input data",
                            "Training image download completed. Training in progress.",
                            "Uploading generated training model", "Training job completed"));
  EXPECT_EQ(job.describe().secondary_status_transitions(0).start_time(), 100);
  EXPECT_EQ(job.describe().secondary_status_transitions(0).end_time(), 102);
  EXPECT_EQ(job.describe().training_start_time(), 102);
  EXPECT_EQ(job.describe().training_end_time(), 110.2);
  EXPECT_EQ(job.describe().training_time_in_seconds(), 9);  // 8.2 s rounds up
  EXPECT_EQ(job.objective_status(), "Succeeded");
  // Every transition but the last is closed.
  const auto& t = job.describe().secondary_status_transitions();
  for (int i = 0; i + 1 < t.size(); ++i) EXPECT_TRUE(t[i].has_end_time());
  EXPECT_FALSE(t[t.size() - 1].has_end_time());
}

TEST(TrainingJob, ANewMessageOfTheCurrentStatusUpdatesItsEntry) {
  v1::TrainingJobRecord job;
  MarkCreated(job, 100);
  EXPECT_EQ(job.describe().secondary_status_transitions(0).status_message(),
            "Starting the training job");
  MarkLaunching(job, 101);
  ASSERT_EQ(job.describe().secondary_status_transitions_size(), 1);
  EXPECT_EQ(job.describe().secondary_status_transitions(0).status_message(),
            "Launching requested ML instances");
  EXPECT_EQ(job.describe().secondary_status_transitions(0).start_time(), 100);
  EXPECT_FALSE(job.describe().secondary_status_transitions(0).has_end_time());
  EXPECT_EQ(job.describe().last_modified_time(), 101);
  MarkLaunching(job, 105);  // the same message again: nothing changes
  EXPECT_EQ(job.describe().last_modified_time(), 101);
}

// ModelArtifacts is a required member of DescribeTrainingJob's output (botocore), and SageMaker
// uploads model/ whatever the exit: it stays on every end.
constexpr char kArtifacts[] = "s3://b/out/job/output/model.tar.gz";

TEST(TrainingJob, NonZeroExitFailsWithFailureFileTextPrefixed) {
  v1::TrainingJobRecord job;
  job.mutable_describe()->mutable_model_artifacts()->set_s3_model_artifacts(kArtifacts);
  MarkCreated(job, 1);
  MarkTraining(job, 2);
  ExitReport exit;
  exit.exit_code = 2;
  exit.failure_reason = "the training data is empty";
  MarkExited(job, exit, 3);
  EXPECT_EQ(job.describe().training_job_status(), "Failed");
  EXPECT_EQ(job.describe().failure_reason(), "AlgorithmError: the training data is empty");
  EXPECT_EQ(job.failure_kind(), "NonRetryableError");
  EXPECT_EQ(job.describe().model_artifacts().s3_model_artifacts(), kArtifacts);
}

TEST(TrainingJob, ASuccessfulExitWhoseModelUploadFailedFailsAsAnInternalError) {
  v1::TrainingJobRecord job;
  job.mutable_describe()->mutable_model_artifacts()->set_s3_model_artifacts(kArtifacts);
  MarkCreated(job, 1);
  MarkTraining(job, 2);
  job.set_objective(0.5);
  ExitReport exit;  // exit code 0
  exit.upload_failure = "cannot write /s3/b/out/model.tar.gz.partial: No space left on device";
  MarkExited(job, exit, 3);
  EXPECT_EQ(job.describe().training_job_status(), "Failed");
  EXPECT_EQ(job.describe().failure_reason(),
            "InternalServerError: The training job's output could not be uploaded: cannot write "
            "/s3/b/out/model.tar.gz.partial: No space left on device");
  EXPECT_EQ(job.failure_kind(), "RetryableError");
  EXPECT_EQ(job.describe().model_artifacts().s3_model_artifacts(), kArtifacts);
}

TEST(TrainingJob, FailureReasonKeepsCategoryAndIsCutAt1024) {
  ExitReport exit;
  exit.exit_code = 1;
  exit.failure_reason = "ClientError: " + std::string(2000, 'x');
  const std::string reason = FailureReasonFor(exit);
  EXPECT_EQ(reason.size(), 1024u);
  EXPECT_EQ(reason.substr(0, 13), "ClientError: ");
}

TEST(TrainingJob, ExitWithoutFailureFileNamesTheExitCode) {
  ExitReport exit;
  exit.exit_code = 3;
  EXPECT_EQ(FailureReasonFor(exit),
            "AlgorithmError: Exit Code: 3. See the job logs for more information.");
}

TEST(TrainingJob, MaxRuntimeStopEndsStoppedWithMaxRuntimeExceeded) {
  v1::TrainingJobRecord job;
  job.set_tuning_job_name("t");
  MarkCreated(job, 1);
  MarkTraining(job, 2);
  job.set_objective(0.7);
  MarkStopping(job, StopCause::kMaxRuntime, 5);
  EXPECT_EQ(job.describe().training_job_status(), "Stopping");
  EXPECT_EQ(job.describe().secondary_status(), "Stopping");
  ExitReport exit;
  exit.signal = 15;
  MarkExited(job, exit, 6);
  EXPECT_EQ(job.describe().training_job_status(), "Stopped");
  EXPECT_EQ(job.describe().secondary_status(), "MaxRuntimeExceeded");
  EXPECT_EQ(job.objective_status(), "Succeeded");  // a stopped job keeps its last objective
}

TEST(TrainingJob, StoppedWithoutObjectiveHasFailedObjectiveStatus) {
  v1::TrainingJobRecord job;
  job.set_tuning_job_name("t");
  MarkCreated(job, 1);
  MarkStoppedBeforeStart(job, StopCause::kTuningJob, 2);
  EXPECT_EQ(job.describe().training_job_status(), "Stopped");
  EXPECT_EQ(job.describe().secondary_status(), "Stopped");
  EXPECT_EQ(job.objective_status(), "Failed");
}

TEST(TrainingJob, LaunchFailureIsClientError) {
  v1::TrainingJobRecord job;
  MarkCreated(job, 1);
  ExitReport exit;
  exit.launch_failed = true;
  exit.failure_reason = "/nope: No such file or directory";
  MarkExited(job, exit, 2);
  EXPECT_EQ(job.describe().failure_reason(), "ClientError: /nope: No such file or directory");
  EXPECT_FALSE(job.describe().has_training_time_in_seconds());
}

TEST(TrainingJob, InternalErrorIsRetryable) {
  v1::TrainingJobRecord job;
  MarkCreated(job, 1);
  MarkTraining(job, 2);
  ExitReport exit;
  exit.internal_error = true;
  exit.failure_reason = "The worker running this training job was lost.";
  MarkExited(job, exit, 9);
  EXPECT_EQ(job.failure_kind(), "RetryableError");
  EXPECT_EQ(job.describe().failure_reason(),
            "InternalServerError: The worker running this training job was lost.");
}

}  // namespace
}  // namespace amt::core
