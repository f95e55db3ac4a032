// The simulated learning curves of the early-stopping benchmark: a seeded family of loss curves
// over a three-parameter search space, with crossing curves (fast starters that end worse, slow
// starters that end best). curve_family.py implements the same family in Python for the Optuna
// side; stopping_bench.py checks that the two agree at fixed points.
//
// For bench seed `seed` (a problem instance) and a configuration x = (learning_rate in [1e-4, 0.1]
// log-scaled, regularization in [0, 1], layers in 1..8), with u = (log10(learning_rate) + 4) / 3:
//   optimum location:  u* = 0.25 + 0.2 * U1,  r* = 0.2 + 0.6 * U2       (U1, U2 from the seed)
//   asymptote          a = 0.10 + 0.8 (u - u*)^2 + 0.3 (regularization - r*)^2
//                          + 0.01 (layers - 5)^2
//   speed              k = (0.02 + 0.5 u^2) * (1.2 - 0.05 layers)       (per epoch)
//   true loss at epoch e >= 1:   f(x, e) = a + (1 - a) exp(-k e)
//   observed loss:     f(x, e) + 0.01 * z,  z standard normal from (seed, trial index, epoch)
// A large learning rate learns fast and settles high; the best asymptote sits at a smaller,
// slower learning rate, so rankings at early epochs differ from rankings at the end.
// Random numbers: SplitMix64 chains and Box-Muller (documented in the .cc), reproducible in any
// language with 64-bit unsigned arithmetic and IEEE doubles.
#ifndef AMT_BENCH_STOPPING_CURVE_FAMILY_H_
#define AMT_BENCH_STOPPING_CURVE_FAMILY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "orchestrator/search/search_space.h"
#include "orchestrator/search/strategy.h"

namespace amt::bench {

struct Config {
  double learning_rate = 0;
  double regularization = 0;
  int64_t layers = 0;

  bool operator==(const Config&) const = default;
};

// The constants that set how strongly curves cross (see the header comment).
struct Family {
  std::string name;
  double u_low, u_span;  // u* = u_low + u_span * U1
  double r_low, r_span;  // r* = r_low + r_span * U2
  double reg_slowdown;   // speed factor (1 - reg_slowdown * regularization)
};

// "mild" or "strong"; nullopt for another name.
std::optional<Family> FamilyNamed(std::string_view name);

// One problem instance of the family.
struct Problem {
  Family family;
  uint64_t seed = 0;
  double u_star = 0;
  double r_star = 0;
};

// The search space the strategies sample: learning_rate (Logarithmic), regularization (Linear),
// layers (Linear).
search::SearchSpace BenchSpace();

// Parses a strategy's assignment over BenchSpace(). InvalidArgument when a value is missing or
// does not parse.
absl::StatusOr<Config> ParseConfig(const search::Assignment& params);

Problem MakeProblem(const Family& family, uint64_t seed);

// f(x, e): the noise-free loss at epoch `epoch` (>= 1).
double TrueLoss(const Problem& problem, const Config& config, int64_t epoch);

// The loss the trainer of trial `index` reports at `epoch`: TrueLoss plus seeded noise.
double ObservedLoss(const Problem& problem, const Config& config, int64_t index, int64_t epoch);

// The smallest TrueLoss at `epoch` over the whole space (layers scanned, u and regularization on
// a grid refined around its best point): what regret is measured against.
double OptimalLoss(const Problem& problem, int64_t epoch);

}  // namespace amt::bench

#endif  // AMT_BENCH_STOPPING_CURVE_FAMILY_H_
