// The Orchestrator's work after a request is accepted: scheduling and launching attempts, the
// timers of every job, and the end of training and tuning jobs. (Requests and lookups are in
// orchestrator.cc, worker connections and reports in orchestrator_workers.cc.)
#include <algorithm>
#include <iterator>

#include "absl/strings/ascii.h"
#include "common/status_macros.h"
#include "orchestrator/core/job_builder.h"
#include "orchestrator/core/orchestrator.h"
#include "orchestrator/core/orchestrator_runtime.h"
#include "orchestrator/validation/definitions.h"

namespace amt::core {
namespace {

constexpr double kDefaultMaxRuntimeSeconds = 86400;  // SageMaker's default: one day

std::string Key(const std::string& name) { return absl::AsciiStrToLower(name); }

// What a strategy sees of `jobs`, training jobs of `tuning` (one definition's, in launch order).
search::History HistoryOf(const v1::TuningJobRecord& tuning,
                          const std::vector<const v1::TrainingJobRecord*>& jobs) {
  search::History history;
  history.minimize = validation::ObjectiveTypeOf(tuning.describe()) != "Maximize";
  for (const auto* job : jobs) {
    search::Trial trial;
    trial.params.insert(job->tuned_hyperparameters().begin(), job->tuned_hyperparameters().end());
    if (job->objective_status() == "Succeeded") {
      trial.state = search::TrialState::kSucceeded;
      trial.objective = job->objective();
    } else if (job->objective_status() == "Failed") {
      trial.state = search::TrialState::kFailed;
    }
    history.trials.push_back(std::move(trial));
  }
  return history;
}

// What the next trial of `tuning` may need: its definitions' largest InstanceCount and GPUs.
WorkerNeed MostNeeded(const v1::TuningJobRecord& tuning) {
  WorkerNeed most(1, 0);
  for (int i = 0; i < validation::DefinitionCount(tuning.describe()); ++i) {
    const WorkerNeed need =
        NeedOf(validation::DefinitionAt(tuning.describe(), i).definition.resource_config());
    most.instances = std::max(most.instances, need.instances);
    most.gpus = std::max(most.gpus, need.gpus);
  }
  return most;
}

}  // namespace

// ---------------------------------------------------------------- scheduling

void Orchestrator::Schedule() {
  if (state_.failing()) return;  // nothing new while state cannot be written
  // Jobs already accepted come first: standalone CreateTrainingJob requests and tuning trials
  // that were created but not placed (after a restart), oldest first.
  // In order, but a job of more instances than any connected worker has slots waits without
  // holding up the ones behind it (a bigger worker may connect).
  for (size_t pos = 0; pos < waiting_.size();) {
    auto it = training_.find(waiting_[pos]);
    if (it == training_.end() || IsTerminal(it->second) || !it->second.worker_id().empty()) {
      waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(pos));
      continue;
    }
    const WorkerNeed needed = NeedOf(it->second);
    if (provisioner_ == nullptr && !workers_.Fits(needed)) {
      ++pos;
      continue;
    }
    const auto worker = PlaceFor(needed);
    if (!worker.has_value()) return;
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(pos));
    Launch(it->second, *worker);  // may change waiting_: scan again from the front
    DropIfUnused(*worker);        // the launch failed before the worker got the job
    pos = 0;
  }
  for (const auto& key : tuning_order_) {
    auto& t = tuning_.at(key);
    while (MayLaunch(t)) {
      const int parallel = t.describe()
                               .hyper_parameter_tuning_job_config()
                               .resource_limits()
                               .max_parallel_training_jobs();
      if (RunningJobs(JobsOf(t), &TuningRt(t).settled) >= std::max(1, parallel)) break;
      const WorkerNeed needed = MostNeeded(t);
      // Waits for a worker with that many slots (a provisioner makes them to measure).
      if (provisioner_ == nullptr && !workers_.Fits(needed)) break;
      const auto worker = PlaceFor(needed);
      if (!worker.has_value()) return;
      const bool launched = LaunchNextTrial(t, *worker).ok();
      DropIfUnused(*worker);
      if (!launched) break;
    }
  }
}

std::optional<std::string> Orchestrator::PlaceFor(WorkerNeed needed) {
  if (auto worker = workers_.FreeWorker(needed); worker.has_value()) return worker;
  if (provisioner_ == nullptr || !provisioner_->HasRoom()) return std::nullopt;
  Provisioner::Provided provided = provisioner_->Provide(needed.instances);
  // Slurm asks for the GPUs (--gres): the one-shot worker has the node's.
  workers_.Connect(provided.worker_id, needed.instances, std::move(provided.link),
                   /*single_use=*/true);
  return provided.worker_id;
}

