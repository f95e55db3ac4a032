#include "worker/process_launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"
#include "worker/process_tree.h"

namespace amt::worker {
namespace {

// Lines longer than this are delivered in pieces, so a trainer printing megabytes without a
// newline cannot grow the worker without bound.
constexpr size_t kMaxLineBytes = 1 << 20;
// After the group leader exits and its group is killed, output still open belongs to a process
// that left the group (setsid); we stop waiting for it after this long.
constexpr auto kDrainAfterExit = std::chrono::seconds(2);

std::string ErrnoText(int err) { return std::generic_category().message(err); }

absl::Status SpawnError(const std::string& what, int err) {
  const std::string message = what + ": " + ErrnoText(err);
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    case ENOEXEC:
      return absl::FailedPreconditionError(message);
    default:
      return absl::InternalError(message);
  }
}

void CloseFd(int& fd) {
  if (fd >= 0) {
    ::close(fd);
    fd = -1;
  }
}

// Splits one stream's bytes into lines.
class LineSplitter {
 public:
  LineSplitter(OutputStream stream, const LineCallback* on_line)
      : stream_(stream), on_line_(on_line) {}

  void Append(const char* data, size_t size) {
    for (size_t i = 0; i < size; ++i) {
      if (data[i] == '\n') {
        (*on_line_)(stream_, std::move(pending_));
        pending_.clear();
      } else {
        pending_.push_back(data[i]);
        if (pending_.size() >= kMaxLineBytes) {
          (*on_line_)(stream_, std::move(pending_));
          pending_.clear();
        }
      }
    }
  }

  void Finish() {
    if (!pending_.empty()) {
      (*on_line_)(stream_, std::move(pending_));
      pending_.clear();
    }
  }

 private:
  OutputStream stream_;
  const LineCallback* on_line_;
  std::string pending_;
};

class PosixProcess final : public Process {
 public:
  PosixProcess(pid_t pid, std::string tree_marker, bool shim, int stdout_fd, int stderr_fd,
               int wake_read, int wake_write, LineCallback on_line)
      : pid_(pid),
        tree_marker_(std::move(tree_marker)),
        shim_(shim),
        wake_read_(wake_read),
        wake_write_(wake_write),
        on_line_(std::move(on_line)),
        reader_([this, stdout_fd, stderr_fd] { ReadOutput(stdout_fd, stderr_fd); }) {}

  ~PosixProcess() override {
    if (!waited_) {
      (void)SignalGroup(SIGKILL);
      (void)Wait();
    }
    CloseFd(wake_read_);
    CloseFd(wake_write_);
  }

  int pid() const override { return pid_; }

  absl::Status SignalGroup(int signal) override ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    if (reaped_) return absl::OkStatus();
    if (::kill(-pid_, signal) != 0 && errno != ESRCH) {
      return absl::InternalError("kill(-" + std::to_string(pid_) + "): " + ErrnoText(errno));
    }
    if (signal == SIGKILL) KillProcessTree(tree_marker_);
    return absl::OkStatus();
  }

