// amt-worker: runs training jobs for amtd. Wiring only; the logic is in Agent.
//   amt-worker --orchestrator HOST:PORT --slots N --work-dir DIR [--worker-id ID]
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/strings/escaping.h"
#include "common/clock.h"
#include "common/command.h"
#include "common/grpc_credential.h"
#include "common/mutex.h"
#include "worker/agent.h"
#include "worker/container_engine.h"
#include "worker/container_launcher.h"
#include "worker/gpu_inventory.h"
#include "worker/grpc_connector.h"
#include "worker/process_launcher.h"
#include "worker/process_tree.h"
#include "worker/srun_hosts.h"

namespace {

namespace fs = std::filesystem;
using Diagnostics = std::function<void(const std::string&)>;

// What the command line says, as given (RunWorker turns it into the agent's options).
struct Flags {
  std::string orchestrator;
  int slots = 1;
  int threads_per_job = -1;
  std::string work_dir;
  std::string worker_id;
  bool exit_with_parent = false;
  double orphan_timeout = 0;
  bool keep_job_dirs = false;
  size_t keep_failed_job_dirs = 20;
  std::string host_names = "auto";
  std::string credentials_file;
  std::string profile;
  std::string network_lock_dir = "/tmp/amt-local-networks";
  std::string one_shot;
  std::string srun_hosts;
  std::string srun = "srun";
  std::string scontrol = "scontrol";
  std::string exec_host;
  std::string container_runtime = "auto";
  std::string container_cli;
  std::string container_network = "host";
  double container_resource_scale = 1.0;
  std::string gpus = "all";
  int gpu_share = 1;
  std::string nvidia_smi = "nvidia-smi";
};

// Where amtd is, what this worker runs at once and what becomes of its job folders.
void AddWorkerFlags(CLI::App& app, Flags& flags) {
  app.add_option("--orchestrator", flags.orchestrator,
                 "amtd's WorkerService address, HOST:PORT (required but with --exec-host)");
  app.add_option("--slots", flags.slots, "training jobs run at once")->check(CLI::Range(1, 1024));
  app.add_option("--threads-per-job", flags.threads_per_job,
                 "OMP_NUM_THREADS, MKL_NUM_THREADS and OPENBLAS_NUM_THREADS of each job whose "
                 "Environment sets none of them, so that jobs side by side do not fight for the "
                 "same cores; default: the CPUs divided by --slots (at least 1); 0: not set")
      ->check(CLI::Range(-1, 1024));
  app.add_option("--work-dir", flags.work_dir,
                 "where job directories (the emulated /opt/ml) go (required but with --exec-host)");
  app.add_option("--worker-id", flags.worker_id, "stable worker id (default: HOST:PID)");
  app.add_flag("--exit-with-parent", flags.exit_with_parent,
               "stop (as on SIGTERM) when the process that started this worker dies; amtd sets it "
               "for its local worker, so a killed amtd leaves no orphans");
  app.add_option("--orphan-timeout", flags.orphan_timeout,
                 "stop the jobs and exit after this many seconds without amtd (0: never); amtd "
                 "sets it for its local worker, which outlives a killed amtd this long")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--keep-job-dirs", flags.keep_job_dirs,
               "keep every job's folder under --work-dir; by default the folder of a job that "
               "exited 0 is removed once its model.tar.gz and output are uploaded (a failed job's "
               "stays)");
  app.add_option("--keep-failed-job-dirs", flags.keep_failed_job_dirs,
                 "failed jobs' folders kept for inspection, the newest this many (without "
                 "--keep-job-dirs): older ones are removed, so failing jobs do not fill the disk")
      ->capture_default_str();
}

