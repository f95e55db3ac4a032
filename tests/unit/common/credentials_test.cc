#include "common/credentials.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "tests/support/status_matchers.h"

namespace amt::auth {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;

TEST(Credentials, ReadsProfilesAmidCommentsBlankLinesAndOtherKeys) {
  const absl::StatusOr<Credentials> credentials = Credentials::Parse(
      "# amtd's keys\r\n"
      "[default]\r\n"
      "  aws_access_key_id=AKIDDEFAULT\r\n"
      "aws_secret_access_key   =   secret/one+x  \r\n"
      "\r\n"
      "; a second profile, ':' as configparser allows, keys in any case\n"
      "[ ci ]\n"
      "AWS_Access_Key_Id: AKIDCI\n"
      "aws_secret_access_key: s#not;a=comment\n"
      "aws_session_token = FwoGZXIvYXdzEBY=\n"
      "region = us-east-1\n"
      "[role-only]\n"
      "role_arn = arn:aws:iam::123456789012:role/x\n"
      "source_profile = default\n",
      "creds");
  ASSERT_THAT(credentials, IsOk());
  EXPECT_EQ(credentials->size(), 2u);
  const Credential* first = credentials->Find("AKIDDEFAULT");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->secret_access_key, "secret/one+x");
  EXPECT_EQ(first->profile, "default");
  const Credential* second = credentials->Find("AKIDCI");
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->secret_access_key, "s#not;a=comment");
  EXPECT_EQ(second->profile, "ci");
  EXPECT_EQ(credentials->Find("akidci"), nullptr);  // key ids are case-sensitive
  EXPECT_EQ(credentials->Find("AKIDNONE"), nullptr);
}

TEST(Credentials, SkipsAUtf8ByteOrderMark) {
  const absl::StatusOr<Credentials> credentials = Credentials::Parse(
      "\xEF\xBB\xBF[a]\naws_access_key_id = K\naws_secret_access_key = S\n", "creds");
  ASSERT_THAT(credentials, IsOk());
  EXPECT_NE(credentials->Find("K"), nullptr);
}

TEST(Credentials, KeepsTheFirstProfileWhenAKeyRepeatsWithTheSameSecret) {
  const absl::StatusOr<Credentials> credentials = Credentials::Parse(
      "[a]\naws_access_key_id = K\naws_secret_access_key = S\n"
      "[b]\naws_access_key_id = K\naws_secret_access_key = S\n",
      "creds");
  ASSERT_THAT(credentials, IsOk());
  EXPECT_EQ(credentials->size(), 1u);
  EXPECT_EQ(credentials->Find("K")->profile, "a");
}

TEST(Credentials, RefusesTheSameKeyWithDifferentSecretsWithoutQuotingThem) {
  const absl::StatusOr<Credentials> credentials = Credentials::Parse(
      "[a]\naws_access_key_id = K\naws_secret_access_key = FIRSTSECRET\n"
      "\n[b]\naws_secret_access_key = SECONDSECRET\naws_access_key_id = K\n",
      "creds");
  EXPECT_THAT(credentials,
              StatusIs(kInvalid,
                       "creds:7: access key id K of [b] is also in [a] (line 2) with a "
                       "different secret"));
  EXPECT_THAT(credentials.status().message(), Not(HasSubstr("SECRET")));
}

TEST(Credentials, RefusesAProfileWithOnlyOneOfTheTwoKeys) {
  EXPECT_THAT(
      Credentials::Parse("[ok]\naws_access_key_id = A\naws_secret_access_key = B\n"
                         "[half]\naws_access_key_id = C\n",
                         "creds"),
      StatusIs(kInvalid,
               "creds:4: profile [half] has aws_access_key_id but no aws_secret_access_key"));
  EXPECT_THAT(
      Credentials::Parse("[half]\naws_secret_access_key = B\n", "creds"),
      StatusIs(kInvalid,
               "creds:1: profile [half] has aws_secret_access_key but no aws_access_key_id"));
}

TEST(Credentials, RefusesMalformedLinesWithFileAndLine) {
  EXPECT_THAT(Credentials::Parse("[a]\naws_access_key_id = A\njust words\n", "creds"),
              StatusIs(kInvalid, "creds:3: expected [profile], key = value, or a comment"));
  EXPECT_THAT(Credentials::Parse("[unterminated\n", "creds"),
              StatusIs(kInvalid, "creds:1: expected [profile-name]"));
  EXPECT_THAT(Credentials::Parse("[   ]\n", "creds"),
              StatusIs(kInvalid, "creds:1: expected [profile-name]"));
  EXPECT_THAT(Credentials::Parse("[a]\n = value\n", "creds"),
              StatusIs(kInvalid, "creds:2: expected a key name before '='"));
  EXPECT_THAT(Credentials::Parse("aws_access_key_id = A\n[a]\n", "creds"),
              StatusIs(kInvalid, "creds:1: aws_access_key_id is outside any [profile] section"));
}

TEST(Credentials, RefusesRepeatsAndEmptyValues) {
  EXPECT_THAT(Credentials::Parse("[a]\naws_access_key_id = A\naws_access_key_id = B\n", "creds"),
              StatusIs(kInvalid, "creds:3: aws_access_key_id in [a] repeats line 2"));
  EXPECT_THAT(Credentials::Parse("[a]\n[b]\n[a]\n", "creds"),
              StatusIs(kInvalid, "creds:3: profile [a] repeats line 1"));
  EXPECT_THAT(Credentials::Parse("[a]\naws_access_key_id =\n", "creds"),
              StatusIs(kInvalid, "creds:2: empty aws_access_key_id"));
}

TEST(Credentials, RefusesASecretContinuedOnAnIndentedLine) {
  EXPECT_THAT(
      Credentials::Parse("[a]\naws_access_key_id = A\naws_secret_access_key = B\n  C\n", "creds"),
      StatusIs(kInvalid,
               "creds:4: indented line continues aws_secret_access_key (a value "
               "must fit on one line)"));
  // Continuations of keys amtd ignores are fine (configparser's nested values).
  EXPECT_THAT(Credentials::Parse("[a]\naws_access_key_id = A\naws_secret_access_key = B\n"
                                 "s3 =\n  max_concurrent_requests = 10\n",
                                 "creds"),
              IsOk());
}

TEST(Credentials, RefusesAFileWithoutAnyKey) {
  EXPECT_THAT(Credentials::Parse("", "creds"), StatusIs(kInvalid, "no access key in creds"));
  EXPECT_THAT(Credentials::Parse("# nothing\n[role]\nrole_arn = x\n", "creds"),
              StatusIs(kInvalid, "no access key in creds"));
}

TEST(Credentials, LoadsAFileAndNamesItInErrors) {
  const std::string path = ::testing::TempDir() + "amt_auth_credentials_test";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << "[default]\naws_access_key_id = AKIDFILE\naws_secret_access_key = S\n[x]\nbad\n";
  }
  EXPECT_THAT(Credentials::Load(path),
              StatusIs(kInvalid, path + ":5: expected [profile], key = value, or a comment"));
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << "[default]\naws_access_key_id = AKIDFILE\naws_secret_access_key = S\n";
  }
  const absl::StatusOr<Credentials> credentials = Credentials::Load(path);
  ASSERT_THAT(credentials, IsOk());
  EXPECT_NE(credentials->Find("AKIDFILE"), nullptr);
  std::remove(path.c_str());
  EXPECT_THAT(Credentials::Load(path),
              StatusIs(absl::StatusCode::kNotFound, "cannot read credentials file " + path));
}

}  // namespace
}  // namespace amt::auth
