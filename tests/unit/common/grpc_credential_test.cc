#include "common/grpc_credential.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace amt::auth {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;
using ::testing::HasSubstr;

Credentials Parse(const std::string& text) {
  auto parsed = Credentials::Parse(text, "test");
  EXPECT_THAT(parsed.status(), IsOk());
  return *parsed;
}

const Credentials& TwoProfiles() {
  static const Credentials* credentials =
      new Credentials(Parse("[default]\naws_access_key_id = A1\naws_secret_access_key = s1\n"
                            "[other]\naws_access_key_id = A2\naws_secret_access_key = s2\n"));
  return *credentials;
}

TEST(GrpcCredential, VerifiesWhatItMadeWithinTheSkew) {
  const std::string value = MakeGrpcCredential("A1", "s1", 1000);
  EXPECT_THAT(value, ::testing::StartsWith("A1 1000 "));
  auto verified = VerifyGrpcCredential(value, TwoProfiles(), 1000 + 900);
  ASSERT_THAT(verified.status(), IsOk());
  EXPECT_EQ(*verified, "A1");
  EXPECT_THAT(VerifyGrpcCredential(value, TwoProfiles(), 1000 - 900).status(), IsOk());
}

TEST(GrpcCredential, RefusesEachWayItCanBeWrong) {
  const auto refused = [](const std::string& value, int64_t now) {
    return VerifyGrpcCredential(value, TwoProfiles(), now).status();
  };
  EXPECT_THAT(refused("", 1000),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("requires credentials")));
  EXPECT_THAT(refused("A1 1000", 1000),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("malformed")));
  EXPECT_THAT(refused("A1 soon abc", 1000),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("malformed")));
  EXPECT_THAT(refused(MakeGrpcCredential("A9", "s1", 1000), 1000),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("token")));
  EXPECT_THAT(refused(MakeGrpcCredential("A1", "s1", 1000), 1901),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("expired")));
  EXPECT_THAT(refused(MakeGrpcCredential("A1", "s2", 1000), 1000),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("does not match")));
  // Another key's signature does not pass for A1's.
  std::string swapped = MakeGrpcCredential("A2", "s2", 1000);
  swapped.replace(0, 2, "A1");
  EXPECT_THAT(refused(swapped, 1000), StatusIs(absl::StatusCode::kUnauthenticated));
}

TEST(GrpcCredential, ClientKeyIdPicksTheProfileThenDefaultThenTheOnlyKey) {
  EXPECT_EQ(*ClientKeyId(TwoProfiles(), "other"), "A2");
  EXPECT_EQ(*ClientKeyId(TwoProfiles(), ""), "A1");
  EXPECT_THAT(ClientKeyId(TwoProfiles(), "missing").status(),
              StatusIs(absl::StatusCode::kNotFound));
  const Credentials one = Parse("[solo]\naws_access_key_id = S\naws_secret_access_key = x\n");
  EXPECT_EQ(*ClientKeyId(one, ""), "S");
  const Credentials two_without_default = Parse(
      "[a]\naws_access_key_id = A\naws_secret_access_key = x\n"
      "[b]\naws_access_key_id = B\naws_secret_access_key = y\n");
  EXPECT_THAT(ClientKeyId(two_without_default, "").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--profile")));
}

}  // namespace
}  // namespace amt::auth
