#include "worker/srun_hosts.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include "amt/v1/worker.pb.h"
#include "common/text.h"
#include "nlohmann/json.hpp"

namespace amt::worker {
namespace {

namespace fs = std::filesystem;
using auth::text::Split;
using auth::text::Strip;

// The launch file's name in the host's folder.
constexpr char kLaunchFile[] = "amt-host-launch.pb";

// srun, seen as the host's process: the stop SIGTERM travels as SIGUSR2 (srun would cancel the
// step with SIGKILL on SIGTERM; it passes SIGUSR2 on as it is).
class SrunProcess final : public Process {
 public:
  explicit SrunProcess(std::unique_ptr<Process> srun) : srun_(std::move(srun)) {}
  int pid() const override { return srun_->pid(); }
  absl::Status SignalGroup(int signal) override {
    return srun_->SignalGroup(signal == SIGTERM ? SIGUSR2 : signal);
  }
  ExitStatus Wait() override { return srun_->Wait(); }

 private:
  std::unique_ptr<Process> srun_;
};

class SrunProcessLauncher final : public ProcessLauncher {
 public:
  SrunProcessLauncher(ProcessLauncher& inner, SrunOptions options)
      : inner_(inner), options_(std::move(options)) {}

  absl::StatusOr<std::unique_ptr<Process>> Launch(const LaunchSpec& spec,
                                                  LineCallback on_line) override {
    if (spec.host <= 0) return inner_.Launch(spec, std::move(on_line));
    if (spec.argv.empty()) return absl::InvalidArgumentError("empty command");
    amt::v1::HostLaunch launch;
    launch.mutable_argv()->Assign(spec.argv.begin(), spec.argv.end());
    launch.mutable_env()->insert(spec.env.begin(), spec.env.end());
    launch.set_cwd(spec.cwd);
    launch.set_hosts_file(spec.hosts_file);
    launch.set_hostname(spec.hostname);
    const std::string file = (fs::path(spec.cwd) / kLaunchFile).string();
    {
      std::ofstream out(file, std::ios::binary | std::ios::trunc);
      if (!out || !launch.SerializeToOstream(&out) || !out.flush()) {
        return absl::InternalError(spec.argv[0] + ": cannot write " + file);
      }
    }
    LaunchSpec step;
    step.argv = SrunArguments(options_, spec.host, file);
    step.env = options_.environment;
    step.cwd = spec.cwd;
    auto srun = inner_.Launch(step, std::move(on_line));
    if (!srun.ok()) return srun.status();
    return std::unique_ptr<Process>(std::make_unique<SrunProcess>(std::move(*srun)));
  }

