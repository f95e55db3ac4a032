#include "common/utf8.h"

#include <gtest/gtest.h>

namespace amt {
namespace {

TEST(InvalidUtf8Offset, FindsTheFirstByteThatIsNotWellFormedUtf8) {
  EXPECT_EQ(InvalidUtf8Offset(""), std::nullopt);
  EXPECT_EQ(InvalidUtf8Offset("plain ascii"), std::nullopt);
  EXPECT_EQ(InvalidUtf8Offset("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), std::nullopt);
  EXPECT_EQ(InvalidUtf8Offset("ab\xff\xfe"), 2u);
  EXPECT_EQ(InvalidUtf8Offset("\xc0\x80"), 0u);          // overlong NUL
  EXPECT_EQ(InvalidUtf8Offset("\xe0\x80\x80"), 0u);      // overlong
  EXPECT_EQ(InvalidUtf8Offset("x\xed\xa0\x80"), 1u);     // a surrogate, U+D800
  EXPECT_EQ(InvalidUtf8Offset("\xf4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(InvalidUtf8Offset("ok\xe2\x82"), 2u);        // cut short
  EXPECT_EQ(InvalidUtf8Offset("\x80"), 0u);              // a lone continuation byte
}

TEST(ReplaceInvalidUtf8, ReplacesEachBadByteAndKeepsTheRest) {
  EXPECT_EQ(ReplaceInvalidUtf8("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_EQ(ReplaceInvalidUtf8("caf\xE9!"), "caf\xEF\xBF\xBD!");
  EXPECT_EQ(ReplaceInvalidUtf8("\xFF\xFE"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(ReplaceInvalidUtf8(""), "");
}

}  // namespace
}  // namespace amt
