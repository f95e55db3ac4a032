// Orchestrator: the coordinator that owns amtd's state on the loop. It keeps the tuning-job and
// training-job records, applies the pure pieces to them (training_job.h and tuning_job.h: the
// status machines; job_builder.h: new records; warm_start.h; early_stopping.h; worker_pool.h:
// placement; launch_plan.h: the StartJob), persists every change through one path, and owns the
// timers of every job. It talks to the outside through injected interfaces only: Store, Clock,
// Timers and worker links.
//
// Threading: every method runs on the orchestrator loop (one thread). gRPC and HTTP handlers and
// worker streams post onto that loop and never touch this object directly; that is what lets
// this class hold no locks.
//
// Persistence (durable_state.h): every state change is written to the Store before the method
// that made it returns, so a reply sent after it acknowledges durable state. The changes of one
// worker report are one group commit (BeginGroup .. EndGroup), and the messages and
// notifications they cause wait until it is done. When a write fails,
// the request that made it is answered with the store's error (InternalFailure), the change is
// kept in memory and written again every store_retry_seconds, and until every change is written
// amtd is degraded: it launches nothing and refuses every mutating request with
// ServiceUnavailable (reads are served). A new record (CreateHyperParameterTuningJob,
// CreateTrainingJob, a tuning job's launch) is kept only once written; a launch decided inside a
// group whose commit then fails is kept and written again with the group's other changes. One
// rule for every launch: its StartJob leaves amtd only once the launch is durable (until then it
// is parked, WorkerPool::Park, and sent when the store has written it). Worker reports are
// facts: applied in memory even when they cannot be written yet. A JobStarted's write is
// deferred to the next commit (at most 0.5 s), its Ack with it (docs/architecture.md).
//
// Files: orchestrator.cc (lookups, restart, the tuning and training job API),
// orchestrator_jobs.cc (scheduling, launches, stops, timers, the end of jobs),
// orchestrator_workers.cc (worker connections and reports), orchestrator_changes.cc (deletes,
// updates, tags), orchestrator_reads.cc (explanations, logs, metrics); the per-job runtime state
// they share is in orchestrator_runtime.h.
#ifndef AMT_ORCHESTRATOR_CORE_ORCHESTRATOR_H_
#define AMT_ORCHESTRATOR_CORE_ORCHESTRATOR_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "amt/v1/state.pb.h"
#include "amt/v1/tuning.pb.h"
#include "amt/v1/worker.pb.h"
#include "common/arn.h"
#include "common/clock.h"
#include "orchestrator/core/durable_state.h"
#include "orchestrator/core/early_stopping.h"
#include "orchestrator/core/launch_plan.h"
#include "orchestrator/core/log_ingest.h"
#include "orchestrator/core/provisioner.h"
#include "orchestrator/core/tags.h"
#include "orchestrator/core/timers.h"
#include "orchestrator/core/training_job.h"
#include "orchestrator/core/tuning_job.h"
#include "orchestrator/core/worker_pool.h"
#include "orchestrator/metrics/metric_parser.h"
#include "orchestrator/search/allocation.h"
#include "orchestrator/search/strategy.h"
#include "orchestrator/spot/spot.h"
#include "orchestrator/store/store.h"

