#include "orchestrator/search/bayesian.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <set>
#include <string>
#include <utility>

#include "common/status_macros.h"
#include "orchestrator/search/gp_acquisition.h"
#include "orchestrator/search/gp_encoding.h"
#include "orchestrator/search/gp_optimize.h"
#include "orchestrator/search/gp_warping.h"
#include "orchestrator/search/random.h"

namespace amt::search {
namespace {

// The stream of the design, shared by all trials (trial indices are >= 0, so it never collides
// with a trial's own stream). Hyperparameter fits draw from the stream of a 63-bit hash of their
// data, which is far beyond any trial index.
constexpr int64_t kDesignStream = -1;

// Schedule of hyperparameter refits: every finished trial up to kEveryFit, then whenever the
// number of finished trials has grown by kRefitGrowth. Past 100 results the length scales
// barely move between refits, while a refit costs several suggestions (bench/README.md): with
// growth 1.1 every tenth suggestion at 100-200 results paid one (the p99); with 1.5 a tuning
// job of 750 trials refits 5 times after the 100th result. Between refits every suggestion
// still conditions the GP on all results.
constexpr int64_t kEveryFit = 100;
constexpr double kRefitGrowth = 1.5;
// Results a hyperparameter fit uses at most (the best kFitKeepBest and a seeded sample of the
// rest): the O(n^3) fit is the cost that grows, and 200 points pin down a handful of length
// scales as well as 750 do.
constexpr size_t kMaxFitPoints = 200;
constexpr size_t kFitKeepBest = 50;
// Auto ranges stay linear until this many results are known.
constexpr size_t kMinResultsForAutoScaling = 10;
constexpr size_t kCacheSize = 8;
// Prior observations may lie this far (in units of a range's width) outside the current range.
constexpr double kPriorTolerance = 0.5;
// The Lipschitz constant of the local penalty is this times the steepest slope of the posterior
// mean among the candidates. The steepest slope overstates the slope near a minimum, where the
// running trials usually are, so the balls it gives are too small to keep the batch apart; with
// 4 workers (bayes_bench, 20-40 seeds) 0.5 beat 0.25, 1 and 2.
constexpr double kPenaltySlopeScale = 0.5;

double UniformUnit(std::mt19937_64& engine) {
  return static_cast<double>(engine() >> 11) * 0x1.0p-53;
}

double Normal(std::mt19937_64& engine) {
  const double u1 = 1.0 - UniformUnit(engine);
  const double u2 = UniformUnit(engine);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

// Uniform integer in [0, n) (n small: the modulo bias of 64-bit output is negligible and the
// result is the same with every standard library).
size_t UniformIndex(std::mt19937_64& engine, size_t n) { return engine() % n; }

// FNV-1a over bytes, for cache keys.
class Hasher {
 public:
  void Add(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
      hash_ ^= p[i];
      hash_ *= 0x100000001b3ULL;
    }
  }
  void Add(const std::string& s) {
    Add(s.data(), s.size());
    Add("\0", 1);
  }
  void Add(double v) { Add(&v, sizeof(v)); }
  uint64_t hash() const { return hash_; }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ULL;
};

// The largest refit point <= finished.
int64_t SchedulePoint(int64_t finished) {
  if (finished <= kEveryFit) return finished;
  int64_t point = kEveryFit;
  while (true) {
    const int64_t next =
        std::max(point + 1, static_cast<int64_t>(std::floor(point * kRefitGrowth)));
    if (next > finished) return point;
    point = next;
  }
}

// The parameters of `params` that belong to the space (history trials hold exactly those;
// prior observations may hold more).
Assignment Restrict(const Assignment& params, const SearchSpace& space) {
  Assignment out;
  auto copy = [&](const std::string& name) {
    auto it = params.find(name);
    if (it != params.end()) out.insert(*it);
  };
  for (const IntegerParameter& p : space.integers) copy(p.name);
  for (const ContinuousParameter& p : space.continuous) copy(p.name);
  for (const CategoricalParameter& p : space.categorical) copy(p.name);
  return out;
}

// A finished trial's objective in minimisation direction, or nullopt when it has none.
std::optional<double> MinimizedObjective(const Trial& trial, bool minimize) {
  if (trial.state != TrialState::kSucceeded || !trial.objective.has_value() ||
      !std::isfinite(*trial.objective)) {
    return std::nullopt;
  }
  return minimize ? *trial.objective : -*trial.objective;
}

Eigen::MatrixXd Rows(const std::vector<Eigen::VectorXd>& rows, int dims) {
  Eigen::MatrixXd m(static_cast<Eigen::Index>(rows.size()), dims);
  for (size_t i = 0; i < rows.size(); ++i) m.row(static_cast<Eigen::Index>(i)) = rows[i];
  return m;
}

Eigen::VectorXd Vector(const std::vector<double>& v) {
  return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}

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
  double Log(const Eigen::VectorXd& x, Eigen::VectorXd* gradient) const {
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

  // The log penalty at each row of `points`, without a temporary per row: it is evaluated
  // for every candidate.
  Eigen::VectorXd LogRows(const Eigen::MatrixXd& points) const {
    Eigen::VectorXd total = Eigen::VectorXd::Zero(points.rows());
    for (size_t j = 0; j < centers.size(); ++j) {
      const Eigen::VectorXd r2 =
          (points.rowwise() - centers[j].transpose()).rowwise().squaredNorm();
      for (Eigen::Index i = 0; i < points.rows(); ++i) {
        const double r = std::sqrt(r2[i] + 1e-18);
        double unused = 0;
        total[i] += LogNormalCdf((lipschitz * r - mean[j] + best) / sd[j], &unused);
      }
    }
    return total;
  }
};

// The acquisition model: the GP conditioned on the running trials' fantasies, one incumbent
// (best value) per fantasy column, and the local penalty around the running trials (null when
// nothing runs).
struct Model {
  const GaussianProcess& gp;
  Eigen::VectorXd incumbents;
  const Penalty* penalty = nullptr;

