// The orchestrator's one persist path, driven through a store that fails on demand: every write
// site refuses or keeps what it could not write, nothing is acknowledged unsaved, and amtd
// recovers by itself once writes succeed again.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "google/protobuf/util/message_differencer.h"
#include "tests/unit/core/orchestrator_fixture.h"

namespace amt::core {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

constexpr char kStoreError[] = "injected store failure: disk full";

class PersistenceTest : public OrchestratorTest {
 protected:
  // The stored record of a training job, as Describe shows it.
  v1::DescribeTrainingJobResponse Stored(const std::string& name) {
    auto record = store_->GetTrainingJob(name);
    EXPECT_TRUE(record.ok()) << record.status();
    return record.ok() ? record->describe() : v1::DescribeTrainingJobResponse();
  }
  v1::DescribeHyperParameterTuningJobResponse StoredTuning(const std::string& name = "demo") {
    auto record = store_->GetTuningJob(name);
    EXPECT_TRUE(record.ok()) << record.status();
    return record.ok() ? record->describe() : v1::DescribeHyperParameterTuningJobResponse();
  }
  // What the orchestrator shows is what the store holds.
  void ExpectSaved(const std::string& training_job) {
    auto shown = orch_->DescribeTrainingJob(training_job);
    ASSERT_TRUE(shown.ok());
    EXPECT_TRUE(MessageDifferencer::Equals(Stored(training_job), *shown))
        << Stored(training_job).DebugString() << "\nvs\n"
        << shown->DebugString();
  }
  // A mutating request is refused while amtd is degraded.
  void ExpectRefused() {
    auto refused = orch_->CreateTrainingJob(SoloJob("probe"));
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(std::string(refused.status().message()),
                HasSubstr("amtd cannot write its state store"));
  }
  // A tuning job on a worker of two slots whose first trial started and logged its objective:
  // the worker's link, and that trial's StartJob.
  std::pair<std::shared_ptr<FakeWorkerLink>, v1::StartJob> FirstTrialLogged() {
    EXPECT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());
    auto link = Connect(2);
    const auto first = link->Starts().at(0);
    Started(first);
    Log(first, {"val_loss=0.5"});
    return {link, first};
  }
  // A standalone job "solo" whose worker reported its start (seq 1): that worker's link.
  std::shared_ptr<FakeWorkerLink> SoloStarted() {
    EXPECT_TRUE(orch_->CreateTrainingJob(SoloJob()).ok());
    auto link = Connect(1);
    v1::WorkerMessage started;
    started.set_seq(1);
    started.mutable_started()->set_training_job_name("solo");
    started.mutable_started()->set_attempt(1);
    orch_->OnWorkerReport("w1", link.get(), started);
    return link;
  }
  // Heals the store and lets the retry timer write what was kept.
  void Heal() {
    faulty_.FailWrites(false);
    timers_.Advance(1);
  }
};

TEST_F(PersistenceTest, CreateTuningJobWhoseWriteFailsIsRefusedAndNotKept) {
  faulty_.FailWrites(true);
  auto created = orch_->CreateTuningJob(TuningRequest());
  EXPECT_EQ(created.status(), absl::InternalError(kStoreError));
  EXPECT_EQ(orch_->DescribeTuningJob("demo").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Connect(4)->Starts().size(), 0u);
  ExpectRefused();  // until a retry finds the store writable
  Heal();
  ASSERT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());  // the name is free: nothing kept
  EXPECT_EQ(StoredTuning().hyper_parameter_tuning_job_status(), "InProgress");
}

TEST_F(PersistenceTest, CreateTrainingJobWhoseWriteFailsIsRefusedAndNotKept) {
  faulty_.FailWrites(true);
  EXPECT_EQ(orch_->CreateTrainingJob(SoloJob()).status(), absl::InternalError(kStoreError));
  EXPECT_EQ(orch_->DescribeTrainingJob("solo").status().code(),
            absl::StatusCode::kInvalidArgument);  // SageMaker's "Requested resource not found."
  Heal();
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob()).ok());
  ExpectSaved("solo");
}

