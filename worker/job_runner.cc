#include "worker/job_runner.h"

#include <signal.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>
#include <utility>

#include "worker/tar_gz.h"

namespace amt::worker {
namespace fs = std::filesystem;

namespace {

// When StartJob gives no stop grace: the others' grace after one host of a job fails.
constexpr double kDefaultHostFailureGraceSeconds = 10;

bool Failed(const ExitStatus& status) { return status.exit_code != 0 || status.signal != 0; }

std::optional<uint64_t> StatvfsFreeBytes(const fs::path& path) {
  struct statvfs st {};
  if (::statvfs(path.c_str(), &st) != 0) return std::nullopt;
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

// Whether a failure reason says the disk or the quota was full ("No space left on device").
bool SaysDiskFull(const std::string& failure) {
  return failure.find(std::strerror(ENOSPC)) != std::string::npos ||
         failure.find(std::strerror(EDQUOT)) != std::string::npos;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

JobRunner::JobRunner(JobRunnerOptions options, amt::v1::StartJob job, ProcessLauncher& launcher,
                     const Clock& clock, ReportFn report)
    : options_(std::move(options)),
      job_(std::move(job)),
      launcher_(launcher),
      clock_(clock),
      report_(std::move(report)),
      networks_(options_.networks != nullptr ? options_.networks
                                             : std::make_shared<LoopbackNetworks>()) {}

JobRunner::~JobRunner() {
  {
    MutexLock lock(&mu_);
    if (!process_exited_) {
      for (auto& process : processes_) (void)process->SignalGroup(SIGKILL);
    }
  }
  CancelGpuWait();
  if (thread_.joinable()) thread_.join();
  std::thread kill_timer;
  {
    MutexLock lock(&mu_);
    process_exited_ = true;  // releases the kill timer when the job never launched
    kill_cv_.SignalAll();
    kill_timer = std::move(kill_timer_);
  }
  if (kill_timer.joinable()) kill_timer.join();
}

void JobRunner::Start() {
  thread_ = std::thread([this] { Run(); });
}

void JobRunner::Stop(double grace_seconds, bool worker_shutdown) {
  StopLocked(grace_seconds, worker_shutdown);
  // A job still waiting for its GPUs ends now, stopped (the runner's lock is not held here: the
  // allocator's is taken).
  CancelGpuWait();
}

void JobRunner::CancelGpuWait() {
  gpu_wait_cancelled_ = true;
  if (options_.gpus != nullptr) options_.gpus->Wake();
}

void JobRunner::StopLocked(double grace_seconds, bool worker_shutdown) {
  MutexLock lock(&mu_);
  if (process_exited_ || done_) return;
  if (worker_shutdown) worker_shutdown_ = true;
  const auto grace = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::max(0.0, grace_seconds)));
  const auto kill_at = std::chrono::steady_clock::now() + grace;
  if (!kill_at_.has_value() || kill_at < *kill_at_) kill_at_ = kill_at;
  stop_requested_ = true;
  // Without a process yet, the job thread signals right after the launch.
  if (!processes_.empty()) SignalAndArmKillTimerLocked();
  kill_cv_.SignalAll();
}

void JobRunner::SignalAndArmKillTimerLocked() {
  if (signalled_) return;
  signalled_ = true;
  for (auto& process : processes_) (void)process->SignalGroup(SIGTERM);
  kill_timer_ = std::thread([this] { KillTimer(); });
}

void JobRunner::KillTimer() {
  MutexLock lock(&mu_);
  // kill_at_ may move earlier while we wait (a second Stop), so re-read it on every wake-up.
  while (!process_exited_) {
    const auto left = *kill_at_ - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) break;
    kill_cv_.WaitFor(&mu_, left);
  }
  if (!process_exited_) {
    for (auto& process : processes_) (void)process->SignalGroup(SIGKILL);
  }
}

bool JobRunner::WaitForExit(std::chrono::milliseconds timeout) {
  MutexLock lock(&mu_);
  return done_cv_.AwaitFor(&mu_, timeout, [this] {
    mu_.AssertHeld();
    return done_;
  });
}

void JobRunner::Diagnose(const std::string& message) const {
  if (options_.diagnostics) options_.diagnostics(job_.training_job_name() + ": " + message);
}

void JobRunner::ReportExit(amt::v1::JobExited exited, const std::function<void()>& after) {
  // Its GPUs and its hosts' loopback network are free before amtd hears of the exit (and may
  // send the next job for them), also when it ended before its hosts ran.
  gpu_lease_.reset();
  network_.reset();
  exited.set_training_job_name(job_.training_job_name());
  exited.set_attempt(job_.attempt());
  {
    MutexLock lock(&mu_);
    exited.set_stop_requested(stop_requested_);
    exited.set_worker_shutdown(worker_shutdown_ ||
                               (options_.shutdown_pending && options_.shutdown_pending()));
  }
  amt::v1::WorkerMessage message;
  *message.mutable_exited() = std::move(exited);
  report_(std::move(message));
  if (after) after();
  MutexLock lock(&mu_);
  done_ = true;
  done_cv_.SignalAll();  // wakes WaitForExit
}

void JobRunner::TrimOnFullDisk(const JobPaths& paths) const {
  const absl::StatusOr<TrimmedJobDir> trimmed = TrimFailedJobDir(paths);
  if (!trimmed.ok()) {
    Diagnose("the job ran out of disk space; trimming its folder " + paths.root.string() +
             " failed: " + std::string(trimmed.status().message()));
    return;
  }
  std::string largest;
  if (trimmed->largest_bytes > 0) {
    largest = ", the largest " + trimmed->largest.string() + " of " +
              std::to_string(trimmed->largest_bytes) + " bytes";
  }
  Diagnose("the job ran out of disk space: removed " + std::to_string(trimmed->bytes) +
           " bytes from its folder " + paths.root.string() +
           " (model/, output/data/, checkpoints/, input/data/, code/ and files over " +
           std::to_string(kSmallFileBytes) + " bytes" + largest +
           "); kept its config files, output/failure and small files for inspection");
}

void JobRunner::PrepareOutputFolders() const {
  for (const std::string* file : {&job_.model_output_path(), &job_.output_data_path()}) {
    if (file->empty()) continue;
    std::error_code ec;  // a failure shows in Tar, which tries again
    fs::create_directories(fs::absolute(*file, ec).parent_path(), ec);
  }
}

absl::Status JobRunner::Tar(const std::vector<fs::path>& dirs, const std::string& file) {
  std::error_code ec;
  const fs::path target = fs::absolute(file, ec);
  fs::create_directories(target.parent_path(), ec);  // made at the launch: one stat
  if (ec) {
    return absl::InternalError("cannot create " + target.parent_path().string() + ": " +
                               ec.message());
  }
  // Write next to the target and rename, so a reader never sees half an archive.
  const std::string partial = target.string() + ".partial";
  if (absl::Status written = WriteTarGz(dirs, partial); !written.ok()) {
    fs::remove(partial, ec);
    return written;
  }
  fs::rename(partial, target, ec);
  if (ec) return absl::InternalError("cannot rename to " + target.string() + ": " + ec.message());
  return absl::OkStatus();
}

bool JobRunner::LaunchHosts(std::vector<JobDir>& dirs, LogShipper& shipper) {
  const bool several = dirs.size() > 1;
  for (size_t i = 0; i < dirs.size(); ++i) {
    const JobPaths& paths = dirs[i].paths();
    LaunchSpec spec;
    if (in_container_) {
      // SageMaker's `docker run [--entrypoint E0] <image> [E1...] <ContainerArguments | train>`.
      const amt::v1::ContainerJob& job = job_.container();
      if (job.entrypoint_size() > 1)
        spec.argv.assign(job.entrypoint().begin() + 1, job.entrypoint().end());
      if (job.arguments_size() > 0) {
        spec.argv.insert(spec.argv.end(), job.arguments().begin(), job.arguments().end());
      } else if (job.entrypoint_size() == 0) {
        spec.argv.push_back("train");
      }
      spec.container = ContainerFor(i, dirs[i]);
    } else {
      spec.argv.assign(job_.command().begin(), job_.command().end());
      spec.env = options_.base_environment;
    }
    for (const auto& [key, value] : dirs[i].environment()) spec.env[key] = value;
    spec.cwd = paths.root.string();
    const std::string host = several ? HostName(static_cast<int>(i) + 1) : std::string();
    spec.host = several ? static_cast<int>(i) + 1 : 0;
    if (!paths.hosts_file.empty()) {
      spec.hosts_file = paths.hosts_file.string();
      spec.hostname = host;
    }
    ProcessLauncher& launcher = in_container_ ? *container_launcher_ : launcher_;
    auto launched = launcher.Launch(spec, [&shipper, host](OutputStream stream, std::string line) {
      shipper.Add(stream, line, host);
    });
    if (!launched.ok()) {
      AbandonLaunched();
      shipper.Close();
      ReportLaunchFailed((several ? host + ": " : std::string()) +
                         std::string(launched.status().message()));
      return false;
    }
    MutexLock lock(&mu_);
    processes_.push_back(std::move(*launched));
    // A stop that came before (or during) the launches reaches this host too.
    if (stop_requested_ && signalled_) {
      (void)processes_.back()->SignalGroup(SIGTERM);
    } else if (stop_requested_) {
      SignalAndArmKillTimerLocked();
    }
  }
  return true;
}

void JobRunner::AbandonLaunched() {
  std::vector<Process*> launched;
  {
    MutexLock lock(&mu_);
    for (auto& process : processes_) {
      (void)process->SignalGroup(SIGKILL);
      launched.push_back(process.get());
    }
  }
  for (Process* process : launched) (void)process->Wait();
  MutexLock lock(&mu_);
  process_exited_ = true;
  kill_cv_.SignalAll();
}

void JobRunner::OnHostExited(size_t index, const ExitStatus& status) {
  MutexLock lock(&mu_);
  ++hosts_exited_;
  if (hosts_exited_ == static_cast<int>(processes_.size())) {
    process_exited_ = true;
    kill_cv_.SignalAll();
    return;
  }
  // One host failing fails the job: the others are stopped as on a StopJob.
  if (!Failed(status) || stop_requested_ || failed_host_.has_value()) return;
  failed_host_ = index;
  const double grace =
      job_.stop_grace_seconds() > 0 ? job_.stop_grace_seconds() : kDefaultHostFailureGraceSeconds;
  const auto kill_at = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(grace));
  if (!kill_at_.has_value() || kill_at < *kill_at_) kill_at_ = kill_at;
  SignalAndArmKillTimerLocked();
  kill_cv_.SignalAll();
}

