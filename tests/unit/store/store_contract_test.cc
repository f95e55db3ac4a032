// The Store contract, run against both implementations (SQLite in a fresh directory per test, and
// in memory).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/store/store.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/store/store_test_util.h"

namespace amt::store {
namespace {

using ::amt::store::testing::EqualsProto;
using ::amt::store::testing::IsOk;
using ::amt::store::testing::Point;
using ::amt::store::testing::StatusIs;
using ::amt::store::testing::TrainingRecord;
using ::amt::store::testing::TuningRecord;
using ::amt::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

struct Implementation {
  std::string name;
  std::function<absl::StatusOr<std::unique_ptr<Store>>(const std::string& data_dir)> open;
};

class StoreContractTest : public ::testing::TestWithParam<Implementation> {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Store>> store = GetParam().open(dir_.str());
    ASSERT_THAT(store, IsOk());
    store_ = std::move(store).value();
  }

  std::vector<std::string> TuningNames() {
    std::vector<std::string> names;
    // A named StatusOr: a range-for over a temporary's value() would dangle.
    const absl::StatusOr<std::vector<v1::TuningJobRecord>> records = store_->ListTuningJobs();
    for (const auto& record : records.value()) {
      names.push_back(record.describe().hyper_parameter_tuning_job_name());
    }
    return names;
  }

  static std::vector<std::string> TrainingNames(
      const absl::StatusOr<std::vector<v1::TrainingJobRecord>>& records) {
    std::vector<std::string> names;
    for (const auto& record : records.value()) {
      names.push_back(record.describe().training_job_name());
    }
    return names;
  }

  static std::vector<int64_t> Sequences(const absl::StatusOr<std::vector<LogEntry>>& logs) {
    std::vector<int64_t> sequences;
    for (const LogEntry& entry : logs.value()) sequences.push_back(entry.sequence);
    return sequences;
  }

  // Commits log lines [first, last) for `name` with an otherwise fresh record.
  absl::Status CommitLines(const std::string& name, int64_t first, int64_t last) {
    std::vector<LogEntry> logs;
    for (int64_t sequence = first; sequence < last; ++sequence) {
      logs.push_back(LogEntry{sequence, 1700000000.0 + static_cast<double>(sequence),
                              "line " + std::to_string(sequence)});
    }
    v1::TrainingJobRecord record = TrainingRecord(name);
    record.set_next_log_sequence(last);
    return store_->CommitTrainingJobProgress(record, logs, {});
  }

