// SlurmExecutor against a scripted Slurm (FakeSlurm answers sbatch, squeue and scancel): what it
// submits, what it reports onto the loop, and when. The real Slurm runs in
// tests/integration/slurm_integration_test.cc.
#include "orchestrator/executor/slurm_executor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "tests/support/status_matchers.h"

namespace amt::executor {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Answers Slurm's commands from what the test set; records every call. Thread-safe.
class FakeSlurm final : public CommandRunner {
 public:
  absl::StatusOr<CommandResult> Run(const std::vector<std::string>& argv) override {
    MutexLock lock(&mu_);
    calls_.push_back(argv);
    changed_.SignalAll();
    if (!installed_) return absl::NotFoundError("cannot run " + argv[0] + ": No such file");
    if (argv[0] == "sbatch") {
      if (!sbatch_error_.empty()) return CommandResult{1, "", sbatch_error_};
      return CommandResult{0, std::to_string(next_id_++) + "\n", ""};
    }
    if (argv[0] == "squeue") return CommandResult{squeue_exit_, squeue_out_, squeue_err_};
    if (argv[0] == "scontrol" && argv.back() == "partition")
      return CommandResult{0, partitions_, ""};
    if (argv[0] == "scontrol" && argv.back() == "node") return CommandResult{0, nodes_, ""};
    return CommandResult{0, "", ""};  // scancel
  }

  void SetInstalled(bool installed) {
    MutexLock lock(&mu_);
    installed_ = installed;
  }
  void SetSqueue(int exit_code, std::string out, std::string err = "") {
    MutexLock lock(&mu_);
    squeue_exit_ = exit_code;
    squeue_out_ = std::move(out);
    squeue_err_ = std::move(err);
  }
  // What `scontrol -o show partition` and `scontrol -o show node` print.
  void SetScontrol(std::string partitions, std::string nodes) {
    MutexLock lock(&mu_);
    partitions_ = std::move(partitions);
    nodes_ = std::move(nodes);
  }
  void SetSbatchError(std::string error) {
    MutexLock lock(&mu_);
    sbatch_error_ = std::move(error);
  }
  // Waits until a call with argv[0] == `command` (and argv containing `arg`, when given) has
  // been made; the call, or an empty vector after 10 s.
  std::vector<std::string> WaitForCall(const std::string& command, const std::string& arg = "") {
    MutexLock lock(&mu_);
    std::vector<std::string> found;
    changed_.AwaitFor(&mu_, std::chrono::seconds(10), [&] {
      mu_.AssertHeld();
      for (const auto& call : calls_) {
        if (call[0] != command) continue;
        if (!arg.empty() && std::find(call.begin(), call.end(), arg) == call.end()) continue;
        found = call;
        return true;
      }
      return false;
    });
    return found;
  }
  // Waits until `command` has run at least `count` times (at most 10 s); how many times it has.
  int WaitForCalls(const std::string& command, int count) {
    MutexLock lock(&mu_);
    changed_.AwaitFor(&mu_, std::chrono::seconds(10), [&] {
      mu_.AssertHeld();
      return CountLocked(command) >= count;
    });
    return CountLocked(command);
  }
  int Count(const std::string& command) {
    MutexLock lock(&mu_);
    return CountLocked(command);
  }

 private:
  Mutex mu_;
  CondVar changed_;
  std::vector<std::vector<std::string>> calls_ ABSL_GUARDED_BY(mu_);
  bool installed_ ABSL_GUARDED_BY(mu_) = true;
  int squeue_exit_ ABSL_GUARDED_BY(mu_) = 0;
  std::string squeue_out_ ABSL_GUARDED_BY(mu_);
  std::string squeue_err_ ABSL_GUARDED_BY(mu_);
  std::string sbatch_error_ ABSL_GUARDED_BY(mu_);
  std::string partitions_ ABSL_GUARDED_BY(mu_);
  std::string nodes_ ABSL_GUARDED_BY(mu_);
  int next_id_ ABSL_GUARDED_BY(mu_) = 100;

  int CountLocked(const std::string& command) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return static_cast<int>(std::count_if(calls_.begin(), calls_.end(),
                                          [&](const auto& call) { return call[0] == command; }));
  }
};

