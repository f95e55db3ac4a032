// The Orchestrator's worker events: a worker's Hello (re-adopting the attempts it runs), its
// disconnect, its numbered reports (JobStarted, LogBatch, JobExited: applied, or refused when
// the attempt runs elsewhere, or held back while the store fails), and a provisioned worker
// that ended without reporting. Log batches are applied by log_ingest.h.
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "orchestrator/core/orchestrator.h"
#include "orchestrator/core/orchestrator_runtime.h"

namespace amt::core {
namespace {

std::string Key(const std::string& name) { return absl::AsciiStrToLower(name); }

}  // namespace

// ---------------------------------------------------------------- worker events

absl::Status Orchestrator::OnWorkerConnected(const v1::WorkerHello& hello,
                                             std::shared_ptr<WorkerLink> link) {
  const std::string& worker_id = hello.worker_id();
  if (const WorkerLink* current = workers_.LinkOf(worker_id);
      current != nullptr && current != link.get() && !current->Provisional()) {
    if (hello.instance_id().empty() || hello.instance_id() != workers_.InstanceOf(worker_id)) {
      const std::string why =
          "worker id \"" + worker_id +
          "\" is already connected from another amt-worker process; give each worker its own "
          "--worker-id (a restarted worker is taken once amtd sees its old connection end)";
      if (options_.log)
        options_.log("refused a worker's Hello (host " + hello.host() + "): " + why);
      return absl::AlreadyExistsError(why);
    }
    // The same process again (its old stream broke on its side first): that stream goes.
    workers_.Drop(worker_id, current);
  }
  workers_.Connect(worker_id, hello.slots(), std::move(link), hello.one_shot(), hello.instance_id(),
                   WorkerGpus{hello.gpus(), hello.gpu_share()});
  std::set<std::string> reported;
  for (const auto& ref : hello.running()) {
    auto* job = FindTraining(ref.training_job_name());
    if (job == nullptr || IsTerminal(*job) || job->attempt() != ref.attempt()) continue;
    const std::string key = Key(ref.training_job_name());
    reported.insert(key);
    workers_.Assign(worker_id, key, NeedOf(*job));
    job->set_worker_id(worker_id);
    Rt(*job).lost_timer.Cancel();
    // The StopJob may have been lost with the old connection (or with amtd): sent again.
    if (job->describe().training_job_status() == kStopping) SendStop(*job);
  }
  // Jobs this worker had before that it no longer runs ended while nobody listened.
  for (const auto& key : training_order_) {
    auto& job = training_.at(key);
    if (IsTerminal(job) || job.worker_id() != worker_id || reported.count(key) > 0) continue;
    if (!job.attempt_started() && job.describe().training_job_status() == kInProgress) {
      // Its StartJob never reached the worker (lost with the connection, or amtd died right
      // after saving the launch): nothing ran, so it is launched again, not failed.
      DetachFromWorker(job);
      job.set_worker_id("");
      (void)Persist(job);
      waiting_.push_front(key);
      continue;
    }
    if (RetryInPlace(job, "the worker restarted and no longer runs it")) continue;
    ExitReport report;
    report.internal_error = job.describe().training_job_status() != kStopping;
    report.failure_reason = "The worker restarted and no longer runs this training job.";
    EndJob(job, report);
  }
  Schedule();
  Notify("", "");
  return absl::OkStatus();
}

void Orchestrator::OnProvisionedWorkerEnded(const std::string& worker_id, const WorkerLink* link,
                                            const std::string& training_job_name, int attempt,
                                            const ProvisionedEnd& end) {
  // Still provisional (the worker never connected): it is gone. A worker that did connect
  // leaves through OnWorkerDisconnected instead, with its own link.
  const bool never_connected = workers_.Disconnect(worker_id, link).has_value();
  auto* job = FindTraining(training_job_name);
  if (job == nullptr || IsTerminal(*job) || job->attempt() != attempt ||
      job->worker_id() != worker_id) {
    Schedule();
    return;
  }
  if (!never_connected && workers_.Runs(worker_id, Key(training_job_name))) {
    return;  // its worker is connected and will report the exit itself
  }
  const std::string name = job->describe().training_job_name();
  const bool stopping = job->describe().training_job_status() == kStopping;
  if (end.kind == ProvisionedEnd::Kind::kCancelled && (stopping || job->interrupted())) {
    // amtd cancelled it (a stop, or a spot interruption): as if the worker had stopped it.
    v1::JobExited exited;
    exited.set_training_job_name(name);
    exited.set_attempt(attempt);
    exited.set_signal(15);
    exited.set_stop_requested(true);
    OnJobExited(exited);
    return;
  }
  if (end.kind == ProvisionedEnd::Kind::kRetryable) {
    if (RetryInPlace(*job, end.message)) {
      Schedule();
      Notify(job->tuning_job_name(), name);
      return;
    }
  }
  ExitReport report;
  report.failure_reason = end.message;
  switch (end.kind) {
    case ProvisionedEnd::Kind::kRefused:
      report.launch_failed = true;
      break;
    case ProvisionedEnd::Kind::kRetryable:
      report.internal_error = !stopping;
      break;
    case ProvisionedEnd::Kind::kOutOfMemory:
      report.signal = 9;  // AlgorithmError, with Slurm's words
      break;
    case ProvisionedEnd::Kind::kCancelled:
    case ProvisionedEnd::Kind::kFailed:
      report.exit_code = 1;
      break;
  }
  EndJob(*job, report);
  Schedule();
  Notify(job->tuning_job_name(), name);
}

void Orchestrator::OnWorkerDisconnected(const std::string& worker_id, const WorkerLink* link) {
  state_.ForgetLink(link);
  // Its held Acks can go nowhere: the worker replays those reports on its next connection.
  std::erase_if(held_acks_, [link](const HeldAck& held) { return held.link == link; });
  const auto jobs = workers_.Disconnect(worker_id, link);
  if (!jobs.has_value()) return;
  for (const auto& key : *jobs) {
    if (auto j = training_.find(key); j != training_.end() && !IsTerminal(j->second)) {
      ArmLostTimer(j->second);
    }
  }
}

void Orchestrator::OnWorkerReport(const std::string& worker_id, const WorkerLink* link,
                                  const v1::WorkerMessage& report, const ParsedLogs* parsed) {
  const bool alone = !in_reports_;
  if (alone) BeginReports();
  ApplyReport(worker_id, link, report, parsed);
  if (alone) EndReports();
}

void Orchestrator::BeginReports() {
  in_reports_ = true;
  BeginGroup();
}

void Orchestrator::EndReports() {
  // A deferred start is written with the group's other writes, or, when the group acknowledges
  // other reports, without (an Ack is cumulative: it would acknowledge the start too).
  if (state_.WriteDeferred(/*force=*/group_applied_)) {
    for (const auto& held : held_acks_) workers_.Applied(held.worker_id, held.link, held.seq);
    held_acks_.clear();
  }
  group_applied_ = false;
  EndGroup();
  in_reports_ = false;
  // Acks are cumulative: one per worker for every report of the group, once it is durable.
  if (!state_.failing()) workers_.AckApplied();
}

void Orchestrator::WriteDeferredStarts() {
  BeginReports();
  group_applied_ = true;  // forces WriteDeferred in EndReports
  EndReports();
}

void Orchestrator::ApplyReport(const std::string& worker_id, const WorkerLink* link,
                               const v1::WorkerMessage& report, const ParsedLogs* parsed) {
  if (state_.HoldBack(worker_id, link, report.has_logs())) return;
  if (ForeignReport(worker_id, report)) {
    // Acknowledged, so that a worker that really ran the attempt once does not replay it forever.
    workers_.Applied(worker_id, link, report.seq());
    group_applied_ = true;
    return;
  }
  const auto body = report.body_case();
  if (body == v1::WorkerMessage::kStarted) {
    OnJobStarted(report.started());
    if (state_.deferring()) {  // acknowledged once the start is written (EndReports)
      held_acks_.push_back({worker_id, link, report.seq()});
      return;
    }
  } else if (body == v1::WorkerMessage::kLogs) {
    OnLogs(report.logs(), parsed);
  } else if (body == v1::WorkerMessage::kExited) {
    OnJobExited(report.exited());
  } else {
    return;  // a Hello after the first message, or an empty one: nothing to acknowledge
  }
  // Noted now, acknowledged by EndReports once what it changed is durable.
  workers_.Applied(worker_id, link, report.seq());
  group_applied_ = true;
}

void Orchestrator::BeginGroup() {
  state_.BeginBatch();
  workers_.Hold();
  holding_notes_ = true;
}

void Orchestrator::EndGroup() {
  // Once the group is written (a kill -9 of amtd keeps it), the messages to workers on this
  // machine go out while it is synced: a power loss that undid the commit would end their jobs
  // too, so a launch can no more outlive its record than after a synced commit, and the sync
  // (0.5-2 ms) overlaps the launch. Everything else waits for the sync: other workers'
  // messages, the Acks, the notifications. On failure the batch's changes are kept and written
  // again (degraded, durable_state.h), and the launches in it wait with them: their StartJobs
  // are parked until the retry has written them (OnStoreRecovered), as after any failed write of
  // a launch.
  if (state_.WriteBatch().ok()) {
    workers_.ReleaseSameMachine();
    if (state_.Sync().ok()) {
      workers_.Release();
    } else {
      workers_.Park();
    }
  } else {
    workers_.Park();
  }
  holding_notes_ = false;
  auto notes = std::move(held_notes_);
  held_notes_.clear();
  for (const auto& [tuning, training] : notes) Notify(tuning, training);
}

bool Orchestrator::ForeignReport(const std::string& worker_id, const v1::WorkerMessage& report) {
  const std::string* name = nullptr;
  int attempt = 0;
  const char* kind = "";
  switch (report.body_case()) {
    case v1::WorkerMessage::kStarted:
      name = &report.started().training_job_name();
      attempt = report.started().attempt();
      kind = "JobStarted";
      break;
    case v1::WorkerMessage::kLogs:
      name = &report.logs().training_job_name();
      attempt = report.logs().attempt();
      kind = "LogBatch";
      break;
    case v1::WorkerMessage::kExited:
      name = &report.exited().training_job_name();
      attempt = report.exited().attempt();
      kind = "JobExited";
      break;
    default:
      return false;
  }
  const auto* job = FindTraining(*name);
  if (job == nullptr || job->attempt() != attempt || job->worker_id() == worker_id) return false;
  // An ended attempt has no worker: a late replay of its own worker is refused without a word.
  if (options_.log && !IsTerminal(*job)) {
    options_.log("refused a " + std::string(kind) + " report from worker \"" + worker_id +
                 "\" for training job " + job->describe().training_job_name() + " (attempt " +
                 std::to_string(attempt) + "), which " +
                 (job->worker_id().empty() ? std::string("runs on no worker")
                                           : "runs on worker \"" + job->worker_id() + "\""));
  }
  return true;
}

void Orchestrator::OnJobStarted(const v1::JobStarted& started) {
  auto* job = FindTraining(started.training_job_name());
  if (job == nullptr || job->attempt() != started.attempt() || IsTerminal(*job)) return;
  if (job->attempt_started()) return;  // a replay
  job->set_attempt_started(true);
  *job->mutable_gpus() = started.gpus();
  const double now = clock_.Now();
  if (job->describe().training_job_status() == kInProgress) {
    MarkTraining(*job, now);
    ArmSpotInterruption(*job);
  } else if (!job->describe().has_training_start_time()) {
    job->mutable_describe()->set_training_start_time(now);
  }
  // The start is written with the next commit that writes anything (its job's log lines, its
  // end, another job's report), not by a sync of its own, or after 0.5 s on its own
  // (WriteDeferredStarts): the worker reports it again until it is acknowledged, which waits for
  // that commit (EndReports). While the store fails it is written (and kept) at once, as before.
  if (state_.failing()) {
    (void)Persist(*job);
  } else {
    state_.Defer(*job);
  }
  Notify(job->tuning_job_name(), job->describe().training_job_name());
}

std::optional<metrics::MetricParser> Orchestrator::MetricParserOf(
    const std::string& training_job_name) {
  const auto* job = FindTraining(training_job_name);
  if (job == nullptr) return std::nullopt;
  return Rt(*job).parser;
}

void Orchestrator::OnLogs(const v1::LogBatch& batch, const ParsedLogs* parsed) {
  auto* job = FindTraining(batch.training_job_name());
  if (job == nullptr || job->attempt() != batch.attempt()) return;
  const JobRuntime& rt = Rt(*job);
  const auto* tuning = FindTuning(job->tuning_job_name());
  const LogContext context{
      .parser = *rt.parser,
      .objective_metric = rt.objective_metric,
      .tuning = tuning,
      .tuning_jobs = tuning == nullptr ? nullptr : &JobsOf(*tuning),
      .early_stopping = &options_.early_stopping,
  };
  auto ingested = IngestLogBatch(*job, batch, parsed, context);
  if (!ingested.has_value()) return;  // a replay of lines already stored
  (void)Persist(*job, std::move(ingested->logs), std::move(ingested->points));
  if (!ingested->stop_message.empty()) {
    (void)StopRunningJob(*job, StopCause::kEarlyStopping, ingested->stop_message);
  }
  Notify(job->tuning_job_name(), job->describe().training_job_name());
}

void Orchestrator::OnJobExited(const v1::JobExited& exited) {
  auto* job = FindTraining(exited.training_job_name());
  if (job == nullptr || job->attempt() != exited.attempt() || IsTerminal(*job)) return;
  if (job->interrupted() && job->describe().training_job_status() == kInProgress) {
    // A Spot interruption ended the attempt: back to Starting, relaunched when a slot is free;
    // the worker copies the checkpoints back before the next attempt (spec §8).
    DetachFromWorker(*job);
    job->set_spot_interruptions(job->spot_interruptions() + 1);
    MarkRestarting(*job, clock_.Now(), "Restarting the training job after a Spot interruption");
    (void)Persist(*job);
    waiting_.push_back(Key(job->describe().training_job_name()));
  } else if (exited.worker_shutdown() && job->describe().training_job_status() == kInProgress) {
    // The worker was shut down under the job (Slurm ended its allocation: a node failure,
    // preemption, scancel; the machine stopping): the instance was lost, whatever the trainer
    // did on its SIGTERM. Retried per RetryStrategy, else an InternalServerError.
    if (!RetryInPlace(*job, "the worker running it was shut down")) {
      ExitReport report;
      report.internal_error = true;
      report.failure_reason =
          "The worker running this training job was shut down before the job ended.";
      EndJob(*job, report);
    }
  } else {
    ExitReport report;
    report.exit_code = exited.exit_code();
    report.signal = exited.signal();
    report.failure_reason = exited.failure_reason();
    report.launch_failed = exited.launch_failed();
    report.model_uploaded = exited.model_uploaded();
    report.upload_failure = exited.upload_failure();
    EndJob(*job, report);
  }
  Schedule();
  Notify(job->tuning_job_name(), job->describe().training_job_name());
}

}  // namespace amt::core