  TempDir dir_;  // before store_: the store closes before its directory goes
  std::unique_ptr<Store> store_;
};

TEST_P(StoreContractTest, ListsAreEmptyWhenStoreIsNew) {
  EXPECT_THAT(store_->ListTuningJobs().value(), IsEmpty());
  EXPECT_THAT(store_->ListTrainingJobs().value(), IsEmpty());
}

TEST_P(StoreContractTest, GetTuningJobReturnsWhatPutStored) {
  v1::TuningJobRecord record = TuningRecord("tune-1", 3);
  record.set_stop_requested(true);
  record.set_not_improving(2);
  record.set_finished(5);
  record.set_succeeded(4);
  ASSERT_THAT(store_->PutTuningJob(record), IsOk());

  EXPECT_THAT(store_->GetTuningJob("tune-1").value(), EqualsProto(record));
}

TEST_P(StoreContractTest, GetTrainingJobReturnsWhatPutStored) {
  v1::TrainingJobRecord record = TrainingRecord("tune-1-001", "tune-1", 1);
  record.set_objective(0.25);
  record.set_objective_emissions(7);
  record.set_objective_status("Pending");
  record.set_worker_id("worker-a");
  record.set_next_log_sequence(42);
  record.set_runtime_deadline(1700000123.5);
  ASSERT_THAT(store_->PutTrainingJob(record), IsOk());

  EXPECT_THAT(store_->GetTrainingJob("tune-1-001").value(), EqualsProto(record));
}

TEST_P(StoreContractTest, GetTuningJobReturnsNotFoundWhenMissing) {
  ASSERT_THAT(store_->PutTuningJob(TuningRecord("present")), IsOk());

  EXPECT_THAT(store_->GetTuningJob("missing"),
              StatusIs(absl::StatusCode::kNotFound, "tuning job 'missing' not found"));
}

TEST_P(StoreContractTest, GetTrainingJobReturnsNotFoundWhenMissing) {
  EXPECT_THAT(store_->GetTrainingJob("missing"),
              StatusIs(absl::StatusCode::kNotFound, "training job 'missing' not found"));
}

TEST_P(StoreContractTest, TuningAndTrainingNamesAreSeparate) {
  ASSERT_THAT(store_->PutTuningJob(TuningRecord("same")), IsOk());

  EXPECT_THAT(store_->GetTrainingJob("same"),
              StatusIs(absl::StatusCode::kNotFound, "training job 'same' not found"));
}

TEST_P(StoreContractTest, PutTuningJobReplacesRecordWithSameName) {
  ASSERT_THAT(store_->PutTuningJob(TuningRecord("tune-1", 1)), IsOk());
  v1::TuningJobRecord updated = TuningRecord("tune-1", 2);
  updated.mutable_describe()->set_hyper_parameter_tuning_job_status("Stopping");
  ASSERT_THAT(store_->PutTuningJob(updated), IsOk());

  EXPECT_THAT(store_->GetTuningJob("tune-1").value(), EqualsProto(updated));
  EXPECT_THAT(TuningNames(), ElementsAre("tune-1"));
}

TEST_P(StoreContractTest, PutTrainingJobReplacesRecordWithSameName) {
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("job")), IsOk());
  v1::TrainingJobRecord updated = TrainingRecord("job");
  updated.mutable_describe()->set_training_job_status("Completed");
  updated.clear_tuned_hyperparameters();
  ASSERT_THAT(store_->PutTrainingJob(updated), IsOk());

  EXPECT_THAT(store_->GetTrainingJob("job").value(), EqualsProto(updated));
  EXPECT_THAT(TrainingNames(store_->ListTrainingJobs()), ElementsAre("job"));
}

TEST_P(StoreContractTest, TuningJobNamesAreCaseInsensitive) {
  ASSERT_THAT(store_->PutTuningJob(TuningRecord("abc", 1)), IsOk());
  EXPECT_THAT(store_->GetTuningJob("ABC").value(), EqualsProto(TuningRecord("abc", 1)));

  ASSERT_THAT(store_->PutTuningJob(TuningRecord("ABC", 2)), IsOk());

  EXPECT_THAT(store_->GetTuningJob("abc").value(), EqualsProto(TuningRecord("ABC", 2)));
  EXPECT_THAT(TuningNames(), ElementsAre("ABC"));
}

TEST_P(StoreContractTest, TrainingJobNamesAreCaseInsensitive) {
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("job-a")), IsOk());
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("JOB-A", "", 9)), IsOk());

  EXPECT_THAT(store_->GetTrainingJob("Job-A").value(), EqualsProto(TrainingRecord("JOB-A", "", 9)));
  EXPECT_THAT(TrainingNames(store_->ListTrainingJobs()), ElementsAre("JOB-A"));
}

TEST_P(StoreContractTest, ListTuningJobsKeepsCreationOrderWhenRecordsAreReplaced) {
  ASSERT_THAT(store_->PutTuningJob(TuningRecord("b")), IsOk());
  ASSERT_THAT(store_->PutTuningJob(TuningRecord("a")), IsOk());
  ASSERT_THAT(store_->PutTuningJob(TuningRecord("c")), IsOk());
  ASSERT_THAT(store_->PutTuningJob(TuningRecord("B", 5)), IsOk());

  EXPECT_THAT(TuningNames(), ElementsAre("B", "a", "c"));
  EXPECT_EQ(store_->ListTuningJobs().value()[0].launched(), 5);
}

