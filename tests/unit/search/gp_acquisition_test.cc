#include "orchestrator/search/gp_acquisition.h"

#include <gtest/gtest.h>

#include <cmath>

namespace amt::search {
namespace {

double DirectH(double z) {
  const double phi = std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
  const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
  return phi + z * cdf;
}

TEST(LogH, MatchesTheDirectFormulaWhereItIsAccurate) {
  for (double z = -5; z <= 5; z += 0.25) {
    EXPECT_NEAR(LogH(z), std::log(DirectH(z)), 1e-9) << z;
  }
}

TEST(LogH, IsNearlyContinuousAtTheAsymptoticSwitch) {
  EXPECT_NEAR(LogH(-25.0 - 1e-9), LogH(-25.0 + 1e-9), 1e-6);
  EXPECT_NEAR(DLogH(-25.0 - 1e-9), DLogH(-25.0 + 1e-9), 1e-6);
}

TEST(LogH, StaysFiniteAndDecreasingFarBelowTheIncumbent) {
  // EI itself underflows to 0 near z = -38; log EI keeps ranking candidates.
  double previous = LogH(-6.5);
  // Between the two regimes too.
  for (double z : {-10.0, -24.0, -26.0, -40.0, -100.0, -1e4}) {
    const double v = LogH(z);
    EXPECT_TRUE(std::isfinite(v)) << z;
    EXPECT_LT(v, previous) << z;
    previous = v;
  }
}

TEST(DLogH, MatchesFiniteDifferences) {
  for (double z : {-30.0, -8.0, -3.0, -0.5, 0.0, 1.5, 4.0}) {
    const double h = 1e-6 * std::max(1.0, std::fabs(z));
    EXPECT_NEAR(DLogH(z), (LogH(z + h) - LogH(z - h)) / (2 * h), 1e-4 * std::max(1.0, std::fabs(z)))
        << z;
  }
}

TEST(LogExpectedImprovement, MatchesClosedFormEi) {
  const double mean = 0.3;
  const double variance = 0.04;
  const double best = 0.1;
  const double sigma = 0.2;
  const double z = (best - mean) / sigma;
  EXPECT_NEAR(std::exp(LogExpectedImprovement(mean, variance, best)), sigma * DirectH(z), 1e-12);
}

TEST(LogExpectedImprovement, GradientsMatchFiniteDifferences) {
  for (double mean : {-1.0, 0.2, 2.5}) {
    double d_mean = 0;
    double d_variance = 0;
    const double variance = 0.3;
    const double best = 0.0;
    LogExpectedImprovement(mean, variance, best, &d_mean, &d_variance);
    const double h = 1e-6;
    EXPECT_NEAR(d_mean,
                (LogExpectedImprovement(mean + h, variance, best) -
                 LogExpectedImprovement(mean - h, variance, best)) /
                    (2 * h),
                1e-5);
    EXPECT_NEAR(d_variance,
                (LogExpectedImprovement(mean, variance + h, best) -
                 LogExpectedImprovement(mean, variance - h, best)) /
                    (2 * h),
                1e-5);
  }
}

TEST(LogExpectedImprovement, PrefersLowerMeanAndLargerVariance) {
  EXPECT_GT(LogExpectedImprovement(0.0, 0.1, 0.5), LogExpectedImprovement(0.2, 0.1, 0.5));
  EXPECT_GT(LogExpectedImprovement(1.0, 0.5, 0.5), LogExpectedImprovement(1.0, 0.1, 0.5));
}

}  // namespace
}  // namespace amt::search
