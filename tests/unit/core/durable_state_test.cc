// DurableState alone, over an in-memory store behind a FaultyStore: what it writes, what it keeps
// while the store fails, in what order it writes it again, when it holds worker reports back, and
// how it recovers. (persistence_test.cc drives the same path through the Orchestrator.)
#include "orchestrator/core/durable_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "orchestrator/store/faulty_store.h"
#include "tests/unit/core/fakes.h"

namespace amt::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::SizeIs;

constexpr char kStoreError[] = "injected store failure: disk full";

v1::TrainingJobRecord Job(const std::string& name, const std::string& status = "InProgress") {
  v1::TrainingJobRecord job;
  job.mutable_describe()->set_training_job_name(name);
  job.mutable_describe()->set_training_job_status(status);
  return job;
}

v1::TuningJobRecord Tuning(const std::string& name, const std::string& status = "InProgress") {
  v1::TuningJobRecord tuning;
  tuning.mutable_describe()->set_hyper_parameter_tuning_job_name(name);
  tuning.mutable_describe()->set_hyper_parameter_tuning_job_status(status);
  return tuning;
}

store::LogEntry Line(int64_t seq, const std::string& text) { return {seq, 1.0, text, "algo-1"}; }

class DurableStateTest : public ::testing::Test {
 protected:
  DurableStateTest()
      : store_(store::NewInMemoryStore()),
        faulty_(*store_),
        timers_(clock_),
        state_(DurableStateOptions{.retry_seconds = 2,
                                   .max_unsaved_log_bytes = 10,
                                   .log = [this](const std::string& m) { logged_.push_back(m); }},
               faulty_, clock_, timers_,
               DurableState::Records{
                   .tuning = [this](const std::string& key) -> const v1::TuningJobRecord& {
                     return Find(tunings_, key);
                   },
                   .training = [this](const std::string& key) -> const v1::TrainingJobRecord& {
                     return Find(jobs_, key);
                   }},
               [this](const DurableState::HeldLinks& held) { recovered_.push_back(held); }) {}

  template <typename Record>
  static const Record& Find(const std::map<std::string, Record>& records, const std::string& key) {
    auto it = records.find(key);
    if (it == records.end()) throw std::out_of_range("no record " + key);
    return it->second;
  }
  std::vector<std::string> StoredLines(const std::string& job) {
    auto lines = store_->ReadLogs(job, 0, 100);
    EXPECT_TRUE(lines.ok()) << lines.status();
    std::vector<std::string> out;
    if (lines.ok()) {
      for (const auto& line : *lines) out.push_back(line.message);
    }
    return out;
  }
  std::string StoredStatus(const std::string& job) {
    auto record = store_->GetTrainingJob(job);
    return record.ok() ? record->describe().training_job_status() : "(none)";
  }

  FakeClock clock_;
  std::unique_ptr<store::Store> store_;
  store::FaultyStore faulty_;
  FakeTimers timers_;
  std::map<std::string, v1::TuningJobRecord> tunings_;
  std::map<std::string, v1::TrainingJobRecord> jobs_;
  std::vector<std::string> logged_;
  std::vector<DurableState::HeldLinks> recovered_;
  DurableState state_;
};

TEST_F(DurableStateTest, WritesAtOnceWhileTheStoreWorks) {
  jobs_["a"] = Job("a");
  ASSERT_TRUE(state_.Persist(jobs_["a"], {Line(0, "epoch 1")}, {}).ok());
  EXPECT_EQ(StoredStatus("a"), "InProgress");
  EXPECT_THAT(StoredLines("a"), ElementsAre("epoch 1"));
  EXPECT_FALSE(state_.failing());
  EXPECT_TRUE(state_.CheckWritable().ok());
  EXPECT_EQ(timers_.pending(), 0u);
  EXPECT_THAT(logged_, IsEmpty());
}

