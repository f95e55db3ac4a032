// SlurmExecutor: amtd's Slurm engine (`amtd --executor slurm`). A core::Provisioner: every
// training-job attempt amtd places becomes one Slurm job (sbatch), named after the training job,
// whose batch script runs a one-shot amt-worker (`amt-worker --one-shot`) that runs that attempt
// on the node Slurm chose and reports to amtd over the worker protocol like any worker: logs,
// metrics, early stopping, spot and explain work unchanged. slurm_plan.h says what sbatch gets.
//
// - A StopJob sent before the worker connected cancels the Slurm job (scancel); after, it goes to
//   the worker, which gives the trainer SIGTERM, the grace, then SIGKILL.
// - squeue is polled while jobs are submitted: a job that ends without its worker having
//   reported the attempt's exit (node failure, preemption, out of memory, cancelled from outside,
//   a worker that could not start) is reported through `ended` (core::ProvisionedEnd); a job
//   that waits for a reason it can never leave (PartitionConfig, PartitionNodeLimit, ...), or
//   waits for Resources while it asks more than the partition's largest node has, is cancelled.
// - An sbatch refusal is reported at once: the training job fails with sbatch's message.
// - Both are kRefused, which the orchestrator ends as ClientError (the request cannot be met on
//   this cluster; the training code is not at fault). When the cause is the job's size, the
//   message sets what it asked (slurm_plan.h RequestOf) against what the partition has (read
//   then with `scontrol -o show partition` and `scontrol -o show node`) and names the knob:
//   slurm_plan.h TooBigMessage.
// - Restart: Recover() finds the Slurm jobs an earlier amtd submitted (by their comment) so
//   amtd takes them back; their workers reconnect by themselves once running.
//
// Threads: Provide, HasRoom, Discard and the links' Send run on the orchestrator loop; sbatch,
// squeue and scancel run on the executor's own thread, which posts results onto the loop.
#ifndef AMT_ORCHESTRATOR_EXECUTOR_SLURM_EXECUTOR_H_
#define AMT_ORCHESTRATOR_EXECUTOR_SLURM_EXECUTOR_H_

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "amt/v1/worker.pb.h"
#include "common/command.h"
#include "common/mutex.h"
#include "orchestrator/core/provisioner.h"
#include "orchestrator/executor/slurm_plan.h"

namespace amt::executor {

struct SlurmExecutorHooks {
  // Runs `task` on the orchestrator loop, later (never inside the caller).
  std::function<void(std::function<void()>)> post;
  // On the loop: worker `worker_id` (whose provisional link is `link`) ended without the exit of
  // attempt `attempt` of `training_job_name` reported.
  std::function<void(const std::string& worker_id, const core::WorkerLink* link,
                     const std::string& training_job_name, int attempt,
                     const core::ProvisionedEnd& end)>
      ended;
  // Operator messages (sbatch failures, unknown states); may be empty.
  std::function<void(const std::string&)> log;
};

class SlurmExecutor final : public core::Provisioner {
 public:
  // Checks that Slurm answers (squeue runs and exits 0): FailedPrecondition saying what failed
  // otherwise. `runner` must outlive the executor.
  static absl::StatusOr<std::unique_ptr<SlurmExecutor>> Start(SlurmOptions options,
                                                              CommandRunner& runner,
                                                              SlurmExecutorHooks hooks);
  // Stops polling. Submitted jobs keep running: a restarted amtd takes them back (Recover).
  ~SlurmExecutor() override;

  // A worker an earlier amtd submitted that Slurm still queues or runs: what its Hello would say
  // and the link to register it under until it connects (Orchestrator::OnWorkerConnected).
  struct Recovered {
    amt::v1::WorkerHello hello;
    std::shared_ptr<core::WorkerLink> link;
  };
  // Reads squeue once; call before workers can connect. Jobs that already ended are watched, and
  // reported through `ended` by the first poll.
  absl::StatusOr<std::vector<Recovered>> Recover();

  bool HasRoom() const override ABSL_LOCKS_EXCLUDED(mu_);
  Provided Provide(int instances) override ABSL_LOCKS_EXCLUDED(mu_);
  void Discard(const std::string& worker_id) override ABSL_LOCKS_EXCLUDED(mu_);