TEST_P(StoreContractTest, ListTrainingJobsReturnsStandaloneAndTunedJobsInCreationOrder) {
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("z-standalone")), IsOk());
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("t-002", "t", 2)), IsOk());
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("t-001", "t", 1)), IsOk());
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("z-standalone")), IsOk());

  EXPECT_THAT(TrainingNames(store_->ListTrainingJobs()),
              ElementsAre("z-standalone", "t-002", "t-001"));
}

TEST_P(StoreContractTest, ListTrainingJobsForTuningJobReturnsOnlyItsJobsByIndex) {
  ASSERT_THAT(store_->PutTuningJob(TuningRecord("t")), IsOk());
  ASSERT_THAT(store_->PutTuningJob(TuningRecord("other")), IsOk());
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("t-003", "t", 3)), IsOk());
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("other-001", "other", 1)), IsOk());
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("t-001", "t", 1)), IsOk());
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("standalone")), IsOk());
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("t-002", "T", 2)), IsOk());

  EXPECT_THAT(TrainingNames(store_->ListTrainingJobsForTuningJob("t")),
              ElementsAre("t-001", "t-002", "t-003"));
  EXPECT_THAT(TrainingNames(store_->ListTrainingJobsForTuningJob("T")),
              ElementsAre("t-001", "t-002", "t-003"));
  EXPECT_THAT(TrainingNames(store_->ListTrainingJobsForTuningJob("other")),
              ElementsAre("other-001"));
}

TEST_P(StoreContractTest, ListTrainingJobsForTuningJobOrdersEqualIndexesByCreation) {
  ASSERT_THAT(store_->PutTuningJob(TuningRecord("t")), IsOk());
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("t-b", "t", 1)), IsOk());
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("t-a", "t", 1)), IsOk());

  EXPECT_THAT(TrainingNames(store_->ListTrainingJobsForTuningJob("t")), ElementsAre("t-b", "t-a"));
}

TEST_P(StoreContractTest, ListTrainingJobsForTuningJobFollowsAReplacedIndex) {
  ASSERT_THAT(store_->PutTuningJob(TuningRecord("t")), IsOk());
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("t-x", "t", 1)), IsOk());
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("t-y", "t", 2)), IsOk());
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("t-x", "t", 3)), IsOk());

  EXPECT_THAT(TrainingNames(store_->ListTrainingJobsForTuningJob("t")), ElementsAre("t-y", "t-x"));
}

TEST_P(StoreContractTest, ListTrainingJobsForTuningJobIsEmptyWhenNoneLaunched) {
  ASSERT_THAT(store_->PutTuningJob(TuningRecord("t")), IsOk());

  EXPECT_THAT(store_->ListTrainingJobsForTuningJob("t").value(), IsEmpty());
}

TEST_P(StoreContractTest, ListTrainingJobsForTuningJobReturnsNotFoundWhenTuningJobMissing) {
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("orphan-001", "orphan", 1)), IsOk());

  EXPECT_THAT(store_->ListTrainingJobsForTuningJob("orphan"),
              StatusIs(absl::StatusCode::kNotFound, "tuning job 'orphan' not found"));
}

TEST_P(StoreContractTest, PutRejectsRecordsWithoutName) {
  EXPECT_THAT(store_->PutTuningJob(v1::TuningJobRecord()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "tuning job record has no HyperParameterTuningJobName"));
  EXPECT_THAT(
      store_->PutTrainingJob(v1::TrainingJobRecord()),
      StatusIs(absl::StatusCode::kInvalidArgument, "training job record has no TrainingJobName"));
  EXPECT_THAT(
      store_->CommitTrainingJobProgress(v1::TrainingJobRecord(), {}, {}),
      StatusIs(absl::StatusCode::kInvalidArgument, "training job record has no TrainingJobName"));
  EXPECT_THAT(store_->ListTuningJobs().value(), IsEmpty());
  EXPECT_THAT(store_->ListTrainingJobs().value(), IsEmpty());
}

