// amtd --executor slurm against a real Slurm on this machine (scripts/slurm-up.sh, started by
// CTest's slurm fixture; SLURM_CONF points at it): every training-job attempt is a Slurm job
// named after the training job, whose one-shot amt-worker runs it and reports back. A tuning job
// with Auto early stopping, a stop, a spot interruption, an sbatch refusal, a job too big for
// the partition, a kill -9 of amtd while a Slurm job runs, multi-instance jobs (a job step per
// host, on two nodes or on one), and Slurm missing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/json.h"
#include "tests/integration/harness.h"
#include "tests/support/requests.h"

namespace amt::testing {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

// What `squeue -h -t all -o <format>` prints (every job squeue still shows), a line each.
std::vector<std::string> Squeue(const std::string& format) {
  std::vector<std::string> lines;
  FILE* out = ::popen(("squeue -h -t all -o '" + format + "' 2>/dev/null").c_str(), "r");
  if (out == nullptr) return lines;
  char line[512];
  while (std::fgets(line, sizeof(line), out) != nullptr) {
    std::string text(line);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    lines.push_back(text);
  }
  ::pclose(out);
  return lines;
}

// Slurm jobs by name.
std::multiset<std::string> SlurmJobNames() {
  const auto names = Squeue("%j");
  return {names.begin(), names.end()};
}

// The Slurm job named `name`: "<job id>|<node list>", or "" when squeue shows none.
std::string SlurmJobOf(const std::string& name) {
  for (const std::string& line : Squeue("%j|%i|%N")) {
    if (line.starts_with(name + "|")) return line.substr(name.size() + 1);
  }
  return "";
}

// A log file of the cluster the fixture started (slurm-up.sh puts them next to slurm.conf).
std::string SlurmLog(const std::string& file) {
  const char* conf = std::getenv("SLURM_CONF");
  std::ifstream in(std::filesystem::path(conf ? conf : "").parent_path() / "log" / file);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> SlurmFlags(const std::string& dir, std::vector<std::string> more = {}) {
  std::vector<std::string> flags = {
      "--image-map", WriteImageMap(dir), "--executor", "slurm", "--slurm-resource-scale",
      "0.5",         "--time-scale",     "0.01"};
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}

// The training-job example (examples/training-job.json) as `name` with these hyperparameters (a
// JSON object) and `extra` (a JSON merge patch) merged over it.
std::string TrainingJobJson(const std::string& name, const std::string& hyperparameters,
                            const std::string& extra = "{}") {
  nlohmann::json job = ExampleWith("training-job.json", R"j({
      "CheckpointConfig": null, "Environment": null,
      "AlgorithmSpecification": {
        "MetricDefinitions": [{"Name": "val_loss", "Regex": "val_loss=([0-9.eE+-]+)"}]},
      "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"}})j");
  job["TrainingJobName"] = name;
  job["HyperParameters"] = nlohmann::json::parse(hyperparameters);
  job.merge_patch(nlohmann::json::parse(extra));
  return job.dump();
}

TEST(SlurmIntegrationTest, ARandomTuningJobWithAutoEarlyStoppingRunsThroughSlurm) {
  const TempDir temp("amt-slurm-tuning");
  const std::string dir = temp.str();
  Amtd amtd(dir + "/data", SlurmFlags(dir));
  auto request = TuningRequest("random-tuning.json");
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
  const TempDir temp("amt-slurm-stop");
  const std::string dir = temp.str();
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
  const TempDir temp("amt-slurm-spot");
  const std::string dir = temp.str();
  Amtd amtd(dir + "/data",
            SlurmFlags(dir, {"--spot-interrupt-after", "50", "--spot-max-interruptions", "1"}));
  CreateTrainingJob(amtd, TrainingJobJson("slurm-spot", R"({"epochs": "30", "sleep_ms": "40"})",
                                          R"({"EnableManagedSpotTraining": true,
      "StoppingCondition": {"MaxWaitTimeInSeconds": 7200},
      "CheckpointConfig": {"S3Uri": "s3://bucket/checkpoints/slurm-spot"}})"));
  const auto job = WaitForTrainingJob(amtd.stub(), "slurm-spot", Terminal);
  ASSERT_EQ(job.training_job_status(), "Completed") << job.failure_reason();
  std::vector<std::string> statuses;
  for (const auto& t : job.secondary_status_transitions()) statuses.push_back(t.status());
  EXPECT_THAT(statuses, Contains("Interrupted"));
  EXPECT_THAT(ReadLogs(amtd.stub(), "slurm-spot"), Contains(HasSubstr("resuming from checkpoint")));
  EXPECT_EQ(SlurmJobNames().count("slurm-spot"), 2u);  // the attempt was submitted again
}

