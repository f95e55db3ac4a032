// Agent logic against a fake stream and a fake launcher: no gRPC server, no real processes.
#include "worker/agent.h"

#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/worker/fake_process_launcher.h"
#include "tests/unit/worker/fake_worker_stream.h"

namespace amt::worker {
namespace {

using ::amt::testing::TempDir;
using ::amt::worker::testing::FakeProcessLauncher;
using ::amt::worker::testing::FakeStreamConnector;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;
using Messages = std::vector<amt::v1::WorkerMessage>;

amt::v1::OrchestratorMessage StartMessage(const std::string& name, int attempt) {
  amt::v1::OrchestratorMessage message;
  amt::v1::StartJob& start = *message.mutable_start();
  start.set_training_job_name(name);
  start.set_attempt(attempt);
  start.set_training_job_arn("arn:aws:sagemaker:us-east-1:123456789012:training-job/" + name);
  start.add_command("/opt/trainer");
  start.add_command("train");
  return message;
}

// amtd's acknowledgement of every report up to the last one in `written`.
amt::v1::OrchestratorMessage AckOfAll(const std::vector<amt::v1::WorkerMessage>& written) {
  amt::v1::OrchestratorMessage message;
  message.mutable_ack()->set_seq(written.back().seq());
  return message;
}

amt::v1::OrchestratorMessage StopMessage(const std::string& name, int attempt, double grace) {
  amt::v1::OrchestratorMessage message;
  message.mutable_stop()->set_training_job_name(name);
  message.mutable_stop()->set_attempt(attempt);
  message.mutable_stop()->set_grace_seconds(grace);
  return message;
}

// The kinds of the messages, for sequence assertions.
std::vector<std::string> Kinds(const Messages& messages) {
  std::vector<std::string> kinds;
  for (const auto& m : messages) {
    switch (m.body_case()) {
      case amt::v1::WorkerMessage::kHello:
        kinds.push_back("hello");
        break;
      case amt::v1::WorkerMessage::kStarted:
        kinds.push_back("started " + m.started().training_job_name());
        break;
      case amt::v1::WorkerMessage::kLogs:
        kinds.push_back("logs " + m.logs().training_job_name());
        break;
      case amt::v1::WorkerMessage::kExited:
        kinds.push_back("exited " + m.exited().training_job_name());
        break;
      case amt::v1::WorkerMessage::BODY_NOT_SET:
        kinds.push_back("empty");
        break;
    }
  }
  return kinds;
}

auto HasExitOf(const std::string& name) {
  return [name](const Messages& messages) {
    for (const auto& m : messages) {
      if (m.has_exited() && m.exited().training_job_name() == name) return true;
    }
    return false;
  };
}

auto HasStartOf(const std::string& name) {
  return [name](const Messages& messages) {
    for (const auto& m : messages) {
      if (m.has_started() && m.started().training_job_name() == name) return true;
    }
    return false;
  };
}

const amt::v1::JobExited& ExitOf(const Messages& messages, const std::string& name) {
  for (const auto& m : messages) {
    if (m.has_exited() && m.exited().training_job_name() == name) return m.exited();
  }
  static const amt::v1::JobExited kNone;
  ADD_FAILURE() << "no JobExited for " << name;
  return kNone;
}

class AgentTest : public ::testing::Test {
 protected:
  AgentTest() {
    options_.worker_id = "worker-1";
    options_.host = "host-a";
    options_.slots = 1;
    options_.runner.job_dir.work_dir = (temp_.path() / "work").string();
    options_.runner.base_environment = {{"PATH", "/usr/bin:/bin"}};
    options_.initial_backoff = std::chrono::milliseconds(0);
    options_.max_backoff = std::chrono::milliseconds(0);
    // Teardown's Shutdown kills what is left at once.
    options_.shutdown_grace = std::chrono::milliseconds(0);
  }

  ~AgentTest() override {
    if (agent_ != nullptr) {
      agent_->Shutdown();
      connector_.Close();
      run_thread_.join();
    }
  }

  void StartAgent(FakeProcessLauncher& launcher) {
    agent_ = std::make_unique<Agent>(options_, connector_, launcher, clock_);
    run_thread_ = std::thread([this] { agent_->Run(); });
  }