  // The acquisition at each row of `points`: log of the mean over fantasy columns of EI.
  Eigen::VectorXd LogMeanEi(const Eigen::MatrixXd& points) const {
    const double log_columns = std::log(static_cast<double>(incumbents.size()));
    Eigen::MatrixXd mean;
    Eigen::VectorXd variance;
    gp.Predict(points, &mean, &variance);
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

  // -LogMeanEi at one point, with its gradient, for L-BFGS.
  double NegativeLogMeanEi(const Eigen::VectorXd& x, Eigen::VectorXd* gradient) const {
    const double log_columns = std::log(static_cast<double>(incumbents.size()));
    Eigen::VectorXd mean;
    double variance = 0;
    Eigen::MatrixXd d_mean;
    Eigen::VectorXd d_variance;
    gp.PredictWithGradient(x, &mean, &variance, &d_mean, &d_variance);
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

// Conditions `gp` on fantasies of the running trials' outcomes (at `pending_x`): `samples` joint
// posterior samples (1: the posterior mean, "kriging believer"). Each column is a possible world;
// a fantasised value below the best result also lowers that world's incumbent, so a running
// trial's neighbourhood promises no improvement it would already deliver. Returns the
// incumbents, one per column (just `best_observed` when nothing runs), and writes the running
// trials' posterior means to `believed` (left empty when nothing runs).
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
          x[b.offset] += step * Normal(engine);
        }
      }
    }
    candidates.row(i) = encoder.Snap(x);
  }
  return candidates;
}

struct Scored {
  double value;
  Eigen::VectorXd x;
};

// Best score first; stable, so equal scores keep their order.
void SortByScore(std::vector<Scored>& pool) {
  std::stable_sort(pool.begin(), pool.end(),
                   [](const Scored& a, const Scored& b) { return a.value > b.value; });
}