TEST_P(StoreContractTest, CommitTrainingJobProgressStoresRecordLogsAndMetrics) {
  v1::TrainingJobRecord record = TrainingRecord("job", "t", 1);
  record.set_next_log_sequence(2);
  record.set_objective(0.5);
  record.set_objective_emissions(1);
  const std::vector<LogEntry> logs = {{0, 1700000000.25, "epoch 1"}, {1, 1700000001.5, "loss=0.5"}};

  ASSERT_THAT(store_->CommitTrainingJobProgress(record, logs, {Point("loss", 0.5, 1)}), IsOk());

  EXPECT_THAT(store_->GetTrainingJob("job").value(), EqualsProto(record));
  EXPECT_EQ(store_->ReadLogs("job", 0, 100).value(), logs);
  EXPECT_THAT(store_->ReadMetrics("job").value(), ElementsAre(EqualsProto(Point("loss", 0.5, 1))));
}

TEST_P(StoreContractTest, KeepsEachLinesHostAndReadsOneHostsLines) {
  v1::TrainingJobRecord record = TrainingRecord("job", "t", 1);
  record.set_next_log_sequence(4);
  const std::vector<LogEntry> logs = {{0, 1.0, "a1", "algo-1"},
                                      {1, 2.0, "b2", "algo-2"},
                                      {2, 3.0, "c1", "algo-1"},
                                      {3, 4.0, "d2", "algo-2"}};
  ASSERT_THAT(store_->CommitTrainingJobProgress(record, logs, {}), IsOk());
  EXPECT_EQ(store_->ReadLogs("job", 0, 10).value(), logs);
  EXPECT_EQ(store_->ReadHostLogs("job", "algo-2", 0, 10).value(),
            (std::vector<LogEntry>{logs[1], logs[3]}));
  // From a sequence on, at most `limit` of that host's lines.
  EXPECT_EQ(store_->ReadHostLogs("JOB", "algo-1", 1, 1).value(), (std::vector<LogEntry>{logs[2]}));
  EXPECT_THAT(store_->ReadHostLogs("job", "algo-3", 0, 10).value(), IsEmpty());
  EXPECT_THAT(store_->ReadHostLogs("nope", "algo-1", 0, 10),
              StatusIs(absl::StatusCode::kNotFound, "training job 'nope' not found"));
}

TEST_P(StoreContractTest, CommitTrainingJobProgressAppendsToEarlierCommits) {
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("job")), IsOk());
  v1::TrainingJobRecord first = TrainingRecord("job");
  first.set_next_log_sequence(1);
  ASSERT_THAT(store_->CommitTrainingJobProgress(first, {{0, 1.0, "a"}}, {Point("acc", 0.1, 0)}),
              IsOk());
  v1::TrainingJobRecord second = TrainingRecord("job");
  second.set_next_log_sequence(3);
  second.set_objective_emissions(2);
  ASSERT_THAT(store_->CommitTrainingJobProgress(second, {{1, 2.0, "b"}, {2, 3.0, "c"}},
                                                {Point("acc", 0.2, 1), Point("acc", 0.3, 2)}),
              IsOk());

  EXPECT_THAT(store_->GetTrainingJob("job").value(), EqualsProto(second));
  EXPECT_EQ(store_->ReadLogs("job", 0, 10).value(),
            (std::vector<LogEntry>{{0, 1.0, "a"}, {1, 2.0, "b"}, {2, 3.0, "c"}}));
  EXPECT_THAT(store_->ReadMetrics("job").value(),
              ElementsAre(EqualsProto(Point("acc", 0.1, 0)), EqualsProto(Point("acc", 0.2, 1)),
                          EqualsProto(Point("acc", 0.3, 2))));
}