  TempDir temp_;
  FakeClock clock_{1'700'000'000.0};
  FakeStreamConnector connector_;
  FakeProcessLauncher launcher_;
  FakeProcessLauncher exits_on_signal_launcher_{/*exit_on_signal=*/true};
  AgentOptions options_;
  std::unique_ptr<Agent> agent_;
  std::thread run_thread_;
};

TEST_F(AgentTest, SaysHelloWithItsIdAndSlotsWhenConnected) {
  options_.slots = 3;
  auto stream = connector_.Offer();
  StartAgent(launcher_);
  const Messages written = stream->WaitForWritten([](const Messages& m) { return !m.empty(); });
  ASSERT_EQ(written.size(), 1u);
  ASSERT_TRUE(written[0].has_hello());
  EXPECT_EQ(written[0].hello().worker_id(), "worker-1");
  EXPECT_EQ(written[0].hello().host(), "host-a");
  EXPECT_EQ(written[0].hello().slots(), 3);
  EXPECT_EQ(written[0].hello().running_size(), 0);
}

TEST_F(AgentTest, SaysItsInstanceIdInEveryHello) {
  options_.instance_id = "0123abcd";
  auto first = connector_.Offer();
  StartAgent(launcher_);
  first->WaitForWritten([](const Messages& m) { return !m.empty(); });
  auto second = connector_.Offer();
  first->Break();
  const Messages written = second->WaitForWritten([](const Messages& m) { return !m.empty(); });
  ASSERT_TRUE(written.at(0).has_hello());
  EXPECT_EQ(written[0].hello().instance_id(), "0123abcd");
  EXPECT_EQ(first->written().at(0).hello().instance_id(), "0123abcd");
}

TEST_F(AgentTest, ARefusedWorkerSaysWhyAndBacksOffExponentially) {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> said;
  options_.diagnostics = [&](const std::string& line) {
    std::lock_guard lock(mu);
    said.push_back(line);
    cv.notify_all();
  };
  const auto wait_said = [&](size_t n) {
    std::unique_lock lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return said.size() >= n; }));
    return said;
  };
  options_.initial_backoff = std::chrono::milliseconds(1);
  options_.max_backoff = std::chrono::milliseconds(1);  // a lost stream: back within 1 ms
  options_.max_refused_backoff = std::chrono::milliseconds(4);
  const absl::Status in_use = absl::AlreadyExistsError("worker id \"worker-1\" is in use");
  // Refused before amtd read the Hello (its write fails), then after.
  connector_.Offer()->Refuse(in_use);
  auto after_hello = connector_.Offer();
  StartAgent(launcher_);
  after_hello->WaitForWritten([](const Messages& m) { return !m.empty(); });
  after_hello->Refuse(in_use);
  auto accepted = connector_.Offer();
  accepted->WaitForWritten([](const Messages& m) { return !m.empty(); });
  amt::v1::OrchestratorMessage welcome;
  welcome.mutable_ack()->set_seq(0);
  accepted->Push(welcome);
  EXPECT_THAT(wait_said(3),
              ElementsAre("amtd refused this worker (ALREADY_EXISTS): worker id \"worker-1\" is "
                          "in use; trying again in 1 ms",
                          "amtd refused this worker (ALREADY_EXISTS): worker id \"worker-1\" is "
                          "in use; trying again in 2 ms",
                          "connected to amtd"));
}

TEST_F(AgentTest, AOneShotAgentRunsItsJobAtOnceSaysSoAndReturnsOnceItsExitIsAcknowledged) {
  options_.one_shot = StartMessage("job-1", 3).start();
  StartAgent(launcher_);
  // The job starts before the agent has reached amtd (no stream is offered yet).
  auto process = launcher_.WaitForProcess(0);
  ASSERT_NE(process, nullptr);
  auto stream = connector_.Offer();
  const Messages hello = stream->WaitForWritten([](const Messages& m) { return !m.empty(); });
  ASSERT_TRUE(hello[0].has_hello());
  EXPECT_TRUE(hello[0].hello().one_shot());
  ASSERT_EQ(hello[0].hello().running_size(), 1);
  EXPECT_EQ(hello[0].hello().running(0).training_job_name(), "job-1");
  EXPECT_EQ(hello[0].hello().running(0).attempt(), 3);
  // An Ack of JobStarted alone does not end it: the job still runs.
  const Messages started = stream->WaitForWritten(HasStartOf("job-1"));
  stream->Push(AckOfAll(started));
  process->Exit(0);
  const Messages written = stream->WaitForWritten(HasExitOf("job-1"));
  EXPECT_THAT(Kinds(written), ElementsAre("hello", "started job-1", "exited job-1"));
  stream->Push(AckOfAll(written));
  run_thread_.join();  // Run() returned by itself
  agent_.reset();
}

