// Multi-instance training jobs end to end: real amtd, amt-worker and examples/distributed_trainer
// processes. InstanceCount 2 runs hosts algo-1 and algo-2 that find each other by name and sum
// their gradients over TCP; one failing host fails the job and stops the other; a stop reaches
// both; the model archive holds both hosts' files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/json.h"
#include "tests/integration/harness.h"
#include "tests/support/requests.h"
#include "worker/tar_gz.h"

namespace amt::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::HasSubstr;

// The training-job example (examples/training-job.json) as `name` on two hosts of
// examples/distributed_trainer, with these hyperparameters (a JSON object) and `extra` (a JSON
// merge patch) merged over it.
std::string JobJson(const std::string& name, const std::string& hyperparameters,
                    const std::string& extra = "{}") {
  nlohmann::json job = ExampleWith("training-job.json", R"j({
    "AlgorithmSpecification": {"TrainingImage": "amt-local/distributed-trainer:latest",
      "MetricDefinitions": [{"Name": "loss", "Regex": "^epoch=[0-9]+ loss=([0-9.eE+-]+)"}]},
    "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
    "ResourceConfig": {"InstanceCount": 2},
    "StoppingCondition": {"MaxRuntimeInSeconds": 600},
    "CheckpointConfig": null, "Environment": null})j");
  job["TrainingJobName"] = name;
  job["HyperParameters"] = nlohmann::json::parse(hyperparameters);
  job.merge_patch(nlohmann::json::parse(extra));
  return job.dump();
}

class MultiInstanceIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_.str();
    amtd_ = std::make_unique<Amtd>(
        dir_ + "/data",
        std::vector<std::string>{"--image-map", WriteImageMap(dir_), "--slots", "4"});
  }

  TempDir temp_{"amt-multi"};  // removed after amtd_ ends
  std::string dir_;
  std::unique_ptr<Amtd> amtd_;
};

TEST_F(MultiInstanceIntegrationTest, TwoHostsFindEachOtherAndSumTheirGradients) {
  CreateTrainingJob(*amtd_, JobJson("two-hosts", R"({"epochs": "3"})"));
  const auto job = WaitForTrainingJob(amtd_->stub(), "two-hosts", Terminal);
  ASSERT_EQ(job.training_job_status(), "Completed") << job.failure_reason();

  const auto logs = ReadLogs(amtd_->stub(), "two-hosts");
  // Every epoch's all-reduce had both hosts, and both ended with the same parameter: the step
  // from the sum over all 100 points (lr 0.1 from w = 0: 10.1, 18.18, 24.644).
  for (const char* host : {"algo-1", "algo-2"}) {
    EXPECT_THAT(logs, Contains(std::string("host=") + host + " epoch=3 allreduce_hosts=2"));
    EXPECT_THAT(logs, Contains(std::string("host=") + host + " done w=24.644000"));
  }
  if (geteuid() == 0) {
    // Root: each host has its own /etc/hosts (its name resolves to its loopback address) and its
    // own host name.
    // (The network is the lowest free one on this machine: another test's job may hold 0.)
    EXPECT_THAT(logs, Contains(::testing::MatchesRegex(
                          "host=algo-1 rank=0 of 2 hostname=algo-1 address=127\\.1\\.[0-9]+\\.1")));
    EXPECT_THAT(logs, Contains(::testing::MatchesRegex(
                          "host=algo-2 rank=1 of 2 hostname=algo-2 address=127\\.1\\.[0-9]+\\.2")));
  }
  // The metric is algo-1's (the only host that prints it): its last value.
  ASSERT_EQ(job.final_metric_data_list_size(), 1);
  EXPECT_FLOAT_EQ(job.final_metric_data_list(0).value(), 1877.8324f);

  // model.tar.gz merges both hosts' model/ folders.
  const std::string archive = dir_ + "/data/s3/bucket/out/two-hosts/output/model.tar.gz";
  ASSERT_TRUE(worker::ExtractTarGz(archive, dir_ + "/model").ok());
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir_ + "/model")) {
    files.insert(entry.path().filename().string());
  }
  EXPECT_EQ(files, (std::set<std::string>{"algo-1.json", "algo-2.json", "model.json"}));
}

TEST_F(MultiInstanceIntegrationTest, OneFailingHostFailsTheJobAndStopsTheOther) {
  // algo-2 fails before it connects; algo-1 waits for it (accept) for ever unless it is stopped,
  // so the job ending shows it was. (Whether algo-1 prints its SIGTERM line depends on whether it
  // had installed its handler by then: the worker's signals are in the worker's unit tests.)
  CreateTrainingJob(*amtd_, JobJson("one-fails", R"({"epochs": "5", "fail_host": "algo-2",
                                                     "fail_at_epoch": "0"})"));
  const auto job = WaitForTrainingJob(amtd_->stub(), "one-fails", Terminal);
  EXPECT_EQ(job.training_job_status(), "Failed");
  EXPECT_THAT(job.failure_reason(), HasSubstr("host algo-2 failed before training"));
  const auto logs = ReadLogs(amtd_->stub(), "one-fails");
  EXPECT_THAT(logs, ::testing::Not(Contains("host=algo-1 epoch=1 allreduce_hosts=2")));
}