TEST_P(StoreContractTest, CommitTrainingJobProgressWritesNothingWhenALogSequenceIsStored) {
  v1::TrainingJobRecord first = TrainingRecord("job");
  first.set_next_log_sequence(2);
  ASSERT_THAT(store_->CommitTrainingJobProgress(first, {{0, 1.0, "a"}, {1, 2.0, "b"}},
                                                {Point("acc", 0.1, 1)}),
              IsOk());
  v1::TrainingJobRecord second = TrainingRecord("job");
  second.set_next_log_sequence(3);

  EXPECT_THAT(store_->CommitTrainingJobProgress(second, {{2, 3.0, "c"}, {1, 3.0, "again"}},
                                                {Point("acc", 0.9, 2)}),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       "log line 1 of training job 'job' already stored"));

  EXPECT_THAT(store_->GetTrainingJob("job").value(), EqualsProto(first));
  EXPECT_THAT(Sequences(store_->ReadLogs("job", 0, 10)), ElementsAre(0, 1));
  EXPECT_THAT(store_->ReadMetrics("job").value(), ElementsAre(EqualsProto(Point("acc", 0.1, 1))));
}

TEST_P(StoreContractTest, CommitTrainingJobProgressWritesNothingWhenASequenceRepeatsInTheBatch) {
  EXPECT_THAT(store_->CommitTrainingJobProgress(TrainingRecord("job"),
                                                {{0, 1.0, "a"}, {1, 2.0, "b"}, {0, 3.0, "c"}},
                                                {Point("acc", 0.1, 0)}),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       "log line 0 of training job 'job' already stored"));

  EXPECT_THAT(store_->GetTrainingJob("job"),
              StatusIs(absl::StatusCode::kNotFound, "training job 'job' not found"));
  EXPECT_THAT(store_->ListTrainingJobs().value(), IsEmpty());
}

TEST_P(StoreContractTest, CommitTrainingJobProgressMatchesJobNameCaseInsensitively) {
  ASSERT_THAT(CommitLines("job", 0, 2), IsOk());
  v1::TrainingJobRecord record = TrainingRecord("JOB");
  record.set_next_log_sequence(3);
  ASSERT_THAT(store_->CommitTrainingJobProgress(record, {{2, 5.0, "c"}}, {}), IsOk());

  EXPECT_THAT(Sequences(store_->ReadLogs("Job", 0, 10)), ElementsAre(0, 1, 2));
  EXPECT_THAT(store_->CommitTrainingJobProgress(TrainingRecord("jOb"), {{1, 5.0, "x"}}, {}),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       "log line 1 of training job 'jOb' already stored"));
}

TEST_P(StoreContractTest, ReadLogsHonoursFromAndLimit) {
  ASSERT_THAT(CommitLines("job", 0, 10), IsOk());

  EXPECT_THAT(Sequences(store_->ReadLogs("job", 3, 4)), ElementsAre(3, 4, 5, 6));
  EXPECT_THAT(Sequences(store_->ReadLogs("job", 8, 10)), ElementsAre(8, 9));
  EXPECT_THAT(Sequences(store_->ReadLogs("job", -5, 2)), ElementsAre(0, 1));
  EXPECT_THAT(store_->ReadLogs("job", 10, 10).value(), IsEmpty());
  EXPECT_THAT(store_->ReadLogs("job", 0, 0).value(), IsEmpty());
}

TEST_P(StoreContractTest, ReadLogsReturnsLinesInSequenceOrderWhateverTheCommitOrder) {
  ASSERT_THAT(CommitLines("job", 5, 7), IsOk());
  ASSERT_THAT(CommitLines("job", 0, 2), IsOk());

  EXPECT_THAT(Sequences(store_->ReadLogs("job", 0, 10)), ElementsAre(0, 1, 5, 6));
  EXPECT_THAT(Sequences(store_->ReadLogs("job", 2, 10)), ElementsAre(5, 6));
}

TEST_P(StoreContractTest, ReadLogsRejectsNegativeLimit) {
  ASSERT_THAT(CommitLines("job", 0, 1), IsOk());

  EXPECT_THAT(store_->ReadLogs("job", 0, -1),
              StatusIs(absl::StatusCode::kInvalidArgument, "log limit must be >= 0, got -1"));
}