void Orchestrator::DropIfUnused(const std::string& worker_id) {
  if (provisioner_ == nullptr || !workers_.Idle(worker_id)) return;
  const WorkerLink* link = workers_.LinkOf(worker_id);
  // Only a provisional link that never got a job: a connected worker stays.
  if (workers_.Disconnect(worker_id, link).has_value()) provisioner_->Discard(worker_id);
}

absl::Status Orchestrator::LaunchNextTrial(v1::TuningJobRecord& tuning,
                                           const std::string& worker_id) {
  const int index = tuning.launched() + 1;
  // The definition this trial runs (multi-algorithm tuning deals them; a single one is 0), and
  // what its strategy has seen: that definition's trials only.
  const auto allocation = search::ParseAllocation(tuning.multi_algorithm_allocation());
  const std::optional<int> definition =
      search::DefinitionOfTrial(allocation.ok() ? *allocation : search::Allocation::kRoundRobin,
                                TrialCapacities(tuning), tuning.seed(), index - 1);
  search::Strategy* strategy =
      definition.has_value() ? TuningRt(tuning).strategies[*definition].get() : nullptr;
  std::vector<const v1::TrainingJobRecord*> trials;
  int64_t position = 0;  // of this trial among its definition's
  const bool history = strategy != nullptr && strategy->UsesHistory();
  if (!history && !validation::IsMultiAlgorithm(tuning.describe())) {
    position = static_cast<int64_t>(JobsOf(tuning).size());  // every trial is the definition's
  } else {
    for (const auto* job : JobsOf(tuning)) {
      if (job->definition() != definition.value_or(0)) continue;
      ++position;
      // Random and Grid read only the index: no history of every earlier trial for them.
      if (history) trials.push_back(job);
    }
  }
  auto suggestion =
      strategy != nullptr
          ? strategy->Suggest(HistoryOf(tuning, trials), position)
          : absl::OutOfRangeError("every definition's strategy has run all its trials");
  if (!suggestion.ok()) {
    // The strategy has nothing more (Grid exhausted): the budget is what was launched.
    tuning.set_max_jobs(tuning.launched());
    (void)Persist(tuning);
    EndTuningIfDone(tuning);
    return suggestion.status();
  }
  const double now = clock_.Now();
  const RecordOptions record{options_.arn, options_.spot.discount};
  v1::TrainingJobRecord job =
      NewTuningTrainingJob(tuning, index, *definition, *suggestion, record, now);
  // The tuning record changes only once the launch is written (a failed write keeps nothing).
  v1::TuningJobRecord next = tuning;
  next.set_launched(index);
  next.mutable_describe()->set_last_modified_time(now);
  auto jobs = JobsOf(tuning);
  jobs.push_back(&job);
  // The counters count the new job (InProgress, Pending).
  RecomputeTuningView(next, jobs, &TuningRt(tuning).settled);
  RETURN_IF_ERROR(state_.PersistNew(&next, {job}));
  tuning = std::move(next);
  const std::string key = Key(job.describe().training_job_name());
  training_order_.push_back(key);
  auto& stored = training_.emplace(key, std::move(job)).first->second;
  tuning_children_[Key(tuning.describe().hyper_parameter_tuning_job_name())].push_back(&stored);
  Launch(stored, worker_id);
  return absl::OkStatus();
}

void Orchestrator::Launch(v1::TrainingJobRecord& job, const std::string& worker_id) {
  const double now = clock_.Now();
  job.set_attempt(job.attempt() + 1);
  job.set_attempt_started(false);
  job.set_attempt_log_lines(0);
  auto plan = PlanLaunch(job, options_.launch);
  if (!plan.ok()) {
    ExitReport report;
    report.launch_failed = true;
    report.failure_reason = std::string(plan.status().message());
    EndJob(job, report);
    Notify(job.tuning_job_name(), job.describe().training_job_name());
    return;
  }
  job.set_worker_id(worker_id);
  MarkLaunching(job, now);
  workers_.Assign(worker_id, Key(job.describe().training_job_name()), NeedOf(job));
  const auto& sc = job.describe().stopping_condition();
  const double max_runtime =
      sc.has_max_runtime_in_seconds() ? sc.max_runtime_in_seconds() : kDefaultMaxRuntimeSeconds;
  // A restarted spot job has used part of its MaxRuntimeInSeconds in earlier attempts.
  job.set_runtime_deadline(
      now + std::max(0.0, max_runtime * options_.time_scale - job.trained_seconds()));
  ArmRuntimeDeadline(job);
  ArmMaxWait(job);
  // A launch is not a request: kept and written again on failure, and its StartJob waits until
  // then (a StartJob never leaves before its launch is durable: WorkerPool::Park).
  const bool saved = Persist(job).ok();
  v1::OrchestratorMessage message;
  *message.mutable_start() = std::move(*plan);
  // What a StopJob would give; the worker uses it when one host of several fails.
  message.mutable_start()->set_stop_grace_seconds(options_.stop_grace_seconds *
                                                  options_.time_scale);
  // For executors that ask a scheduler for the time and disk (Slurm's --time and --tmp).
  message.mutable_start()->set_max_runtime_seconds(std::max(0.0, job.runtime_deadline() - now));
  message.mutable_start()->set_volume_size_gb(job.describe().resource_config().volume_size_in_gb());
  workers_.ExpectLogs(worker_id, job.describe().training_job_name(), *Rt(job).parser);
  workers_.Send(worker_id, message, /*durable=*/saved);
  Notify(job.tuning_job_name(), job.describe().training_job_name());
}

