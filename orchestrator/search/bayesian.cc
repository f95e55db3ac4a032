#include "orchestrator/search/bayesian.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <utility>

#include "common/status_macros.h"
#include "orchestrator/search/bayesian_internal.h"
#include "orchestrator/search/gp_encoding.h"
#include "orchestrator/search/random.h"

namespace amt::search {

using internal::MinimizedObjective;
using internal::UniformIndex;
using internal::UniformUnit;

namespace {

// The stream of the design, shared by all trials (trial indices are >= 0, so it never collides
// with a trial's own stream). Hyperparameter fits draw from the stream of a 63-bit hash of their
// data, which is far beyond any trial index.
constexpr int64_t kDesignStream = -1;

// Prior observations may lie this far (in units of a range's width) outside the current range.
constexpr double kPriorTolerance = 0.5;

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

}  // namespace

namespace internal {

std::optional<double> MinimizedObjective(const Trial& trial, bool minimize) {
  if (trial.state != TrialState::kSucceeded || !trial.objective.has_value() ||
      !std::isfinite(*trial.objective)) {
    return std::nullopt;
  }
  return minimize ? *trial.objective : -*trial.objective;
}

}  // namespace internal

BayesianStrategy::Data::Data(SpaceEncoder e, const SearchSpace& space,
                             const std::vector<PriorObservation>& priors, const History& history)
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
  int size = options_.initial_design_size;
  if (size <= 0) {
    size = std::max(5, std::min(10, params + 3));
    if (options_.max_trials > 0) {
      size = static_cast<int>(
          std::min<int64_t>(size, std::max<int64_t>(2, (options_.max_trials + 3) / 4)));
    }
  }
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

}  // namespace amt::search
