// Process trees: every process a trainer starts, including those that leave its process group.
//
// The launcher puts AMT_PROCESS_TREE=<marker> into each trainer's environment. Children inherit
// it through fork, exec, setsid and double forks, so the trainer's whole tree can be found in
// /proc/<pid>/environ (which shows the environment a process was started with) after the group
// is gone, and killed: SageMaker ends every process of a container with its main process. A
// marker is "<owner pid>-<owner start time>-<n>": the owner is the worker that launched the
// trainer, so the trees of a worker that was killed with SIGKILL can be told from live ones.
// A descendant that execs with an emptied environment (env -i) is not found; nothing in
// /proc tells it apart from any other process without cgroups. A process in the middle of an
// execve shows an empty environ for a moment (its new memory has no environment yet, env_end 0
// in /proc/<pid>/stat): scans look at such a process again until its execve is done.
#ifndef AMT_WORKER_PROCESS_TREE_H_
#define AMT_WORKER_PROCESS_TREE_H_

#include <string>
#include <string_view>

namespace amt::worker {

inline constexpr std::string_view kProcessTreeVariable = "AMT_PROCESS_TREE";

// A marker no other tree on this host has: this process's pid and start time and a counter.
// Thread-safe.
std::string NewProcessTreeMarker();

// SIGKILLs every process but the caller whose environment holds AMT_PROCESS_TREE=`marker`, and
// scans /proc again until a scan finds none (a process can fork while it is scanned), for at
// most 20 scans. Only processes whose environment the caller may read (its own user's) are seen.
// Returns the number of signals sent.
int KillProcessTree(std::string_view marker);

// SIGKILLs every process whose marker names an owner that is no longer alive (no process with
// that pid and start time): what a worker ended by SIGKILL left behind. Returns the number of
// signals sent.
int KillOrphanedProcessTrees();

}  // namespace amt::worker

#endif  // AMT_WORKER_PROCESS_TREE_H_
