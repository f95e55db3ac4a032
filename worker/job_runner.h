// JobRunner: runs one training job attempt from StartJob to JobExited. It prepares the job
// directory (JobDir), launches the command through the injected ProcessLauncher, ships its output
// (LogShipper), stops it on request (SIGTERM to the group, SIGKILL after the grace), and on exit
// syncs checkpoints, tars model/ and output/data/, reads output/failure and reports JobExited.
// A job that exits non-zero with no output/failure on a full disk gets a failure reason that
// says "No space left on device" and the job folder, not a bare exit code. A job that failed
// out of disk space (that reason, or an output/failure that says "No space left on device")
// has its folder trimmed to its small files (TrimFailedJobDir) before its exit is reported, so
// the disk, which amtd's state store may share, does not stay full.
//
// InstanceCount N > 1 runs N hosts, algo-1..algo-N: N processes, each with a folder of its own
// (JobDir with a HostSpec) and an address on a loopback network of the job's own
// (host_network.h), named in a private /etc/hosts when `private_hosts` is on. The job ends when
// every host has ended; when one fails (a non-zero exit or a signal, with no stop requested) the
// others get SIGTERM and, the job's stop grace later, SIGKILL, and the job's exit is the first
// failed host's (its output/failure is the FailureReason). A stop reaches every host. Log lines
// carry their host (LogRecord.host); checkpoints are synced host by host into the one sync
// folder; model.tar.gz and output.tar.gz hold every host's files merged (a later host's file
// replaces an earlier one's of the same name), as SageMaker merges them.
//
// Threads: Start() spawns the job thread, which does all of the above and makes every report
// except LogBatch; LogBatch reports come from the LogShipper's thread; output lines are read on
// the Process's reader thread. With several hosts, one thread per host waits for its process.
// Reports for one job arrive in order: JobStarted, LogBatch..., JobExited (or only JobExited when
// the launch failed). Stop() (or a host's failure) spawns a kill-timer thread.
#ifndef AMT_WORKER_JOB_RUNNER_H_
#define AMT_WORKER_JOB_RUNNER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "amt/v1/worker.pb.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "worker/container_engine.h"
#include "worker/gpu_inventory.h"
#include "worker/host_network.h"
#include "worker/job_dir.h"
#include "worker/log_shipper.h"
#include "worker/process_launcher.h"

