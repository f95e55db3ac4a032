// FakeProcessLauncher: a ProcessLauncher whose processes are driven by the test: it emits their
// output lines and decides when and how they exit. Records every launch and signal.
#ifndef AMT_TESTS_UNIT_WORKER_FAKE_PROCESS_LAUNCHER_H_
#define AMT_TESTS_UNIT_WORKER_FAKE_PROCESS_LAUNCHER_H_

#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "worker/process_launcher.h"

namespace amt::worker::testing {

// The test's handle on one fake process. Thread-safe.
class FakeProcessControl {
 public:
  FakeProcessControl(LaunchSpec spec, LineCallback on_line, int pid, bool exit_on_signal)
      : spec_(std::move(spec)),
        on_line_(std::move(on_line)),
        pid_(pid),
        exit_on_signal_(exit_on_signal) {}

  const LaunchSpec& spec() const { return spec_; }
  int pid() const { return pid_; }

  // Delivers one output line, synchronously on the calling thread.
  void EmitLine(OutputStream stream, const std::string& line) { on_line_(stream, line); }

  void Exit(int exit_code) {
    ExitStatus status;
    status.exit_code = exit_code;
    Finish(status);
  }
  void Kill(int signal) {
    ExitStatus status;
    status.exit_code = 128 + signal;
    status.signal = signal;
    Finish(status);
  }

  std::vector<int> signals() const {
    std::lock_guard<std::mutex> lock(mu_);
    return signals_;
  }

  // Waits until the process has received `count` signals. True if it has within 10 s.
  bool WaitForSignals(size_t count) const {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return signals_.size() >= count; });
  }

  void RecordSignal(int signal) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (exited_.has_value()) return;
      signals_.push_back(signal);
    }
    cv_.notify_all();
    // SIGKILL cannot be caught; other signals end the process only when so configured.
    if (signal == SIGKILL || exit_on_signal_) Kill(signal);
  }

  ExitStatus WaitForExit() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return exited_.has_value(); });
    return *exited_;
  }

 private:
  void Finish(ExitStatus status) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (exited_.has_value()) return;
      exited_ = status;
    }
    cv_.notify_all();
  }

  const LaunchSpec spec_;
  const LineCallback on_line_;
  const int pid_;
  const bool exit_on_signal_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<int> signals_;
  std::optional<ExitStatus> exited_;
};

class FakeProcess final : public Process {
 public:
  explicit FakeProcess(std::shared_ptr<FakeProcessControl> control)
      : control_(std::move(control)) {}
  ~FakeProcess() override {
    // Like the real one: an unwaited process is killed.
    control_->Kill(SIGKILL);
  }
  int pid() const override { return control_->pid(); }
  absl::Status SignalGroup(int signal) override {
    control_->RecordSignal(signal);
    return absl::OkStatus();
  }
  ExitStatus Wait() override { return control_->WaitForExit(); }

 private:
  std::shared_ptr<FakeProcessControl> control_;
};

class FakeProcessLauncher final : public ProcessLauncher {
 public:
  // `exit_on_signal`: a signalled process exits at once, killed by that signal. Without it, only
  // SIGKILL ends a process.
  explicit FakeProcessLauncher(bool exit_on_signal = false) : exit_on_signal_(exit_on_signal) {}

  // The next Launch fails with `status`.
  void FailNextLaunch(absl::Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    next_error_ = std::move(status);
  }

  absl::StatusOr<std::unique_ptr<Process>> Launch(const LaunchSpec& spec,
                                                  LineCallback on_line) override {
    std::shared_ptr<FakeProcessControl> control;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (next_error_.has_value()) {
        absl::Status error = *next_error_;
        next_error_.reset();
        launch_attempts_.push_back(spec);
        cv_.notify_all();
        return error;
      }
      control = std::make_shared<FakeProcessControl>(
          spec, std::move(on_line), 1000 + static_cast<int>(processes_.size()), exit_on_signal_);
      processes_.push_back(control);
      launch_attempts_.push_back(spec);
    }
    cv_.notify_all();
    return std::unique_ptr<Process>(std::make_unique<FakeProcess>(control));
  }

  // Waits (up to 10 s) until the `index`-th successful launch (0-based) happened; null if not.
  std::shared_ptr<FakeProcessControl> WaitForProcess(size_t index) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(10), [&] { return processes_.size() > index; });
    return processes_.size() > index ? processes_[index] : nullptr;
  }

  std::vector<LaunchSpec> launch_attempts() const {
    std::lock_guard<std::mutex> lock(mu_);
    return launch_attempts_;
  }

 private:
  const bool exit_on_signal_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<absl::Status> next_error_;
  std::vector<std::shared_ptr<FakeProcessControl>> processes_;
  std::vector<LaunchSpec> launch_attempts_;
};

}  // namespace amt::worker::testing

#endif  // AMT_TESTS_UNIT_WORKER_FAKE_PROCESS_LAUNCHER_H_