TEST_F(MultiInstanceIntegrationTest, AStopReachesEveryHost) {
  CreateTrainingJob(*amtd_, JobJson("stopped", R"({"epochs": "100000", "sleep_ms": "20"})"));
  // Both hosts are in their training loop (their SIGTERM handlers are installed).
  FollowLogsUntil(*amtd_, "stopped", [](const std::vector<std::string>& lines) {
    return HasAllLines(
        lines, {"host=algo-1 epoch=1 allreduce_hosts=2", "host=algo-2 epoch=1 allreduce_hosts=2"});
  });
  grpc::ClientContext ctx;
  v1::StopTrainingJobRequest request;
  request.set_training_job_name("stopped");
  v1::StopTrainingJobResponse response;
  ASSERT_TRUE(amtd_->stub().StopTrainingJob(&ctx, request, &response).ok());
  const auto job = WaitForTrainingJob(amtd_->stub(), "stopped", Terminal);
  EXPECT_EQ(job.training_job_status(), "Stopped");
  const auto logs = ReadLogs(amtd_->stub(), "stopped");
  EXPECT_THAT(logs, Contains("SIGTERM received on algo-1"));
  EXPECT_THAT(logs, Contains("SIGTERM received on algo-2"));
}

TEST_F(MultiInstanceIntegrationTest, PyTorchDdpTrainsOneModelOverTwoHosts) {
  const std::string json = JobJson("ddp", R"({"epochs": "3", "lr": "0.1"})", R"j({
      "AlgorithmSpecification": {"TrainingImage": "amt-local/pytorch-ddp:latest",
        "MetricDefinitions": [{"Name": "loss", "Regex": "val_loss=([0-9.eE+-]+)"}]}})j");
  CreateTrainingJob(*amtd_, json);
  const auto job = WaitForTrainingJob(amtd_->stub(), "ddp", Terminal);
  ASSERT_EQ(job.training_job_status(), "Completed") << job.failure_reason();
  const auto logs = ReadLogs(amtd_->stub(), "ddp");
  EXPECT_THAT(logs, Contains("host=algo-1 rank=0 of 2"));
  EXPECT_THAT(logs, Contains("host=algo-2 rank=1 of 2"));
  // DDP averaged the gradients of both shards: the fit found y = 3x - 1.
  EXPECT_THAT(logs, Contains(::testing::StartsWith("w=2.99")));
  ASSERT_EQ(job.final_metric_data_list_size(), 1);
  EXPECT_LT(job.final_metric_data_list(0).value(), 0.02);
  const std::string archive = dir_ + "/data/s3/bucket/out/ddp/output/model.tar.gz";
  ASSERT_TRUE(worker::ExtractTarGz(archive, dir_ + "/ddp-model").ok());
  EXPECT_TRUE(fs::exists(dir_ + "/ddp-model/model.pt"));
}

TEST(MultiInstanceSpotIntegrationTest, ASpotInterruptionReachesEveryHostAndTheJobRunsAgain) {
  const TempDir temp("amt-multi-spot");
  const std::string dir = temp.str();
  Amtd amtd(dir + "/data", {"--image-map", WriteImageMap(dir), "--slots", "2",
                            "--spot-interrupt-after", "1", "--spot-max-interruptions", "1"});
  const std::string json = JobJson("spot-hosts", R"({"epochs": "40", "sleep_ms": "50"})", R"({
          "EnableManagedSpotTraining": true,
          "CheckpointConfig": {"S3Uri": "s3://bucket/checkpoints/spot-hosts"},
          "StoppingCondition": {"MaxRuntimeInSeconds": 600, "MaxWaitTimeInSeconds": 1200}})");
  CreateTrainingJob(amtd, json);
  const auto job = WaitForTrainingJob(amtd.stub(), "spot-hosts", Terminal);
  ASSERT_EQ(job.training_job_status(), "Completed") << job.failure_reason();
  std::vector<std::string> statuses;
  for (const auto& t : job.secondary_status_transitions()) statuses.push_back(t.status());
  EXPECT_THAT(statuses, Contains("Interrupted"));
  const auto logs = ReadLogs(amtd.stub(), "spot-hosts");
  EXPECT_THAT(logs, Contains("SIGTERM received on algo-1"));
  EXPECT_THAT(logs, Contains("SIGTERM received on algo-2"));
  // The second attempt ran every epoch on both hosts.
  EXPECT_THAT(logs, Contains("host=algo-1 epoch=40 allreduce_hosts=2"));
  EXPECT_THAT(logs, Contains("host=algo-2 epoch=40 allreduce_hosts=2"));
}

}  // namespace
}  // namespace amt::testing
