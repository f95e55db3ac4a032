// The container engine's commands and the container launcher, against an engine that the test
// answers for (fake_container_engine.h) and fake processes (the engine's client). The real
// engine runs in tests/integration/containers_test.py.
#include <signal.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/status_matchers.h"
#include "tests/unit/worker/fake_container_engine.h"
#include "tests/unit/worker/fake_process_launcher.h"
#include "worker/container_engine.h"
#include "worker/container_launcher.h"

namespace amt::worker {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;
using ::testing::Contains;
using ::testing::ElementsAre;
using testing::FakeEngineCommands;
using testing::FakeProcessLauncher;
using ::testing::HasSubstr;
using ::testing::IsNull;
using ::testing::NotNull;

using Argv = std::vector<std::string>;

// The value, or nullopt for an error.
template <typename T>
std::optional<T> ValueOf(const absl::StatusOr<T>& result) {
  return result.ok() ? std::optional<T>(*result) : std::nullopt;
}

TEST(DetectContainerEngine, AutoTakesDockerWhenItsDaemonAnswers) {
  FakeEngineCommands commands;
  auto engine = DetectContainerEngine("auto", "", commands);
  ASSERT_THAT(engine.status(), IsOk());
  ASSERT_THAT(*engine, NotNull());
  EXPECT_EQ((*engine)->name(), "docker");
  EXPECT_EQ((*engine)->cli(), "docker");
  EXPECT_THAT(commands.commands(),
              ElementsAre(Argv{"docker", "version", "--format", "{{.Server.Version}}"}));
}

TEST(DetectContainerEngine, AutoIsNoneWhenNoEngineAnswersAndANamedOneMustAnswer) {
  FakeEngineCommands commands;
  commands.SetDown(true);
  auto automatic = DetectContainerEngine("auto", "", commands);
  ASSERT_THAT(automatic.status(), IsOk());
  EXPECT_THAT(*automatic, IsNull());
  EXPECT_EQ(commands.commands().size(), 2u);  // docker, then podman
  EXPECT_THAT(DetectContainerEngine("docker", "/opt/docker", commands).status(),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("docker does not answer")));
  EXPECT_EQ(commands.commands().back().front(), "/opt/docker");
  auto none = DetectContainerEngine("none", "", commands);
  ASSERT_THAT(none.status(), IsOk());
  EXPECT_THAT(*none, IsNull());
  EXPECT_THAT(DetectContainerEngine("lxc", "", commands).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ContainerEngine, TellsAMissingImageFromAnEngineThatDoesNotAnswer) {
  FakeEngineCommands commands;
  commands.AddImage("my-algo:1");
  const ContainerEngine engine("docker", "docker", commands);
  EXPECT_EQ(ValueOf(engine.HasImage("my-algo:1")), true);
  EXPECT_EQ(ValueOf(engine.HasImage("other:1")), false);
  commands.SetDown(true);
  EXPECT_THAT(engine.HasImage("my-algo:1").status(),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("Cannot connect")));
}

// Podman says whether a network has DNS (netavark with aardvark-dns) or not (CNI); Docker's
// user-defined networks always have it, so Docker is not asked.
TEST(ContainerEngine, TellsWhetherANetworksContainersFindEachOtherByName) {
  FakeEngineCommands commands;
  const ContainerEngine podman("podman", "podman", commands);
  EXPECT_EQ(ValueOf(podman.NetworkResolvesNames("net1")), true);
  EXPECT_THAT(commands.commands().back(),
              ElementsAre("podman", "network", "inspect", "--format", "{{.DNSEnabled}}", "net1"));
  commands.SetNetworkDns(false);
  EXPECT_EQ(ValueOf(podman.NetworkResolvesNames("net1")), false);
  commands.SetDown(true);
  EXPECT_THAT(podman.NetworkResolvesNames("net1").status(),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("network inspect net1")));
  const size_t asked = commands.commands().size();
  const ContainerEngine docker("docker", "docker", commands);
  EXPECT_EQ(ValueOf(docker.NetworkResolvesNames("net1")), true);
  EXPECT_EQ(commands.commands().size(), asked);
}

