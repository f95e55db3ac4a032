#include "worker/srun_hosts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "amt/v1/worker.pb.h"
#include "tests/support/status_matchers.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/worker/fake_process_launcher.h"

namespace amt::worker {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

SrunOptions Options() {
  SrunOptions o;
  o.srun = "/slurm/bin/srun";
  o.worker_binary = "/opt/amt/amt-worker";
  o.environment = {{"SLURM_JOB_ID", "42"}, {"PATH", "/usr/bin"}};
  return o;
}

TEST(SrunArguments, PutsHostKOnTheKthNode) {
  EXPECT_THAT(
      SrunArguments(Options(), 2, "/jobs/j.algo-2/amt-host-launch.pb"),
      ElementsAre("/slurm/bin/srun", "--nodes=1", "--ntasks=1", "--exact", "--quiet",
                  "--kill-on-bad-exit=1", "--job-name=algo-2", "--relative=1",
                  "/opt/amt/amt-worker", "--exec-host", "/jobs/j.algo-2/amt-host-launch.pb"));
  SrunOptions anywhere = Options();
  anywhere.host_per_node = false;
  EXPECT_THAT(SrunArguments(anywhere, 2, "f"),
              ::testing::Not(::testing::Contains(::testing::StartsWith("--relative"))));
}

TEST(SrunProcessLauncher, RunsAHostAsAStepWithItsLaunchInItsFolder) {
  testing::FakeProcessLauncher inner;
  auto launcher = NewSrunProcessLauncher(inner, Options());
  const ::amt::testing::TempDir temp("srun-hosts");
  const std::string dir = temp.str();
  LaunchSpec spec;
  spec.argv = {"/usr/bin/python3", "train"};
  spec.env = {{"SM_CURRENT_HOST", "algo-2"}};
  spec.cwd = dir;
  spec.hosts_file = dir + "/hosts";
  spec.hostname = "algo-2";
  spec.host = 2;
  auto process = launcher->Launch(spec, [](OutputStream, std::string) {});
  ASSERT_THAT(process.status(), IsOk());
  const auto launched = inner.launch_attempts();
  ASSERT_EQ(launched.size(), 1u);
  EXPECT_EQ(launched[0].argv.front(), "/slurm/bin/srun");
  EXPECT_EQ(launched[0].argv.back(), dir + "/amt-host-launch.pb");
  EXPECT_EQ(launched[0].env, Options().environment);  // srun's own, not the trainer's
  EXPECT_EQ(launched[0].cwd, dir);

  amt::v1::HostLaunch launch;
  std::ifstream in(dir + "/amt-host-launch.pb", std::ios::binary);
  ASSERT_TRUE(launch.ParseFromIstream(&in));
  EXPECT_THAT(launch.argv(), ElementsAre("/usr/bin/python3", "train"));
  EXPECT_EQ(launch.env().at("SM_CURRENT_HOST"), "algo-2");
  EXPECT_EQ(launch.cwd(), dir);
  EXPECT_EQ(launch.hosts_file(), dir + "/hosts");
  EXPECT_EQ(launch.hostname(), "algo-2");

  // The stop's SIGTERM reaches srun as SIGUSR2 (which srun passes on); SIGKILL as it is.
  ASSERT_THAT((*process)->SignalGroup(SIGTERM), IsOk());
  ASSERT_THAT((*process)->SignalGroup(SIGKILL), IsOk());
  EXPECT_THAT(inner.WaitForProcess(0)->signals(), ElementsAre(SIGUSR2, SIGKILL));
}

TEST(SrunProcessLauncher, RunsAOneHostJobAsItIs) {
  testing::FakeProcessLauncher inner;
  auto launcher = NewSrunProcessLauncher(inner, Options());
  LaunchSpec spec;
  spec.argv = {"/bin/true"};
  spec.cwd = "/";
  auto process = launcher->Launch(spec, [](OutputStream, std::string) {});
  ASSERT_THAT(process.status(), IsOk());
  EXPECT_THAT(inner.launch_attempts().at(0).argv, ElementsAre("/bin/true"));
  ASSERT_THAT((*process)->SignalGroup(SIGTERM), IsOk());
  EXPECT_THAT(inner.WaitForProcess(0)->signals(), ElementsAre(SIGTERM));
}

TEST(ParseNodeLine, FindsTheNameAndAddress) {
  const auto parsed = ParseNodeLine(
      "NodeName=amt-n2 Arch=x86_64 CoresPerSocket=1 NodeAddr=127.0.0.2 NodeHostName=vm "
      "Version=22.05.8 State=MIXED");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->first, "amt-n2");
  EXPECT_EQ(parsed->second, "127.0.0.2");
  EXPECT_FALSE(ParseNodeLine("Node amt-n2 not found").has_value());
}