  ExitStatus Wait() override ABSL_LOCKS_EXCLUDED(mu_) {
    waited_ = true;
    // WNOWAIT leaves the leader a zombie, so its pid (the group id) cannot be reused while we
    // kill what is left of the group.
    siginfo_t info{};
    while (::waitid(P_PID, pid_, &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
    }
    // amt-job-shim (a subreaper) ends by itself only once it has reaped every descendant, so
    // nothing of the tree can be left; killed by SIGKILL (a stop, the OOM killer; or passing on
    // its trainer's SIGKILL) it may not have, and the tree is searched for by its marker. The
    // search reads /proc: a few milliseconds at the end of every job (bench/README.md).
    const bool tree_reaped =
        shim_ &&
        (info.si_code == CLD_EXITED ||
         ((info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED) && info.si_status != SIGKILL));
    {
      MutexLock lock(&mu_);
      ::kill(-pid_, SIGKILL);
      // What left the group (setsid, double fork) goes too.
      if (!tree_reaped) KillProcessTree(tree_marker_);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      reaped_ = true;
      if (WIFSIGNALED(status)) {
        exit_.signal = WTERMSIG(status);
        exit_.exit_code = 128 + exit_.signal;
      } else {
        exit_.exit_code = WEXITSTATUS(status);
      }
    }
    const char byte = 1;
    while (::write(wake_write_, &byte, 1) < 0 && errno == EINTR) {
    }
    reader_.join();
    return exit_;
  }

 private:
  // The reader thread: polls both pipes and the wake pipe until both pipes reach EOF, or until
  // kDrainAfterExit after Wait() reaped the leader.
  void ReadOutput(int stdout_fd, int stderr_fd) {
    LineSplitter splitters[2] = {LineSplitter(OutputStream::kStdout, &on_line_),
                                 LineSplitter(OutputStream::kStderr, &on_line_)};
    int fds[2] = {stdout_fd, stderr_fd};
    bool exited = false;
    std::chrono::steady_clock::time_point deadline;
    char buffer[65536];
    while (fds[0] >= 0 || fds[1] >= 0) {
      int timeout_ms = -1;
      if (exited) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        timeout_ms = static_cast<int>(left.count());
      }
      pollfd polls[3] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}, {-1, POLLIN, 0}};
      if (!exited) polls[2].fd = wake_read_;
      const int ready = ::poll(polls, 3, timeout_ms);
      if (ready < 0) {
        if (errno == EINTR) continue;
        break;
      }
      for (int i = 0; i < 2; ++i) {
        if (fds[i] < 0 || polls[i].revents == 0) continue;
        const ssize_t n = ::read(fds[i], buffer, sizeof(buffer));
        if (n > 0) {
          splitters[i].Append(buffer, static_cast<size_t>(n));
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
          splitters[i].Finish();
          CloseFd(fds[i]);
        }
      }
      if (polls[2].revents != 0) {
        exited = true;
        deadline = std::chrono::steady_clock::now() + kDrainAfterExit;
      }
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i] >= 0) {
        splitters[i].Finish();
        CloseFd(fds[i]);
      }
    }
  }

  const pid_t pid_;
  const std::string tree_marker_;  // AMT_PROCESS_TREE of the child and its descendants
  const bool shim_;                // the group leader is amt-job-shim
  int wake_read_;
  int wake_write_;
  const LineCallback on_line_;
  Mutex mu_;
  bool reaped_ ABSL_GUARDED_BY(mu_) = false;
  bool waited_ = false;  // touched only by the thread calling Wait() (and the destructor)
  ExitStatus exit_;
  std::thread reader_;  // last member: starts after everything it reads is initialised
};

// Where the child failed, sent to the parent with errno.
enum ChildStage : int { kExec = 0, kPrivateHosts = 1 };

// Writes the stage and errno to the parent through `error_fd` and ends the child: exec never
// happened.
[[noreturn]] void FailInChild(int error_fd, ChildStage stage = kExec) {
  const int report[2] = {stage, errno};
  while (::write(error_fd, report, sizeof report) < 0 && errno == EINTR) {
  }
  ::_exit(127);
}

// Mount and UTS namespaces of the child's own, `hosts_file` over /etc/hosts, `hostname` (may be
// null) as its host name. Async-signal-safe system calls only.
void EnterPrivateHosts(const char* hosts_file, const char* hostname, int error_fd) {
  if (::unshare(CLONE_NEWNS | CLONE_NEWUTS) != 0) FailInChild(error_fd, kPrivateHosts);
  // Without this, the bind mount would propagate to the worker's mount namespace.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    FailInChild(error_fd, kPrivateHosts);
  }
  if (::mount(hosts_file, "/etc/hosts", nullptr, MS_BIND, nullptr) != 0) {
    FailInChild(error_fd, kPrivateHosts);
  }
  if (hostname != nullptr && ::sethostname(hostname, std::strlen(hostname)) != 0) {
    FailInChild(error_fd, kPrivateHosts);
  }
}

// The child between clone and exec: async-signal-safe calls only (the worker has other threads,
// and the child shares the memory of the worker thread that started it).
// Its own process group; SIGKILL when the worker thread that forked it dies (PR_SET_PDEATHSIG),
// so a trainer never outlives its worker and a job that amtd runs again never runs twice; stdin
// /dev/null, stdout and stderr the pipes, no other descriptor; default signal dispositions (but
// `ignored_signal`) and an empty mask; then exec (searching PATH for a bare name, as posix_spawnp).
// With a shim (`parent_death` not 0), `file` is amt-job-shim (job_shim.c), which starts the
// trainer itself: it learns of its worker's death by `parent_death` instead of dying of it, and
// the error pipe stays open across its exec (it hands it to the trainer's exec).
[[noreturn]] void RunChild(pid_t worker, const char* file, char* const argv[], char* const envp[],
                           const char* cwd, int out_fd, int err_fd, int error_fd, bool search_path,
                           const char* hosts_file, const char* hostname, int ignored_signal,
                           int parent_death) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, parent_death != 0 ? parent_death : SIGKILL);
  if (::getppid() != worker) ::_exit(127);  // the worker died before prctl took effect
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int signal = 1; signal < NSIG; ++signal) ::sigaction(signal, &default_action, nullptr);
  if (ignored_signal != 0) ::signal(ignored_signal, SIG_IGN);  // stays ignored across exec
  sigset_t empty_mask;
  sigemptyset(&empty_mask);
  ::sigprocmask(SIG_SETMASK, &empty_mask, nullptr);
  const int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0) {
    FailInChild(error_fd);
  }
  // Every descriptor from 3 up but the error pipe (close-on-exec: exec closes it).
  if (error_fd > 3) ::close_range(3, static_cast<unsigned>(error_fd) - 1, 0);
  ::close_range(static_cast<unsigned>(error_fd) + 1, ~0U, 0);
  if (hosts_file != nullptr) EnterPrivateHosts(hosts_file, hostname, error_fd);
  if (cwd != nullptr && ::chdir(cwd) != 0) FailInChild(error_fd);
  if (parent_death != 0 && ::fcntl(error_fd, F_SETFD, 0) != 0) FailInChild(error_fd);
  if (search_path) {
    ::execvpe(file, argv, envp);
  } else {
    ::execve(file, argv, envp);
  }
  FailInChild(error_fd);
}