// How a multi-instance job's hosts find each other, and the worker's credential.
void AddHostAndCredentialFlags(CLI::App& app, Flags& flags) {
  app.add_option("--host-names", flags.host_names,
                 "how the hosts of a multi-instance job (InstanceCount > 1: algo-1, algo-2, ...) "
                 "find each other: private gives each host's process its own /etc/hosts naming "
                 "every host's loopback address, and its name as host name (mount and UTS "
                 "namespaces: needs root); off leaves the names unresolved (trainers read the "
                 "addresses from AMT_HOST_ADDRESSES); auto is private as root, else off")
      ->check(CLI::IsMember({"auto", "private", "off"}));
  app.add_option("--credentials", flags.credentials_file,
                 "the AWS credentials file amtd was started with (amtd --credentials): the worker "
                 "proves it holds a key of it")
      ->check(CLI::ExistingFile);
  app.add_option("--profile", flags.profile,
                 "the profile of that file whose key to use (default: amt-worker if the file has "
                 "it, else default, else its only key)");
  app.add_option("--network-lock-dir", flags.network_lock_dir,
                 "where the workers of this machine claim the loopback networks of their "
                 "multi-instance jobs (a lock file each), so two workers' jobs never share "
                 "addresses; empty: unique within this worker only")
      ->capture_default_str();
}

// Training images as containers (container_engine.h, container_launcher.h).
void AddContainerFlags(CLI::App& app, Flags& flags) {
  app.add_option("--container-runtime", flags.container_runtime,
                 "run training images that the engine holds as containers: docker or podman "
                 "(that engine; the worker stops at start when it does not answer), auto "
                 "(Docker when its daemon answers (DOCKER_HOST), else Podman, else none; found in "
                 "the background while the worker runs executables) or none")
      ->check(CLI::IsMember({"auto", "docker", "podman", "none"}))
      ->capture_default_str();
  app.add_option("--container-cli", flags.container_cli,
                 "the engine's client (default: docker or podman on PATH)");
  app.add_option("--container-network", flags.container_network,
                 "--network of a job's container unless it sets EnableNetworkIsolation (then "
                 "none): host shares this machine's network, amtd's endpoints included")
      ->capture_default_str();
  app.add_option("--container-resource-scale", flags.container_resource_scale,
                 "multiplies the InstanceType's vCPUs and memory for a container's --cpus (at "
                 "most this machine's CPUs) and --memory; 0: no limits")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
}

// The GPUs it gives training jobs (gpu_inventory.h).
void AddGpuFlags(CLI::App& app, Flags& flags) {
  app.add_option("--gpus", flags.gpus,
                 "the GPUs training jobs get: all (every GPU nvidia-smi lists, within this "
                 "process's CUDA_VISIBLE_DEVICES when set), none, or indices such as 0,2. A "
                 "job of a GPU InstanceType gets its GPUs per instance as devices of its own")
      ->capture_default_str();
  app.add_option("--gpu-share", flags.gpu_share,
                 "how many training jobs may hold one GPU at once (small models on one GPU)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--nvidia-smi", flags.nvidia_smi, "the nvidia-smi that lists the GPUs")
      ->capture_default_str();
}

// A one-shot worker in a Slurm job (amtd --executor slurm) and the hosts it runs as job steps.
void AddSlurmFlags(CLI::App& app, Flags& flags) {
  app.add_option("--one-shot", flags.one_shot,
                 "run only this job and exit once amtd has its exit: a StartJob, serialized and "
                 "base64-encoded (amtd --executor slurm writes it into each Slurm job's batch "
                 "script); its instances are the worker's slots");
  app.add_option("--srun-hosts", flags.srun_hosts,
                 "inside a Slurm job (amtd --executor slurm sets it for multi-instance jobs): run "
                 "each host of a multi-instance job as a Slurm job step (srun), nodes: host k on "
                 "the allocation's k-th node, named by the node's address; tasks: where Slurm "
                 "places the steps, on a loopback network of the job's own (all on one node)")
      ->check(CLI::IsMember({"nodes", "tasks"}));
  app.add_option("--srun", flags.srun, "the srun command --srun-hosts runs")->capture_default_str();
  app.add_option("--scontrol", flags.scontrol,
                 "the scontrol command --srun-hosts nodes finds the nodes' addresses with")
      ->capture_default_str();
  app.add_option("--exec-host", flags.exec_host,
                 "run one host of a multi-instance job from the launch file its one-shot worker "
                 "wrote (what --srun-hosts runs in each job step), and exit with its exit code");
}

// Blocks the stop signals before any thread exists (gRPC starts some), so only the signal thread
// (RunAgent) receives them. Children get an empty mask from the launcher.
sigset_t BlockStopSignals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return stop_signals;
}

// This program's path, and amt-job-shim's beside it.
struct Binaries {
  fs::path self;
  // Empty when missing (said on stderr).
  std::string shim;
};

