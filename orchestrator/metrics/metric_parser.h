// Metric extraction from training-job log lines with SageMaker's MetricDefinitions ({Name, Regex}).
//
// Dialect: patterns are compiled by RE2 (linear time, so a hostile pattern cannot stall amtd).
// SageMaker documents its regexes as "regular expressions in Python"; RE2 accepts the Python
// syntax the built-in and documented patterns use (\S, \d, \[, (?:...), [eE], .*?, named groups
// (?P<name>...)) but rejects backreferences (\1), lookaround ((?=...), (?!...), (?<=...)),
// possessive/atomic groups and conditionals: such a definition fails Create() with
// InvalidArgument. `.` does not match '\n' (lines never contain one).
#ifndef AMT_ORCHESTRATOR_METRICS_METRIC_PARSER_H_
#define AMT_ORCHESTRATOR_METRICS_METRIC_PARSER_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "amt/v1/tuning.pb.h"
#include "google/protobuf/repeated_ptr_field.h"

namespace re2 {
class RE2;
}  // namespace re2

namespace amt::metrics {

struct MetricValue {
  std::string name;
  double value;
};

// Immutable after Create(); cheap to copy (compiled patterns are shared). Parse() is const and
// safe to call from several threads at once.
class MetricParser {
 public:
  // Compiles every definition's Regex. InvalidArgument naming the metric (and RE2's reason) when
  // one does not compile under RE2. Names and sizes are validated with the request, not here.
  static absl::StatusOr<MetricParser> Create(
      const google::protobuf::RepeatedPtrField<v1::MetricDefinition>& defs);

  // Applies every definition to one log line with search semantics (the regex may match anywhere;
  // only the leftmost match counts, so at most one value per definition per line). The value is
  // capture group 1, or the whole match when the regex has no capturing group; a group 1 that did
  // not take part in the match gives nothing. Only text that ParseNumber() accepts becomes a
  // value. Results come in definition order. The line must already show tabs as #011
  // (SageMakerLogLine(), common/log_line.h).
  std::vector<MetricValue> Parse(std::string_view line) const;

  // Number of definitions.
  size_t size() const { return definitions_.size(); }

  // Whether `other` is a copy of this parser (the same compiled patterns), so that what it
  // parsed is what this one would.
  bool SameAs(const MetricParser& other) const;

 private:
  struct Definition {
    std::string name;
    std::shared_ptr<const re2::RE2> regex;
  };

  explicit MetricParser(std::vector<Definition> definitions)
      : definitions_(std::move(definitions)) {}

  std::vector<Definition> definitions_;
};

// The number `text` spells, if all of it is one finite number: optional sign ('+' or '-'), digits
// with an optional '.' ("1.", ".5" and "1.5" are all fine), an optional exponent ("1.5e-03",
// "2E+4"). Surrounding spaces (' ', '\f', '\v', '\r', '\n') are ignored, as Python's float() and
// Java's Double.parseDouble do. Rejects "", "nan", "inf", "infinity", hex ("0x1p3"), digit
// separators ("1_000", "1,5"), "1.2.3" and values that overflow a double ("1e999"); values that
// underflow ("1e-400") parse as the nearest double (0 or a subnormal).
std::optional<double> ParseNumber(std::string_view text);

}  // namespace amt::metrics

#endif  // AMT_ORCHESTRATOR_METRICS_METRIC_PARSER_H_
