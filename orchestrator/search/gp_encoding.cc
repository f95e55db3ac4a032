#include "orchestrator/search/gp_encoding.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>
#include <system_error>
#include <utility>

#include "orchestrator/search/format.h"

namespace amt::search {
namespace {

std::string_view StripPlus(std::string_view text) {
  if (text.size() > 1 && text[0] == '+') text.remove_prefix(1);
  return text;
}

std::optional<double> ParseNumber(std::string_view text) {
  text = StripPlus(text);
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

// Integers as decimal text; prior observations from other tools may write "12.0", which is
// accepted when it is a whole number.
std::optional<double> ParseIntegerValue(std::string_view text) {
  text = StripPlus(text);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc() && ptr == text.data() + text.size()) return static_cast<double>(v);
  std::optional<double> d = ParseNumber(text);
  if (d.has_value() && std::floor(*d) == *d) return d;
  return std::nullopt;
}

bool CanBeLog(double min_value, double max_value) {
  return min_value > 0 && max_value / min_value >= 10.0;
}

}  // namespace

std::vector<std::string> SpaceEncoder::AutoLogCandidates(const SearchSpace& space) {
  std::vector<std::string> names;
  for (const IntegerParameter& p : space.integers) {
    if (p.scaling == Scaling::kAuto &&
        CanBeLog(static_cast<double>(p.min_value), static_cast<double>(p.max_value) + 1.0)) {
      names.push_back(p.name);
    }
  }
  for (const ContinuousParameter& p : space.continuous) {
    if (p.scaling == Scaling::kAuto && CanBeLog(p.min_value, p.max_value)) {
      names.push_back(p.name);
    }
  }
  return names;
}

SpaceEncoder::SpaceEncoder(SearchSpace space, std::vector<bool> auto_log)
    : space_(std::move(space)) {
  size_t auto_index = 0;
  // Whether the next Auto candidate was learned as logarithmic.
  auto next_auto_log = [&]() {
    const bool log = auto_index < auto_log.size() && auto_log[auto_index];
    ++auto_index;
    return log;
  };
  for (size_t i = 0; i < space_.integers.size(); ++i) {
    const IntegerParameter& p = space_.integers[i];
    const double lo = static_cast<double>(p.min_value);
    const double hi = static_cast<double>(p.max_value);
    bool log = p.scaling == Scaling::kLogarithmic;
    if (p.scaling == Scaling::kAuto && CanBeLog(lo, hi + 1.0)) log = next_auto_log();
    if (p.min_value == p.max_value) continue;
    Block b{Kind::kInteger, i, dims_, 1, log, false};
    // Integer k owns [k - 0.5, k + 0.5) on the linear scale and [log k, log(k + 1)) on the log
    // scale, the same cells RandomStrategy samples from.
    if (log) {
      b.lo = std::log(lo);
      b.hi = std::log(hi + 1.0);
    } else {
      b.lo = lo - 0.5;
      b.hi = hi + 0.5;
    }
    blocks_.push_back(b);
    dims_ += 1;
  }
  for (size_t i = 0; i < space_.continuous.size(); ++i) {
    const ContinuousParameter& p = space_.continuous[i];
    bool log = p.scaling == Scaling::kLogarithmic;
    if (p.scaling == Scaling::kAuto && CanBeLog(p.min_value, p.max_value)) log = next_auto_log();
    if (p.min_value == p.max_value) continue;
    Block b{Kind::kContinuous, i, dims_, 1, log, p.scaling == Scaling::kReverseLogarithmic};
    if (b.reverse) {
      b.lo = -std::log1p(-p.min_value);
      b.hi = -std::log1p(-p.max_value);
    } else if (log) {
      b.lo = std::log(p.min_value);
      b.hi = std::log(p.max_value);
    } else {
      b.lo = p.min_value;
      b.hi = p.max_value;
    }
    blocks_.push_back(b);
    dims_ += 1;
  }
  for (size_t i = 0; i < space_.categorical.size(); ++i) {
    const int k = static_cast<int>(space_.categorical[i].values.size());
    if (k < 2) continue;
    blocks_.push_back(Block{Kind::kCategorical, i, dims_, k, false, false});
    dims_ += k;
  }
  numeric_feature_.assign(static_cast<size_t>(dims_), true);
  for (const Block& b : blocks_) {
    if (b.kind == Kind::kCategorical) {
      for (int j = 0; j < b.width; ++j) numeric_feature_[static_cast<size_t>(b.offset + j)] = false;
    }
  }
}

std::vector<int> SpaceEncoder::FeatureGroups() const {
  std::vector<int> groups(static_cast<size_t>(dims_));
  for (size_t g = 0; g < blocks_.size(); ++g) {
    for (int j = 0; j < blocks_[g].width; ++j) {
      groups[static_cast<size_t>(blocks_[g].offset + j)] = static_cast<int>(g);
    }
  }
  return groups;
}

double SpaceEncoder::EncodeNumber(const Block& b, double value) const {
  double e = value;
  if (b.reverse) {
    if (value >= 1) return std::nan("");
    e = -std::log1p(-value);
  } else if (b.log) {
    if (value <= 0) return std::nan("");
    // An integer's feature is the middle of its cell, so rounding decodes it back exactly.
    e = b.kind == Kind::kInteger ? 0.5 * (std::log(value) + std::log(value + 1.0))
                                 : std::log(value);
  }
  return (e - b.lo) / (b.hi - b.lo);
}

double SpaceEncoder::DecodeNumber(const Block& b, double feature) const {
  const ContinuousParameter& p = space_.continuous[b.index];
  const double f = std::clamp(feature, 0.0, 1.0);
  double v;
  if (b.reverse) {
    v = -std::expm1(-(b.lo * (1.0 - f) + b.hi * f));
  } else if (b.log) {
    v = std::exp(b.lo * (1.0 - f) + b.hi * f);
  } else {
    // The two-term form cannot overflow for bounds near +-DBL_MAX.
    v = b.lo * (1.0 - f) + b.hi * f;
  }
  return std::clamp(v, p.min_value, p.max_value);
}

int64_t SpaceEncoder::RoundInteger(const Block& b, double feature) const {
  const IntegerParameter& p = space_.integers[b.index];
  const double f = std::clamp(feature, 0.0, 1.0);
  const double x = b.lo * (1.0 - f) + b.hi * f;
  const double v = b.log ? std::floor(std::exp(x)) : std::floor(x + 0.5);
  if (v <= static_cast<double>(p.min_value)) return p.min_value;
  if (v >= static_cast<double>(p.max_value)) return p.max_value;
  return static_cast<int64_t>(v);
}

std::optional<Eigen::VectorXd> SpaceEncoder::Encode(const Assignment& params,
                                                    double tolerance) const {
  Eigen::VectorXd x = Eigen::VectorXd::Zero(dims_);
  for (const Block& b : blocks_) {
    std::string name;
    switch (b.kind) {
      case Kind::kInteger:
        name = space_.integers[b.index].name;
        break;
      case Kind::kContinuous:
        name = space_.continuous[b.index].name;
        break;
      case Kind::kCategorical:
        name = space_.categorical[b.index].name;
        break;
    }
    auto it = params.find(name);
    if (it == params.end()) return std::nullopt;
    if (b.kind == Kind::kCategorical) {
      const std::vector<std::string>& values = space_.categorical[b.index].values;
      auto v = std::find(values.begin(), values.end(), it->second);
      if (v == values.end()) return std::nullopt;
      x[b.offset + static_cast<int>(v - values.begin())] = 1.0;
      continue;
    }
    std::optional<double> value =
        b.kind == Kind::kInteger ? ParseIntegerValue(it->second) : ParseNumber(it->second);
    if (!value.has_value()) return std::nullopt;
    const double f = EncodeNumber(b, *value);
    if (!std::isfinite(f) || f < -tolerance || f > 1.0 + tolerance) return std::nullopt;
    x[b.offset] = f;
  }
  return x;
}

Assignment SpaceEncoder::Decode(const Eigen::VectorXd& features) const {
  Assignment params;
  // Single-valued parameters first; searchable ones overwrite nothing (names are unique).
  for (const IntegerParameter& p : space_.integers) {
    if (p.min_value == p.max_value) params[p.name] = FormatInteger(p.min_value);
  }
  for (const ContinuousParameter& p : space_.continuous) {
    if (p.min_value == p.max_value) params[p.name] = FormatContinuous(p.min_value);
  }
  for (const CategoricalParameter& p : space_.categorical) {
    if (p.values.size() == 1) params[p.name] = p.values[0];
  }
  for (const Block& b : blocks_) {
    switch (b.kind) {
      case Kind::kInteger:
        params[space_.integers[b.index].name] = FormatInteger(RoundInteger(b, features[b.offset]));
        break;
      case Kind::kContinuous:
        params[space_.continuous[b.index].name] =
            FormatContinuous(DecodeNumber(b, features[b.offset]));
        break;
      case Kind::kCategorical: {
        int best = 0;
        features.segment(b.offset, b.width).maxCoeff(&best);
        params[space_.categorical[b.index].name] =
            space_.categorical[b.index].values[static_cast<size_t>(best)];
        break;
      }
    }
  }
  return params;
}

Eigen::VectorXd SpaceEncoder::Snap(const Eigen::VectorXd& features) const {
  Eigen::VectorXd x = features;
  for (const Block& b : blocks_) {
    switch (b.kind) {
      case Kind::kInteger:
        x[b.offset] = EncodeNumber(b, static_cast<double>(RoundInteger(b, features[b.offset])));
        break;
      case Kind::kContinuous:
        x[b.offset] = std::clamp(features[b.offset], 0.0, 1.0);
        break;
      case Kind::kCategorical: {
        int best = 0;
        features.segment(b.offset, b.width).maxCoeff(&best);
        x.segment(b.offset, b.width).setZero();
        x[b.offset + best] = 1.0;
        break;
      }
    }
  }
  return x;
}

Eigen::VectorXd SpaceEncoder::FromCoordinates(const double* u) const {
  Eigen::VectorXd x = Eigen::VectorXd::Zero(dims_);
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const Block& b = blocks_[i];
    const double c = std::clamp(u[i], 0.0, 1.0);
    switch (b.kind) {
      case Kind::kInteger:
        x[b.offset] = EncodeNumber(b, static_cast<double>(RoundInteger(b, c)));
        break;
      case Kind::kContinuous:
        x[b.offset] = c;
        break;
      case Kind::kCategorical: {
        const int k = std::min(b.width - 1, static_cast<int>(c * b.width));
        x[b.offset + k] = 1.0;
        break;
      }
    }
  }
  return x;
}

}  // namespace amt::search