TEST_F(DurableStateTest, AFailedWriteIsKeptAndWrittenAgainAsTheRecordIsThen) {
  jobs_["a"] = Job("a");
  ASSERT_TRUE(state_.Persist(jobs_["a"]).ok());
  faulty_.FailWrites(true);
  EXPECT_EQ(state_.Persist(jobs_["a"], {Line(0, "epoch 1")}, {}), absl::InternalError(kStoreError));
  EXPECT_TRUE(state_.failing());
  EXPECT_EQ(state_.CheckWritable().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(state_.CheckWritable().message()),
              HasSubstr("amtd cannot write its state store"));
  ASSERT_THAT(logged_, SizeIs(1));
  EXPECT_THAT(logged_[0], HasSubstr(kStoreError));
  // Later lines of the same job wait behind the unwritten ones, in order.
  EXPECT_EQ(state_.Persist(jobs_["a"], {Line(1, "epoch 2")}, {}).code(),
            absl::StatusCode::kUnavailable);
  jobs_["a"].mutable_describe()->set_training_job_status("Completed");  // changed meanwhile

  timers_.Advance(2);  // still failing: nothing written, retried later
  EXPECT_TRUE(state_.failing());
  EXPECT_THAT(recovered_, IsEmpty());
  faulty_.FailWrites(false);
  timers_.Advance(1.9);  // not yet due
  EXPECT_TRUE(state_.failing());
  timers_.Advance(0.1);
  EXPECT_FALSE(state_.failing());
  EXPECT_TRUE(state_.CheckWritable().ok());
  EXPECT_EQ(StoredStatus("a"), "Completed");
  EXPECT_THAT(StoredLines("a"), ElementsAre("epoch 1", "epoch 2"));
  EXPECT_EQ(state_.unsaved_log_bytes(), 0u);
  ASSERT_THAT(recovered_, SizeIs(1));
  EXPECT_THAT(recovered_[0], IsEmpty());
  EXPECT_THAT(logged_.back(), HasSubstr("accepts writes again"));
  EXPECT_EQ(timers_.pending(), 0u);
}

TEST_F(DurableStateTest, ATuningJobIsWrittenOnceWholeAfterManyFailedWrites) {
  tunings_["t"] = Tuning("t");
  faulty_.FailWrites(true);
  EXPECT_FALSE(state_.Persist(tunings_["t"]).ok());
  tunings_["t"].mutable_describe()->set_hyper_parameter_tuning_job_status("Stopping");
  EXPECT_FALSE(state_.Persist(tunings_["t"]).ok());
  const int writes_before = faulty_.writes();
  faulty_.FailWrites(false);
  timers_.Advance(2);
  EXPECT_EQ(faulty_.writes() - writes_before, 1);
  auto stored = store_->GetTuningJob("t");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->describe().hyper_parameter_tuning_job_status(), "Stopping");
  EXPECT_FALSE(state_.failing());
}

TEST_F(DurableStateTest, ANewRecordThatCannotBeWrittenIsNotKept) {
  jobs_["new"] = Job("new");
  faulty_.FailWrites(true);
  EXPECT_EQ(state_.PersistNew(nullptr, {jobs_["new"]}), absl::InternalError(kStoreError));
  EXPECT_TRUE(state_.failing());
  jobs_.erase("new");  // the caller drops it; the retry must not look it up
  faulty_.FailWrites(false);
  timers_.Advance(2);
  EXPECT_FALSE(state_.failing());
  EXPECT_EQ(StoredStatus("new"), "(none)");
}

TEST_F(DurableStateTest, ADeletedRecordIsForgottenWithItsUnwrittenLines) {
  jobs_["gone"] = Job("gone");
  tunings_["t"] = Tuning("t");
  faulty_.FailWrites(true);
  EXPECT_FALSE(state_.Persist(jobs_["gone"], {Line(0, "12345")}, {}).ok());
  EXPECT_FALSE(state_.Persist(tunings_["t"]).ok());
  EXPECT_EQ(state_.unsaved_log_bytes(), 5u);
  state_.ForgetTraining("gone");
  state_.ForgetTuning("t");
  jobs_.erase("gone");
  tunings_.erase("t");
  EXPECT_EQ(state_.unsaved_log_bytes(), 0u);
  faulty_.FailWrites(false);
  timers_.Advance(2);  // would throw when it looked a forgotten key up
  EXPECT_FALSE(state_.failing());
}

TEST_F(DurableStateTest, AFailingDeleteMakesTheStateDegradedUntilARetry) {
  state_.OnStoreFailure(absl::InternalError("delete failed"));
  EXPECT_TRUE(state_.failing());
  EXPECT_THAT(logged_, ElementsAre(HasSubstr("delete failed")));
  timers_.Advance(2);  // nothing unsaved: the first retry recovers
  EXPECT_FALSE(state_.failing());
  EXPECT_THAT(recovered_, SizeIs(1));
}