TEST_F(PersistenceTest, StopTrainingJobWhoseWriteFailsIsNotAcknowledgedAndIsSavedLater) {
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob()).ok());
  auto link = Connect(1);
  ASSERT_THAT(link->Starts(), SizeIs(1));
  Started(link->Starts()[0]);
  faulty_.FailWrites(true);
  EXPECT_EQ(orch_->StopTrainingJob("solo"), absl::InternalError(kStoreError));
  EXPECT_EQ(Stored("solo").training_job_status(), "InProgress");  // what was acknowledged
  ExpectRefused();
  EXPECT_THAT(log_, ElementsAre(HasSubstr("the state store failed (" + std::string(kStoreError))));
  timers_.Advance(5);  // still failing: still refused, nothing lost
  ExpectRefused();
  Heal();
  ExpectSaved("solo");
  EXPECT_EQ(Stored("solo").training_job_status(), "Stopping");
  EXPECT_THAT(log_, SizeIs(2));
  EXPECT_THAT(log_[1], HasSubstr("accepts writes again"));
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob("after")).ok());
}

TEST_F(PersistenceTest, StopTuningJobWhoseWriteFailsIsNotAcknowledgedAndIsSavedLater) {
  ASSERT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());
  auto link = Connect(2);
  ASSERT_THAT(link->Starts(), SizeIs(2));
  faulty_.FailWrites(true);
  EXPECT_EQ(orch_->StopTuningJob("demo"), absl::InternalError(kStoreError));
  EXPECT_EQ(StoredTuning().hyper_parameter_tuning_job_status(), "InProgress");
  EXPECT_EQ(orch_->StopTuningJob("demo").code(), absl::StatusCode::kOk);  // already Stopping
  for (const auto& s : link->Starts()) Exit(s, 0);
  EXPECT_EQ(Describe().hyper_parameter_tuning_job_status(), "Stopped");
  EXPECT_EQ(StoredTuning().hyper_parameter_tuning_job_status(), "InProgress");
  Heal();
  EXPECT_TRUE(MessageDifferencer::Equals(StoredTuning(), Describe()));
  for (const auto& s : link->Starts()) ExpectSaved(s.training_job_name());
}

TEST_F(PersistenceTest, LaunchWhoseWriteFailsIsNotMadeAndResumesWhenTheStoreRecovers) {
  ASSERT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());
  faulty_.FailWrites(true);
  auto link = Connect(2);
  EXPECT_THAT(link->Starts(), SizeIs(0));
  EXPECT_EQ(Describe().training_job_status_counters().in_progress(), 0);
  timers_.Advance(3);  // still failing: nothing launched
  EXPECT_THAT(link->Starts(), SizeIs(0));
  Heal();
  ASSERT_THAT(link->Starts(), SizeIs(2));  // progress resumes by itself
  EXPECT_EQ(StoredTuning().training_job_status_counters().in_progress(), 2);
  for (const auto& s : link->Starts()) ExpectSaved(s.training_job_name());
}

TEST_F(PersistenceTest, LaunchOfAnAcceptedJobWhoseWriteFailsIsSentOnlyOnceSaved) {
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob()).ok());
  faulty_.FailWrites(true);
  auto link = Connect(1);
  EXPECT_THAT(link->Starts(), IsEmpty());  // decided, not sent: its record is not durable
  EXPECT_EQ(orch_->DescribeTrainingJob("solo")->secondary_status(), "Starting");
  timers_.Advance(2);  // the retries fail too: still not sent
  EXPECT_THAT(link->Starts(), IsEmpty());
  Heal();
  ASSERT_THAT(link->Starts(), SizeIs(1));  // accepted before: it runs, once saved
  EXPECT_EQ(link->Starts()[0].attempt(), 1);
  ExpectSaved("solo");
  EXPECT_EQ(Stored("solo").secondary_status(), "Starting");
  EXPECT_EQ(orch_->DescribeTrainingJob("solo")->secondary_status_transitions_size(),
            Stored("solo").secondary_status_transitions_size());
  timers_.Advance(2);
  EXPECT_THAT(link->Starts(), SizeIs(1));
}