// Refines the best distinct candidates of `pool` (sorted) by L-BFGS on -log EI over the numeric
// features (the one-hot features are held by equal bounds), rounded to the space; then every
// other value of each categorical at the best refined point (a gradient cannot move a one-hot
// feature). Five starts, three past kFewerStartsAbove model points, where each evaluation costs
// two n^2 triangular solves (a third of a suggestion at 400 points).
constexpr int kFewerStartsAbove = 150;
std::vector<Eigen::VectorXd> Refine(const Model& model, const SpaceEncoder& encoder,
                                    const std::vector<Scored>& pool) {
  const size_t max_starts = model.gp.size() > kFewerStartsAbove ? 3 : 5;
  const Objective negative_log_ei = [&](const Eigen::VectorXd& x, Eigen::VectorXd* gradient) {
    return model.NegativeLogMeanEi(x, gradient);
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
    MinimizeResult r = MinimizeInBox(negative_log_ei, start, lower, upper, refine);
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

// The best candidate of `pool` (sorted) not tried before. When every candidate repeats an earlier
// trial (a small discrete space): any new combination, else the best candidate that did not fail.
Assignment FirstNew(const std::vector<Scored>& pool, const std::set<Assignment>& seen,
                    const std::set<Assignment>& failed, const SpaceEncoder& encoder,
                    std::mt19937_64& engine) {
  for (const Scored& s : pool) {
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

// The points the hyperparameter fit uses: all of them up to kMaxFitPoints, else the kFitKeepBest
// best results and a seeded sample of the others, in data order.
std::vector<size_t> FitSubsample(const std::vector<double>& ys, std::mt19937_64& engine) {
  std::vector<size_t> order(ys.size());
  std::iota(order.begin(), order.end(), 0);
  if (order.size() <= kMaxFitPoints) return order;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ys[a] < ys[b]; });
  for (size_t i = kFitKeepBest; i < kMaxFitPoints; ++i) {
    std::swap(order[i], order[i + UniformIndex(engine, order.size() - i)]);
  }
  order.resize(kMaxFitPoints);
  std::sort(order.begin(), order.end());
  return order;
}

}  // namespace

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
       const History& history)
      : encoder(std::move(e)) {
    for (const PriorObservation& prior : priors) {
      seen.insert(Restrict(prior.params, space));
      if (!std::isfinite(prior.objective)) continue;
      if (std::optional<Eigen::VectorXd> x = encoder.Encode(prior.params, kPriorTolerance)) {
        ok_x.push_back(std::move(*x));
        ok_y.push_back(history.minimize ? prior.objective : -prior.objective);
      }
    }
    for (const Trial& trial : history.trials) {
      const Assignment params = Restrict(trial.params, space);
      seen.insert(params);
      std::optional<Eigen::VectorXd> x = encoder.Encode(params);
      const std::optional<double> y = MinimizedObjective(trial, history.minimize);
      if (trial.state == TrialState::kPending) {
        if (x.has_value()) pending_x.push_back(std::move(*x));
      } else if (y.has_value()) {
        if (x.has_value()) {
          ok_x.push_back(std::move(*x));
          ok_y.push_back(*y);
        }
      } else {
        failed.insert(params);
        if (x.has_value()) failed_x.push_back(std::move(*x));
      }
    }
  }
};

absl::StatusOr<std::unique_ptr<Strategy>> BayesianStrategy::Create(SearchSpace space, uint64_t seed,
                                                                   BayesianOptions options) {
  RETURN_IF_ERROR(space.Validate());
  return std::unique_ptr<Strategy>(
      new BayesianStrategy(std::move(space), seed, std::move(options)));
}

BayesianStrategy::BayesianStrategy(SearchSpace space, uint64_t seed, BayesianOptions options)
    : space_(std::move(space)), seed_(seed), options_(std::move(options)) {
  const SpaceEncoder encoder(space_);
  const int params = encoder.params();
  if (params == 0) return;
  int size = options_.initial_design_size > 0 ? options_.initial_design_size
                                              : std::max(5, std::min(10, params + 3));
  size_t usable_priors = 0;
  for (const PriorObservation& prior : options_.prior_observations) {
    usable_priors +=
        std::isfinite(prior.objective) && encoder.Encode(prior.params, kPriorTolerance).has_value();
  }
  size = std::max(0, size - static_cast<int>(usable_priors));
  if (size == 0) return;

  // The most spread-out (largest minimum pairwise distance) of 20 Latin hypercubes.
  std::mt19937_64 engine(TrialSeed(seed_, kDesignStream));
  double best_spread = -1;
  for (int attempt = 0; attempt < 20; ++attempt) {
    std::vector<std::vector<double>> design(static_cast<size_t>(size),
                                            std::vector<double>(static_cast<size_t>(params)));
    for (int j = 0; j < params; ++j) {
      std::vector<int> cells(static_cast<size_t>(size));
      std::iota(cells.begin(), cells.end(), 0);
      for (size_t i = cells.size(); i > 1; --i) {
        std::swap(cells[i - 1], cells[UniformIndex(engine, i)]);
      }
      for (int i = 0; i < size; ++i) {
        design[static_cast<size_t>(i)][static_cast<size_t>(j)] =
            (cells[static_cast<size_t>(i)] + UniformUnit(engine)) / size;
      }
    }
    double spread = std::numeric_limits<double>::infinity();
    for (int a = 0; a < size; ++a) {
      for (int b = a + 1; b < size; ++b) {
        double d = 0;
        for (int j = 0; j < params; ++j) {
          const double t = design[static_cast<size_t>(a)][static_cast<size_t>(j)] -
                           design[static_cast<size_t>(b)][static_cast<size_t>(j)];
          d += t * t;
        }
        spread = std::min(spread, d);
      }
    }
    if (spread > best_spread) {
      best_spread = spread;
      design_ = std::move(design);
    }
  }
}

