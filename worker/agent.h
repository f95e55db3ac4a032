// Agent: the amt-worker's logic. It keeps one WorkerService stream open to amtd (reconnecting
// with backoff), says Hello with its slots and running jobs, starts a JobRunner per StartJob,
// forwards StopJob, and sends the runners' reports, buffering them while disconnected.
//
// Threads: Run() is the agent thread: it connects, reads the stream and handles every
// OrchestratorMessage. Job threads (JobRunner) send reports through the agent; writes to the
// stream are serialised by the agent's mutex, which also guards the job table, the report
// buffer and the current stream. Shutdown() may be called from any thread (amt-worker calls it
// from its signal thread).
#ifndef AMT_WORKER_AGENT_H_
#define AMT_WORKER_AGENT_H_

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "amt/v1/worker.pb.h"
#include "common/clock.h"
#include "worker/job_runner.h"
#include "worker/process_launcher.h"
#include "worker/worker_stream.h"

namespace amt::worker {

struct AgentOptions {
  std::string worker_id;  // WorkerHello.worker_id (amt-worker's default: host:pid)
  std::string host;       // WorkerHello.host
  int slots = 1;          // jobs run at once; a StartJob beyond them is refused
  JobRunnerOptions runner;
  // Waits between connection attempts: doubling from initial to max.
  std::chrono::milliseconds initial_backoff{50};
  std::chrono::milliseconds max_backoff{1000};
  // Shutdown(): SIGTERM to every job, SIGKILL after this long; Shutdown waits about as long.
  std::chrono::milliseconds shutdown_grace{5000};
  // Reports kept while disconnected; beyond it LogBatch reports are dropped (JobStarted and
  // JobExited never are).
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

  // The agent thread: connects, handles messages, reconnects, until Shutdown(). Call once.
  void Run();

  // Refuses new jobs, sends SIGTERM to every running job's process group (SIGKILL after
  // shutdown_grace), waits for their JobExited reports (sent if connected) up to the grace plus
  // a margin, then ends the stream and makes Run() return. Thread-safe; later calls return at
  // once.
  void Shutdown();

 private:
  using JobKey = std::pair<std::string, int>;  // training_job_name, attempt

  void Handle(const amt::v1::OrchestratorMessage& message);
  void HandleStart(const amt::v1::StartJob& start);
  void HandleStop(const amt::v1::StopJob& stop);
  // Called by job threads. Bookkeeping for a JobExited, then Send.
  void OnRunnerReport(amt::v1::WorkerMessage message);
  // Writes to the stream if connected, else buffers. Requires mu_.
  void SendLocked(amt::v1::WorkerMessage message, bool runner_exit);
  // Opens a stream and sends Hello and the buffered reports. Returns null on failure.
  std::unique_ptr<WorkerStream> ConnectOnce();
  void ReapFinished();
  void Diagnose(const std::string& message) const;

  const AgentOptions options_;
  StreamConnector& connector_;
  ProcessLauncher& launcher_;
  const Clock& clock_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool shutting_down_ = false;                                  // refuse new jobs; guarded by mu_
  bool exit_run_ = false;                                       // Run() returns; guarded by mu_
  WorkerStream* stream_ = nullptr;                              // connected stream; guarded
  std::map<std::string, std::shared_ptr<JobRunner>> jobs_;      // running, by name; guarded
  std::vector<std::shared_ptr<JobRunner>> finished_;            // exited, to join; guarded
  std::deque<std::pair<amt::v1::WorkerMessage, bool>> buffer_;  // (report, runner exit); guarded
  std::set<JobKey> undelivered_exits_;                          // guarded by mu_
  size_t dropped_log_batches_ = 0;                              // guarded by mu_
};

}  // namespace amt::worker

#endif  // AMT_WORKER_AGENT_H_
