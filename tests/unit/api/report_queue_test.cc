// The queue between the worker streams and the loop: the reports queued before a drain runs are
// applied as one group commit, whose Acks follow it.
#include "orchestrator/api/report_queue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tests/unit/api/api_fixture.h"

namespace amt::api {
namespace {

using ::testing::ElementsAre;
using ::testing::SizeIs;

class ReportQueueTest : public ApiFixture {
 protected:
  ReportQueueTest()
      : queue_([this](std::function<void()> drain) { posted_.push_back(std::move(drain)); },
               *orchestrator_) {}

  // A numbered report of attempt 1 of training job "solo", body set by `fill`.
  void Push(uint64_t seq, const std::function<void(v1::WorkerMessage&)>& fill) {
    auto message = std::make_shared<v1::WorkerMessage>();
    message->set_seq(seq);
    fill(*message);
    queue_.Push({"w1", link_, message, nullptr, [this] { ++applied_; }});
  }
  // Training job "solo", created and launched on a connected worker.
  void StartSolo() {
    ASSERT_TRUE(loop_
                    .Call([this] {
                      return orchestrator_->CreateTrainingJob(TrainingJobRequest("solo")).status();
                    })
                    .ok());
    ConnectWorker();
  }
  // The body of attempt 1 of "solo"'s JobExited, its model uploaded.
  static void Exited(v1::WorkerMessage& m) {
    m.mutable_exited()->set_training_job_name("solo");
    m.mutable_exited()->set_attempt(1);
    m.mutable_exited()->set_model_uploaded(true);
  }
  // The body of a last LogBatch of "solo" (its JobExited follows), from line `first_line`.
  static std::function<void(v1::WorkerMessage&)> LastLogs(int first_line) {
    return [first_line](v1::WorkerMessage& m) {
      m.mutable_logs()->set_training_job_name("solo");
      m.mutable_logs()->set_attempt(1);
      m.mutable_logs()->set_first_line(first_line);
      m.mutable_logs()->add_lines()->set_text("line " + std::to_string(first_line));
      m.mutable_logs()->set_exit_follows(true);
    };
  }
  // Runs posted drain `index` on the loop.
  void RunDrain(size_t index) {
    loop_.Call([&] { posted_.at(index)(); });
  }
  std::vector<uint64_t> Acks() {
    return loop_.Call([this] {
      std::vector<uint64_t> acks;
      for (const auto& m : link_->sent) {
        if (m.has_ack()) acks.push_back(m.ack().seq());
      }
      return acks;
    });
  }

  std::vector<std::function<void()>> posted_;  // the drains, run by the test
  int applied_ = 0;
  ReportQueue queue_;
};

TEST_F(ReportQueueTest, ReportsQueuedBeforeTheDrainRunsAreOneCommitAndOneAckAfterIt) {
  ASSERT_NO_FATAL_FAILURE(StartSolo());
  ASSERT_THAT(Started(), ElementsAre("solo"));
  Push(1, [](v1::WorkerMessage& m) {
    m.mutable_started()->set_training_job_name("solo");
    m.mutable_started()->set_attempt(1);
  });
  Push(2, [](v1::WorkerMessage& m) {
    m.mutable_logs()->set_training_job_name("solo");
    m.mutable_logs()->set_attempt(1);
    m.mutable_logs()->add_lines()->set_text("the last line");
  });
  Push(3, Exited);
  ASSERT_THAT(posted_, SizeIs(1));  // one drain for the three
  EXPECT_EQ(applied_, 0);
  const int commits = loop_.Call([this] { return faulty_.commits(); });
  RunDrain(0);
  EXPECT_EQ(loop_.Call([this] { return faulty_.commits(); }), commits + 1);
  EXPECT_THAT(Acks(), ElementsAre(0 + 3));  // cumulative, once committed
  EXPECT_EQ(applied_, 3);
  EXPECT_EQ(store_->GetTrainingJob("solo")->describe().training_job_status(), "Completed");
  EXPECT_THAT(*store_->ReadLogs("solo", 0, 10), SizeIs(1));

  // The queue is idle again: the next report posts a drain of its own.
  Push(4, [](v1::WorkerMessage& m) {
    m.mutable_started()->set_training_job_name("solo");
    m.mutable_started()->set_attempt(1);
  });
  ASSERT_THAT(posted_, SizeIs(2));
  RunDrain(1);
  EXPECT_THAT(Acks(), ElementsAre(3, 4));
  EXPECT_EQ(applied_, 4);
}

TEST_F(ReportQueueTest, ALogBatchWhoseExitFollowsWaitsForItAndIsFlushedWhenTheStreamEnds) {
  ASSERT_NO_FATAL_FAILURE(StartSolo());
  Push(1, LastLogs(0));
  EXPECT_THAT(posted_, SizeIs(0));  // waits for the JobExited
  Push(2, Exited);
  ASSERT_THAT(posted_, SizeIs(1));
  const int commits = loop_.Call([this] { return faulty_.commits(); });
  RunDrain(0);
  EXPECT_EQ(loop_.Call([this] { return faulty_.commits(); }), commits + 1);  // both at once
  EXPECT_THAT(Acks(), ElementsAre(2));
  EXPECT_EQ(store_->GetTrainingJob("solo")->describe().training_job_status(), "Completed");

  // A stream that ends after such a batch: Flush applies it alone.
  Push(3, LastLogs(0));
  queue_.Flush();
  ASSERT_THAT(posted_, SizeIs(2));
  queue_.Flush();  // one drain is enough
  EXPECT_THAT(posted_, SizeIs(2));
  RunDrain(1);
  EXPECT_THAT(Acks(), ElementsAre(2, 3));
  EXPECT_EQ(applied_, 3);
}

TEST_F(ReportQueueTest, OnlyOneLogBatchWaitsForItsExitSoAStreamsWindowNeverFillsWithThem) {
  ASSERT_NO_FATAL_FAILURE(StartSolo());
  // Jobs ending together: their last LogBatches come back to back, before any JobExited (here
  // two batches of one job, which the queue cannot tell apart from two jobs').
  Push(1, LastLogs(0));
  EXPECT_THAT(posted_, SizeIs(0));
  Push(2, LastLogs(1));
  ASSERT_THAT(posted_, SizeIs(1));  // the second does not wait: a drain takes both
  RunDrain(0);
  EXPECT_THAT(Acks(), ElementsAre(2));
  EXPECT_EQ(applied_, 2);
  EXPECT_THAT(*store_->ReadLogs("solo", 0, 10), SizeIs(2));

  // The drain took the waiting batch: the next one waits again.
  Push(3, LastLogs(2));
  EXPECT_THAT(posted_, SizeIs(1));
  Push(4, Exited);
  ASSERT_THAT(posted_, SizeIs(2));
  RunDrain(1);
  EXPECT_THAT(Acks(), ElementsAre(2, 4));
  EXPECT_EQ(store_->GetTrainingJob("solo")->describe().training_job_status(), "Completed");
}

}  // namespace
}  // namespace amt::api
