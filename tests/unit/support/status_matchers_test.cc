#include "tests/support/status_matchers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace amt::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The failure text a matcher gives for `value`.
template <typename M, typename T>
std::string Explain(const M& matcher, const T& value) {
  ::testing::StringMatchResultListener listener;
  ::testing::ExplainMatchResult(matcher, value, &listener);
  return listener.str();
}

TEST(IsOk, MatchesOkStatusAndStatusOrWithValue) {
  EXPECT_THAT(absl::OkStatus(), IsOk());
  EXPECT_THAT(absl::StatusOr<int>(3), IsOk());
  EXPECT_THAT(absl::NotFoundError("gone"), Not(IsOk()));
  EXPECT_THAT(absl::StatusOr<int>(absl::InternalError("boom")), Not(IsOk()));
}

TEST(IsOk, ExplainsWithTheWholeStatus) {
  EXPECT_EQ(Explain(IsOk(), absl::NotFoundError("no job x")),
            "whose status is NOT_FOUND: no job x");
  EXPECT_EQ(::testing::DescribeMatcher<absl::Status>(IsOk()), "is OK");
}

TEST(StatusIs, MatchesCodeAlone) {
  EXPECT_THAT(absl::InvalidArgumentError("bad"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(absl::StatusOr<std::string>(absl::OutOfRangeError("end")),
              StatusIs(absl::StatusCode::kOutOfRange));
  EXPECT_THAT(absl::InvalidArgumentError("bad"), Not(StatusIs(absl::StatusCode::kNotFound)));
  EXPECT_THAT(absl::OkStatus(), StatusIs(absl::StatusCode::kOk));
  EXPECT_THAT(absl::StatusOr<int>(1), Not(StatusIs(absl::StatusCode::kInternal)));
}

TEST(StatusIs, MatchesExactMessageOrMessageMatcher) {
  const absl::Status status = absl::NotFoundError("training job x does not exist");
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kNotFound, "training job x does not exist"));
  EXPECT_THAT(status,
              StatusIs(absl::StatusCode::kNotFound, std::string("training job x does not exist")));
  EXPECT_THAT(status, Not(StatusIs(absl::StatusCode::kNotFound, "training job x")));
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kNotFound, HasSubstr("does not exist")));
  EXPECT_THAT(status, Not(StatusIs(absl::StatusCode::kInternal, HasSubstr("does not exist"))));
}

TEST(StatusIs, DescribesCodeAndMessage) {
  EXPECT_EQ(::testing::DescribeMatcher<absl::Status>(
                StatusIs(absl::StatusCode::kNotFound, HasSubstr("x"))),
            "has status code NOT_FOUND and a message that has substring \"x\"");
  EXPECT_EQ(Explain(StatusIs(absl::StatusCode::kNotFound), absl::InternalError("boom")),
            "whose status is INTERNAL: boom");
}

}  // namespace
}  // namespace amt::testing
