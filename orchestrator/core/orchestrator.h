// Orchestrator: the tuning-job and training-job state machines, the scheduler and the counters,
// over an injected Store, Clock, Timers and worker links.
//
// Threading: every method runs on the orchestrator loop (one thread). gRPC handlers and worker
// streams post onto that loop and never touch this object directly; that is what lets this class
// hold no locks. Every state change is written to the Store before the method returns, so a reply
// sent after it acknowledges durable state.
#ifndef AMT_ORCHESTRATOR_CORE_ORCHESTRATOR_H_
#define AMT_ORCHESTRATOR_CORE_ORCHESTRATOR_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "amt/v1/state.pb.h"
#include "amt/v1/tuning.pb.h"
#include "amt/v1/worker.pb.h"
#include "common/arn.h"
#include "common/clock.h"
#include "orchestrator/core/launch_plan.h"
#include "orchestrator/core/training_job.h"
#include "orchestrator/metrics/metric_parser.h"
#include "orchestrator/search/strategy.h"
#include "orchestrator/spot/spot.h"
#include "orchestrator/stopping/asha.h"
#include "orchestrator/stopping/median_rule.h"
#include "orchestrator/store/store.h"

namespace amt::core {

// One-shot timers on the orchestrator loop, by the injected clock's time.
class Timers {
 public:
  virtual ~Timers() = default;
  // Runs `fn` on the loop once Clock::Now() >= when. Returns an id for Cancel.
  virtual uint64_t At(double when, std::function<void()> fn) = 0;
  // Cancelling an unknown or fired timer is a no-op.
  virtual void Cancel(uint64_t id) = 0;
};

// The orchestrator's side of one connected worker. Send must not block (implementations queue).
class WorkerLink {
 public:
  virtual ~WorkerLink() = default;
  virtual void Send(const v1::OrchestratorMessage& message) = 0;
};

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
  // How long a running job may go without its worker (disconnected, or amtd restarted) before
  // it fails as RetryableError (before time_scale).
  double worker_lost_timeout_seconds = 60;
  // Seed source for tuning jobs without RandomSeed (injected so tests are deterministic).
  std::function<uint64_t()> seed_source;
  // AUTO early stopping's undocumented parts (reference set, minimum references, current vs best).
  stopping::MedianRuleOptions median_rule;
  // Hyperband's undocumented parts: reduction factor (eta) and number of brackets.
  int64_t hyperband_reduction_factor = 3;
  int64_t hyperband_brackets = 3;          // chosen with bench/stopping (see bench/README.md)
  bool hyperband_stop_last_epoch = false;  // stopping::AshaOptions::stop_at_last_epoch
  // Managed spot simulation: when spot jobs are interrupted (scaled by time_scale) and how they
  // are billed; spot_seed makes the interruptions of a run reproducible.
  spot::SpotOptions spot;
  uint64_t spot_seed = 0;
};

class Orchestrator {
 public:
  // `store`, `clock` and `timers` must outlive the orchestrator.
  Orchestrator(OrchestratorOptions options, store::Store& store, const Clock& clock,
               Timers& timers);
  ~Orchestrator();
  Orchestrator(const Orchestrator&) = delete;
  Orchestrator& operator=(const Orchestrator&) = delete;

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
  absl::StatusOr<v1::CreateTrainingJobResponse> CreateTrainingJob(
      const v1::CreateTrainingJobRequest& request);
  absl::StatusOr<v1::DescribeTrainingJobResponse> DescribeTrainingJob(const std::string& name);
  absl::StatusOr<v1::ListTrainingJobsResponse> ListTrainingJobs(
      const v1::ListTrainingJobsRequest& request);
  absl::Status StopTrainingJob(const std::string& name);

  // amt-local extensions.
  // Early-stopping decisions of a training job (ValidationException when it does not exist).
  absl::StatusOr<v1::ExplainTrainingJobResponse> ExplainTrainingJob(const std::string& name);
  absl::StatusOr<std::vector<store::LogEntry>> ReadLogs(const std::string& training_job_name,
                                                        int64_t from, int limit);
  // The tuning job and all its training jobs (for watch streams).
  absl::StatusOr<v1::WatchHyperParameterTuningJobResponse> Snapshot(
      const std::string& tuning_job_name);

  // Change notifications, for watch streams: `listener(tuning_job_name, training_job_name)` runs
  // on the loop after each state change (either name may be empty).
  using Listener =
      std::function<void(const std::string& tuning_job, const std::string& training_job)>;
  uint64_t Subscribe(Listener listener);
  void Unsubscribe(uint64_t id);

  // Worker events.
  void OnWorkerConnected(const v1::WorkerHello& hello, std::shared_ptr<WorkerLink> link);
  // `link` identifies the connection, so a late disconnect of a replaced connection is ignored.
  void OnWorkerDisconnected(const std::string& worker_id, const WorkerLink* link);
  void OnJobStarted(const v1::JobStarted& started);
  void OnLogs(const v1::LogBatch& batch);
  void OnJobExited(const v1::JobExited& exited);