class FakeScontrol final : public CommandRunner {
 public:
  absl::StatusOr<CommandResult> Run(const std::vector<std::string>& argv) override {
    calls.push_back(argv);
    if (argv[1] == "show" && argv[2] == "hostnames") return CommandResult{0, hostnames, ""};
    return CommandResult{node_exit, nodes, node_error};
  }
  std::vector<std::vector<std::string>> calls;
  std::string hostnames = "amt-n2\namt-n1\n";
  std::string nodes =
      "NodeName=amt-n1 Arch=x86_64 NodeAddr=localhost State=MIXED\n"
      "NodeName=amt-n2 Arch=x86_64 NodeAddr=127.0.0.2 State=MIXED\n";
  int node_exit = 0;
  std::string node_error;
};

TEST(SlurmNodeAddresses, ResolvesEachNodesAddressInTheListsOrder) {
  FakeScontrol scontrol;
  const auto addresses = SlurmNodeAddresses(scontrol, "scontrol", "amt-n[1-2]");
  ASSERT_THAT(addresses.status(), IsOk());
  EXPECT_THAT(*addresses, ElementsAre("127.0.0.2", "127.0.0.1"));  // localhost resolved
  EXPECT_THAT(scontrol.calls[1], ElementsAre("scontrol", "-o", "show", "node", "amt-n[1-2]"));
}

TEST(SlurmNodeAddresses, SaysWhatScontrolSaid) {
  FakeScontrol scontrol;
  scontrol.node_exit = 1;
  scontrol.node_error = "slurm_load_node error: Unable to contact slurm controller\n";
  EXPECT_THAT(
      SlurmNodeAddresses(scontrol, "scontrol", "amt-n1"),
      StatusIs(absl::StatusCode::kUnavailable, HasSubstr("Unable to contact slurm controller")));
  EXPECT_THAT(SlurmNodeAddresses(scontrol, "scontrol", ""),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("SLURM_JOB_NODELIST")));
}

TEST(InterfaceWithAddress, FindsTheInterfaceHoldingAnAddress) {
  EXPECT_EQ(InterfaceWithAddress("127.0.0.1"), "lo");
  EXPECT_EQ(InterfaceWithAddress("192.0.2.55"), "");  // TEST-NET-1: on no machine
  EXPECT_EQ(InterfaceWithAddress("not an address"), "");
}

TEST(UseInterface, PointsTheHostsConfigurationAtTheNodesInterface) {
  const ::amt::testing::TempDir temp("srun-hosts");
  const std::string dir = temp.str();
  fs::create_directories(dir + "/input/config");
  {
    std::ofstream out(dir + "/input/config/resourceconfig.json");
    out << R"({"current_host":"algo-2","network_interface_name":"lo"})";
  }
  amt::v1::HostLaunch launch;
  launch.set_cwd(dir);
  (*launch.mutable_env())["SM_NETWORK_INTERFACE_NAME"] = "lo";
  (*launch.mutable_env())["SM_RESOURCE_CONFIG"] =
      R"({"current_host":"algo-2","network_interface_name":"lo"})";
  ASSERT_THAT(UseInterface(launch, "eth1"), IsOk());
  EXPECT_EQ(launch.env().at("SM_NETWORK_INTERFACE_NAME"), "eth1");
  EXPECT_EQ(launch.env().at("SM_RESOURCE_CONFIG"),
            R"({"current_host":"algo-2","network_interface_name":"eth1"})");
  std::ifstream in(dir + "/input/config/resourceconfig.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}),
            R"({"current_host":"algo-2","network_interface_name":"eth1"})");
}

// amt-worker --exec-host, the real executable: what srun runs on a node.
class ExecHostTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = temp_.str(); }

  // Writes `launch` where a one-shot worker would; the file's path.
  std::string Write(const amt::v1::HostLaunch& launch) {
    const std::string file = dir_ + "/amt-host-launch.pb";
    std::ofstream out(file, std::ios::binary);
    launch.SerializeToOstream(&out);
    return file;
  }

  std::string WriteLaunch(const std::string& script) {
    amt::v1::HostLaunch launch;
    launch.add_argv("/bin/sh");
    launch.add_argv("-c");
    launch.add_argv(script);
    (*launch.mutable_env())["GREETING"] = "hello from algo-2";
    (*launch.mutable_env())["PATH"] = "/usr/bin:/bin";
    launch.set_cwd(dir_);
    return Write(launch);
  }

  // Starts amt-worker --exec-host `file`, collecting its output lines.
  std::unique_ptr<Process> Start(const std::string& file) {
    LaunchSpec spec;
    spec.argv = {AMT_WORKER_BINARY, "--exec-host", file};
    spec.cwd = dir_;
    spec.env = {{"PATH", "/usr/bin:/bin"}};
    auto process = posix_->Launch(spec, [this](OutputStream stream, std::string line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.push_back((stream == OutputStream::kStdout ? "out: " : "err: ") + line);
      cv_.notify_all();
    });
    EXPECT_THAT(process.status(), IsOk());
    return process.ok() ? std::move(*process) : nullptr;
  }

  bool WaitForLine(const std::string& line) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(20), [&] {
      return std::find(lines_.begin(), lines_.end(), line) != lines_.end();
    });
  }

  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

  ::amt::testing::TempDir temp_{"srun-hosts"};
  std::string dir_;
  std::unique_ptr<ProcessLauncher> posix_ = NewPosixProcessLauncher();
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> lines_;
};