struct Ended {
  std::string worker_id;
  std::string job;
  int attempt;
  core::ProvisionedEnd end;
};

// The loop: tasks the executor posts, run by the test thread as they come.
class FakeLoop {
 public:
  void Post(std::function<void()> task) {
    MutexLock lock(&mu_);
    tasks_.push_back(std::move(task));
    changed_.SignalAll();
  }
  // Runs posted tasks until `ended` has `count` entries (at most 10 s).
  void RunUntil(const std::vector<Ended>& ended, size_t count) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (ended.size() < count && std::chrono::steady_clock::now() < deadline) {
      std::vector<std::function<void()>> tasks;
      {
        MutexLock lock(&mu_);
        changed_.AwaitFor(&mu_, std::chrono::milliseconds(100), [this] {
          mu_.AssertHeld();
          return !tasks_.empty();
        });
        tasks.swap(tasks_);
      }
      for (auto& task : tasks) task();
    }
  }

 private:
  Mutex mu_;
  CondVar changed_;
  std::vector<std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
};

class SlurmExecutorTest : public ::testing::Test {
 protected:
  SlurmOptions Options() {
    SlurmOptions o;
    o.worker_binary = "/bin/amt-worker";
    o.orchestrator_address = "127.0.0.1:7070";
    o.work_dir = "/tmp/jobs";
    o.owner = "me";
    o.max_jobs = 2;
    o.poll_seconds = 0.01;
    return o;
  }
  SlurmExecutorHooks Hooks() {
    SlurmExecutorHooks hooks;
    hooks.post = [this](std::function<void()> task) { loop_.Post(std::move(task)); };
    hooks.ended = [this](const std::string& worker_id, const core::WorkerLink*,
                         const std::string& job, int attempt, const core::ProvisionedEnd& end) {
      ended_.push_back({worker_id, job, attempt, end});
    };
    return hooks;
  }
  std::unique_ptr<SlurmExecutor> Make() {
    auto made = SlurmExecutor::Start(Options(), slurm_, Hooks());
    EXPECT_THAT(made, IsOk());
    return made.ok() ? std::move(*made) : nullptr;
  }
  static amt::v1::OrchestratorMessage StartMessage(const std::string& job,
                                                   const std::string& type = "ml.m5.large",
                                                   int instances = 1) {
    amt::v1::OrchestratorMessage m;
    m.mutable_start()->set_training_job_name(job);
    m.mutable_start()->set_attempt(1);
    m.mutable_start()->set_instance_type(type);
    m.mutable_start()->set_instance_count(instances);
    return m;
  }
  static amt::v1::OrchestratorMessage StopMessage(const std::string& job) {
    amt::v1::OrchestratorMessage m;
    m.mutable_stop()->set_training_job_name(job);
    m.mutable_stop()->set_attempt(1);
    return m;
  }

  FakeSlurm slurm_;
  FakeLoop loop_;
  std::vector<Ended> ended_;
};

TEST_F(SlurmExecutorTest, StartSaysWhenSlurmIsNotInstalledOrDoesNotAnswer) {
  slurm_.SetInstalled(false);
  EXPECT_THAT(SlurmExecutor::Start(Options(), slurm_, Hooks()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("--executor slurm: cannot run squeue")));
  slurm_.SetInstalled(true);
  slurm_.SetSqueue(1, "", "squeue: error: Unable to contact slurm controller (connect failure)");
  EXPECT_THAT(SlurmExecutor::Start(Options(), slurm_, Hooks()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("Slurm does not answer: squeue says: squeue: error: Unable to "
                                 "contact slurm controller")));
}

TEST_F(SlurmExecutorTest, AStartJobBecomesOneSbatchNamedAfterTheTrainingJob) {
  auto executor = Make();
  const auto provided = executor->Provide(1);
  provided.link->Send(StartMessage("job-1"));
  const auto call = slurm_.WaitForCall("sbatch");
  ASSERT_FALSE(call.empty());
  EXPECT_THAT(call, Contains("--job-name=job-1"));
  EXPECT_THAT(call, Contains("--comment=amt-local owner=me worker=" + provided.worker_id +
                             " job=job-1 attempt=1 instances=1"));
  // A second StartJob to the same worker is not a second Slurm job.
  provided.link->Send(StartMessage("job-2"));
  EXPECT_EQ(executor->Outstanding(), 1);
}

