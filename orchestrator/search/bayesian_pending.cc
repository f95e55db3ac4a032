// What BayesianStrategy makes of running trials: fantasies of their outcomes (the kriging
// believer, or joint posterior samples), the local penalty around them and the trust region
// that part of the candidates come from while they run (bayesian_internal.h).
#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "orchestrator/search/bayesian_internal.h"

namespace amt::search::internal {
namespace {

// log Phi(z) and its derivative phi(z) / Phi(z), accurate in the far left tail.
double LogNormalCdf(double z, double* derivative) {
  constexpr double kLogSqrt2Pi = 0.91893853320467274178;
  if (z > -5) {
    const double cdf = 0.5 * std::erfc(-z * M_SQRT1_2);
    const double log_cdf = std::log(cdf);
    *derivative = std::exp(-0.5 * z * z - kLogSqrt2Pi - log_cdf);
    return log_cdf;
  }
  // Phi(z) = phi(z) / |z| * T(z), T = 1 - 1/z^2 + 3/z^4 - 15/z^6.
  const double w = 1.0 / (z * z);
  const double t = 1.0 + w * (-1.0 + w * (3.0 - 15.0 * w));
  *derivative = -z / t;
  return -0.5 * z * z - kLogSqrt2Pi - std::log(-z) + std::log(t);
}

}  // namespace

double Penalty::Log(const Eigen::VectorXd& x, Eigen::VectorXd* gradient) const {
  double total = 0;
  gradient->setZero(x.size());
  for (size_t j = 0; j < centers.size(); ++j) {
    const double r = std::sqrt((x - centers[j]).squaredNorm() + 1e-18);
    double dz = 0;
    total += LogNormalCdf((lipschitz * r - mean[j] + best) / sd[j], &dz);
    *gradient += (dz * lipschitz / (sd[j] * r)) * (x - centers[j]);
  }
  return total;
}

Eigen::VectorXd Penalty::LogRows(const Eigen::MatrixXd& points) const {
  Eigen::VectorXd total = Eigen::VectorXd::Zero(points.rows());
  for (size_t j = 0; j < centers.size(); ++j) {
    const Eigen::VectorXd r2 = (points.rowwise() - centers[j].transpose()).rowwise().squaredNorm();
    for (Eigen::Index i = 0; i < points.rows(); ++i) {
      const double r = std::sqrt(r2[i] + 1e-18);
      double unused = 0;
      total[i] += LogNormalCdf((lipschitz * r - mean[j] + best) / sd[j], &unused);
    }
  }
  return total;
}

Eigen::VectorXd Fantasize(GaussianProcess& gp, const std::vector<Eigen::VectorXd>& pending_x,
                          double best_observed, int samples, std::mt19937_64& engine,
                          Eigen::VectorXd* believed) {
  if (pending_x.empty()) return Eigen::VectorXd::Constant(1, best_observed);
  const Eigen::MatrixXd pending = Rows(pending_x, static_cast<int>(pending_x.front().size()));
  const Eigen::Index m = pending.rows();
  Eigen::VectorXd mean;
  Eigen::MatrixXd covariance;
  gp.JointPosterior(pending, &mean, &covariance);
  *believed = mean;
  Eigen::MatrixXd fantasies = mean.replicate(1, samples);
  if (samples > 1) {
    covariance.diagonal().array() += 1e-9 * gp.signal_variance();
    Eigen::LLT<Eigen::MatrixXd> llt(covariance);
    Eigen::MatrixXd z(m, samples);
    for (Eigen::Index i = 0; i < z.size(); ++i) z.data()[i] = Normal(engine);
    if (llt.info() == Eigen::Success) {
      fantasies += llt.matrixL() * z;
    } else {
      fantasies += covariance.diagonal().cwiseMax(0).cwiseSqrt().asDiagonal() * z;
    }
  }
  gp.Condition(pending, fantasies);
  return fantasies.colwise().minCoeff().transpose().cwiseMin(best_observed);
}

double TrustRegionSide(const std::vector<double>& results, size_t skip, int params) {
  const int failure_limit = std::max(4, params);
  double side = kTrustRegionInitialSide;
  int successes = 0;
  int failures = 0;
  double best = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < results.size(); ++i) {
    if (i >= skip && std::isfinite(best)) {
      if (results[i] < best - 1e-3 * std::abs(best)) {
        ++successes;
        failures = 0;
      } else {
        ++failures;
        successes = 0;
      }
      if (successes == 3) {
        side = std::min(kTrustRegionMaxSide, 2 * side);
        successes = 0;
      }
      if (failures == failure_limit) {
        side /= 2;
        failures = 0;
      }
      if (side < kTrustRegionMinSide) side = kTrustRegionInitialSide;
    }
    best = std::min(best, results[i]);
  }
  return side;
}

}  // namespace amt::search::internal