TEST_F(PersistenceTest, AStopOfAJobWhoseLaunchIsNotSavedFollowsItsStartJob) {
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob()).ok());  // MaxRuntimeInSeconds 30
  faulty_.FailWrites(true);
  auto link = Connect(1);
  timers_.Advance(31);  // the runtime limit stops it while its StartJob waits for the store
  EXPECT_THAT(link->sent, IsEmpty());
  Heal();
  ASSERT_THAT(link->sent, SizeIs(2));
  EXPECT_TRUE(link->sent[0].has_start());  // in order: a StopJob never overtakes its StartJob
  EXPECT_TRUE(link->sent[1].has_stop());
  EXPECT_EQ(Stored("solo").training_job_status(), "Stopping");
}

TEST_F(PersistenceTest, ALostWorkerWhoseJobsCannotBeWrittenIsSavedLater) {
  auto solo = SoloJob();
  solo.mutable_stopping_condition()->set_max_runtime_in_seconds(1000);
  ASSERT_TRUE(orch_->CreateTrainingJob(solo).ok());
  auto link = Connect(1);
  Started(link->Starts().at(0));
  orch_->OnWorkerDisconnected("w1", link.get());
  faulty_.FailWrites(true);
  timers_.Advance(61);  // worker_lost_timeout_seconds
  EXPECT_EQ(orch_->DescribeTrainingJob("solo")->training_job_status(), "Failed");
  EXPECT_EQ(Stored("solo").training_job_status(), "InProgress");
  Heal();
  ExpectSaved("solo");
  EXPECT_EQ(Stored("solo").failure_reason(),
            "InternalServerError: The worker running this training job was lost.");
}

TEST_F(PersistenceTest, ASpotInterruptionWhoseWriteFailsIsSavedLater) {
  spot_.mean_seconds_to_interruption = 5;
  spot_.max_interruptions = 1;
  Rebuild();
  v1::CreateTrainingJobRequest spot = SoloJob("spot");
  spot.set_enable_managed_spot_training(true);
  spot.mutable_stopping_condition()->set_max_runtime_in_seconds(100000);
  ASSERT_TRUE(orch_->CreateTrainingJob(spot).ok());
  auto link = Connect(1);
  Started(link->Starts().at(0));
  faulty_.FailWrites(true);
  timers_.Advance(*spot::InterruptionAfter(spot_, 99, "spot", 1, 0) + 1);
  ASSERT_THAT(link->Stops(), SizeIs(1));
  Exit(link->Starts().at(0), 143);
  EXPECT_EQ(orch_->DescribeTrainingJob("spot")->secondary_status(), "Starting");
  Heal();
  ExpectSaved("spot");
  ASSERT_THAT(link->Starts(), SizeIs(2));  // relaunched once writes succeed
}

TEST_F(PersistenceTest, WorkerReportsAreKeptInOrderAndWrittenWhenTheStoreRecovers) {
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob()).ok());
  auto link = Connect(1);
  const auto start = link->Starts().at(0);
  faulty_.FailWrites(true);
  Started(start);  // JobStarted
  Log(start, {"loss=0.5", "text"});
  Log(start, {"loss=0.25"});
  Exit(start, 0);  // JobExited
  EXPECT_EQ(orch_->DescribeTrainingJob("solo")->training_job_status(), "Completed");
  EXPECT_EQ(Stored("solo").training_job_status(), "InProgress");
  EXPECT_THAT(*store_->ReadLogs("solo", 0, 10), SizeIs(0));
  ExpectRefused();
  Heal();
  ExpectSaved("solo");
  auto logs = store_->ReadLogs("solo", 0, 10);
  ASSERT_TRUE(logs.ok());
  ASSERT_THAT(*logs, SizeIs(3));
  EXPECT_EQ((*logs)[0].sequence, 0);
  EXPECT_EQ((*logs)[0].message, "loss=0.5");
  EXPECT_EQ((*logs)[2].sequence, 2);
  EXPECT_EQ((*logs)[2].message, "loss=0.25");
  auto metrics = store_->ReadMetrics("solo");
  ASSERT_TRUE(metrics.ok());
  ASSERT_THAT(*metrics, SizeIs(2));
  EXPECT_EQ((*metrics)[1].value(), 0.25);
}

TEST_F(PersistenceTest, TimerDrivenStopWhoseWriteFailsIsSavedLater) {
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob()).ok());
  auto link = Connect(1);
  Started(link->Starts().at(0));
  faulty_.FailWrites(true);
  timers_.Advance(31);                    // MaxRuntimeInSeconds 30
  ASSERT_THAT(link->Stops(), SizeIs(1));  // the stop goes ahead
  EXPECT_EQ(Stored("solo").training_job_status(), "InProgress");
  Heal();
  ExpectSaved("solo");
  EXPECT_EQ(Stored("solo").training_job_status(), "Stopping");
}