TEST_F(DurableStateTest, ReportsAreHeldBackOnlyPastTheUnsavedLogBytesWhileFailing) {
  FakeWorkerLink first;
  FakeWorkerLink second;
  jobs_["a"] = Job("a");
  EXPECT_FALSE(state_.HoldBack("w1", &first, /*is_log_batch=*/true));  // the store works
  faulty_.FailWrites(true);
  EXPECT_FALSE(state_.Persist(jobs_["a"], {Line(0, "123456789")}, {}).ok());  // 9 bytes
  EXPECT_FALSE(state_.HoldBack("w1", &first, true));                          // under the 10 bytes
  EXPECT_EQ(state_.Persist(jobs_["a"], {Line(1, "0")}, {}).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(state_.unsaved_log_bytes(), 10u);
  EXPECT_FALSE(state_.HoldBack("w1", &first, /*is_log_batch=*/false));  // exits still apply
  EXPECT_TRUE(state_.HoldBack("w1", &first, true));
  EXPECT_THAT(logged_.back(), HasSubstr("worker w1's reports wait on the worker"));
  // Once held, a connection's later reports wait too, whatever they are; others are not held.
  EXPECT_TRUE(state_.HoldBack("w1", &first, false));
  EXPECT_FALSE(state_.HoldBack("w2", &second, false));
  faulty_.FailWrites(false);
  timers_.Advance(2);
  ASSERT_THAT(recovered_, SizeIs(1));
  EXPECT_THAT(recovered_[0], ElementsAre(Pair(&first, "w1")));
  // Until its disconnect arrives, a held connection stays held.
  EXPECT_TRUE(state_.HoldBack("w1", &first, false));
  state_.ForgetLink(&first);
  EXPECT_FALSE(state_.HoldBack("w1", &first, true));
}

}  // namespace
}  // namespace amt::core

