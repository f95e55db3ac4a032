// The orchestrator with a Provisioner (amtd --executor slurm): jobs no connected worker has room
// for go to single-use workers it makes, and how such a worker's end without a report ends the
// attempt. The Slurm side is in tests/unit/executor/ and tests/integration/.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/core/orchestrator_fixture.h"

namespace amt::core {
namespace {

using ::testing::HasSubstr;

class FakeProvisioner final : public Provisioner {
 public:
  bool HasRoom() const override { return static_cast<int>(live.size()) < room; }
  Provided Provide(int instances) override {
    const std::string id = "p" + std::to_string(++made);
    auto link = std::make_shared<FakeWorkerLink>();
    link->provisional = true;
    links[id] = link;
    slots[id] = instances;
    live.insert(id);
    return {id, link};
  }
  void Discard(const std::string& worker_id) override {
    live.erase(worker_id);
    discarded.push_back(worker_id);
  }

  int room = 2;
  int made = 0;
  std::set<std::string> live;
  std::map<std::string, std::shared_ptr<FakeWorkerLink>> links;
  std::map<std::string, int> slots;
  std::vector<std::string> discarded;
};

class ProvisionerTest : public OrchestratorTest {
 protected:
  void SetUp() override {
    provisioner_ = &provisioner;
    Rebuild();
  }
  // The one StartJob sent to provided worker `id`.
  v1::StartJob StartOf(const std::string& id) {
    const auto starts = provisioner.links.at(id)->Starts();
    EXPECT_EQ(starts.size(), 1u) << id;
    return starts.empty() ? v1::StartJob() : starts[0];
  }
  void Ended(const std::string& id, const v1::StartJob& start, ProvisionedEnd::Kind kind,
             const std::string& message) {
    provisioner.live.erase(id);
    orch_->OnProvisionedWorkerEnded(id, provisioner.links.at(id).get(), start.training_job_name(),
                                    start.attempt(), {kind, message});
  }
  // The one-shot worker of provided worker `id` connects, running its job.
  std::shared_ptr<FakeWorkerLink> OneShotConnects(const std::string& id,
                                                  const v1::StartJob& start) {
    auto link = std::make_shared<FakeWorkerLink>();
    v1::WorkerHello hello;
    hello.set_worker_id(id);
    hello.set_slots(1);
    hello.set_one_shot(true);
    auto* ref = hello.add_running();
    ref->set_training_job_name(start.training_job_name());
    ref->set_attempt(start.attempt());
    EXPECT_TRUE(orch_->OnWorkerConnected(hello, link).ok());
    return link;
  }
  void ReportFrom(const std::string& id, const WorkerLink* link, v1::WorkerMessage m, int seq) {
    m.set_seq(seq);
    orch_->OnWorkerReport(id, link, m);
  }

  FakeProvisioner provisioner;
};

TEST_F(ProvisionerTest, EachTrialGetsAWorkerOfItsOwnUpToTheProvisionersRoom) {
  ASSERT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());  // 4 jobs, 2 at a time
  EXPECT_EQ(provisioner.made, 2);
  const v1::StartJob first = StartOf("p1");
  const v1::StartJob second = StartOf("p2");
  EXPECT_NE(first.training_job_name(), second.training_job_name());
  EXPECT_EQ(provisioner.slots["p1"], 1);  // InstanceCount 1
  // What the scheduler's request is made of: the time left and the disk.
  EXPECT_DOUBLE_EQ(first.max_runtime_seconds(), 600);
  EXPECT_EQ(first.volume_size_gb(), 10);
  EXPECT_EQ(orch_->DescribeTrainingJob(first.training_job_name())->secondary_status(), "Starting");
}

TEST_F(ProvisionerTest, AConnectedWorkerWithRoomComesFirstAndAOneShotWorkerRunsOnlyItsJob) {
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob("a")).ok());
  const v1::StartJob a = StartOf("p1");
  // Its one-shot worker connects and runs it to the end.
  auto link = OneShotConnects("p1", a);
  v1::WorkerMessage started;
  started.mutable_started()->set_training_job_name("a");
  started.mutable_started()->set_attempt(a.attempt());
  ReportFrom("p1", link.get(), started, 1);
  v1::WorkerMessage exited;
  exited.mutable_exited()->set_training_job_name("a");
  exited.mutable_exited()->set_attempt(a.attempt());
  exited.mutable_exited()->set_model_uploaded(true);
  ReportFrom("p1", link.get(), exited, 2);
  EXPECT_EQ(orch_->DescribeTrainingJob("a")->training_job_status(), "Completed");
  // Its slot is free, but it is single-use: the next job gets a worker of its own.
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob("b")).ok());
  EXPECT_EQ(link->Starts().size(), 0u);
  EXPECT_EQ(StartOf("p2").training_job_name(), "b");
  // A connected ordinary worker takes the next one without asking the provisioner.
  Connect(1);
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob("c")).ok());
  EXPECT_EQ(provisioner.made, 2);
  // And the end of p1's Slurm job, after its worker reported, changes nothing.
  Ended("p1", a, ProvisionedEnd::Kind::kFailed, "Slurm job 1 ended COMPLETED");
  EXPECT_EQ(orch_->DescribeTrainingJob("a")->training_job_status(), "Completed");
}

