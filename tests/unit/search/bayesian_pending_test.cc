// Tests of the trust region's side (bayesian_pending.cc); the fantasies and the local penalty
// are exercised through BayesianStrategy in bayesian_test.cc.
#include <gtest/gtest.h>

#include <vector>

#include "orchestrator/search/bayesian_internal.h"

namespace amt::search::internal {
namespace {

TEST(TrustRegionSide, StartsAtTheInitialSideAndIgnoresTheDesign) {
  EXPECT_EQ(TrustRegionSide({}, 0, 2), kTrustRegionInitialSide);
  // Every design result is a "failure" to beat the first, but the design does not count.
  EXPECT_EQ(TrustRegionSide({1, 2, 3, 4, 5, 6, 7, 8}, 8, 2), kTrustRegionInitialSide);
}

TEST(TrustRegionSide, HalvesAfterAsManyFailuresAsParametersButAtLeastFour) {
  const std::vector<double> four_failures = {1, 2, 2, 2, 2};
  EXPECT_EQ(TrustRegionSide(four_failures, 1, 2), kTrustRegionInitialSide / 2);
  EXPECT_EQ(TrustRegionSide(four_failures, 1, 6), kTrustRegionInitialSide);
  const std::vector<double> six_failures = {1, 2, 2, 2, 2, 2, 2};
  EXPECT_EQ(TrustRegionSide(six_failures, 1, 6), kTrustRegionInitialSide / 2);
}

TEST(TrustRegionSide, DoublesAfterThreeSuccessesUpToTheMaximum) {
  EXPECT_EQ(TrustRegionSide({10, 9, 8, 7}, 1, 2), 2 * kTrustRegionInitialSide);
  EXPECT_EQ(TrustRegionSide({10, 9, 8, 7, 6, 5, 4}, 1, 2), kTrustRegionMaxSide);
}

TEST(TrustRegionSide, ASuccessMustImproveByMoreThanAThousandthOfTheBest) {
  // 99.95 is below 100 but within 1e-3 of it: a failure; 99.8 is a success that resets the
  // failure count.
  EXPECT_EQ(TrustRegionSide({100, 99.95, 99.95, 99.95, 99.95}, 1, 2), kTrustRegionInitialSide / 2);
  EXPECT_EQ(TrustRegionSide({100, 99.95, 99.95, 99.95, 99.8, 99.8}, 1, 2), kTrustRegionInitialSide);
}

TEST(TrustRegionSide, StartsAgainOnceItFallsBelowTheMinimum) {
  // 0.8 halves 6 times to 0.0125, the 7th halving (0.00625 < 1/128) restarts it.
  std::vector<double> results = {0};
  for (int i = 0; i < 4 * 6; ++i) results.push_back(1);
  EXPECT_DOUBLE_EQ(TrustRegionSide(results, 1, 2), kTrustRegionInitialSide / 64);
  for (int i = 0; i < 4; ++i) results.push_back(1);
  EXPECT_EQ(TrustRegionSide(results, 1, 2), kTrustRegionInitialSide);
}

}  // namespace
}  // namespace amt::search::internal