 private:
  ProcessLauncher& inner_;
  const SrunOptions options_;
};

absl::StatusOr<std::string> ResolveIpv4(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* found = nullptr;
  if (const int error = ::getaddrinfo(name.c_str(), nullptr, &hints, &found); error != 0) {
    return absl::NotFoundError("cannot resolve " + name + ": " + ::gai_strerror(error));
  }
  char text[INET_ADDRSTRLEN] = {};
  const auto* address = reinterpret_cast<const sockaddr_in*>(found->ai_addr);
  ::inet_ntop(AF_INET, &address->sin_addr, text, sizeof(text));
  ::freeaddrinfo(found);
  return std::string(text);
}

std::string Said(const CommandResult& result) {
  return std::string(Strip(result.err.empty() ? result.out : result.err));
}

void WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

std::unique_ptr<ProcessLauncher> NewSrunProcessLauncher(ProcessLauncher& inner,
                                                        SrunOptions options) {
  return std::make_unique<SrunProcessLauncher>(inner, std::move(options));
}

std::vector<std::string> SrunArguments(const SrunOptions& options, int host,
                                       const std::string& launch_file) {
  // --exact: the step takes only its task's CPUs, so the hosts' steps on one node run together;
  // --kill-on-bad-exit: a step whose task fails ends at once.
  std::vector<std::string> argv = {options.srun,
                                   "--nodes=1",
                                   "--ntasks=1",
                                   "--exact",
                                   "--quiet",
                                   "--kill-on-bad-exit=1",
                                   "--job-name=algo-" + std::to_string(host)};
  if (options.host_per_node) argv.push_back("--relative=" + std::to_string(host - 1));
  argv.insert(argv.end(), {options.worker_binary, "--exec-host", launch_file});
  return argv;
}

std::optional<std::pair<std::string, std::string>> ParseNodeLine(std::string_view line) {
  std::string name;
  std::string address;
  for (std::string_view field : Split(line, " \t", /*skip_empty=*/true)) {
    if (field.starts_with("NodeName=")) name = std::string(field.substr(9));
    if (field.starts_with("NodeAddr=")) address = std::string(field.substr(9));
  }
  if (name.empty() || address.empty()) return std::nullopt;
  return std::make_pair(name, address);
}

absl::StatusOr<std::vector<std::string>> SlurmNodeAddresses(CommandRunner& runner,
                                                            const std::string& scontrol,
                                                            const std::string& node_list) {
  if (node_list.empty()) {
    return absl::FailedPreconditionError("no Slurm node list (SLURM_JOB_NODELIST is not set)");
  }
  auto names = runner.Run({scontrol, "show", "hostnames", node_list});
  if (!names.ok()) return names.status();
  if (names->exit_code != 0) {
    return absl::UnavailableError("scontrol show hostnames " + node_list + ": " + Said(*names));
  }
  auto nodes = runner.Run({scontrol, "-o", "show", "node", node_list});
  if (!nodes.ok()) return nodes.status();
  if (nodes->exit_code != 0) {
    return absl::UnavailableError("scontrol show node " + node_list + ": " + Said(*nodes));
  }
  std::map<std::string, std::string> address_of;
  for (std::string_view line : Split(nodes->out, "\n", /*skip_empty=*/true)) {
    if (auto parsed = ParseNodeLine(line)) address_of[parsed->first] = parsed->second;
  }
  std::vector<std::string> addresses;
  for (std::string_view name : Split(names->out, "\n", /*skip_empty=*/true)) {
    name = Strip(name);
    if (name.empty()) continue;
    auto found = address_of.find(std::string(name));
    // A node without a NodeAddr of its own is reached by its name.
    auto resolved = ResolveIpv4(found != address_of.end() ? found->second : std::string(name));
    if (!resolved.ok()) return resolved.status();
    addresses.push_back(*resolved);
  }
  if (addresses.empty()) return absl::UnavailableError("no nodes in " + node_list);
  return addresses;
}

std::string InterfaceWithAddress(const std::string& address) {
  in_addr wanted{};
  if (::inet_pton(AF_INET, address.c_str(), &wanted) != 1) return "";
  ifaddrs* interfaces = nullptr;
  if (::getifaddrs(&interfaces) != 0) return "";
  std::string name;
  for (const ifaddrs* i = interfaces; i != nullptr && name.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    if (reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr == wanted.s_addr) {
      name = i->ifa_name;
    }
  }
  ::freeifaddrs(interfaces);
  return name;
}

absl::Status UseInterface(amt::v1::HostLaunch& launch, const std::string& interface) {
  auto& env = *launch.mutable_env();
  env["SM_NETWORK_INTERFACE_NAME"] = interface;
  if (auto config = env.find("SM_RESOURCE_CONFIG"); config != env.end()) {
    nlohmann::json parsed = nlohmann::json::parse(config->second, nullptr, false);
    if (parsed.is_object()) {
      parsed["network_interface_name"] = interface;
      config->second = parsed.dump();
    }
  }
  const fs::path file = fs::path(launch.cwd()) / "input" / "config" / "resourceconfig.json";
  std::ifstream in(file);
  nlohmann::json parsed = nlohmann::json::parse(in, nullptr, false);
  in.close();
  if (!parsed.is_object()) return absl::NotFoundError("cannot read " + file.string());
  parsed["network_interface_name"] = interface;
  std::ofstream out(file, std::ios::trunc);
  if (!(out << parsed.dump()) || !out.flush()) {
    return absl::InternalError("cannot write " + file.string());
  }
  return absl::OkStatus();
}

int RunHostLaunch(const std::string& file, ProcessLauncher& launcher) {
  amt::v1::HostLaunch launch;
  {
    std::ifstream in(file, std::ios::binary);
    if (!in || !launch.ParseFromIstream(&in) || launch.argv().empty()) {
      std::fprintf(stderr, "amt-worker: --exec-host: cannot read a host's launch from %s\n",
                   file.c_str());
      return 127;
    }
  }
  // The folder was written on the first node, for loopback addresses ("lo"); the host's address
  // here is this node's.
  if (auto addresses = launch.env().find("AMT_HOST_ADDRESSES"); addresses != launch.env().end()) {
    const nlohmann::json parsed = nlohmann::json::parse(addresses->second, nullptr, false);
    auto current = launch.env().find("SM_CURRENT_HOST");
    if (parsed.is_object() && current != launch.env().end() && parsed.contains(current->second) &&
        parsed[current->second].is_string()) {
      const std::string interface =
          InterfaceWithAddress(parsed[current->second].get<std::string>());
      auto named = launch.env().find("SM_NETWORK_INTERFACE_NAME");
      if (!interface.empty() && (named == launch.env().end() || named->second != interface)) {
        if (absl::Status used = UseInterface(launch, interface); !used.ok()) {
          std::fprintf(stderr, "amt-worker: --exec-host: %s\n",
                       std::string(used.message()).c_str());
        }
      }
    }
  }
  // Blocked before any thread starts. Slurm signals every process of the step (proctrack), so
  // the trainer gets a step's SIGTERM (scancel, the time limit) itself: only SIGUSR2, the stop
  // that srun passes on, is relayed, as SIGTERM.
  sigset_t blocked;
  sigemptyset(&blocked);
  for (int signal : {SIGTERM, SIGINT, SIGUSR2}) sigaddset(&blocked, signal);
  pthread_sigmask(SIG_BLOCK, &blocked, nullptr);
  sigset_t relayed;
  sigemptyset(&relayed);
  sigaddset(&relayed, SIGUSR2);

  LaunchSpec spec;
  spec.argv.assign(launch.argv().begin(), launch.argv().end());
  spec.env.insert(launch.env().begin(), launch.env().end());
  spec.cwd = launch.cwd();
  spec.hosts_file = launch.hosts_file();
  spec.hostname = launch.hostname();
  spec.ignored_signal = SIGUSR2;  // Slurm gives it to the trainer too; it means SIGTERM
  auto process = launcher.Launch(spec, [](OutputStream stream, std::string line) {
    line += '\n';
    WriteAll(stream == OutputStream::kStdout ? STDOUT_FILENO : STDERR_FILENO, line);
  });
  if (!process.ok()) {
    std::fprintf(stderr, "%s\n", std::string(process.status().message()).c_str());
    return 127;
  }
  std::atomic<bool> exited{false};
  std::thread relay([&] {
    for (;;) {
      int signal_number = 0;
      sigwait(&relayed, &signal_number);
      if (exited.load()) return;
      (void)(*process)->SignalGroup(SIGTERM);
    }
  });
  const ExitStatus status = (*process)->Wait();
  exited.store(true);
  pthread_kill(relay.native_handle(), SIGUSR2);
  relay.join();
  return status.signal != 0 ? 128 + status.signal : status.exit_code;
}

}  // namespace amt::worker
