// amtd --executor slurm against a real Slurm on this machine (scripts/slurm-up.sh, started by
// CTest's slurm fixture; SLURM_CONF points at it): every training-job attempt is a Slurm job
// named after the training job, whose one-shot amt-worker runs it and reports back. A tuning job
// with Auto early stopping, a stop, a spot interruption, an sbatch refusal, a kill -9 of amtd
// while a Slurm job runs, and Slurm missing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/json.h"
#include "tests/integration/harness.h"

namespace amt::testing {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

// Slurm jobs (any state squeue still shows) by name: `squeue -h -t all -o %j`.
std::multiset<std::string> SlurmJobNames() {
  std::multiset<std::string> names;
  FILE* out = ::popen("squeue -h -t all -o %j 2>/dev/null", "r");
  if (out == nullptr) return names;
  char line[512];
  while (std::fgets(line, sizeof(line), out) != nullptr) {
    std::string name(line);
    while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
    names.insert(name);
  }
  ::pclose(out);
  return names;
}

std::vector<std::string> SlurmFlags(const std::string& dir, std::vector<std::string> more = {}) {
  std::vector<std::string> flags = {
      "--image-map", WriteImageMap(dir), "--executor", "slurm", "--slurm-resource-scale",
      "0.5",         "--time-scale",     "0.01"};
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}

// A toy training job; `extra` (spot settings) also gets a MaxWaitTimeInSeconds.
std::string TrainingJobJson(const std::string& name, const std::string& hyperparameters,
                            const std::string& extra = "") {
  return R"j({"TrainingJobName": ")j" + name + R"j(", "HyperParameters": )j" + hyperparameters +
         R"j(, "AlgorithmSpecification": {"TrainingImage": "amt-local/toy-trainer:latest",
         "TrainingInputMode": "File",
         "MetricDefinitions": [{"Name": "val_loss", "Regex": "val_loss=([0-9.eE+-]+)"}]},
         "RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole",
         "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
         "ResourceConfig": {"InstanceType": "ml.m5.large", "InstanceCount": 1,
                            "VolumeSizeInGB": 10},
         "StoppingCondition": {"MaxRuntimeInSeconds": 3600)j" +
         (extra.empty() ? std::string("}") : R"j(, "MaxWaitTimeInSeconds": 7200})j") + extra + "}";
}

TEST(SlurmIntegrationTest, ARandomTuningJobWithAutoEarlyStoppingRunsThroughSlurm) {
  const std::string dir = MakeTempDir("amt-slurm-tuning");
  Amtd amtd(dir + "/data", SlurmFlags(dir));
  std::ifstream file(SourceDir() + "/examples/random-tuning.json");
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  auto request = TuningRequestFromJson(text);
  request.set_hyper_parameter_tuning_job_name("slurm-random");
  auto* config = request.mutable_hyper_parameter_tuning_job_config();
  config->mutable_resource_limits()->set_max_number_of_training_jobs(8);
  config->mutable_resource_limits()->set_max_parallel_training_jobs(4);
  config->set_training_job_early_stopping_type("Auto");
  (*request.mutable_training_job_definition()->mutable_static_hyper_parameters())["sleep_ms"] =
      "20";
  grpc::ClientContext ctx;
  v1::CreateHyperParameterTuningJobResponse response;
  ASSERT_TRUE(amtd.stub().CreateHyperParameterTuningJob(&ctx, request, &response).ok());

  const auto last = WaitForTuningJob(amtd.stub(), "slurm-random");
  const auto& t = last.tuning_job();
  EXPECT_EQ(t.hyper_parameter_tuning_job_status(), "Completed") << t.failure_reason();
  const auto& c = t.training_job_status_counters();
  EXPECT_EQ(c.completed() + c.stopped(), 8);
  EXPECT_EQ(c.non_retryable_error() + c.retryable_error(), 0);
  ASSERT_EQ(last.training_jobs_size(), 8);
  // Every training job was a Slurm job of its own name.
  const auto names = SlurmJobNames();
  for (const auto& job : last.training_jobs()) {
    EXPECT_EQ(names.count(job.training_job_name()), 1u) << job.training_job_name();
    // Its log came through the one-shot worker: the trainer's lines are there.
    EXPECT_THAT(ReadLogs(amtd.stub(), job.training_job_name()), Contains(HasSubstr("epoch=1 ")))
        << job.training_job_name();
  }
}

TEST(SlurmIntegrationTest, AStopReachesTheTrainerThroughItsSlurmJob) {
  const std::string dir = MakeTempDir("amt-slurm-stop");
  Amtd amtd(dir + "/data", SlurmFlags(dir));
  CreateTrainingJob(amtd, TrainingJobJson("slurm-stop", R"({"epochs": "100000",
                                                            "sleep_ms": "20"})"));
  WaitForTrainingJob(amtd.stub(), "slurm-stop", [](const v1::DescribeTrainingJobResponse& j) {
    return j.final_metric_data_list_size() > 0;  // training: its first epoch is in
  });
  grpc::ClientContext ctx;
  v1::StopTrainingJobRequest request;
  request.set_training_job_name("slurm-stop");
  v1::StopTrainingJobResponse response;
  ASSERT_TRUE(amtd.stub().StopTrainingJob(&ctx, request, &response).ok());
  const auto job = WaitForTrainingJob(amtd.stub(), "slurm-stop", Terminal);
  EXPECT_EQ(job.training_job_status(), "Stopped") << job.failure_reason();
}