std::vector<ExitStatus> JobRunner::WaitForHosts() {
  std::vector<Process*> processes;
  {
    MutexLock lock(&mu_);
    for (auto& process : processes_) processes.push_back(process.get());
  }
  std::vector<ExitStatus> statuses(processes.size());
  if (processes.size() == 1) {
    statuses[0] = processes[0]->Wait();
    OnHostExited(0, statuses[0]);
    return statuses;
  }
  std::vector<std::thread> waiters;
  waiters.reserve(processes.size());
  for (size_t i = 0; i < processes.size(); ++i) {
    waiters.emplace_back([this, i, &processes, &statuses] {
      statuses[i] = processes[i]->Wait();
      OnHostExited(i, statuses[i]);
    });
  }
  for (auto& waiter : waiters) waiter.join();
  return statuses;
}

absl::StatusOr<HostSpec> JobRunner::PlanHosts() {
  const int host_count = std::max(1, job_.instance_count());
  HostSpec host;
  host.count = host_count;
  if (host_count > kMaxHostsPerNetwork) {
    return absl::InvalidArgumentError("InstanceCount " + std::to_string(host_count) +
                                      " is more than one worker runs (" +
                                      std::to_string(kMaxHostsPerNetwork) + ")");
  }
  // One machine's containers find each other on the job's own network (CreateJobNetwork).
  if (host_count == 1 || in_container_) return host;
  if (options_.host_addresses) {
    auto addresses = options_.host_addresses(host_count);
    if (!addresses.ok()) {
      return absl::UnavailableError("cannot find the job's hosts: " +
                                    std::string(addresses.status().message()));
    }
    if (static_cast<int>(addresses->size()) != host_count) {
      return absl::UnavailableError("the job has " + std::to_string(host_count) + " hosts but " +
                                    std::to_string(addresses->size()) + " node(s)");
    }
    host.addresses = std::move(*addresses);
  } else if (network_ = networks_->Take(); network_ != nullptr) {
    for (int i = 1; i <= host_count; ++i) host.addresses.push_back(network_->Address(i));
  } else {
    return absl::UnavailableError("no free loopback network for the job's hosts");
  }
  if (options_.private_hosts) {
    std::vector<std::string> names;
    for (int i = 1; i <= host_count; ++i) names.push_back(HostName(i));
    host.hosts_file_text = HostsFileText(ReadWholeFile(options_.etc_hosts), names, host.addresses);
  }
  return host;
}

