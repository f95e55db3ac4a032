#include "common/crypto.h"

#include <gtest/gtest.h>

#include <string>

namespace amt::auth {
namespace {

TEST(Sha256Hex, MatchesFipsVectors) {
  // FIPS 180-2 appendix B.1 and the empty message.
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Hasher, GivesWhatSha256HexGivesForTheWholeStream) {
  Sha256Hasher hasher;
  hasher.Update("ab");
  hasher.Update("");
  hasher.Update("c");
  EXPECT_EQ(HexEncode(hasher.Finish()), Sha256Hex("abc"));
  Md5Hasher md5;
  md5.Update("a");
  md5.Update("bc");
  EXPECT_EQ(md5.Finish(), Md5("abc"));
}

TEST(HmacSha256, MatchesRfc4231TestCase2) {
  EXPECT_EQ(HexEncode(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(HmacSha256, KeepsBinaryKeysAndData) {
  const std::string key("k\0ey", 4);
  EXPECT_NE(HmacSha256(key, std::string("a\0b", 3)), HmacSha256("k", std::string("a\0b", 3)));
  EXPECT_EQ(HmacSha256(key, "x").size(), 32u);
}

TEST(HexEncode, IsLowerCase) { EXPECT_EQ(HexEncode(std::string("\x00\xab\xff", 3)), "00abff"); }

TEST(ConstantTimeEquals, ComparesContentsAndLength) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
}

}  // namespace
}  // namespace amt::auth
