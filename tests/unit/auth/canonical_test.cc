#include "orchestrator/auth/canonical.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/crypto.h"

namespace amt::auth {
namespace {

using ::testing::ElementsAre;

TEST(UriEncode, KeepsOnlyUnreservedCharacters) {
  EXPECT_EQ(UriEncode("AZaz09-._~", false), "AZaz09-._~");
  EXPECT_EQ(UriEncode("a b+c=d/e%f", false), "a%20b%2Bc%3Dd%2Fe%25f");
  EXPECT_EQ(UriEncode("a b/c", true), "a%20b/c");
  EXPECT_EQ(UriEncode("\xE1\x88\xB4", false), "%E1%88%B4");  // upper-case hex
}

TEST(PercentDecode, DecodesEscapesAndKeepsTheRest) {
  EXPECT_EQ(PercentDecode("a%20b%2fc%2F"), "a b/c/");
  EXPECT_EQ(PercentDecode("a+b"), "a+b");
  EXPECT_EQ(PercentDecode("100%"), "100%");
  EXPECT_EQ(PercentDecode("%zz%4"), "%zz%4");
}

TEST(RemoveDotSegments, FollowsBotocore) {
  EXPECT_EQ(RemoveDotSegments("/"), "/");
  EXPECT_EQ(RemoveDotSegments("//"), "/");
  EXPECT_EQ(RemoveDotSegments("/./"), "/");
  EXPECT_EQ(RemoveDotSegments("/example1/example2/../.."), "/");
  EXPECT_EQ(RemoveDotSegments("//example//"), "/example/");
  EXPECT_EQ(RemoveDotSegments("/a/./b/../c"), "/a/c");
  EXPECT_EQ(RemoveDotSegments("/.."), "/");
}

TEST(CanonicalUri, EncodesTheWirePathAgainExceptForS3) {
  EXPECT_EQ(CanonicalUri("/bucket/a%20b", /*s3=*/true), "/bucket/a%20b");
  EXPECT_EQ(CanonicalUri("/bucket//./a", /*s3=*/true), "/bucket//./a");
  EXPECT_EQ(CanonicalUri("/functions/f%3Ax/invocations", /*s3=*/false),
            "/functions/f%253Ax/invocations");
  EXPECT_EQ(CanonicalUri("/example space/", /*s3=*/false), "/example%20space/");
  EXPECT_EQ(CanonicalUri("", /*s3=*/false), "/");
  EXPECT_EQ(CanonicalUri("", /*s3=*/true), "/");
}

TEST(ParseQuery, DecodesPairsInOrder) {
  const std::vector<QueryParam> params = ParseQuery("b=2&&a&c=x%3Dy=z");
  ASSERT_EQ(params.size(), 3u);
  EXPECT_EQ(params[0].name, "b");
  EXPECT_EQ(params[0].value, "2");
  EXPECT_EQ(params[1].name, "a");
  EXPECT_EQ(params[1].value, "");
  EXPECT_EQ(params[2].name, "c");
  EXPECT_EQ(params[2].value, "x=y=z");
}

TEST(CanonicalQueryString, SortsByEncodedNameThenValue) {
  EXPECT_EQ(CanonicalQueryString(ParseQuery("Param2=value2&Param1=value1")),
            "Param1=value1&Param2=value2");
  EXPECT_EQ(CanonicalQueryString(ParseQuery("Param1=value2&Param1=value1")),
            "Param1=value1&Param1=value2");
  // Upper case sorts before lower case (byte order), as the suite's get-vanilla-query-order-key.
  EXPECT_EQ(CanonicalQueryString(ParseQuery("a=1&B=2")), "B=2&a=1");
  EXPECT_EQ(CanonicalQueryString(ParseQuery("\xE1\x88\xB4=bar")), "%E1%88%B4=bar");
  // The same bytes, however the client escaped them.
  EXPECT_EQ(CanonicalQueryString(ParseQuery("k=%7e%41")), "k=~A");
  EXPECT_EQ(CanonicalQueryString(ParseQuery("flag&x=a%20b")), "flag=&x=a%20b");
}

TEST(CanonicalQueryString, LeavesOutTheExcludedName) {
  EXPECT_EQ(CanonicalQueryString(ParseQuery("X-Amz-Signature=abc&b=1"), "X-Amz-Signature"), "b=1");
}

TEST(TrimAll, TrimsAndCollapsesWhitespace) {
  EXPECT_EQ(TrimAll("  value1 "), "value1");
  EXPECT_EQ(TrimAll("\"a   b   c\""), "\"a b c\"");
  EXPECT_EQ(TrimAll("a\t \tb"), "a b");
  EXPECT_EQ(TrimAll(""), "");
}

TEST(SignedHeaderNames, LowersSortsAndDeduplicates) {
  EXPECT_THAT(SignedHeaderNames("X-Amz-Date;host;;Host"), ElementsAre("host", "x-amz-date"));
}

TEST(CanonicalHeaders, JoinsRepeatsInOrderAndLeavesAbsentOnesEmpty) {
  const HeaderList headers = {
      {"My-Header1", "value2"}, {"Host", "example.amazonaws.com"}, {"my-header1", " value1  x "}};
  EXPECT_EQ(CanonicalHeaders(headers, {"host", "my-header1", "x-absent"}),
            "host:example.amazonaws.com\nmy-header1:value2,value1 x\nx-absent:\n");
}

// AWS's test suite, post-x-www-form-urlencoded: the .creq and .sts files, byte for byte.
TEST(CanonicalRequest, MatchesTheSuitesPostXWwwFormUrlencoded) {
  const HeaderList headers = {{"Content-Type", "application/x-www-form-urlencoded"},
                              {"Host", "example.amazonaws.com"},
                              {"X-Amz-Date", "20150830T123600Z"}};
  const std::vector<std::string> names = SignedHeaderNames("content-type;host;x-amz-date");
  const std::string canonical_request =
      CanonicalRequest("POST", CanonicalUri("/", false), CanonicalQueryString({}),
                       CanonicalHeaders(headers, names), names, Sha256Hex("Param1=value1"));
  EXPECT_EQ(canonical_request,
            "POST\n/\n\ncontent-type:application/x-www-form-urlencoded\n"
            "host:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
            "content-type;host;x-amz-date\n"
            "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e");
  const std::string string_to_sign = StringToSign(
      "20150830T123600Z", "20150830/us-east-1/service/aws4_request", canonical_request);
  EXPECT_EQ(string_to_sign,
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
            "42a5e5bb34198acb3e84da4f085bb7927f2bc277ca766e6d19c73c2154021281");
  EXPECT_EQ(Signature(SigningKey("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20150830",
                                 "us-east-1", "service"),
                      string_to_sign),
            "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a");
}

// The signing-key example of AWS's SigV4 documentation ("Derive a signing key": IAM).
TEST(SigningKey, MatchesTheDocumentationExample) {
  EXPECT_EQ(HexEncode(SigningKey("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20150830",
                                 "us-east-1", "iam")),
            "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9");
}

}  // namespace
}  // namespace amt::auth