// amt-job-shim, installed beside amt-worker, holds each job's processes (job_shim.c): without it
// a trainer's children outlive a worker killed with SIGKILL.
Binaries FindBinaries() {
  Binaries binaries;
  std::error_code exe_error;
  binaries.self = fs::read_symlink("/proc/self/exe", exe_error);
  binaries.shim = (binaries.self.parent_path() / "amt-job-shim").string();
  if (exe_error || ::access(binaries.shim.c_str(), X_OK) != 0) {
    std::fprintf(stderr,
                 "amt-worker: %s is missing: a training job's child processes may outlive a "
                 "worker killed with SIGKILL\n",
                 binaries.shim.c_str());
    binaries.shim.clear();
  }
  return binaries;
}

// What CLI11 cannot check of a worker's flags (not an --exec-host), and the --one-shot job,
// whose instances become the slots. The exit code on a bad command line, else 0.
int CheckWorkerFlags(Flags& flags, std::optional<amt::v1::StartJob>& one_shot_job) {
  if (flags.orchestrator.empty() || flags.work_dir.empty()) {
    std::fprintf(stderr, "amt-worker: --orchestrator and --work-dir are required (see --help)\n");
    return 2;
  }
  if (!flags.srun_hosts.empty() &&
      (flags.one_shot.empty() || std::getenv("SLURM_JOB_ID") == nullptr)) {
    std::fprintf(stderr,
                 "amt-worker: --srun-hosts runs only in a Slurm job's one-shot worker (--one-shot, "
                 "SLURM_JOB_ID set)\n");
    return 2;
  }
  if (!flags.one_shot.empty()) {
    std::string bytes;
    amt::v1::StartJob start;
    if (!absl::Base64Unescape(flags.one_shot, &bytes) || !start.ParseFromString(bytes) ||
        start.training_job_name().empty()) {
      std::fprintf(stderr, "amt-worker: --one-shot: not a base64-encoded StartJob\n");
      return 2;
    }
    flags.slots = std::max(1, start.instance_count());
    one_shot_job = std::move(start);
  }
  return 0;
}

std::string MachineName() {
  char host_buffer[256] = {};
  gethostname(host_buffer, sizeof(host_buffer) - 1);
  return host_buffer;
}

// 128 random bits that tell this process from any other of its worker id.
std::string NewInstanceId() {
  std::random_device random;
  char instance[33];
  std::snprintf(instance, sizeof(instance), "%08x%08x%08x%08x", random(), random(), random(),
                random());
  return instance;
}

// The job runners' options: job folders, threads, hosts' names and the environment trainers
// inherit. `stop_signal_received` is set by the signal thread and must outlive the agent.
amt::worker::JobRunnerOptions RunnerOptionsFrom(const Flags& flags, bool one_shot,
                                                const Diagnostics& diagnostics,
                                                const std::atomic<bool>& stop_signal_received) {
  amt::worker::JobRunnerOptions runner;
  std::error_code ec;
  if (!flags.network_lock_dir.empty()) {
    fs::create_directories(flags.network_lock_dir, ec);
    ::chmod(flags.network_lock_dir.c_str(), 01777);  // any user's workers, as /tmp
    runner.networks = std::make_shared<amt::worker::LoopbackNetworks>(flags.network_lock_dir);
  }
  runner.job_dir.work_dir = flags.work_dir;
  runner.job_dir.num_cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  runner.job_dir.threads_per_job =
      flags.threads_per_job >= 0 ? flags.threads_per_job
                                 : std::max(1, runner.job_dir.num_cpus / std::max(1, flags.slots));
  runner.diagnostics = diagnostics;
  runner.keep_job_dirs = flags.keep_job_dirs;
  // Until the signal thread has run, a stop signal is pending (blocked everywhere).
  runner.shutdown_pending = [&stop_signal_received] {
    if (stop_signal_received.load()) return true;
    sigset_t pending;
    sigpending(&pending);
    return sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1 ||
           stop_signal_received.load();
  };
  runner.private_hosts =
      flags.host_names == "private" || (flags.host_names == "auto" && geteuid() == 0);
  if (!flags.keep_job_dirs) {
    runner.job_dir.failed =
        std::make_shared<amt::worker::FailedJobDirs>(flags.keep_failed_job_dirs);
  }
  if (!flags.keep_job_dirs && !one_shot) {
    // Succeeded jobs' folders, emptied, become the next jobs' (JobDirPool says why).
    runner.job_dir.spares = std::make_shared<amt::worker::JobDirPool>(
        fs::absolute(flags.work_dir, ec) / ".spare-folders", static_cast<size_t>(2 * flags.slots));
  }
  for (const char* name : {"PATH", "HOME", "LANG"}) {
    if (const char* value = std::getenv(name)) runner.base_environment[name] = value;
  }
  return runner;
}