namespace amt::worker {

// How a job's container is made (amt-worker's --container-* flags).
struct ContainerOptions {
  // The engine client's own variables (container_launcher.h, EngineClientEnvironment()).
  std::map<std::string, std::string> client_environment;
  // --network of a job that does not ask for network isolation (isolated: "none"). "host": the
  // machine's network, where amtd's endpoints are.
  std::string network = "host";
  // Multiplies the instance type's vCPUs and memory (common/instance_type.h) for the
  // container's --cpus (at most `machine_cpus`) and --memory; 0: no limits.
  double resource_scale = 1.0;
  int machine_cpus = 1;
  // The label kWorkDirLabel's value (the worker's work dir, absolute).
  std::string work_dir;
};

struct JobRunnerOptions {
  JobDirOptions job_dir;
  // The worker's own variables a trainer inherits (PATH, HOME, LANG); the job's variables win.
  std::map<std::string, std::string> base_environment;
  LogShipperOptions logs;
  // Receives problems that are not the job's fault (a failed checkpoint sync or tar); may be
  // called on the job thread. Empty: dropped.
  std::function<void(const std::string&)> diagnostics;
  // A job's folder (the emulated /opt/ml) is removed once the job has exited 0 and its artifacts
  // are uploaded, so finished jobs take no disk beyond their S3 artifacts; a failed job's stays
  // for inspection (trimmed to its small files when it ran out of disk space, even with this
  // flag). True keeps every folder (amt-worker --keep-job-dirs).
  bool keep_job_dirs = false;
  // Where multi-instance jobs get their hosts' loopback network; null: one of this runner's own.
  std::shared_ptr<LoopbackNetworks> networks;
  // The addresses of hosts 1..count when they are not all on this machine (amt-worker
  // --srun-hosts nodes: the Slurm allocation's nodes), in host order. Empty: a loopback network.
  std::function<absl::StatusOr<std::vector<std::string>>(int count)> host_addresses;
  // Gives each host of a multi-instance job its own /etc/hosts and host name (LaunchSpec's
  // hosts_file; needs root), so algo-1, ... resolve. Off: the names do not resolve and trainers
  // find the addresses in AMT_HOST_ADDRESSES.
  bool private_hosts = false;
  // The base of each host's /etc/hosts.
  std::string etc_hosts = "/etc/hosts";
  // Whether the worker itself has been told to stop (amt-worker: a SIGTERM or SIGINT received or
  // pending). Asked when the job's exit is reported: Slurm signals every process of its job at
  // once, so a trainer may exit on that SIGTERM before the worker has stopped anything, and its
  // exit must still say worker_shutdown. Empty: only Stop(..., true) says so.
  std::function<bool()> shutdown_pending;
  // The bytes the worker may still write on the file system holding `path` (statvfs's f_bavail
  // times f_frsize); nullopt when unknown. Asked when a job exits non-zero without an
  // output/failure: with less than kFullDiskBytes left, the failure reason says the disk is full
  // (the trainer's own failure file could not be written). Null: statvfs. A seam for tests.
  std::function<std::optional<uint64_t>(const std::filesystem::path& path)> free_bytes;
  // Training images as containers (amt-worker --container-runtime): a job whose StartJob names
  // an image (StartJob.container) runs in a container when this engine holds that image, else
  // its command. Not valid, or null: no engine; every job runs its command. A job that names an
  // image waits for the engine's detection (amt-worker's runs in the background: `docker
  // version` and `podman version` take tens of milliseconds, a daemon that hangs much longer);
  // one that names none never does.
  ContainerEngineFuture containers;
  ContainerOptions container;
  // The worker's GPUs (amt-worker --gpus): a job takes its InstanceType's GPUs per host from
  // here for as long as it runs (TakeGpus), and sees only those. Null: the worker hands out no
  // GPUs (jobs see what the machine shows, SM_NUM_GPUS 0).
  std::shared_ptr<GpuAllocator> gpus;
};

// Below this many free bytes the job folder's disk counts as full (JobRunnerOptions::free_bytes).
inline constexpr uint64_t kFullDiskBytes = uint64_t{1} << 20;

class JobRunner {
 public:
  using ReportFn = std::function<void(amt::v1::WorkerMessage message)>;

  // `launcher` and `clock` must outlive the runner. `report` is called on the job thread and on
  // the log shipper's thread, never concurrently for one runner (the shipper starts after
  // JobStarted returns and is joined before JobExited); runners of different jobs do call it
  // concurrently.
  JobRunner(JobRunnerOptions options, amt::v1::StartJob job, ProcessLauncher& launcher,
            const Clock& clock, ReportFn report);
  // Kills the process group (SIGKILL) if the job is still running, then joins every thread.
  ~JobRunner();

  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  // Starts the job thread. Call once.
  void Start();

  // SIGTERM to the process group of every host now (or right after launch if it is still
  // starting), SIGKILL to the groups not exited `grace_seconds` later. A second Stop can only
  // shorten the grace. `worker_shutdown`: the worker itself is stopping, not amtd asking
  // (JobExited.worker_shutdown). Thread-safe; a no-op once every process has exited.
  void Stop(double grace_seconds, bool worker_shutdown = false) ABSL_LOCKS_EXCLUDED(mu_);

  // Waits until JobExited has been reported, at most `timeout`. True if it has.
  bool WaitForExit(std::chrono::milliseconds timeout) ABSL_LOCKS_EXCLUDED(mu_);

  const std::string& training_job_name() const { return job_.training_job_name(); }
  int attempt() const { return job_.attempt(); }
  int instance_count() const { return job_.instance_count(); }
  const std::string& instance_type() const { return job_.instance_type(); }