// What the child needs, built before it starts: it may not allocate.
struct ChildArgs {
  pid_t worker;
  const char* file;
  char* const* argv;
  char* const* envp;
  const char* cwd;
  int out_fd;
  int err_fd;
  int error_fd;
  bool search_path;
  const char* hosts_file;  // null: the worker's mount and UTS namespaces
  const char* hostname;    // null: the worker's host name
  int ignored_signal;      // 0: none
  int parent_death;        // the shim's parent-death signal; 0: no shim
};

int ChildMain(void* arg) {
  const auto* a = static_cast<const ChildArgs*>(arg);
  RunChild(a->worker, a->file, a->argv, a->envp, a->cwd, a->out_fd, a->err_fd, a->error_fd,
           a->search_path, a->hosts_file, a->hostname, a->ignored_signal, a->parent_death);
}

// Starts the child the way glibc's posix_spawn does: clone(CLONE_VM | CLONE_VFORK) on a stack of
// its own, so the worker's page tables are not copied for a child that only sets itself up and
// execs (fork's page-table copy was about a sixth of the worker's CPU time per trivial job in
// bench/orchestrator/scale.py). The worker's thread waits until the child has exec'd or exited.
// All signals are blocked meanwhile so that no handler of the worker runs on the shared memory;
// the child resets every disposition before it unblocks them. posix_spawn itself cannot be used:
// it has no PR_SET_PDEATHSIG. Under AddressSanitizer or ThreadSanitizer, whose runtimes do not
// expect instrumented code on a shared address space, it is a plain fork.
pid_t StartChild(ChildArgs* args) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  const pid_t pid = ::fork();
  if (pid == 0) ChildMain(args);
  return pid;
#else
  constexpr size_t kStackBytes = 256 * 1024;  // execvpe builds candidate paths on the stack
  auto stack = std::make_unique<std::max_align_t[]>(kStackBytes / sizeof(std::max_align_t));
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  char* top = reinterpret_cast<char*>(stack.get()) + kStackBytes;  // stacks grow down
  const pid_t pid = ::clone(ChildMain, top, CLONE_VM | CLONE_VFORK | SIGCHLD, args);
  const int clone_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = clone_errno;
  return pid;
#endif
}

// The pipes of one launch (-1: closed): the child's standard output and error, the wake-up pipe
// of the process's reader, and the error pipe (the child's errno when exec fails; EOF when it
// succeeds).
struct LaunchPipes {
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  int wake[2] = {-1, -1};
  int error[2] = {-1, -1};

  void CloseAll() {
    for (int* p : {out, err, wake, error}) {
      CloseFd(p[0]);
      CloseFd(p[1]);
    }
  }
};

// Opens every pipe of `pipes`; none stays open on failure.
absl::Status OpenPipes(LaunchPipes& pipes) {
  for (int* p : {pipes.out, pipes.err, pipes.wake, pipes.error}) {
    if (::pipe2(p, O_CLOEXEC) != 0) {
      const int err = errno;
      pipes.CloseAll();
      return absl::InternalError("pipe2: " + ErrnoText(err));
    }
  }
  return absl::OkStatus();
}

// The child's command line and environment as exec takes them, built before it starts (it may
// not allocate): the strings, and the pointer arrays into them.
struct ChildCommand {
  std::string tree_marker;  // the process tree's AMT_PROCESS_TREE value
  std::vector<std::string> env_strings;
  std::vector<char*> envp;
  std::vector<std::string> argv_strings;
  std::vector<char*> argv;
  bool search_path = false;  // a bare name: exec searches PATH
  int parent_death = 0;      // the shim's parent-death signal; 0: no shim
};

