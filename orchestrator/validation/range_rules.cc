// The hyperparameter ranges of a tuning job's definition (validation_internal.h).
#include <charconv>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "orchestrator/validation/validation_internal.h"

namespace amt::validation::internal {
namespace {

// AMT adds this static hyperparameter to every training job; it counts toward the 100.
constexpr char kTuningObjectiveMetric[] = "_tuning_objective_metric";
constexpr int kMaxHyperParameters = 100;

// A whole-string finite number in decimal or scientific notation.
std::optional<double> ParseNumber(std::string_view text) {
  if (text.size() > 1 && text.front() == '+' && text[1] != '-') text.remove_prefix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() ||
      !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// Ours: integer and continuous bounds, and what each scaling type needs (spec section 3).
// MinValue == MaxValue is allowed for an integer range (a fixed value, one point) but not for a
// continuous one, whose scaling needs an interval of positive width.
absl::Status CheckIntegerRange(const v1::IntegerParameterRange& range) {
  const std::string where = absl::StrCat("IntegerParameterRange '", range.name(), "'");
  const std::optional<int64_t> min = ParseInteger(range.min_value());
  if (!min) {
    return ValidationError(
        absl::StrCat("MinValue '", range.min_value(), "' of ", where, " is not an integer."));
  }
  const std::optional<int64_t> max = ParseInteger(range.max_value());
  if (!max) {
    return ValidationError(
        absl::StrCat("MaxValue '", range.max_value(), "' of ", where, " is not an integer."));
  }
  if (*min > *max) {
    return ValidationError(absl::StrCat("MinValue (", range.min_value(), ") of ", where,
                                        " must be less than or equal to MaxValue (",
                                        range.max_value(), ")."));
  }
  if (range.scaling_type() == "ReverseLogarithmic") {
    return ValidationError(absl::StrCat(where,
                                        " cannot use ReverseLogarithmic scaling; it is supported "
                                        "only for ContinuousParameterRanges."));
  }
  if (range.scaling_type() == "Logarithmic" && *min <= 0) {
    return ValidationError(
        absl::StrCat(where, " uses Logarithmic scaling, which needs MinValue greater than 0."));
  }
  return absl::OkStatus();
}

absl::Status CheckContinuousRange(const v1::ContinuousParameterRange& range) {
  const std::string where = absl::StrCat("ContinuousParameterRange '", range.name(), "'");
  const std::optional<double> min = ParseNumber(range.min_value());
  if (!min) {
    return ValidationError(
        absl::StrCat("MinValue '", range.min_value(), "' of ", where, " is not a number."));
  }
  const std::optional<double> max = ParseNumber(range.max_value());
  if (!max) {
    return ValidationError(
        absl::StrCat("MaxValue '", range.max_value(), "' of ", where, " is not a number."));
  }
  if (*min >= *max) {
    return ValidationError(absl::StrCat("MinValue (", range.min_value(), ") of ", where,
                                        " must be less than MaxValue (", range.max_value(), ")."));
  }
  if (range.scaling_type() == "Logarithmic" && *min <= 0) {
    return ValidationError(
        absl::StrCat(where, " uses Logarithmic scaling, which needs MinValue greater than 0."));
  }
  if (range.scaling_type() == "ReverseLogarithmic" && (*min < 0 || *max >= 1)) {
    return ValidationError(absl::StrCat(
        where, " uses ReverseLogarithmic scaling, which needs 0 <= MinValue and MaxValue < 1."));
  }
  return absl::OkStatus();
}

}  // namespace

// A whole-string integer; a leading '+' is accepted as Java's Integer.parseInt does.
std::optional<int64_t> ParseInteger(std::string_view text) {
  if (text.size() > 1 && text.front() == '+' && text[1] != '-') text.remove_prefix(1);
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// Ours, after the DG's rules (spec section 3): 30 tunable hyperparameters in total, 30 values per
// categorical range, names unique and not static, static + tunable + _tuning_objective_metric
// <= 100.
// With Autotune, AutoParameters have been turned into ranges (ApplyAutotune) and are only echoed.
absl::Status CheckRanges(const v1::ParameterRanges& ranges,
                         const google::protobuf::Map<std::string, std::string>& statics,
                         const Limits& limits, bool autotune) {
  if (ranges.auto_parameters_size() > 0 && !autotune) {
    return ValidationError(
        "AutoParameters are only supported with Autotune: add \"Autotune\": {\"Mode\": "
        "\"Enabled\"} to the request, or give the hyperparameters' ranges.");
  }
  const int tunable = ranges.integer_parameter_ranges_size() +
                      ranges.continuous_parameter_ranges_size() +
                      ranges.categorical_parameter_ranges_size();
  if (tunable > limits.max_tunable_parameters) {
    return ValidationError(absl::StrCat("The number of hyperparameter ranges (", tunable,
                                        ") exceeds the limit of ", limits.max_tunable_parameters,
                                        " tunable hyperparameters."));
  }
  for (const v1::CategoricalParameterRange& range : ranges.categorical_parameter_ranges()) {
    if (range.values_size() > limits.max_categorical_values) {
      return ValidationError(absl::StrCat("CategoricalParameterRange '", range.name(), "' has ",
                                          range.values_size(), " values; the limit is ",
                                          limits.max_categorical_values, "."));
    }
    std::set<std::string> values;
    for (const std::string& value : range.values()) {
      if (!values.insert(value).second) {
        return ValidationError(absl::StrCat("CategoricalParameterRange '", range.name(),
                                            "' lists the value '", value, "' more than once."));
      }
    }
  }
  std::vector<std::string> names;
  for (const auto& range : ranges.integer_parameter_ranges()) names.push_back(range.name());
  for (const auto& range : ranges.continuous_parameter_ranges()) names.push_back(range.name());
  for (const auto& range : ranges.categorical_parameter_ranges()) names.push_back(range.name());
  std::set<std::string> seen;
  for (const std::string& name : names) {
    if (!seen.insert(name).second) {
      return ValidationError(
          absl::StrCat("Hyperparameter '", name, "' is defined in more than one parameter range."));
    }
    if (statics.contains(name)) {
      return ValidationError(absl::StrCat("Hyperparameter '", name,
                                          "' cannot be both a static hyperparameter and a "
                                          "tunable parameter range."));
    }
  }
  const int statics_count =
      static_cast<int>(statics.size()) - (statics.contains(kTuningObjectiveMetric) ? 1 : 0);
  const int total = statics_count + tunable + 1;
  if (total > kMaxHyperParameters) {
    return ValidationError(absl::StrCat("The number of hyperparameters (", statics_count,
                                        " static + ", tunable,
                                        " tunable + _tuning_objective_metric = ", total,
                                        ") exceeds the limit of ", kMaxHyperParameters, "."));
  }
  for (const auto& range : ranges.integer_parameter_ranges()) {
    RETURN_IF_ERROR(CheckIntegerRange(range));
  }
  for (const auto& range : ranges.continuous_parameter_ranges()) {
    RETURN_IF_ERROR(CheckContinuousRange(range));
  }
  return absl::OkStatus();
}

}  // namespace amt::validation::internal