namespace amt::core {

// The loop's per-job state besides the records (parsers, strategies, timers):
// orchestrator_runtime.h.
struct JobRuntime;
struct TuningRuntime;
struct Runtimes;

struct OrchestratorOptions {
  ArnContext arn;
  LaunchOptions launch;
  // Multiplies SageMaker's waits: stop grace, MaxRuntimeInSeconds of training and tuning jobs,
  // the worker-lost timeout. 0.01 turns SageMaker's 120 s stop grace into 1.2 s.
  double time_scale = 1.0;
  // SageMaker: SIGTERM, 120 s, then SIGKILL (before time_scale).
  double stop_grace_seconds = 120;
  // A tuning job fails when its first N finished training jobs all failed ("No training job
  // succeeded after 5 attempts"; the 5 is observed, UNCONFIRMED as a constant).
  int early_failure_attempts = 5;
  // CompleteOnConvergence: consecutive jobs not improving the best by 1% that count as converged
  // (AWS's "internal algorithm" is undocumented; tuning_job.h).
  int convergence_jobs = kDefaultConvergenceJobs;
  // Multi-algorithm tuning: how trials are dealt over TrainingJobDefinitions (search/allocation.h).
  search::Allocation multi_algorithm_allocation = search::Allocation::kRoundRobin;
  // How long a running job may go without its worker (disconnected, or amtd restarted) before
  // it fails as RetryableError (before time_scale).
  double worker_lost_timeout_seconds = 60;
  // Seed source for tuning jobs without RandomSeed (injected so tests are deterministic).
  std::function<uint64_t()> seed_source;
  // AUTO early stopping's and Hyperband's undocumented parts.
  EarlyStoppingOptions early_stopping;
  // Managed spot simulation: when spot jobs are interrupted (scaled by time_scale) and how they
  // are billed; spot_seed makes the interruptions of a run reproducible.
  spot::SpotOptions spot;
  uint64_t spot_seed = 0;
  // While the store fails, unsaved state is written again every this many seconds (not scaled).
  double store_retry_seconds = 1;
  // While the store fails, log lines are kept in memory up to this many bytes; past that the
  // workers' reports are held back on the workers (not applied, not acknowledged) and replayed
  // once the store accepts writes again, so amtd's memory stays bounded however long it fails.
  size_t max_unsaved_log_bytes = 64 << 20;
  // Where the orchestrator reports what an operator must know (store failures and recovery);
  // dropped when empty.
  std::function<void(const std::string&)> log;
};

class Orchestrator {
 public:
  // `store`, `clock` and `timers` must outlive the orchestrator. Destroying it cancels every
  // timer it armed. `provisioner`, when given (amtd --executor slurm), must outlive it too: jobs
  // no connected worker has room for go to workers it makes (provisioner.h).
  Orchestrator(OrchestratorOptions options, store::Store& store, const Clock& clock, Timers& timers,
               Provisioner* provisioner = nullptr);
  ~Orchestrator();
  Orchestrator(const Orchestrator&) = delete;
  Orchestrator& operator=(const Orchestrator&) = delete;

  // Writes a job's start that still waits for a commit (DurableState::Defer) now. amtd's graceful
  // shutdown calls it before it destroys the orchestrator, so that the store says what amtd knew
  // (the job started); after a crash the worker's replay of the start does that instead.
  void FlushDeferred();

  // Loads every job from the store and carries on: unfinished tuning jobs continue, jobs that were
  // running wait for their worker to reconnect (see worker_lost_timeout_seconds).
  absl::Status Load();

  // SageMaker operations. Requests are validated by the caller (api/). Errors carry SageMaker's
  // names through their codes (common/errors.h).
  absl::StatusOr<v1::CreateHyperParameterTuningJobResponse> CreateTuningJob(
      const v1::CreateHyperParameterTuningJobRequest& request);
  absl::StatusOr<v1::DescribeHyperParameterTuningJobResponse> DescribeTuningJob(
      const std::string& name);
  absl::StatusOr<v1::ListHyperParameterTuningJobsResponse> ListTuningJobs(
      const v1::ListHyperParameterTuningJobsRequest& request);
  absl::StatusOr<v1::ListTrainingJobsForHyperParameterTuningJobResponse>
  ListTrainingJobsForTuningJob(
      const v1::ListTrainingJobsForHyperParameterTuningJobRequest& request);
  absl::Status StopTuningJob(const std::string& name);
  // DeleteHyperParameterTuningJob: the tuning job's entry only; its training jobs stay, unlinked.
  // ResourceInUse while it is InProgress or Stopping, or warm-starts a tuning job that is.
  absl::Status DeleteTuningJob(const std::string& name);
  absl::StatusOr<v1::CreateTrainingJobResponse> CreateTrainingJob(
      const v1::CreateTrainingJobRequest& request);
  absl::StatusOr<v1::DescribeTrainingJobResponse> DescribeTrainingJob(const std::string& name);
  absl::StatusOr<v1::ListTrainingJobsResponse> ListTrainingJobs(
      const v1::ListTrainingJobsRequest& request);
  absl::Status StopTrainingJob(const std::string& name);
  // DeleteTrainingJob: the record, its log lines and metric points. ResourceInUse unless it has
  // ended and its tuning job (if any) has too.
  absl::Status DeleteTrainingJob(const std::string& name);
  // UpdateTrainingJob (job_builder.h's ApplyTrainingJobUpdate).
  absl::StatusOr<v1::UpdateTrainingJobResponse> UpdateTrainingJob(
      const v1::UpdateTrainingJobRequest& request);
  // Tags of the tuning or training job `request.resource_arn` names (core/tags.h). An ARN that
  // names no job of amtd's: ValidationException "Requested resource not found." (as Describe).
  absl::StatusOr<v1::AddTagsResponse> AddTags(const v1::AddTagsRequest& request);
  absl::StatusOr<v1::ListTagsResponse> ListTags(const v1::ListTagsRequest& request);
  absl::Status DeleteTags(const v1::DeleteTagsRequest& request);

