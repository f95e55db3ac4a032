#include "orchestrator/spot/spot.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace amt::spot {
namespace {

// SplitMix64 over the seed, the job name (FNV-1a) and the attempt: a uniform draw in (0, 1).
double Uniform(uint64_t seed, std::string_view job, int attempt) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : job) {
    h ^= c;
    h *= 1099511628211ull;
  }
  uint64_t z = seed ^ (h + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(attempt + 1));
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (static_cast<double>(z >> 11) + 0.5) / 9007199254740992.0;  // 2^53
}

}  // namespace

absl::Status ValidateSpotOptions(const SpotOptions& options) {
  if (!(options.mean_seconds_to_interruption >= 0)) {
    return absl::InvalidArgumentError("SpotOptions.mean_seconds_to_interruption must be >= 0.");
  }
  if (!(options.interrupt_after_seconds >= 0)) {
    return absl::InvalidArgumentError("SpotOptions.interrupt_after_seconds must be >= 0.");
  }
  if (options.max_interruptions < 0) {
    return absl::InvalidArgumentError("SpotOptions.max_interruptions must be >= 0.");
  }
  if (!(options.discount >= 0 && options.discount < 1)) {
    return absl::InvalidArgumentError("SpotOptions.discount must be in [0, 1).");
  }
  return absl::OkStatus();
}

std::optional<double> InterruptionAfter(const SpotOptions& options, uint64_t seed,
                                        std::string_view job, int attempt, int interruptions) {
  if (interruptions >= options.max_interruptions) return std::nullopt;
  if (options.interrupt_after_seconds > 0) return options.interrupt_after_seconds;
  if (options.mean_seconds_to_interruption <= 0) return std::nullopt;
  return -options.mean_seconds_to_interruption * std::log(Uniform(seed, job, attempt));
}

int BillableSeconds(const SpotOptions& options, int training_seconds) {
  if (training_seconds <= 0) return 0;
  const double billable = std::round(training_seconds * (1 - options.discount));
  return std::max(1, static_cast<int>(billable));
}

}  // namespace amt::spot
