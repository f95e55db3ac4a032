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
#include "worker/grpc_connector.h"
#include "worker/process_launcher.h"
#include "worker/process_tree.h"
#include "worker/srun_hosts.h"

int main(int argc, char** argv) {
  // Block the stop signals before any thread exists (gRPC starts some), so only the signal
  // thread below receives them. Children get an empty mask from the launcher.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  CLI::App app{"amt-worker: runs SageMaker-style training jobs for amtd"};
  std::string orchestrator;
  int slots = 1;
  std::string work_dir;
  std::string worker_id;
  app.add_option("--orchestrator", orchestrator,
                 "amtd's WorkerService address, HOST:PORT (required but with --exec-host)");
  app.add_option("--slots", slots, "training jobs run at once")->check(CLI::Range(1, 1024));
  int threads_per_job = -1;
  app.add_option("--threads-per-job", threads_per_job,
                 "OMP_NUM_THREADS, MKL_NUM_THREADS and OPENBLAS_NUM_THREADS of each job whose "
                 "Environment sets none of them, so that jobs side by side do not fight for the "
                 "same cores; default: the CPUs divided by --slots (at least 1); 0: not set")
      ->check(CLI::Range(-1, 1024));
  app.add_option("--work-dir", work_dir,
                 "where job directories (the emulated /opt/ml) go (required but with --exec-host)");
  app.add_option("--worker-id", worker_id, "stable worker id (default: HOST:PID)");
  bool exit_with_parent = false;
  app.add_flag("--exit-with-parent", exit_with_parent,
               "stop (as on SIGTERM) when the process that started this worker dies; amtd sets it "
               "for its local worker, so a killed amtd leaves no orphans");
  double orphan_timeout = 0;
  app.add_option("--orphan-timeout", orphan_timeout,
                 "stop the jobs and exit after this many seconds without amtd (0: never); amtd "
                 "sets it for its local worker, which outlives a killed amtd this long")
      ->check(CLI::NonNegativeNumber);
  bool keep_job_dirs = false;
  app.add_flag("--keep-job-dirs", keep_job_dirs,
               "keep every job's folder under --work-dir; by default the folder of a job that "
               "exited 0 is removed once its model.tar.gz and output are uploaded (a failed job's "
               "stays)");
  size_t keep_failed_job_dirs = 20;
  app.add_option("--keep-failed-job-dirs", keep_failed_job_dirs,
                 "failed jobs' folders kept for inspection, the newest this many (without "
                 "--keep-job-dirs): older ones are removed, so failing jobs do not fill the disk")
      ->capture_default_str();
  std::string host_names = "auto";
  app.add_option("--host-names", host_names,
                 "how the hosts of a multi-instance job (InstanceCount > 1: algo-1, algo-2, ...) "
                 "find each other: private gives each host's process its own /etc/hosts naming "
                 "every host's loopback address, and its name as host name (mount and UTS "
                 "namespaces: needs root); off leaves the names unresolved (trainers read the "
                 "addresses from AMT_HOST_ADDRESSES); auto is private as root, else off")
      ->check(CLI::IsMember({"auto", "private", "off"}));
  std::string credentials_file;
  std::string profile;
  app.add_option("--credentials", credentials_file,
                 "the AWS credentials file amtd was started with (amtd --credentials): the worker "
                 "proves it holds a key of it")
      ->check(CLI::ExistingFile);
  app.add_option("--profile", profile,
                 "the profile of that file whose key to use (default: amt-worker if the file has "
                 "it, else default, else its only key)");
  std::string network_lock_dir = "/tmp/amt-local-networks";
  app.add_option("--network-lock-dir", network_lock_dir,
                 "where the workers of this machine claim the loopback networks of their "
                 "multi-instance jobs (a lock file each), so two workers' jobs never share "
                 "addresses; empty: unique within this worker only")
      ->capture_default_str();
  std::string one_shot;
  app.add_option("--one-shot", one_shot,
                 "run only this job and exit once amtd has its exit: a StartJob, serialized and "
                 "base64-encoded (amtd --executor slurm writes it into each Slurm job's batch "
                 "script); its instances are the worker's slots");
  std::string srun_hosts;
  app.add_option("--srun-hosts", srun_hosts,
                 "inside a Slurm job (amtd --executor slurm sets it for multi-instance jobs): run "
                 "each host of a multi-instance job as a Slurm job step (srun), nodes: host k on "
                 "the allocation's k-th node, named by the node's address; tasks: where Slurm "
                 "places the steps, on a loopback network of the job's own (all on one node)")
      ->check(CLI::IsMember({"nodes", "tasks"}));
  std::string srun = "srun";
  app.add_option("--srun", srun, "the srun command --srun-hosts runs")->capture_default_str();
  std::string scontrol = "scontrol";
  app.add_option("--scontrol", scontrol,
                 "the scontrol command --srun-hosts nodes finds the nodes' addresses with")
      ->capture_default_str();
  std::string exec_host;
  app.add_option("--exec-host", exec_host,
                 "run one host of a multi-instance job from the launch file its one-shot worker "
                 "wrote (what --srun-hosts runs in each job step), and exit with its exit code");
  const pid_t parent = getppid();
  CLI11_PARSE(app, argc, argv);
  // amt-job-shim, installed beside amt-worker, holds each job's processes (job_shim.h): without
  // it a trainer's children outlive a worker killed with SIGKILL.
  std::error_code exe_error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", exe_error);
  std::string shim = (self.parent_path() / "amt-job-shim").string();
  if (exe_error || ::access(shim.c_str(), X_OK) != 0) {
    std::fprintf(stderr,
                 "amt-worker: %s is missing: a training job's child processes may outlive a "
                 "worker killed with SIGKILL\n",
                 shim.c_str());
    shim.clear();
  }
  if (!exec_host.empty()) {
    auto launcher = amt::worker::NewPosixProcessLauncher(shim);
    return amt::worker::RunHostLaunch(exec_host, *launcher);
  }
  if (orchestrator.empty() || work_dir.empty()) {
    std::fprintf(stderr, "amt-worker: --orchestrator and --work-dir are required (see --help)\n");
    return 2;
  }
  if (!srun_hosts.empty() && (one_shot.empty() || std::getenv("SLURM_JOB_ID") == nullptr)) {
    std::fprintf(stderr,
                 "amt-worker: --srun-hosts runs only in a Slurm job's one-shot worker (--one-shot, "
                 "SLURM_JOB_ID set)\n");
    return 2;
  }
  std::optional<amt::v1::StartJob> one_shot_job;
  if (!one_shot.empty()) {
    std::string bytes;
    amt::v1::StartJob start;
    if (!absl::Base64Unescape(one_shot, &bytes) || !start.ParseFromString(bytes) ||
        start.training_job_name().empty()) {
      std::fprintf(stderr, "amt-worker: --one-shot: not a base64-encoded StartJob\n");
      return 2;
    }
    slots = std::max(1, start.instance_count());
    one_shot_job = std::move(start);
  }
  if (exit_with_parent) {
    // SIGTERM on parent death is handled like any SIGTERM: jobs are stopped, then we exit.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) return 0;  // the parent died before prctl took effect
  }

  char host_buffer[256] = {};
  gethostname(host_buffer, sizeof(host_buffer) - 1);
  const std::string host = host_buffer;
  if (worker_id.empty()) worker_id = host + ":" + std::to_string(getpid());

  std::error_code ec;
  std::filesystem::create_directories(work_dir, ec);
  if (ec) {
    std::fprintf(stderr, "amt-worker: cannot create %s: %s\n", work_dir.c_str(),
                 ec.message().c_str());
    return 1;
  }

  amt::Mutex log_mu;  // one diagnostic line at a time, from the agent's and the jobs' threads
  auto diagnostics = [&log_mu](const std::string& message) {
    amt::MutexLock lock(&log_mu);
    std::fprintf(stderr, "amt-worker: %s\n", message.c_str());
  };

  amt::worker::AgentOptions options;
  options.worker_id = worker_id;
  {
    std::random_device random;  // 128 bits that tell this process from any other of its id
    char instance[33];
    std::snprintf(instance, sizeof(instance), "%08x%08x%08x%08x", random(), random(), random(),
                  random());
    options.instance_id = instance;
  }
  options.host = host;
  options.slots = slots;
  options.one_shot = one_shot_job;
  if (!network_lock_dir.empty()) {
    std::filesystem::create_directories(network_lock_dir, ec);
    ::chmod(network_lock_dir.c_str(), 01777);  // any user's workers, as /tmp
    options.runner.networks = std::make_shared<amt::worker::LoopbackNetworks>(network_lock_dir);
  }
  options.diagnostics = diagnostics;
  options.orphan_timeout = std::chrono::milliseconds(static_cast<int64_t>(orphan_timeout * 1000));
  options.runner.job_dir.work_dir = work_dir;
  options.runner.job_dir.num_cpus =
      static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.runner.job_dir.threads_per_job =
      threads_per_job >= 0 ? threads_per_job
                           : std::max(1, options.runner.job_dir.num_cpus / std::max(1, slots));
  options.runner.diagnostics = diagnostics;
  options.runner.keep_job_dirs = keep_job_dirs;
  // Set by the signal thread below; until it has run, the signal is pending (blocked everywhere).
  std::atomic<bool> stop_signal_received{false};
  options.runner.shutdown_pending = [&stop_signal_received] {
    if (stop_signal_received.load()) return true;
    sigset_t pending;
    sigpending(&pending);
    return sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1 ||
           stop_signal_received.load();
  };
  options.runner.private_hosts =
      host_names == "private" || (host_names == "auto" && geteuid() == 0);
  if (!keep_job_dirs) {
    options.runner.job_dir.failed =
        std::make_shared<amt::worker::FailedJobDirs>(keep_failed_job_dirs);
  }
  if (!keep_job_dirs && !one_shot_job.has_value()) {
    // Succeeded jobs' folders, emptied, become the next jobs' (JobDirPool says why).
    options.runner.job_dir.spares = std::make_shared<amt::worker::JobDirPool>(
        std::filesystem::absolute(work_dir, ec) / ".spare-folders", static_cast<size_t>(2 * slots));
  }
  for (const char* name : {"PATH", "HOME", "LANG"}) {
    if (const char* value = std::getenv(name)) options.runner.base_environment[name] = value;
  }

  // What a worker killed with SIGKILL left behind: its trainers died with it, but descendants
  // that left their process group did not.
  if (const int killed = amt::worker::KillOrphanedProcessTrees(); killed > 0) {
    diagnostics("killed " + std::to_string(killed) +
                " leftover process(es) of training jobs whose worker is gone");
  }
  amt::SystemClock clock;
  auto posix_launcher = amt::worker::NewPosixProcessLauncher(shim);
  std::unique_ptr<amt::worker::ProcessLauncher> srun_launcher;
  auto command_runner = amt::NewProcessCommandRunner();
  if (!srun_hosts.empty()) {
    amt::worker::SrunOptions srun_options;
    srun_options.srun = srun;
    srun_options.host_per_node = srun_hosts == "nodes";
    srun_options.worker_binary = self.string();
    for (char** variable = environ; *variable != nullptr; ++variable) {
      const std::string_view entry = *variable;
      const size_t equals = entry.find('=');
      if (equals == std::string_view::npos) continue;
      const std::string_view name = entry.substr(0, equals);
      if (name.starts_with("SLURM") || name == "PATH" || name == "HOME" || name == "LANG") {
        srun_options.environment.emplace(name, entry.substr(equals + 1));
      }
    }
    srun_launcher = amt::worker::NewSrunProcessLauncher(*posix_launcher, std::move(srun_options));
    if (srun_hosts == "nodes") {
      const char* node_list = std::getenv("SLURM_JOB_NODELIST");
      options.runner.host_addresses = [&command_runner, scontrol,
                                       node_list = std::string(node_list ? node_list : "")](int) {
        return amt::worker::SlurmNodeAddresses(*command_runner, scontrol, node_list);
      };
    }
  }
  amt::worker::ProcessLauncher* launcher =
      srun_launcher != nullptr ? srun_launcher.get() : posix_launcher.get();
  std::function<std::string()> credential;
  if (!credentials_file.empty()) {
    auto made =
        amt::auth::GrpcCredentialMaker(credentials_file, profile, amt::auth::kWorkerProfile);
    if (!made.ok()) {
      std::fprintf(stderr, "amt-worker: %s\n", std::string(made.status().message()).c_str());
      return 2;
    }
    credential = std::move(*made);
  }
  amt::worker::GrpcConnector connector(orchestrator, std::chrono::seconds(1), credential);
  amt::worker::Agent agent(options, connector, *launcher, clock);

  std::thread signal_thread([&] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    stop_signal_received.store(true);
    diagnostics(std::string("received ") + (signal_number == SIGINT ? "SIGINT" : "SIGTERM") +
                ", stopping jobs");
    agent.Shutdown();
  });
  diagnostics("worker " + worker_id + " with " + std::to_string(slots) + " slot(s), amtd at " +
              orchestrator);
  agent.Run();
  // Run() also returns by itself (the orphan timeout): wake the signal thread, which finds the
  // agent already shut down.
  pthread_kill(signal_thread.native_handle(), SIGTERM);
  signal_thread.join();
  return 0;
}
