// Daemon: amtd assembled. Opens the SQLite store, loads the orchestrator on its loop, serves
// TuningService and WorkerService over gRPC (and SageMaker's AWS JSON API over HTTP when asked),
// and starts a local amt-worker unless told not to.
// Used by amtd's main.cc and, embedded, by `amt run`.
#ifndef AMT_ORCHESTRATOR_DAEMON_DAEMON_H_
#define AMT_ORCHESTRATOR_DAEMON_DAEMON_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "orchestrator/gateway/http_server.h"

namespace amt::daemon {

struct DaemonOptions {
  std::string host = "127.0.0.1";  // loopback by default
  int port = 7070;                 // 0 picks a free port
  // SageMaker's own API (AWS JSON 1.1, for boto3 and the aws cli) on host:http_port; 0 picks a
  // free port, -1 serves none.
  int http_port = -1;
  // Timeouts and limits of the HTTP server; its host and port are `host` and `http_port` above.
  // An empty `log` writes to stderr.
  gateway::HttpServerOptions http;
  std::string data_dir = ".amt";  // amt.db, the local S3 folder, job folders, worker.log
  bool start_local_worker = true;
  int local_worker_slots = 0;  // 0: the number of CPUs
  std::string worker_binary;   // default: amt-worker next to the running executable
  double time_scale = 1.0;     // multiplies SageMaker's waits (see OrchestratorOptions)
  double stop_grace_seconds = 120;
  double worker_lost_timeout_seconds = 60;
  std::string image_map_file;  // JSON image -> command; empty: none
  std::string s3_root;         // default: <data_dir>/s3
  // Early stopping's undocumented parts (see README): AUTO median rule and Hyperband.
  // "finished" (Completed or Stopped previous jobs), "completed" or "all" previous jobs.
  std::string median_reference = "finished";
  int median_min_reference_jobs = 1;
  bool median_compare_best = false;  // false: the current epoch's value (AWS wording)
  int median_grace_epochs = 2;       // epochs compared from grace + 1 (0: every epoch)
  int hyperband_reduction_factor = 3;
  int hyperband_brackets = 3;
  bool hyperband_stop_last_epoch = false;  // stop a job whose last epoch is MaxResource
  // Managed spot simulation (spot::SpotOptions): mean training seconds to an interruption (0:
  // none), interruptions per job at most, the discount billed, the seed of the interruptions.
  double spot_mean_seconds = 600;
  int spot_max_interruptions = 2;
  double spot_discount = 0.7;
  uint64_t spot_seed = 0;
  // "full" (fsync every commit: survives power loss) or "normal" (survives kill -9 only).
  std::string sqlite_sync = "full";
  std::string region = "us-east-1";
  std::string account = "000000000000";
};

class Daemon {
 public:
  // Starts everything; returns once amtd accepts requests. FailedPrecondition when the port is
  // taken, InvalidArgument for a bad image map, Internal for store errors.
  static absl::StatusOr<std::unique_ptr<Daemon>> Start(const DaemonOptions& options);
  virtual ~Daemon() = default;

  // host:port amtd listens on (the real port when 0 was asked for).
  virtual std::string endpoint() const = 0;
  // http://host:port of the AWS JSON gateway, "" when it is off.
  virtual std::string http_endpoint() const = 0;
  // Stops the local worker (its jobs get SIGTERM), the server and the loop. Idempotent.
  virtual void Shutdown() = 0;
};

// Folder of the running executable (/proc/self/exe), for finding amt-worker and trainers.
std::string ExecutableDir();

}  // namespace amt::daemon

#endif  // AMT_ORCHESTRATOR_DAEMON_DAEMON_H_
