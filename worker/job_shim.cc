#include "worker/job_shim.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace amt::worker {
namespace {

// The children of this (single-threaded) process, from /proc/self/task/<pid>/children.
std::vector<pid_t> Children() {
  std::vector<pid_t> children;
  const std::string path = "/proc/self/task/" + std::to_string(::getpid()) + "/children";
  std::FILE* file = std::fopen(path.c_str(), "re");
  if (file == nullptr) return children;
  long pid = 0;
  while (std::fscanf(file, "%ld", &pid) == 1) children.push_back(static_cast<pid_t>(pid));
  std::fclose(file);
  return children;
}

// SIGKILL to every child until none is left: a killed child's own children are reparented here
// (a subreaper) and are found on the next round. `trainer_status` receives the trainer's wait
// status if it is reaped here.
void KillDescendants(pid_t trainer, int* trainer_status) {
  for (;;) {
    for (const pid_t child : Children()) ::kill(child, SIGKILL);
    int status = 0;
    const pid_t reaped = ::waitpid(-1, &status, 0);
    if (reaped < 0) {
      if (errno == EINTR) continue;
      return;  // ECHILD: nothing is left
    }
    if (reaped == trainer) *trainer_status = status;
  }
}

// Ends this process as `status` (a wait status) says its trainer ended.
[[noreturn]] void ExitAs(int status) {
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);  // the trainer dumped its own core, if any
    ::signal(signal, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, signal);
    ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
    ::raise(signal);
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

}  // namespace

int RunJobShim(int argc, char** argv) {
  if (argc < 5 || std::strcmp(argv[3], "--") != 0) {
    std::fprintf(stderr,
                 "usage: amt-job-shim ERROR_FD PARENT_DEATH_SIGNAL -- COMMAND [ARG...]\n"
                 "(started by amt-worker for each training process)\n");
    return 2;
  }
  const int error_fd = std::atoi(argv[1]);
  const int parent_death = std::atoi(argv[2]);
  char** command = argv + 4;

  // Every signal waits for sigwaitinfo below; the trainer starts with the mask it had.
  sigset_t all;
  sigset_t before;
  sigfillset(&all);
  ::sigprocmask(SIG_BLOCK, &all, &before);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  ::fcntl(error_fd, F_SETFD, FD_CLOEXEC);  // the trainer's exec closes it: EOF to the launcher

  const pid_t trainer = ::fork();
  if (trainer < 0) {
    const int report[2] = {0, errno};
    (void)!::write(error_fd, report, sizeof report);
    return 127;
  }
  if (trainer == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // should the shim itself be killed
    ::sigprocmask(SIG_SETMASK, &before, nullptr);
    if (std::strchr(command[0], '/') == nullptr) {
      ::execvp(command[0], command);
    } else {
      ::execv(command[0], command);
    }
    const int report[2] = {0, errno};  // process_launcher.cc's stage kExec, and why
    (void)!::write(error_fd, report, sizeof report);
    ::_exit(127);
  }
  ::close(error_fd);
  // The output pipes are the trainer's: they end when it and what it started close them.
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd >= 0) {
    ::dup2(null_fd, 1);
    ::dup2(null_fd, 2);
    ::close(null_fd);
  }

  int trainer_status = 0;
  for (;;) {
    siginfo_t info{};
    if (::sigwaitinfo(&all, &info) < 0) continue;
    if (info.si_signo == parent_death) {
      // The worker is gone: nobody will stop this job or read its output.
      KillDescendants(trainer, &trainer_status);
      ::_exit(137);
    }
    if (info.si_signo != SIGCHLD) continue;  // the group's signals are the trainer's
    bool trainer_ended = false;
    int status = 0;
    pid_t reaped;
    while ((reaped = ::waitpid(-1, &status, WNOHANG)) > 0) {
      if (reaped == trainer) {
        trainer_status = status;
        trainer_ended = true;
      }
    }
    if (trainer_ended) {
      KillDescendants(trainer, &trainer_status);
      ExitAs(trainer_status);
    }
  }
}

}  // namespace amt::worker
