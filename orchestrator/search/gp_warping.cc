#include "orchestrator/search/gp_warping.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace amt::search {
namespace {

// The exponent stays in [0, 1]: between a log-like and no transform. Below 1 the bad (right)
// tail is compressed and the good side stretched, which is what minimisation needs; exponents
// below 0 flatten a landscape so much that the model turns overconfident (the benchmark saw
// Branin runs stall on a boundary), and exponents above 1 would compress the good side.
constexpr double kMinLambda = 0.0;
constexpr double kMaxLambda = 1.0;

// Mean and standard deviation, the latter 1 when the sample is (numerically) constant.
void Moments(const Eigen::VectorXd& y, double* mean, double* scale) {
  *mean = y.size() == 0 ? 0.0 : y.mean();
  const double var = y.size() < 2 ? 0.0 : (y.array() - *mean).square().sum() / y.size();
  *scale = var > 1e-24 ? std::sqrt(var) : 1.0;
}

// Profile log-likelihood of lambda: the Gaussian fit of the transformed sample plus the
// log-Jacobian of the transform.
double ProfileLikelihood(const Eigen::VectorXd& z, double lambda) {
  Eigen::VectorXd t(z.size());
  double jacobian = 0;
  for (Eigen::Index i = 0; i < z.size(); ++i) {
    t[i] = YeoJohnson(z[i], lambda);
    jacobian += std::copysign(std::log1p(std::fabs(z[i])), z[i]);
  }
  const double var = (t.array() - t.mean()).square().sum() / t.size();
  if (!(var > 0) || !std::isfinite(var)) return -std::numeric_limits<double>::infinity();
  return -0.5 * t.size() * std::log(var) + (lambda - 1.0) * jacobian;
}

}  // namespace

double YeoJohnson(double y, double lambda) {
  if (y >= 0) {
    if (std::fabs(lambda) < 1e-12) return std::log1p(y);
    return std::expm1(lambda * std::log1p(y)) / lambda;
  }
  if (std::fabs(lambda - 2.0) < 1e-12) return -std::log1p(-y);
  return -std::expm1((2.0 - lambda) * std::log1p(-y)) / (2.0 - lambda);
}

OutputWarping OutputWarping::Fit(const Eigen::VectorXd& y) {
  OutputWarping w;
  Moments(y, &w.mean_, &w.scale_);
  if (y.size() < 3) return w;
  const Eigen::VectorXd z = (y.array() - w.mean_) / w.scale_;
  // Grid search then a finer grid around the best: the likelihood is smooth and unimodal in
  // practice, and 30 evaluations of O(n) are negligible next to the GP.
  double best_lambda = 1.0;
  double best = ProfileLikelihood(z, 1.0);
  for (double lambda = kMinLambda; lambda <= kMaxLambda + 1e-9; lambda += 0.05) {
    const double l = ProfileLikelihood(z, lambda);
    if (l > best) {
      best = l;
      best_lambda = lambda;
    }
  }
  const double center = best_lambda;
  for (double lambda = std::max(kMinLambda, center - 0.05);
       lambda <= std::min(kMaxLambda, center + 0.05) + 1e-9; lambda += 0.01) {
    const double l = ProfileLikelihood(z, lambda);
    if (l > best) {
      best = l;
      best_lambda = lambda;
    }
  }
  w.lambda_ = best_lambda;
  Eigen::VectorXd t(z.size());
  for (Eigen::Index i = 0; i < z.size(); ++i) t[i] = YeoJohnson(z[i], best_lambda);
  Moments(t, &w.mean2_, &w.scale2_);
  return w;
}

double OutputWarping::Apply(double y) const {
  return (YeoJohnson((y - mean_) / scale_, lambda_) - mean2_) / scale2_;
}

Eigen::VectorXd OutputWarping::Apply(const Eigen::VectorXd& y) const {
  Eigen::VectorXd out(y.size());
  for (Eigen::Index i = 0; i < y.size(); ++i) out[i] = Apply(y[i]);
  return out;
}

}  // namespace amt::search
