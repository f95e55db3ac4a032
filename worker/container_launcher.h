// The container launcher: runs a LaunchSpec that has a ContainerSpec as a container of a
// ContainerEngine, through another launcher (the production one, under amt-job-shim): the
// process it starts is the engine's client, `<engine> run ... <image> <argv...>`, attached,
// so the trainer's output lines are the client's and its exit code the client's exit code.
// Specs without a container go to the other launcher unchanged.
//
// What a container Process does differently:
//   - SignalGroup(N) is `<engine> kill --signal=N <name>`, on a thread of its own (the caller may
//     hold a lock; the engine may be slow). A SIGKILL that the engine cannot deliver (the
//     container not created yet, the daemon gone) kills the client instead.
//   - Wait() waits for the client, then reads the container's exit code and whether the OOM
//     killer ended it (ExitStatus::failure_reason says so), and removes the container with its
//     anonymous volumes: no container outlives its job. An exit code 128 + N of the container
//     is taken as signal N (Docker's convention). A container that never started (the client
//     exits 125: a bad mount, a name in use, no such image) gets the client's last error line
//     as its failure reason.
#ifndef AMT_WORKER_CONTAINER_LAUNCHER_H_
#define AMT_WORKER_CONTAINER_LAUNCHER_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "worker/container_engine.h"
#include "worker/process_launcher.h"

namespace amt::worker {

// The engine client's own variables (PATH, HOME, DOCKER_HOST, ...): the client runs with them,
// whatever the job's environment says; the container gets the job's.
std::map<std::string, std::string> EngineClientEnvironment();

// The client's command line for `spec` (spec.container set): `<cli> run --name ... --label ...
// --mount ... [--cpus N] [--memory B --memory-swap B] --network N --pull never
// [--entrypoint E] -e NAME ... <image> <argv...>`. The container's variables are passed by name
// (`-e NAME`, the value from the client's environment, so it is not on the command line), but
// for those the client needs for itself (`client_environment`'s names), passed as
// `-e NAME=VALUE`. Pure.
std::vector<std::string> ContainerRunArgv(
    const std::string& cli, const LaunchSpec& spec,
    const std::map<std::string, std::string>& client_environment);

// `engine` and `inner` must outlive the launcher and its processes. `client_environment`: as
// EngineClientEnvironment() says (a seam for tests).
std::unique_ptr<ProcessLauncher> NewContainerLauncher(
    const ContainerEngine& engine, ProcessLauncher& inner,
    std::map<std::string, std::string> client_environment);

}  // namespace amt::worker

#endif  // AMT_WORKER_CONTAINER_LAUNCHER_H_
