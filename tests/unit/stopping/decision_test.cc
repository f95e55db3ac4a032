#include "orchestrator/stopping/decision.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace amt::stopping {
namespace {

TEST(ReasonName, GivesStableSnakeCaseNames) {
  EXPECT_EQ(ReasonName(Reason::kNotWorse), "not_worse");
  EXPECT_EQ(ReasonName(Reason::kWorse), "worse");
  EXPECT_EQ(ReasonName(Reason::kTooFewReferences), "too_few_references");
  EXPECT_EQ(ReasonName(Reason::kGracePeriod), "grace_period");
  EXPECT_EQ(ReasonName(Reason::kBelowMinResource), "below_min_resource");
  EXPECT_EQ(ReasonName(Reason::kNotARung), "not_a_rung");
  EXPECT_EQ(ReasonName(Reason::kTooFewAtRung), "too_few_at_rung");
  EXPECT_EQ(ReasonName(Reason::kInTopFraction), "in_top_fraction");
  EXPECT_EQ(ReasonName(Reason::kOutsideTopFraction), "outside_top_fraction");
  EXPECT_EQ(ReasonName(Reason::kReachedMaxResource), "reached_max_resource");
}

TEST(FormatValue, UsesSixSignificantDigits) {
  EXPECT_EQ(FormatValue(0.52), "0.52");
  EXPECT_EQ(FormatValue(1.0 / 3.0), "0.333333");
  EXPECT_EQ(FormatValue(1234567.0), "1.23457e+06");
}

TEST(FormatCompared, UsesSixDigitsWhenTheyTellValuesApart) {
  EXPECT_EQ(FormatCompared(0.52, 0.41), std::make_pair(std::string("0.52"), std::string("0.41")));
}

TEST(FormatCompared, AddsDigitsUntilCloseValuesDiffer) {
  EXPECT_EQ(FormatCompared(0.4100001, 0.41),
            std::make_pair(std::string("0.4100001"), std::string("0.41")));
  auto [a, b] = FormatCompared(0.1 + 0.2, 0.3);
  EXPECT_NE(a, b);
  EXPECT_EQ(a, "0.30000000000000004");
}

TEST(FormatCompared, KeepsSixDigitsForEqualValues) {
  EXPECT_EQ(FormatCompared(2.0, 2.0), std::make_pair(std::string("2"), std::string("2")));
}

}  // namespace
}  // namespace amt::stopping