void JobRunner::ReportLaunchFailed(const std::string& reason) {
  amt::v1::JobExited exited;
  exited.set_launch_failed(true);
  exited.set_failure_reason(reason);
  ReportExit(std::move(exited));
}

void JobRunner::ReportStarted(const JobDir& first) {
  amt::v1::WorkerMessage started;
  started.mutable_started()->set_training_job_name(job_.training_job_name());
  started.mutable_started()->set_attempt(job_.attempt());
  started.mutable_started()->set_job_dir(first.paths().root.string());
  for (const std::string& gpus : gpu_summary_) started.mutable_started()->add_gpus(gpus);
  report_(std::move(started));
}

size_t JobRunner::ChooseExitHost(const std::vector<ExitStatus>& statuses) {
  MutexLock lock(&mu_);
  if (failed_host_.has_value()) return *failed_host_;
  for (size_t i = 0; i < statuses.size(); ++i) {
    if (Failed(statuses[i])) return i;
  }
  return 0;
}

amt::v1::JobExited JobRunner::CollectOutputs(const std::vector<JobDir>& dirs,
                                             const ExitStatus& status) {
  for (const JobDir& dir : dirs) {
    if (absl::Status synced = dir.SyncCheckpointsOut(); !synced.ok()) {
      Diagnose("checkpoint sync failed: " + std::string(synced.message()));
    }
  }
  amt::v1::JobExited exited;
  exited.set_exit_code(status.exit_code);
  exited.set_signal(status.signal);
  if (!job_.model_output_path().empty()) {
    std::vector<fs::path> models;
    for (const JobDir& dir : dirs) models.push_back(dir.paths().model);
    absl::Status tarred = Tar(models, job_.model_output_path());
    exited.set_model_uploaded(tarred.ok());
    if (!tarred.ok()) {
      Diagnose("model upload failed: " + std::string(tarred.message()));
      exited.set_upload_failure(std::string(tarred.message()));
    }
  }
  std::vector<fs::path> output_data;
  for (const JobDir& dir : dirs) {
    if (dir.HasOutputData()) output_data.push_back(dir.paths().output_data);
  }
  if (!job_.output_data_path().empty() && !output_data.empty()) {
    absl::Status tarred = Tar(output_data, job_.output_data_path());
    if (!tarred.ok()) {
      Diagnose("output data upload failed: " + std::string(tarred.message()));
      if (exited.upload_failure().empty()) exited.set_upload_failure(std::string(tarred.message()));
    }
  }
  return exited;
}

