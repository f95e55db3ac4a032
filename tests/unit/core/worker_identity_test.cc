// Worker identity: a worker reports only on the attempts it was given, and no process takes the
// place of a connected worker by saying Hello with its id.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/core/orchestrator_fixture.h"

namespace amt::core {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

class WorkerIdentityTest : public OrchestratorTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob()).ok());
    link_ = Connect(2);  // w1, instance "w1-process"
    start_ = link_->Starts().at(0);
    Started(start_);
  }

  static v1::WorkerHello Hello(const std::string& id, const std::string& instance) {
    v1::WorkerHello hello;
    hello.set_worker_id(id);
    hello.set_slots(2);
    hello.set_host("elsewhere");
    hello.set_instance_id(instance);
    return hello;
  }

  // `hello` says the worker runs solo's current attempt.
  void AddRunningSolo(v1::WorkerHello& hello) const {
    v1::JobRef& ref = *hello.add_running();
    ref.set_training_job_name("solo");
    ref.set_attempt(start_.attempt());
  }

  v1::WorkerMessage ForgedLogs(uint64_t seq) const {
    v1::WorkerMessage m;
    m.set_seq(seq);
    m.mutable_logs()->set_training_job_name(start_.training_job_name());
    m.mutable_logs()->set_attempt(start_.attempt());
    m.mutable_logs()->set_first_line(0);
    m.mutable_logs()->add_lines()->set_text("loss=0.0001");
    return m;
  }
  v1::WorkerMessage ForgedExit(uint64_t seq) const {
    v1::WorkerMessage m;
    m.set_seq(seq);
    m.mutable_exited()->set_training_job_name(start_.training_job_name());
    m.mutable_exited()->set_attempt(start_.attempt());
    m.mutable_exited()->set_model_uploaded(true);
    return m;
  }

  std::shared_ptr<FakeWorkerLink> link_;
  v1::StartJob start_;
};

TEST_F(WorkerIdentityTest, ReportsOnAnotherWorkersAttemptAreRefusedAcknowledgedAndLogged) {
  auto evil = std::make_shared<FakeWorkerLink>();
  ASSERT_TRUE(orch_->OnWorkerConnected(Hello("evil", "e-1"), evil).ok());
  orch_->OnWorkerReport("evil", evil.get(), ForgedLogs(1));
  orch_->OnWorkerReport("evil", evil.get(), ForgedExit(2));

  const auto job = *orch_->DescribeTrainingJob("solo");
  EXPECT_EQ(job.training_job_status(), "InProgress");
  EXPECT_EQ(job.secondary_status(), "Training");
  EXPECT_THAT(job.final_metric_data_list(), IsEmpty());
  EXPECT_THAT(*store_->ReadLogs("solo", 0, 10), IsEmpty());
  // Acknowledged (a worker does not replay what it was refused), never applied.
  std::vector<uint64_t> acks;
  for (const auto& m : evil->sent) {
    if (m.has_ack()) acks.push_back(m.ack().seq());
  }
  EXPECT_THAT(acks, ElementsAre(1, 2));
  EXPECT_THAT(log_, Contains(HasSubstr(
                        "refused a LogBatch report from worker \"evil\" for training job solo "
                        "(attempt 1), which runs on worker \"w1\"")));
  EXPECT_THAT(log_, Contains(HasSubstr("refused a JobExited report from worker \"evil\"")));

  // The job's own worker still reports as before.
  Log(start_, {"loss=0.5"});
  Exit(start_, 0);
  const auto ended = *orch_->DescribeTrainingJob("solo");
  EXPECT_EQ(ended.training_job_status(), "Completed");
  ASSERT_THAT(ended.final_metric_data_list(), SizeIs(1));
  EXPECT_FLOAT_EQ(ended.final_metric_data_list(0).value(), 0.5f);
}

TEST_F(WorkerIdentityTest, AHelloWithAConnectedIdFromAnotherProcessIsRefusedAndChangesNothing) {
  auto impostor = std::make_shared<FakeWorkerLink>();
  const absl::Status refused = orch_->OnWorkerConnected(Hello("w1", "other-process"), impostor);
  EXPECT_EQ(refused.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(refused.message(), HasSubstr("worker id \"w1\" is already connected"));
  EXPECT_THAT(log_, Contains(HasSubstr("refused a worker's Hello (host elsewhere)")));
  // The running job still runs on w1, whose connection stays, and new work goes to w1.
  EXPECT_EQ(orch_->DescribeTrainingJob("solo")->training_job_status(), "InProgress");
  EXPECT_EQ(link_->drops, 0);
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob("second")).ok());
  EXPECT_THAT(link_->Starts(), SizeIs(2));
  EXPECT_THAT(impostor->sent, IsEmpty());
  // A Hello without an instance id (an older worker) is refused the same way.
  EXPECT_EQ(orch_->OnWorkerConnected(Hello("w1", ""), impostor).code(),
            absl::StatusCode::kAlreadyExists);
}

TEST_F(WorkerIdentityTest, TheSameProcessReconnectingReplacesItsOldStream) {
  auto again = std::make_shared<FakeWorkerLink>();
  v1::WorkerHello hello = Hello("w1", "w1-process");
  AddRunningSolo(hello);
  ASSERT_TRUE(orch_->OnWorkerConnected(hello, again).ok());
  EXPECT_EQ(link_->drops, 1);  // the old stream is ended from amtd's side
  EXPECT_EQ(orch_->DescribeTrainingJob("solo")->training_job_status(), "InProgress");
}

TEST_F(WorkerIdentityTest, ARestartedWorkerIsTakenOnceItsOldConnectionHasEnded) {
  orch_->OnWorkerDisconnected("w1", link_.get());
  auto restarted = std::make_shared<FakeWorkerLink>();
  v1::WorkerHello hello = Hello("w1", "new-process");
  AddRunningSolo(hello);
  ASSERT_TRUE(orch_->OnWorkerConnected(hello, restarted).ok());
  EXPECT_EQ(orch_->DescribeTrainingJob("solo")->training_job_status(), "InProgress");
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob("second")).ok());
  EXPECT_THAT(restarted->Starts(), SizeIs(1));
}

}  // namespace
}  // namespace amt::core