TEST(SlurmIntegrationTest, AnSbatchRefusalFailsTheJobWithSbatchsMessage) {
  const TempDir temp("amt-slurm-refused");
  const std::string dir = temp.str();
  Amtd amtd(dir + "/data", SlurmFlags(dir, {"--sbatch-arg=--gres=gpu:1"}));
  CreateTrainingJob(amtd, TrainingJobJson("slurm-refused", R"({"epochs": "1"})"));
  const auto job = WaitForTrainingJob(amtd.stub(), "slurm-refused", Terminal);
  EXPECT_EQ(job.training_job_status(), "Failed");
  EXPECT_THAT(job.failure_reason(),
              HasSubstr("Slurm refused the job: sbatch: error: Invalid generic resource (gres) "
                        "specification"));
}

// Three hosts, a node each, on the fixture's two nodes: Slurm queues it for PartitionNodeLimit
// or PartitionConfig (22.05 gives either, by what it checks first), for ever. The user's request,
// not their code: ClientError, saying what it asked and what the partition has (scale 0.5 of
// ml.m5.large: 1 CPU and 4096 MB; VolumeSizeInGB 10 as --tmp).
TEST(SlurmIntegrationTest, AJobAskingMoreNodesThanThePartitionHasFailsAsAClientErrorSayingSo) {
  const TempDir temp("amt-slurm-too-big");
  const std::string dir = temp.str();
  Amtd amtd(dir + "/data", SlurmFlags(dir));
  const std::string json = TrainingJobJson("slurm-three-nodes", R"({"epochs": "1"})",
                                           R"({"ResourceConfig": {"InstanceCount": 3}})");
  CreateTrainingJob(amtd, json);
  const auto job = WaitForTrainingJob(amtd.stub(), "slurm-three-nodes", Terminal);
  EXPECT_EQ(job.training_job_status(), "Failed");
  EXPECT_THAT(
      job.failure_reason(),
      ::testing::MatchesRegex(
          "ClientError: Slurm job [0-9]+ can never start "
          "\\((PartitionNodeLimit|PartitionConfig)\\)\\. The "
          "training job asks for 3 nodes with 1 CPU, 4096 MB of memory and 10240 MB of temporary "
          "disk each; partition debug has 2 nodes with at most 2 CPUs, [0-9]+ MB of memory and "
          "[0-9]+ MB of temporary disk per node\\. Ask for fewer nodes: a smaller InstanceCount, "
          "or amtd --slurm-hosts one-node to run the 3 hosts as tasks on one node\\."));
  // amtd cancelled the Slurm job that would have waited for ever.
  const std::string slurm_id = SlurmJobOf("slurm-three-nodes");
  ASSERT_FALSE(slurm_id.empty());
  EXPECT_THAT(Squeue("%i|%T"), Contains(slurm_id.substr(0, slurm_id.find('|')) + "|CANCELLED"));
}