absl::Status Orchestrator::StopRunningJob(v1::TrainingJobRecord& job, StopCause cause,
                                          const std::string& message) {
  if (IsTerminal(job) || job.describe().training_job_status() == kStopping) {
    return absl::OkStatus();
  }
  const double now = clock_.Now();
  if (job.worker_id().empty()) {
    // Never placed on a worker: nothing to signal.
    const std::string key = Key(job.describe().training_job_name());
    waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), key), waiting_.end());
    MarkStoppedBeforeStart(job, cause, now);
    absl::Status saved = Persist(job);
    OnTrainingJobEnded(job);
    return saved;
  }
  MarkStopping(job, cause, now, message);
  absl::Status saved = Persist(job);
  SendStop(job);
  return saved;
}

void Orchestrator::SendStop(const v1::TrainingJobRecord& job) {
  v1::OrchestratorMessage message;
  auto* stop = message.mutable_stop();
  stop->set_training_job_name(job.describe().training_job_name());
  stop->set_attempt(job.attempt());
  stop->set_grace_seconds(options_.stop_grace_seconds * options_.time_scale);
  workers_.Send(job.worker_id(), message);
}

// ---------------------------------------------------------------- timers

void Orchestrator::ArmTuningRuntime(const v1::TuningJobRecord& tuning) {
  const auto& d = tuning.describe();
  const auto& limits = d.hyper_parameter_tuning_job_config().resource_limits();
  if (!limits.has_max_runtime_in_seconds()) return;
  // ResourceLimits.MaxRuntimeInSeconds runs from the creation, across restarts of amtd.
  const double deadline = d.creation_time() + limits.max_runtime_in_seconds() * options_.time_scale;
  const std::string name = d.hyper_parameter_tuning_job_name();
  TuningRt(tuning).runtime_timer.Arm(timers_, deadline, [this, name] {
    auto* t = FindTuning(name);
    if (t == nullptr || !IsActive(*t) || EndCauseOf(*t) != EndCause::kNone) return;
    BeginEndingTuning(*t, EndCause::kRuntime);
    Schedule();
    Notify(name, "");
  });
}

void Orchestrator::ArmRuntimeDeadline(v1::TrainingJobRecord& job) {
  if (job.runtime_deadline() <= 0) return;
  const std::string name = job.describe().training_job_name();
  Rt(job).runtime_timer.Arm(timers_, job.runtime_deadline(), [this, name] {
    auto* j = FindTraining(name);
    if (j == nullptr || j->describe().training_job_status() != kInProgress) return;
    (void)StopRunningJob(*j, StopCause::kMaxRuntime);
    Notify(j->tuning_job_name(), name);
  });
}

void Orchestrator::ArmLostTimer(v1::TrainingJobRecord& job) {
  const std::string name = job.describe().training_job_name();
  const double when = clock_.Now() + options_.worker_lost_timeout_seconds * options_.time_scale;
  Rt(job).lost_timer.Arm(timers_, when, [this, name] {
    auto* j = FindTraining(name);
    if (j == nullptr || IsTerminal(*j)) return;
    if (workers_.Runs(j->worker_id(), Key(name))) return;  // re-adopted
    if (RetryInPlace(*j, "the worker running it was lost")) {
      Schedule();
      Notify(j->tuning_job_name(), name);
      return;
    }
    ExitReport report;
    report.internal_error = j->describe().training_job_status() != kStopping;
    report.failure_reason = "The worker running this training job was lost.";
    EndJob(*j, report);
    Schedule();
    Notify(j->tuning_job_name(), name);
  });
}