JobRunner::Failure JobRunner::ReadFailure(const std::vector<JobDir>& dirs, size_t chosen,
                                          const ExitStatus& status) const {
  // The chosen host's output/failure, else the first host's that wrote one.
  Failure failure;
  failure.reason = dirs[chosen].ReadFailureReason();
  for (size_t i = 0; i < dirs.size() && failure.reason.empty(); ++i) {
    failure.reason = dirs[i].ReadFailureReason();
  }
  // Whether the job ran out of disk: its trainer said so, or the disk is full as it exits.
  // What the launcher knows (a container's OOM kill, an engine that could not start it).
  if (failure.reason.empty()) failure.reason = status.failure_reason;
  failure.out_of_space = SaysDiskFull(failure.reason);
  if (failure.reason.empty() && status.exit_code != 0) {
    // A trainer (or amt-script-runner) that ran out of disk could not write output/failure
    // either: say so rather than leave amtd a bare exit code.
    const fs::path& root = dirs[chosen].paths().root;
    const std::optional<uint64_t> free =
        options_.free_bytes ? options_.free_bytes(root) : StatvfsFreeBytes(root);
    if (free.has_value() && *free < kFullDiskBytes) {
      failure.out_of_space = true;
      failure.reason =
          "No space left on device in the job folder " + root.string() + " (" +
          std::to_string(*free) + " bytes free when the training process exited with code " +
          std::to_string(status.exit_code) +
          ", without an output/failure). Give the job a larger VolumeSizeInGB, or free "
          "disk space where amt-worker keeps job folders (--work-dir)";
    }
  }
  return failure;
}

