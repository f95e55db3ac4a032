// kill -9 of amtd in the middle of a tuning job, again and again: the local worker outlives each
// amtd, keeps its jobs running, replays what amtd had not acknowledged to the next amtd of the
// data dir, and the tuning job ends as if nothing had happened.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <set>

#include "common/json.h"
#include "tests/integration/harness.h"
#include "tests/support/requests.h"

namespace amt::testing {
namespace {

constexpr int kJobs = 50;
constexpr int kKills = 20;
constexpr int kEpochs = 4;

// The Random example (examples/random-tuning.json) with kJobs jobs of kEpochs slow epochs, 4 at a
// time, over learning_rate, minimising validation:loss.
std::string TortureJson() {
  nlohmann::json job = ExampleWith("random-tuning.json", R"j({
    "HyperParameterTuningJobName": "torture",
    "HyperParameterTuningJobConfig": {
      "HyperParameterTuningJobObjective": {"MetricName": "validation:loss"},
      "ResourceLimits": {"MaxParallelTrainingJobs": 4},
      "ParameterRanges": {"IntegerParameterRanges": null, "CategoricalParameterRanges": null},
      "TrainingJobEarlyStoppingType": null, "RandomSeed": 11},
    "TrainingJobDefinition": {
      "StaticHyperParameters": {"sleep_ms": "250"},
      "AlgorithmSpecification": {"MetricDefinitions": [
        {"Name": "validation:loss", "Regex": "val_loss=([0-9.eE+-]+)"}]},
      "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
      "StoppingCondition": {"MaxRuntimeInSeconds": 600}}})j");
  job["HyperParameterTuningJobConfig"]["ResourceLimits"]["MaxNumberOfTrainingJobs"] = kJobs;
  job["TrainingJobDefinition"]["StaticHyperParameters"]["epochs"] = std::to_string(kEpochs);
  return job.dump();
}

enum class WorkerKind { kLocal, kRemote };

struct KillCase {
  WorkerKind worker;
  unsigned seed;
};

std::string CaseName(const ::testing::TestParamInfo<KillCase>& info) {
  return std::string(info.param.worker == WorkerKind::kLocal ? "LocalWorker" : "RemoteWorker") +
         "Seed" + std::to_string(info.param.seed);
}

class KillIntegrationTest : public ::testing::TestWithParam<KillCase> {
 protected:
  void SetUp() override {
    dir_ = temp_.str();
    image_map_ = WriteImageMap(dir_);
  }
  bool local() const { return GetParam().worker == WorkerKind::kLocal; }
  std::unique_ptr<Amtd> StartAmtd() {
    std::vector<std::string> flags = {"--image-map", image_map_,     "--slots",
                                      "4",           "--stop-grace", "5"};
    if (!local()) flags.push_back("--no-local-worker");
    return std::make_unique<Amtd>(dir_ + "/data", flags);
  }
  TempDir temp_{"amt-kill"};  // removed after amtd_ ends
  std::string dir_;
  std::string image_map_;
};

TEST_P(KillIntegrationTest, TwentyKillsOfAmtdLoseNoJobAndNoLogLine) {
  std::mt19937 rng(GetParam().seed);
  auto amtd = StartAmtd();
  // The remote worker: started by hand, it reconnects to whichever amtd listens on the data
  // dir's socket (a worker on another machine would use a fixed --port the same way).
  std::unique_ptr<AmtWorker> remote;
  if (!local()) {
    ASSERT_FALSE(amtd->worker_socket().empty());
    remote = std::make_unique<AmtWorker>(amtd->worker_socket(), dir_ + "/remote/jobs", "remote", 4);
  }
  {
    grpc::ClientContext ctx;
    v1::CreateHyperParameterTuningJobResponse response;
    ASSERT_TRUE(
        amtd->stub()
            .CreateHyperParameterTuningJob(&ctx, TuningRequestFromJson(TortureJson()), &response)
            .ok());
  }
  const std::string worker_pid = ReadFile(dir_ + "/data/worker.pid");
  ASSERT_EQ(worker_pid.empty(), !local());
  int kills = 0;
  int completed = 0;
  bool ended = false;
  while (kills < kKills && !ended) {
    // Where to kill: as soon as a job runs (often mid-replay of what the last amtd missed), or,
    // one time in three, after one more job completes. A job takes about 1 s (4 epochs of
    // 250 ms) and runs on while amtd restarts, so 20 kills fit in the 50 jobs even when amtd
    // restarts slowly (under ASan).
    const int more = rng() % 3 == 0 ? 1 : 0;
    const auto snapshot = WaitForTuningSnapshot(amtd->stub(), "torture", [&](const auto& s) {
      const auto& t = s.tuning_job();
      if (t.hyper_parameter_tuning_job_status() != "InProgress") return true;
      const auto& c = t.training_job_status_counters();
      return more == 0 ? c.in_progress() > 0 : c.completed() >= completed + more;
    });
    ended = snapshot.tuning_job().hyper_parameter_tuning_job_status() != "InProgress";
    completed = snapshot.tuning_job().training_job_status_counters().completed();
    if (ended) break;
    amtd->Kill(SIGKILL);
    ++kills;
    amtd = StartAmtd();
  }
  std::printf("kill -9 of amtd: %d times\n", kills);
  EXPECT_EQ(kills, kKills) << "the tuning job ended before every kill was made";
  // The same worker process throughout: each amtd adopted the one the last one left.
  EXPECT_EQ(ReadFile(dir_ + "/data/worker.pid"), worker_pid);

  const auto last = WaitForTuningJob(amtd->stub(), "torture");
  const auto& t = last.tuning_job();
  EXPECT_EQ(t.hyper_parameter_tuning_job_status(), "Completed") << t.failure_reason();
  const auto& c = t.training_job_status_counters();
  EXPECT_EQ(c.completed(), kJobs);
  EXPECT_EQ(c.in_progress(), 0);
  EXPECT_EQ(c.retryable_error(), 0);
  EXPECT_EQ(c.non_retryable_error(), 0);
  EXPECT_EQ(c.stopped(), 0);
  EXPECT_EQ(t.objective_status_counters().succeeded(), kJobs);
  ASSERT_EQ(last.training_jobs_size(), kJobs);
  // Every line each trainer printed, once, in order: a header, two lines per epoch, a summary.
  const std::regex epoch_line("epoch=([0-9]+) .*");
  for (const auto& job : last.training_jobs()) {
    EXPECT_EQ(job.training_job_status(), "Completed") << job.failure_reason();
    const auto lines = ReadLogs(amtd->stub(), job.training_job_name());
    EXPECT_EQ(lines.size(), static_cast<size_t>(2 * kEpochs + 2)) << job.training_job_name();
    std::vector<int> epochs;
    for (const auto& line : lines) {
      std::smatch m;
      if (std::regex_match(line, m, epoch_line)) epochs.push_back(std::stoi(m[1]));
    }
    EXPECT_THAT(epochs, ::testing::ElementsAre(1, 2, 3, 4)) << job.training_job_name();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Seeds, KillIntegrationTest,
    ::testing::Values(KillCase{WorkerKind::kLocal, 1}, KillCase{WorkerKind::kLocal, 2},
                      KillCase{WorkerKind::kRemote, 1}, KillCase{WorkerKind::kRemote, 2},
                      KillCase{WorkerKind::kRemote, 3}, KillCase{WorkerKind::kRemote, 4},
                      KillCase{WorkerKind::kRemote, 5}),
    CaseName);

// Runs `script` (a /bin/sh script, PID_FILE in it replaced by a file's path) as a training job
// on a worker of its own, waits until its metric ready=1 shows (it prints it after it wrote the
// pid of the process to check into PID_FILE), kills the worker with SIGKILL, and says whether
// that process then ended (within 30 s).
bool EndsWithItsKilledWorker(const std::string& name, std::string script) {
  const TempDir temp("amt-worker-death");
  const std::string dir = temp.str();
  Amtd amtd(dir + "/data", {"--no-local-worker"});
  EXPECT_FALSE(amtd.worker_socket().empty());
  AmtWorker worker(amtd.worker_socket(), dir + "/remote/jobs", "doomed", 1);
  const std::string pid_file = dir + "/checked.pid";
  script.replace(script.find("PID_FILE"), 8, pid_file);
  v1::CreateTrainingJobRequest request = TrainingRequest("training-job.json", R"j({
      "HyperParameters": null, "CheckpointConfig": null, "Environment": null,
      "AlgorithmSpecification": {"TrainingImage": "shell",
        "MetricDefinitions": [{"Name": "ready", "Regex": "ready=([0-9]+)"}]},
      "ResourceConfig": {"VolumeSizeInGB": 1}})j");
  request.set_training_job_name(name);
  for (const std::string& arg : {std::string("/bin/sh"), std::string("-c"), script}) {
    request.mutable_algorithm_specification()->add_container_entrypoint(arg);
  }
  {
    grpc::ClientContext ctx;
    v1::CreateTrainingJobResponse response;
    EXPECT_TRUE(amtd.stub().CreateTrainingJob(&ctx, request, &response).ok());
  }
  // Its metric line is printed after the pid file is written (a metric, unlike a log line,
  // changes what the watch stream shows).
  const auto ready = WaitForTrainingJob(
      amtd.stub(), name, [](const auto& job) { return job.final_metric_data_list_size() > 0; });
  EXPECT_EQ(ready.final_metric_data_list_size(), 1) << ready.training_job_status();
  const pid_t checked = static_cast<pid_t>(std::stol(ReadFile(pid_file)));
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, checked, 0));
  EXPECT_GE(pidfd, 0) << "the process to check is not running";
  if (pidfd < 0) return false;
  worker.Kill(SIGKILL);
  pollfd exited{pidfd, POLLIN, 0};
  const bool ended = ::poll(&exited, 1, /*timeout_ms=*/30'000) == 1;
  if (!ended) ::kill(checked, SIGKILL);
  ::close(pidfd);
  return ended;
}

// A worker killed with SIGKILL takes its trainers with it: a job amtd later runs again (after
// the worker-lost timeout, or by RetryStrategy) never runs twice at once.
TEST(WorkerDeathTest, KillingAWorkerKillsItsTrainer) {
  EXPECT_TRUE(
      EndsWithItsKilledWorker("orphan-check", "echo $$ > PID_FILE; echo ready=1; exec sleep 1000"))
      << "the trainer outlived its worker";
}

// ... and the processes its trainer started (amt-job-shim holds them: PR_SET_PDEATHSIG alone
// reached the trainer only, and its background child lived on).
TEST(WorkerDeathTest, KillingAWorkerKillsWhatItsTrainerStarted) {
  EXPECT_TRUE(EndsWithItsKilledWorker(
      "grandchild-check", "sleep 1000 & echo $! > PID_FILE; echo ready=1; exec sleep 1000"))
      << "the trainer's background child outlived its worker";
}

}  // namespace
}  // namespace amt::testing
