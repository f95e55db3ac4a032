// Acknowledged worker reports: amtd acknowledges a report once what it changed is saved, and a
// replayed report (the worker had no Ack when the stream broke or amtd restarted) changes nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/core/orchestrator_fixture.h"

namespace amt::core {
namespace {

using ::testing::ElementsAre;
using ::testing::SizeIs;

class WorkerReportsTest : public OrchestratorTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob()).ok());
    link_ = Connect(1);
    start_ = link_->Starts().at(0);
  }

  v1::WorkerMessage StartedReport(uint64_t seq) {
    v1::WorkerMessage m;
    m.set_seq(seq);
    m.mutable_started()->set_training_job_name(start_.training_job_name());
    m.mutable_started()->set_attempt(start_.attempt());
    return m;
  }
  v1::WorkerMessage LogReport(uint64_t seq, int64_t first_line, std::vector<std::string> lines) {
    v1::WorkerMessage m;
    m.set_seq(seq);
    v1::LogBatch& batch = *m.mutable_logs();
    batch.set_training_job_name(start_.training_job_name());
    batch.set_attempt(start_.attempt());
    batch.set_first_line(first_line);
    for (const auto& text : lines) {
      v1::LogRecord& line = *batch.add_lines();
      line.set_text(text);
      line.set_timestamp(clock_.Now());
    }
    return m;
  }
  v1::WorkerMessage ExitReport(uint64_t seq) {
    v1::WorkerMessage m;
    m.set_seq(seq);
    m.mutable_exited()->set_training_job_name(start_.training_job_name());
    m.mutable_exited()->set_attempt(start_.attempt());
    m.mutable_exited()->set_model_uploaded(true);
    return m;
  }
  void Report(const v1::WorkerMessage& report) { orch_->OnWorkerReport("w1", link_.get(), report); }

  std::vector<uint64_t> Acks() const {
    std::vector<uint64_t> acks;
    for (const auto& m : link_->sent) {
      if (m.has_ack()) acks.push_back(m.ack().seq());
    }
    return acks;
  }
  std::vector<std::string> StoredLines() {
    auto logs = store_->ReadLogs("solo", 0, 100);
    EXPECT_TRUE(logs.ok()) << logs.status();
    std::vector<std::string> lines;
    if (logs.ok()) {
      for (const auto& entry : *logs) lines.push_back(entry.message);
    }
    return lines;
  }

  std::shared_ptr<FakeWorkerLink> link_;
  v1::StartJob start_;
};

TEST_F(WorkerReportsTest, AcknowledgesEachReportOnceItIsSaved) {
  Report(StartedReport(1));
  EXPECT_THAT(Acks(), ElementsAre());  // the start waits for the next commit (deferred)
  Report(LogReport(2, 0, {"loss=0.5"}));
  Report(ExitReport(3));
  EXPECT_THAT(Acks(), ElementsAre(2, 3));  // cumulative: 2 acknowledges the start too
  EXPECT_EQ(store_->GetTrainingJob("solo")->describe().training_job_status(), "Completed");
}

TEST_F(WorkerReportsTest, AReplayedLogBatchStoresItsLinesAndMetricsOnce) {
  Report(StartedReport(1));
  Report(LogReport(2, 0, {"loss=0.5", "epoch 1"}));
  Report(LogReport(2, 0, {"loss=0.5", "epoch 1"}));              // replayed whole
  Report(LogReport(3, 1, {"epoch 1", "loss=0.25", "epoch 2"}));  // overlaps one stored line
  EXPECT_THAT(StoredLines(), ElementsAre("loss=0.5", "epoch 1", "loss=0.25", "epoch 2"));
  auto metrics = store_->ReadMetrics("solo");
  ASSERT_TRUE(metrics.ok());
  ASSERT_THAT(*metrics, SizeIs(2));
  EXPECT_EQ((*metrics)[1].value(), 0.25);
  EXPECT_EQ((*metrics)[1].log_sequence(), 2);
}

