#include "common/command.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "tests/support/status_matchers.h"

namespace amt {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

TEST(ProcessCommandRunner, CollectsBothStreamsAndTheExitCode) {
  auto runner = NewProcessCommandRunner();
  const auto result = runner->Run({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_THAT(result, IsOk());
  EXPECT_EQ(result->exit_code, 3);
  EXPECT_EQ(result->out, "out\n");
  EXPECT_EQ(result->err, "err\n");
}

TEST(ProcessCommandRunner, FindsCommandsOnPathAndReportsASignal) {
  auto runner = NewProcessCommandRunner();
  const auto result = runner->Run({"sh", "-c", "kill -9 $$"});
  ASSERT_THAT(result, IsOk());
  EXPECT_EQ(result->exit_code, 128 + 9);
}

TEST(ProcessCommandRunner, SaysWhenTheCommandCannotStart) {
  auto runner = NewProcessCommandRunner();
  EXPECT_THAT(runner->Run({"/nonexistent/sbatch"}),
              StatusIs(absl::StatusCode::kNotFound,
                       ::testing::HasSubstr("cannot run /nonexistent/sbatch")));
}

// A descriptor that another thread opened without O_CLOEXEC (a std::ifstream's) would keep a
// deleted file's space, or a pipe's end, for as long as the command runs.
TEST(ProcessCommandRunner, TheCommandGetsNoOtherDescriptorOfThisProcess) {
  const int fd = ::open("/dev/null", O_RDONLY);  // inheritable
  ASSERT_GE(fd, 3);
  auto runner = NewProcessCommandRunner();
  const auto result = runner->Run(
      {"/bin/sh", "-c", "test -e /proc/self/fd/" + std::to_string(fd) + " && echo open"});
  ::close(fd);
  ASSERT_THAT(result, IsOk());
  EXPECT_EQ(result->out, "");
  EXPECT_EQ(result->exit_code, 1);
}

}  // namespace
}  // namespace amt