TEST_P(StoreContractTest, ReadLogsKeepsEachJobsLinesApart) {
  ASSERT_THAT(CommitLines("job-a", 0, 3), IsOk());
  ASSERT_THAT(CommitLines("job-b", 0, 1), IsOk());

  EXPECT_THAT(Sequences(store_->ReadLogs("job-a", 0, 10)), ElementsAre(0, 1, 2));
  EXPECT_EQ(store_->ReadLogs("job-b", 0, 10).value(),
            (std::vector<LogEntry>{{0, 1700000000.0, "line 0"}}));
}

TEST_P(StoreContractTest, ReadLogsIsEmptyForAJobWithoutLogs) {
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("quiet")), IsOk());

  EXPECT_THAT(store_->ReadLogs("quiet", 0, 10).value(), IsEmpty());
  EXPECT_THAT(store_->ReadMetrics("quiet").value(), IsEmpty());
}

TEST_P(StoreContractTest, ReadLogsAndMetricsReturnNotFoundForUnknownJob) {
  EXPECT_THAT(store_->ReadLogs("ghost", 0, 10),
              StatusIs(absl::StatusCode::kNotFound, "training job 'ghost' not found"));
  EXPECT_THAT(store_->ReadMetrics("ghost"),
              StatusIs(absl::StatusCode::kNotFound, "training job 'ghost' not found"));
}

TEST_P(StoreContractTest, LogMessagesKeepTheirBytes) {
  const std::string binary("nul\0byte \xff\xfe end", 15);
  ASSERT_THAT(store_->CommitTrainingJobProgress(TrainingRecord("job"),
                                                {{0, 1.0, ""}, {1, 2.0, binary}}, {}),
              IsOk());

  EXPECT_EQ(store_->ReadLogs("job", 0, 10).value(),
            (std::vector<LogEntry>{{0, 1.0, ""}, {1, 2.0, binary}}));
}

TEST_P(StoreContractTest, ReadMetricsKeepsEmissionOrder) {
  ASSERT_THAT(
      store_->CommitTrainingJobProgress(
          TrainingRecord("job"), {},
          {Point("val:loss", 0.9, 4), Point("train:loss", 1.5, 4), Point("val:loss", 0.7, 3)}),
      IsOk());
  ASSERT_THAT(store_->CommitTrainingJobProgress(TrainingRecord("job"), {}, {Point("acc", -2.5, 1)}),
              IsOk());

  EXPECT_THAT(
      store_->ReadMetrics("job").value(),
      ElementsAre(EqualsProto(Point("val:loss", 0.9, 4)), EqualsProto(Point("train:loss", 1.5, 4)),
                  EqualsProto(Point("val:loss", 0.7, 3)), EqualsProto(Point("acc", -2.5, 1))));
}

TEST_P(StoreContractTest, ReadMetricsKeepsNonFiniteValues) {
  ASSERT_THAT(
      store_->CommitTrainingJobProgress(
          TrainingRecord("job"), {}, {Point("loss", std::nan(""), 0), Point("loss", INFINITY, 1)}),
      IsOk());

  absl::StatusOr<std::vector<v1::MetricPoint>> points = store_->ReadMetrics("job");
  ASSERT_THAT(points, IsOk());
  ASSERT_EQ(points->size(), 2u);
  EXPECT_TRUE(std::isnan((*points)[0].value()));
  EXPECT_EQ((*points)[1].value(), INFINITY);
}

