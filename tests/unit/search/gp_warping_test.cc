#include "orchestrator/search/gp_warping.h"

#include <gtest/gtest.h>

#include <cmath>

namespace amt::search {
namespace {

TEST(YeoJohnson, IsTheIdentityAtLambdaOne) {
  for (double y : {-3.0, -0.5, 0.0, 0.7, 12.0}) EXPECT_NEAR(YeoJohnson(y, 1.0), y, 1e-12);
}

TEST(YeoJohnson, IsLogOnePlusYAtLambdaZero) {
  EXPECT_NEAR(YeoJohnson(3.0, 0.0), std::log(4.0), 1e-12);
  EXPECT_NEAR(YeoJohnson(-3.0, 0.0), -(16.0 - 1.0) / 2.0, 1e-12);
}

TEST(OutputWarping, StandardisesTheFittedSample) {
  Eigen::VectorXd y(6);
  y << 3, 7, 1, 9, 4, 4.5;
  const OutputWarping w = OutputWarping::Fit(y);
  const Eigen::VectorXd t = w.Apply(y);
  EXPECT_NEAR(t.mean(), 0.0, 1e-12);
  EXPECT_NEAR((t.array() - t.mean()).square().sum() / t.size(), 1.0, 1e-9);
}

TEST(OutputWarping, CompressesALongTailOfBadValues) {
  // Losses spread over orders of magnitude: mostly small, a few huge.
  Eigen::VectorXd y(12);
  y << 0.1, 0.12, 0.15, 0.2, 0.3, 0.5, 0.8, 1.5, 3, 10, 50, 300;
  const OutputWarping w = OutputWarping::Fit(y);
  EXPECT_LT(w.lambda(), 0.5);
  // The best values are further apart than a plain standardisation leaves them.
  const double sd = std::sqrt((y.array() - y.mean()).square().mean());
  const double plain_gap = (0.15 - 0.1) / sd;
  EXPECT_GT(w.Apply(0.15) - w.Apply(0.1), 2 * plain_gap);
}

TEST(OutputWarping, KeepsSymmetricDataNearlyLinear) {
  Eigen::VectorXd y(9);
  y << -4, -3, -2, -1, 0, 1, 2, 3, 4;
  EXPECT_GT(OutputWarping::Fit(y).lambda(), 0.8);
}

TEST(OutputWarping, IsMonotonic) {
  Eigen::VectorXd y(5);
  y << 1, 2, 4, 8, 1000;
  const OutputWarping w = OutputWarping::Fit(y);
  double previous = w.Apply(-10.0);
  for (double v = -9; v < 2000; v += 7.3) {
    EXPECT_GT(w.Apply(v), previous) << v;
    previous = w.Apply(v);
  }
}

TEST(OutputWarping, HandlesTinyAndConstantSamples) {
  EXPECT_TRUE(std::isfinite(OutputWarping::Fit(Eigen::VectorXd::Constant(1, 5.0)).Apply(5.0)));
  const OutputWarping constant = OutputWarping::Fit(Eigen::VectorXd::Constant(4, 2.0));
  EXPECT_DOUBLE_EQ(constant.Apply(2.0), 0.0);
  EXPECT_GT(constant.Apply(3.0), constant.Apply(2.0));
}

}  // namespace
}  // namespace amt::search
