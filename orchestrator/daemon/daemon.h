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
#include "orchestrator/core/orchestrator.h"
#include "orchestrator/executor/slurm_plan.h"
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
  // An AWS shared-credentials file (auth/credentials.h): when given, every HTTP request must be
  // signed (SigV4) with one of its access keys. Empty: any signature, or none, is accepted.
  std::string credentials_file;
  // Listen on a non-loopback `host` without credentials. Refused otherwise: whoever reaches the
  // port can run any command as amtd's user (TrainingImage names an executable).
  bool insecure = false;
  // Serve the web page (gateway/web_page.h) on the HTTP port: amtd --ui on|off.
  bool ui = true;
  // The HTTP port is also an HTTPS proxy for AWS's hosts (http_server.h, CONNECT), with a CA
  // kept in the data dir (<data_dir>/proxy-ca.pem, its key 0600): amtd --https-proxy on|off.
  bool https_proxy = true;
  std::string data_dir = ".amt";  // amt.db, the local S3 folder, job folders, worker.log
  // Start with an empty state although the data dir has job folders but no database (amtd
  // --init); without it that start is refused, as it would forget every job.
  bool init = false;
  bool start_local_worker = true;
  // Where training-job attempts run: "local" (amt-worker processes: the local one, and any
  // started by hand) or "slurm" (each attempt a Slurm job running a one-shot amt-worker:
  // executor/slurm_executor.h; no local worker is started, workers started by hand still join).
  std::string executor = "local";
  // --executor slurm's settings. Filled in when empty: worker_binary (amt-worker next to amtd),
  // orchestrator_address (unix:<data-dir>/amtd.sock, else host:port), work_dir
  // (<data-dir>/jobs), output_dir (<data-dir>/slurm), owner (from the data dir's path).
  // `slurm_bin_dir`, when set, is where sbatch, squeue, scancel, srun and scontrol are.
  executor::SlurmOptions slurm;
  std::string slurm_bin_dir;
  int local_worker_slots = 0;  // 0: the number of CPUs
  std::string worker_binary;   // default: amt-worker next to the running executable
  // The local worker outlives a killed amtd this long, then stops its jobs (local_worker.h).
  double local_worker_orphan_timeout_seconds = 300;
  // The local worker keeps the folders of the jobs that succeeded (amt-worker --keep-job-dirs).
  bool keep_job_dirs = false;
  // The local worker's --container-runtime (auto, docker, podman, none): training images that
  // its engine holds run as containers. Anything but none also sends images that the image map
  // does not name to the workers (core::LaunchOptions::containers).
  std::string container_runtime = "auto";
  double container_resource_scale = 1.0;  // amt-worker --container-resource-scale
  // The local worker's GPUs (amt-worker --gpus: all, none or indices) and --gpu-share.
  std::string gpus = "all";
  int gpu_share = 1;
  std::string image_map_file;  // JSON image -> command; empty: none
  std::string s3_root;         // default: <data_dir>/s3
  // "full" (fsync every commit: survives power loss) or "normal" (survives kill -9 only).
  std::string sqlite_sync = "full";
  // The orchestrator's options (time scale, stop grace, worker-lost timeout, early stopping,
  // Hyperband, spot simulation, ARNs), passed on as they are, checked by Start (InvalidArgument),
  // except for what the daemon fills in: `launch` (the image map read from image_map_file, the
  // S3 root, a file check for executables) and an empty `seed_source` (std::random_device).
  core::OrchestratorOptions orchestrator;
};

class Daemon {
 public:
  // Starts everything; returns once amtd accepts requests. FailedPrecondition when the port is
  // taken, another amtd holds the data dir, the data dir has job folders but its database is
  // missing or empty (unless `init`), or `host` is not loopback and neither credentials nor
  // `insecure` are given, or --executor slurm and Slurm does not answer; InvalidArgument for a bad
  // image map or credentials file; Internal for store errors.
  static absl::StatusOr<std::unique_ptr<Daemon>> Start(const DaemonOptions& options);
  virtual ~Daemon() = default;

  // host:port amtd listens on (the real port when 0 was asked for).
  virtual std::string endpoint() const = 0;
  // http://host:port of the AWS JSON gateway, "" when it is off.
  virtual std::string http_endpoint() const = 0;
  // The HTTPS proxy's CA certificate (what AWS_CA_BUNDLE names), "" when the proxy is off.
  virtual std::string proxy_ca_file() const = 0;
  // unix:<data-dir>/amtd.sock, the WorkerService for workers on this machine; "" when the
  // path is too long for a Unix socket (then workers use endpoint()).
  virtual std::string worker_socket() const = 0;
  // Stops the local worker (its jobs get SIGTERM), the server and the loop. Idempotent.
  virtual void Shutdown() = 0;
};

// Folder of the running executable (/proc/self/exe), for finding amt-worker and trainers.
std::string ExecutableDir();

}  // namespace amt::daemon

#endif  // AMT_ORCHESTRATOR_DAEMON_DAEMON_H_
