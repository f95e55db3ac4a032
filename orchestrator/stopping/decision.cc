#include "orchestrator/stopping/decision.h"

#include <charconv>

namespace amt::stopping {
namespace {

// As printf's "%.*g" in the C locale (std::to_chars is specified so), without <cstdio>: the
// pure libraries include no I/O header (scripts/check-layering.py).
std::string WithPrecision(double v, int digits) {
  char buf[64];
  const auto end = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general, digits);
  return std::string(buf, end.ptr);
}

}  // namespace

std::string_view ReasonName(Reason reason) {
  switch (reason) {
    case Reason::kNotWorse:
      return "not_worse";
    case Reason::kWorse:
      return "worse";
    case Reason::kTooFewReferences:
      return "too_few_references";
    case Reason::kGracePeriod:
      return "grace_period";
    case Reason::kBelowMinResource:
      return "below_min_resource";
    case Reason::kNotARung:
      return "not_a_rung";
    case Reason::kTooFewAtRung:
      return "too_few_at_rung";
    case Reason::kInTopFraction:
      return "in_top_fraction";
    case Reason::kOutsideTopFraction:
      return "outside_top_fraction";
    case Reason::kReachedMaxResource:
      return "reached_max_resource";
    case Reason::kLastEpoch:
      return "last_epoch";
  }
  return "unknown";
}

std::string FormatValue(double v) { return WithPrecision(v, 6); }

std::pair<std::string, std::string> FormatCompared(double a, double b) {
  // 17 significant digits distinguish any two different doubles; equal values stop at 6.
  for (int digits = 6;; ++digits) {
    std::string sa = WithPrecision(a, digits);
    std::string sb = WithPrecision(b, digits);
    if (sa != sb || a == b || digits >= 17) return {std::move(sa), std::move(sb)};
  }
}

}  // namespace amt::stopping
