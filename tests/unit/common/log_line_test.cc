#include "common/log_line.h"

#include <gtest/gtest.h>

namespace amt {
namespace {

TEST(SageMakerLogLine, ShowsTabsAsHash011AndDropsCarriageReturnsAndTheNewline) {
  EXPECT_EQ(SageMakerLogLine("[3]\ttrain-loss:0.1\tvalidation-loss:0.2\r\n"),
            "[3]#011train-loss:0.1#011validation-loss:0.2");
  EXPECT_EQ(SageMakerLogLine("a\tb\t\tc"), "a#011b#011#011c");
  EXPECT_EQ(SageMakerLogLine("loss=1\n"), "loss=1");
  EXPECT_EQ(SageMakerLogLine("10%\r50%\r100%"), "10%50%100%");  // progress bars
  EXPECT_EQ(SageMakerLogLine(""), "");
}

TEST(SageMakerLogLine, KeepsValidUtf8) {
  EXPECT_EQ(SageMakerLogLine("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),
            "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
}

TEST(SageMakerLogLine, ReplacesEveryInvalidByteWithTheReplacementCharacter) {
  EXPECT_EQ(SageMakerLogLine("caf\xE9"), "caf\xEF\xBF\xBD");            // Latin-1
  EXPECT_EQ(SageMakerLogLine("\xFF\xFE"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // stray bytes
  EXPECT_EQ(SageMakerLogLine("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  EXPECT_EQ(SageMakerLogLine("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(SageMakerLogLine("\xF4\x90\x80\x80x"),
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBDx");         // past U+10FFFF
  EXPECT_EQ(SageMakerLogLine("a\xE2\x82"), "a\xEF\xBF\xBD\xEF\xBF\xBD");  // cut short
}

}  // namespace
}  // namespace amt
