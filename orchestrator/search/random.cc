#include "orchestrator/search/random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "common/status_macros.h"

namespace amt::search {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) with 53 random bits.
double UniformUnit(std::mt19937_64& engine) {
  return static_cast<double>(engine() >> 11) * 0x1.0p-53;
}

// Uniform in [0, span] inclusive, without modulo bias (rejection of the incomplete last block).
uint64_t UniformUpTo(std::mt19937_64& engine, uint64_t span) {
  if (span == std::numeric_limits<uint64_t>::max()) return engine();
  const uint64_t n = span + 1;
  const uint64_t limit =
      std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % n;
  uint64_t x;
  do {
    x = engine();
  } while (x >= limit);
  return x % n;
}

double Clamp(double x, double lo, double hi) { return std::min(std::max(x, lo), hi); }

// exp(uniform(log lo, log hi)) for 0 < lo <= hi.
double LogUniform(std::mt19937_64& engine, double lo, double hi) {
  const double log_lo = std::log(lo);
  const double log_hi = std::log(hi);
  return std::exp(log_lo + UniformUnit(engine) * (log_hi - log_lo));
}

int64_t SampleInteger(const IntegerParameter& p, std::mt19937_64& engine) {
  if (p.scaling == Scaling::kLogarithmic) {
    // Integer k owns [k, k + 1) of the log-uniform continuum; doubles lose precision above 2^53,
    // where the clamp keeps the result in range.
    const double hi = static_cast<double>(p.max_value) + 1.0;
    const double x = std::floor(LogUniform(engine, static_cast<double>(p.min_value), hi));
    if (x <= static_cast<double>(p.min_value)) return p.min_value;
    if (x >= static_cast<double>(p.max_value)) return p.max_value;
    return static_cast<int64_t>(x);
  }
  const uint64_t span = static_cast<uint64_t>(p.max_value) - static_cast<uint64_t>(p.min_value);
  return static_cast<int64_t>(static_cast<uint64_t>(p.min_value) + UniformUpTo(engine, span));
}

double SampleContinuous(const ContinuousParameter& p, std::mt19937_64& engine) {
  const double lo = p.min_value;
  const double hi = p.max_value;
  switch (p.scaling) {
    case Scaling::kLogarithmic:
      return Clamp(LogUniform(engine, lo, hi), lo, hi);
    case Scaling::kReverseLogarithmic:
      // 1 - hi > 0 because Validate() requires hi < 1.
      return Clamp(1.0 - LogUniform(engine, 1.0 - hi, 1.0 - lo), lo, hi);
    case Scaling::kAuto:
    case Scaling::kLinear:
      break;
  }
  // lo + u * (hi - lo) could overflow for bounds near +-DBL_MAX; the two-term form cannot.
  const double u = UniformUnit(engine);
  return Clamp(lo * (1.0 - u) + hi * u, lo, hi);
}

}  // namespace

uint64_t TrialSeed(uint64_t seed, int64_t index) {
  return SplitMix64(SplitMix64(seed) ^
                    SplitMix64(static_cast<uint64_t>(index) ^ 0x5851f42d4c957f2dULL));
}

Assignment SampleAssignment(const SearchSpace& space, std::mt19937_64& engine) {
  Assignment params;
  for (const IntegerParameter& p : space.integers) {
    params[p.name] = FormatInteger(SampleInteger(p, engine));
  }
  for (const ContinuousParameter& p : space.continuous) {
    params[p.name] = FormatContinuous(SampleContinuous(p, engine));
  }
  for (const CategoricalParameter& p : space.categorical) {
    params[p.name] = p.values[UniformUpTo(engine, p.values.size() - 1)];
  }
  return params;
}

absl::StatusOr<std::unique_ptr<RandomStrategy>> RandomStrategy::Create(SearchSpace space,
                                                                       uint64_t seed) {
  RETURN_IF_ERROR(space.Validate());
  return std::unique_ptr<RandomStrategy>(new RandomStrategy(std::move(space), seed));
}

absl::StatusOr<Assignment> RandomStrategy::Suggest(const History& /*history*/, int64_t index) {
  if (index < 0) {
    return absl::InvalidArgumentError("Trial index " + std::to_string(index) + " is negative.");
  }
  std::mt19937_64 engine(TrialSeed(seed_, index));
  return SampleAssignment(space_, engine);
}

}  // namespace amt::search