 private:
  // What the job thread does, stage by stage (job_runner.cc says which).
  void Run() ABSL_LOCKS_EXCLUDED(mu_);
  // The job's hosts: their count and, for several, their addresses (takes network_ when they
  // are on a loopback network of this worker's) and /etc/hosts text. An error's message is the
  // job's failure reason (too many hosts, no addresses for them).
  absl::StatusOr<HostSpec> PlanHosts();
  // Stop's part under the runner's lock.
  void StopLocked(double grace_seconds, bool worker_shutdown) ABSL_LOCKS_EXCLUDED(mu_);
  // Ends a wait for GPUs (TakeGpus): a stop, or the runner going away.
  void CancelGpuWait() ABSL_LOCKS_EXCLUDED(mu_);
  // Reports a JobExited with launch_failed and `reason`.
  void ReportLaunchFailed(const std::string& reason) ABSL_LOCKS_EXCLUDED(mu_);
  // Reports JobStarted, with algo-1's folder.
  void ReportStarted(const JobDir& first);
  // Whether the job runs in a container: its image is in the engine (waited for when the job
  // names an image: JobRunnerOptions::containers). An error (the job's failure reason) when it
  // has an image that neither the engine nor a command can run. Sets engine_, and
  // container_launcher_ when the job runs in a container.
  absl::StatusOr<bool> RunsInContainer();
  // The job's GPUs (JobRunnerOptions::gpus; none for hosts on other machines, which Slurm gives
  // theirs): the InstanceType's count per host, distinct devices
  // held until the runner ends; each host's share in host_gpus_, and a log line per host that
  // says which (or that the job runs on CPU: a GPU type on a worker without GPUs). An error's
  // message is the job's failure: the worker has fewer GPUs than the job asks. While other jobs
  // hold them it waits; Cancelled when stopped meanwhile.
  absl::Status TakeGpus(int hosts);
  // Script mode in a container: the job's code (ContainerJob.code_path) in every host's code/
  // folder, which ContainerFor mounts at /opt/ml/code. An error's message is the job's failure
  // reason (no such code, an archive that cannot be unpacked, a full disk).
  absl::Status PutContainerCode(const std::vector<JobDir>& dirs) const;
  // A multi-instance job's containers: the engine's network for them, named after the attempt
  // (each container is found there by its host's name), and its removal once they are gone.
  absl::Status CreateJobNetwork();
  void RemoveJobNetwork();
  // Host `index` (0-based)'s container.
  ContainerSpec ContainerFor(size_t index, const JobDir& dir) const;
  // Launches every host; false (after reporting JobExited) when one could not be launched.
  bool LaunchHosts(std::vector<JobDir>& dirs, LogShipper& shipper) ABSL_LOCKS_EXCLUDED(mu_);
  // Waits for every host's process; the exit statuses by host.
  std::vector<ExitStatus> WaitForHosts() ABSL_LOCKS_EXCLUDED(mu_);
  // Host `index` (0-based) exited with `status`: a failure stops the others.
  void OnHostExited(size_t index, const ExitStatus& status) ABSL_LOCKS_EXCLUDED(mu_);
  // Kills the hosts launched so far and waits for them (a later host failed to launch).
  void AbandonLaunched() ABSL_LOCKS_EXCLUDED(mu_);
  // The host (0-based) whose exit is the job's: the first that failed on its own, else the
  // first that did not exit 0 (after a stop), else algo-1.
  size_t ChooseExitHost(const std::vector<ExitStatus>& statuses) ABSL_LOCKS_EXCLUDED(mu_);
  // Syncs every host's checkpoints out and tars their model/ and output/data/; the JobExited
  // with `status`, model_uploaded and upload_failure set (a failure is also diagnosed).
  amt::v1::JobExited CollectOutputs(const std::vector<JobDir>& dirs, const ExitStatus& status);
  struct Failure {
    std::string reason;         // the job's FailureReason; empty when none
    bool out_of_space = false;  // the job ran out of disk space
  };
  // The job's failure: host `chosen`'s output/failure, else the first host's that wrote one,
  // else (exited non-zero on a full disk) one that says the disk is full.
  Failure ReadFailure(const std::vector<JobDir>& dirs, size_t chosen,
                      const ExitStatus& status) const;
  // What becomes of the hosts' folders once the job is over: trimmed when it ran out of disk,
  // kept within the cap when it failed, recycled or removed when it succeeded (unless
  // keep_job_dirs).
  void ReleaseJobDirs(const std::vector<JobDir>& dirs, bool succeeded, bool out_of_space) const;
  // The job's last stage: its folders released (a succeeded job's moved out at once and emptied
  // after the report), its network gone, its exit reported.
  void ReleaseAndReport(const std::vector<JobDir>& dirs, amt::v1::JobExited exited, bool succeeded,
                        bool out_of_space) ABSL_LOCKS_EXCLUDED(mu_);
  // Sends JobExited, runs `after` (work that need not delay the report), then marks the runner
  // done (WaitForExit).
  void ReportExit(amt::v1::JobExited exited, const std::function<void()>& after = {})
      ABSL_LOCKS_EXCLUDED(mu_);
  void SignalAndArmKillTimerLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void KillTimer() ABSL_LOCKS_EXCLUDED(mu_);
  // Makes the folders model.tar.gz and output.tar.gz go to (<S3OutputPath>/<job>/output) while
  // the job's processes run, after JobStarted: off the way from its end to its report (the
  // mkdirs took 0.6-1.8 ms there on a loaded machine) and from its launch to its start. Tar
  // makes them again if they went.
  void PrepareOutputFolders() const;
  // Packs `dirs` (the hosts' model/ or output/data/ folders) into `file` (model.tar.gz,
  // output.tar.gz) in-process, atomically (tar_gz.h).
  absl::Status Tar(const std::vector<std::filesystem::path>& dirs, const std::string& file);
  void Diagnose(const std::string& message) const;
  // The job failed out of disk space: trims its folder (TrimFailedJobDir) and says what went.
  void TrimOnFullDisk(const JobPaths& paths) const;