  // amt-local extensions.
  // Early-stopping decisions of a training job (ValidationException when it does not exist).
  absl::StatusOr<v1::ExplainTrainingJobResponse> ExplainTrainingJob(const std::string& name);
  // Every training job's objective curve and the decisions drawn on it (its stop, Hyperband's
  // rungs), and AUTO's median reference line now (ResourceNotFound when the tuning job does not
  // exist). O(emissions of the tuning job).
  absl::StatusOr<v1::ExplainHyperParameterTuningJobResponse> ExplainHyperParameterTuningJob(
      const std::string& name);
  // Log lines from sequence `from` on, at most `limit`; only `host`'s ("algo-2") when it is set.
  absl::StatusOr<std::vector<store::LogEntry>> ReadLogs(const std::string& training_job_name,
                                                        int64_t from, int limit,
                                                        const std::string* host = nullptr);
  // Every value the training job's MetricDefinitions captured, in emission order.
  absl::StatusOr<std::vector<v1::MetricPoint>> ReadMetrics(const std::string& training_job_name);
  // The number of lines the training job has logged so far: the sequence of its next line.
  absl::StatusOr<int64_t> LogLength(const std::string& training_job_name);
  // The tuning job and all its training jobs (for watch streams); with `only`, just the training
  // jobs of it named there (other names are skipped), so that a stream's message costs what
  // changed, not the tuning job's size.
  absl::StatusOr<v1::WatchHyperParameterTuningJobResponse> Snapshot(
      const std::string& tuning_job_name, const std::vector<std::string>* only = nullptr);

  // Change notifications, for watch streams: `listener(tuning_job_name, training_job_name)` runs
  // on the loop after each state change (either name may be empty).
  using Listener =
      std::function<void(const std::string& tuning_job, const std::string& training_job)>;
  uint64_t Subscribe(Listener listener);
  void Unsubscribe(uint64_t id);

  // Worker events.
  // Registers the worker of `hello` over `link` and re-adopts the attempts it says it runs.
  // AlreadyExists, changing nothing, when a worker of that id is connected (not a provisional
  // link) and `hello` is not from the same process (WorkerHello.instance_id): no process takes
  // the place of a running worker; a restarted one is taken once its old stream has ended.
  absl::Status OnWorkerConnected(const v1::WorkerHello& hello, std::shared_ptr<WorkerLink> link);
  // `link` identifies the connection, so a late disconnect of a replaced connection is ignored.
  void OnWorkerDisconnected(const std::string& worker_id, const WorkerLink* link);
  // A numbered report (JobStarted, LogBatch or JobExited) from `worker_id` over `link`: applied,
  // then acknowledged on that link once what it changed is saved (while the store fails, when it
  // accepts writes again). A report applied twice (a replay) changes nothing the second time. A
  // report on an attempt that runs on another worker is refused: logged and acknowledged, never
  // applied (a worker reports only on what it was given).
  // `parsed`, when given for a LogBatch, holds its lines' metric values, parsed off the loop
  // with a copy of the job's parser (MetricParserOf); they are used when that parser is still
  // the job's and there is one entry per line, else the lines are parsed here (log_ingest.h).
  void OnWorkerReport(const std::string& worker_id, const WorkerLink* link,
                      const v1::WorkerMessage& report, const ParsedLogs* parsed = nullptr);
  // Reports applied together (WorkerServiceImpl: the reports of every worker waiting for the
  // loop when it gets to them, such as a job's last LogBatch and its JobExited): the
  // OnWorkerReport calls between BeginReports and EndReports are one group commit, one sync of
  // the store, and the StartJobs, StopJobs, change notifications and Acks they cause wait until
  // EndReports has committed it. Outside such a pair each report is a group of its own. Nothing
  // but OnWorkerReport may run in between (a request's reply would go out before its write is
  // durable).
  void BeginReports();
  void EndReports();
  // A copy of training job `name`'s compiled MetricDefinitions (cheap: the patterns are shared;
  // immutable and safe to use from any thread), so a worker stream's thread parses its log
  // lines instead of the loop; nullopt for an unknown job.
  std::optional<metrics::MetricParser> MetricParserOf(const std::string& training_job_name);
  // A provisioned worker (`link` its provisional link) ended without reporting the exit of
  // `attempt` of `training_job_name` (provisioner.h): the attempt ends as `end` says, unless it
  // has ended already or its worker has connected since.
  void OnProvisionedWorkerEnded(const std::string& worker_id, const WorkerLink* link,
                                const std::string& training_job_name, int attempt,
                                const ProvisionedEnd& end);

