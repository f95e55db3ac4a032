// GoogleMock matchers for absl::Status and absl::StatusOr<T>, shared by every test
// (docs/style.md item 2, after LevelDB's testutil.h):
//
//   EXPECT_THAT(store.Put(record), IsOk());
//   EXPECT_THAT(Parse(text), StatusIs(absl::StatusCode::kInvalidArgument));
//   EXPECT_THAT(Parse(text), StatusIs(absl::StatusCode::kInvalidArgument, "exact message"));
//   EXPECT_THAT(Parse(text), StatusIs(absl::StatusCode::kNotFound, HasSubstr("no-such-job")));
//
// On a mismatch the failure shows the whole status (code and message). ASSERT_THAT(x, IsOk())
// replaces `ASSERT_TRUE(x.ok()) << x.status()`.
#ifndef AMT_TESTS_SUPPORT_STATUS_MATCHERS_H_
#define AMT_TESTS_SUPPORT_STATUS_MATCHERS_H_

#include <gmock/gmock.h>

#include <ostream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace amt::testing {
namespace internal {

inline const absl::Status& GetStatus(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

// StatusIs(code, message): `message` is a string (compared for equality) or any matcher of a
// std::string.
class StatusIsMatcher {
 public:
  StatusIsMatcher(absl::StatusCode code, ::testing::Matcher<const std::string&> message)
      : code_(code), message_(std::move(message)) {}

  template <typename StatusType>
  bool MatchAndExplain(const StatusType& value, ::testing::MatchResultListener* listener) const {
    const absl::Status& status = GetStatus(value);
    *listener << "whose status is " << status;
    if (status.code() != code_) return false;
    ::testing::StringMatchResultListener message_listener;
    const bool matched = message_.MatchAndExplain(std::string(status.message()), &message_listener);
    if (!matched && !message_listener.str().empty()) *listener << ", " << message_listener.str();
    return matched;
  }

  void DescribeTo(std::ostream* os) const {
    *os << "has status code " << absl::StatusCodeToString(code_) << " and a message that ";
    message_.DescribeTo(os);
  }
  void DescribeNegationTo(std::ostream* os) const {
    *os << "has a status code other than " << absl::StatusCodeToString(code_)
        << " or a message that ";
    message_.DescribeNegationTo(os);
  }

 private:
  absl::StatusCode code_;
  ::testing::Matcher<const std::string&> message_;
};

class IsOkMatcher {
 public:
  template <typename StatusType>
  bool MatchAndExplain(const StatusType& value, ::testing::MatchResultListener* listener) const {
    const absl::Status& status = GetStatus(value);
    if (!status.ok()) *listener << "whose status is " << status;
    return status.ok();
  }
  void DescribeTo(std::ostream* os) const { *os << "is OK"; }
  void DescribeNegationTo(std::ostream* os) const { *os << "is not OK"; }
};

}  // namespace internal

// Matches an OK absl::Status, or an absl::StatusOr<T> that holds a value.
inline ::testing::PolymorphicMatcher<internal::IsOkMatcher> IsOk() {
  return ::testing::MakePolymorphicMatcher(internal::IsOkMatcher());
}

// Matches a Status (or StatusOr's status) with `code` and any message.
inline ::testing::PolymorphicMatcher<internal::StatusIsMatcher> StatusIs(absl::StatusCode code) {
  return ::testing::MakePolymorphicMatcher(internal::StatusIsMatcher(code, ::testing::_));
}

// Matches a Status (or StatusOr's status) with `code` and a message equal to `message` (a
// string) or matching it (a matcher, e.g. HasSubstr("...")).
template <typename MessageMatcher>
::testing::PolymorphicMatcher<internal::StatusIsMatcher> StatusIs(absl::StatusCode code,
                                                                  MessageMatcher&& message) {
  return ::testing::MakePolymorphicMatcher(internal::StatusIsMatcher(
      code, ::testing::MatcherCast<const std::string&>(std::forward<MessageMatcher>(message))));
}

}  // namespace amt::testing

#endif  // AMT_TESTS_SUPPORT_STATUS_MATCHERS_H_
