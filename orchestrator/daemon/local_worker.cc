#include "orchestrator/daemon/local_worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/proc_file.h"

extern char** environ;

namespace amt::daemon {
namespace {

namespace fs = std::filesystem;

std::string PidFile(const std::string& data_dir) { return data_dir + "/worker.pid"; }

// The NUL-separated arguments of process `pid`, empty when it is gone.
std::vector<std::string> CommandLineOf(pid_t pid) {
  std::istringstream in(ReadProcFile("/proc/" + std::to_string(pid) + "/cmdline"));
  std::vector<std::string> argv;
  std::string arg;
  while (std::getline(in, arg, '\0')) argv.push_back(arg);
  return argv;
}

// A zombie (exited, not reaped) counts as gone.
bool IsRunning(pid_t pid) {
  const std::string stat = ReadProcFile("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return false;
  const auto paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

pid_t ReadPid(const std::string& file) {
  std::ifstream in(file);
  long pid = 0;
  if (!(in >> pid) || pid <= 1) return 0;
  return static_cast<pid_t>(pid);
}

absl::Status WritePid(const std::string& file, pid_t pid) {
  const std::string partial = file + ".partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    out << pid << "\n";
    if (!out.flush()) return absl::InternalError("cannot write " + partial);
  }
  std::error_code ec;
  fs::rename(partial, file, ec);
  if (ec) return absl::InternalError("cannot write " + file + ": " + ec.message());
  return absl::OkStatus();
}

// posix_spawn (amtd may be large; spawn does not copy it). The worker gets: /dev/null for stdin,
// worker.log for output, no other descriptor of amtd's (its listening sockets, the data-dir
// lock), an empty signal mask (amtd's main thread blocks SIGINT/SIGTERM for sigwait), and a
// session of its own: neither a Ctrl-C meant for amtd or `amt run` nor the end of amtd's
// terminal reaches it directly; amtd decides when it stops.
absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& argv, const std::string& log_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSID);
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, cargv[0], &actions, &attr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return absl::FailedPreconditionError("cannot start " + argv[0] + ": " + std::strerror(rc));
  }
  return pid;
}

}  // namespace

std::vector<std::string> LocalWorkerArgv(const LocalWorkerOptions& options) {
  std::ostringstream orphan;
  orphan << options.orphan_timeout_seconds;
  std::vector<std::string> argv = {options.binary,
                                   "--orchestrator",
                                   options.endpoint,
                                   "--slots",
                                   std::to_string(options.slots),
                                   "--work-dir",
                                   options.data_dir + "/jobs",
                                   "--worker-id",
                                   "local",
                                   "--orphan-timeout",
                                   orphan.str()};
  if (!options.credentials_file.empty()) {
    argv.insert(argv.end(), {"--credentials", options.credentials_file});
  }
  if (options.keep_job_dirs) argv.push_back("--keep-job-dirs");
  if (options.container_runtime != "auto") {
    argv.insert(argv.end(), {"--container-runtime", options.container_runtime});
  }
  if (options.container_resource_scale != 1.0) {
    std::ostringstream scale;
    scale << options.container_resource_scale;
    argv.insert(argv.end(), {"--container-resource-scale", scale.str()});
  }
  if (options.gpus != "all") argv.insert(argv.end(), {"--gpus", options.gpus});
  if (options.gpu_share != 1) {
    argv.insert(argv.end(), {"--gpu-share", std::to_string(options.gpu_share)});
  }
  return argv;
}

void TerminateAndWait(pid_t pid, bool is_child) {
  if (pid <= 0) return;
  if (is_child) {
    ::kill(pid, SIGTERM);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return;
  }
  // Not our child: a pidfd becomes readable when the process exits (Linux 5.3+); without one
  // (older kernels), poll /proc.
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  ::kill(pid, SIGTERM);
  if (pidfd >= 0) {
    pollfd fd{pidfd, POLLIN, 0};
    while (::poll(&fd, 1, -1) < 0 && errno == EINTR) {
    }
    ::close(pidfd);
    return;
  }
  while (IsRunning(pid)) ::usleep(10'000);
}

absl::StatusOr<std::unique_ptr<LocalWorker>> LocalWorker::StartOrAdopt(
    const LocalWorkerOptions& options) {
  const std::string pid_file = PidFile(options.data_dir);
  const std::vector<std::string> argv = LocalWorkerArgv(options);
  if (const pid_t old = ReadPid(pid_file); old > 0 && IsRunning(old)) {
    const std::vector<std::string> running = CommandLineOf(old);
    if (running == argv) {
      if (options.log) {
        options.log("found the local worker (pid " + std::to_string(old) +
                    ") still running; it keeps its jobs");
      }
      return std::unique_ptr<LocalWorker>(new LocalWorker(old, /*adopted=*/true, pid_file));
    }
    // A worker of an earlier amtd started otherwise (other slots, binary or socket), or a
    // process that reused the pid: only an amt-worker of this data dir is stopped.
    const std::string jobs_arg = options.data_dir + "/jobs";
    bool ours = false;
    for (size_t i = 0; i + 1 < running.size(); ++i) {
      if (running[i] == "--work-dir" && running[i + 1] == jobs_arg) ours = true;
    }
    if (ours) {
      if (options.log) {
        options.log("stopping the local worker of an earlier amtd (pid " + std::to_string(old) +
                    "), started with other settings");
      }
      TerminateAndWait(old, /*is_child=*/false);
    }
  }
  auto pid = Spawn(argv, options.data_dir + "/worker.log");
  if (!pid.ok()) return pid.status();
  if (absl::Status written = WritePid(pid_file, *pid); !written.ok()) {
    TerminateAndWait(*pid, /*is_child=*/true);
    return written;
  }
  return std::unique_ptr<LocalWorker>(new LocalWorker(*pid, /*adopted=*/false, pid_file));
}

LocalWorker::~LocalWorker() { Stop(); }

void LocalWorker::Stop() {
  if (pid_ <= 0) return;
  TerminateAndWait(pid_, /*is_child=*/!adopted_);
  pid_ = 0;
  std::error_code ec;
  fs::remove(pid_file_, ec);
}

}  // namespace amt::daemon
