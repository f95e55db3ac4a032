// ProcessLauncher: how amt-worker starts a training process, the one place that touches
// real processes. A Process runs in its own process group, with stdin on /dev/null and stdout and
// stderr read line by line on a reader thread, and dies (SIGKILL) when the worker thread that
// launched it ends, so no trainer outlives its worker. The production implementation forks and
// execs; tests inject a fake (tests/unit/worker/fake_process_launcher.h).
#ifndef AMT_WORKER_PROCESS_LAUNCHER_H_
#define AMT_WORKER_PROCESS_LAUNCHER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace amt::worker {

// A folder of the machine seen inside a container (ContainerSpec).
struct ContainerMount {
  std::string source;  // absolute, on the machine
  std::string target;  // absolute, in the container
  bool read_only = false;
};

// A training job's container (container_launcher.h): what `<engine> run` is given besides the
// command (LaunchSpec::argv, which replaces the image's CMD) and the environment (LaunchSpec::env,
// the container's, not the engine client's).
struct ContainerSpec {
  std::string image;
  std::string name;  // the container's name, unique among the engine's containers
  // Replaces the image's ENTRYPOINT (`--entrypoint`, one word) when not empty.
  std::string entrypoint;
  std::vector<ContainerMount> mounts;
  std::map<std::string, std::string> labels;
  double cpus = 0;           // --cpus; 0: no limit
  int64_t memory_bytes = 0;  // --memory (and as much swap: none beyond it); 0: no limit
  // --network: "none" for EnableNetworkIsolation; "host" shares the machine's; else the
  // network of a multi-instance job's containers, on which each is found by `hostname`
  // (--hostname and --network-alias).
  std::string network = "none";
  std::string hostname;
  // The job's GPUs (nvidia-smi indices) for this host: Docker's `--gpus "device=0,1"` (NVIDIA's
  // container toolkit), Podman's `--device nvidia.com/gpu=N` each (CDI). Empty: none.
  std::vector<int> gpus;
};

// What to run. `argv[0]` is an executable path; without a '/', it is looked up in the worker's
// own PATH. `env` is the complete environment (nothing is inherited) but for one variable the
// production launcher adds, AMT_PROCESS_TREE (worker/process_tree.h). `cwd` must exist.
struct LaunchSpec {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::string cwd;
  // When `hosts_file` is set, the child gets mount and UTS namespaces of its own (this needs
  // CAP_SYS_ADMIN: amt-worker as root): `hosts_file` is bind-mounted over /etc/hosts and the
  // host name becomes `hostname` (when set). This is how the hosts of a multi-instance training
  // job find each other by their SageMaker names (algo-1, algo-2, ...) on one machine. A failure
  // there fails the launch ("<argv[0]>: cannot give the process its own /etc/hosts: <reason>").
  std::string hosts_file;
  std::string hostname;
  // Which host of a multi-instance training job this is: 1 for algo-1, ...; 0 for a job of one
  // host. The srun launcher (srun_hosts.h) places host k on the allocation's k-th node.
  int host = 0;
  // A signal the process starts with ignored (SIG_IGN survives exec; it may install a handler):
  // amt-worker --exec-host's trainer ignores SIGUSR2, which Slurm delivers to every process of the
  // job step when it carries a stop (srun_hosts.h). 0: every signal at its default.
  int ignored_signal = 0;
  // Set: run `argv` in this container instead (only a launcher made by NewContainerLauncher
  // takes it; `cwd` is then only where the engine's client runs).
  std::optional<ContainerSpec> container;
};

enum class OutputStream { kStdout, kStderr };

// Receives one output line, without its '\n' (a last line without '\n' is delivered at EOF;
// lines longer than 1 MiB arrive in 1 MiB pieces). Called on the process's reader thread, one
// call at a time, in arrival order per stream.
using LineCallback = std::function<void(OutputStream stream, std::string line)>;

struct ExitStatus {
  int exit_code = 0;  // the exit code when `signal` is 0; 128 + signal otherwise (shell style)
  int signal = 0;     // the terminating signal, 0 when the process exited normally
  // Why it ended, when the launcher knows more than the exit says (a container that the
  // kernel's OOM killer ended, or that its engine could not start: container_launcher.h); the
  // job's FailureReason when the trainer wrote no output/failure. Empty otherwise.
  std::string failure_reason;
};

class Process {
 public:
  virtual ~Process() = default;

  virtual int pid() const = 0;

  // Sends `signal` to every process in the child's process group; SIGKILL also goes to the
  // descendants that left the group (the production launcher finds them by their
  // AMT_PROCESS_TREE, worker/process_tree.h). A no-op returning OK once the group leader has
  // been reaped by Wait(). Thread-safe.
  virtual absl::Status SignalGroup(int signal) = 0;

  // Blocks until the child exits and every output line has been delivered to the LineCallback,
  // then returns how it ended. When the group leader exits, processes left in its group, and
  // descendants that left the group, are SIGKILLed (Docker ends a container with its main
  // process). Call at most once.
  virtual ExitStatus Wait() = 0;
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;

  // Starts `spec` in a new process group. Errors carry "<argv[0]>: <strerror>": NotFound when the
  // executable (or cwd) does not exist, PermissionDenied when it is not executable,
  // FailedPrecondition for a file the kernel cannot execute, InvalidArgument for an empty argv,
  // Internal otherwise. `on_line` must outlive the returned Process's Wait(). Call it from a
  // thread that lives as long as the process (the kernel's parent-death signal follows the
  // launching thread): JobRunner launches and waits on its job thread.
  virtual absl::StatusOr<std::unique_ptr<Process>> Launch(const LaunchSpec& spec,
                                                          LineCallback on_line) = 0;
};

// The production launcher: fork and exec, with a new process group, PR_SET_PDEATHSIG SIGKILL,
// no inherited descriptor, an empty signal mask and default signal dispositions in the child
// (the worker ignores SIGPIPE and blocks SIGTERM). With `shim` (amt-job-shim's path, job_shim.c)
// the group leader is the shim, which runs the trainer, holds every process it starts (a child
// subreaper) and kills them all when the trainer exits or when the worker dies, even by
// SIGKILL, which PR_SET_PDEATHSIG SIGKILL alone does for the direct child only. Process::pid()
// is then the shim's, and its exit is the trainer's.
std::unique_ptr<ProcessLauncher> NewPosixProcessLauncher(std::string shim = "");

// The signal amt-job-shim gets when its worker dies (a real-time one no trainer is sent).
int ShimParentDeathSignal();

}  // namespace amt::worker

#endif  // AMT_WORKER_PROCESS_LAUNCHER_H_
