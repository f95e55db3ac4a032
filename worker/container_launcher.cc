#include "worker/container_launcher.h"

#include <signal.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/mutex.h"

namespace amt::worker {
namespace {

// What the engine's client needs of the worker's environment to find and reach its engine.
constexpr std::string_view kClientVariables[] = {"PATH",
                                                 "HOME",
                                                 "LANG",
                                                 "DOCKER_HOST",
                                                 "DOCKER_CONFIG",
                                                 "DOCKER_CONTEXT",
                                                 "DOCKER_TLS_VERIFY",
                                                 "DOCKER_CERT_PATH",
                                                 "CONTAINER_HOST",
                                                 "CONTAINERS_CONF",
                                                 "CONTAINERS_STORAGE_CONF",
                                                 "XDG_RUNTIME_DIR",
                                                 "XDG_CONFIG_HOME",
                                                 "XDG_DATA_HOME"};

// One field of --mount's comma-separated list, quoted as CSV when it must be.
std::string MountField(std::string_view key, std::string_view value) {
  const std::string field = std::string(key) + "=" + std::string(value);
  if (field.find_first_of(",\"\n") == std::string::npos) return field;
  return "\"" + absl::StrReplaceAll(field, {{"\"", "\"\""}}) + "\"";
}

// `cpus` as --cpus takes it: a decimal with at most two places.
std::string Cpus(double cpus) {
  const double rounded = std::max(0.01, std::round(cpus * 100) / 100);
  std::string text = absl::StrCat(rounded);
  return text;
}

class ContainerProcess : public Process {
 public:
  ContainerProcess(const ContainerEngine& engine, std::string name, std::unique_ptr<Process> client,
                   std::shared_ptr<std::string> last_error)
      : engine_(engine),
        name_(std::move(name)),
        client_(std::move(client)),
        last_error_(std::move(last_error)) {}

  ~ContainerProcess() override { JoinSignallers(); }

  int pid() const override { return client_->pid(); }

  absl::Status SignalGroup(int signal) override {
    MutexLock lock(&mu_);
    if (waited_) return absl::OkStatus();
    signallers_.emplace_back([this, signal] {
      const absl::Status sent = engine_.Kill(name_, signal);
      if (!sent.ok() && signal == SIGKILL) (void)client_->SignalGroup(SIGKILL);
    });
    return absl::OkStatus();
  }

  ExitStatus Wait() override {
    ExitStatus status = client_->Wait();
    {
      MutexLock lock(&mu_);
      waited_ = true;
    }
    JoinSignallers();
    const absl::StatusOr<ContainerState> state = engine_.Inspect(name_);
    if (state.ok()) {
      status.exit_code = state->exit_code;
      status.signal =
          state->exit_code > 128 && state->exit_code < 128 + NSIG ? state->exit_code - 128 : 0;
      if (state->oom_killed) {
        status.failure_reason =
            "OutOfMemoryError: the training container ran out of memory (its limit: the "
            "instance type's memory). Use an instance type with more memory, or reduce the "
            "memory the job uses.";
      }
    } else if (status.exit_code == 125 && !last_error_->empty()) {
      // The engine could not create or start the container.
      status.failure_reason = *last_error_;
    }
    (void)engine_.Remove(name_);
    return status;
  }

 private:
  void JoinSignallers() {
    std::vector<std::thread> signallers;
    {
      MutexLock lock(&mu_);
      signallers.swap(signallers_);
    }
    for (std::thread& thread : signallers) thread.join();
  }

  const ContainerEngine& engine_;
  const std::string name_;
  const std::unique_ptr<Process> client_;
  // The client's last line on stderr (its error when it exits 125); written by the reader
  // thread, read after the client's Wait().
  const std::shared_ptr<std::string> last_error_;
  Mutex mu_;
  bool waited_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> signallers_ ABSL_GUARDED_BY(mu_);
};

class ContainerLauncher : public ProcessLauncher {
 public:
  ContainerLauncher(const ContainerEngine& engine, ProcessLauncher& inner,
                    std::map<std::string, std::string> client_environment)
      : engine_(engine), inner_(inner), client_environment_(std::move(client_environment)) {}