// `spec`'s command, run by amt-job-shim when `shim` is set (amt-job-shim <error fd> <signal> --
// <argv>, and the shim runs argv), with the process tree's marker in its environment.
// `error_fd`: the child's end of the error pipe.
ChildCommand BuildChildCommand(const LaunchSpec& spec, const std::string& shim, int error_fd) {
  ChildCommand command;
  command.tree_marker = NewProcessTreeMarker();
  command.env_strings.reserve(spec.env.size() + 1);
  for (const auto& [key, value] : spec.env) {
    if (key != kProcessTreeVariable) command.env_strings.push_back(key + "=" + value);
  }
  command.env_strings.push_back(std::string(kProcessTreeVariable) + "=" + command.tree_marker);
  for (auto& s : command.env_strings) command.envp.push_back(s.data());
  command.envp.push_back(nullptr);
  command.parent_death = shim.empty() ? 0 : ShimParentDeathSignal();
  if (!shim.empty()) {
    command.argv_strings = {shim, std::to_string(error_fd), std::to_string(command.parent_death),
                            "--"};
  }
  command.argv_strings.insert(command.argv_strings.end(), spec.argv.begin(), spec.argv.end());
  for (auto& s : command.argv_strings) command.argv.push_back(s.data());
  command.argv.push_back(nullptr);
  command.search_path = command.argv_strings[0].find('/') == std::string::npos;
  return command;
}

// The parent's side once the child `pid` started: waits on the error pipe (closing its read end,
// `error_fd`) until the child has exec'd; when it could not, reaps it and returns why
// (SpawnError's codes, `program` naming it).
absl::Status AwaitExec(pid_t pid, int& error_fd, const std::string& program) {
  int report[2] = {kExec, 0};  // stage, errno
  ssize_t n;
  while ((n = ::read(error_fd, report, sizeof report)) < 0 && errno == EINTR) {
  }
  CloseFd(error_fd);
  if (n <= 0) return absl::OkStatus();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (report[0] == kPrivateHosts) {
    return SpawnError(program + ": cannot give the process its own /etc/hosts", report[1]);
  }
  return SpawnError(program, report[1]);
}

class PosixProcessLauncher final : public ProcessLauncher {
 public:
  explicit PosixProcessLauncher(std::string shim) : shim_(std::move(shim)) {}

  absl::StatusOr<std::unique_ptr<Process>> Launch(const LaunchSpec& spec,
                                                  LineCallback on_line) override {
    if (spec.argv.empty() || spec.argv[0].empty()) {
      return absl::InvalidArgumentError("empty command");
    }
    std::error_code ec;
    if (!spec.cwd.empty() && !std::filesystem::is_directory(spec.cwd, ec)) {
      return absl::NotFoundError("working directory " + spec.cwd + ": " + ErrnoText(ENOENT));
    }
    LaunchPipes pipes;
    if (absl::Status opened = OpenPipes(pipes); !opened.ok()) return opened;
    // Everything the child needs is built before it starts: it may not allocate.
    ChildCommand command = BuildChildCommand(spec, shim_, pipes.error[1]);
    const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();
    const char* hosts_file = spec.hosts_file.empty() ? nullptr : spec.hosts_file.c_str();
    const char* hostname =
        spec.hosts_file.empty() || spec.hostname.empty() ? nullptr : spec.hostname.c_str();
    ChildArgs child{
        ::getpid(),   command.argv[0],     command.argv.data(), command.envp.data(), cwd,
        pipes.out[1], pipes.err[1],        pipes.error[1],      command.search_path, hosts_file,
        hostname,     spec.ignored_signal, command.parent_death};
    const pid_t pid = StartChild(&child);
    const int fork_errno = errno;
    CloseFd(pipes.out[1]);
    CloseFd(pipes.err[1]);
    CloseFd(pipes.error[1]);
    if (pid < 0) {
      pipes.CloseAll();
      return absl::InternalError("clone: " + ErrnoText(fork_errno));
    }
    // Also a group of its own as seen from here, before any signal is sent to it.
    ::setpgid(pid, pid);
    if (absl::Status exec = AwaitExec(pid, pipes.error[0], spec.argv[0]); !exec.ok()) {
      pipes.CloseAll();
      return exec;
    }
    return std::unique_ptr<Process>(std::make_unique<PosixProcess>(
        pid, std::move(command.tree_marker), !shim_.empty(), pipes.out[0], pipes.err[0],
        pipes.wake[0], pipes.wake[1], std::move(on_line)));
  }

 private:
  const std::string shim_;  // amt-job-shim's path; empty: the trainer is the group leader
};

}  // namespace

int ShimParentDeathSignal() { return SIGRTMIN + 4; }

std::unique_ptr<ProcessLauncher> NewPosixProcessLauncher(std::string shim) {
  return std::make_unique<PosixProcessLauncher>(std::move(shim));
}

}  // namespace amt::worker
