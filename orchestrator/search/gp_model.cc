#include "orchestrator/search/gp_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "orchestrator/search/gp_optimize.h"

namespace amt::search {
namespace {

constexpr double kSqrt5 = 2.2360679774997896964;
constexpr double kLog2Pi = 1.8378770664093454836;

// Squared distances between the rows of a and b (already scaled), clamped at 0 against the
// rounding of the |a|^2 + |b|^2 - 2ab form (a GEMM, much faster than the direct loop).
Eigen::MatrixXd SquaredDistances(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  Eigen::MatrixXd d = -2.0 * (a * b.transpose());
  d.colwise() += a.rowwise().squaredNorm();
  d.rowwise() += b.rowwise().squaredNorm().transpose();
  return d.cwiseMax(0.0);
}

double UniformUnit(std::mt19937_64& engine) {
  return static_cast<double>(engine() >> 11) * 0x1.0p-53;
}

// Standard normal variate by Box-Muller from raw engine output (portable across libraries).
double Normal(std::mt19937_64& engine) {
  const double u1 = 1.0 - UniformUnit(engine);  // (0, 1]
  const double u2 = UniformUnit(engine);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

}  // namespace

double Matern52(double r2, double s) {
  const double r = std::sqrt(r2);
  return s * (1.0 + kSqrt5 * r + (5.0 / 3.0) * r2) * std::exp(-kSqrt5 * r);
}

Eigen::VectorXd GpHyperparameters::Pack() const {
  const Eigen::Index g = log_lengthscales.size();
  Eigen::VectorXd theta(g + 2);
  theta.head(g) = log_lengthscales;
  theta[g] = log_signal_variance;
  theta[g + 1] = log_noise_variance;
  return theta;
}

GpHyperparameters GpHyperparameters::Unpack(const Eigen::VectorXd& theta) {
  const Eigen::Index g = theta.size() - 2;
  return GpHyperparameters{theta.head(g), theta[g], theta[g + 1]};
}

GpPrior::GpPrior(int groups) {
  const int n = groups + 2;
  mean.resize(n);
  stddev.resize(n);
  lower.resize(n);
  upper.resize(n);
  // Length scales in unit-cube units: median 0.25 * sqrt(groups), within a factor e either way
  // at one standard deviation.
  const double log_l = std::log(0.25) + 0.5 * std::log(std::max(1, groups));
  for (int g = 0; g < groups; ++g) {
    mean[g] = log_l;
    stddev[g] = 1.0;
    lower[g] = std::log(0.01);
    upper[g] = std::log(50.0);
  }
  // Signal variance of standardised targets: about 1.
  mean[groups] = 0.0;
  stddev[groups] = 1.5;
  lower[groups] = std::log(0.01);
  upper[groups] = std::log(100.0);
  // Noise: small by default (benchmarks are noiseless; training noise is learned from data).
  mean[groups + 1] = std::log(1e-3);
  stddev[groups + 1] = 3.0;
  lower[groups + 1] = std::log(1e-6);
  upper[groups + 1] = std::log(1.0);
}

MarginalLikelihood::MarginalLikelihood(const Eigen::MatrixXd& x, Eigen::VectorXd y,
                                       const std::vector<int>& groups)
    : groups_(groups.empty() ? 0 : *std::max_element(groups.begin(), groups.end()) + 1),
      y_(std::move(y)),
      prior_(groups_) {
  const Eigen::Index n = x.rows();
  distances_.assign(static_cast<size_t>(groups_), Eigen::MatrixXd::Zero(n, n));
  for (size_t f = 0; f < groups.size(); ++f) {
    Eigen::MatrixXd& d = distances_[static_cast<size_t>(groups[f])];
    const Eigen::VectorXd col = x.col(static_cast<Eigen::Index>(f));
    for (Eigen::Index j = 0; j < n; ++j) {
      d.col(j).array() += (col.array() - col[j]).square();
    }
  }
}

double MarginalLikelihood::operator()(const Eigen::VectorXd& theta,
                                      Eigen::VectorXd* gradient) const {
  const Eigen::Index n = y_.size();
  const int g_count = groups_;
  const double signal = std::exp(theta[g_count]);
  const double noise = std::exp(theta[g_count + 1]);
  Eigen::VectorXd inverse_squared(g_count);
  for (int g = 0; g < g_count; ++g) inverse_squared[g] = std::exp(-2.0 * theta[g]);

  // One pass over the lower triangle: the kernel k and dk = -2 dk/d(r^2), which every length
  // scale's derivative shares (dK/dlog l_g = dk * D_g / l_g^2).
  Eigen::MatrixXd kf(n, n);
  Eigen::MatrixXd dk(n, n);
  for (Eigen::Index j = 0; j < n; ++j) {
    for (Eigen::Index i = j; i < n; ++i) {
      double r2 = 0;
      for (int g = 0; g < g_count; ++g)
        r2 += distances_[static_cast<size_t>(g)](i, j) * inverse_squared[g];
      const double r = std::sqrt(r2);
      const double e = signal * std::exp(-kSqrt5 * r);
      kf(i, j) = kf(j, i) = (1.0 + kSqrt5 * r + (5.0 / 3.0) * r2) * e;
      dk(i, j) = dk(j, i) = (5.0 / 3.0) * (1.0 + kSqrt5 * r) * e;
    }
  }
  Eigen::MatrixXd k = kf;
  k.diagonal().array() += noise;
  Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(k);  // factorises k in place
  if (llt.info() != Eigen::Success) return std::numeric_limits<double>::infinity();
  const Eigen::VectorXd alpha = llt.solve(y_);
  double nll = 0.5 * y_.dot(alpha) + k.diagonal().array().log().sum() + 0.5 * n * kLog2Pi;
  if (!std::isfinite(nll)) return std::numeric_limits<double>::infinity();

  const Eigen::ArrayXd z = (theta - prior_.mean).array() / prior_.stddev.array();
  nll += 0.5 * z.square().sum();
  if (gradient == nullptr) return nll;

  // d nll / d theta = -0.5 tr(W dK/dtheta) with W = alpha alpha^T - K^-1 (symmetric).
  Eigen::MatrixXd w = Eigen::MatrixXd::Identity(n, n);
  llt.solveInPlace(w);
  w = alpha * alpha.transpose() - w;
  gradient->resize(theta.size());
  gradient->setZero();
  double signal_term = 0;
  for (Eigen::Index j = 0; j < n; ++j) {
    for (Eigen::Index i = j; i < n; ++i) {
      const double weight = (i == j ? 1.0 : 2.0) * w(i, j);
      const double wd = weight * dk(i, j);
      for (int g = 0; g < g_count; ++g) {
        (*gradient)[g] += wd * distances_[static_cast<size_t>(g)](i, j);
      }
      signal_term += weight * kf(i, j);  // dK/dlog s is the noise-free kernel
    }
  }
  for (int g = 0; g < g_count; ++g) (*gradient)[g] *= -0.5 * inverse_squared[g];
  (*gradient)[g_count] = -0.5 * signal_term;
  (*gradient)[g_count + 1] = -0.5 * noise * w.trace();
  gradient->array() += z / prior_.stddev.array();
  return nll;
}

GpHyperparameters FitHyperparameters(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                     const std::vector<int>& groups, std::mt19937_64& engine,
                                     const FitOptions& options,
                                     const std::vector<Eigen::VectorXd>& extra_starts) {
  const MarginalLikelihood likelihood(x, y, groups);
  const GpPrior prior(likelihood.groups());
  std::vector<Eigen::VectorXd> starts = {prior.mean};
  for (const Eigen::VectorXd& s : extra_starts) {
    if (s.size() == prior.mean.size()) starts.push_back(s);
  }
  for (int i = 0; i < options.random_starts; ++i) {
    Eigen::VectorXd s = prior.mean;
    for (Eigen::Index j = 0; j < s.size(); ++j) s[j] += prior.stddev[j] * Normal(engine);
    starts.push_back(s);
  }
  MinimizeOptions minimize;
  minimize.max_evaluations = options.max_evaluations;
  minimize.max_iterations = options.max_evaluations;
  minimize.relative_tolerance = 1e-7;
  minimize.gradient_tolerance = 1e-5;
  const Objective objective = [&likelihood](const Eigen::VectorXd& theta,
                                            Eigen::VectorXd* gradient) {
    return likelihood(theta, gradient);
  };
  MinimizeResult best;
  best.value = std::numeric_limits<double>::infinity();
  best.x = prior.mean;
  for (const Eigen::VectorXd& start : starts) {
    MinimizeResult r = MinimizeInBox(objective, start, prior.lower, prior.upper, minimize);
    if (r.value < best.value) best = std::move(r);
  }
  return GpHyperparameters::Unpack(best.x);
}

GaussianProcess::GaussianProcess(Eigen::MatrixXd x, const Eigen::VectorXd& y,
                                 const std::vector<int>& groups,
                                 const GpHyperparameters& hyperparameters)
    : y_(y),
      signal_variance_(std::exp(hyperparameters.log_signal_variance)),
      noise_variance_(std::exp(hyperparameters.log_noise_variance)) {
  inverse_scale_.resize(static_cast<Eigen::Index>(groups.size()));
  for (size_t f = 0; f < groups.size(); ++f) {
    inverse_scale_[static_cast<Eigen::Index>(f)] =
        std::exp(-hyperparameters.log_lengthscales[groups[f]]);
  }
  x_ = x * inverse_scale_.asDiagonal();
  Factorize([&] { return LowerSelfKernel(x, noise_variance_); });
  Solve();
}

void GaussianProcess::Solve() {
  alpha_ = cholesky_.triangularView<Eigen::Lower>().solve(y_);
  cholesky_.triangularView<Eigen::Lower>().transpose().solveInPlace(alpha_);
}

void GaussianProcess::Factorize(const std::function<Eigen::MatrixXd()>& make) {
  // In place, on the lower triangle LowerSelfKernel builds: together the two took a suggestion
  // at 750 observations from 75 to 61 ms (bayes_bench --no-regret), with the same factor.
  double jitter = 0;
  for (int attempt = 0; attempt < 8; ++attempt) {
    Eigen::MatrixXd k = make();
    k.diagonal().array() += jitter;
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(k);
    if (llt.info() == Eigen::Success) {
      k.triangularView<Eigen::StrictlyUpper>().setZero();
      cholesky_ = std::move(k);
      return;
    }
    jitter = jitter == 0 ? 1e-8 * signal_variance_ : jitter * 10;
  }
  // Unreachable in practice (jitter reaches 0.1 x signal variance); keep a diagonal factor so
  // predictions stay defined.
  cholesky_ = make().diagonal().cwiseMax(1e-12).cwiseSqrt().asDiagonal();
}

Eigen::MatrixXd GaussianProcess::CrossKernel(const Eigen::MatrixXd& a) const {
  return SquaredDistances(a * inverse_scale_.asDiagonal(), x_)
      .unaryExpr([s = signal_variance_](double r2) { return Matern52(r2, s); });
}

Eigen::MatrixXd GaussianProcess::SelfKernel(const Eigen::MatrixXd& a) const {
  const Eigen::MatrixXd scaled = a * inverse_scale_.asDiagonal();
  return SquaredDistances(scaled, scaled).unaryExpr([s = signal_variance_](double r2) {
    return Matern52(r2, s);
  });
}

Eigen::MatrixXd GaussianProcess::LowerSelfKernel(const Eigen::MatrixXd& a, double noise) const {
  const Eigen::MatrixXd scaled = a * inverse_scale_.asDiagonal();
  // SquaredDistances' values, computed the same way (so the factor is SelfKernel's to the bit).
  Eigen::MatrixXd k = -2.0 * (scaled * scaled.transpose());
  const Eigen::VectorXd norms = scaled.rowwise().squaredNorm();
  const Eigen::Index n = k.rows();
  for (Eigen::Index j = 0; j < n; ++j) {
    for (Eigen::Index i = j; i < n; ++i) {
      k(i, j) = Matern52(std::max(k(i, j) + norms[i] + norms[j], 0.0), signal_variance_);
    }
    k(j, j) += noise;
  }
  return k;
}

void GaussianProcess::Condition(const Eigen::MatrixXd& x, const Eigen::MatrixXd& y) {
  const Eigen::Index n = y_.rows();
  const Eigen::Index m = x.rows();
  if (m == 0) return;
  // K_nm and K_mm + noise, then the Schur complement's factor extends L.
  const Eigen::MatrixXd knm = CrossKernel(x).transpose();
  Eigen::MatrixXd kmm = SelfKernel(x);
  kmm.diagonal().array() += noise_variance_;
  const Eigen::MatrixXd b = cholesky_.triangularView<Eigen::Lower>().solve(knm);
  const Eigen::MatrixXd schur = kmm - b.transpose() * b;
  Eigen::MatrixXd old = std::move(cholesky_);
  Factorize([&] { return schur; });
  Eigen::MatrixXd grown(n + m, n + m);
  grown.topLeftCorner(n, n) = old;  // its strictly upper triangle is zero
  grown.topRightCorner(n, m).setZero();
  grown.bottomLeftCorner(m, n) = b.transpose();
  grown.bottomRightCorner(m, m) = cholesky_;
  cholesky_ = std::move(grown);

  Eigen::MatrixXd all_x(n + m, x_.cols());
  all_x << x_, x * inverse_scale_.asDiagonal();
  x_ = std::move(all_x);
  Eigen::MatrixXd all_y(n + m, y.cols());
  all_y.topRows(n) = y_.cols() == y.cols() ? y_ : y_.col(0).replicate(1, y.cols()).eval();
  all_y.bottomRows(m) = y;
  y_ = std::move(all_y);
  Solve();
}

void GaussianProcess::Predict(const Eigen::MatrixXd& points, Eigen::MatrixXd* mean,
                              Eigen::VectorXd* variance) const {
  const Eigen::MatrixXd kc = CrossKernel(points);  // m x n
  *mean = kc * alpha_;
  const Eigen::MatrixXd v = cholesky_.triangularView<Eigen::Lower>().solve(kc.transpose());
  *variance = (signal_variance_ - v.colwise().squaredNorm().transpose().array()).max(1e-12);
}

void GaussianProcess::JointPosterior(const Eigen::MatrixXd& points, Eigen::VectorXd* mean,
                                     Eigen::MatrixXd* covariance) const {
  const Eigen::MatrixXd kc = CrossKernel(points);
  *mean = kc * alpha_.col(0);
  const Eigen::MatrixXd v = cholesky_.triangularView<Eigen::Lower>().solve(kc.transpose());
  *covariance = SelfKernel(points) - v.transpose() * v;
}

void GaussianProcess::PredictWithGradient(const Eigen::VectorXd& point, Eigen::VectorXd* mean,
                                          double* variance, Eigen::MatrixXd* mean_gradient,
                                          Eigen::VectorXd* variance_gradient) const {
  const Eigen::VectorXd p = point.cwiseProduct(inverse_scale_);
  const Eigen::Index n = x_.rows();
  Eigen::VectorXd k(n);
  Eigen::VectorXd c(n);  // dk/d(point) = c_i * (p - x_i) .* inverse_scale
  for (Eigen::Index i = 0; i < n; ++i) {
    const double r2 = (x_.row(i).transpose() - p).squaredNorm();
    const double r = std::sqrt(r2);
    const double e = std::exp(-kSqrt5 * r);
    k[i] = signal_variance_ * (1.0 + kSqrt5 * r + (5.0 / 3.0) * r2) * e;
    c[i] = -signal_variance_ * (5.0 / 3.0) * (1.0 + kSqrt5 * r) * e;
  }
  *mean = alpha_.transpose() * k;
  Eigen::VectorXd v = cholesky_.triangularView<Eigen::Lower>().solve(k);
  *variance = std::max(1e-12, signal_variance_ - v.squaredNorm());
  cholesky_.triangularView<Eigen::Lower>().transpose().solveInPlace(v);  // now K^-1 k
  // d mean_s / d point = inverse_scale .* sum_i alpha_is c_i (p - x_i).
  const Eigen::MatrixXd ac = c.asDiagonal() * alpha_;  // n x S
  *mean_gradient = inverse_scale_.asDiagonal() * (p * ac.colwise().sum() - x_.transpose() * ac);
  const Eigen::VectorXd wc = v.cwiseProduct(c);
  *variance_gradient = (-2.0 * (wc.sum() * p - x_.transpose() * wc)).cwiseProduct(inverse_scale_);
}

Eigen::MatrixXd GaussianProcess::MeanGradients(const Eigen::MatrixXd& points) const {
  // d mean / d point = inverse_scale .* sum_i alpha_i c_i (p - x_i), with c_i as in
  // PredictWithGradient, for all points at once as in CrossKernel: the local penalty needs it
  // at every candidate of a suggestion.
  const Eigen::MatrixXd p = points * inverse_scale_.asDiagonal();
  const Eigen::ArrayXXd r = SquaredDistances(p, x_).array().sqrt();
  const Eigen::MatrixXd c =
      ((-signal_variance_ * 5.0 / 3.0) * (1.0 + kSqrt5 * r) * (-kSqrt5 * r).exp()).matrix() *
      alpha_.col(0).asDiagonal();
  return (p.array().colwise() * c.rowwise().sum().array()).matrix() * inverse_scale_.asDiagonal() -
         c * x_ * inverse_scale_.asDiagonal();
}

}  // namespace amt::search
