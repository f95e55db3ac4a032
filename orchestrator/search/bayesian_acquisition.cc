// BayesianStrategy::Acquire: log Expected Improvement (averaged over the running trials'
// fantasies, penalised around them) maximised over seeded random and local candidates, the best
// refined by projected L-BFGS; while trials run, also the lower confidence bound's minimiser,
// taken when EI rates it nearly as well; and the best point not tried before and not on a range
// bound that earlier trials found bad. The GP's prior mean is a quantile of the results
// (BayesianOptions::prior_mean_quantile).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <set>
#include <utility>
#include <vector>

#include "orchestrator/search/bayesian.h"
#include "orchestrator/search/bayesian_internal.h"
#include "orchestrator/search/gp_acquisition.h"
#include "orchestrator/search/gp_encoding.h"
#include "orchestrator/search/gp_model.h"
#include "orchestrator/search/gp_optimize.h"
#include "orchestrator/search/gp_warping.h"

namespace amt::search {

using internal::Fantasize;
using internal::Normal;
using internal::Penalty;
using internal::Rows;
using internal::TrustRegionSide;
using internal::UniformIndex;
using internal::UniformUnit;
using internal::Vector;

namespace {

// The Lipschitz constant of the local penalty is this times the steepest slope of the posterior
// mean among the candidates. The steepest slope overstates the slope near a minimum, where the
// running trials usually are, so the balls it gives are too small to keep the batch apart; with
// 4 workers (bayes_bench, 20-40 seeds) 0.5 beat 0.25, 1 and 2.
constexpr double kPenaltySlopeScale = 0.5;

// The acquisition model: the GP conditioned on the running trials' fantasies, one incumbent
// (best value) per fantasy column, and the local penalty around the running trials (null when
// nothing runs). With `kappa` > 0 it scores the negative lower confidence bound instead,
// -(mean - kappa sd) with the mean averaged over the fantasy columns, without the penalty: the
// GP conditioned on the running trials at their believed values has its uncertainty shrunk
// there, which is what keeps the batch apart (GP-BUCB, Desautels et al. 2014).
struct Prediction {
  Eigen::MatrixXd mean;      // a column per fantasy
  Eigen::VectorXd variance;  // of the latent function
};

struct Model {
  const GaussianProcess& gp;
  Eigen::VectorXd incumbents;
  const Penalty* penalty = nullptr;
  double kappa = 0;

  // The acquisition at each row of `points` (higher is better): log of the mean over fantasy
  // columns of EI, or the negative lower confidence bound.
  Eigen::VectorXd Score(const Eigen::MatrixXd& points) const {
    Prediction at;
    gp.Predict(points, &at.mean, &at.variance);
    return Score(points, at);
  }

  // Score with the GP's prediction at `points` already made (it is the costly part).
  Eigen::VectorXd Score(const Eigen::MatrixXd& points, const Prediction& at) const {
    const Eigen::MatrixXd& mean = at.mean;
    const Eigen::VectorXd& variance = at.variance;
    if (kappa > 0) {
      const Eigen::VectorXd sd = variance.cwiseMax(0).cwiseSqrt();
      return -(mean.rowwise().mean() - kappa * sd);
    }
    const double log_columns = std::log(static_cast<double>(incumbents.size()));
    Eigen::VectorXd out(points.rows());
    Eigen::VectorXd logs(incumbents.size());
    for (Eigen::Index i = 0; i < points.rows(); ++i) {
      for (Eigen::Index s = 0; s < logs.size(); ++s) {
        logs[s] = LogExpectedImprovement(mean(i, s), variance[i], incumbents[s]);
      }
      const double top = logs.maxCoeff();
      out[i] = top + std::log((logs.array() - top).exp().sum()) - log_columns;
    }
    if (penalty != nullptr) out += penalty->LogRows(points);
    return out;
  }

