#include "orchestrator/spot/spot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "tests/support/status_matchers.h"

namespace amt::spot {
namespace {

using ::amt::testing::IsOk;

TEST(InterruptionAfter, IsTheSameForTheSameSeedJobAndAttempt) {
  const SpotOptions options;
  const auto a = InterruptionAfter(options, 7, "job-001", 1, 0);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a, InterruptionAfter(options, 7, "job-001", 1, 0));
  EXPECT_NE(a, InterruptionAfter(options, 8, "job-001", 1, 0));
  EXPECT_NE(a, InterruptionAfter(options, 7, "job-002", 1, 0));
  EXPECT_NE(a, InterruptionAfter(options, 7, "job-001", 2, 0));
  EXPECT_GT(*a, 0);
}

TEST(InterruptionAfter, HasTheConfiguredMean) {
  SpotOptions options;
  options.mean_seconds_to_interruption = 100;
  double sum = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i)
    sum += *InterruptionAfter(options, 1, "job-" + std::to_string(i), 1, 0);
  EXPECT_NEAR(sum / n, 100, 3);  // standard error 100/sqrt(20000) = 0.7
}

TEST(InterruptionAfter, StopsAfterMaxInterruptionsAndWhenDisabled) {
  SpotOptions options;
  options.max_interruptions = 2;
  EXPECT_TRUE(InterruptionAfter(options, 1, "j", 2, 1).has_value());
  EXPECT_FALSE(InterruptionAfter(options, 1, "j", 3, 2).has_value());
  options.mean_seconds_to_interruption = 0;
  EXPECT_FALSE(InterruptionAfter(options, 1, "j", 1, 0).has_value());
}

TEST(BillableSeconds, AppliesTheDiscountAndBillsAtLeastOneSecond) {
  const SpotOptions options;  // discount 0.7
  EXPECT_EQ(BillableSeconds(options, 500), 150);
  EXPECT_EQ(BillableSeconds(options, 1), 1);
  EXPECT_EQ(BillableSeconds(options, 0), 0);
  SpotOptions eighty;
  eighty.discount = 0.8;
  EXPECT_EQ(BillableSeconds(eighty, 500), 100);  // the spec's example: 80% savings
}

TEST(ValidateSpotOptions, NamesTheBadField) {
  SpotOptions options;
  EXPECT_THAT(ValidateSpotOptions(options), IsOk());
  options.discount = 1;
  EXPECT_EQ(ValidateSpotOptions(options).message(), "SpotOptions.discount must be in [0, 1).");
  options = {};
  options.max_interruptions = -1;
  EXPECT_EQ(ValidateSpotOptions(options).message(), "SpotOptions.max_interruptions must be >= 0.");
  options = {};
  options.mean_seconds_to_interruption = -1;
  EXPECT_EQ(ValidateSpotOptions(options).message(),
            "SpotOptions.mean_seconds_to_interruption must be >= 0.");
  options = {};
  options.interrupt_after_seconds = -2;
  EXPECT_EQ(ValidateSpotOptions(options).message(),
            "SpotOptions.interrupt_after_seconds must be >= 0.");
}

TEST(InterruptionAfter, IsTheFixedTimeForEveryAttemptWhenOneIsGiven) {
  SpotOptions options;
  options.interrupt_after_seconds = 5;
  options.max_interruptions = 2;
  EXPECT_EQ(InterruptionAfter(options, 1, "job-a", 1, 0), 5.0);
  EXPECT_EQ(InterruptionAfter(options, 9, "job-b", 2, 1), 5.0);  // whatever the seed and job
  EXPECT_FALSE(InterruptionAfter(options, 1, "job-a", 3, 2).has_value());  // max reached
  options.mean_seconds_to_interruption = 0;  // the fixed time does not need a mean
  EXPECT_EQ(InterruptionAfter(options, 1, "job-a", 1, 0), 5.0);
}

}  // namespace
}  // namespace amt::spot
