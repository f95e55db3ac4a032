// amt-job-shim: the process that holds one training process and every process it starts, so
// that none outlives the job or its worker. The production launcher (process_launcher.h) runs it
// as the group leader in place of the trainer:
//
//   amt-job-shim <error fd> <parent-death signal> -- <argv of the trainer...>
//
// It makes itself a child subreaper (PR_SET_CHILD_SUBREAPER: descendants orphaned by the trainer
// are reparented to it, not to init), starts the trainer (same group, environment, folder and
// descriptors; exec errors written to <error fd> as the launcher reads them), and then:
//   - when the trainer exits, kills (SIGKILL) every descendant left, as Docker ends a container
//     with its main process, and exits as the trainer did (its exit code, or its signal);
//   - when its worker dies (the launcher set PR_SET_PDEATHSIG to <parent-death signal>; even a
//     kill -9 of amt-worker sends it), kills the trainer and every descendant, and exits;
//   - other signals (a stop's SIGTERM, sent to the whole group) are the trainer's: it lets them
//     pass.
// A trainer's grandchild (`sh -c "sleep 10; ..." &`) thus never survives its worker, so a job
// that amtd retries elsewhere never runs twice.
//
// Why C, and musl: it starts once per training job, on the path from a slot's end to its next
// trainer, so its own start is overhead every job pays. A glibc process, static or dynamic,
// starts by reading the cache sizes with some hundred `cpuid` instructions, and a hypervisor
// traps each: 0.93 ms to spawn a static glibc `int main() { return 0; }` on the 2-core VM we
// measure on, 0.09 ms for the same program linked statically against musl (bench/README.md, "End
// to end"). So worker/CMakeLists.txt builds this file with musl-gcc (Debian's musl-tools) where
// it is installed, and statically against glibc otherwise; plain C11 and POSIX keep both
// possible (Debian has no libstdc++ for musl).
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

// Sends SIGKILL to each child of this (single-threaded) process listed in
// /proc/self/task/<pid>/children, all read before the first is killed.
static void KillChildren(void) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%ld/children", (long)getpid());
  FILE* file = fopen(path, "re");
  if (file == NULL) return;
  pid_t* children = NULL;
  size_t count = 0;
  size_t capacity = 0;
  long pid = 0;
  while (fscanf(file, "%ld", &pid) == 1) {
    if (count == capacity) {
      const size_t grown = capacity == 0 ? 16 : 2 * capacity;
      pid_t* bigger = realloc(children, grown * sizeof *children);
      if (bigger == NULL) break;  // kill those read so far; the next round finds the rest
      children = bigger;
      capacity = grown;
    }
    children[count++] = (pid_t)pid;
  }
  fclose(file);
  for (size_t i = 0; i < count; ++i) kill(children[i], SIGKILL);
  free(children);
}

// SIGKILL to every child until none is left: a killed child's own children are reparented here
// (a subreaper) and are found on the next round. `trainer_status` receives the trainer's wait
// status if it is reaped here.
static void KillDescendants(pid_t trainer, int* trainer_status) {
  for (;;) {
    KillChildren();
    int status = 0;
    const pid_t reaped = waitpid(-1, &status, 0);
    if (reaped < 0) {
      if (errno == EINTR) continue;
      return;  // ECHILD: nothing is left
    }
    if (reaped == trainer) *trainer_status = status;
  }
}

// Ends this process as `status` (a wait status) says its trainer ended.
static _Noreturn void ExitAs(int status) {
  if (WIFSIGNALED(status)) {
    const int signal_number = WTERMSIG(status);
    const struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);  // the trainer dumped its own core, if any
    signal(signal_number, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, signal_number);
    sigprocmask(SIG_UNBLOCK, &only, NULL);
    raise(signal_number);
  }
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

// Writes what process_launcher.cc reads from the error pipe: its stage kExec (0), and `error`.
static void ReportExecError(int error_fd, int error) {
  const int report[2] = {0, error};
  ssize_t unused = write(error_fd, report, sizeof report);
  (void)unused;
}

int main(int argc, char** argv) {
  if (argc < 5 || strcmp(argv[3], "--") != 0) {
    fprintf(stderr,
            "usage: amt-job-shim ERROR_FD PARENT_DEATH_SIGNAL -- COMMAND [ARG...]\n"
            "(started by amt-worker for each training process)\n");
    return 2;
  }
  const int error_fd = atoi(argv[1]);
  const int parent_death = atoi(argv[2]);
  char** command = argv + 4;

  // Every signal waits for sigwaitinfo below; the trainer starts with the mask it had.
  sigset_t all;
  sigset_t before;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &before);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  fcntl(error_fd, F_SETFD, FD_CLOEXEC);  // the trainer's exec closes it: EOF to the launcher

  const pid_t trainer = fork();
  if (trainer < 0) {
    ReportExecError(error_fd, errno);
    return 127;
  }
  if (trainer == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // should the shim itself be killed
    sigprocmask(SIG_SETMASK, &before, NULL);
    if (strchr(command[0], '/') == NULL) {
      execvp(command[0], command);
    } else {
      execv(command[0], command);
    }
    ReportExecError(error_fd, errno);
    _exit(127);
  }
  close(error_fd);
  // The output pipes are the trainer's: they end when it and what it started close them.
  const int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd >= 0) {
    dup2(null_fd, 1);
    dup2(null_fd, 2);
    close(null_fd);
  }

  int trainer_status = 0;
  for (;;) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (sigwaitinfo(&all, &info) < 0) continue;
    if (info.si_signo == parent_death) {
      // The worker is gone: nobody will stop this job or read its output.
      KillDescendants(trainer, &trainer_status);
      _exit(137);
    }
    if (info.si_signo != SIGCHLD) continue;  // the group's signals are the trainer's
    int trainer_ended = 0;
    int status = 0;
    pid_t reaped;
    while ((reaped = waitpid(-1, &status, WNOHANG)) > 0) {
      if (reaped == trainer) {
        trainer_status = status;
        trainer_ended = 1;
      }
    }
    if (trainer_ended) {
      KillDescendants(trainer, &trainer_status);
      ExitAs(trainer_status);
    }
  }
}