  // Slurm jobs submitted and not ended (for tests and status).
  int Outstanding() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  class PendingLink;
  struct Tracked {
    std::shared_ptr<PendingLink> link;
    std::string slurm_id;  // empty until sbatch answered
    std::string training_job_name;
    int attempt = 0;
    bool submitted = false;  // a StartJob came (the slot is used even before sbatch answers)
    bool cancel = false;     // stop asked: scancel once the id is known
    // What the Slurm job asks (from its sbatch arguments); unknown for a job an earlier amtd
    // submitted.
    std::optional<SlurmRequest> request;
    // Its fit was checked against the partition once, the first time it waited for Resources.
    bool fit_checked = false;
  };

  SlurmExecutor(SlurmOptions options, CommandRunner& runner, SlurmExecutorHooks hooks);
  void Submit(const std::string& worker_id, const amt::v1::StartJob& start)
      ABSL_LOCKS_EXCLUDED(mu_);
  void Cancel(const std::string& worker_id) ABSL_LOCKS_EXCLUDED(mu_);
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);
  void RunSubmit(const std::string& worker_id, const amt::v1::StartJob& start)
      ABSL_LOCKS_EXCLUDED(mu_);
  void RunCancel(const std::string& slurm_id);
  // What the partition `partition` (empty: the default one) offers, from scontrol; runs on the
  // executor's thread. Unavailable saying what scontrol said when it fails.
  absl::StatusOr<SlurmOffer> ReadOffer(const std::string& partition) const;
  // A pending job whose size is to be set against its partition's, outside the lock (scontrol).
  struct TooBig {
    std::string worker_id;
    std::string slurm_id;
    std::string reason;
    SlurmRequest request;
    bool never;  // Slurm said it never starts; else it waits for Resources, maybe for ever
  };
  // A job that never starts: cancelled first, then reported, so that a training job that ended
  // for this leaves no Slurm job behind.
  struct Never {
    std::string worker_id;
    std::string slurm_id;
    core::ProvisionedEnd end;
  };
  // One look at the submitted jobs: squeue (ListJobs), then the ends it shows (ReviewJobs), the
  // sizes to check against the partition (CheckSizes) and the jobs that never start
  // (EndNeverStarting).
  void Poll() ABSL_LOCKS_EXCLUDED(mu_);
  // Whether some tracked job has a Slurm id (else there is nothing to poll).
  bool AnySubmitted() const ABSL_LOCKS_EXCLUDED(mu_);
  // squeue's jobs by Slurm job id; nullopt, logged, when squeue fails.
  std::optional<std::map<std::string, SlurmJobState>> ListJobs() const;
  // Ends the jobs that finished or that squeue lost (missing from two polls in a row), and
  // collects the pending jobs whose size is to be checked and those that never start.
  void ReviewJobs(const std::map<std::string, SlurmJobState>& by_id, std::vector<TooBig>* too_big,
                  std::vector<Never>* never_starts) ABSL_LOCKS_EXCLUDED(mu_);
  // Adds to `never_starts` the jobs of `too_big` that Slurm said never start or that ask more
  // than their partition offers (each partition read once).
  void CheckSizes(const std::vector<TooBig>& too_big, std::vector<Never>* never_starts) const;
  // Cancels `never_starts`, then ends each one still tracked as the same Slurm job.
  void EndNeverStarting(const std::vector<Never>& never_starts) ABSL_LOCKS_EXCLUDED(mu_);
  // Posts `end` for `worker_id` and forgets it.
  void EndLocked(const std::string& worker_id, const core::ProvisionedEnd& end)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Log(const std::string& message) const;

  const SlurmOptions options_;
  CommandRunner& runner_;
  const SlurmExecutorHooks hooks_;

  mutable Mutex mu_;
  CondVar wake_;
  std::map<std::string, Tracked> tracked_ ABSL_GUARDED_BY(mu_);  // by worker id
  std::deque<std::function<void()>> work_ ABSL_GUARDED_BY(mu_);  // for the executor thread
  bool exit_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::string id_prefix_;  // makes worker ids unique across amtd runs
  // Polls in a row that did not list a Slurm job, by its id: one that stays away is lost.
  std::map<std::string, int> missing_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace amt::executor

#endif  // AMT_ORCHESTRATOR_EXECUTOR_SLURM_EXECUTOR_H_
