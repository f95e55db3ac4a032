// ContainerEngine: the container engine amt-worker runs training images with (Docker or
// Podman, through its command-line client: `docker` speaks to the daemon DOCKER_HOST names,
// `podman` runs containers itself). Every call is one short command (CommandRunner), so tests
// answer for the engine. Thread-safe: job threads call it at once.
//
// Containers this worker starts carry the label `amt-local.work-dir=<the worker's work dir>`,
// so a worker that starts removes what an earlier worker of the same folder left (one killed
// with SIGKILL leaves its containers running: the docker client dies, its container does not).
#ifndef AMT_WORKER_CONTAINER_ENGINE_H_
#define AMT_WORKER_CONTAINER_ENGINE_H_

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/command.h"

namespace amt::worker {

// The label of every container a worker starts; its value is the worker's work dir.
inline constexpr char kWorkDirLabel[] = "amt-local.work-dir";

// How a container ended, as the engine saw it.
struct ContainerState {
  int exit_code = 0;
  bool oom_killed = false;  // the kernel's OOM killer ended it (its memory limit)
};

class ContainerEngine {
 public:
  // `cli` is the client's path or name ("docker", "podman"); `name` says which engine it is.
  ContainerEngine(std::string name, std::string cli, CommandRunner& runner)
      : name_(std::move(name)), cli_(std::move(cli)), runner_(runner) {}

  const std::string& name() const { return name_; }
  const std::string& cli() const { return cli_; }

  // Whether the engine holds `image` (exact name or id; nothing is pulled). An error when the
  // engine does not answer.
  absl::StatusOr<bool> HasImage(const std::string& image) const;
  // How container `name` ended. NotFound when there is no such container.
  absl::StatusOr<ContainerState> Inspect(const std::string& name) const;
  // Sends `signal` to the container's main process.
  absl::Status Kill(const std::string& name, int signal) const;
  // Removes the container, running or not, with its anonymous volumes; OK when there is none.
  absl::Status Remove(const std::string& name) const;
  // Creates a bridge network of that name for a multi-instance job's containers (`internal`:
  // none of them reaches beyond it), labelled kWorkDirLabel=`work_dir`.
  absl::Status CreateNetwork(const std::string& name, bool internal,
                             const std::string& work_dir) const;
  // Removes the network; OK when there is none.
  absl::Status RemoveNetwork(const std::string& name) const;
  // Whether containers on network `name` find each other by name (the engine's DNS on it).
  // Docker's user-defined networks always have it: true without asking. Podman's have it on its
  // netavark network stack with aardvark-dns, not on CNI (which Debian's podman gets without its
  // recommended packages): `podman network inspect` says which. An error when it cannot tell.
  absl::StatusOr<bool> NetworkResolvesNames(const std::string& name) const;
  // Removes every container, then every network, labelled kWorkDirLabel=`work_dir`; how many
  // containers there were.
  absl::StatusOr<int> RemoveLeftovers(const std::string& work_dir) const;

 private:
  absl::StatusOr<CommandResult> Run(std::vector<std::string> args) const;

  const std::string name_;
  const std::string cli_;
  CommandRunner& runner_;
};

// A worker's engine (null: none) as its detection at start will find it (amt-worker detects in
// the background under --container-runtime auto: JobRunnerOptions::containers).
using ContainerEngineFuture = std::shared_future<std::shared_ptr<const ContainerEngine>>;

// A future that holds `engine` (null: none) already.
ContainerEngineFuture ReadyContainerEngine(std::shared_ptr<const ContainerEngine> engine);

// `mode`: "docker" or "podman" (that engine, an error when it does not answer), "auto" (Docker
// when its daemon answers, else Podman when it runs, else none: null), "none" (null). `cli`
// overrides the client's path (empty: the engine's name, looked up on PATH).
absl::StatusOr<std::unique_ptr<ContainerEngine>> DetectContainerEngine(const std::string& mode,
                                                                       const std::string& cli,
                                                                       CommandRunner& runner);

}  // namespace amt::worker

#endif  // AMT_WORKER_CONTAINER_ENGINE_H_
