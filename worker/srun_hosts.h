// The hosts of a multi-instance training job as Slurm job steps (amt-worker --srun-hosts): the
// one-shot worker of a Slurm job of N tasks runs each host's trainer with `srun --nodes=1
// --ntasks=1 --exact`, on the allocation's k-th node for host k (one node per instance, as
// SageMaker gives one instance per host) or wherever Slurm places the step (every host on one
// node). The step runs `amt-worker --exec-host <file>`, which reads the host's HostLaunch (the
// argv, environment, folder and /etc/hosts the local launcher would have used, written into the
// host's folder, which the nodes share) and runs the trainer as the local launcher does; its
// output comes back through srun to the worker, which ships it as that host's log.
//
// Signals: srun turns a SIGTERM it receives into cancelling the step (SIGKILL), so the stop
// SIGTERM is sent to srun as SIGUSR2, which srun passes on to the step unchanged. Slurm delivers
// a step's signals to every process of the step, so the trainer starts with SIGUSR2 ignored, and
// --exec-host sends it SIGTERM (to its process group) when SIGUSR2 comes; Slurm's own SIGTERM
// (the job cancelled, its time limit) reaches the trainer directly. SIGKILL goes to srun, and
// Slurm then kills the step.
#ifndef AMT_WORKER_SRUN_HOSTS_H_
#define AMT_WORKER_SRUN_HOSTS_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "amt/v1/worker.pb.h"
#include "common/command.h"
#include "worker/process_launcher.h"

namespace amt::worker {

struct SrunOptions {
  std::string srun = "srun";
  std::string worker_binary;  // the amt-worker each step runs (--exec-host)
  // Host k on the allocation's k-th node (srun --relative=k-1); false: where Slurm places it.
  bool host_per_node = true;
  // srun's own environment: the allocation's SLURM_* variables (which tell srun its job and
  // CPUs per task) and PATH. The trainer's environment travels in the HostLaunch.
  std::map<std::string, std::string> environment;
};

// Runs the processes of hosts (LaunchSpec::host > 0) as Slurm job steps; the rest through
// `inner`, which also starts srun. `inner` must outlive the launcher.
std::unique_ptr<ProcessLauncher> NewSrunProcessLauncher(ProcessLauncher& inner,
                                                        SrunOptions options);

// The srun command line for host `host` of a step running `worker_binary --exec-host <file>`.
std::vector<std::string> SrunArguments(const SrunOptions& options, int host,
                                       const std::string& launch_file);

// The IPv4 addresses of the nodes of `node_list` (a Slurm host list such as "n[1-2]"), in the
// list's order, which is the order srun --relative counts in: the names from `scontrol show
// hostnames`, each node's NodeAddr from `scontrol -o show node`, resolved.
absl::StatusOr<std::vector<std::string>> SlurmNodeAddresses(CommandRunner& runner,
                                                            const std::string& scontrol,
                                                            const std::string& node_list);

// The NodeName and NodeAddr of one line of `scontrol -o show node`.
std::optional<std::pair<std::string, std::string>> ParseNodeLine(std::string_view line);

// The name of this machine's network interface that holds IPv4 `address`; "" when none does.
std::string InterfaceWithAddress(const std::string& address);

// Points a host whose job folder says interface "lo" (the leader wrote it, not knowing this
// node) at `interface`: SM_NETWORK_INTERFACE_NAME, SM_RESOURCE_CONFIG and
// <cwd>/input/config/resourceconfig.json's network_interface_name.
absl::Status UseInterface(amt::v1::HostLaunch& launch, const std::string& interface);

// amt-worker --exec-host: runs the HostLaunch in `file` through `launcher` (on the interface
// that holds the host's address, from AMT_HOST_ADDRESSES: UseInterface), copying its output
// lines to this process's stdout and stderr, turning SIGUSR2 into SIGTERM to the trainer's
// process group (SIGTERM and SIGINT are left to Slurm, which gives them to the trainer too), and
// returns the exit code to exit with (the trainer's; 128 + N
// when signal N ended it; 127 when it could not be started, with the reason on stderr).
int RunHostLaunch(const std::string& file, ProcessLauncher& launcher);

}  // namespace amt::worker

#endif  // AMT_WORKER_SRUN_HOSTS_H_