 private:
  struct Worker {
    int slots = 0;
    std::shared_ptr<WorkerLink> link;
    std::set<std::string> jobs;  // lower-cased names of training jobs it runs
  };
  // What the loop keeps per training job besides its record.
  struct JobRuntime {
    std::optional<metrics::MetricParser> parser;
    std::string objective_metric;  // tuning objective MetricName, empty for standalone jobs
    uint64_t runtime_timer = 0;
    uint64_t lost_timer = 0;
    uint64_t spot_timer = 0;      // the current attempt's Spot interruption
    uint64_t max_wait_timer = 0;  // StoppingCondition.MaxWaitTimeInSeconds
  };
  struct TuningRuntime {
    std::unique_ptr<search::Strategy> strategy;
    uint64_t runtime_timer = 0;
  };

  v1::TrainingJobRecord* FindTraining(const std::string& name);
  v1::TuningJobRecord* FindTuning(const std::string& name);
  std::vector<const v1::TrainingJobRecord*> JobsOf(const v1::TuningJobRecord& tuning) const;

  absl::Status PutTraining(const v1::TrainingJobRecord& job);
  absl::Status PutTuning(const v1::TuningJobRecord& tuning);
  void Notify(const std::string& tuning_job, const std::string& training_job);

  // Scheduling.
  void Schedule();
  // The connected worker with the most free slots; workers_.end() when none has one.
  std::map<std::string, Worker>::iterator FreeWorker();
  absl::Status LaunchNextTrial(v1::TuningJobRecord& tuning, const std::string& worker_id,
                               Worker& worker);
  void Launch(v1::TrainingJobRecord& job, const std::string& worker_id, Worker& worker);
  void StopRunningJob(v1::TrainingJobRecord& job, StopCause cause,
                      const std::string& message = "Stopping the training job");
  // AUTO median rule or Hyperband on the job's latest objective emission; nullopt when the
  // tuning job uses neither. Pure evaluation: the caller records and acts.
  std::optional<v1::StoppingDecision> EvaluateEarlyStopping(const v1::TrainingJobRecord& job);
  void ArmRuntimeDeadline(v1::TrainingJobRecord& job);
  void ArmTuningRuntime(const v1::TuningJobRecord& tuning);
  void ArmLostTimer(v1::TrainingJobRecord& job);
  void DetachFromWorker(v1::TrainingJobRecord& job);

  // After a training job ends: tuning counters, best job, end of the tuning job.
  void OnTrainingJobEnded(v1::TrainingJobRecord& job);
  void UpdateTuning(v1::TuningJobRecord& tuning);
  void EndTuningIfDone(v1::TuningJobRecord& tuning);
  void BeginEndingTuning(v1::TuningJobRecord& tuning, const std::string& cause);
  absl::Status EnsureStrategy(const v1::TuningJobRecord& tuning);
  // Managed spot: arms the current attempt's interruption, and the MaxWaitTimeInSeconds deadline
  // (from the creation time, across attempts and restarts of amtd).
  void ArmSpotInterruption(v1::TrainingJobRecord& job);
  // RetryStrategy: a job that meets an internal error (its worker lost) while retries remain is
  // restarted in place (same name, back to Starting) instead of failing as RetryableError.
  // Returns whether it was; the caller then schedules.
  bool RetryInPlace(v1::TrainingJobRecord& job, const std::string& what);
  void ArmMaxWait(v1::TrainingJobRecord& job);
  // Warm start: checks the parents of `request` (see README, "Warm start").
  absl::Status ValidateWarmStart(const v1::CreateHyperParameterTuningJobRequest& request);
  // The parents' training jobs with an objective, as observations in `tuning`'s search space.
  std::vector<search::PriorObservation> WarmStartObservations(const v1::TuningJobRecord& tuning);
  TuningRuntime& TuningRt(const v1::TuningJobRecord& tuning);
  JobRuntime& Rt(const v1::TrainingJobRecord& job);

  OrchestratorOptions options_;
  store::Store& store_;
  const Clock& clock_;
  Timers& timers_;

  // Records by lower-cased name (SageMaker names are unique case-insensitively).
  std::map<std::string, v1::TuningJobRecord> tuning_;
  std::vector<std::string> tuning_order_;  // creation order, lower-cased
  std::map<std::string, v1::TrainingJobRecord> training_;
  std::vector<std::string> training_order_;
  std::map<std::string, JobRuntime> job_rt_;
  std::map<std::string, TuningRuntime> tuning_rt_;
  std::map<std::string, std::vector<std::string>>
      tuning_children_;              // tuning key -> job keys by index
  std::deque<std::string> waiting_;  // standalone training jobs waiting for a slot
  std::map<std::string, Worker> workers_;
  std::map<uint64_t, Listener> listeners_;
  uint64_t next_listener_ = 1;
};

}  // namespace amt::core

#endif  // AMT_ORCHESTRATOR_CORE_ORCHESTRATOR_H_
