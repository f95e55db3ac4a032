#include "common/command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace amt