TEST(ContainerEngine, ReadsAnEndedContainersStateAndRemovesLeftoversByLabel) {
  FakeEngineCommands commands;
  commands.SetState("c1", "137 true");
  const ContainerEngine engine("podman", "podman", commands);
  auto state = engine.Inspect("c1");
  ASSERT_THAT(state.status(), IsOk());
  EXPECT_EQ(state->exit_code, 137);
  EXPECT_TRUE(state->oom_killed);
  EXPECT_THAT(engine.Inspect("c2").status(), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(ValueOf(engine.RemoveLeftovers("/w")), 0);
  commands.SetLeftovers("aaa\nbbb\n");
  commands.SetLeftoverNetworks("net1\n");
  EXPECT_EQ(ValueOf(engine.RemoveLeftovers("/w")), 2);
  const auto sent = commands.commands();
  EXPECT_THAT(sent, Contains(Argv{"podman", "ps", "--all", "--quiet", "--no-trunc", "--filter",
                                  "label=amt-local.work-dir=/w"}));
  ASSERT_GE(sent.size(), 3u);
  // The containers first, then the networks they were on.
  EXPECT_THAT(sent[sent.size() - 3],
              ElementsAre("podman", "rm", "--force", "--volumes", "aaa", "bbb"));
  EXPECT_THAT(sent[sent.size() - 2], ElementsAre("podman", "network", "ls", "--quiet", "--filter",
                                                 "label=amt-local.work-dir=/w"));
  EXPECT_THAT(sent.back(), ElementsAre("podman", "network", "rm", "net1"));
  EXPECT_THAT(engine.Remove("gone"), IsOk());
}

LaunchSpec ContainerJob() {
  LaunchSpec spec;
  spec.argv = {"train"};
  spec.env = {{"SM_MODEL_DIR", "/opt/ml/model"}, {"HOME", "/root-of-the-job"}};
  spec.cwd = "/work/job-1";
  ContainerSpec c;
  c.image = "123456789012.dkr.ecr.us-east-1.amazonaws.com/my-algo:1";
  c.name = "amt-job-1-1-algo-1";
  c.labels = {{"amt-local.work-dir", "/work"}};
  c.mounts = {{"/work/job-1/input/config", "/opt/ml/input/config", true},
              {"/s3/bucket/a,b", "/opt/ml/input/data/train", true},
              {"/work/job-1/model", "/opt/ml/model", false}};
  c.cpus = 1.5;
  c.memory_bytes = int64_t{8} << 30;
  c.network = "none";
  c.entrypoint = "python3";
  spec.container = c;
  return spec;
}

TEST(ContainerRunArgv, SaysTheContractAndPassesTheEnvironmentByName) {
  const Argv argv =
      ContainerRunArgv("docker", ContainerJob(), {{"HOME", "/root"}, {"PATH", "/usr/bin"}});
  EXPECT_THAT(argv,
              ElementsAre("docker", "run", "--name", "amt-job-1-1-algo-1", "--label",
                          "amt-local.work-dir=/work", "--mount",
                          "type=bind,source=/work/job-1/input/config,"
                          "target=/opt/ml/input/config,readonly",
                          "--mount",
                          "type=bind,\"source=/s3/bucket/a,b\","
                          "target=/opt/ml/input/data/train,readonly",
                          "--mount", "type=bind,source=/work/job-1/model,target=/opt/ml/model",
                          "--cpus", "1.5", "--memory", "8589934592", "--memory-swap", "8589934592",
                          "--network", "none", "--pull", "never", "--entrypoint", "python3", "-e",
                          "HOME=/root-of-the-job", "-e", "SM_MODEL_DIR",
                          "123456789012.dkr.ecr.us-east-1.amazonaws.com/my-algo:1", "train"));
}

TEST(ContainerRunArgv, GivesTheJobsGpusAsEachEngineTakesThem) {
  LaunchSpec spec = ContainerJob();
  spec.container->gpus = {1, 3};
  const Argv docker = ContainerRunArgv("/usr/bin/docker", spec, {});
  // One CSV field for Docker's --gpus: quoted, or its comma would split it.
  EXPECT_THAT(docker, ::testing::Contains("\"device=1,3\""));
  EXPECT_EQ(*(std::find(docker.begin(), docker.end(), "\"device=1,3\"") - 1), "--gpus");
  const Argv podman = ContainerRunArgv("/usr/bin/podman", spec, {});
  const std::string joined = absl::StrJoin(podman, " ");
  EXPECT_THAT(joined, ::testing::HasSubstr(
                          "--device nvidia.com/gpu=1 --device nvidia.com/gpu=3 --pull never"));
  EXPECT_THAT(podman, ::testing::Not(::testing::Contains("--gpus")));
}

TEST(ContainerLauncher, RunsTheClientWithTheJobsEnvironmentButItsOwnVariables) {
  FakeEngineCommands commands;
  const ContainerEngine engine("docker", "/usr/bin/docker", commands);
  FakeProcessLauncher inner;
  auto launcher = NewContainerLauncher(engine, inner, {{"HOME", "/root"}, {"PATH", "/usr/bin"}});
  auto process = launcher->Launch(ContainerJob(), [](OutputStream, std::string) {});
  ASSERT_THAT(process.status(), IsOk());
  const LaunchSpec client = inner.launch_attempts().at(0);
  EXPECT_FALSE(client.container.has_value());
  EXPECT_EQ(client.argv.at(0), "/usr/bin/docker");
  EXPECT_EQ(client.argv.at(1), "run");
  EXPECT_EQ(client.cwd, "/work/job-1");
  EXPECT_EQ(client.env,
            (std::map<std::string, std::string>{
                {"HOME", "/root"}, {"PATH", "/usr/bin"}, {"SM_MODEL_DIR", "/opt/ml/model"}}));
  // A container of that name that a killed worker left is removed first.
  EXPECT_THAT(commands.commands().at(0),
              ElementsAre("/usr/bin/docker", "rm", "--force", "--volumes", "amt-job-1-1-algo-1"));
  inner.WaitForProcess(0)->Exit(0);
  (*process)->Wait();
}

// A container launcher over a fake engine ("docker") and fake processes (its client).
class ContainerLauncherTest : public ::testing::Test {
 protected:
  // Launches `spec` (the container job by default); fails the test when it cannot.
  std::unique_ptr<Process> Launch(const LaunchSpec& spec = ContainerJob()) {
    auto launched = launcher_->Launch(spec, [](OutputStream, std::string) {});
    EXPECT_THAT(launched.status(), IsOk());
    return launched.ok() ? std::move(*launched) : nullptr;
  }

  FakeEngineCommands commands_;
  const ContainerEngine engine_{"docker", "docker", commands_};
  FakeProcessLauncher inner_;
  std::unique_ptr<ProcessLauncher> launcher_ = NewContainerLauncher(engine_, inner_, {});
};

TEST_F(ContainerLauncherTest, SignalsTheContainerThenReportsItsStateAndRemovesIt) {
  const auto process = Launch();
  ASSERT_NE(process, nullptr);
  ASSERT_THAT(process->SignalGroup(SIGTERM), IsOk());
  commands_.SetState("amt-job-1-1-algo-1", "137 true");
  inner_.WaitForProcess(0)->Exit(137);
  const ExitStatus status = process->Wait();
  EXPECT_EQ(status.exit_code, 137);
  EXPECT_EQ(status.signal, SIGKILL);
  EXPECT_THAT(status.failure_reason, HasSubstr("OutOfMemoryError"));
  const auto sent = commands_.commands();
  EXPECT_THAT(sent, Contains(Argv{"docker", "kill", "--signal=15", "amt-job-1-1-algo-1"}));
  EXPECT_THAT(sent.back(),
              ElementsAre("docker", "rm", "--force", "--volumes", "amt-job-1-1-algo-1"));
  EXPECT_TRUE(inner_.WaitForProcess(0)->signals().empty());  // the engine delivers, not the client
  // Once waited for, a signal is a no-op.
  EXPECT_THAT(process->SignalGroup(SIGKILL), IsOk());
  EXPECT_EQ(commands_.commands().size(), sent.size());
}

TEST_F(ContainerLauncherTest, AContainerThatNeverStartedFailsWithTheEnginesError) {
  const auto process = Launch();
  ASSERT_NE(process, nullptr);
  auto client = inner_.WaitForProcess(0);
  client->EmitLine(OutputStream::kStderr,
                   "docker: Error response from daemon: invalid mount config for type \"bind\".");
  client->Exit(125);
  const ExitStatus status = process->Wait();
  EXPECT_EQ(status.exit_code, 125);
  EXPECT_EQ(status.failure_reason,
            "docker: Error response from daemon: invalid mount config for type \"bind\".");
}

TEST_F(ContainerLauncherTest, ASigkillTheEngineCannotDeliverKillsTheClient) {
  const auto process = Launch();
  ASSERT_NE(process, nullptr);
  commands_.SetDown(true);
  ASSERT_THAT(process->SignalGroup(SIGKILL), IsOk());
  auto client = inner_.WaitForProcess(0);
  ASSERT_TRUE(client->WaitForSignals(1));
  EXPECT_THAT(client->signals(), ElementsAre(SIGKILL));
  EXPECT_EQ(process->Wait().signal, SIGKILL);
}

TEST_F(ContainerLauncherTest, PassesSpecsWithoutAContainerOn) {
  LaunchSpec spec;
  spec.argv = {"/bin/true"};
  const auto process = Launch(spec);
  ASSERT_NE(process, nullptr);
  EXPECT_EQ(inner_.launch_attempts().at(0).argv, Argv{"/bin/true"});
  EXPECT_TRUE(commands_.commands().empty());
  inner_.WaitForProcess(0)->Exit(0);
  EXPECT_EQ(process->Wait().exit_code, 0);
}

}  // namespace
}  // namespace amt::worker
