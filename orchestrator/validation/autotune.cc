#include "orchestrator/validation/autotune.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "orchestrator/validation/validation.h"

namespace amt::validation {
namespace {

std::string_view Unquoted(std::string_view hint) {
  if (hint.size() >= 2 && hint.front() == '"' && hint.back() == '"') {
    hint = hint.substr(1, hint.size() - 2);
  }
  return hint;
}

std::optional<int64_t> AsInteger(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> AsNumber(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// The other boolean in the hint's case: "true" -> "false", "True" -> "False", "TRUE" -> "FALSE".
std::string OtherBoolean(std::string_view hint) {
  const bool is_true = absl::AsciiStrToLower(std::string(hint)) == "true";
  std::string other = is_true ? "false" : "true";
  if (absl::AsciiStrToUpper(std::string(hint)) == hint) return absl::AsciiStrToUpper(other);
  if (absl::ascii_isupper(static_cast<unsigned char>(hint.front()))) {
    other[0] = absl::ascii_toupper(static_cast<unsigned char>(other[0]));
  }
  return other;
}

// Adds the range chosen for `parameter` to `ranges`; false when it is not eligible (kept static).
bool AddRangeFor(const v1::AutoParameter& parameter, v1::ParameterRanges& ranges) {
  const std::string& name = parameter.name();
  const std::string_view hint = Unquoted(parameter.value_hint());
  if (IsEpochsHyperParameter(name)) return false;
  constexpr int64_t kMaxInteger = std::numeric_limits<int32_t>::max() / 10;
  if (const auto v = AsInteger(hint); v.has_value() && std::abs(*v) <= kMaxInteger) {
    auto* range = ranges.add_integer_parameter_ranges();
    range->set_name(name);
    if (*v >= 1) {
      range->set_min_value(absl::StrCat(std::max<int64_t>(1, *v / 10)));
      range->set_max_value(absl::StrCat(*v * 10));
      range->set_scaling_type("Logarithmic");
    } else {
      range->set_min_value(absl::StrCat(*v < 0 ? *v * 10 : 0));
      range->set_max_value(absl::StrCat(*v < 0 ? 0 : 10));
      range->set_scaling_type("Linear");
    }
    return true;
  }
  if (const auto x = AsNumber(hint); x.has_value() && std::fabs(*x) < 1e300) {
    auto* range = ranges.add_continuous_parameter_ranges();
    range->set_name(name);
    if (*x > 0) {
      range->set_min_value(absl::StrCat(*x / 10));
      range->set_max_value(absl::StrCat(*x < 1 ? std::min(1.0, *x * 10) : *x * 10));
      range->set_scaling_type("Logarithmic");
    } else {
      range->set_min_value(absl::StrCat(*x < 0 ? *x * 10 : 0.0));
      range->set_max_value(absl::StrCat(*x < 0 ? 0.0 : 1.0));
      range->set_scaling_type("Linear");
    }
    return true;
  }
  const std::string lower = absl::AsciiStrToLower(std::string(hint));
  if (lower == "true" || lower == "false") {
    auto* range = ranges.add_categorical_parameter_ranges();
    range->set_name(name);
    range->add_values(std::string(hint));
    range->add_values(OtherBoolean(hint));
    return true;
  }
  return false;
}

bool Named(const v1::ParameterRanges& ranges, const std::string& name) {
  const auto same = [&name](const auto& range) { return range.name() == name; };
  return std::any_of(ranges.integer_parameter_ranges().begin(),
                     ranges.integer_parameter_ranges().end(), same) ||
         std::any_of(ranges.continuous_parameter_ranges().begin(),
                     ranges.continuous_parameter_ranges().end(), same) ||
         std::any_of(ranges.categorical_parameter_ranges().begin(),
                     ranges.categorical_parameter_ranges().end(), same);
}

// Chooses ranges for `ranges`'s AutoParameters (kept, for the echo) and moves the ineligible ones
// into `statics`. Returns the number of tuned hyperparameters.
absl::StatusOr<int> ChooseRanges(v1::ParameterRanges& ranges,
                                 google::protobuf::Map<std::string, std::string>& statics) {
  for (const v1::AutoParameter& parameter : ranges.auto_parameters()) {
    if (statics.contains(parameter.name())) {
      return ValidationError(absl::StrCat("AutoParameter '", parameter.name(),
                                          "' is also a static hyperparameter; give it once."));
    }
    if (Named(ranges, parameter.name())) {
      return ValidationError(absl::StrCat("AutoParameter '", parameter.name(),
                                          "' also has a parameter range; give it once."));
    }
    if (!AddRangeFor(parameter, ranges)) {
      statics[parameter.name()] = parameter.value_hint();
    }
  }
  return ranges.integer_parameter_ranges_size() + ranges.continuous_parameter_ranges_size() +
         ranges.categorical_parameter_ranges_size();
}

}  // namespace

absl::Status ApplyAutotune(v1::CreateHyperParameterTuningJobRequest& request) {
  if (!request.has_autotune() || request.autotune().mode() != "Enabled") return absl::OkStatus();
  auto& config = *request.mutable_hyper_parameter_tuning_job_config();
  if (config.strategy() == "Grid") {
    return ValidationError(
        "Autotune chooses integer and continuous ranges, which the Grid strategy does not "
        "search; use the Bayesian, Random or Hyperband strategy with Autotune.");
  }
  int tuned = 0;
  if (request.has_training_job_definition()) {
    ASSIGN_OR_RETURN(
        tuned, ChooseRanges(
                   *config.mutable_parameter_ranges(),
                   *request.mutable_training_job_definition()->mutable_static_hyper_parameters()));
  }
  for (auto& definition : *request.mutable_training_job_definitions()) {
    ASSIGN_OR_RETURN(const int n, ChooseRanges(*definition.mutable_hyper_parameter_ranges(),
                                               *definition.mutable_static_hyper_parameters()));
    tuned += n;
  }
  const bool single = request.training_job_definitions_size() == 0;
  if (!config.has_training_job_early_stopping_type()) {
    config.set_training_job_early_stopping_type(
        single && (config.strategy() == "Bayesian" || config.strategy() == "Random") ? "Auto"
                                                                                     : "Off");
  }
  auto& limits = *config.mutable_resource_limits();
  if (!limits.has_max_number_of_training_jobs()) {
    limits.set_max_number_of_training_jobs(
        std::clamp(kAutotuneJobsPerHyperParameter * tuned, kAutotuneMinJobs, kAutotuneMaxJobs));
  }
  auto& criteria = *config.mutable_tuning_job_completion_criteria();
  if (!criteria.has_convergence_detected()) {
    criteria.mutable_convergence_detected()->set_complete_on_convergence("Enabled");
  }
  const auto retry = [](v1::HyperParameterTrainingJobDefinition& definition) {
    if (!definition.has_retry_strategy()) {
      definition.mutable_retry_strategy()->set_maximum_retry_attempts(kAutotuneRetryAttempts);
    }
  };
  if (request.has_training_job_definition()) retry(*request.mutable_training_job_definition());
  for (auto& definition : *request.mutable_training_job_definitions()) retry(definition);
  return absl::OkStatus();
}

}  // namespace amt::validation