namespace amt::core {
namespace {

TEST_F(DurableStateTest, ABatchIsOneCommitOfAllItsWrites) {
  jobs_["a"] = Job("a");
  tunings_["t"] = Tuning("t");
  state_.BeginBatch();
  ASSERT_TRUE(state_.Persist(jobs_["a"], {Line(0, "epoch 1")}, {}).ok());
  ASSERT_TRUE(state_.Persist(tunings_["t"]).ok());
  EXPECT_TRUE(faulty_.in_batch());
  EXPECT_EQ(StoredStatus("a"), "(none)");  // not in the store before the commit
  EXPECT_EQ(faulty_.commits(), 0);
  ASSERT_TRUE(state_.CommitBatch().ok());
  EXPECT_FALSE(faulty_.in_batch());
  EXPECT_EQ(faulty_.commits(), 1);
  EXPECT_EQ(StoredStatus("a"), "InProgress");
  EXPECT_THAT(StoredLines("a"), ElementsAre("epoch 1"));
  EXPECT_TRUE(store_->GetTuningJob("t").ok());
  EXPECT_FALSE(state_.failing());
}

TEST_F(DurableStateTest, ADeferredChangeWaitsForABatchThatWritesAndCostsNoCommitOfItsOwn) {
  jobs_["a"] = Job("a");
  jobs_["b"] = Job("b");
  state_.Defer(jobs_["a"]);
  EXPECT_TRUE(state_.deferring());
  state_.BeginBatch();
  EXPECT_FALSE(state_.WriteDeferred(/*force=*/false));  // the batch wrote nothing: it waits
  ASSERT_TRUE(state_.CommitBatch().ok());
  EXPECT_EQ(StoredStatus("a"), "(none)");
  EXPECT_EQ(faulty_.writes(), 0);
  jobs_["a"].mutable_describe()->set_secondary_status("Training");  // as it is when written
  state_.BeginBatch();
  ASSERT_TRUE(state_.Persist(jobs_["b"]).ok());
  EXPECT_TRUE(state_.WriteDeferred(/*force=*/false));  // with b's write
  EXPECT_FALSE(state_.deferring());
  const int commits = faulty_.commits();
  ASSERT_TRUE(state_.CommitBatch().ok());
  EXPECT_EQ(faulty_.commits(), commits + 1);
  EXPECT_EQ(store_->GetTrainingJob("a")->describe().secondary_status(), "Training");

  // Forced, it is written in a batch of nothing else; a Persist of the record writes it too.
  state_.Defer(jobs_["a"]);
  state_.BeginBatch();
  EXPECT_TRUE(state_.WriteDeferred(/*force=*/true));
  ASSERT_TRUE(state_.CommitBatch().ok());
  EXPECT_EQ(faulty_.commits(), commits + 2);
  state_.Defer(jobs_["a"]);
  ASSERT_TRUE(state_.Persist(jobs_["a"]).ok());
  EXPECT_FALSE(state_.deferring());
}

TEST_F(DurableStateTest, NestedBatchesCommitOnceAtTheOutermost) {
  jobs_["a"] = Job("a");
  state_.BeginBatch();
  state_.BeginBatch();
  ASSERT_TRUE(state_.Persist(jobs_["a"]).ok());
  ASSERT_TRUE(state_.CommitBatch().ok());
  EXPECT_EQ(faulty_.commits(), 0);
  EXPECT_TRUE(faulty_.in_batch());
  ASSERT_TRUE(state_.CommitBatch().ok());
  EXPECT_EQ(faulty_.commits(), 1);
  EXPECT_EQ(StoredStatus("a"), "InProgress");
}

TEST_F(DurableStateTest, ABatchWhoseCommitFailsIsKeptWithItsLinesAndWrittenAgain) {
  jobs_["a"] = Job("a");
  jobs_["new"] = Job("new");
  tunings_["t"] = Tuning("t");
  faulty_.FailCommits(true);
  state_.BeginBatch();
  ASSERT_TRUE(state_.Persist(jobs_["a"], {Line(0, "epoch 1")}, {}).ok());
  ASSERT_TRUE(state_.PersistNew(&tunings_["t"], {jobs_["new"]}).ok());
  EXPECT_EQ(state_.CommitBatch(), absl::InternalError("injected commit failure: disk full"));
  EXPECT_TRUE(state_.failing());
  EXPECT_EQ(state_.CheckWritable().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(StoredStatus("a"), "(none)");  // nothing of the batch was kept
  EXPECT_EQ(state_.unsaved_log_bytes(), 7u);
  // A later line of the same job waits behind the batch's, in order.
  EXPECT_EQ(state_.Persist(jobs_["a"], {Line(1, "epoch 2")}, {}).code(),
            absl::StatusCode::kUnavailable);
  jobs_["a"].mutable_describe()->set_training_job_status("Completed");
  faulty_.FailCommits(false);
  timers_.Advance(2);
  EXPECT_FALSE(state_.failing());
  EXPECT_EQ(StoredStatus("a"), "Completed");
  EXPECT_THAT(StoredLines("a"), ElementsAre("epoch 1", "epoch 2"));
  EXPECT_EQ(StoredStatus("new"), "InProgress");
  EXPECT_TRUE(store_->GetTuningJob("t").ok());
  EXPECT_EQ(state_.unsaved_log_bytes(), 0u);
  ASSERT_THAT(recovered_, SizeIs(1));
}

TEST_F(DurableStateTest, ABatchIsWrittenThenSyncedAndAFailedSyncIsRetriedWithoutWritingAgain) {
  jobs_["a"] = Job("a");
  state_.BeginBatch();
  ASSERT_TRUE(state_.Persist(jobs_["a"], {Line(0, "epoch 1")}, {}).ok());
  ASSERT_TRUE(state_.WriteBatch().ok());
  EXPECT_EQ(StoredStatus("a"), "InProgress");  // written before it is synced
  EXPECT_EQ(faulty_.syncs(), 0);
  ASSERT_TRUE(state_.Sync().ok());
  EXPECT_EQ(faulty_.syncs(), 1);
  ASSERT_TRUE(state_.Sync().ok());  // nothing left to sync
  EXPECT_EQ(faulty_.syncs(), 1);

  faulty_.FailSyncs(true);
  state_.BeginBatch();
  jobs_["a"].mutable_describe()->set_training_job_status("Completed");
  ASSERT_TRUE(state_.Persist(jobs_["a"], {Line(1, "epoch 2")}, {}).ok());
  ASSERT_TRUE(state_.WriteBatch().ok());
  EXPECT_EQ(state_.Sync(), absl::InternalError("injected sync failure: I/O error"));
  EXPECT_TRUE(state_.failing());
  EXPECT_EQ(state_.CheckWritable().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(state_.unsaved_log_bytes(), 0u);  // written: nothing to write again
  const int writes = faulty_.writes();
  timers_.Advance(2);  // the retry's sync fails too
  EXPECT_TRUE(state_.failing());
  EXPECT_EQ(faulty_.failed_syncs(), 2);
  faulty_.FailSyncs(false);
  timers_.Advance(2);
  EXPECT_FALSE(state_.failing());
  EXPECT_EQ(faulty_.syncs(), 2);
  EXPECT_EQ(faulty_.writes(), writes);  // synced, not written again
  EXPECT_THAT(StoredLines("a"), ElementsAre("epoch 1", "epoch 2"));
  EXPECT_EQ(StoredStatus("a"), "Completed");
  ASSERT_THAT(recovered_, SizeIs(1));
}

}  // namespace
}  // namespace amt::core