TEST_F(AgentTest, RunsAJobFromStartJobToJobExited) {
  auto stream = connector_.Offer();
  StartAgent(launcher_);
  stream->Push(StartMessage("job-1", 1));
  auto process = launcher_.WaitForProcess(0);
  ASSERT_NE(process, nullptr);
  EXPECT_THAT(process->spec().argv, ElementsAre("/opt/trainer", "train"));
  EXPECT_EQ(process->spec().cwd, (temp_.path() / "work" / "job-1").string());
  EXPECT_THAT(process->spec().env, Contains(Pair("PATH", "/usr/bin:/bin")));
  EXPECT_THAT(process->spec().env, Contains(Pair("TRAINING_JOB_NAME", "job-1")));

  process->EmitLine(OutputStream::kStdout, "val_loss=0.5\tepoch=1");
  process->Exit(0);
  const Messages written = stream->WaitForWritten(HasExitOf("job-1"));
  EXPECT_THAT(Kinds(written), ElementsAre("hello", "started job-1", "logs job-1", "exited job-1"));
  EXPECT_EQ(written[1].started().job_dir(), (temp_.path() / "work" / "job-1").string());
  ASSERT_EQ(written[2].logs().lines_size(), 1);
  EXPECT_EQ(written[2].logs().lines(0).text(), "val_loss=0.5#011epoch=1");
  EXPECT_EQ(written[2].logs().lines(0).timestamp(), 1'700'000'000.0);
  const auto& exited = written[3].exited();
  EXPECT_EQ(exited.attempt(), 1);
  EXPECT_EQ(exited.exit_code(), 0);
  EXPECT_FALSE(exited.launch_failed());
  EXPECT_FALSE(exited.stop_requested());
}

TEST_F(AgentTest, StopJobSendsSigtermToTheGroupAndTheExitSaysStopRequested) {
  auto stream = connector_.Offer();
  StartAgent(exits_on_signal_launcher_);
  stream->Push(StartMessage("job-1", 1));
  auto process = exits_on_signal_launcher_.WaitForProcess(0);
  ASSERT_NE(process, nullptr);
  stream->Push(StopMessage("job-1", 1, 120));
  const Messages written = stream->WaitForWritten(HasExitOf("job-1"));
  EXPECT_THAT(process->signals(), ElementsAre(SIGTERM));
  const auto& exited = ExitOf(written, "job-1");
  EXPECT_TRUE(exited.stop_requested());
  EXPECT_EQ(exited.signal(), SIGTERM);
}

TEST_F(AgentTest, IgnoresAStopJobForAnotherAttempt) {
  options_.slots = 2;
  auto stream = connector_.Offer();
  StartAgent(exits_on_signal_launcher_);
  stream->Push(StartMessage("job-1", 2));
  stream->Push(StopMessage("job-1", 1, 120));
  stream->Push(StartMessage("job-2", 1));  // handled after the stop
  // JobStarted goes out after a pending stop's SIGTERM would have been sent.
  stream->WaitForWritten(HasStartOf("job-1"));
  stream->WaitForWritten(HasStartOf("job-2"));
  for (size_t i = 0; i < 2; ++i) {
    auto process = exits_on_signal_launcher_.WaitForProcess(i);
    ASSERT_NE(process, nullptr);
    EXPECT_TRUE(process->signals().empty()) << process->spec().env.at("TRAINING_JOB_NAME");
  }
}

TEST_F(AgentTest, RefusesAStartJobBeyondItsSlots) {
  auto stream = connector_.Offer();
  StartAgent(launcher_);
  stream->Push(StartMessage("job-1", 1));
  auto process = launcher_.WaitForProcess(0);
  ASSERT_NE(process, nullptr);
  stream->Push(StartMessage("job-2", 1));
  Messages written = stream->WaitForWritten(HasExitOf("job-2"));
  const auto& refused = ExitOf(written, "job-2");
  EXPECT_TRUE(refused.launch_failed());
  EXPECT_EQ(refused.attempt(), 1);
  EXPECT_EQ(refused.failure_reason(), "no free slot: all 1 slots are busy");
  EXPECT_EQ(launcher_.launch_attempts().size(), 1u);

  // The slot frees when the job exits.
  process->Exit(0);
  stream->WaitForWritten(HasExitOf("job-1"));
  stream->Push(StartMessage("job-3", 1));
  EXPECT_NE(launcher_.WaitForProcess(1), nullptr);
}

TEST_F(AgentTest, IgnoresARepeatedStartJob) {
  options_.slots = 2;
  auto stream = connector_.Offer();
  StartAgent(exits_on_signal_launcher_);
  stream->Push(StartMessage("job-1", 1));
  stream->Push(StartMessage("job-1", 1));
  stream->Push(StartMessage("job-2", 1));
  ASSERT_NE(exits_on_signal_launcher_.WaitForProcess(1), nullptr);
  const auto launches = exits_on_signal_launcher_.launch_attempts();
  ASSERT_EQ(launches.size(), 2u);
  // Each job launches on its own thread, in either order.
  EXPECT_THAT((std::vector<std::string>{launches[0].env.at("TRAINING_JOB_NAME"),
                                        launches[1].env.at("TRAINING_JOB_NAME")}),
              UnorderedElementsAre("job-1", "job-2"));
}

TEST_F(AgentTest, ReportsALaunchFailure) {
  auto stream = connector_.Offer();
  launcher_.FailNextLaunch(absl::NotFoundError("/opt/trainer: No such file or directory"));
  StartAgent(launcher_);
  stream->Push(StartMessage("job-1", 1));
  const Messages written = stream->WaitForWritten(HasExitOf("job-1"));
  EXPECT_THAT(Kinds(written), ElementsAre("hello", "exited job-1"));
  EXPECT_TRUE(written[1].exited().launch_failed());
  EXPECT_EQ(written[1].exited().failure_reason(), "/opt/trainer: No such file or directory");

  // The slot is free again.
  stream->Push(StartMessage("job-2", 1));
  EXPECT_NE(launcher_.WaitForProcess(0), nullptr);
}

TEST_F(AgentTest, KeepsJobsRunningAcrossAReconnectAndSendsWhatWasBuffered) {
  auto first = connector_.Offer();
  StartAgent(launcher_);
  first->Push(StartMessage("job-1", 1));
  auto process = launcher_.WaitForProcess(0);
  ASSERT_NE(process, nullptr);
  first->Push(AckOfAll(first->WaitForWritten(HasStartOf("job-1"))));
  // The agent thread handles the Ack before it sees the stream break.
  first->Break();  // amtd goes away
  process->EmitLine(OutputStream::kStdout, "while away");
  process->Exit(0);
  EXPECT_TRUE(process->signals().empty());  // the job was not touched

  auto second = connector_.Offer();
  const Messages written = second->WaitForWritten(HasExitOf("job-1"));
  ASSERT_FALSE(written.empty());
  ASSERT_TRUE(written[0].has_hello());
  // Still "running" until amtd has the JobExited.
  ASSERT_EQ(written[0].hello().running_size(), 1);
  EXPECT_EQ(written[0].hello().running(0).training_job_name(), "job-1");
  EXPECT_EQ(written[0].hello().running(0).attempt(), 1);
  EXPECT_THAT(Kinds(written), ElementsAre("hello", "logs job-1", "exited job-1"));
  EXPECT_EQ(written[1].logs().lines(0).text(), "while away");
}

TEST_F(AgentTest, HelloAfterAReconnectNoLongerListsADeliveredExit) {
  auto first = connector_.Offer();
  StartAgent(launcher_);
  first->Push(StartMessage("job-1", 1));
  auto process = launcher_.WaitForProcess(0);
  ASSERT_NE(process, nullptr);
  process->Exit(0);
  first->Push(AckOfAll(first->WaitForWritten(HasExitOf("job-1"))));
  first->Break();
  auto second = connector_.Offer();
  const Messages written = second->WaitForWritten([](const Messages& m) { return !m.empty(); });
  ASSERT_TRUE(written[0].has_hello());
  EXPECT_EQ(written[0].hello().running_size(), 0);
}

TEST_F(AgentTest, ReplaysEveryReportAmtdHasNotAcknowledged) {
  auto first = connector_.Offer();
  StartAgent(launcher_);
  first->Push(StartMessage("job-1", 1));
  auto process = launcher_.WaitForProcess(0);
  ASSERT_NE(process, nullptr);
  process->EmitLine(OutputStream::kStdout, "loss=1");
  process->Exit(0);
  const Messages sent = first->WaitForWritten(HasExitOf("job-1"));
  ASSERT_THAT(Kinds(sent), ElementsAre("hello", "started job-1", "logs job-1", "exited job-1"));
  // Acknowledges the JobStarted only: amtd died before it saved the rest.
  amt::v1::OrchestratorMessage ack;
  ack.mutable_ack()->set_seq(sent[1].seq());
  first->Push(ack);
  first->Break();

  auto second = connector_.Offer();
  const Messages replayed = second->WaitForWritten(HasExitOf("job-1"));
  EXPECT_THAT(Kinds(replayed), ElementsAre("hello", "logs job-1", "exited job-1"));
  ASSERT_EQ(replayed[0].hello().running_size(), 1);  // its exit is not saved yet
  EXPECT_EQ(replayed[1].seq(), sent[2].seq());       // the same reports, the same numbers
  EXPECT_EQ(replayed[1].logs().first_line(), 0);
  EXPECT_EQ(replayed[1].logs().lines(0).text(), "loss=1");
  EXPECT_EQ(replayed[2].seq(), sent[3].seq());
  second->Push(AckOfAll(replayed));
  second->Break();

  auto third = connector_.Offer();
  const Messages after_ack = third->WaitForWritten([](const Messages& m) { return !m.empty(); });
  EXPECT_THAT(Kinds(after_ack), ElementsAre("hello"));
  EXPECT_EQ(after_ack[0].hello().running_size(), 0);
}

TEST_F(AgentTest, ShutdownStopsRunningJobsAndEndsRun) {
  auto stream = connector_.Offer();
  StartAgent(exits_on_signal_launcher_);
  stream->Push(StartMessage("job-1", 1));
  auto process = exits_on_signal_launcher_.WaitForProcess(0);
  ASSERT_NE(process, nullptr);
  stream->WaitForWritten(HasStartOf("job-1"));
  agent_->Shutdown();
  run_thread_.join();
  agent_.reset();  // nothing left for the fixture to shut down
  EXPECT_THAT(process->signals(), ElementsAre(SIGTERM));
  const Messages written = stream->written();
  const auto& exited = ExitOf(written, "job-1");
  EXPECT_TRUE(exited.stop_requested());
  EXPECT_EQ(exited.signal(), SIGTERM);
}

TEST_F(AgentTest, StopsItsJobsAndReturnsWhenAmtdStaysAwayPastTheOrphanTimeout) {
  options_.orphan_timeout = std::chrono::milliseconds(20);
  auto first = connector_.Offer();
  StartAgent(exits_on_signal_launcher_);
  first->Push(StartMessage("job-1", 1));
  auto process = exits_on_signal_launcher_.WaitForProcess(0);
  ASSERT_NE(process, nullptr);
  first->WaitForWritten(HasStartOf("job-1"));
  connector_.Close();  // every later connection attempt fails
  first->Break();
  run_thread_.join();  // Run() returns by itself
  agent_.reset();
  EXPECT_THAT(process->signals(), ElementsAre(SIGTERM));
}

TEST_F(AgentTest, AJobTakesASlotPerInstance) {
  auto stream = connector_.Offer();
  options_.slots = 3;
  StartAgent(launcher_);
  auto two_hosts = StartMessage("job-1", 1);
  two_hosts.mutable_start()->set_instance_count(2);
  stream->Push(two_hosts);
  ASSERT_NE(launcher_.WaitForProcess(1), nullptr);  // both hosts launched
  auto another = StartMessage("job-2", 1);
  another.mutable_start()->set_instance_count(2);
  stream->Push(another);
  Messages written = stream->WaitForWritten(HasExitOf("job-2"));
  const auto& refused = ExitOf(written, "job-2");
  EXPECT_TRUE(refused.launch_failed());
  EXPECT_EQ(refused.failure_reason(),
            "not enough free slots for 2 instances: 2 of 3 slots are busy");
  // One slot is still free for a one-instance job.
  stream->Push(StartMessage("job-3", 1));
  EXPECT_NE(launcher_.WaitForProcess(2), nullptr);
}

}  // namespace
}  // namespace amt::worker