// The launchers that start the jobs' processes: amt-job-shim's, and with --srun-hosts, srun's
// over it (whose host addresses, for --srun-hosts nodes, are the allocation's nodes').
struct Launchers {
  std::unique_ptr<amt::worker::ProcessLauncher> posix;
  std::unique_ptr<amt::worker::ProcessLauncher> srun;
  std::unique_ptr<amt::CommandRunner> commands;

  amt::worker::ProcessLauncher& jobs() const { return srun != nullptr ? *srun : *posix; }
};

// The variables a host's job step inherits: Slurm's, PATH, HOME and LANG.
std::map<std::string, std::string> SrunEnvironment() {
  std::map<std::string, std::string> environment;
  for (char** variable = environ; *variable != nullptr; ++variable) {
    const std::string_view entry = *variable;
    const size_t equals = entry.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view name = entry.substr(0, equals);
    if (name.starts_with("SLURM") || name == "PATH" || name == "HOME" || name == "LANG") {
      environment.emplace(name, entry.substr(equals + 1));
    }
  }
  return environment;
}

// Sets `runner`'s host_addresses for --srun-hosts nodes.
Launchers MakeLaunchers(const Flags& flags, const Binaries& binaries,
                        amt::worker::JobRunnerOptions& runner) {
  Launchers launchers;
  launchers.posix = amt::worker::NewPosixProcessLauncher(binaries.shim);
  launchers.commands = amt::NewProcessCommandRunner();
  if (flags.srun_hosts.empty()) return launchers;
  amt::worker::SrunOptions srun_options;
  srun_options.srun = flags.srun;
  srun_options.host_per_node = flags.srun_hosts == "nodes";
  srun_options.worker_binary = binaries.self.string();
  srun_options.environment = SrunEnvironment();
  launchers.srun = amt::worker::NewSrunProcessLauncher(*launchers.posix, std::move(srun_options));
  if (flags.srun_hosts == "nodes") {
    const char* node_list = std::getenv("SLURM_JOB_NODELIST");
    runner.host_addresses = [commands = launchers.commands.get(), scontrol = flags.scontrol,
                             node_list = std::string(node_list ? node_list : "")](int) {
      return amt::worker::SlurmNodeAddresses(*commands, scontrol, node_list);
    };
  }
  return launchers;
}

// Runs the agent until it shuts down: on SIGTERM or SIGINT (received by a thread of its own), or
// by itself (the orphan timeout, a one-shot job's end). The exit code.
int RunAgent(const amt::worker::AgentOptions& options, const Flags& flags,
             amt::worker::ProcessLauncher& launcher, const sigset_t& stop_signals,
             std::atomic<bool>& stop_signal_received, const Diagnostics& diagnostics) {
  std::function<std::string()> credential;
  if (!flags.credentials_file.empty()) {
    auto made = amt::auth::GrpcCredentialMaker(flags.credentials_file, flags.profile,
                                               amt::auth::kWorkerProfile);
    if (!made.ok()) {
      std::fprintf(stderr, "amt-worker: %s\n", std::string(made.status().message()).c_str());
      return 2;
    }
    credential = std::move(*made);
  }
  amt::SystemClock clock;
  amt::worker::GrpcConnector connector(flags.orchestrator, std::chrono::seconds(1), credential);
  amt::worker::Agent agent(options, connector, launcher, clock);

  std::thread signal_thread([&] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    stop_signal_received.store(true);
    diagnostics(std::string("received ") + (signal_number == SIGINT ? "SIGINT" : "SIGTERM") +
                ", stopping jobs");
    agent.Shutdown();
  });
  diagnostics("worker " + options.worker_id + " with " + std::to_string(options.slots) +
              " slot(s), amtd at " + flags.orchestrator);
  agent.Run();
  // Run() also returns by itself (the orphan timeout): wake the signal thread, which finds the
  // agent already shut down.
  pthread_kill(signal_thread.native_handle(), SIGTERM);
  signal_thread.join();
  return 0;
}

