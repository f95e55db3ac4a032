// Managed spot training end to end: real amtd, amt-worker and toy-trainer processes. An
// interrupted job gets SIGTERM, saves its checkpoint, restarts from it and ends with the same
// result as an uninterrupted run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/json.h"
#include "orchestrator/spot/spot.h"
#include "tests/integration/harness.h"
#include "tests/support/requests.h"

namespace amt::testing {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;

constexpr double kMeanSeconds = 0.3;

// The training-job example (examples/training-job.json) as `name`: 20 epochs of 100 ms,
// checkpointing into s3://bucket/checkpoints/<name>, on spot (MaxWaitTimeInSeconds 1200) or not.
std::string TrainingJobJson(const std::string& name, bool spot) {
  nlohmann::json job = ExampleWith("training-job.json", R"j({
    "HyperParameters": {"epochs": "20", "sleep_ms": "100", "optimizer": null},
    "AlgorithmSpecification": {
      "MetricDefinitions": [{"Name": "val_loss", "Regex": "val_loss=([0-9.eE+-]+)"}]},
    "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
    "StoppingCondition": {"MaxRuntimeInSeconds": 600},
    "Environment": null})j");
  job["TrainingJobName"] = name;
  job["EnableManagedSpotTraining"] = spot;
  if (spot) job["StoppingCondition"]["MaxWaitTimeInSeconds"] = 1200;
  job["CheckpointConfig"]["S3Uri"] = "s3://bucket/checkpoints/" + name;
  return job.dump();
}

std::vector<std::string> SecondaryStatuses(const v1::DescribeTrainingJobResponse& job) {
  std::vector<std::string> out;
  for (const auto& t : job.secondary_status_transitions()) {
    if (out.empty() || out.back() != t.status()) out.push_back(t.status());
  }
  return out;
}

TEST(SpotIntegrationTest, InterruptedJobResumesFromItsCheckpointAndEndsLikeAnUninterruptedOne) {
  // A seed whose schedule interrupts the first attempt between 0.8 s and 1.2 s into its 2 s of
  // training: late enough that the trainer has written checkpoints even when it is slow to
  // start (under AddressSanitizer on a busy machine a fixed seed's 0.2 s came before its first
  // line), early enough to leave epochs to resume. One interruption at most, so the second
  // attempt runs to its end. The schedule is a pure function of the seed (spot.h).
  spot::SpotOptions options;
  options.mean_seconds_to_interruption = kMeanSeconds;
  uint64_t seed = 0;
  for (uint64_t candidate = 1; candidate < 10'000 && seed == 0; ++candidate) {
    const auto after = spot::InterruptionAfter(options, candidate, "spot-run", 1, 0);
    if (after.has_value() && *after >= 0.8 && *after <= 1.2) seed = candidate;
  }
  ASSERT_NE(seed, 0u);

  const TempDir temp("amt-spot");
  const std::string dir = temp.str();
  Amtd amtd(dir + "/data", {"--image-map", WriteImageMap(dir), "--slots", "2",
                            "--spot-mean-seconds", std::to_string(kMeanSeconds),
                            "--spot-max-interruptions", "1", "--spot-seed", std::to_string(seed)});
  CreateTrainingJob(amtd, TrainingJobJson("spot-run", true));
  CreateTrainingJob(amtd, TrainingJobJson("plain-run", false));
  const auto spot_job = WaitForTrainingJob(amtd.stub(), "spot-run", Terminal);
  const auto plain_job = WaitForTrainingJob(amtd.stub(), "plain-run", Terminal);

  ASSERT_EQ(spot_job.training_job_status(), "Completed") << spot_job.failure_reason();
  EXPECT_THAT(SecondaryStatuses(spot_job),
              ElementsAre("Starting", "Downloading", "Training", "Interrupted", "Starting",
                          "Downloading", "Training", "Uploading", "Completed"));
  const auto logs = ReadLogs(amtd.stub(), "spot-run");
  EXPECT_THAT(logs, Contains("SIGTERM received, saving model"));
  bool resumed = false;
  for (const auto& line : logs) resumed |= line.rfind("resuming from checkpoint at epoch", 0) == 0;
  EXPECT_TRUE(resumed);

  // Resuming from the checkpoint reproduces the uninterrupted run's final value exactly.
  ASSERT_EQ(plain_job.training_job_status(), "Completed");
  ASSERT_EQ(spot_job.final_metric_data_list_size(), 1);
  ASSERT_EQ(plain_job.final_metric_data_list_size(), 1);
  EXPECT_EQ(spot_job.final_metric_data_list(0).value(),
            plain_job.final_metric_data_list(0).value());

  // Billed at the 70% discount; the plain job pays full price.
  EXPECT_EQ(spot_job.billable_time_in_seconds(),
            spot::BillableSeconds(options, spot_job.training_time_in_seconds()));
  EXPECT_EQ(plain_job.billable_time_in_seconds(), plain_job.training_time_in_seconds());
}

}  // namespace
}  // namespace amt::testing
