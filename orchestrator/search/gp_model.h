// The Gaussian-process surrogate of the Bayesian strategy: a zero-mean GP over unit-cube
// features with a Matern-5/2 kernel (one length scale per kernel group: a numeric parameter, or
// all one-hot features of a categorical), a signal variance and a Gaussian noise term.
// Hyperparameters are fitted by maximising the marginal likelihood times weak log-normal priors
// (MAP), with L-BFGS from several starting points. Targets are expected standardised (see
// gp_warping.h), which is what the priors assume.
//
// Everything here is deterministic; randomness (restart points) comes in through arguments.
#ifndef AMT_ORCHESTRATOR_SEARCH_GP_MODEL_H_
#define AMT_ORCHESTRATOR_SEARCH_GP_MODEL_H_

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

namespace amt::search {

// Packed as [log l_0 .. log l_{G-1}, log signal variance, log noise variance] for the optimiser.
struct GpHyperparameters {
  Eigen::VectorXd log_lengthscales;
  double log_signal_variance = 0;
  double log_noise_variance = 0;

  Eigen::VectorXd Pack() const;
  static GpHyperparameters Unpack(const Eigen::VectorXd& theta);
};

// The priors and box bounds of the packed hyperparameters for `groups` kernel groups (the
// length-scale prior widens with the number of groups: higher-dimensional problems need longer
// length scales, as in Hvarfner et al. 2024).
struct GpPrior {
  explicit GpPrior(int groups);

  Eigen::VectorXd mean;  // Gaussian prior on each packed (log) hyperparameter
  Eigen::VectorXd stddev;
  Eigen::VectorXd lower;  // box bounds used by the fit
  Eigen::VectorXd upper;
};

// -log p(y | x, theta) - log p(theta) for the packed hyperparameters `theta`, with its gradient
// written to `gradient` when not null. `x` is n x D features, `groups` maps each of the D
// features to its kernel group. Returns +infinity when the kernel matrix is not positive
// definite. Precomputes per-group distances once: construct one per data set, evaluate many
// times.
class MarginalLikelihood {
 public:
  MarginalLikelihood(const Eigen::MatrixXd& x, Eigen::VectorXd y, const std::vector<int>& groups);

  int groups() const { return groups_; }
  double operator()(const Eigen::VectorXd& theta, Eigen::VectorXd* gradient) const;

 private:
  int groups_;
  Eigen::VectorXd y_;
  GpPrior prior_;
  std::vector<Eigen::MatrixXd> distances_;  // per group: sum over its features of (xi - xj)^2
};

struct FitOptions {
  int random_starts = 1;      // starts drawn from the prior, besides the prior mean
  int max_evaluations = 100;  // per start
};

// MAP hyperparameters for (x, y): L-BFGS from the prior mean, from each of `extra_starts`
// (e.g. the previous fit) and from `options.random_starts` points drawn from the prior with
// `engine`; returns the best optimum found.
GpHyperparameters FitHyperparameters(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                     const std::vector<int>& groups, std::mt19937_64& engine,
                                     const FitOptions& options = {},
                                     const std::vector<Eigen::VectorXd>& extra_starts = {});

// A GP conditioned on data with fixed hyperparameters. It can carry several target columns
// over the same inputs (one per fantasy sample of the running trials' outcomes): they share
// the Cholesky factor and the posterior variance, and differ only in the posterior mean. Not
// thread-safe to mutate; const methods may run concurrently.
class GaussianProcess {
 public:
  // Conditions on rows of `x` (n x D) with targets `y` (one column). When the kernel matrix is
  // numerically singular (duplicate points with tiny noise) jitter is added to the diagonal
  // until the Cholesky factorisation succeeds.
  GaussianProcess(Eigen::MatrixXd x, const Eigen::VectorXd& y, const std::vector<int>& groups,
                  const GpHyperparameters& hyperparameters);

  // Adds observations at the rows of `x` (m x D) by extending the Cholesky factor in
  // O(n^2 m): used to fantasise running trials. `y` is m x S: S target columns (the existing
  // targets are repeated when the GP had one column; otherwise S must equal columns()).
  void Condition(const Eigen::MatrixXd& x, const Eigen::MatrixXd& y);

  // Posterior means (m x columns()) and latent-function variance (m) at the rows of `points`.
  void Predict(const Eigen::MatrixXd& points, Eigen::MatrixXd* mean,
               Eigen::VectorXd* variance) const;

  // Posterior mean (first column) and latent covariance (m x m) at the rows of `points`.
  void JointPosterior(const Eigen::MatrixXd& points, Eigen::VectorXd* mean,
                      Eigen::MatrixXd* covariance) const;

  // Posterior means (columns()) and variance at one point, with their gradients with respect
  // to the point (D x columns() and D).
  void PredictWithGradient(const Eigen::VectorXd& point, Eigen::VectorXd* mean, double* variance,
                           Eigen::MatrixXd* mean_gradient,
                           Eigen::VectorXd* variance_gradient) const;

  // Gradients of the posterior mean (first column) at the rows of `points` (m x D), in
  // O(m n D): cheaper than PredictWithGradient, which also differentiates the variance.
  Eigen::MatrixXd MeanGradients(const Eigen::MatrixXd& points) const;

  int size() const { return static_cast<int>(y_.rows()); }
  int columns() const { return static_cast<int>(y_.cols()); }
  double signal_variance() const { return signal_variance_; }

 private:
  // Kernel between the rows of `a` and the training points (a.rows() x size()).
  Eigen::MatrixXd CrossKernel(const Eigen::MatrixXd& a) const;
  // Kernel among the rows of `a`, without noise.
  Eigen::MatrixXd SelfKernel(const Eigen::MatrixXd& a) const;
  // The same values in the lower triangle (diagonal included) plus `noise` on the diagonal;
  // the strictly upper triangle holds scratch (the Cholesky factorisation reads only the lower
  // one): half the kernel evaluations and no temporaries.
  Eigen::MatrixXd LowerSelfKernel(const Eigen::MatrixXd& a, double noise) const;
  // Sets cholesky_ to the factor of the matrix `make` returns (its lower triangle), factorised
  // in place; while that fails, with more jitter on the diagonal of a fresh `make()`.
  void Factorize(const std::function<Eigen::MatrixXd()>& make);
  void Solve();

  Eigen::MatrixXd x_;              // training points scaled by the inverse length scales
  Eigen::MatrixXd y_;              // n x columns()
  Eigen::VectorXd inverse_scale_;  // per feature
  double signal_variance_;
  double noise_variance_;
  Eigen::MatrixXd cholesky_;  // lower-triangular L with L L^T = K + noise I
  Eigen::MatrixXd alpha_;     // (K + noise I)^-1 y
};

// Matern-5/2 kernel value for squared scaled distance r2, signal variance s.
double Matern52(double r2, double s);

}  // namespace amt::search

#endif  // AMT_ORCHESTRATOR_SEARCH_GP_MODEL_H_