// The container engine (--container-runtime) and the containers an earlier worker of this
// work dir left. An engine asked for by name is detected before the worker registers: false when
// it does not answer. Under auto (the default) the detection runs in the background, so that the
// worker registers and runs executables at once (`docker version` and `podman version` take
// tens of milliseconds, more for a daemon that hangs): a job that names an image waits for it
// (JobRunnerOptions::containers). The caller waits for `runner.containers` before `commands`
// goes.
bool SetUpContainers(const Flags& flags, amt::CommandRunner& commands,
                     amt::worker::JobRunnerOptions& runner, const Diagnostics& diagnostics) {
  if (flags.container_runtime == "none") return true;
  std::error_code ec;
  const std::string work_dir = fs::absolute(flags.work_dir, ec).lexically_normal().string();
  runner.container.client_environment = amt::worker::EngineClientEnvironment();
  runner.container.network = flags.container_network;
  runner.container.resource_scale = flags.container_resource_scale;
  runner.container.machine_cpus = runner.job_dir.num_cpus;
  runner.container.work_dir = work_dir;
  // The engine, and what an earlier worker of this work dir left in it.
  auto detect =
      [&flags, &commands, diagnostics,
       work_dir]() -> absl::StatusOr<std::shared_ptr<const amt::worker::ContainerEngine>> {
    auto engine =
        amt::worker::DetectContainerEngine(flags.container_runtime, flags.container_cli, commands);
    if (!engine.ok() || *engine == nullptr) return engine;
    // Slurm's one-shot workers may share a work dir: they leave the leftovers alone.
    if (flags.one_shot.empty()) {
      const auto removed = (*engine)->RemoveLeftovers(work_dir);
      if (!removed.ok()) {
        diagnostics(std::string(removed.status().message()));
      } else if (*removed > 0) {
        diagnostics("removed " + std::to_string(*removed) +
                    " container(s) of training jobs whose worker is gone");
      }
    }
    diagnostics("training images that " + (*engine)->name() +
                " holds run as containers (--container-runtime " + flags.container_runtime + ")");
    return std::shared_ptr<const amt::worker::ContainerEngine>(std::move(*engine));
  };
  if (flags.container_runtime != "auto") {
    auto engine = detect();
    if (!engine.ok()) {
      std::fprintf(stderr, "amt-worker: --container-runtime %s: %s\n",
                   flags.container_runtime.c_str(), std::string(engine.status().message()).c_str());
      return false;
    }
    runner.containers = amt::worker::ReadyContainerEngine(*std::move(engine));
    return true;
  }
  runner.containers = std::async(std::launch::async, [detect]() {
                        auto engine = detect();
                        return engine.ok() ? *std::move(engine) : nullptr;
                      }).share();
  return true;
}

// The GPUs jobs get (--gpus, --gpu-share). False when --gpus names GPUs that cannot be had.
bool SetUpGpus(const Flags& flags, amt::CommandRunner& commands,
               amt::worker::JobRunnerOptions& runner, const Diagnostics& diagnostics) {
  std::vector<amt::worker::Gpu> detected;
  if (flags.gpus != "none") {
    auto found = amt::worker::DetectGpus(commands, flags.nvidia_smi);
    if (!found.ok()) {
      if (flags.gpus != "all") {
        std::fprintf(stderr, "amt-worker: --gpus %s: %s\n", flags.gpus.c_str(),
                     std::string(found.status().message()).c_str());
        return false;
      }
      diagnostics("no GPUs for training jobs: " + std::string(found.status().message()));
    } else {
      detected = std::move(*found);
    }
  }
  auto chosen = amt::worker::SelectGpus(detected, flags.gpus, std::getenv("CUDA_VISIBLE_DEVICES"));
  if (!chosen.ok()) {
    std::fprintf(stderr, "amt-worker: %s\n", std::string(chosen.status().message()).c_str());
    return false;
  }
  if (!chosen->empty()) {
    std::string said;
    for (const amt::worker::Gpu& gpu : *chosen) {
      said += (said.empty() ? "" : ", ") + std::to_string(gpu.index) + " (" + gpu.name + ", " +
              std::to_string(gpu.memory_mib) + " MiB)";
    }
    diagnostics("GPUs for training jobs: " + said + ", each for " +
                std::to_string(flags.gpu_share) + " job(s) at once (--gpus " + flags.gpus +
                ", --gpu-share " + std::to_string(flags.gpu_share) + ")");
  }
  runner.gpus = std::make_shared<amt::worker::GpuAllocator>(std::move(*chosen), flags.gpu_share);
  return true;
}