absl::StatusOr<Assignment> BayesianStrategy::Suggest(const History& history, int64_t index) {
  if (index < 0) {
    return absl::InvalidArgumentError("Trial index " + std::to_string(index) + " is negative.");
  }
  std::mt19937_64 engine(TrialSeed(seed_, index));
  const SpaceEncoder base(space_);
  if (base.params() == 0) return base.Decode(Eigen::VectorXd::Zero(0));
  if (index < static_cast<int64_t>(design_.size())) {
    Assignment params =
        base.Decode(base.FromCoordinates(design_[static_cast<size_t>(index)].data()));
    // A design point repeats an earlier trial only in tiny discrete spaces; then the model
    // picks something new instead.
    bool repeated = false;
    for (const Trial& trial : history.trials) repeated |= Restrict(trial.params, space_) == params;
    if (!repeated) return params;
  }
  const Fit fit = FitFor(history);
  const Data data(SpaceEncoder(space_, fit.auto_log), space_, options_.prior_observations, history);
  if (data.ok_y.size() < 2) return SpreadOut(data, engine);
  return Acquire(data, fit, engine);
}

BayesianStrategy::Fit BayesianStrategy::FitFor(const History& history) {
  // The fit uses the first SchedulePoint(done) finished trials in launch order: every result up
  // to kEveryFit, then a prefix that grows in steps of 10%. Between steps the fitted data stays
  // the same, so the cached fit is reused; a trial that runs for long (or forever) delays
  // nothing, it simply joins the data when it finishes.
  int64_t done = 0;
  for (const Trial& trial : history.trials) done += trial.state != TrialState::kPending;
  const size_t points = static_cast<size_t>(SchedulePoint(done));
  History prefix;
  prefix.minimize = history.minimize;
  for (const Trial& trial : history.trials) {
    if (prefix.trials.size() == points) break;
    if (trial.state != TrialState::kPending) prefix.trials.push_back(trial);
  }

  std::vector<std::string> auto_candidates;
  if (options_.learn_auto_scaling) auto_candidates = SpaceEncoder::AutoLogCandidates(space_);

  Hasher hasher;
  hasher.Add(history.minimize ? 1.0 : 0.0);
  size_t results = options_.prior_observations.size();
  for (const Trial& trial : prefix.trials) {
    const std::optional<double> y = MinimizedObjective(trial, history.minimize);
    if (!y.has_value()) continue;
    ++results;
    for (const auto& [name, value] : trial.params) {
      hasher.Add(name);
      hasher.Add(value);
    }
    hasher.Add(*y);
  }
  const uint64_t key = hasher.hash();
  for (const Fit& fit : cache_) {
    if (fit.key == key) return fit;
  }

  std::vector<std::vector<bool>> encodings = {std::vector<bool>(auto_candidates.size(), false)};
  if (!auto_candidates.empty() && results >= kMinResultsForAutoScaling) {
    encodings.push_back(std::vector<bool>(auto_candidates.size(), true));
  }
  Fit best{key, GpHyperparameters::Unpack(GpPrior(SpaceEncoder(space_).params()).mean),
           encodings[0]};
  double best_value = std::numeric_limits<double>::infinity();
  for (const std::vector<bool>& auto_log : encodings) {
    const Data data(SpaceEncoder(space_, auto_log), space_, options_.prior_observations, prefix);
    const std::vector<int> groups = data.encoder.FeatureGroups();
    const GpPrior prior(data.encoder.params());
    if (data.ok_y.size() < 2) {
      best.hyperparameters = GpHyperparameters::Unpack(prior.mean);
      break;
    }
    std::mt19937_64 engine(TrialSeed(seed_, static_cast<int64_t>(key >> 1)));
    std::vector<Eigen::VectorXd> xs;
    std::vector<double> ys;
    for (size_t i : FitSubsample(data.ok_y, engine)) {
      xs.push_back(data.ok_x[i]);
      ys.push_back(data.ok_y[i]);
    }
    const Eigen::MatrixXd x = Rows(xs, data.encoder.dims());
    const Eigen::VectorXd y = OutputWarping::Fit(Vector(ys)).Apply(Vector(ys));
    // Past kEveryFit results a refit starts from the prior mean only: the random restart
    // doubled its cost (96 -> 39 ms at 300 results), and with that many results the restart
    // guards less against a poor optimum than it does on the first few dozen.
    FitOptions fit_options;
    if (results > static_cast<size_t>(kEveryFit)) fit_options.random_starts = 0;
    GpHyperparameters hp = FitHyperparameters(x, y, groups, engine, fit_options);
    const double value = MarginalLikelihood(x, y, groups)(hp.Pack(), nullptr);
    if (value < best_value) {
      best_value = value;
      best.hyperparameters = std::move(hp);
      best.auto_log = auto_log;
    }
  }
  cache_.push_front(best);
  if (cache_.size() > kCacheSize) cache_.pop_back();
  return best;
}

