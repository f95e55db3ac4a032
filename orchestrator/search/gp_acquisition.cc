#include "orchestrator/search/gp_acquisition.h"

#include <cmath>

namespace amt::search {
namespace {

constexpr double kLogSqrt2Pi = 0.91893853320467274178;
constexpr double kSqrtHalf = 0.70710678118654752440;

double LogPhi(double z) { return -0.5 * z * z - kLogSqrt2Pi; }

// The direct formula loses about log10(z^2) digits to cancellation (phi(z) ~ -z Phi(z)) and
// phi underflows near z = -38. Below z = -25 the asymptotic series h(z) = phi(z) / z^2 * S(z)
// and Phi(z) = phi(z) / |z| * T(z), S = 1 - 3/z^2 + 15/z^4 - ..., T = 1 - 1/z^2 + 3/z^4 - ...,
// is accurate to 1e-10 while the direct formula is still accurate to about 1e-7 above.
constexpr double kAsymptotic = -25.0;

double SeriesH(double z) {
  const double w = 1.0 / (z * z);
  return 1.0 + w * (-3.0 + w * (15.0 + w * (-105.0 + w * 945.0)));
}

double SeriesPhi(double z) {
  const double w = 1.0 / (z * z);
  return 1.0 + w * (-1.0 + w * (3.0 + w * (-15.0 + w * 105.0)));
}

}  // namespace

double LogH(double z) {
  if (z >= kAsymptotic) {
    const double cdf = 0.5 * std::erfc(-z * kSqrtHalf);
    return std::log(std::exp(LogPhi(z)) + z * cdf);
  }
  return LogPhi(z) - 2.0 * std::log(-z) + std::log(SeriesH(z));
}

double DLogH(double z) {
  if (z >= kAsymptotic) {
    const double cdf = 0.5 * std::erfc(-z * kSqrtHalf);
    return cdf / (std::exp(LogPhi(z)) + z * cdf);
  }
  // Phi / h = (phi / |z| T) / (phi / z^2 S) = |z| T / S.
  return -z * SeriesPhi(z) / SeriesH(z);
}

double LogExpectedImprovement(double mean, double variance, double best, double* d_mean,
                              double* d_variance) {
  const double sigma = std::sqrt(variance);
  const double z = (best - mean) / sigma;
  const double value = std::log(sigma) + LogH(z);
  if (d_mean != nullptr || d_variance != nullptr) {
    const double dz = DLogH(z);
    // dz/dmean = -1/sigma; dz/dvariance = -z / (2 variance); dlog(sigma)/dvariance = 1/(2v).
    if (d_mean != nullptr) *d_mean = -dz / sigma;
    if (d_variance != nullptr) *d_variance = 0.5 / variance - dz * z / (2.0 * variance);
  }
  return value;
}

}  // namespace amt::search
