// Trainer output: any bytes become SageMaker log lines (valid UTF-8, no newline, tabs as #011)
// and go through MetricDefinitions regexes like the examples'. Nothing may crash, and every
// cleaned line must be valid UTF-8 without a tab.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/log_line.h"
#include "common/utf8.h"
#include "orchestrator/metrics/metric_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto parser = [] {
    google::protobuf::RepeatedPtrField<amt::v1::MetricDefinition> definitions;
    const std::pair<const char*, const char*> kDefinitions[] = {
        {"validation:loss", "val_loss=([0-9.eE+-]+)"},
        {"train:loss", "train-loss:(\\S+)"},
        {"whole", "accuracy [0-9.]+"},
        {"unicode", "λ=(\\S+)"},
    };
    for (const auto& [name, regex] : kDefinitions) {
      auto* d = definitions.Add();
      d->set_name(name);
      d->set_regex(regex);
    }
    auto made = amt::metrics::MetricParser::Create(definitions);
    if (!made.ok()) __builtin_trap();
    return std::move(*made);
  }();
  // The launcher splits output at '\n', so a line holds none; the fuzzer's bytes may.
  const std::string raw(reinterpret_cast<const char*>(data), size);
  const std::string line = amt::SageMakerLogLine(raw);
  if (amt::InvalidUtf8Offset(line).has_value()) __builtin_trap();
  if (line.find('\t') != std::string::npos) __builtin_trap();  // shown as #011
  for (const auto& metric : parser.Parse(line)) {
    if (metric.name.empty()) __builtin_trap();
  }
  return 0;
}