TEST_F(SlurmExecutorTest, AnSbatchRefusalEndsTheWorkerWithSbatchsMessage) {
  slurm_.SetSbatchError("sbatch: error: Invalid generic resource (gres) specification\n");
  auto executor = Make();
  const auto provided = executor->Provide(1);
  provided.link->Send(StartMessage("job-1"));
  loop_.RunUntil(ended_, 1);
  ASSERT_EQ(ended_.size(), 1u);
  EXPECT_EQ(ended_[0].worker_id, provided.worker_id);
  EXPECT_EQ(ended_[0].job, "job-1");
  EXPECT_EQ(ended_[0].end.kind, core::ProvisionedEnd::Kind::kRefused);
  EXPECT_EQ(ended_[0].end.message,
            "Slurm refused the job: sbatch: error: Invalid generic resource (gres) "
            "specification");
  EXPECT_EQ(executor->Outstanding(), 0);
}

TEST_F(SlurmExecutorTest, ReportsHowASlurmJobEndedAndFreesItsRoom) {
  auto executor = Make();
  const auto a = executor->Provide(1);
  const auto b = executor->Provide(1);
  EXPECT_FALSE(executor->HasRoom());  // --max-slurm-jobs 2
  a.link->Send(StartMessage("job-a"));
  b.link->Send(StartMessage("job-b"));
  slurm_.WaitForCall("sbatch", "--job-name=job-b");
  slurm_.SetSqueue(0, "100|NODE_FAIL|None|amt-local owner=me worker=" + a.worker_id +
                          " job=job-a attempt=1 instances=1\n"
                          "101|OUT_OF_MEMORY|OutOfMemory|x\n");
  loop_.RunUntil(ended_, 2);
  ASSERT_EQ(ended_.size(), 2u);
  std::map<std::string, core::ProvisionedEnd> by_job;
  for (const auto& e : ended_) by_job[e.job] = e.end;
  EXPECT_EQ(by_job["job-a"].kind, core::ProvisionedEnd::Kind::kRetryable);
  EXPECT_EQ(by_job["job-a"].message, "Slurm job 100 ended NODE_FAIL");
  EXPECT_EQ(by_job["job-b"].kind, core::ProvisionedEnd::Kind::kOutOfMemory);
  EXPECT_TRUE(executor->HasRoom());
}

TEST_F(SlurmExecutorTest, AStopCancelsTheSlurmJobAndAJobThatCanNeverStartFails) {
  auto executor = Make();
  const auto a = executor->Provide(1);
  const auto b = executor->Provide(1);
  a.link->Send(StartMessage("job-a"));
  b.link->Send(StartMessage("job-b"));
  slurm_.WaitForCall("sbatch", "--job-name=job-b");
  slurm_.SetSqueue(0, "100|PENDING|Priority|c\n101|PENDING|PartitionConfig|c\n");
  a.link->Send(StopMessage("job-a"));
  EXPECT_FALSE(slurm_.WaitForCall("scancel", "100").empty());
  EXPECT_FALSE(slurm_.WaitForCall("scancel", "101").empty());
  loop_.RunUntil(ended_, 1);
  ASSERT_EQ(ended_.size(), 1u);
  EXPECT_EQ(ended_[0].job, "job-b");
  EXPECT_EQ(ended_[0].end.kind, core::ProvisionedEnd::Kind::kRefused);  // ClientError
  EXPECT_THAT(ended_[0].end.message, HasSubstr("can never start (PartitionConfig)"));
}

// Two nodes of 2 CPUs and 23081 MB, as scontrol -o shows them (trimmed).
constexpr char kPartitions[] =
    "PartitionName=debug AllowGroups=ALL Default=YES MaxNodes=UNLIMITED "
    "MaxCPUsPerNode=UNLIMITED Nodes=amt-n[1-2] State=UP TotalCPUs=4 TotalNodes=2 "
    "MaxMemPerNode=UNLIMITED\n";