TEST_P(StoreContractTest, CommitTuningStepWritesTheTuningJobAndItsTrainingJobs) {
  ASSERT_THAT(store_->PutTuningJob(TuningRecord("t", 0)), IsOk());
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("t-001", "t", 1)), IsOk());
  v1::TrainingJobRecord finished = TrainingRecord("t-001", "t", 1);
  finished.mutable_describe()->set_training_job_status("Completed");
  const v1::TrainingJobRecord launched = TrainingRecord("t-002", "t", 2);
  v1::TuningJobRecord tuning = TuningRecord("t", 2);
  tuning.set_finished(1);

  ASSERT_THAT(store_->CommitTuningStep(tuning, {finished, launched}), IsOk());

  EXPECT_THAT(store_->GetTuningJob("t").value(), EqualsProto(tuning));
  EXPECT_THAT(store_->ListTrainingJobsForTuningJob("t").value(),
              ElementsAre(EqualsProto(finished), EqualsProto(launched)));
}

TEST_P(StoreContractTest, CommitTuningStepWithoutTrainingJobsWritesTheTuningJob) {
  ASSERT_THAT(store_->CommitTuningStep(TuningRecord("t", 0), {}), IsOk());

  EXPECT_THAT(store_->GetTuningJob("t").value(), EqualsProto(TuningRecord("t", 0)));
}

TEST_P(StoreContractTest, CommitTuningStepWritesNothingWhenATrainingRecordIsInvalid) {
  ASSERT_THAT(store_->PutTuningJob(TuningRecord("t", 0)), IsOk());

  EXPECT_THAT(
      store_->CommitTuningStep(TuningRecord("t", 2),
                               {TrainingRecord("t-001", "t", 1), v1::TrainingJobRecord()}),
      StatusIs(absl::StatusCode::kInvalidArgument, "training job record has no TrainingJobName"));

  EXPECT_THAT(store_->GetTuningJob("t").value(), EqualsProto(TuningRecord("t", 0)));
  EXPECT_THAT(store_->ListTrainingJobs().value(), IsEmpty());
}

TEST_P(StoreContractTest, CommitTuningStepRejectsANamelessTuningRecord) {
  EXPECT_THAT(store_->CommitTuningStep(v1::TuningJobRecord(), {TrainingRecord("t-001", "t", 1)}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "tuning job record has no HyperParameterTuningJobName"));

  EXPECT_THAT(store_->ListTrainingJobs().value(), IsEmpty());
}

TEST_P(StoreContractTest, DeleteTuningJobRemovesItAndPutsItsUnlinkedTrainingJobs) {
  ASSERT_THAT(store_->PutTuningJob(TuningRecord("tune")), IsOk());
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("tune-001", "tune", 1)), IsOk());
  ASSERT_THAT(store_->PutTuningJob(TuningRecord("other")), IsOk());
  v1::TrainingJobRecord unlinked = TrainingRecord("tune-001", "", 1);

  ASSERT_THAT(store_->DeleteTuningJob("TUNE", {unlinked}), IsOk());

  EXPECT_THAT(TuningNames(), ElementsAre("other"));
  EXPECT_THAT(store_->GetTuningJob("tune").status(),
              StatusIs(absl::StatusCode::kNotFound, "tuning job 'tune' not found"));
  EXPECT_THAT(store_->GetTrainingJob("tune-001").value(), EqualsProto(unlinked));
  // The name is free again, and the old training job is not the new tuning job's.
  ASSERT_THAT(store_->PutTuningJob(TuningRecord("tune")), IsOk());
  EXPECT_THAT(store_->ListTrainingJobsForTuningJob("tune").value(), IsEmpty());
  EXPECT_THAT(store_->DeleteTuningJob("missing", {}),
              StatusIs(absl::StatusCode::kNotFound, "tuning job 'missing' not found"));
}