TEST_F(WorkerReportsTest, TakesMetricValuesParsedOffTheLoopWithTheJobsParser) {
  Report(StartedReport(1));
  auto parser = orch_->MetricParserOf("solo");
  ASSERT_TRUE(parser.has_value());
  EXPECT_FALSE(orch_->MetricParserOf("nobody").has_value());
  // Values as the worker stream's thread parsed them: taken as given (the line says 0.5, the
  // values say 0.125, so which was used shows).
  ParsedLogs parsed{*parser, {{{"loss", 0.125}}}};
  orch_->OnWorkerReport("w1", link_.get(), LogReport(2, 0, {"loss=0.5"}), &parsed);
  auto metrics = store_->ReadMetrics("solo");
  ASSERT_TRUE(metrics.ok());
  ASSERT_THAT(*metrics, SizeIs(1));
  EXPECT_EQ((*metrics)[0].value(), 0.125);

  // Parsed by other patterns (not the job's), or not one entry per line: parsed again here.
  auto other =
      metrics::MetricParser::Create(SoloJob().algorithm_specification().metric_definitions());
  ASSERT_TRUE(other.ok());
  ParsedLogs foreign{*other, {{{"loss", 9.0}}}};
  orch_->OnWorkerReport("w1", link_.get(), LogReport(3, 1, {"loss=0.25"}), &foreign);
  ParsedLogs short_of_lines{*parser, {}};
  orch_->OnWorkerReport("w1", link_.get(), LogReport(4, 2, {"loss=0.75"}), &short_of_lines);
  metrics = store_->ReadMetrics("solo");
  ASSERT_THAT(*metrics, SizeIs(3));
  EXPECT_EQ((*metrics)[1].value(), 0.25);
  EXPECT_EQ((*metrics)[2].value(), 0.75);
}

TEST_F(WorkerReportsTest, AReplayedJobStartedAddsNoTransition) {
  Report(StartedReport(1));
  const auto before = orch_->DescribeTrainingJob("solo")->secondary_status_transitions_size();
  clock_.Advance(5);
  Report(StartedReport(1));
  const auto after = *orch_->DescribeTrainingJob("solo");
  EXPECT_EQ(after.secondary_status_transitions_size(), before);
  EXPECT_EQ(after.secondary_status(), "Training");
}

TEST_F(WorkerReportsTest, AStartStillDeferredIsWrittenByAGracefulShutdown) {
  Report(StartedReport(1));
  EXPECT_FALSE(store_->GetTrainingJob("solo")->attempt_started());  // deferred, not yet written
  orch_->FlushDeferred();  // what amtd's shutdown does before it destroys the orchestrator
  const auto stored = *store_->GetTrainingJob("solo");
  EXPECT_TRUE(stored.attempt_started());
  EXPECT_EQ(stored.describe().secondary_status(), "Training");
  EXPECT_THAT(Acks(), ElementsAre(1));
  orch_->FlushDeferred();  // nothing left: no second write
  EXPECT_THAT(Acks(), ElementsAre(1));
}

TEST_F(WorkerReportsTest, AReplayedExitOfAnEndedJobChangesNothing) {
  Report(StartedReport(1));
  timers_.Advance(0.5);  // the deferred start is written (and acknowledged) on its own
  Report(ExitReport(2));
  const auto ended = *store_->GetTrainingJob("solo");
  clock_.Advance(5);
  Report(ExitReport(2));
  EXPECT_EQ(store_->GetTrainingJob("solo")->DebugString(), ended.DebugString());
  EXPECT_THAT(Acks(), ElementsAre(1, 2));  // already acknowledged up to 2: no second Ack
}

TEST_F(WorkerReportsTest, AcknowledgesNothingWhileTheStoreFailsAndAllOnceItRecovers) {
  Report(StartedReport(1));
  timers_.Advance(0.5);  // the deferred start is written (and acknowledged) on its own
  faulty_.FailWrites(true);
  Report(LogReport(2, 0, {"loss=0.5"}));
  Report(ExitReport(3));
  EXPECT_THAT(Acks(), ElementsAre(1));
  faulty_.FailWrites(false);
  timers_.Advance(1);  // the store retry writes what was kept
  EXPECT_THAT(Acks(), ElementsAre(1, 3));
  EXPECT_THAT(StoredLines(), ElementsAre("loss=0.5"));
}

TEST_F(WorkerReportsTest, AReportFromAReplacedConnectionIsAppliedButNotAcknowledged) {
  const auto old_link = link_;
  v1::WorkerHello hello;
  hello.set_worker_id("w1");
  hello.set_slots(1);
  hello.set_instance_id("w1-process");
  *hello.add_running() = [&] {
    v1::JobRef ref;
    ref.set_training_job_name("solo");
    ref.set_attempt(start_.attempt());
    return ref;
  }();
  auto new_link = std::make_shared<FakeWorkerLink>();
  ASSERT_TRUE(orch_->OnWorkerConnected(hello, new_link).ok());
  orch_->OnWorkerReport("w1", old_link.get(), StartedReport(1));
  EXPECT_EQ(orch_->DescribeTrainingJob("solo")->secondary_status(), "Training");
  EXPECT_THAT(Acks(), ElementsAre());
  for (const auto& m : new_link->sent) EXPECT_FALSE(m.has_ack());
}

