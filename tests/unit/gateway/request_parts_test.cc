#include "orchestrator/gateway/request_parts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace amt::gateway {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

TEST(PercentDecodeTest, DecodesEscapesAndRefusesBadOnes) {
  EXPECT_EQ(PercentDecode("a%20b%2Fc+d", false), "a b/c+d");
  EXPECT_EQ(PercentDecode("a+b", true), "a b");
  EXPECT_EQ(PercentDecode("%e2%82%ac", false), "\xe2\x82\xac");
  EXPECT_EQ(PercentDecode("100%", false), std::nullopt);
  EXPECT_EQ(PercentDecode("%2", false), std::nullopt);
  EXPECT_EQ(PercentDecode("%zz", false), std::nullopt);
  // Forms keep a bad escape as it is, as AWS's front ends do.
  EXPECT_EQ(PercentDecode("100%+a%2", true, BadEscape::kKeep), "100% a%2");
}

TEST(ParseQueryTest, KeepsOrderAndValuelessNames) {
  EXPECT_THAT(
      *ParseQuery("uploads&prefix=a%2Fb&x=1&&x=2"),
      ElementsAre(Pair("uploads", ""), Pair("prefix", "a/b"), Pair("x", "1"), Pair("x", "2")));
  EXPECT_EQ(ParseQuery("a=%"), std::nullopt);
  EXPECT_TRUE(ParseQuery("")->empty());
}

TEST(SplitTargetTest, SplitsAtTheFirstQuestionMark) {
  EXPECT_THAT(SplitTarget("/b/k?uploadId=1?x"), Pair("/b/k", "uploadId=1?x"));
  EXPECT_THAT(SplitTarget("/b/k"), Pair("/b/k", ""));
}

}  // namespace
}  // namespace amt::gateway