TEST(SlurmIntegrationTest, AnAmtdKilledWhileASlurmJobRunsTakesItBackOnRestart) {
  const TempDir temp("amt-slurm-kill");
  const std::string dir = temp.str();
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

// examples/distributed_trainer with two hosts (InstanceCount 2).
std::string TwoHostJobJson(const std::string& name, const std::string& hyperparameters,
                           const std::string& image = "amt-local/distributed-trainer:latest") {
  return TrainingJobJson(name, hyperparameters,
                         nlohmann::json{{"AlgorithmSpecification", {{"TrainingImage", image}}},
                                        {"ResourceConfig", {{"InstanceCount", 2}}}}
                             .dump());
}

// The fixture's cluster has two nodes, amt-n1 (127.0.0.1) and amt-n2 (127.0.0.2): by default
// (--slurm-hosts nodes) the job asks for both, and host algo-k is a job step on the k-th.
TEST(SlurmIntegrationTest, EachHostOfAMultiInstanceJobIsAStepOnANodeOfItsOwn) {
  const TempDir temp("amt-slurm-hosts");
  const std::string dir = temp.str();
  Amtd amtd(dir + "/data", SlurmFlags(dir));
  CreateTrainingJob(amtd, TwoHostJobJson("two-nodes", R"({"epochs": "3"})"));
  const auto job = WaitForTrainingJob(amtd.stub(), "two-nodes", Terminal);
  ASSERT_EQ(job.training_job_status(), "Completed") << job.failure_reason();
  const auto logs = ReadLogs(amtd.stub(), "two-nodes");
  for (const char* host : {"algo-1", "algo-2"}) {
    EXPECT_THAT(logs, Contains(std::string("host=") + host + " epoch=3 allreduce_hosts=2"));
    EXPECT_THAT(logs, Contains(std::string("host=") + host + " done w=24.644000"));
  }
  if (geteuid() == 0) {
    // The names resolve to the nodes' addresses (each step's own /etc/hosts and host name).
    EXPECT_THAT(logs, Contains("host=algo-1 rank=0 of 2 hostname=algo-1 address=127.0.0.1"));
    EXPECT_THAT(logs, Contains("host=algo-2 rank=1 of 2 hostname=algo-2 address=127.0.0.2"));
  }
  const std::string slurm_job = SlurmJobOf("two-nodes");
  ASSERT_THAT(slurm_job, HasSubstr("|amt-n[1-2]"));
  const std::string id = slurm_job.substr(0, slurm_job.find('|'));
  EXPECT_THAT(SlurmLog("slurmd-amt-n2.log"), HasSubstr("launch task StepId=" + id + "."));
}

TEST(SlurmIntegrationTest, AStopReachesTheStepOfEveryHost) {
  // The toy trainer on two hosts: they do not talk, so each ends only by its own SIGTERM.
  const TempDir temp("amt-slurm-hosts-stop");
  const std::string dir = temp.str();
  Amtd amtd(dir + "/data", SlurmFlags(dir));
  CreateTrainingJob(amtd,
                    TwoHostJobJson("two-nodes-stop", R"({"epochs": "100000", "sleep_ms": "20"})",
                                   "amt-local/toy-trainer:latest"));
  const auto count = [](const std::vector<std::string>& lines, const std::string& prefix) {
    return std::count_if(lines.begin(), lines.end(),
                         [&](const std::string& line) { return line.starts_with(prefix); });
  };
  FollowLogsUntil(amtd, "two-nodes-stop", [&](const std::vector<std::string>& lines) {
    return count(lines, "epoch=1 ") == 2;  // both hosts are training
  });
  grpc::ClientContext ctx;
  v1::StopTrainingJobRequest request;
  request.set_training_job_name("two-nodes-stop");
  v1::StopTrainingJobResponse response;
  ASSERT_TRUE(amtd.stub().StopTrainingJob(&ctx, request, &response).ok());
  const auto job = WaitForTrainingJob(amtd.stub(), "two-nodes-stop", Terminal);
  EXPECT_EQ(job.training_job_status(), "Stopped");
  // SIGTERM, not Slurm's cancellation: each host's trainer ran its handler.
  EXPECT_EQ(count(ReadLogs(amtd.stub(), "two-nodes-stop"), "SIGTERM received, saving model"), 2);
}

TEST(SlurmIntegrationTest, AFailingHostsStepFailsTheJobAndStopsTheOthers) {
  // algo-2 fails before it connects; algo-1 waits for it for ever unless its step is stopped, so
  // the job ending shows it was.
  const TempDir temp("amt-slurm-hosts-fail");
  const std::string dir = temp.str();
  Amtd amtd(dir + "/data", SlurmFlags(dir));
  CreateTrainingJob(amtd, TwoHostJobJson("two-nodes-fail", R"({"epochs": "5",
      "fail_host": "algo-2", "fail_at_epoch": "0"})"));
  const auto job = WaitForTrainingJob(amtd.stub(), "two-nodes-fail", Terminal);
  EXPECT_EQ(job.training_job_status(), "Failed");
  // algo-2's output/failure, written on its node into the shared job folder.
  EXPECT_THAT(job.failure_reason(), HasSubstr("host algo-2 failed before training"));
}

TEST(SlurmIntegrationTest, OneNodeRunsEveryHostOnOneNode) {
  const TempDir temp("amt-slurm-one-node");
  const std::string dir = temp.str();
  Amtd amtd(dir + "/data", SlurmFlags(dir, {"--slurm-hosts", "one-node"}));
  CreateTrainingJob(amtd, TwoHostJobJson("one-node", R"({"epochs": "3"})"));
  const auto job = WaitForTrainingJob(amtd.stub(), "one-node", Terminal);
  ASSERT_EQ(job.training_job_status(), "Completed") << job.failure_reason();
  const auto logs = ReadLogs(amtd.stub(), "one-node");
  EXPECT_THAT(logs, Contains("host=algo-2 done w=24.644000"));
  if (geteuid() == 0) {
    // On one node the hosts get a loopback network of the job's own, as on the local worker.
    EXPECT_THAT(logs, Contains(::testing::ContainsRegex(
                          "^host=algo-2 rank=1 of 2 hostname=algo-2 address=127\\.1\\.")));
  }
  const std::string slurm_job = SlurmJobOf("one-node");
  EXPECT_THAT(slurm_job, ::testing::MatchesRegex("[0-9]+\\|amt-n[12]"));
}

// Runs `command`; its exit code.
int Shell(const std::string& command) { return std::system(command.c_str()); }

TEST(SlurmIntegrationTest, ANodeFailingUnderAJobIsAnInternalErrorRetriedPerRetryStrategy) {
  const TempDir temp("amt-slurm-node-down");
  const std::string dir = temp.str();
  Amtd amtd(dir + "/data", SlurmFlags(dir));
  // The toy trainer exits 0 on the SIGTERM Slurm gives it: the job must not be Completed by it.
  std::string json = TrainingJobJson("node-fails", R"({"epochs": "300", "sleep_ms": "20"})");
  json.insert(json.rfind('}'), R"(, "RetryStrategy": {"MaximumRetryAttempts": 1})");
  CreateTrainingJob(amtd, json);
  FollowLogsUntil(amtd, "node-fails", [](const std::vector<std::string>& lines) {
    return std::any_of(lines.begin(), lines.end(),
                       [](const std::string& line) { return line.starts_with("epoch=1 "); });
  });
  const std::string slurm_job = SlurmJobOf("node-fails");
  const std::string node = slurm_job.substr(slurm_job.find('|') + 1);
  ASSERT_THAT(node, ::testing::MatchesRegex("amt-n[12]"));
  // The node goes down under the job: Slurm kills it (NODE_FAIL) and amtd retries the attempt
  // as a new Slurm job. (ReturnToService=2 brings the node back once its slurmd registers again;
  // the resume below makes sure of it for the tests after this one.)
  ASSERT_EQ(Shell("scontrol update nodename=" + node + " state=down reason=amt-test"), 0);
  const auto job = WaitForTrainingJob(amtd.stub(), "node-fails", Terminal);
  (void)Shell("scontrol update nodename=" + node + " state=resume 2>/dev/null");
  ASSERT_EQ(job.training_job_status(), "Completed") << job.failure_reason();
  // The first attempt's trainer saved and exited 0 on Slurm's SIGTERM, and that did not end the
  // job: its retry, a Slurm job of its own, trained all 300 epochs.
  const auto logs = ReadLogs(amtd.stub(), "node-fails");
  EXPECT_THAT(logs, Contains("SIGTERM received, saving model"));
  EXPECT_THAT(logs, Contains(::testing::StartsWith("training complete after 300 epochs")));
  EXPECT_EQ(SlurmJobNames().count("node-fails"), 2u);
}

TEST(SlurmIntegrationTest, PyTorchDdpWithTwoInstancesCompletesThroughSlurm) {
  const TempDir temp("amt-slurm-ddp");
  const std::string dir = temp.str();
  Amtd amtd(dir + "/data", SlurmFlags(dir));
  CreateTrainingJob(amtd, TwoHostJobJson("slurm-ddp", R"({"epochs": "3", "lr": "0.1"})",
                                         "amt-local/pytorch-ddp:latest"));
  const auto job = WaitForTrainingJob(amtd.stub(), "slurm-ddp", Terminal);
  ASSERT_EQ(job.training_job_status(), "Completed") << job.failure_reason();
  const auto logs = ReadLogs(amtd.stub(), "slurm-ddp");
  EXPECT_THAT(logs, Contains("host=algo-2 rank=1 of 2"));
  EXPECT_THAT(logs, Contains(::testing::StartsWith("w=2.99")));
  EXPECT_EQ(SlurmJobNames().count("slurm-ddp"), 1u);  // both hosts in one Slurm job
}

TEST(SlurmIntegrationTest, WithoutSlurmAmtdExitsWithAClearMessage) {
  const TempDir temp("amt-slurm-missing");
  const std::string dir = temp.str();
  const auto exit = RunAmtdToExit(
      dir + "/data", {"--executor", "slurm", "--slurm-bin-dir", dir + "/no-slurm-here"});
  EXPECT_NE(exit.exit_code, 0);
  EXPECT_THAT(exit.output,
              HasSubstr("--executor slurm: cannot run " + dir + "/no-slurm-here/squeue"));
}

}  // namespace
}  // namespace amt::testing
