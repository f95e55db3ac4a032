#include "common/proc_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace amt {
namespace {

TEST(ReadProcFile, ReadsAWholeProcFile) {
  const std::string stat = ReadProcFile("/proc/self/stat");
  EXPECT_EQ(stat.substr(0, stat.find(' ')), std::to_string(::getpid()));
  EXPECT_EQ(stat.back(), '\n');
}

TEST(ReadProcFile, GivesNothingForAProcessThatIsGone) {
  EXPECT_EQ(ReadProcFile("/proc/999999999/environ"), "");
}

}  // namespace
}  // namespace amt
