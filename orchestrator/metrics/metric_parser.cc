#include "orchestrator/metrics/metric_parser.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <system_error>
#include <utility>

#include "re2/re2.h"

namespace amt::metrics {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\f' || c == '\v' || c == '\r' || c == '\n'; }

}  // namespace

absl::StatusOr<MetricParser> MetricParser::Create(
    const google::protobuf::RepeatedPtrField<v1::MetricDefinition>& defs) {
  std::vector<Definition> definitions;
  definitions.reserve(defs.size());
  for (const v1::MetricDefinition& def : defs) {
    RE2::Options options;
    options.set_log_errors(false);  // the error goes back to the caller instead of stderr
    auto regex = std::make_shared<const RE2>(def.regex(), options);
    if (!regex->ok()) {
      return absl::InvalidArgumentError("The regex '" + def.regex() + "' of metric definition '" +
                                        def.name() + "' is not valid (RE2): " + regex->error());
    }
    definitions.push_back(Definition{def.name(), std::move(regex)});
  }
  return MetricParser(std::move(definitions));
}

bool MetricParser::SameAs(const MetricParser& other) const {
  if (definitions_.size() != other.definitions_.size()) return false;
  for (size_t i = 0; i < definitions_.size(); ++i) {
    if (definitions_[i].regex != other.definitions_[i].regex) return false;
  }
  return true;
}

std::vector<MetricValue> MetricParser::Parse(std::string_view line) const {
  std::vector<MetricValue> values;
  const re2::StringPiece text(line.data(), line.size());
  re2::StringPiece groups[2];
  for (const Definition& def : definitions_) {
    // Group 1 when the pattern has one, else group 0 (the whole match).
    const int wanted = def.regex->NumberOfCapturingGroups() >= 1 ? 2 : 1;
    if (!def.regex->Match(text, 0, text.size(), RE2::UNANCHORED, groups, wanted)) continue;
    const re2::StringPiece& capture = groups[wanted - 1];
    if (capture.data() == nullptr) continue;  // an optional group 1 that did not participate
    if (std::optional<double> value =
            ParseNumber(std::string_view(capture.data(), capture.size()))) {
      values.push_back(MetricValue{def.name, *value});
    }
  }
  return values;
}

std::optional<double> ParseNumber(std::string_view text) {
  while (!text.empty() && IsSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);
  // std::from_chars takes '-' but not '+'; "+-1" must stay invalid.
  if (text.size() > 1 && text[0] == '+' && text[1] != '-' && text[1] != '+') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  const char* end = text.data() + text.size();
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::general);
  if (ptr != end) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    // The syntax is valid but the magnitude is not representable. strtod tells overflow (HUGE_VAL,
    // rejected below) from underflow (0 or a subnormal, kept). amtd never changes the C locale, so
    // strtod's decimal point is '.'.
    value = std::strtod(std::string(text).c_str(), nullptr);
  } else if (ec != std::errc()) {
    return std::nullopt;
  }
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace amt::metrics