TEST_F(PersistenceTest, TuningBookkeepingAfterAnExitIsSavedLater) {
  const auto [link, first] = FirstTrialLogged();
  faulty_.FailWrites(true);
  Exit(first, 0);
  EXPECT_EQ(Describe().training_job_status_counters().completed(), 1);
  EXPECT_EQ(StoredTuning().training_job_status_counters().completed(), 0);
  EXPECT_THAT(link->Starts(), SizeIs(2));  // no launch while degraded
  Heal();
  EXPECT_EQ(StoredTuning().training_job_status_counters().completed(), 1);
  EXPECT_EQ(StoredTuning().best_training_job().training_job_name(), first.training_job_name());
  EXPECT_THAT(link->Starts(), SizeIs(3));  // the freed slot is used again
}

TEST_F(PersistenceTest, NothingIsWrittenWhileWritesFailAndEveryRetryIsCounted) {
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob()).ok());
  auto link = Connect(1);
  faulty_.FailWrites(true);
  Started(link->Starts().at(0));
  timers_.Advance(0.5);  // the deferred start's own write, which fails
  const int failed = faulty_.failed_writes();
  timers_.Advance(3);
  EXPECT_EQ(faulty_.failed_writes(), failed + 3);  // one retry a second (store_retry_seconds)
  Heal();
  const int writes = faulty_.writes();
  timers_.Advance(10);
  EXPECT_EQ(faulty_.writes(), writes);  // recovered: no more retries
  EXPECT_EQ(timers_.pending(), 1u);     // only the job's MaxRuntimeInSeconds
}

// The group commit of a worker report (orchestrator.h): a job's end, its tuning job's counters
// and the launch of the next trial are one commit, and the StartJob and the Ack follow it.
v1::WorkerMessage ExitReport(const v1::StartJob& start, uint64_t seq) {
  v1::WorkerMessage m;
  m.set_seq(seq);
  m.mutable_exited()->set_training_job_name(start.training_job_name());
  m.mutable_exited()->set_attempt(start.attempt());
  m.mutable_exited()->set_model_uploaded(true);
  return m;
}

std::vector<uint64_t> Acks(const FakeWorkerLink& link) {
  std::vector<uint64_t> acks;
  for (const auto& m : link.sent) {
    if (m.has_ack()) acks.push_back(m.ack().seq());
  }
  return acks;
}

TEST_F(PersistenceTest, AnExitAndTheLaunchItFreesAreOneCommitThatTheStartJobAndAckFollow) {
  const auto [link, first] = FirstTrialLogged();
  std::vector<bool> sent_in_batch;
  link->on_send = [&](const v1::OrchestratorMessage&) {
    sent_in_batch.push_back(faulty_.in_batch());
  };
  const int commits = faulty_.commits();
  const int writes = faulty_.writes();
  orch_->OnWorkerReport("w1", link.get(), ExitReport(first, 9));
  EXPECT_EQ(faulty_.commits(), commits + 1);
  EXPECT_GE(faulty_.writes() - writes, 3);  // the job's end, the counters, the launch
  ASSERT_THAT(link->Starts(), SizeIs(3));
  EXPECT_THAT(Acks(*link), ElementsAre(9));
  EXPECT_THAT(sent_in_batch, ElementsAre(false, false));  // the StartJob, then the Ack
  EXPECT_EQ(StoredTuning().training_job_status_counters().completed(), 1);
  EXPECT_EQ(Stored(link->Starts().at(2).training_job_name()).training_job_status(), "InProgress");
  ExpectSaved(first.training_job_name());
}

