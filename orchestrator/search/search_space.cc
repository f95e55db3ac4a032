#include "orchestrator/search/search_space.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <string_view>
#include <system_error>

#include "common/status_macros.h"

namespace amt::search {
namespace {

// Strict parsers: the whole text must be the number (no whitespace), an optional leading '+' is
// accepted because the AWS CLI and the SDKs pass numbers through str() and users type "+1".
std::string_view StripPlus(std::string_view text) {
  if (text.size() > 1 && text[0] == '+' && text[1] != '-' && text[1] != '+') {
    text.remove_prefix(1);
  }
  return text;
}

bool ParseInt64(std::string_view text, int64_t* out) {
  text = StripPlus(text);
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

bool ParseFiniteDouble(std::string_view text, double* out) {
  text = StripPlus(text);
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out, std::chars_format::general);
  return ec == std::errc() && ptr == end && std::isfinite(*out);
}

absl::Status BadBound(const std::string& kind, const std::string& name, const std::string& member,
                      const std::string& value, const std::string& expected) {
  return absl::InvalidArgumentError(kind + " parameter range '" + name + "': " + member + " '" +
                                    value + "' is not " + expected + ".");
}

absl::StatusOr<Scaling> ScalingOf(bool has_scaling, const std::string& scaling) {
  if (!has_scaling) return Scaling::kAuto;
  return ParseScaling(scaling);
}

}  // namespace

absl::StatusOr<Scaling> ParseScaling(const std::string& name) {
  if (name == "Auto") return Scaling::kAuto;
  if (name == "Linear") return Scaling::kLinear;
  if (name == "Logarithmic") return Scaling::kLogarithmic;
  if (name == "ReverseLogarithmic") return Scaling::kReverseLogarithmic;
  return absl::InvalidArgumentError("Unknown ScalingType '" + name +
                                    "'; expected Auto, Linear, Logarithmic or ReverseLogarithmic.");
}

std::string ScalingName(Scaling scaling) {
  switch (scaling) {
    case Scaling::kAuto:
      return "Auto";
    case Scaling::kLinear:
      return "Linear";
    case Scaling::kLogarithmic:
      return "Logarithmic";
    case Scaling::kReverseLogarithmic:
      return "ReverseLogarithmic";
  }
  return "Auto";
}

absl::StatusOr<SearchSpace> SearchSpace::FromProto(const v1::ParameterRanges& ranges) {
  SearchSpace space;
  for (const v1::IntegerParameterRange& range : ranges.integer_parameter_ranges()) {
    IntegerParameter p;
    p.name = range.name();
    if (!ParseInt64(range.min_value(), &p.min_value)) {
      return BadBound("Integer", p.name, "MinValue", range.min_value(), "an integer");
    }
    if (!ParseInt64(range.max_value(), &p.max_value)) {
      return BadBound("Integer", p.name, "MaxValue", range.max_value(), "an integer");
    }
    ASSIGN_OR_RETURN(p.scaling, ScalingOf(range.has_scaling_type(), range.scaling_type()));
    space.integers.push_back(std::move(p));
  }
  for (const v1::ContinuousParameterRange& range : ranges.continuous_parameter_ranges()) {
    ContinuousParameter p;
    p.name = range.name();
    if (!ParseFiniteDouble(range.min_value(), &p.min_value)) {
      return BadBound("Continuous", p.name, "MinValue", range.min_value(), "a finite number");
    }
    if (!ParseFiniteDouble(range.max_value(), &p.max_value)) {
      return BadBound("Continuous", p.name, "MaxValue", range.max_value(), "a finite number");
    }
    ASSIGN_OR_RETURN(p.scaling, ScalingOf(range.has_scaling_type(), range.scaling_type()));
    space.continuous.push_back(std::move(p));
  }
  for (const v1::CategoricalParameterRange& range : ranges.categorical_parameter_ranges()) {
    CategoricalParameter p;
    p.name = range.name();
    p.values.assign(range.values().begin(), range.values().end());
    space.categorical.push_back(std::move(p));
  }
  RETURN_IF_ERROR(space.Validate());
  return space;
}

absl::Status SearchSpace::Validate() const {
  std::set<std::string> names;
  auto check_name = [&names](const std::string& kind, const std::string& name) -> absl::Status {
    if (name.empty()) {
      return absl::InvalidArgumentError(kind + " parameter range has an empty Name.");
    }
    if (!names.insert(name).second) {
      return absl::InvalidArgumentError("Parameter range name '" + name +
                                        "' is used more than once.");
    }
    return absl::OkStatus();
  };
  for (const IntegerParameter& p : integers) {
    RETURN_IF_ERROR(check_name("Integer", p.name));
    const std::string prefix = "Integer parameter range '" + p.name + "': ";
    if (p.min_value > p.max_value) {
      return absl::InvalidArgumentError(prefix + "MinValue is greater than MaxValue.");
    }
    if (p.scaling == Scaling::kLogarithmic && p.min_value <= 0) {
      return absl::InvalidArgumentError(prefix +
                                        "Logarithmic scaling requires MinValue greater than 0.");
    }
    if (p.scaling == Scaling::kReverseLogarithmic) {
      return absl::InvalidArgumentError(
          prefix + "ReverseLogarithmic scaling is supported only for continuous ranges.");
    }
  }
  for (const ContinuousParameter& p : continuous) {
    RETURN_IF_ERROR(check_name("Continuous", p.name));
    const std::string prefix = "Continuous parameter range '" + p.name + "': ";
    if (!std::isfinite(p.min_value) || !std::isfinite(p.max_value)) {
      return absl::InvalidArgumentError(prefix + "bounds must be finite numbers.");
    }
    if (p.min_value > p.max_value) {
      return absl::InvalidArgumentError(prefix + "MinValue is greater than MaxValue.");
    }
    if (p.scaling == Scaling::kLogarithmic && p.min_value <= 0) {
      return absl::InvalidArgumentError(prefix +
                                        "Logarithmic scaling requires MinValue greater than 0.");
    }
    if (p.scaling == Scaling::kReverseLogarithmic && (p.min_value < 0 || p.max_value >= 1)) {
      return absl::InvalidArgumentError(
          prefix + "ReverseLogarithmic scaling requires 0 <= MinValue <= MaxValue < 1.");
    }
  }
  for (const CategoricalParameter& p : categorical) {
    RETURN_IF_ERROR(check_name("Categorical", p.name));
    if (p.values.empty()) {
      return absl::InvalidArgumentError("Categorical parameter range '" + p.name +
                                        "' has no Values.");
    }
  }
  return absl::OkStatus();
}

int64_t SearchSpace::GridSize() const {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t size = 1;
  for (const CategoricalParameter& p : categorical) {
    const int64_t n = static_cast<int64_t>(p.values.size());
    if (n == 0) return 0;
    if (size > kMax / n) return kMax;
    size *= n;
  }
  return size;
}

}  // namespace amt::search
