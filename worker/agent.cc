#include "worker/agent.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <utility>

namespace amt::worker {
namespace {

// Every runner of the agent takes its multi-instance jobs' networks from one pool.
AgentOptions WithNetworks(AgentOptions options) {
  if (options.runner.networks == nullptr) {
    options.runner.networks = std::make_shared<LoopbackNetworks>();
  }
  return options;
}

}  // namespace

Agent::Agent(AgentOptions options, StreamConnector& connector, ProcessLauncher& launcher,
             const Clock& clock)
    : options_(WithNetworks(std::move(options))),
      connector_(connector),
      launcher_(launcher),
      clock_(clock) {}

Agent::~Agent() {
  std::map<std::string, std::shared_ptr<JobRunner>> jobs;
  std::vector<std::shared_ptr<JobRunner>> finished;
  {
    MutexLock lock(&mu_);
    shutting_down_ = true;
    exit_run_ = true;
    exit_cv_.SignalAll();
    jobs.swap(jobs_);
    finished.swap(finished_);
  }
  // Destroyed without mu_ held: a dying runner's last report still takes it.
  jobs.clear();
  finished.clear();
}

void Agent::Diagnose(const std::string& message) const {
  if (options_.diagnostics) options_.diagnostics(message);
}

void Agent::Run() {
  // A one-shot worker's job starts at once: Slurm gave it its node for that job only, and the
  // reports wait in unacked_ until the first Hello.
  if (options_.one_shot.has_value()) HandleStart(*options_.one_shot);
  auto backoff = options_.initial_backoff;
  bool said_unreachable = false;  // say it once per outage, not on every try
  std::optional<std::chrono::steady_clock::time_point> alone_since;  // not connected since
  while (true) {
    {
      MutexLock lock(&mu_);
      if (exit_run_) break;
    }
    absl::Status refused;
    std::unique_ptr<WorkerStream> stream = ConnectOnce(&refused);
    // Connected once amtd has accepted the Hello: its first message says so (an Ack of 0).
    bool connected = false;
    if (stream != nullptr) {
      amt::v1::OrchestratorMessage message;
      while (stream->Read(&message)) {
        if (!connected) {
          connected = true;
          Diagnose("connected to amtd");
          said_unreachable = false;
          backoff = options_.initial_backoff;
        }
        Handle(message);
        ReapFinished();
      }
      {
        MutexLock lock(&mu_);
        if (stream_ == stream.get()) stream_ = nullptr;
      }
      refused = stream->Finish();
      stream->Cancel();
      stream.reset();
    }
    if (!refused.ok()) {
      // Said every time: the reason may change (a worker id freed, credentials fixed), and the
      // backoff keeps the lines few.
      connected = false;
      backoff = std::max(backoff, options_.initial_backoff);
      Diagnose("amtd refused this worker (" +
               std::string(absl::StatusCodeToString(refused.code())) +
               "): " + std::string(refused.message()) + "; trying again in " +
               std::to_string(backoff.count()) + " ms");
    }
    ReapFinished();
    const auto now = std::chrono::steady_clock::now();
    if (connected || !alone_since.has_value()) alone_since = now;
    if (options_.orphan_timeout.count() > 0 && now - *alone_since >= options_.orphan_timeout) {
      Diagnose("no amtd for " + std::to_string(options_.orphan_timeout.count()) +
               " ms; stopping the jobs and exiting");
      Shutdown();
      break;
    }
    MutexLock lock(&mu_);
    if (exit_cv_.AwaitFor(&mu_, backoff, [this] {
          mu_.AssertHeld();
          return exit_run_;
        })) {
      break;
    }
    if (connected) {
      Diagnose("lost the stream to amtd; reconnecting");
    } else if (refused.ok() && !said_unreachable) {
      Diagnose("cannot reach amtd; retrying");
      said_unreachable = true;
    }
    backoff = std::min(backoff * 2,
                       refused.ok() ? options_.max_backoff
                                    : std::max(options_.max_backoff, options_.max_refused_backoff));
  }
  ReapFinished();
}

std::unique_ptr<WorkerStream> Agent::ConnectOnce(absl::Status* refused) {
  auto connected = connector_.Connect();
  if (!connected.ok()) return nullptr;
  std::unique_ptr<WorkerStream> stream = std::move(*connected);
  // A write fails when amtd has already ended the call (a refusal before it read the Hello,
  // such as bad credentials): what it said is read before the stream goes.
  const auto broken = [&stream, refused] {
    amt::v1::OrchestratorMessage ignored;
    while (stream->Read(&ignored)) {
    }
    *refused = stream->Finish();
    stream->Cancel();
    return nullptr;
  };

  MutexLock lock(&mu_);
  if (exit_run_) {
    stream->Cancel();
    return nullptr;
  }
  amt::v1::WorkerMessage hello_message;
  amt::v1::WorkerHello& hello = *hello_message.mutable_hello();
  hello.set_worker_id(options_.worker_id);
  hello.set_slots(options_.slots);
  if (options_.runner.gpus != nullptr) {
    hello.set_gpus(static_cast<int>(options_.runner.gpus->gpus().size()));
    hello.set_gpu_share(options_.runner.gpus->share());
  }
  hello.set_host(options_.host);
  hello.set_one_shot(options_.one_shot.has_value());
  hello.set_instance_id(options_.instance_id);
  // "Running" until amtd has its JobExited: a job that ended while we were away is reported
  // right after the Hello, and amtd must not presume it lost in between.
  std::set<JobKey> running = undelivered_exits_;
  for (const auto& [name, runner] : jobs_) running.insert({name, runner->attempt()});
  for (const auto& [name, attempt] : running) {
    amt::v1::JobRef* ref = hello.add_running();
    ref->set_training_job_name(name);
    ref->set_attempt(attempt);
  }
  if (!stream->Write(hello_message)) return broken();
  // Replayed in order; amtd applies a report it has already saved to no further effect.
  for (const Unacked& report : unacked_) {
    if (!stream->Write(report.message)) return broken();
  }
  if (dropped_log_batches_ > 0) {
    Diagnose(std::to_string(dropped_log_batches_) + " log batches were dropped while disconnected");
    dropped_log_batches_ = 0;
  }
  stream_ = stream.get();
  return stream;
}

void Agent::Handle(const amt::v1::OrchestratorMessage& message) {
  switch (message.body_case()) {
    case amt::v1::OrchestratorMessage::kStart:
      HandleStart(message.start());
      break;
    case amt::v1::OrchestratorMessage::kStop:
      HandleStop(message.stop());
      break;
    case amt::v1::OrchestratorMessage::kAck:
      HandleAck(message.ack().seq());
      break;
    case amt::v1::OrchestratorMessage::BODY_NOT_SET:
      Diagnose("ignoring an empty message from amtd");
      break;
  }
}

void Agent::HandleStart(const amt::v1::StartJob& start) {
  MutexLock lock(&mu_);
  std::string refusal;
  const auto existing = jobs_.find(start.training_job_name());
  if (shutting_down_) {
    refusal = "the worker is shutting down";
  } else if (existing != jobs_.end()) {
    if (existing->second->attempt() == start.attempt()) {
      Diagnose("ignoring a repeated StartJob for " + start.training_job_name());
      return;
    }
    refusal = "attempt " + std::to_string(existing->second->attempt()) + " of " +
              start.training_job_name() + " is still running on this worker";
  } else if (const int needed = SlotsOf(start.instance_type(), start.instance_count());
             needed > 0 && BusySlotsLocked() + needed > options_.slots) {
    refusal = needed == 1
                  ? "no free slot: all " + std::to_string(options_.slots) + " slots are busy"
                  : "not enough free slots for " + std::to_string(needed) +
                        " instances: " + std::to_string(BusySlotsLocked()) + " of " +
                        std::to_string(options_.slots) + " slots are busy";
  }
  if (!refusal.empty()) {
    amt::v1::WorkerMessage message;
    amt::v1::JobExited& exited = *message.mutable_exited();
    exited.set_training_job_name(start.training_job_name());
    exited.set_attempt(start.attempt());
    exited.set_launch_failed(true);
    exited.set_failure_reason(refusal);
    SendLocked(std::move(message), /*runner_exit=*/false);
    return;
  }
  auto runner = std::make_shared<JobRunner>(
      options_.runner, start, launcher_, clock_,
      [this](amt::v1::WorkerMessage report) { OnRunnerReport(std::move(report)); });
  jobs_[start.training_job_name()] = runner;
  runner->Start();
}

int Agent::BusySlotsLocked() const {
  int busy = 0;
  for (const auto& [name, runner] : jobs_) {
    busy += SlotsOf(runner->instance_type(), runner->instance_count());
  }
  return busy;
}

int Agent::SlotsOf(const std::string& instance_type, int instances) const {
  // A job that takes GPUs takes no slot (amtd's worker_pool.h counts them the same way).
  if (GpusTaken(options_.runner.gpus.get(), instance_type, instances) > 0) return 0;
  return std::max(1, instances);
}

void Agent::HandleStop(const amt::v1::StopJob& stop) {
  MutexLock lock(&mu_);
  const auto it = jobs_.find(stop.training_job_name());
  if (it == jobs_.end() || it->second->attempt() != stop.attempt()) {
    // Usually a job that has just exited: its JobExited is on its way.
    Diagnose("StopJob for " + stop.training_job_name() + " attempt " +
             std::to_string(stop.attempt()) + ", which is not running here");
    return;
  }
  it->second->Stop(stop.grace_seconds());
}

void Agent::HandleAck(uint64_t seq) {
  MutexLock lock(&mu_);
  while (!unacked_.empty() && unacked_.front().message.seq() <= seq) {
    if (unacked_.front().runner_exit) {
      const amt::v1::JobExited& exited = unacked_.front().message.exited();
      undelivered_exits_.erase({exited.training_job_name(), exited.attempt()});
    }
    unacked_.pop_front();
  }
  if (options_.one_shot.has_value() && jobs_.empty() && unacked_.empty() && !exit_run_) {
    // The one job's exit is saved by amtd: done. Ending the stream ends Run()'s read loop.
    exit_run_ = true;
    exit_cv_.SignalAll();
    if (stream_ != nullptr) stream_->Cancel();
  }
}

void Agent::OnRunnerReport(amt::v1::WorkerMessage message) {
  MutexLock lock(&mu_);
  const bool exit = message.has_exited();
  if (exit) {
    // The runner's thread is still inside this call, so it is joined later, on the agent thread.
    const auto it = jobs_.find(message.exited().training_job_name());
    if (it != jobs_.end() && it->second->attempt() == message.exited().attempt()) {
      finished_.push_back(std::move(it->second));
      jobs_.erase(it);
    }
  }
  SendLocked(std::move(message), exit);
}

void Agent::SendLocked(amt::v1::WorkerMessage message, bool runner_exit) {
  message.set_seq(++last_seq_);
  const bool keep = !message.has_logs() || unacked_.size() < options_.max_buffered_reports;
  if (stream_ != nullptr && !stream_->Write(message)) {
    // Broken: the agent thread's Read fails too and it reconnects.
    stream_->Cancel();
    stream_ = nullptr;
  }
  if (!keep) {
    if (stream_ == nullptr) ++dropped_log_batches_;
    return;
  }
  if (runner_exit) {
    undelivered_exits_.insert({message.exited().training_job_name(), message.exited().attempt()});
  }
  unacked_.push_back({std::move(message), runner_exit});
}

void Agent::ReapFinished() {
  std::vector<std::shared_ptr<JobRunner>> finished;
  {
    MutexLock lock(&mu_);
    finished.swap(finished_);
  }
  // A runner may still be emptying its folders after its last report (job_runner.h): joined
  // once it is done, so that the agent thread (which takes the next StartJob) never waits.
  std::vector<std::shared_ptr<JobRunner>> busy;
  for (auto& runner : finished) {
    if (!runner->WaitForExit(std::chrono::milliseconds(0))) busy.push_back(std::move(runner));
  }
  finished.clear();  // joins the done runners' threads
  if (busy.empty()) return;
  MutexLock lock(&mu_);
  finished_.insert(finished_.end(), busy.begin(), busy.end());
}

void Agent::Shutdown() {
  std::vector<std::shared_ptr<JobRunner>> runners;
  {
    MutexLock lock(&mu_);
    if (shutting_down_) return;
    shutting_down_ = true;
    for (const auto& [name, runner] : jobs_) runners.push_back(runner);
  }
  const double grace_seconds = static_cast<double>(options_.shutdown_grace.count()) / 1000.0;
  for (const auto& runner : runners) runner->Stop(grace_seconds, /*worker_shutdown=*/true);
  // The margin covers what a runner does after the kill: checkpoint sync and tar.
  const auto deadline =
      std::chrono::steady_clock::now() + options_.shutdown_grace + std::chrono::seconds(2);
  for (const auto& runner : runners) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    runner->WaitForExit(std::max(left, std::chrono::milliseconds(0)));
  }
  {
    MutexLock lock(&mu_);
    exit_run_ = true;
    exit_cv_.SignalAll();
    if (stream_ != nullptr) stream_->Cancel();
  }
}

}  // namespace amt::worker
