#include "worker/job_runner.h"

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "worker/tar_gz.h"

namespace amt::worker {
namespace fs = std::filesystem;

JobRunner::JobRunner(JobRunnerOptions options, amt::v1::StartJob job, ProcessLauncher& launcher,
                     const Clock& clock, ReportFn report)
    : options_(std::move(options)),
      job_(std::move(job)),
      launcher_(launcher),
      clock_(clock),
      report_(std::move(report)) {}

JobRunner::~JobRunner() {
  {
    MutexLock lock(&mu_);
    if (process_ != nullptr && !process_exited_) (void)process_->SignalGroup(SIGKILL);
  }
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

void JobRunner::Stop(double grace_seconds) {
  MutexLock lock(&mu_);
  if (process_exited_ || done_) return;
  const auto grace = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::max(0.0, grace_seconds)));
  const auto kill_at = std::chrono::steady_clock::now() + grace;
  if (!kill_at_.has_value() || kill_at < *kill_at_) kill_at_ = kill_at;
  stop_requested_ = true;
  // Without a process yet, the job thread signals right after the launch.
  if (process_ != nullptr) SignalAndArmKillTimerLocked();
  kill_cv_.SignalAll();
}

void JobRunner::SignalAndArmKillTimerLocked() {
  if (signalled_) return;
  signalled_ = true;
  (void)process_->SignalGroup(SIGTERM);
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
  if (!process_exited_) (void)process_->SignalGroup(SIGKILL);
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

void JobRunner::ReportExit(amt::v1::JobExited exited) {
  exited.set_training_job_name(job_.training_job_name());
  exited.set_attempt(job_.attempt());
  {
    MutexLock lock(&mu_);
    exited.set_stop_requested(stop_requested_);
  }
  amt::v1::WorkerMessage message;
  *message.mutable_exited() = std::move(exited);
  report_(std::move(message));
  MutexLock lock(&mu_);
  done_ = true;
  done_cv_.SignalAll();  // wakes WaitForExit
}

absl::Status JobRunner::Tar(const std::string& dir, const std::string& file) {
  std::error_code ec;
  const fs::path target = fs::absolute(file, ec);
  fs::create_directories(target.parent_path(), ec);
  if (ec) {
    return absl::InternalError("cannot create " + target.parent_path().string() + ": " +
                               ec.message());
  }
  // Write next to the target and rename, so a reader never sees half an archive.
  const std::string partial = target.string() + ".partial";
  if (absl::Status written = WriteTarGz(dir, partial); !written.ok()) {
    fs::remove(partial, ec);
    return written;
  }
  fs::rename(partial, target, ec);
  if (ec) return absl::InternalError("cannot rename to " + target.string() + ": " + ec.message());
  return absl::OkStatus();
}

void JobRunner::Run() {
  auto dir = JobDir::Create(options_.job_dir, job_);
  if (!dir.ok()) {
    amt::v1::JobExited exited;
    exited.set_launch_failed(true);
    exited.set_failure_reason(std::string(dir.status().message()));
    ReportExit(std::move(exited));
    return;
  }
  const JobPaths& paths = dir->paths();

  LaunchSpec spec;
  spec.argv.assign(job_.command().begin(), job_.command().end());
  spec.env = options_.base_environment;
  for (const auto& [key, value] : dir->environment()) spec.env[key] = value;
  spec.cwd = paths.root.string();

  auto shipper = std::make_unique<LogShipper>(job_.training_job_name(), job_.attempt(), clock_,
                                              options_.logs, [this](amt::v1::LogBatch batch) {
                                                amt::v1::WorkerMessage message;
                                                *message.mutable_logs() = std::move(batch);
                                                report_(std::move(message));
                                              });
  auto launched =
      launcher_.Launch(spec, [shipper = shipper.get()](OutputStream stream, std::string line) {
        shipper->Add(stream, line);
      });
  if (!launched.ok()) {
    shipper->Close();
    amt::v1::JobExited exited;
    exited.set_launch_failed(true);
    exited.set_failure_reason(std::string(launched.status().message()));
    ReportExit(std::move(exited));
    return;
  }
  Process* process = launched->get();
  {
    MutexLock lock(&mu_);
    process_ = std::move(*launched);
    if (stop_requested_) SignalAndArmKillTimerLocked();
  }

  amt::v1::WorkerMessage started;
  started.mutable_started()->set_training_job_name(job_.training_job_name());
  started.mutable_started()->set_attempt(job_.attempt());
  started.mutable_started()->set_job_dir(paths.root.string());
  report_(std::move(started));
  shipper->Start();

  const ExitStatus status = process->Wait();
  {
    MutexLock lock(&mu_);
    process_exited_ = true;
    kill_cv_.SignalAll();
  }
  shipper->Close();  // every line is out before JobExited

  if (absl::Status synced = dir->SyncCheckpointsOut(); !synced.ok()) {
    Diagnose("checkpoint sync failed: " + std::string(synced.message()));
  }
  amt::v1::JobExited exited;
  exited.set_exit_code(status.exit_code);
  exited.set_signal(status.signal);
  if (!job_.model_output_path().empty()) {
    absl::Status tarred = Tar(paths.model.string(), job_.model_output_path());
    exited.set_model_uploaded(tarred.ok());
    if (!tarred.ok()) {
      Diagnose("model upload failed: " + std::string(tarred.message()));
      exited.set_upload_failure(std::string(tarred.message()));
    }
  }
  if (!job_.output_data_path().empty() && dir->HasOutputData()) {
    absl::Status tarred = Tar(paths.output_data.string(), job_.output_data_path());
    if (!tarred.ok()) {
      Diagnose("output data upload failed: " + std::string(tarred.message()));
      if (exited.upload_failure().empty()) exited.set_upload_failure(std::string(tarred.message()));
    }
  }
  exited.set_failure_reason(dir->ReadFailureReason());
  const bool succeeded = status.exit_code == 0 && status.signal == 0 &&
                         exited.upload_failure().empty() && exited.failure_reason().empty();
  if (succeeded && !options_.keep_job_dirs) {
    // Before the exit is reported: the next attempt of this job can only start after it.
    if (options_.job_dir.spares != nullptr) {
      options_.job_dir.spares->Recycle(paths);
    } else {
      std::error_code ec;
      std::filesystem::remove_all(paths.root, ec);
      if (ec) Diagnose("cannot remove the job folder " + paths.root.string() + ": " + ec.message());
    }
  }
  ReportExit(std::move(exited));
}

}  // namespace amt::worker