TEST_P(StoreContractTest, DeleteTrainingJobRemovesItsRecordLogsAndMetrics) {
  ASSERT_THAT(store_->CommitTrainingJobProgress(TrainingRecord("job"), {{0, 1.0, "loss=0.5"}},
                                                {Point("loss", 0.5, 0)}),
              IsOk());
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("kept")), IsOk());

  ASSERT_THAT(store_->DeleteTrainingJob("Job"), IsOk());

  EXPECT_THAT(TrainingNames(store_->ListTrainingJobs()), ElementsAre("kept"));
  EXPECT_THAT(store_->ReadLogs("job", 0, 10).status(),
              StatusIs(absl::StatusCode::kNotFound, "training job 'job' not found"));
  // A new job of that name starts with no log lines or metric points of the old one.
  ASSERT_THAT(store_->PutTrainingJob(TrainingRecord("job")), IsOk());
  EXPECT_THAT(store_->ReadLogs("job", 0, 10).value(), IsEmpty());
  EXPECT_THAT(store_->ReadMetrics("job").value(), IsEmpty());
  EXPECT_THAT(store_->DeleteTrainingJob("missing"),
              StatusIs(absl::StatusCode::kNotFound, "training job 'missing' not found"));
}

TEST_P(StoreContractTest, WritesOfABatchAreReadableInItAndKeptAfterItsCommit) {
  ASSERT_THAT(store_->BeginBatch(), IsOk());
  ASSERT_THAT(store_->PutTuningJob(TuningRecord("tune")), IsOk());
  ASSERT_THAT(store_->CommitTuningStep(TuningRecord("tune", 2), {TrainingRecord("job")}), IsOk());
  ASSERT_THAT(CommitLines("job", 0, 2), IsOk());
  EXPECT_THAT(Sequences(store_->ReadLogs("job", 0, 10)), ElementsAre(0, 1));
  ASSERT_THAT(store_->CommitBatch(), IsOk());
  EXPECT_THAT(TuningNames(), ElementsAre("tune"));
  EXPECT_THAT(TrainingNames(store_->ListTrainingJobs()), ElementsAre("job"));
  EXPECT_THAT(Sequences(store_->ReadLogs("job", 0, 10)), ElementsAre(0, 1));
}

TEST_P(StoreContractTest, AFailedWriteInABatchChangesNothingAndTheOthersAreCommitted) {
  ASSERT_THAT(store_->BeginBatch(), IsOk());
  ASSERT_THAT(CommitLines("job", 0, 2), IsOk());
  EXPECT_THAT(CommitLines("job", 1, 3),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       "log line 1 of training job 'job' already stored"));
  ASSERT_THAT(CommitLines("other", 0, 1), IsOk());
  ASSERT_THAT(store_->CommitBatch(), IsOk());
  EXPECT_THAT(Sequences(store_->ReadLogs("job", 0, 10)), ElementsAre(0, 1));
  EXPECT_EQ(store_->GetTrainingJob("job").value().next_log_sequence(), 2);
  EXPECT_THAT(TrainingNames(store_->ListTrainingJobs()), ElementsAre("job", "other"));
}

TEST_P(StoreContractTest, BatchesDoNotNest) {
  EXPECT_THAT(store_->CommitBatch(),
              StatusIs(absl::StatusCode::kFailedPrecondition, "no batch is open to commit"));
  ASSERT_THAT(store_->BeginBatch(), IsOk());
  EXPECT_THAT(store_->BeginBatch(),
              StatusIs(absl::StatusCode::kFailedPrecondition, "a batch is already open"));
  ASSERT_THAT(store_->CommitBatch(), IsOk());
  ASSERT_THAT(store_->BeginBatch(), IsOk());  // a new one after the commit
  ASSERT_THAT(store_->CommitBatch(), IsOk());
}

INSTANTIATE_TEST_SUITE_P(
    Implementations, StoreContractTest,
    ::testing::Values(
        Implementation{"Sqlite", [](const std::string& dir) { return OpenSqliteStore(dir); }},
        Implementation{"SqliteNormalSync",
                       [](const std::string& dir) {
                         return OpenSqliteStore(dir, SqliteOptions{.full_sync = false});
                       }},
        Implementation{"InMemory",
                       [](const std::string&) -> absl::StatusOr<std::unique_ptr<Store>> {
                         return NewInMemoryStore();
                       }}),
    [](const ::testing::TestParamInfo<Implementation>& info) { return info.param.name; });

}  // namespace
}  // namespace amt::store