 private:
  // Deferred starts (OnJobStarted) that no commit took within DurableStateOptions::defer_seconds:
  // written by a group of their own, and their reports acknowledged.
  void WriteDeferredStarts();
  // Applies one report inside the open group and notes it applied (acknowledged at EndReports).
  void ApplyReport(const std::string& worker_id, const WorkerLink* link,
                   const v1::WorkerMessage& report, const ParsedLogs* parsed);
  // The reports OnWorkerReport applies.
  void OnJobStarted(const v1::JobStarted& started);
  void OnLogs(const v1::LogBatch& batch, const ParsedLogs* parsed);
  void OnJobExited(const v1::JobExited& exited);
  // Whether `report` names the current attempt of a training job that does not run on
  // `worker_id` (logged unless the job has ended); a report on an unknown job or an earlier
  // attempt is not refused: it is ignored where it is applied.
  bool ForeignReport(const std::string& worker_id, const v1::WorkerMessage& report);

  v1::TrainingJobRecord* FindTraining(const std::string& name);
  // The tag list of the job `arn` names, and a way to save that job; nullptr when none.
  TagList* TagsOfArn(const std::string& arn, std::function<absl::Status()>* persist);
  v1::TuningJobRecord* FindTuning(const std::string& name);
  // The training jobs `tuning` launched, by index (valid until the next launch or delete).
  const std::vector<const v1::TrainingJobRecord*>& JobsOf(const v1::TuningJobRecord& tuning) const;
  // The records of the parent tuning jobs `config` names (nullptr for a missing one).
  std::vector<const v1::TuningJobRecord*> ParentsOf(
      const v1::HyperParameterTuningJobWarmStartConfig& config) const;
  std::vector<search::PriorObservation> PriorObservations(const v1::TuningJobRecord& tuning) const;

  // The one persist path: state_ (durable_state.h).
  absl::Status Persist(const v1::TrainingJobRecord& job, std::vector<store::LogEntry> logs = {},
                       std::vector<v1::MetricPoint> points = {}) {
    return state_.Persist(job, std::move(logs), std::move(points));
  }
  absl::Status Persist(const v1::TuningJobRecord& tuning) { return state_.Persist(tuning); }
  // The store accepts writes again: acknowledge what was applied, drop the connections whose
  // reports were held back (their workers replay them), and carry on.
  void OnStoreRecovered(const DurableState::HeldLinks& held);
  // Held while a group is open (EndGroup delivers them).
  void Notify(const std::string& tuning_job, const std::string& training_job);
  // A group commit (DurableState's batch) around one worker report: the writes it makes are
  // committed together by EndGroup, and the messages to workers and the change notifications
  // it causes wait until then.
  void BeginGroup();
  void EndGroup();