void JobRunner::ReleaseAndReport(const std::vector<JobDir>& dirs, amt::v1::JobExited exited,
                                 bool succeeded, bool out_of_space) {
  // A succeeded job's folders leave their place before the exit is reported (a later attempt
  // of the job may start right after it), by a rename each; they are emptied into spares after
  // the report, off the way from one job's end to the next one's launch.
  std::vector<JobDirPool::Detached> detached;
  const std::shared_ptr<JobDirPool> spares = options_.job_dir.spares;
  if (succeeded && !options_.keep_job_dirs && spares != nullptr) {
    for (const JobDir& dir : dirs) {
      if (auto moved = spares->Detach(dir.paths())) detached.push_back(std::move(*moved));
    }
  } else {
    ReleaseJobDirs(dirs, succeeded, out_of_space);
  }
  network_.reset();
  RemoveJobNetwork();
  ReportExit(std::move(exited), [&] {
    for (const auto& moved : detached) spares->Keep(moved);
  });
}

void JobRunner::ReleaseJobDirs(const std::vector<JobDir>& dirs, bool succeeded,
                               bool out_of_space) const {
  if (!succeeded && out_of_space) {
    // What filled the disk goes now, even with --keep-job-dirs: kept, it would keep the disk
    // full, and every later job (and amtd's state store, on the same disk by default) would
    // fail on it until someone deleted it by hand.
    for (const JobDir& dir : dirs) TrimOnFullDisk(dir.paths());
  }
  if (!succeeded && !options_.keep_job_dirs && options_.job_dir.failed != nullptr) {
    // Kept for inspection, within the cap: the oldest failed folders go.
    for (const JobDir& dir : dirs) {
      for (const fs::path& old : options_.job_dir.failed->Keep(dir.paths().root)) {
        std::error_code ec;
        fs::remove_all(old, ec);
        if (ec)
          Diagnose("cannot remove the failed job folder " + old.string() + ": " + ec.message());
      }
    }
  }
  if (succeeded && !options_.keep_job_dirs) {
    // Before the exit is reported: the next attempt of this job can only start after it.
    for (const JobDir& dir : dirs) {
      const JobPaths& paths = dir.paths();
      if (options_.job_dir.spares != nullptr) {
        options_.job_dir.spares->Recycle(paths);
      } else {
        std::error_code ec;
        std::filesystem::remove_all(paths.root, ec);
        if (ec) {
          Diagnose("cannot remove the job folder " + paths.root.string() + ": " + ec.message());
        }
      }
    }
  }
}

