#include "worker/log_shipper.h"

#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace amt::worker {
namespace {

using ::testing::ElementsAre;

// Collects batches; thread-safe.
class Sink {
 public:
  LogShipper::SendFn Fn() {
    return [this](amt::v1::LogBatch batch) {
      std::lock_guard<std::mutex> lock(mu_);
      batches_.push_back(std::move(batch));
      if (batches_.size() == 1) first_.set_value();
    };
  }
  std::vector<amt::v1::LogBatch> batches() {
    std::lock_guard<std::mutex> lock(mu_);
    return batches_;
  }
  std::future<void> First() { return first_.get_future(); }

 private:
  std::mutex mu_;
  std::vector<amt::v1::LogBatch> batches_;
  std::promise<void> first_;
};

std::vector<int> Sizes(const std::vector<amt::v1::LogBatch>& batches) {
  std::vector<int> sizes;
  for (const auto& batch : batches) sizes.push_back(batch.lines_size());
  return sizes;
}

TEST(LogShipper, SendsBatchesOfAtMost64LinesInOrder) {
  FakeClock clock(100.0);
  Sink sink;
  {
    LogShipper shipper("job-1", 2, clock, LogShipperOptions{}, sink.Fn());
    for (int i = 0; i < 130; ++i) shipper.Add(OutputStream::kStdout, "line " + std::to_string(i));
    shipper.Start();
    shipper.Close();
  }
  const auto batches = sink.batches();
  EXPECT_THAT(Sizes(batches), ElementsAre(64, 64, 2));
  int expected = 0;
  for (const auto& batch : batches) {
    EXPECT_EQ(batch.training_job_name(), "job-1");
    EXPECT_EQ(batch.attempt(), 2);
    for (const auto& line : batch.lines()) {
      EXPECT_EQ(line.text(), "line " + std::to_string(expected++));
    }
  }
}

TEST(LogShipper, FlushesAPartialBatchWithoutWaitingForClose) {
  FakeClock clock(100.0);
  Sink sink;
  auto first = sink.First();
  LogShipper shipper("job-1", 1, clock, LogShipperOptions{}, sink.Fn());
  shipper.Start();
  shipper.Add(OutputStream::kStderr, "oops\tthere");
  first.wait();  // the 50 ms timer fired
  const auto batches = sink.batches();
  ASSERT_EQ(batches.size(), 1u);
  ASSERT_EQ(batches[0].lines_size(), 1);
  EXPECT_EQ(batches[0].lines(0).text(), "oops#011there");
  EXPECT_TRUE(batches[0].lines(0).stderr());
  EXPECT_EQ(batches[0].lines(0).timestamp(), 100.0);
  shipper.Close();
}

TEST(LogShipper, CloseWithoutStartSendsWhatWasQueued) {
  FakeClock clock;
  Sink sink;
  LogShipper shipper("job-1", 1, clock, LogShipperOptions{}, sink.Fn());
  shipper.Add(OutputStream::kStdout, "a");
  shipper.Add(OutputStream::kStdout, "b");
  EXPECT_TRUE(sink.batches().empty());  // nothing goes out before Start
  shipper.Close();
  EXPECT_THAT(Sizes(sink.batches()), ElementsAre(2));
}

TEST(LogShipper, OnlyTheLastBatchOfACloseBeforeTheExitSaysTheExitFollows) {
  FakeClock clock(100.0);
  for (const bool exit_follows : {false, true}) {
    Sink sink;
    LogShipper shipper("job-1", 1, clock, LogShipperOptions{}, sink.Fn());
    for (int i = 0; i < 130; ++i) shipper.Add(OutputStream::kStdout, "line " + std::to_string(i));
    shipper.Close(exit_follows);
    std::vector<bool> flags;
    for (const auto& batch : sink.batches()) flags.push_back(batch.exit_follows());
    EXPECT_THAT(flags, ElementsAre(false, false, exit_follows));
  }
}

TEST(LogShipper, DropsLinesAddedAfterClose) {
  FakeClock clock;
  Sink sink;
  LogShipper shipper("job-1", 1, clock, LogShipperOptions{}, sink.Fn());
  shipper.Start();
  shipper.Close();
  shipper.Add(OutputStream::kStdout, "late");
  shipper.Close();
  EXPECT_TRUE(sink.batches().empty());
}

TEST(LogShipper, HonoursACustomBatchSize) {
  FakeClock clock;
  Sink sink;
  LogShipperOptions options;
  options.max_lines = 2;
  LogShipper shipper("job-1", 1, clock, options, sink.Fn());
  for (int i = 0; i < 5; ++i) shipper.Add(OutputStream::kStdout, "x");
  shipper.Start();
  shipper.Close();
  EXPECT_THAT(Sizes(sink.batches()), ElementsAre(2, 2, 1));
}

}  // namespace
}  // namespace amt::worker
