#include "orchestrator/search/gp_optimize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace amt::search {
namespace {

TEST(MinimizeInBox, FindsRosenbrockMinimumInsideBox) {
  const Objective rosenbrock = [](const Eigen::VectorXd& x, Eigen::VectorXd* g) {
    const double a = 1 - x[0];
    const double b = x[1] - x[0] * x[0];
    (*g)[0] = -2 * a - 400 * x[0] * b;
    (*g)[1] = 200 * b;
    return a * a + 100 * b * b;
  };
  MinimizeOptions options;
  options.max_iterations = 500;
  options.max_evaluations = 2000;
  options.relative_tolerance = 0;
  const MinimizeResult r = MinimizeInBox(rosenbrock, Eigen::Vector2d(-1.2, 1.0),
                                         Eigen::Vector2d(-2, -2), Eigen::Vector2d(2, 2), options);
  EXPECT_NEAR(r.x[0], 1.0, 1e-4);
  EXPECT_NEAR(r.x[1], 1.0, 1e-4);
  EXPECT_LT(r.value, 1e-8);
}

TEST(MinimizeInBox, StopsAtTheBoundWhenTheMinimumLiesOutside) {
  const Objective f = [](const Eigen::VectorXd& x, Eigen::VectorXd* g) {
    (*g)[0] = 2 * (x[0] - 2);
    (*g)[1] = 2 * (x[1] + 0.25);
    return (x[0] - 2) * (x[0] - 2) + (x[1] + 0.25) * (x[1] + 0.25);
  };
  const MinimizeResult r =
      MinimizeInBox(f, Eigen::Vector2d(0.5, 0.5), Eigen::Vector2d(0, -1), Eigen::Vector2d(1, 1));
  EXPECT_DOUBLE_EQ(r.x[0], 1.0);
  EXPECT_NEAR(r.x[1], -0.25, 1e-6);
}

TEST(MinimizeInBox, ClampsTheStartAndHoldsFixedVariables) {
  const Objective f = [](const Eigen::VectorXd& x, Eigen::VectorXd* g) {
    (*g)[0] = 2 * x[0];
    (*g)[1] = 2 * x[1];
    return x[0] * x[0] + x[1] * x[1];
  };
  // x[1] has lower == upper: it cannot move.
  const MinimizeResult r =
      MinimizeInBox(f, Eigen::Vector2d(5, 0.3), Eigen::Vector2d(-1, 0.3), Eigen::Vector2d(1, 0.3));
  EXPECT_NEAR(r.x[0], 0.0, 1e-6);
  EXPECT_DOUBLE_EQ(r.x[1], 0.3);
}

TEST(MinimizeInBox, BacksOffWhereTheObjectiveIsUndefined) {
  // +infinity beyond x = 0.5; the minimum of the defined part is at 0.5.
  const Objective f = [](const Eigen::VectorXd& x, Eigen::VectorXd* g) {
    (*g)[0] = -1;
    return x[0] > 0.5 ? std::numeric_limits<double>::infinity() : -x[0];
  };
  const MinimizeResult r =
      MinimizeInBox(f, Eigen::VectorXd::Constant(1, 0.0), Eigen::VectorXd::Constant(1, 0.0),
                    Eigen::VectorXd::Constant(1, 10.0));
  EXPECT_LE(r.x[0], 0.5);
  EXPECT_GT(r.x[0], 0.4);
  EXPECT_TRUE(std::isfinite(r.value));
}

TEST(MinimizeInBox, RespectsTheEvaluationBudget) {
  int calls = 0;
  const Objective f = [&calls](const Eigen::VectorXd& x, Eigen::VectorXd* g) {
    ++calls;
    (*g)[0] = std::cos(x[0]) + 0.1;
    return std::sin(x[0]) + 0.1 * x[0];
  };
  MinimizeOptions options;
  options.max_evaluations = 7;
  const MinimizeResult r =
      MinimizeInBox(f, Eigen::VectorXd::Constant(1, 3.0), Eigen::VectorXd::Constant(1, -100.0),
                    Eigen::VectorXd::Constant(1, 100.0), options);
  EXPECT_LE(calls, 8);  // the start plus the budget
  EXPECT_EQ(r.evaluations, calls);
}

}  // namespace
}  // namespace amt::search