constexpr char kNodes[] =
    "NodeName=amt-n1 CPUAlloc=0 CPUEfctv=2 CPUTot=2 Gres=(null) NodeAddr=127.0.0.1 OS=Linux "
    "6.1 #1 SMP RealMemory=23081 State=IDLE TmpDisk=76333 Partitions=debug\n"
    "NodeName=amt-n2 CPUAlloc=0 CPUEfctv=2 CPUTot=2 Gres=(null) NodeAddr=127.0.0.2 OS=Linux "
    "6.1 #1 SMP RealMemory=23081 State=IDLE TmpDisk=76333 Partitions=debug\n";

TEST_F(SlurmExecutorTest, AJobAskingMoreNodesThanThePartitionHasIsRefusedSayingSo) {
  slurm_.SetScontrol(kPartitions, kNodes);
  slurm_.SetSqueue(0, "100|PENDING|PartitionNodeLimit|c\n");
  auto executor = Make();
  const auto provided = executor->Provide(3);
  provided.link->Send(StartMessage("job-3", "ml.m5.large", 3));
  EXPECT_FALSE(slurm_.WaitForCall("scancel", "100").empty());
  loop_.RunUntil(ended_, 1);
  ASSERT_EQ(ended_.size(), 1u);
  EXPECT_EQ(ended_[0].job, "job-3");
  EXPECT_EQ(ended_[0].end.kind, core::ProvisionedEnd::Kind::kRefused);  // ClientError
  EXPECT_EQ(ended_[0].end.message,
            "Slurm job 100 can never start (PartitionNodeLimit). The training job asks for 3 "
            "nodes with 2 CPUs and 8192 MB of memory each; partition debug has 2 nodes with at "
            "most 2 CPUs and 23081 MB of memory per node. Ask for fewer nodes: a smaller "
            "InstanceCount, or amtd --slurm-hosts one-node to run the 3 hosts as tasks on one "
            "node.");
  EXPECT_THAT(slurm_.WaitForCall("scontrol", "partition"),
              ElementsAre("scontrol", "-o", "show", "partition"));
  EXPECT_EQ(executor->Outstanding(), 0);
}

TEST_F(SlurmExecutorTest, AnSbatchRefusalForSizeSaysWhatTheJobAskedAndWhatThereIs) {
  slurm_.SetScontrol(kPartitions, kNodes);
  slurm_.SetSbatchError(
      "sbatch: error: Batch job submission failed: Requested node configuration is not "
      "available\n");
  auto executor = Make();
  const auto provided = executor->Provide(1);
  provided.link->Send(StartMessage("job-big", "ml.m5.2xlarge"));
  loop_.RunUntil(ended_, 1);
  ASSERT_EQ(ended_.size(), 1u);
  EXPECT_EQ(ended_[0].end.kind, core::ProvisionedEnd::Kind::kRefused);
  EXPECT_EQ(ended_[0].end.message,
            "Slurm refused the job: sbatch: error: Batch job submission failed: Requested node "
            "configuration is not available. The training job asks for 1 node with 8 CPUs and "
            "32768 MB of memory; partition debug has 2 nodes with at most 2 CPUs and 23081 MB "
            "of memory per node. Ask for less per node: a smaller InstanceType, or amtd "
            "--slurm-resource-scale below 1 (it multiplies the instance type's vCPUs and "
            "memory).");
}

TEST_F(SlurmExecutorTest, AGpuTypeOnAClusterWithoutGpusSaysSo) {
  slurm_.SetScontrol(kPartitions, kNodes);
  slurm_.SetSbatchError("sbatch: error: Invalid generic resource (gres) specification\n");
  auto executor = Make();
  const auto provided = executor->Provide(1);
  provided.link->Send(StartMessage("job-gpu", "ml.g5.xlarge"));
  loop_.RunUntil(ended_, 1);
  ASSERT_EQ(ended_.size(), 1u);
  EXPECT_EQ(ended_[0].end.kind, core::ProvisionedEnd::Kind::kRefused);
  EXPECT_EQ(ended_[0].end.message,
            "Slurm refused the job: sbatch: error: Invalid generic resource (gres) "
            "specification. The training job asks for 1 node with 4 CPUs, 16384 MB of memory and "
            "1 GPU; partition debug has 2 nodes with at most 2 CPUs, 23081 MB of memory and 0 "
            "GPUs per node. Ask for less per node: a smaller InstanceType, or amtd "
            "--slurm-resource-scale below 1 (it multiplies the instance type's vCPUs and "
            "memory). Ask for fewer GPUs: an InstanceType with fewer, or a partition with GPU "
            "nodes (--slurm-partition).");
}