TEST(SlurmIntegrationTest, ASpotInterruptionResubmitsTheJobWhichResumesFromItsCheckpoint) {
  const std::string dir = MakeTempDir("amt-slurm-spot");
  Amtd amtd(dir + "/data",
            SlurmFlags(dir, {"--spot-interrupt-after", "50", "--spot-max-interruptions", "1"}));
  CreateTrainingJob(amtd, TrainingJobJson("slurm-spot", R"({"epochs": "30", "sleep_ms": "40"})",
                                          R"(, "EnableManagedSpotTraining": true,
      "CheckpointConfig": {"S3Uri": "s3://bucket/checkpoints/slurm-spot"})"));
  const auto job = WaitForTrainingJob(amtd.stub(), "slurm-spot", Terminal);
  ASSERT_EQ(job.training_job_status(), "Completed") << job.failure_reason();
  std::vector<std::string> statuses;
  for (const auto& t : job.secondary_status_transitions()) statuses.push_back(t.status());
  EXPECT_THAT(statuses, Contains("Interrupted"));
  EXPECT_THAT(ReadLogs(amtd.stub(), "slurm-spot"), Contains(HasSubstr("resuming from checkpoint")));
  EXPECT_EQ(SlurmJobNames().count("slurm-spot"), 2u);  // the attempt was submitted again
}

TEST(SlurmIntegrationTest, AnSbatchRefusalFailsTheJobWithSbatchsMessage) {
  const std::string dir = MakeTempDir("amt-slurm-refused");
  Amtd amtd(dir + "/data", SlurmFlags(dir, {"--sbatch-arg=--gres=gpu:1"}));
  CreateTrainingJob(amtd, TrainingJobJson("slurm-refused", R"({"epochs": "1"})"));
  const auto job = WaitForTrainingJob(amtd.stub(), "slurm-refused", Terminal);
  EXPECT_EQ(job.training_job_status(), "Failed");
  EXPECT_THAT(job.failure_reason(),
              HasSubstr("Slurm refused the job: sbatch: error: Invalid generic resource (gres) "
                        "specification"));
}

TEST(SlurmIntegrationTest, AnAmtdKilledWhileASlurmJobRunsTakesItBackOnRestart) {
  const std::string dir = MakeTempDir("amt-slurm-kill");
  auto amtd = std::make_unique<Amtd>(dir + "/data", SlurmFlags(dir));
  CreateTrainingJob(*amtd, TrainingJobJson("slurm-kill", R"({"epochs": "60", "sleep_ms": "50"})"));
  WaitForTrainingJob(amtd->stub(), "slurm-kill", [](const v1::DescribeTrainingJobResponse& j) {
    return j.final_metric_data_list_size() > 0;
  });
  amtd->Kill(SIGKILL);
  amtd = std::make_unique<Amtd>(dir + "/data", SlurmFlags(dir));
  const auto job = WaitForTrainingJob(amtd->stub(), "slurm-kill", Terminal);
  EXPECT_EQ(job.training_job_status(), "Completed") << job.failure_reason();
  // One Slurm job: the same attempt, re-adopted, not run again.
  EXPECT_EQ(SlurmJobNames().count("slurm-kill"), 1u);
  const auto lines = ReadLogs(amtd->stub(), "slurm-kill");
  int first_epochs = 0;
  for (const auto& line : lines) first_epochs += line.rfind("epoch=1 ", 0) == 0;
  EXPECT_EQ(first_epochs, 1);
}

TEST(SlurmIntegrationTest, PyTorchDdpWithTwoInstancesCompletesThroughSlurm) {
  const std::string dir = MakeTempDir("amt-slurm-ddp");
  Amtd amtd(dir + "/data", SlurmFlags(dir));
  std::string json = TrainingJobJson("slurm-ddp", R"({"epochs": "3", "lr": "0.1"})");
  json.replace(json.find("amt-local/toy-trainer:latest"),
               std::string("amt-local/toy-trainer:latest").size(), "amt-local/pytorch-ddp:latest");
  json.replace(json.find(R"("InstanceCount": 1)"), std::string(R"("InstanceCount": 1)").size(),
               R"("InstanceCount": 2)");
  CreateTrainingJob(amtd, json);
  const auto job = WaitForTrainingJob(amtd.stub(), "slurm-ddp", Terminal);
  ASSERT_EQ(job.training_job_status(), "Completed") << job.failure_reason();
  const auto logs = ReadLogs(amtd.stub(), "slurm-ddp");
  EXPECT_THAT(logs, Contains("host=algo-2 rank=1 of 2"));
  EXPECT_THAT(logs, Contains(::testing::StartsWith("w=2.99")));
  EXPECT_EQ(SlurmJobNames().count("slurm-ddp"), 1u);  // both hosts in one Slurm job
}

TEST(SlurmIntegrationTest, WithoutSlurmAmtdExitsWithAClearMessage) {
  const std::string dir = MakeTempDir("amt-slurm-missing");
  const auto exit = RunAmtdToExit(
      dir + "/data", {"--executor", "slurm", "--slurm-bin-dir", dir + "/no-slurm-here"});
  EXPECT_NE(exit.exit_code, 0);
  EXPECT_THAT(exit.output,
              HasSubstr("--executor slurm: cannot run " + dir + "/no-slurm-here/squeue"));
}

}  // namespace
}  // namespace amt::testing