// The job's stages, in order: its hosts (addresses, /etc/hosts), a folder per host, the launch,
// the wait, then its outputs, its failure and its folders. Each stage's additions (a device per
// host, a container's image and mounts) belong in the stage's own function.
void JobRunner::Run() {
  const absl::StatusOr<bool> in_container = RunsInContainer();
  if (!in_container.ok()) {
    ReportLaunchFailed(std::string(in_container.status().message()));
    return;
  }
  in_container_ = *in_container;
  absl::StatusOr<HostSpec> host = PlanHosts();
  if (!host.ok()) {
    ReportLaunchFailed(std::string(host.status().message()));
    return;
  }
  if (absl::Status gpus = TakeGpus(host->count); !gpus.ok()) {
    bool stopped = false;
    {
      MutexLock lock(&mu_);
      stopped = stop_requested_;
    }
    if (absl::IsCancelled(gpus) && stopped) {
      ReportExit(amt::v1::JobExited());  // stopped while it waited for its GPUs: Stopped
    } else {
      ReportLaunchFailed(std::string(gpus.message()));
    }
    return;
  }
  std::vector<JobDir> dirs;
  for (int i = 1; i <= host->count; ++i) {
    host->index = i;
    if (!host_gpus_.empty()) host->gpus = host_gpus_[i - 1];
    auto dir = JobDir::Create(options_.job_dir, job_, *host, in_container_);
    if (!dir.ok()) {
      ReportLaunchFailed(std::string(dir.status().message()));
      return;
    }
    dirs.push_back(std::move(*dir));
  }

  if (absl::Status code = PutContainerCode(dirs); !code.ok()) {
    ReleaseJobDirs(dirs, /*succeeded=*/false, /*out_of_space=*/false);
    ReportLaunchFailed(std::string(code.message()));
    return;
  }
  auto shipper = std::make_unique<LogShipper>(job_.training_job_name(), job_.attempt(), clock_,
                                              options_.logs, [this](amt::v1::LogBatch batch) {
                                                amt::v1::WorkerMessage message;
                                                *message.mutable_logs() = std::move(batch);
                                                report_(std::move(message));
                                              });
  if (in_container_ && host->count > 1) {
    if (absl::Status made = CreateJobNetwork(); !made.ok()) {
      ReportLaunchFailed(std::string(made.message()));
      return;
    }
  }
  if (!LaunchHosts(dirs, *shipper)) {
    RemoveJobNetwork();
    return;
  }
  ReportStarted(dirs.front());
  for (const std::string& note : gpu_notes_) shipper->Add(OutputStream::kStderr, note);
  shipper->Start();
  PrepareOutputFolders();
  const std::vector<ExitStatus> statuses = WaitForHosts();  // every line is in the shipper

  const size_t chosen = ChooseExitHost(statuses);
  const ExitStatus& status = statuses[chosen];
  amt::v1::JobExited exited = CollectOutputs(dirs, status);
  const Failure failure = ReadFailure(dirs, chosen, status);
  exited.set_failure_reason(failure.reason);
  const bool succeeded =
      !Failed(status) && exited.upload_failure().empty() && exited.failure_reason().empty();
  // Every line is out before JobExited, the last ones right before it and saying so, so that
  // amtd applies the two together, one commit of its store (api/report_queue.h).
  shipper->Close(/*exit_follows=*/true);
  ReleaseAndReport(dirs, std::move(exited), succeeded, failure.out_of_space);
}

}  // namespace amt::worker