// A StartJob of a group leaves for a worker on amtd's machine once the group is written (a
// power loss that undid it would end that job too) and for any other worker once it is synced;
// the Ack always waits for the sync.
TEST_F(PersistenceTest, ALaunchReachesAWorkerOnThisMachineBeforeTheSyncAndOthersAfterIt) {
  const auto [link, first] = FirstTrialLogged();
  std::vector<std::string> sent;  // what went out, and how many syncs had been made by then
  link->on_send = [&](const v1::OrchestratorMessage& m) {
    sent.push_back((m.has_start() ? "start@"
                    : m.has_ack() ? "ack@"
                                  : "other@") +
                   std::to_string(faulty_.syncs()));
  };
  const int syncs = faulty_.syncs();
  const std::string after = std::to_string(syncs + 1);
  orch_->OnWorkerReport("w1", link.get(), ExitReport(first, 9));  // a remote link
  EXPECT_THAT(sent, ElementsAre("start@" + after, "ack@" + after));
  EXPECT_EQ(faulty_.syncs(), syncs + 1);

  link->same_machine = true;
  const auto second = link->Starts().at(1);
  Started(second);
  const std::string synced_start = std::to_string(faulty_.syncs());
  const std::string two = std::to_string(faulty_.syncs() + 1);
  sent.clear();
  orch_->OnWorkerReport("w1", link.get(), ExitReport(second, 20));
  EXPECT_THAT(sent, ElementsAre("start@" + synced_start, "ack@" + two));
  ASSERT_THAT(link->Starts(), SizeIs(4));
  EXPECT_EQ(Stored(link->Starts().at(3).training_job_name()).training_job_status(), "InProgress");
}

TEST_F(PersistenceTest, ALaunchOnThisMachineIsOutWhenItsSyncFailsAndTheAckWaitsForARetry) {
  const auto [link, first] = FirstTrialLogged();
  link->same_machine = true;
  faulty_.FailSyncs(true);
  orch_->OnWorkerReport("w1", link.get(), ExitReport(first, 9));
  ASSERT_THAT(link->Starts(), SizeIs(3));  // written before the sync was tried
  EXPECT_EQ(Stored(link->Starts().at(2).training_job_name()).training_job_status(), "InProgress");
  EXPECT_THAT(Acks(*link), IsEmpty());
  ExpectRefused();
  timers_.Advance(1);  // the retry's sync fails too
  EXPECT_THAT(Acks(*link), IsEmpty());
  faulty_.FailSyncs(false);
  timers_.Advance(1);
  EXPECT_THAT(Acks(*link), ElementsAre(9));
  EXPECT_THAT(link->Starts(), SizeIs(3));  // nothing sent twice
  EXPECT_EQ(StoredTuning().training_job_status_counters().completed(), 1);
  ExpectSaved(first.training_job_name());
}

TEST_F(PersistenceTest, AReportWhoseGroupCommitFailsIsNotAcknowledgedAndIsWrittenLater) {
  const auto [link, first] = FirstTrialLogged();
  faulty_.FailCommits(true);
  orch_->OnWorkerReport("w1", link.get(), ExitReport(first, 9));
  EXPECT_THAT(Acks(*link), IsEmpty());
  EXPECT_EQ(Describe().training_job_status_counters().completed(), 1);  // applied in memory
  EXPECT_EQ(StoredTuning().training_job_status_counters().completed(), 0);
  EXPECT_EQ(Stored(first.training_job_name()).training_job_status(), "InProgress");
  ExpectRefused();
  faulty_.FailCommits(false);
  timers_.Advance(1);
  EXPECT_EQ(StoredTuning().training_job_status_counters().completed(), 1);
  EXPECT_EQ(StoredTuning().training_job_status_counters().in_progress(), 2);
  ExpectSaved(first.training_job_name());
  EXPECT_THAT(Acks(*link), ElementsAre(9));  // once written
}