Assignment BayesianStrategy::SpreadOut(const Data& data, std::mt19937_64& engine) const {
  const SpaceEncoder& encoder = data.encoder;
  std::vector<double> u(static_cast<size_t>(encoder.params()));
  Assignment best;
  double best_distance = -1;
  for (int attempt = 0; attempt < 256; ++attempt) {
    for (double& c : u) c = UniformUnit(engine);
    const Eigen::VectorXd x = encoder.FromCoordinates(u.data());
    double distance = std::numeric_limits<double>::infinity();
    for (const auto* set : {&data.ok_x, &data.failed_x, &data.pending_x}) {
      for (const Eigen::VectorXd& other : *set) {
        distance = std::min(distance, (x - other).squaredNorm());
      }
    }
    Assignment params = encoder.Decode(x);
    if (data.seen.count(params) > 0) distance = -0.5;  // only when nothing new was drawn
    if (distance > best_distance) {
      best_distance = distance;
      best = std::move(params);
    }
  }
  return best;
}

Assignment BayesianStrategy::Acquire(const Data& data, const Fit& fit,
                                     std::mt19937_64& engine) const {
  const SpaceEncoder& encoder = data.encoder;
  const OutputWarping warping = OutputWarping::Fit(Vector(data.ok_y));
  const Eigen::VectorXd y_ok = warping.Apply(Vector(data.ok_y));
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

  const Eigen::MatrixXd candidates = Candidates(encoder, best, gp.size(), engine);
  if (penalize) {
    // L from the posterior-mean slopes at the candidates (conditioning on the fantasies left
    // the mean as it was). This costs about as much as scoring the candidates' means; only the
    // uniform half instead made Hartmann-6 worse with 4 workers.
    const double slope = gp.MeanGradients(candidates).rowwise().norm().maxCoeff();
    penalty.lipschitz = std::max(1e-7, kPenaltySlopeScale * slope);
    model.penalty = &penalty;
  }
  const Eigen::VectorXd scores = model.LogMeanEi(candidates);
  std::vector<Scored> pool;
  pool.reserve(static_cast<size_t>(candidates.rows()) + 16);
  for (Eigen::Index i = 0; i < candidates.rows(); ++i) {
    pool.push_back({scores[i], candidates.row(i).transpose()});
  }
  SortByScore(pool);
  const std::vector<Eigen::VectorXd> refined = Refine(model, encoder, pool);
  if (!refined.empty()) {
    const Eigen::VectorXd refined_scores = model.LogMeanEi(Rows(refined, encoder.dims()));
    for (size_t i = 0; i < refined.size(); ++i) {
      pool.push_back({refined_scores[static_cast<Eigen::Index>(i)], refined[i]});
    }
    SortByScore(pool);
  }
  return FirstNew(pool, data.seen, data.failed, encoder, engine);
}

}  // namespace amt::search