TEST_F(SlurmExecutorTest, AJobWaitingForResourcesNoNodeHasIsRefused) {
  slurm_.SetScontrol(kPartitions, kNodes);
  slurm_.SetSqueue(0, "100|PENDING|Resources|c\n");
  auto executor = Make();
  const auto provided = executor->Provide(1);
  provided.link->Send(StartMessage("job-big", "ml.m5.2xlarge"));
  EXPECT_FALSE(slurm_.WaitForCall("scancel", "100").empty());
  loop_.RunUntil(ended_, 1);
  ASSERT_EQ(ended_.size(), 1u);
  EXPECT_EQ(ended_[0].end.kind, core::ProvisionedEnd::Kind::kRefused);
  EXPECT_THAT(ended_[0].end.message,
              ::testing::StartsWith("Slurm job 100 can never start (Resources). The training job "
                                    "asks for 1 node with 8 CPUs and 32768 MB of memory; "));
}

TEST_F(SlurmExecutorTest, AJobWaitingForResourcesThatFitIsCheckedOnceAndLeftWaiting) {
  slurm_.SetScontrol(kPartitions, kNodes);
  slurm_.SetSqueue(0, "100|PENDING|Resources|c\n");
  auto executor = Make();
  const auto provided = executor->Provide(1);
  provided.link->Send(StartMessage("job-fits"));
  ASSERT_FALSE(slurm_.WaitForCall("scontrol", "node").empty());
  // Three more polls see it wait still: no more scontrol, no end.
  const int polls = slurm_.Count("squeue");
  EXPECT_GE(slurm_.WaitForCalls("squeue", polls + 3), polls + 3);
  EXPECT_EQ(slurm_.Count("scontrol"), 2);
  EXPECT_EQ(slurm_.Count("scancel"), 0);
  slurm_.SetSqueue(0, "100|COMPLETED|None|c\n");
  loop_.RunUntil(ended_, 1);
  ASSERT_EQ(ended_.size(), 1u);
  EXPECT_EQ(ended_[0].end.kind, core::ProvisionedEnd::Kind::kFailed);  // its own end, later
}

TEST_F(SlurmExecutorTest, RecoverTakesBackItsOwnQueuedJobsOnly) {
  slurm_.SetSqueue(0,
                   "7|RUNNING|None|amt-local owner=me worker=w-7 job=j7 attempt=2 instances=2\n"
                   "8|PENDING|Resources|amt-local owner=other worker=w-8 job=j8 attempt=1\n"
                   "9|COMPLETED|None|amt-local owner=me worker=w-9 job=j9 attempt=1\n"
                   "10|RUNNING|None|someone else's job\n");
  auto executor = Make();
  const auto recovered = executor->Recover();
  ASSERT_THAT(recovered, IsOk());
  ASSERT_EQ(recovered->size(), 1u);
  const auto& hello = (*recovered)[0].hello;
  EXPECT_EQ(hello.worker_id(), "w-7");
  EXPECT_EQ(hello.slots(), 2);
  EXPECT_TRUE(hello.one_shot());
  ASSERT_EQ(hello.running_size(), 1);
  EXPECT_EQ(hello.running(0).training_job_name(), "j7");
  EXPECT_EQ(hello.running(0).attempt(), 2);
  // The one that ended while amtd was away is reported by the first poll.
  loop_.RunUntil(ended_, 1);
  ASSERT_EQ(ended_.size(), 1u);
  EXPECT_EQ(ended_[0].worker_id, "w-9");
  EXPECT_EQ(ended_[0].end.kind, core::ProvisionedEnd::Kind::kFailed);
  EXPECT_EQ(executor->Outstanding(), 1);
}

TEST_F(SlurmExecutorTest, ADiscardedWorkerFreesItsRoom) {
  auto executor = Make();
  const auto a = executor->Provide(1);
  executor->Provide(1);
  EXPECT_FALSE(executor->HasRoom());
  executor->Discard(a.worker_id);
  EXPECT_TRUE(executor->HasRoom());
}

}  // namespace
}  // namespace amt::executor