  const JobRunnerOptions options_;
  const amt::v1::StartJob job_;
  ProcessLauncher& launcher_;
  const Clock& clock_;
  const ReportFn report_;

  Mutex mu_;
  CondVar kill_cv_;  // wakes the kill timer: the process exited or kill_at_ moved earlier
  CondVar done_cv_;  // wakes WaitForExit: done_ set
  // One per host launched so far, in host order; only the job thread adds to it.
  std::vector<std::unique_ptr<Process>> processes_ ABSL_GUARDED_BY(mu_);
  bool process_exited_ ABSL_GUARDED_BY(mu_) = false;  // every launched process has exited
  int hosts_exited_ ABSL_GUARDED_BY(mu_) = 0;
  // The first host (0-based) that failed on its own, when one did: the job's exit is its exit.
  std::optional<size_t> failed_host_ ABSL_GUARDED_BY(mu_);
  bool done_ ABSL_GUARDED_BY(mu_) = false;  // JobExited reported
  bool stop_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool worker_shutdown_ ABSL_GUARDED_BY(mu_) = false;  // a Stop came from the worker's shutdown
  bool signalled_ ABSL_GUARDED_BY(mu_) = false;        // SIGTERM sent
  std::optional<std::chrono::steady_clock::time_point> kill_at_ ABSL_GUARDED_BY(mu_);
  std::thread kill_timer_ ABSL_GUARDED_BY(mu_);  // started under mu_, joined by the destructor

  // The job thread's: the worker's container engine when the job names an image (null: none),
  // and containers over `launcher_` when the job runs in one.
  std::shared_ptr<const ContainerEngine> engine_;
  std::unique_ptr<ProcessLauncher> container_launcher_;
  bool in_container_ = false;  // the job thread's: RunsInContainer() said so
  std::string job_network_;    // the job thread's: CreateJobNetwork's network, until removed

  // The job thread's: the hosts' network while the job runs (several hosts only).
  std::shared_ptr<LoopbackNetworks> networks_;
  std::unique_ptr<LoopbackNetworks::Lease> network_;
  // The job thread's: TakeGpus's devices, by host, and what it says in the job's log.
  std::unique_ptr<GpuAllocator::Lease> gpu_lease_;
  std::vector<std::vector<int>> host_gpus_;
  std::vector<std::string> gpu_notes_;
  std::vector<std::string> gpu_summary_;         // JobStarted.gpus
  std::atomic<bool> gpu_wait_cancelled_{false};  // set by CancelGpuWait

  std::thread thread_;  // the job thread
};

}  // namespace amt::worker

#endif  // AMT_WORKER_JOB_RUNNER_H_
