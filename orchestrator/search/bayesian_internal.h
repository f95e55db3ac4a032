// What the files of BayesianStrategy (bayesian.h) share, and nothing outside amt_search includes:
// the seeded random draws, Eigen helpers, the data a suggestion learns from
// (BayesianStrategy::Data) and the local penalty around running trials.
//
// The strategy's files: bayesian.cc (the design, Suggest, the data, the spread-out fallback),
// bayesian_fit.cc (the kernel hyperparameter fit: its schedule, subsample and cache),
// bayesian_pending.cc (running trials: fantasies, the local penalty and the trust region),
// bayesian_acquisition.cc (Expected Improvement over candidates, refined by L-BFGS, and the pick of
// a new point).
#ifndef AMT_ORCHESTRATOR_SEARCH_BAYESIAN_INTERNAL_H_
#define AMT_ORCHESTRATOR_SEARCH_BAYESIAN_INTERNAL_H_

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "orchestrator/search/bayesian.h"
#include "orchestrator/search/gp_encoding.h"
#include "orchestrator/search/gp_model.h"
#include "orchestrator/search/search_space.h"
#include "orchestrator/search/strategy.h"

namespace amt::search {

// Everything Suggest knows, encoded with one encoder.
struct BayesianStrategy::Data {
  SpaceEncoder encoder;
  std::vector<Eigen::VectorXd> ok_x;  // prior observations, then finished trials
  std::vector<double> ok_y;           // minimisation direction, raw
  std::vector<Eigen::VectorXd> failed_x;
  std::vector<Eigen::VectorXd> pending_x;
  std::set<Assignment> seen;    // every trial and prior observation, restricted to the space
  std::set<Assignment> failed;  // failed or objective-less trials

  Data(SpaceEncoder e, const SearchSpace& space, const std::vector<PriorObservation>& priors,
       const History& history);
};

namespace internal {

inline double UniformUnit(std::mt19937_64& engine) {
  return static_cast<double>(engine() >> 11) * 0x1.0p-53;
}

inline double Normal(std::mt19937_64& engine) {
  const double u1 = 1.0 - UniformUnit(engine);
  const double u2 = UniformUnit(engine);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

// Uniform integer in [0, n) (n small: the modulo bias of 64-bit output is negligible and the
// result is the same with every standard library).
inline size_t UniformIndex(std::mt19937_64& engine, size_t n) { return engine() % n; }

inline Eigen::MatrixXd Rows(const std::vector<Eigen::VectorXd>& rows, int dims) {
  Eigen::MatrixXd m(static_cast<Eigen::Index>(rows.size()), dims);
  for (size_t i = 0; i < rows.size(); ++i) m.row(static_cast<Eigen::Index>(i)) = rows[i];
  return m;
}

inline Eigen::VectorXd Vector(const std::vector<double>& v) {
  return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}

// A finished trial's objective in minimisation direction, or nullopt when it has none.
std::optional<double> MinimizedObjective(const Trial& trial, bool minimize);

// Local penalisation of the acquisition around running trials (Gonzalez et al. 2016): a
// running trial x_j with outcome f_j ~ N(mean_j, sd_j^2) rules out the ball of radius
// (f_j - best) / L around it for a function with Lipschitz constant L whose minimum is
// `best`; the acquisition is multiplied by the probability that x lies outside that ball,
// Phi((L |x - x_j| - mean_j + best) / sd_j). On top of the kriging believer, which only
// flattens the posterior variance at a running trial, this keeps the batch from probing the
// same basin several times before any of it has reported back.
struct Penalty {
  std::vector<Eigen::VectorXd> centers;
  std::vector<double> mean;
  std::vector<double> sd;
  double lipschitz = 1;
  double best = 0;

  // The log penalty at one point, with its gradient (for L-BFGS).
  double Log(const Eigen::VectorXd& x, Eigen::VectorXd* gradient) const;

  // The log penalty at each row of `points`, without a temporary per row: it is evaluated
  // for every candidate.
  Eigen::VectorXd LogRows(const Eigen::MatrixXd& points) const;
};

// Conditions `gp` on fantasies of the running trials' outcomes (at `pending_x`): `samples` joint
// posterior samples (1: the posterior mean, "kriging believer"). Each column is a possible world;
// a fantasised value below the best result also lowers that world's incumbent, so a running
// trial's neighbourhood promises no improvement it would already deliver. Returns the
// incumbents, one per column (just `best_observed` when nothing runs), and writes the running
// trials' posterior means to `believed` (left empty when nothing runs).
Eigen::VectorXd Fantasize(GaussianProcess& gp, const std::vector<Eigen::VectorXd>& pending_x,
                          double best_observed, int samples, std::mt19937_64& engine,
                          Eigen::VectorXd* believed);

// The side, in feature units, of the trust region around the best result (TuRBO, Eriksson et
// al. 2019) that half of the uniform candidates are drawn from while trials run. Replays
// `results` (minimisation direction, in launch order) after the first `skip` (the design): the
// side starts at kTrustRegionInitialSide, doubles (up to kTrustRegionMaxSide) after 3 successes
// in a row, a success being a result below the best so far by more than 1e-3 of its magnitude,
// halves after max(4, params) failures in a row, and starts again at the initial side once it
// falls below kTrustRegionMinSide.
inline constexpr double kTrustRegionInitialSide = 0.8;
inline constexpr double kTrustRegionMaxSide = 1.6;
inline constexpr double kTrustRegionMinSide = 1.0 / 128;
double TrustRegionSide(const std::vector<double>& results, size_t skip, int params);

}  // namespace internal
}  // namespace amt::search

#endif  // AMT_ORCHESTRATOR_SEARCH_BAYESIAN_INTERNAL_H_
