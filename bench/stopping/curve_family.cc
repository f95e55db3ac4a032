#include "bench/stopping/curve_family.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <system_error>

namespace amt::bench {
namespace {

constexpr double kNoise = 0.01;

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// [0, 1) from the top 53 bits.
double Unit(uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

double U(const Config& config) { return (std::log10(config.learning_rate) + 4.0) / 3.0; }

double Asymptote(const Problem& p, double u, double regularization, int64_t layers) {
  const double du = u - p.u_star;
  const double dr = regularization - p.r_star;
  const double dl = static_cast<double>(layers) - 5.0;
  return 0.10 + 0.8 * du * du + 0.3 * dr * dr + 0.01 * dl * dl;
}

double Speed(const Problem& p, double u, double regularization, int64_t layers) {
  return (0.02 + 0.5 * u * u) * (1.2 - 0.05 * static_cast<double>(layers)) *
         (1.0 - p.family.reg_slowdown * regularization);
}

double Loss(double a, double k, int64_t epoch) {
  return a + (1.0 - a) * std::exp(-k * static_cast<double>(epoch));
}

absl::StatusOr<double> ParseNumber(const search::Assignment& params, const std::string& name) {
  auto it = params.find(name);
  if (it == params.end()) return absl::InvalidArgumentError("Missing hyperparameter " + name);
  double v = 0;
  const std::string& text = it->second;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return absl::InvalidArgumentError("Hyperparameter " + name + "='" + text + "' is no number");
  }
  return v;
}

}  // namespace

search::SearchSpace BenchSpace() {
  search::SearchSpace space;
  space.integers.push_back({"layers", 1, 8, search::Scaling::kLinear});
  space.continuous.push_back({"learning_rate", 1e-4, 1e-1, search::Scaling::kLogarithmic});
  space.continuous.push_back({"regularization", 0.0, 1.0, search::Scaling::kLinear});
  return space;
}

absl::StatusOr<Config> ParseConfig(const search::Assignment& params) {
  Config config;
  absl::StatusOr<double> lr = ParseNumber(params, "learning_rate");
  if (!lr.ok()) return lr.status();
  absl::StatusOr<double> reg = ParseNumber(params, "regularization");
  if (!reg.ok()) return reg.status();
  absl::StatusOr<double> layers = ParseNumber(params, "layers");
  if (!layers.ok()) return layers.status();
  config.learning_rate = *lr;
  config.regularization = *reg;
  config.layers = static_cast<int64_t>(*layers);
  return config;
}

std::optional<Family> FamilyNamed(std::string_view name) {
  if (name == "mild") return Family{"mild", 0.55, 0.2, 0.3, 0.4, 0.5};
  if (name == "strong") return Family{"strong", 0.25, 0.2, 0.2, 0.6, 0.0};
  return std::nullopt;
}

Problem MakeProblem(const Family& family, uint64_t seed) {
  const uint64_t h1 = SplitMix64(seed ^ 0x0123456789abcdefULL);
  const uint64_t h2 = SplitMix64(h1);
  return Problem{family, seed, family.u_low + family.u_span * Unit(h1),
                 family.r_low + family.r_span * Unit(h2)};
}

double TrueLoss(const Problem& problem, const Config& config, int64_t epoch) {
  const double u = U(config);
  return Loss(Asymptote(problem, u, config.regularization, config.layers),
              Speed(problem, u, config.regularization, config.layers), epoch);
}

double ObservedLoss(const Problem& problem, const Config& config, int64_t index, int64_t epoch) {
  // Box-Muller over two uniforms chained from (seed, index, epoch); u1 in (0, 1] keeps log finite.
  const uint64_t h0 = SplitMix64(problem.seed);
  const uint64_t h1 = SplitMix64(h0 ^ static_cast<uint64_t>(index));
  const uint64_t h2 = SplitMix64(h1 ^ static_cast<uint64_t>(epoch));
  const uint64_t h3 = SplitMix64(h2);
  const double u1 = static_cast<double>((h2 >> 11) + 1) * 0x1.0p-53;
  const double u2 = Unit(h3);
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  return TrueLoss(problem, config, epoch) + kNoise * z;
}

double OptimalLoss(const Problem& problem, int64_t epoch) {
  // f is smooth in (u, regularization) for each layer count: a 401 x 401 grid finds the basin,
  // a 201 x 201 grid over +-1.5 cells around the best point refines it (error far below 1e-6).
  auto at = [&](double u, double r, int64_t layers) {
    return Loss(Asymptote(problem, u, r, layers), Speed(problem, u, r, layers), epoch);
  };
  constexpr int kCoarse = 400;
  constexpr int kFine = 200;
  double best = std::numeric_limits<double>::infinity();
  for (int64_t layers = 1; layers <= 8; ++layers) {
    double best_u = 0, best_r = 0, best_here = std::numeric_limits<double>::infinity();
    for (int i = 0; i <= kCoarse; ++i) {
      for (int j = 0; j <= kCoarse; ++j) {
        const double u = static_cast<double>(i) / kCoarse;
        const double r = static_cast<double>(j) / kCoarse;
        const double f = at(u, r, layers);
        if (f < best_here) best_here = f, best_u = u, best_r = r;
      }
    }
    const double cell = 1.0 / kCoarse;
    for (int i = 0; i <= kFine; ++i) {
      for (int j = 0; j <= kFine; ++j) {
        const double u = std::clamp(best_u + cell * (3.0 * i / kFine - 1.5), 0.0, 1.0);
        const double r = std::clamp(best_r + cell * (3.0 * j / kFine - 1.5), 0.0, 1.0);
        best_here = std::min(best_here, at(u, r, layers));
      }
    }
    best = std::min(best, best_here);
  }
  return best;
}

}  // namespace amt::bench