TEST_F(PersistenceTest, ALaunchInAGroupWhoseCommitFailsIsSentOnlyAfterTheRetryWritesIt) {
  const auto [link, first] = FirstTrialLogged();
  // Whether the launched trial's record was in the store when each StartJob was handed over.
  std::vector<bool> durable_at_send;
  link->on_send = [&](const v1::OrchestratorMessage& m) {
    if (m.has_start()) {
      durable_at_send.push_back(store_->GetTrainingJob(m.start().training_job_name()).ok());
    }
  };
  faulty_.FailCommits(true);
  orch_->OnWorkerReport("w1", link.get(), ExitReport(first, 9));
  EXPECT_EQ(faulty_.failed_commits(), 1);
  EXPECT_EQ(Describe().training_job_status_counters().in_progress(), 2);  // decided: kept
  EXPECT_THAT(link->Starts(), SizeIs(2));  // but its StartJob waits for the store
  faulty_.FailWrites(true);                // the retry fails too
  timers_.Advance(1);
  EXPECT_THAT(link->Starts(), SizeIs(2));
  EXPECT_THAT(Acks(*link), IsEmpty());
  faulty_.FailCommits(false);
  Heal();  // the retry writes the launch, then its StartJob goes out
  ASSERT_THAT(link->Starts(), SizeIs(3));
  EXPECT_THAT(durable_at_send, ElementsAre(true));
  EXPECT_THAT(Acks(*link), ElementsAre(9));
  const auto third = link->Starts().at(2);
  EXPECT_EQ(third.attempt(), 1);
  ExpectSaved(third.training_job_name());
  // It runs exactly once: no second StartJob of it, and its end is counted once.
  timers_.Advance(3);
  Started(third);
  Exit(third, 0);
  int starts_of_third = 0;
  for (const auto& s : link->Starts()) {
    starts_of_third += s.training_job_name() == third.training_job_name() ? 1 : 0;
  }
  EXPECT_EQ(starts_of_third, 1);
  EXPECT_EQ(Stored(third.training_job_name()).training_job_status(), "Completed");
  EXPECT_EQ(StoredTuning().training_job_status_counters().completed(), 2);
}

TEST_F(PersistenceTest, AJobsLastLogsAndItsExitInOneGroupAreOneCommitThatAllTheyCauseFollows) {
  const auto [link, first] = FirstTrialLogged();
  std::vector<std::string> notes;
  orch_->Subscribe([&](const std::string& tuning, const std::string& training) {
    notes.push_back(tuning + "/" + training);
  });
  v1::WorkerMessage last_logs;
  last_logs.set_seq(8);
  last_logs.mutable_logs()->set_training_job_name(first.training_job_name());
  last_logs.mutable_logs()->set_attempt(first.attempt());
  last_logs.mutable_logs()->set_first_line(1);
  last_logs.mutable_logs()->add_lines()->set_text("val_loss=0.25");
  const int commits = faulty_.commits();
  orch_->BeginReports();
  orch_->OnWorkerReport("w1", link.get(), last_logs);
  orch_->OnWorkerReport("w1", link.get(), ExitReport(first, 9));
  // Applied, nothing out yet: no commit, no StartJob, no Ack, no notification.
  EXPECT_EQ(Describe().training_job_status_counters().completed(), 1);
  EXPECT_EQ(faulty_.commits(), commits);
  EXPECT_THAT(link->Starts(), SizeIs(2));
  EXPECT_THAT(Acks(*link), IsEmpty());
  EXPECT_THAT(notes, IsEmpty());
  orch_->EndReports();
  EXPECT_EQ(faulty_.commits(), commits + 1);  // one sync for both reports
  ASSERT_THAT(link->Starts(), SizeIs(3));
  EXPECT_THAT(Acks(*link), ElementsAre(9));  // one cumulative Ack, after the commit
  EXPECT_THAT(notes, Not(IsEmpty()));
  EXPECT_THAT(*store_->ReadLogs(first.training_job_name(), 0, 10), SizeIs(2));
  auto metrics = store_->ReadMetrics(first.training_job_name());
  ASSERT_TRUE(metrics.ok());
  ASSERT_THAT(*metrics, SizeIs(2));
  EXPECT_EQ(metrics->back().value(), 0.25);
  ExpectSaved(first.training_job_name());
  ExpectSaved(link->Starts().at(2).training_job_name());
}

v1::WorkerMessage StartedReport(const v1::StartJob& start, uint64_t seq) {
  v1::WorkerMessage m;
  m.set_seq(seq);
  m.mutable_started()->set_training_job_name(start.training_job_name());
  m.mutable_started()->set_attempt(start.attempt());
  return m;
}

v1::WorkerMessage LogsReport(const std::string& job, uint64_t seq, int64_t first_line) {
  v1::WorkerMessage m;
  m.set_seq(seq);
  m.mutable_logs()->set_training_job_name(job);
  m.mutable_logs()->set_attempt(1);
  m.mutable_logs()->set_first_line(first_line);
  m.mutable_logs()->add_lines()->set_text("epoch 1");
  return m;
}