// A worker for amtd, from its checked flags. The exit code.
int RunWorker(const Flags& flags, const std::optional<amt::v1::StartJob>& one_shot_job,
              const Binaries& binaries, const sigset_t& stop_signals) {
  std::error_code ec;
  fs::create_directories(flags.work_dir, ec);
  if (ec) {
    std::fprintf(stderr, "amt-worker: cannot create %s: %s\n", flags.work_dir.c_str(),
                 ec.message().c_str());
    return 1;
  }
  amt::Mutex log_mu;  // one diagnostic line at a time, from the agent's and the jobs' threads
  const Diagnostics diagnostics = [&log_mu](const std::string& message) {
    amt::MutexLock lock(&log_mu);
    std::fprintf(stderr, "amt-worker: %s\n", message.c_str());
  };
  // Set by the signal thread (RunAgent); read by the job runners.
  std::atomic<bool> stop_signal_received{false};

  amt::worker::AgentOptions options;
  options.host = MachineName();
  options.worker_id =
      flags.worker_id.empty() ? options.host + ":" + std::to_string(getpid()) : flags.worker_id;
  options.instance_id = NewInstanceId();
  options.slots = flags.slots;
  options.one_shot = one_shot_job;
  options.diagnostics = diagnostics;
  options.orphan_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(flags.orphan_timeout * 1000));
  options.runner =
      RunnerOptionsFrom(flags, one_shot_job.has_value(), diagnostics, stop_signal_received);

  // What a worker killed with SIGKILL left behind: its trainers died with it, but descendants
  // that left their process group did not.
  if (const int killed = amt::worker::KillOrphanedProcessTrees(); killed > 0) {
    diagnostics("killed " + std::to_string(killed) +
                " leftover process(es) of training jobs whose worker is gone");
  }
  const Launchers launchers = MakeLaunchers(flags, binaries, options.runner);
  if (!SetUpContainers(flags, *launchers.commands, options.runner, diagnostics)) return 1;
  // The container engine's detection uses launchers.commands: it ends before they go.
  struct AwaitDetection {
    const amt::worker::ContainerEngineFuture& engine;
    ~AwaitDetection() {
      if (engine.valid()) engine.wait();
    }
  } await_detection{options.runner.containers};
  if (!SetUpGpus(flags, *launchers.commands, options.runner, diagnostics)) return 1;
  return RunAgent(options, flags, launchers.jobs(), stop_signals, stop_signal_received,
                  diagnostics);
}

}  // namespace

int main(int argc, char** argv) {
  const sigset_t stop_signals = BlockStopSignals();
  signal(SIGPIPE, SIG_IGN);
  Flags flags;
  CLI::App app{"amt-worker: runs SageMaker-style training jobs for amtd"};
  AddWorkerFlags(app, flags);
  AddHostAndCredentialFlags(app, flags);
  AddSlurmFlags(app, flags);
  AddContainerFlags(app, flags);
  AddGpuFlags(app, flags);
  const pid_t parent = getppid();
  CLI11_PARSE(app, argc, argv);
  const Binaries binaries = FindBinaries();
  if (!flags.exec_host.empty()) {
    auto launcher = amt::worker::NewPosixProcessLauncher(binaries.shim);
    return amt::worker::RunHostLaunch(flags.exec_host, *launcher);
  }
  std::optional<amt::v1::StartJob> one_shot_job;
  if (const int code = CheckWorkerFlags(flags, one_shot_job); code != 0) return code;
  if (flags.exit_with_parent) {
    // SIGTERM on parent death is handled like any SIGTERM: jobs are stopped, then we exit.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) return 0;  // the parent died before prctl took effect
  }
  return RunWorker(flags, one_shot_job, binaries, stop_signals);
}