  // -Score at one point, with its gradient, for L-BFGS.
  double NegativeScore(const Eigen::VectorXd& x, Eigen::VectorXd* gradient) const {
    Eigen::VectorXd mean;
    double variance = 0;
    Eigen::MatrixXd d_mean;
    Eigen::VectorXd d_variance;
    gp.PredictWithGradient(x, &mean, &variance, &d_mean, &d_variance);
    if (kappa > 0) {
      // The sd's gradient is d_variance / (2 sd); kept finite where the variance vanishes.
      const double sd = std::sqrt(std::max(variance, 1e-30));
      *gradient = d_mean.rowwise().mean() - kappa * d_variance / (2 * sd);
      return mean.mean() - kappa * sd;
    }
    const double log_columns = std::log(static_cast<double>(incumbents.size()));
    const Eigen::Index columns = incumbents.size();
    Eigen::VectorXd logs(columns);
    Eigen::VectorXd a(columns);
    Eigen::VectorXd b(columns);
    for (Eigen::Index s = 0; s < columns; ++s) {
      logs[s] = LogExpectedImprovement(mean[s], variance, incumbents[s], &a[s], &b[s]);
    }
    const double top = logs.maxCoeff();
    const Eigen::VectorXd w = (logs.array() - top).exp().matrix();
    const double total = w.sum();
    // d log(mean EI) = sum_s (EI_s / sum EI) d log EI_s.
    *gradient = -(d_mean * w.cwiseProduct(a) + d_variance * w.dot(b)) / total;
    double value = -(top + std::log(total) - log_columns);
    if (penalty != nullptr) {
      Eigen::VectorXd g;
      value -= penalty->Log(x, &g);
      *gradient -= g;
    }
    return value;
  }
};

// Candidates: half uniform over the space, half perturbations of the best results (`centers`,
// best first). Fewer when the model (of `model_size` points) is large, so that scoring them stays
// near 2.5e7 flops (the posterior variance costs n^2 per candidate; all 1024 up to 156 points).
Eigen::MatrixXd Candidates(const SpaceEncoder& encoder,
                           const std::vector<const Eigen::VectorXd*>& centers, int model_size,
                           std::mt19937_64& engine) {
  const double n = model_size;
  const int count = static_cast<int>(std::clamp(2.5e7 / (n * n), 256.0, 1024.0));
  const int params = encoder.params();
  static constexpr double kSteps[] = {0.02, 0.08, 0.2};
  Eigen::MatrixXd candidates(count, encoder.dims());
  std::vector<double> u(static_cast<size_t>(params));
  for (int i = 0; i < count; ++i) {
    if (i < count / 2) {
      for (double& c : u) c = UniformUnit(engine);
      candidates.row(i) = encoder.FromCoordinates(u.data());
      continue;
    }
    // Half of the local candidates around the incumbent, the rest around the next best.
    const size_t center = (i % 2 == 0) ? 0 : UniformIndex(engine, centers.size());
    Eigen::VectorXd x = *centers[center];
    const double step = kSteps[UniformIndex(engine, 3)];
    const double p_change = std::min(1.0, 2.0 / params);
    bool changed = false;
    for (int attempt = 0; !changed && attempt < 10; ++attempt) {
      for (const SpaceEncoder::Block& b : encoder.blocks()) {
        if (UniformUnit(engine) >= p_change) continue;
        changed = true;
        if (b.kind == SpaceEncoder::Kind::kCategorical) {
          x.segment(b.offset, b.width).setZero();
          x[b.offset + static_cast<int>(UniformIndex(engine, static_cast<size_t>(b.width)))] = 1;
        } else {
          // Reflected at the bounds: clamping would put every step past a bound exactly on it.
          double& v = x[b.offset];
          v += step * Normal(engine);
          for (int k = 0; k < 4 && (v < 0 || v > 1); ++k) v = v < 0 ? -v : 2 - v;
        }
      }
    }
    candidates.row(i) = encoder.Snap(x);
  }
  return candidates;
}

// A point drawn from the trust region of side `side` around `center`: each numeric feature
// uniform in [center - side / 2, center + side / 2], clamped to [0, 1], each categorical redrawn
// with probability side / 2. Clamping puts the draws past a bound on it; cutting the region at
// the bounds instead was measured no better (bench/README.md, "Strategies vs Optuna TPE").
Eigen::VectorXd InTrustRegion(const SpaceEncoder& encoder, const Eigen::VectorXd& center,
                              double side, std::mt19937_64& engine) {
  Eigen::VectorXd x = center;
  for (const SpaceEncoder::Block& b : encoder.blocks()) {
    if (b.kind == SpaceEncoder::Kind::kCategorical) {
      if (UniformUnit(engine) >= side / 2) continue;
      x.segment(b.offset, b.width).setZero();
      x[b.offset + static_cast<int>(UniformIndex(engine, static_cast<size_t>(b.width)))] = 1;
    } else {
      x[b.offset] = std::clamp(center[b.offset] + side * (UniformUnit(engine) - 0.5), 0.0, 1.0);
    }
  }
  return encoder.Snap(x);
}

// While trials run, the uniform half of `candidates` (its first rows) is redrawn from a trust
// region (TuRBO) whose side follows the run's successes and failures (TrustRegionSide, the
// results `ok_y` after the `design` first): alternately around the best result and around
// `believed_best`, the best of the results and the running trials at their believed values.
// With 4 workers (bayes_bench, seeds 0-79) Styblinski-Tang's parallel runs found its global
// basin in 58 of 80 runs instead of 41 (sequential: 49), and Hartmann-6's median regret at 60
// evaluations went from 3.1 to 1.6 times the sequential one. The uniform half is drawn first so
// that the local candidates' draws stay those of a suggestion without running trials.
void TrustRegionHalf(const SpaceEncoder& encoder, const std::vector<Eigen::VectorXd>& ok_x,
                     const std::vector<double>& ok_y, const Eigen::VectorXd& believed_best,
                     size_t design, std::mt19937_64& engine, Eigen::MatrixXd* candidates) {
  size_t incumbent = 0;
  for (size_t i = 1; i < ok_y.size(); ++i) {
    if (ok_y[i] < ok_y[incumbent]) incumbent = i;
  }
  const double side = TrustRegionSide(ok_y, design, encoder.params());
  for (Eigen::Index i = 0; i < candidates->rows() / 2; ++i) {
    const Eigen::VectorXd& center = i % 2 == 0 ? ok_x[incumbent] : believed_best;
    candidates->row(i) = InTrustRegion(encoder, center, side, engine).transpose();
  }
}

// The q-quantile (0..1) of `y` (not empty), interpolated between order statistics.
double Quantile(const Eigen::VectorXd& y, double q) {
  std::vector<double> sorted(y.data(), y.data() + y.size());
  std::sort(sorted.begin(), sorted.end());
  const double at = std::clamp(q, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(at);
  const size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (at - static_cast<double>(below));
}

// L-BFGS starts on the acquisition: five, and past kFewerStartsAbove model points, where each
// evaluation costs two n^2 triangular solves, three on EI (a third of a suggestion at 400
// points) and none on the lower confidence bound (BayesianOptions::batch_lcb_kappa: its best
// candidate), so that a suggestion there costs what it did without the bound. With 4 workers
// (bench/README.md, "Exploiting while trials run") 2 or 3 starts on the bound found less than 5
// (Hartmann-6 at 60, seeds 0-79: 1.59 and 1.44 times the sequential regret against 1.39).
constexpr int kFewerStartsAbove = 150;

// The lower confidence bound's pick is taken only this far (Euclidean, in the unit-cube
// encoding) from every running trial: once the model is sure of a minimum, the bound's minimiser
// may sit next to a running trial there, which would measure the same point twice.
constexpr double kMinBoundSeparation = 1e-3;

struct Scored {
  double value;
  Eigen::VectorXd x;
};

// Best score first; stable, so equal scores keep their order.
void SortByScore(std::vector<Scored>& pool) {
  std::stable_sort(pool.begin(), pool.end(),
                   [](const Scored& a, const Scored& b) { return a.value > b.value; });
}

// Refines the best distinct candidates of `pool` (sorted) by L-BFGS on -Score over the numeric
// features (the one-hot features are held by equal bounds), rounded to the space; then every
// other value of each categorical at the best refined point (a gradient cannot move a one-hot
// feature). At most `max_starts` starts, each evaluation costing two n^2 triangular solves.
std::vector<Eigen::VectorXd> Refine(const Model& model, const SpaceEncoder& encoder,
                                    const std::vector<Scored>& pool, size_t max_starts) {
  const Objective negative_score = [&](const Eigen::VectorXd& x, Eigen::VectorXd* gradient) {
    return model.NegativeScore(x, gradient);
  };
  MinimizeOptions refine;
  refine.max_evaluations = 40;
  refine.max_iterations = 40;
  refine.relative_tolerance = 1e-6;
  std::vector<Eigen::VectorXd> starts;
  for (const Scored& s : pool) {
    if (starts.size() >= max_starts) break;
    bool distinct = true;
    for (const Eigen::VectorXd& other : starts) distinct &= (other - s.x).squaredNorm() > 1e-12;
    if (distinct) starts.push_back(s.x);
  }
  std::vector<Eigen::VectorXd> refined;
  for (const Eigen::VectorXd& start : starts) {
    Eigen::VectorXd lower = start;
    Eigen::VectorXd upper = start;
    for (int f = 0; f < encoder.dims(); ++f) {
      if (encoder.IsNumericFeature(f)) {
        lower[f] = 0;
        upper[f] = 1;
      }
    }
    MinimizeResult r = MinimizeInBox(negative_score, start, lower, upper, refine);
    refined.push_back(encoder.Snap(r.x));
  }
  if (refined.empty()) return refined;
  const Eigen::VectorXd base = refined.front();
  for (const SpaceEncoder::Block& b : encoder.blocks()) {
    if (b.kind != SpaceEncoder::Kind::kCategorical) continue;
    for (int v = 0; v < b.width; ++v) {
      if (base[b.offset + v] == 1) continue;
      Eigen::VectorXd x = base;
      x.segment(b.offset, b.width).setZero();
      x[b.offset + v] = 1;
      refined.push_back(x);
    }
  }
  return refined;
}

// `candidates` (where the GP predicts `at`) and the refinements of the best of them (Refine,
// `max_starts`), best Score first.
std::vector<Scored> Ranked(const Model& model, const SpaceEncoder& encoder,
                           const Eigen::MatrixXd& candidates, const Prediction& at,
                           size_t max_starts) {
  const Eigen::VectorXd scores = model.Score(candidates, at);
  std::vector<Scored> pool;
  pool.reserve(static_cast<size_t>(candidates.rows()) + 16);
  for (Eigen::Index i = 0; i < candidates.rows(); ++i) {
    pool.push_back({scores[i], candidates.row(i).transpose()});
  }
  SortByScore(pool);
  const std::vector<Eigen::VectorXd> refined = Refine(model, encoder, pool, max_starts);
  if (!refined.empty()) {
    const Eigen::VectorXd refined_scores = model.Score(Rows(refined, encoder.dims()));
    for (size_t i = 0; i < refined.size(); ++i) {
      pool.push_back({refined_scores[static_cast<Eigen::Index>(i)], refined[i]});
    }
    SortByScore(pool);
  }
  return pool;
}

// Whether `x` lies at least kMinBoundSeparation from each of `running`.
bool Separated(const Eigen::VectorXd& x, const std::vector<Eigen::VectorXd>& running) {
  for (const Eigen::VectorXd& r : running) {
    if ((r - x).norm() < kMinBoundSeparation) return false;
  }
  return true;
}

// The bounds of continuous ranges that earlier trials found bad: a (feature, 0 or 1) where every
// trial with that feature exactly on the bound did worse than the median result (a failed trial
// counts as the worst). A box-constrained optimiser of the acquisition lands exactly on a bound
// whenever the acquisition rises toward it, and a stationary GP cannot tell that the bound itself
// is a cliff (XGBoost's eta = 0 learns nothing, while eta = 0.05 may be the best value), so
// without this the same useless bound is proposed again with other values of the rest.
// A bound a running trial (`pending_x`) is on counts too, until a finished trial there did at
// least as well as the median: one trial at a time finds out whether an untried bound is a cliff.
// Without that, 4 trials at a time on the XGBoost problems put 2 to 4 concurrent trials on eta =
// 0 in a third of the runs (bench/README.md, "Real training problems, 4 trials at a time").
using BoundKey = std::pair<int, double>;
std::set<BoundKey> BadBounds(const SpaceEncoder& encoder, const std::vector<Eigen::VectorXd>& ok_x,
                             const Eigen::VectorXd& y_ok,
                             const std::vector<Eigen::VectorXd>& failed_x,
                             const std::vector<Eigen::VectorXd>& pending_x) {
  std::set<BoundKey> bad;
  if (y_ok.size() == 0) return bad;
  std::vector<double> sorted(y_ok.data(), y_ok.data() + y_ok.size());
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[(sorted.size() - 1) / 2];
  for (const SpaceEncoder::Block& b : encoder.blocks()) {
    if (b.kind != SpaceEncoder::Kind::kContinuous) continue;
    for (const double bound : {0.0, 1.0}) {
      bool tried = false;
      double best = INFINITY;
      for (size_t i = 0; i < ok_x.size(); ++i) {
        if (ok_x[i][b.offset] != bound) continue;
        tried = true;
        best = std::min(best, y_ok[static_cast<Eigen::Index>(i)]);
      }
      for (const Eigen::VectorXd& x : failed_x) tried |= x[b.offset] == bound;
      bool running = false;
      for (const Eigen::VectorXd& x : pending_x) running |= x[b.offset] == bound;
      if ((tried || running) && best > median) bad.insert({b.offset, bound});
    }
  }
  return bad;
}

bool OnBadBound(const Eigen::VectorXd& x, const std::set<BoundKey>& bad) {
  for (const auto& [feature, bound] : bad) {
    if (x[feature] == bound) return true;
  }
  return false;
}

// The best candidate of `pool` (sorted) not tried before and not on a bad bound. When every
// candidate repeats an earlier trial (a small discrete space): any new combination, else the best
// candidate that did not fail.
Assignment FirstNew(const std::vector<Scored>& pool, const std::set<Assignment>& seen,
                    const std::set<Assignment>& failed, const std::set<BoundKey>& bad_bounds,
                    const SpaceEncoder& encoder, std::mt19937_64& engine) {
  for (const Scored& s : pool) {
    if (OnBadBound(s.x, bad_bounds)) continue;
    Assignment params = encoder.Decode(s.x);
    if (seen.count(params) == 0) return params;
  }
  std::vector<double> u(static_cast<size_t>(encoder.params()));
  for (int attempt = 0; attempt < 1000; ++attempt) {
    for (double& c : u) c = UniformUnit(engine);
    Assignment params = encoder.Decode(encoder.FromCoordinates(u.data()));
    if (seen.count(params) == 0) return params;
  }
  for (const Scored& s : pool) {
    Assignment params = encoder.Decode(s.x);
    if (failed.count(params) == 0) return params;
  }
  return encoder.Decode(pool.front().x);
}

}  // namespace

Assignment BayesianStrategy::Acquire(const Data& data, const Fit& fit,
                                     std::mt19937_64& engine) const {
  const SpaceEncoder& encoder = data.encoder;
  const OutputWarping warping = OutputWarping::Fit(Vector(data.ok_y));
  // Shifted so that the GP's zero prior mean is options_.prior_mean_quantile of the results.
  Eigen::VectorXd y_ok = warping.Apply(Vector(data.ok_y));
  y_ok.array() -= Quantile(y_ok, options_.prior_mean_quantile);
  std::vector<Eigen::VectorXd> xs = data.ok_x;
  xs.insert(xs.end(), data.failed_x.begin(), data.failed_x.end());
  Eigen::VectorXd y(static_cast<Eigen::Index>(xs.size()));
  y.head(y_ok.size()) = y_ok;
  y.tail(static_cast<Eigen::Index>(data.failed_x.size())).setConstant(y_ok.maxCoeff());
  GaussianProcess gp(Rows(xs, encoder.dims()), y, encoder.FeatureGroups(), fit.hyperparameters);
  // The penalty uses the running trials' outcome distributions before the GP is conditioned on
  // their fantasies (afterwards their variance is only the noise).
  const bool penalize = !data.pending_x.empty();
  Penalty penalty;
  if (penalize) {
    Eigen::MatrixXd mean;
    Eigen::VectorXd variance;
    gp.Predict(Rows(data.pending_x, encoder.dims()), &mean, &variance);
    penalty.centers = data.pending_x;
    for (Eigen::Index j = 0; j < mean.rows(); ++j) {
      penalty.mean.push_back(mean(j, 0));
      penalty.sd.push_back(std::max(1e-6, std::sqrt(variance[j])));
    }
    // The minimum's estimate: a running trial believed below the best result keeps a ball of
    // radius >= 0.
    penalty.best = std::min(y_ok.minCoeff(), mean.col(0).minCoeff());
  }
  Eigen::VectorXd believed;
  Model model{gp, Fantasize(gp, data.pending_x, y_ok.minCoeff(),
                            std::max(1, options_.fantasy_samples), engine, &believed)};
  // Centres of the local candidates: the best results, and running trials believed as good.
  std::vector<std::pair<double, const Eigen::VectorXd*>> centers;
  for (size_t i = 0; i < data.ok_x.size(); ++i)
    centers.push_back({y_ok[static_cast<Eigen::Index>(i)], &data.ok_x[i]});
  for (size_t i = 0; i < data.pending_x.size(); ++i)
    centers.push_back({believed[static_cast<Eigen::Index>(i)], &data.pending_x[i]});
  std::stable_sort(centers.begin(), centers.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  centers.resize(std::min<size_t>(centers.size(), 5));
  std::vector<const Eigen::VectorXd*> best;
  for (const auto& [value, x] : centers) best.push_back(x);

  Eigen::MatrixXd candidates = Candidates(encoder, best, gp.size(), engine);
  if (penalize) {
    TrustRegionHalf(encoder, data.ok_x, data.ok_y, *best.front(), design_.size(), engine,
                    &candidates);
    // L from the posterior-mean slopes at the candidates (conditioning on the fantasies left
    // the mean as it was). This costs about as much as scoring the candidates' means; only the
    // uniform half instead made Hartmann-6 worse with 4 workers.
    const double slope = gp.MeanGradients(candidates).rowwise().norm().maxCoeff();
    penalty.lipschitz = std::max(1e-7, kPenaltySlopeScale * slope);
    model.penalty = &penalty;
  }
  Prediction at_candidates;
  gp.Predict(candidates, &at_candidates.mean, &at_candidates.variance);
  const bool large = gp.size() > kFewerStartsAbove;
  const size_t starts = large ? 3 : 5;
  std::vector<Scored> pool = Ranked(model, encoder, candidates, at_candidates, starts);
  if (penalize && options_.batch_lcb_kappa > 0) {
    // The exploiting pick goes first when it qualifies; the pool after it is the order of
    // preference when a pick repeats a trial or lies on a bad bound.
    Model bound{gp, model.incumbents};
    bound.kappa = options_.batch_lcb_kappa;
    Scored exploit = Ranked(bound, encoder, candidates, at_candidates, large ? 0 : starts).front();
    exploit.value = model.Score(exploit.x.transpose())[0];
    if (exploit.value >= pool.front().value - options_.batch_lcb_tolerance &&
        Separated(exploit.x, data.pending_x)) {
      pool.insert(pool.begin(), std::move(exploit));
    }
  }
  std::set<BoundKey> bad_bounds;
  if (options_.avoid_bad_bounds) {
    bad_bounds = BadBounds(encoder, data.ok_x, y_ok, data.failed_x, data.pending_x);
  }
  return FirstNew(pool, data.seen, data.failed, bad_bounds, encoder, engine);
}

}  // namespace amt::search