TEST_F(PersistenceTest, AJobsStartIsWrittenByTheNextCommitAndAcknowledgedOnlyThen) {
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob()).ok());
  auto link = Connect(1);
  const auto start = link->Starts().at(0);
  const int writes = faulty_.writes();
  orch_->OnWorkerReport("w1", link.get(), StartedReport(start, 1));
  EXPECT_EQ(faulty_.writes(), writes);  // no write, no sync of its own
  EXPECT_THAT(Acks(*link), IsEmpty());  // so not acknowledged: the worker keeps it
  EXPECT_EQ(orch_->DescribeTrainingJob("solo")->secondary_status(), "Training");
  EXPECT_EQ(Stored("solo").secondary_status(), "Starting");

  // amtd is killed now: the next one over the same store gets the start from the worker's replay.
  Rebuild();
  ASSERT_TRUE(orch_->Load().ok());
  v1::JobRef running;
  running.set_training_job_name("solo");
  running.set_attempt(1);
  auto again = Connect(1, {running});
  EXPECT_THAT(again->Starts(), IsEmpty());  // re-adopted, not launched again
  orch_->OnWorkerReport("w1", again.get(), StartedReport(start, 1));
  EXPECT_THAT(Acks(*again), IsEmpty());
  const int commits = faulty_.commits();
  orch_->OnWorkerReport("w1", again.get(), LogsReport("solo", 2, 0));
  EXPECT_EQ(faulty_.commits(), commits + 1);  // the lines and the start together
  EXPECT_THAT(Acks(*again), ElementsAre(2));  // cumulative: the start too
  EXPECT_EQ(Stored("solo").secondary_status(), "Training");
  EXPECT_TRUE(Stored("solo").has_training_start_time());
  ExpectSaved("solo");
}

TEST_F(PersistenceTest, AStartThatNoCommitTakesIsWrittenOnItsOwnWithinHalfASecond) {
  auto link = SoloStarted();
  const int commits = faulty_.commits();
  timers_.Advance(0.4);
  EXPECT_EQ(Stored("solo").secondary_status(), "Starting");
  EXPECT_THAT(Acks(*link), IsEmpty());
  timers_.Advance(0.2);
  EXPECT_EQ(faulty_.commits(), commits + 1);
  EXPECT_EQ(Stored("solo").secondary_status(), "Training");
  EXPECT_THAT(Acks(*link), ElementsAre(1));
  ExpectSaved("solo");
}

TEST_F(PersistenceTest, ADeferredStartIsWrittenBeforeAnAckOfALaterReportThatWroteNothing) {
  auto link = SoloStarted();
  const int commits = faulty_.commits();
  // A report that changes nothing (on a job amtd does not know) is acknowledged, and the Ack
  // covers the start: it is written first.
  orch_->OnWorkerReport("w1", link.get(), LogsReport("unknown", 2, 0));
  EXPECT_EQ(faulty_.commits(), commits + 1);
  EXPECT_THAT(Acks(*link), ElementsAre(2));
  EXPECT_EQ(Stored("solo").secondary_status(), "Training");
}

TEST_F(PersistenceTest, DestroyingTheOrchestratorCancelsEveryTimer) {
  spot_.mean_seconds_to_interruption = 100;
  Rebuild();
  v1::CreateTrainingJobRequest spot = SoloJob("spot");
  spot.set_enable_managed_spot_training(true);
  spot.mutable_stopping_condition()->set_max_wait_time_in_seconds(5000);
  ASSERT_TRUE(orch_->CreateTrainingJob(spot).ok());
  auto r = TuningRequest();
  r.mutable_hyper_parameter_tuning_job_config()
      ->mutable_resource_limits()
      ->set_max_runtime_in_seconds(3600);
  ASSERT_TRUE(orch_->CreateTuningJob(r).ok());
  auto link = Connect(3);
  for (const auto& s : link->Starts()) Started(s);
  faulty_.FailWrites(true);
  Log(link->Starts().at(0), {"loss=1"});  // arms the store retry timer
  // Runtime x3, spot interruption, max wait, tuning runtime, store retry.
  EXPECT_EQ(timers_.pending(), 7u);
  orch_.reset();
  EXPECT_EQ(timers_.pending(), 0u);
}

}  // namespace
}  // namespace amt::core