TEST_F(ProvisionerTest, ARefusedSubmissionFailsTheJobWithTheSchedulersMessage) {
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob("a")).ok());
  const v1::StartJob a = StartOf("p1");
  Ended("p1", a, ProvisionedEnd::Kind::kRefused,
        "Slurm refused the job: sbatch: error: Invalid account");
  const auto job = *orch_->DescribeTrainingJob("a");
  EXPECT_EQ(job.training_job_status(), "Failed");
  EXPECT_EQ(job.failure_reason(),
            "ClientError: Slurm refused the job: sbatch: error: Invalid account");
}

TEST_F(ProvisionerTest, ANodeFailureIsRetriedUnderItsRetryStrategyElseARetryableError) {
  auto request = SoloJob("a");
  request.mutable_retry_strategy()->set_maximum_retry_attempts(1);
  ASSERT_TRUE(orch_->CreateTrainingJob(request).ok());
  Ended("p1", StartOf("p1"), ProvisionedEnd::Kind::kRetryable, "Slurm job 1 ended NODE_FAIL");
  // Retried in place, on a new worker: a second Slurm job.
  const v1::StartJob again = StartOf("p2");
  EXPECT_EQ(again.attempt(), 2);
  Ended("p2", again, ProvisionedEnd::Kind::kRetryable, "Slurm job 2 ended NODE_FAIL");
  const auto job = *orch_->DescribeTrainingJob("a");
  EXPECT_EQ(job.training_job_status(), "Failed");
  EXPECT_THAT(job.failure_reason(), HasSubstr("InternalServerError"));
  EXPECT_THAT(job.failure_reason(), HasSubstr("Slurm job 2 ended NODE_FAIL"));
}

TEST_F(ProvisionerTest, OutOfMemoryIsAnAlgorithmErrorAndACancelDuringAStopEndsStopped) {
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob("oom")).ok());
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob("stop")).ok());
  Ended("p1", StartOf("p1"), ProvisionedEnd::Kind::kOutOfMemory,
        "Slurm job 1 ended OUT_OF_MEMORY: the training job ran out of memory");
  const auto oom = *orch_->DescribeTrainingJob("oom");
  EXPECT_EQ(oom.training_job_status(), "Failed");
  EXPECT_EQ(oom.failure_reason(),
            "AlgorithmError: Slurm job 1 ended OUT_OF_MEMORY: the training job ran out of memory");

  const v1::StartJob stop = StartOf("p2");
  ASSERT_TRUE(orch_->StopTrainingJob("stop").ok());
  // The stop went to the provisional link (the Slurm executor cancels the Slurm job).
  EXPECT_EQ(provisioner.links["p2"]->Stops().size(), 1u);
  Ended("p2", stop, ProvisionedEnd::Kind::kCancelled, "Slurm job 2 ended CANCELLED");
  EXPECT_EQ(orch_->DescribeTrainingJob("stop")->training_job_status(), "Stopped");
}

TEST_F(ProvisionerTest, AProvidedWorkerThatGetsNoJobIsDiscarded) {
  // An image that is neither in the image map nor an executable: the launch fails before any
  // StartJob, so the worker made for it is given back.
  auto request = SoloJob("no-image");
  request.mutable_algorithm_specification()->set_training_image("missing:latest");
  ASSERT_TRUE(orch_->CreateTrainingJob(request).ok());
  EXPECT_EQ(orch_->DescribeTrainingJob("no-image")->training_job_status(), "Failed");
  EXPECT_EQ(provisioner.links["p1"]->Starts().size(), 0u);
  EXPECT_EQ(provisioner.discarded, std::vector<std::string>{"p1"});
  EXPECT_TRUE(provisioner.live.empty());
}

}  // namespace
}  // namespace amt::core
