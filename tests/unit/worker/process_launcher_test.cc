// Runs real short processes through the posix_spawn launcher.
#include "worker/process_launcher.h"

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/status_matchers.h"
#include "tests/support/temp_dir.h"
#include "worker/process_tree.h"

namespace amt::worker {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

namespace fs = std::filesystem;
using ::amt::testing::ReadFile;
using ::amt::testing::TempDir;
using ::amt::testing::WriteFile;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// Collects lines; can hand out a future for the first line equal to a given text.
class Lines {
 public:
  LineCallback Fn() {
    return [this](OutputStream stream, std::string line) {
      std::lock_guard<std::mutex> lock(mu_);
      if (waiting_ && line == awaited_) {
        waiting_ = false;
        seen_.set_value();
      }
      (stream == OutputStream::kStdout ? out_ : err_).push_back(std::move(line));
    };
  }
  std::future<void> WhenSeen(const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    awaited_ = line;
    waiting_ = true;
    return seen_.get_future();
  }
  std::vector<std::string> out() {
    std::lock_guard<std::mutex> lock(mu_);
    return out_;
  }
  std::vector<std::string> err() {
    std::lock_guard<std::mutex> lock(mu_);
    return err_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> out_;
  std::vector<std::string> err_;
  std::string awaited_;
  bool waiting_ = false;
  std::promise<void> seen_;
};

LaunchSpec Spec(std::vector<std::string> argv, std::map<std::string, std::string> env = {},
                std::string cwd = "") {
  LaunchSpec spec;
  spec.argv = std::move(argv);
  spec.env = std::move(env);
  spec.cwd = std::move(cwd);
  return spec;
}

LaunchSpec Shell(const std::string& script, const std::string& cwd = "") {
  return Spec({"/bin/sh", "-c", script}, {{"PATH", "/usr/bin:/bin"}}, cwd);
}

// Every test of the launcher runs twice: the trainer as the group leader, and under amt-job-shim
// (job_shim.c), which must not change what a trainer, a stop or a launch error looks like.
class PosixProcessLauncherTest : public ::testing::TestWithParam<bool> {
 protected:
  static std::unique_ptr<ProcessLauncher> MakeLauncher() {
    return NewPosixProcessLauncher(GetParam() ? AMT_JOB_SHIM : "");
  }
};

INSTANTIATE_TEST_SUITE_P(Launchers, PosixProcessLauncherTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "UnderTheShim" : "Direct";
                         });

TEST_P(PosixProcessLauncherTest, DeliversStdoutAndStderrLinesAndTheExitCode) {
  auto launcher = MakeLauncher();
  Lines lines;
  auto process = launcher->Launch(
      Shell("echo one; echo two >&2; printf 'three\\nno newline'; exit 3"), lines.Fn());
  ASSERT_THAT(process, IsOk());
  const ExitStatus status = (*process)->Wait();
  EXPECT_EQ(status.exit_code, 3);
  EXPECT_EQ(status.signal, 0);
  EXPECT_THAT(lines.out(), ElementsAre("one", "three", "no newline"));
  EXPECT_THAT(lines.err(), ElementsAre("two"));
}

TEST_P(PosixProcessLauncherTest, PassesExactlyTheGivenEnvironmentAndCwd) {
  TempDir temp;
  auto launcher = MakeLauncher();
  Lines lines;
  LaunchSpec spec = Spec({"/usr/bin/env"}, {{"A", "1"}, {"B", "two words"}}, temp.path().string());
  auto process = launcher->Launch(spec, lines.Fn());
  ASSERT_THAT(process, IsOk());
  EXPECT_EQ((*process)->Wait().exit_code, 0);
  EXPECT_THAT(lines.out(), ElementsAre("A=1", "B=two words", StartsWith("AMT_PROCESS_TREE=")));

  Lines pwd;
  process = launcher->Launch(Shell("pwd -P", temp.path().string()), pwd.Fn());
  ASSERT_THAT(process, IsOk());
  EXPECT_EQ((*process)->Wait().exit_code, 0);
  EXPECT_THAT(pwd.out(), ElementsAre(fs::canonical(temp.path()).string()));
}

TEST_P(PosixProcessLauncherTest, GivesTheChildAnEmptyStdin) {
  auto launcher = MakeLauncher();
  Lines lines;
  auto process = launcher->Launch(Shell("cat; echo done"), lines.Fn());
  ASSERT_THAT(process, IsOk());
  EXPECT_EQ((*process)->Wait().exit_code, 0);
  EXPECT_THAT(lines.out(), ElementsAre("done"));
}

TEST_P(PosixProcessLauncherTest, StartsTheChildInItsOwnProcessGroup) {
  auto launcher = MakeLauncher();
  Lines lines;
  auto ready = lines.WhenSeen("ready");
  auto process = launcher->Launch(Shell("echo ready; exec sleep 30"), lines.Fn());
  ASSERT_THAT(process, IsOk());
  ready.wait();
  EXPECT_EQ(::getpgid((*process)->pid()), (*process)->pid());
  EXPECT_NE(::getpgid((*process)->pid()), ::getpgrp());
  ASSERT_THAT((*process)->SignalGroup(SIGKILL), IsOk());
  const ExitStatus status = (*process)->Wait();
  EXPECT_EQ(status.signal, SIGKILL);
  EXPECT_EQ(status.exit_code, 128 + SIGKILL);
}

TEST_P(PosixProcessLauncherTest, KillsWhatIsLeftOfTheGroupWhenTheLeaderExits) {
  auto launcher = MakeLauncher();
  Lines lines;
  // The background sleep keeps stdout open; Wait returns because the group is killed.
  auto process = launcher->Launch(Shell("sleep 30 & echo $!; exit 0"), lines.Fn());
  ASSERT_THAT(process, IsOk());
  EXPECT_EQ((*process)->Wait().exit_code, 0);
  ASSERT_EQ(lines.out().size(), 1u);
  // SIGKILL is delivered asynchronously: wait for the process's exit event through a pidfd
  // (readable once it has exited) instead of reading its state at one instant.
  const pid_t pid = std::stoi(lines.out()[0]);
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {  // -1: already reaped, so gone
    pollfd p{pidfd, POLLIN, 0};
    EXPECT_EQ(::poll(&p, 1, 10'000), 1) << "the background process outlived its group leader";
    ::close(pidfd);
  }
}

// Waits (up to 10 s) for the exit of `pid` through a pidfd, readable once the process has exited.
bool ExitsSoon(pid_t pid) {
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return true;  // already reaped, so gone
  pollfd p{pidfd, POLLIN, 0};
  const bool exited = ::poll(&p, 1, 10'000) == 1;
  ::close(pidfd);
  return exited;
}

// A script that starts a grandchild in a session of its own (setsid, from a subshell: a double
// fork), waits on a fifo until it runs, prints its pid, then runs `rest`. `prefix` goes before
// setsid (e.g. an environment assignment).
std::string EscapingGrandchild(const fs::path& dir, const std::string& rest,
                               const std::string& prefix = "") {
  const std::string fifo = (dir / "fifo").string();
  return "mkfifo " + fifo + "; (" + prefix + " setsid sh -c 'echo $$ > " + fifo +
         "; exec sleep 30' &); read pid < " + fifo + "; echo $pid; " + rest;
}

TEST_P(PosixProcessLauncherTest, KillsDescendantsThatLeftTheGroupWhenTheLeaderExits) {
  TempDir temp;
  auto launcher = MakeLauncher();
  Lines lines;
  auto process = launcher->Launch(Shell(EscapingGrandchild(temp.path(), "exit 0")), lines.Fn());
  ASSERT_THAT(process, IsOk());
  EXPECT_EQ((*process)->Wait().exit_code, 0);
  ASSERT_EQ(lines.out().size(), 1u);
  const pid_t grandchild = std::stoi(lines.out()[0]);
  EXPECT_TRUE(ExitsSoon(grandchild)) << "a setsid grandchild outlived its job";
}

// A running job whose shell started a setsid grandchild (EscapingGrandchild) and then sleeps:
// the process (null after a failure), and the grandchild's pid.
std::pair<std::unique_ptr<Process>, pid_t> WithEscapedGrandchild(ProcessLauncher& launcher,
                                                                 const fs::path& dir,
                                                                 Lines& lines) {
  auto printed = lines.WhenSeen("running");
  auto process =
      launcher.Launch(Shell(EscapingGrandchild(dir, "echo running; exec sleep 30")), lines.Fn());
  if (!process.ok()) {
    ADD_FAILURE() << process.status();
    return {nullptr, 0};
  }
  printed.wait();
  return {std::move(*process), std::stoi(lines.out()[0])};
}

// The group leader itself killed (with the shim: the shim, which then cannot reap the tree; the
// OOM killer does this): Wait still finds what left the group by its marker.
TEST_P(PosixProcessLauncherTest, KillsDescendantsThatLeftTheGroupWhenTheLeaderIsKilled) {
  TempDir temp;
  auto launcher = MakeLauncher();
  Lines lines;
  auto [process, grandchild] = WithEscapedGrandchild(*launcher, temp.path(), lines);
  ASSERT_NE(process, nullptr);
  ASSERT_EQ(::kill(process->pid(), SIGKILL), 0);  // the leader only, not its group
  EXPECT_EQ(process->Wait().signal, SIGKILL);
  EXPECT_TRUE(ExitsSoon(grandchild)) << "a setsid grandchild outlived its killed leader";
}

TEST_P(PosixProcessLauncherTest, SigkillReachesDescendantsThatLeftTheGroup) {
  TempDir temp;
  auto launcher = MakeLauncher();
  Lines lines;
  auto [process, grandchild] = WithEscapedGrandchild(*launcher, temp.path(), lines);
  ASSERT_NE(process, nullptr);
  EXPECT_NE(::getsid(grandchild), ::getsid(process->pid()));
  ASSERT_THAT(process->SignalGroup(SIGKILL), IsOk());  // a stop's SIGKILL, before Wait
  EXPECT_TRUE(ExitsSoon(grandchild)) << "the stop's SIGKILL missed a setsid grandchild";
  EXPECT_EQ(process->Wait().signal, SIGKILL);
}

TEST_P(PosixProcessLauncherTest, SigtermGoesToTheGroupOnly) {
  TempDir temp;
  auto launcher = MakeLauncher();
  Lines lines;
  auto printed = lines.WhenSeen("running");
  // The leader ignores nothing: SIGTERM ends it; the grandchild in its own session is not sent
  // SIGTERM (only the group is, as `docker stop` signals the container's main process), and dies
  // with the SIGKILL that follows the leader's exit.
  auto process = launcher->Launch(
      Shell(EscapingGrandchild(temp.path(), "echo running; exec sleep 30")), lines.Fn());
  ASSERT_THAT(process, IsOk());
  printed.wait();
  const pid_t grandchild = std::stoi(lines.out()[0]);
  ASSERT_THAT((*process)->SignalGroup(SIGTERM), IsOk());
  EXPECT_EQ((*process)->Wait().signal, SIGTERM);
  EXPECT_TRUE(ExitsSoon(grandchild));
}

TEST(ProcessTree, KillsTheTreesOfAWorkerThatIsGone) {
  TempDir temp;
  auto launcher = NewPosixProcessLauncher();
  Lines lines;
  auto printed = lines.WhenSeen("running");
  // The grandchild carries the marker of an owner that cannot exist (pid 999999999).
  auto process =
      launcher->Launch(Shell(EscapingGrandchild(temp.path(), "echo running; exec sleep 30",
                                                "AMT_PROCESS_TREE=999999999-1-1")),
                       lines.Fn());
  ASSERT_THAT(process, IsOk());
  printed.wait();
  const pid_t grandchild = std::stoi(lines.out()[0]);
  EXPECT_GE(KillOrphanedProcessTrees(), 1);
  EXPECT_TRUE(ExitsSoon(grandchild)) << "a dead worker's leftover survived";
  // The live tree (this test is its owner) was left alone.
  EXPECT_EQ(::kill((*process)->pid(), 0), 0);
  ASSERT_THAT((*process)->SignalGroup(SIGKILL), IsOk());
  EXPECT_EQ((*process)->Wait().signal, SIGKILL);
}

TEST(ProcessTree, MarkersAreUniqueAndNameTheirOwner) {
  const std::string a = NewProcessTreeMarker();
  const std::string b = NewProcessTreeMarker();
  EXPECT_NE(a, b);
  EXPECT_THAT(a, StartsWith(std::to_string(::getpid()) + "-"));
}

TEST_P(PosixProcessLauncherTest, SignalGroupAfterWaitIsANoOp) {
  auto launcher = MakeLauncher();
  Lines lines;
  auto process = launcher->Launch(Shell("exit 0"), lines.Fn());
  ASSERT_THAT(process, IsOk());
  EXPECT_EQ((*process)->Wait().exit_code, 0);
  EXPECT_THAT((*process)->SignalGroup(SIGTERM), IsOk());
}

TEST_P(PosixProcessLauncherTest, FailsWithNotFoundForAMissingExecutable) {
  auto launcher = MakeLauncher();
  Lines lines;
  auto process = launcher->Launch(Spec({"/nonexistent/train", "train"}), lines.Fn());
  EXPECT_THAT(process, StatusIs(absl::StatusCode::kNotFound,
                                "/nonexistent/train: No such file or directory"));
}

TEST_P(PosixProcessLauncherTest, FailsWithPermissionDeniedForAFileThatIsNotExecutable) {
  TempDir temp;
  const fs::path script = temp.path() / "train";
  WriteFile(script, "#!/bin/sh\necho hi\n");
  ::chmod(script.c_str(), 0644);
  auto launcher = MakeLauncher();
  Lines lines;
  auto process = launcher->Launch(Spec({script.string()}), lines.Fn());
  EXPECT_THAT(process, StatusIs(absl::StatusCode::kPermissionDenied,
                                script.string() + ": Permission denied"));
}

TEST_P(PosixProcessLauncherTest, FailsWithNotFoundForAMissingWorkingDirectory) {
  auto launcher = MakeLauncher();
  Lines lines;
  auto process = launcher->Launch(Shell("true", "/nonexistent/dir"), lines.Fn());
  EXPECT_THAT(process, StatusIs(absl::StatusCode::kNotFound,
                                "working directory /nonexistent/dir: No such file or directory"));
}

TEST_P(PosixProcessLauncherTest, FailsWithInvalidArgumentForAnEmptyCommand) {
  auto launcher = MakeLauncher();
  Lines lines;
  auto process = launcher->Launch(LaunchSpec{}, lines.Fn());
  EXPECT_THAT(process, StatusIs(absl::StatusCode::kInvalidArgument, "empty command"));
  EXPECT_THAT(lines.out(), IsEmpty());
}

TEST_P(PosixProcessLauncherTest, APrivateHostsFileAndHostNameForTheChildOnly) {
  if (::geteuid() != 0) GTEST_SKIP() << "mount and UTS namespaces need root";
  TempDir temp;
  const std::string hosts = (temp.path() / "hosts").string();
  std::ofstream(hosts) << "127.1.0.2 algo-2\n";
  std::string before;
  {
    std::ifstream in("/etc/hosts");
    before.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  char own_name[256] = {};
  ::gethostname(own_name, sizeof own_name - 1);
  auto launcher = MakeLauncher();
  Lines lines;
  LaunchSpec spec = Shell("cat /etc/hosts; hostname");
  spec.hosts_file = hosts;
  spec.hostname = "algo-2";
  auto process = launcher->Launch(spec, lines.Fn());
  ASSERT_THAT(process, IsOk());
  EXPECT_EQ((*process)->Wait().exit_code, 0);
  EXPECT_THAT(lines.out(), ElementsAre("127.1.0.2 algo-2", "algo-2"));
  // Nothing changed for the worker.
  std::ifstream in("/etc/hosts");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()),
            before);
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  EXPECT_STREQ(name, own_name);
}

TEST_P(PosixProcessLauncherTest, SaysWhenTheHostsFileCannotBeMounted) {
  if (::geteuid() != 0) GTEST_SKIP() << "mount and UTS namespaces need root";
  auto launcher = MakeLauncher();
  Lines lines;
  LaunchSpec spec = Shell("true");
  spec.hosts_file = "/nonexistent/hosts";
  auto process = launcher->Launch(spec, lines.Fn());
  EXPECT_THAT(process, StatusIs(absl::StatusCode::kNotFound,
                                "/bin/sh: cannot give the process its own /etc/hosts: "
                                "No such file or directory"));
}

// A worker killed with SIGKILL: the shim kills its trainer's children too (PR_SET_PDEATHSIG
// alone reaches the trainer only: its background child lived on, and a job retried elsewhere ran
// twice). The worker here is a child process of the test that launches the job, passes on the
// background process's pid, and is killed.
TEST(JobShim, AWorkerKilledWithSigkillTakesItsTrainersChildrenWithIt) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t worker = ::fork();
  ASSERT_GE(worker, 0);
  if (worker == 0) {
    ::close(pipe_fds[0]);
    const int out = pipe_fds[1];
    auto launcher = NewPosixProcessLauncher(AMT_JOB_SHIM);
    auto process = launcher->Launch(Shell("sleep 1000 & echo $!; exec sleep 1000"),
                                    [out](OutputStream, std::string line) {
                                      line.push_back('\n');
                                      (void)!::write(out, line.data(), line.size());
                                    });
    if (!process.ok()) ::_exit(3);
    for (;;) ::pause();  // until the test kills this "worker"
  }
  ::close(pipe_fds[1]);
  std::string line;
  char c;
  while (::read(pipe_fds[0], &c, 1) == 1 && c != '\n') line.push_back(c);
  ::close(pipe_fds[0]);
  ASSERT_FALSE(line.empty()) << "the worker did not start its job";
  const pid_t background = std::stoi(line);
  ASSERT_EQ(::kill(worker, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(worker, &status, 0), worker);
  EXPECT_TRUE(ExitsSoon(background)) << "the trainer's child outlived its killed worker";
}

}  // namespace
}  // namespace amt::worker
