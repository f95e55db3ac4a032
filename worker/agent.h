// Agent: the amt-worker's logic. It keeps one WorkerService stream open to amtd (reconnecting
// with backoff), says Hello with its slots and running jobs, starts a JobRunner per StartJob,
// forwards StopJob, and sends the runners' reports, buffering them while disconnected.
//
// Threads: Run() is the agent thread: it connects, reads the stream and handles every
// OrchestratorMessage. Job threads (JobRunner) send reports through the agent; writes to the
// stream are serialised by the agent's mutex, which also guards the job table, the report
// buffer and the current stream (ABSL_GUARDED_BY below, checked by clang's -Wthread-safety in
// CI). Shutdown() may be called from any thread (amt-worker calls it from its signal thread).
#ifndef AMT_WORKER_AGENT_H_
#define AMT_WORKER_AGENT_H_

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "amt/v1/worker.pb.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "worker/job_runner.h"
#include "worker/process_launcher.h"
#include "worker/worker_stream.h"

namespace amt::worker {

struct AgentOptions {
  std::string worker_id;  // WorkerHello.worker_id (amt-worker's default: host:pid)
  // WorkerHello.instance_id: random per process (amt-worker makes 128 bits), so amtd tells this
  // process's reconnect from another process that says the same worker_id.
  std::string instance_id;
  std::string host;  // WorkerHello.host
  // Instances run at once: a job takes one slot per instance (StartJob.instance_count); a
  // StartJob beyond them is refused.
  int slots = 1;
  JobRunnerOptions runner;
  // Waits between connection attempts: doubling from initial to max.
  std::chrono::milliseconds initial_backoff{50};
  std::chrono::milliseconds max_backoff{1000};
  // The most it waits after amtd refused it (its worker id in use, bad credentials): the wait
  // doubles up to this, and each refusal is said through `diagnostics` with amtd's reason.
  std::chrono::milliseconds max_refused_backoff{30000};
  // Shutdown(): SIGTERM to every job, SIGKILL after this long; Shutdown waits about as long.
  std::chrono::milliseconds shutdown_grace{5000};
  // Without amtd this long (not connected, from the end of the last connection or the first
  // failed attempt), the agent shuts down as on Shutdown() and Run() returns. Zero: never.
  // amtd's local worker uses it so a killed amtd that is not restarted leaves no trainers behind,
  // while one restarted in time finds its jobs still running.
  std::chrono::milliseconds orphan_timeout{0};
  // One-shot mode (amt-worker --one-shot, as amtd's Slurm executor starts it): the agent runs
  // this job from the start, before it has reached amtd, says so in every Hello (`running`,
  // `one_shot`), and Run() returns once amtd has acknowledged the job's exit. Its slots are
  // the job's instances.
  std::optional<amt::v1::StartJob> one_shot;
  // Reports kept until amtd acknowledges them (replayed after a reconnect); beyond this many a
  // LogBatch is still sent when connected but not kept, and dropped when disconnected
  // (JobStarted and JobExited are always kept).
  size_t max_buffered_reports = 10000;
  std::function<void(const std::string&)> diagnostics;  // worker-side messages; may be empty
};

class Agent {
 public:
  // `connector`, `launcher` and `clock` must outlive the agent.
  Agent(AgentOptions options, StreamConnector& connector, ProcessLauncher& launcher,
        const Clock& clock);
  // Kills (SIGKILL) jobs still running and joins their threads. Call Shutdown() first for a
  // graceful stop; Run() must have returned.
  ~Agent();

  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // The agent thread: connects, handles messages, reconnects, until Shutdown() (or the orphan
  // timeout). Call once.
  void Run();

  // Refuses new jobs, sends SIGTERM to every running job's process group (SIGKILL after
  // shutdown_grace), waits for their JobExited reports (sent if connected) up to the grace plus
  // a margin, then ends the stream and makes Run() return. Thread-safe; later calls return at
  // once.
  void Shutdown();

 private:
  using JobKey = std::pair<std::string, int>;  // training_job_name, attempt

  void Handle(const amt::v1::OrchestratorMessage& message);
  void HandleStart(const amt::v1::StartJob& start) ABSL_LOCKS_EXCLUDED(mu_);
  void HandleStop(const amt::v1::StopJob& stop) ABSL_LOCKS_EXCLUDED(mu_);
  // Slots the running jobs take: one per instance.
  // The slots a job of `instances` hosts of `instance_type` takes: one per host, none when it
  // takes GPUs (gpu_inventory.h's GpusTaken).
  int SlotsOf(const std::string& instance_type, int instances) const;
  int BusySlotsLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forgets the reports amtd has saved: every one with seq <= `seq`.
  void HandleAck(uint64_t seq) ABSL_LOCKS_EXCLUDED(mu_);
  // Called by job threads. Bookkeeping for a JobExited, then Send.
  void OnRunnerReport(amt::v1::WorkerMessage message) ABSL_LOCKS_EXCLUDED(mu_);
  // Numbers the report, keeps it until acknowledged and writes it to the stream if connected.
  void SendLocked(amt::v1::WorkerMessage message, bool runner_exit)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Opens a stream and sends Hello and the unacknowledged reports. Returns null on failure, with
  // `refused` set to amtd's refusal when it ended the call with one.
  std::unique_ptr<WorkerStream> ConnectOnce(absl::Status* refused) ABSL_LOCKS_EXCLUDED(mu_);
  // Joins the runners that have exited and are done (one may still empty its folders after its
  // last report: joined at a later call); never under mu_ (a runner's last report takes it).
  void ReapFinished() ABSL_LOCKS_EXCLUDED(mu_);
  void Diagnose(const std::string& message) const;

  const AgentOptions options_;
  StreamConnector& connector_;
  ProcessLauncher& launcher_;
  const Clock& clock_;

  Mutex mu_;
  CondVar exit_cv_;                                  // wakes Run()'s backoff wait: exit_run_ set
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;  // refuse new jobs
  bool exit_run_ ABSL_GUARDED_BY(mu_) = false;       // Run() returns
  WorkerStream* stream_ ABSL_GUARDED_BY(mu_) = nullptr;  // the connected stream, owned by Run()
  std::map<std::string, std::shared_ptr<JobRunner>> jobs_ ABSL_GUARDED_BY(mu_);  // running
  std::vector<std::shared_ptr<JobRunner>> finished_ ABSL_GUARDED_BY(mu_);        // exited, to join
  struct Unacked {
    amt::v1::WorkerMessage message;  // seq set
    bool runner_exit = false;
  };
  uint64_t last_seq_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<Unacked> unacked_ ABSL_GUARDED_BY(mu_);         // in seq order
  std::set<JobKey> undelivered_exits_ ABSL_GUARDED_BY(mu_);  // runner exits in unacked_
  size_t dropped_log_batches_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace amt::worker

#endif  // AMT_WORKER_AGENT_H_
