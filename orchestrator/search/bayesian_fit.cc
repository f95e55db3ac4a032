// BayesianStrategy::FitFor: the kernel hyperparameters, refitted on a schedule, on a subsample
// of the results, and cached by the data they were fitted to (see bayesian.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/search/bayesian.h"
#include "orchestrator/search/bayesian_internal.h"
#include "orchestrator/search/gp_encoding.h"
#include "orchestrator/search/gp_model.h"
#include "orchestrator/search/gp_warping.h"
#include "orchestrator/search/random.h"

namespace amt::search {

using internal::MinimizedObjective;
using internal::Rows;
using internal::UniformIndex;
using internal::Vector;

namespace {

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

}  // namespace amt::search