  absl::StatusOr<std::unique_ptr<Process>> Launch(const LaunchSpec& spec,
                                                  LineCallback on_line) override {
    if (!spec.container.has_value()) return inner_.Launch(spec, std::move(on_line));
    if (spec.container->image.empty() || spec.container->name.empty()) {
      return absl::InvalidArgumentError("a container needs an image and a name");
    }
    // A container of the same name left by a worker killed before it could remove it.
    (void)engine_.Remove(spec.container->name);
    LaunchSpec client;
    client.argv = ContainerRunArgv(engine_.cli(), spec, client_environment_);
    client.env = spec.env;
    for (const auto& [name, value] : client_environment_) client.env[name] = value;
    client.cwd = spec.cwd;
    auto last_error = std::make_shared<std::string>();
    auto launched = inner_.Launch(
        client, [on_line = std::move(on_line), last_error](OutputStream stream, std::string line) {
          if (stream == OutputStream::kStderr) *last_error = line;
          on_line(stream, std::move(line));
        });
    if (!launched.ok()) return launched.status();
    return std::make_unique<ContainerProcess>(engine_, spec.container->name, std::move(*launched),
                                              std::move(last_error));
  }

 private:
  const ContainerEngine& engine_;
  ProcessLauncher& inner_;
  const std::map<std::string, std::string> client_environment_;
};

}  // namespace

std::map<std::string, std::string> EngineClientEnvironment() {
  std::map<std::string, std::string> environment;
  for (const std::string_view name : kClientVariables) {
    if (const char* value = std::getenv(std::string(name).c_str())) {
      environment.emplace(name, value);
    }
  }
  return environment;
}

std::vector<std::string> ContainerRunArgv(
    const std::string& cli, const LaunchSpec& spec,
    const std::map<std::string, std::string>& client_environment) {
  const ContainerSpec& c = *spec.container;
  std::vector<std::string> argv = {cli, "run", "--name", c.name};
  for (const auto& [key, value] : c.labels) {
    argv.push_back("--label");
    argv.push_back(key + "=" + value);
  }
  for (const ContainerMount& mount : c.mounts) {
    std::string text = "type=bind," + MountField("source", mount.source) + "," +
                       MountField("target", mount.target);
    if (mount.read_only) text += ",readonly";
    argv.push_back("--mount");
    argv.push_back(std::move(text));
  }
  if (c.cpus > 0) {
    argv.push_back("--cpus");
    argv.push_back(Cpus(c.cpus));
  }
  if (c.memory_bytes > 0) {
    argv.push_back("--memory");
    argv.push_back(std::to_string(c.memory_bytes));
    argv.push_back("--memory-swap");  // the same: no swap beyond the limit
    argv.push_back(std::to_string(c.memory_bytes));
  }
  argv.push_back("--network");
  argv.push_back(c.network.empty() ? "none" : c.network);
  if (!c.hostname.empty()) {
    argv.insert(argv.end(), {"--hostname", c.hostname, "--network-alias", c.hostname});
  }
  if (!c.gpus.empty()) {
    if (std::filesystem::path(cli).filename().string().find("podman") != std::string::npos) {
      for (const int gpu : c.gpus)
        argv.insert(argv.end(), {"--device", "nvidia.com/gpu=" + std::to_string(gpu)});
    } else {
      // One CSV field: the quotes keep the list's commas from splitting it.
      std::string devices;
      for (const int gpu : c.gpus) devices += (devices.empty() ? "" : ",") + std::to_string(gpu);
      argv.insert(argv.end(), {"--gpus", "\"device=" + devices + "\""});
    }
  }
  argv.push_back("--pull");
  argv.push_back("never");
  if (!c.entrypoint.empty()) {
    argv.push_back("--entrypoint");
    argv.push_back(c.entrypoint);
  }
  for (const auto& [name, value] : spec.env) {
    argv.push_back("-e");
    argv.push_back(client_environment.count(name) > 0 ? name + "=" + value : name);
  }
  argv.push_back(c.image);
  argv.insert(argv.end(), spec.argv.begin(), spec.argv.end());
  return argv;
}

std::unique_ptr<ProcessLauncher> NewContainerLauncher(
    const ContainerEngine& engine, ProcessLauncher& inner,
    std::map<std::string, std::string> client_environment) {
  return std::make_unique<ContainerLauncher>(engine, inner, std::move(client_environment));
}

}  // namespace amt::worker