TEST_F(WorkerReportsTest, AJobWhoseStartNeverReachedTheWorkerIsLaunchedAgainOnReconnect) {
  // amtd saved the launch and died (or the stream broke) before the worker had the StartJob:
  // the worker's Hello does not list it.
  auto second = Connect(1);
  ASSERT_EQ(second->Starts().size(), 1u);
  EXPECT_EQ(second->Starts()[0].training_job_name(), "solo");
  EXPECT_EQ(second->Starts()[0].attempt(), start_.attempt() + 1);
  const auto job = *orch_->DescribeTrainingJob("solo");
  EXPECT_EQ(job.training_job_status(), "InProgress");
  EXPECT_EQ(store_->GetTrainingJob("solo")->worker_id(), "w1");
}

TEST_F(WorkerReportsTest, AStopIsSentAgainWhenTheWorkerOfAStoppingJobReconnects) {
  Report(StartedReport(1));
  ASSERT_TRUE(orch_->StopTrainingJob("solo").ok());
  ASSERT_EQ(link_->Stops().size(), 1u);
  v1::JobRef running;
  running.set_training_job_name("solo");
  running.set_attempt(start_.attempt());
  auto second = Connect(1, {running});
  ASSERT_EQ(second->Stops().size(), 1u);
  EXPECT_EQ(second->Stops()[0].attempt(), start_.attempt());
  EXPECT_TRUE(second->Starts().empty());
}

// While the store fails, unsaved log lines are capped (here at 16 bytes): past the cap a
// connection's reports wait on the worker, which replays them once the store recovers.
class HeldReportsTest : public WorkerReportsTest {
 protected:
  void SetUp() override {
    max_unsaved_log_bytes_ = 16;
    Rebuild();
    WorkerReportsTest::SetUp();
  }
  std::shared_ptr<FakeWorkerLink> Reconnect() {
    orch_->OnWorkerDisconnected("w1", link_.get());
    v1::JobRef running;
    running.set_training_job_name("solo");
    running.set_attempt(start_.attempt());
    return Connect(1, {running});
  }
};

TEST_F(HeldReportsTest, ReportsPastTheCapWaitOnTheWorkerAndAreReplayedOnceTheStoreRecovers) {
  Report(StartedReport(1));
  timers_.Advance(0.5);  // the deferred start is written (and acknowledged) on its own
  faulty_.FailWrites(true);
  Report(LogReport(2, 0, {"loss=0.5 after epoch 1"}));  // 22 bytes kept: the cap is reached
  Report(LogReport(3, 1, {"epoch 2"}));                 // held back, not applied
  Report(ExitReport(4));                                // held too: a connection keeps its order
  EXPECT_EQ(orch_->DescribeTrainingJob("solo")->training_job_status(), "InProgress");
  EXPECT_THAT(log_, ::testing::Contains(::testing::HasSubstr(
                        "worker w1's reports wait on the worker until the store accepts writes")));
  EXPECT_EQ(link_->drops, 0);

  faulty_.FailWrites(false);
  timers_.Advance(1);  // the retry writes the kept line, acknowledges it, drops the connection
  EXPECT_THAT(Acks(), ElementsAre(1, 2));
  EXPECT_EQ(link_->drops, 1);
  Report(LogReport(3, 1, {"epoch 2"}));  // still in flight on the dropped connection: held
  EXPECT_THAT(StoredLines(), ElementsAre("loss=0.5 after epoch 1"));

  link_ = Reconnect();  // the worker replays what it has no Ack for
  Report(LogReport(3, 1, {"epoch 2"}));
  Report(ExitReport(4));
  EXPECT_THAT(StoredLines(), ElementsAre("loss=0.5 after epoch 1", "epoch 2"));
  EXPECT_EQ(store_->GetTrainingJob("solo")->describe().training_job_status(), "Completed");
  EXPECT_THAT(Acks(), ElementsAre(3, 4));
  EXPECT_EQ(link_->drops, 0);
}

TEST_F(HeldReportsTest, UnderTheCapReportsAreAppliedWhileTheStoreFails) {
  Report(StartedReport(1));
  timers_.Advance(0.5);  // the deferred start is written (and acknowledged) on its own
  faulty_.FailWrites(true);
  Report(LogReport(2, 0, {"loss=0.5"}));  // 8 bytes: under the cap
  Report(LogReport(3, 1, {"epoch 2"}));   // 15 bytes: still under it
  Report(ExitReport(4));
  EXPECT_EQ(orch_->DescribeTrainingJob("solo")->training_job_status(), "Completed");
  faulty_.FailWrites(false);
  timers_.Advance(1);
  EXPECT_THAT(Acks(), ElementsAre(1, 4));
  EXPECT_EQ(link_->drops, 0);
  EXPECT_THAT(StoredLines(), ElementsAre("loss=0.5", "epoch 2"));
}

}  // namespace
}  // namespace amt::core