TEST_F(ExecHostTest, RunsTheTrainerWithItsEnvironmentAndExitsWithItsCode) {
  auto process = Start(WriteLaunch("echo \"$GREETING in $(pwd)\"; echo oops >&2; exit 3"));
  ASSERT_NE(process, nullptr);
  EXPECT_EQ(process->Wait().exit_code, 3);
  EXPECT_THAT(lines(),
              ::testing::UnorderedElementsAre("out: hello from algo-2 in " + dir_, "err: oops"));
}

TEST_F(ExecHostTest, GivesTheTrainerTheInterfaceOfItsAddressOnThisNode) {
  fs::create_directories(dir_ + "/input/config");
  {
    std::ofstream out(dir_ + "/input/config/resourceconfig.json");
    out << R"({"network_interface_name":"eth0"})";
  }
  amt::v1::HostLaunch launch;
  launch.add_argv("/bin/sh");
  launch.add_argv("-c");
  launch.add_argv("echo \"interface=$SM_NETWORK_INTERFACE_NAME\"");
  launch.set_cwd(dir_);
  auto& env = *launch.mutable_env();
  env["SM_CURRENT_HOST"] = "algo-2";
  env["AMT_HOST_ADDRESSES"] = R"({"algo-1":"192.0.2.1","algo-2":"127.0.0.1"})";
  env["SM_NETWORK_INTERFACE_NAME"] = "eth0";
  const std::string file = Write(launch);
  auto process = Start(file);
  ASSERT_NE(process, nullptr);
  EXPECT_EQ(process->Wait().exit_code, 0);
  EXPECT_THAT(lines(), ElementsAre("out: interface=lo"));
  std::ifstream in(dir_ + "/input/config/resourceconfig.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}),
            R"({"network_interface_name":"lo"})");
}

TEST_F(ExecHostTest, TurnsSigusr2IntoSigtermForTheTrainer) {
  auto process = Start(
      WriteLaunch("trap 'echo stopping; exit 7' TERM; echo ready; while :; do sleep 0.05; done"));
  ASSERT_NE(process, nullptr);
  ASSERT_TRUE(WaitForLine("out: ready"));
  ASSERT_THAT(process->SignalGroup(SIGUSR2), IsOk());
  EXPECT_EQ(process->Wait().exit_code, 7);
  EXPECT_THAT(lines(), ::testing::Contains("out: stopping"));
}

TEST_F(ExecHostTest, TheTrainerIgnoresTheSigusr2SlurmAlsoGivesIt) {
  // Slurm signals every process of the step: SIGUSR2 reaches the trainer as well.
  auto process = Start(WriteLaunch("kill -USR2 $$; echo survived"));
  ASSERT_NE(process, nullptr);
  EXPECT_EQ(process->Wait().exit_code, 0);
  EXPECT_THAT(lines(), ElementsAre("out: survived"));
}

TEST_F(ExecHostTest, SaysWhyTheTrainerCouldNotStart) {
  amt::v1::HostLaunch launch;
  launch.add_argv(dir_ + "/no-such-trainer");
  launch.set_cwd(dir_);
  const std::string file = Write(launch);
  auto process = Start(file);
  ASSERT_NE(process, nullptr);
  EXPECT_EQ(process->Wait().exit_code, 127);
  EXPECT_THAT(lines(), ::testing::Contains(HasSubstr(dir_ + "/no-such-trainer")));

  auto unreadable = Start(dir_ + "/missing.pb");
  ASSERT_NE(unreadable, nullptr);
  EXPECT_EQ(unreadable->Wait().exit_code, 127);
  EXPECT_THAT(lines(), ::testing::Contains(HasSubstr("cannot read a host's launch")));
}

}  // namespace
}  // namespace amt::worker
