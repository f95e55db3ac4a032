// The local worker: the amt-worker amtd runs on its own machine. It is a process of its own
// (own process group, no inherited descriptors) that outlives a killed amtd: it keeps running
// its jobs, reconnects over amtd's Unix socket in the data dir, and is found again by the next
// amtd of that data dir (its pid is kept in <data-dir>/worker.pid), so a kill -9 of amtd never
// fails a running job. Without amtd for `orphan_timeout_seconds` it stops its jobs and exits.
#ifndef AMT_ORCHESTRATOR_DAEMON_LOCAL_WORKER_H_
#define AMT_ORCHESTRATOR_DAEMON_LOCAL_WORKER_H_

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace amt::daemon {

struct LocalWorkerOptions {
  std::string binary;    // amt-worker
  std::string endpoint;  // where it reaches amtd, e.g. unix:<data-dir>/amtd.sock
  std::string data_dir;  // absolute; jobs go to <data-dir>/jobs, its output to worker.log
  int slots = 1;
  double orphan_timeout_seconds = 300;
  // amtd's --credentials file (absolute), passed on so the worker can register; "" when none.
  std::string credentials_file;
  bool keep_job_dirs = false;                   // amt-worker --keep-job-dirs
  std::string container_runtime = "auto";       // amt-worker --container-runtime
  double container_resource_scale = 1.0;        // amt-worker --container-resource-scale
  std::string gpus = "all";                     // amt-worker --gpus
  int gpu_share = 1;                            // amt-worker --gpu-share
  std::function<void(const std::string&)> log;  // amtd's log; may be empty
};

// The command line amtd starts the local worker with.
std::vector<std::string> LocalWorkerArgv(const LocalWorkerOptions& options);

class LocalWorker {
 public:
  // Adopts the worker an earlier amtd of this data dir left running, when worker.pid names a live
  // process with the very command line LocalWorkerArgv gives; otherwise (after stopping a
  // leftover worker that does not match, e.g. another slot count) starts a new one.
  static absl::StatusOr<std::unique_ptr<LocalWorker>> StartOrAdopt(
      const LocalWorkerOptions& options);

  ~LocalWorker();  // Stop()s.
  LocalWorker(const LocalWorker&) = delete;
  LocalWorker& operator=(const LocalWorker&) = delete;

  // SIGTERM (the worker stops its jobs the SageMaker way, then exits) and waits for the exit.
  // Idempotent.
  void Stop();

  pid_t pid() const { return pid_; }
  bool adopted() const { return adopted_; }

 private:
  LocalWorker(pid_t pid, bool adopted, std::string pid_file)
      : pid_(pid), adopted_(adopted), pid_file_(std::move(pid_file)) {}

  pid_t pid_;
  bool adopted_;  // not our child: waited for through a pidfd, not waitpid
  std::string pid_file_;
};

// Sends SIGTERM to `pid` (not necessarily a child) and waits until it has exited.
void TerminateAndWait(pid_t pid, bool is_child);

}  // namespace amt::daemon

#endif  // AMT_ORCHESTRATOR_DAEMON_LOCAL_WORKER_H_