void Orchestrator::ArmSpotInterruption(v1::TrainingJobRecord& job) {
  if (!job.describe().enable_managed_spot_training()) return;
  const std::string name = job.describe().training_job_name();
  const auto after = spot::InterruptionAfter(options_.spot, options_.spot_seed, name, job.attempt(),
                                             job.spot_interruptions());
  if (!after.has_value()) return;
  const int attempt = job.attempt();
  const double when = clock_.Now() + *after * options_.time_scale;
  Rt(job).spot_timer.Arm(timers_, when, [this, name, attempt] {
    auto* j = FindTraining(name);
    if (j == nullptr || j->attempt() != attempt || j->interrupted() ||
        j->describe().training_job_status() != kInProgress || j->worker_id().empty()) {
      return;
    }
    // The instances are taken back: SIGTERM, the grace period, SIGKILL, like a stop; the exit
    // then restarts the job instead of ending it (OnJobExited).
    MarkInterrupted(*j, clock_.Now());
    (void)Persist(*j);
    SendStop(*j);
    Notify(j->tuning_job_name(), name);
  });
}

void Orchestrator::ArmMaxWait(v1::TrainingJobRecord& job) {
  const auto& d = job.describe();
  if (!d.enable_managed_spot_training() || !d.stopping_condition().has_max_wait_time_in_seconds()) {
    return;
  }
  const std::string name = d.training_job_name();
  const double deadline =
      d.creation_time() + d.stopping_condition().max_wait_time_in_seconds() * options_.time_scale;
  Rt(job).max_wait_timer.Arm(timers_, deadline, [this, name] {
    auto* j = FindTraining(name);
    if (j == nullptr || IsTerminal(*j)) return;
    (void)StopRunningJob(*j, StopCause::kMaxWait);
    Schedule();
    Notify(j->tuning_job_name(), name);
  });
}

void Orchestrator::DetachFromWorker(v1::TrainingJobRecord& job) {
  workers_.Release(job.worker_id(), Key(job.describe().training_job_name()));
  auto& rt = Rt(job);
  rt.runtime_timer.Cancel();
  rt.lost_timer.Cancel();
  rt.spot_timer.Cancel();
}

bool Orchestrator::RetryInPlace(v1::TrainingJobRecord& job, const std::string& what) {
  const auto& d = job.describe();
  if (d.training_job_status() != kInProgress || !d.has_retry_strategy() ||
      job.retries() >= d.retry_strategy().maximum_retry_attempts()) {
    return false;
  }
  DetachFromWorker(job);
  job.set_retries(job.retries() + 1);
  MarkRestarting(job, clock_.Now(),
                 "Retrying the training job after an internal error (" + what + "): retry " +
                     std::to_string(job.retries()) + " of " +
                     std::to_string(d.retry_strategy().maximum_retry_attempts()));
  (void)Persist(job);
  waiting_.push_back(Key(d.training_job_name()));
  return true;
}

// ---------------------------------------------------------------- the end of jobs

void Orchestrator::EndJob(v1::TrainingJobRecord& job, const ExitReport& report) {
  DetachFromWorker(job);
  MarkExited(job, report, clock_.Now());
  (void)Persist(job);
  OnTrainingJobEnded(job);
}

void Orchestrator::OnTrainingJobEnded(v1::TrainingJobRecord& job) {
  // Its metric parser (the compiled MetricDefinitions) has nothing more to read: freed, so memory
  // does not grow with the number of finished jobs. (Rt compiles it again if ever needed.)
  if (auto it = rt_->jobs.find(Key(job.describe().training_job_name())); it != rt_->jobs.end()) {
    it->second.parser.reset();
  }
  auto* t = FindTuning(job.tuning_job_name());
  if (t == nullptr) return;
  const EndCause reached =
      RecordFinishedJob(*t, job, JobsOf(*t), options_.early_failure_attempts, clock_.Now(),
                        options_.convergence_jobs, &TuningRt(*t).settled);
  if (reached != EndCause::kNone) {
    BeginEndingTuning(*t, reached);
    return;
  }
  (void)Persist(*t);
  EndTuningIfDone(*t);
}

void Orchestrator::BeginEndingTuning(v1::TuningJobRecord& tuning, EndCause cause) {
  BeginEnding(tuning, cause);
  (void)Persist(tuning);
  // A copy: stopping a job may end it and launch another, which changes JobsOf.
  const std::vector<const v1::TrainingJobRecord*> jobs = JobsOf(tuning);
  for (const auto* job : jobs) {
    if (!IsTerminal(*job)) {
      (void)StopRunningJob(*FindTraining(job->describe().training_job_name()),
                           StopCause::kTuningJob);
    }
  }
  EndTuningIfDone(tuning);
}

void Orchestrator::EndTuningIfDone(v1::TuningJobRecord& tuning) {
  if (!EndIfDone(tuning, JobsOf(tuning), options_.early_failure_attempts, clock_.Now(),
                 &TuningRt(tuning).settled)) {
    return;
  }
  TuningRt(tuning).runtime_timer.Cancel();
  (void)Persist(tuning);
  Notify(tuning.describe().hyper_parameter_tuning_job_name(), "");
}

}  // namespace amt::core