  // Scheduling.
  void Schedule();
  // A worker with `needed` free slots: a connected one, else one the provisioner makes (nullopt
  // when neither can be had now).
  std::optional<std::string> PlaceFor(WorkerNeed needed);
  // A provisioned worker that got no job after all is dropped.
  void DropIfUnused(const std::string& worker_id);
  absl::Status LaunchNextTrial(v1::TuningJobRecord& tuning, const std::string& worker_id);
  void Launch(v1::TrainingJobRecord& job, const std::string& worker_id);
  // Stops a job (signal to its worker, or at once when never placed). Returns the write's status;
  // the stop goes ahead either way.
  absl::Status StopRunningJob(v1::TrainingJobRecord& job, StopCause cause,
                              const std::string& message = "Stopping the training job");
  void SendStop(const v1::TrainingJobRecord& job);
  void ArmRuntimeDeadline(v1::TrainingJobRecord& job);
  void ArmTuningRuntime(const v1::TuningJobRecord& tuning);
  void ArmLostTimer(v1::TrainingJobRecord& job);
  void DetachFromWorker(v1::TrainingJobRecord& job);
  // Managed spot: arms the current attempt's interruption, and the MaxWaitTimeInSeconds deadline
  // (from the creation time, across attempts and restarts of amtd).
  void ArmSpotInterruption(v1::TrainingJobRecord& job);
  void ArmMaxWait(v1::TrainingJobRecord& job);
  // RetryStrategy: a job that meets an internal error (its worker lost) while retries remain is
  // restarted in place (same name, back to Starting) instead of failing as RetryableError.
  // Returns whether it was; the caller then schedules.
  bool RetryInPlace(v1::TrainingJobRecord& job, const std::string& what);
  // The attempt ended (`report`): the final status, then the tuning job's bookkeeping. The
  // caller notifies.
  void EndJob(v1::TrainingJobRecord& job, const ExitReport& report);

  // After a training job ends: tuning counters, best job, end of the tuning job.
  void OnTrainingJobEnded(v1::TrainingJobRecord& job);
  void BeginEndingTuning(v1::TuningJobRecord& tuning, EndCause cause);
  void EndTuningIfDone(v1::TuningJobRecord& tuning);
  absl::Status EnsureStrategy(const v1::TuningJobRecord& tuning);
  // How many trials each definition's strategy can produce (nullopt: unbounded); EnsureStrategy
  // first.
  std::vector<std::optional<int64_t>> TrialCapacities(const v1::TuningJobRecord& tuning);
  TuningRuntime& TuningRt(const v1::TuningJobRecord& tuning);
  JobRuntime& Rt(const v1::TrainingJobRecord& job);
  // The compiled `defs`, shared with every job that has the same ones (Runtimes::parsers).
  metrics::MetricParser SharedParser(
      const google::protobuf::RepeatedPtrField<v1::MetricDefinition>& defs);

  OrchestratorOptions options_;
  store::Store& store_;
  const Clock& clock_;
  Timers& timers_;
  Provisioner* const provisioner_;

  // Records by lower-cased name (SageMaker names are unique case-insensitively).
  std::map<std::string, v1::TuningJobRecord> tuning_;
  std::vector<std::string> tuning_order_;  // creation order, lower-cased
  std::map<std::string, v1::TrainingJobRecord> training_;
  std::vector<std::string> training_order_;
  // Tuning key -> its training jobs by index: pointers into training_ (a std::map, whose nodes
  // never move), so the per-job work of a tuning job reads its jobs without a lookup each.
  std::map<std::string, std::vector<const v1::TrainingJobRecord*>> tuning_children_;
  std::deque<std::string> waiting_;  // training jobs waiting for a slot
  WorkerPool workers_;
  std::map<uint64_t, Listener> listeners_;
  uint64_t next_listener_ = 1;
  bool holding_notes_ = false;  // within BeginGroup .. EndGroup
  bool in_reports_ = false;     // within BeginReports .. EndReports
  bool group_applied_ = false;  // a report of the open group was noted applied
  // JobStarted reports whose change waits in DurableState::Defer: noted applied (and so
  // acknowledged) once WriteDeferred has written it.
  struct HeldAck {
    std::string worker_id;
    const WorkerLink* link;
    uint64_t seq;
  };
  std::vector<HeldAck> held_acks_;
  std::vector<std::pair<std::string, std::string>> held_notes_;

  DurableState state_;

  // Declared last, destroyed first: their timers are cancelled while everything they refer to
  // still exists.
  std::unique_ptr<Runtimes> rt_;
};

}  // namespace amt::core

#endif  // AMT_ORCHESTRATOR_CORE_ORCHESTRATOR_H_
