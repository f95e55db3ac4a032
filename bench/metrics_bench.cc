// Metric-parsing throughput: SageMakerLogLine + MetricParser::Parse with five typical
// MetricDefinitions over 200,000 generated log lines, against std::regex (ECMAScript, regex_search)
// on the same definitions and the first 10,000 lines as the in-run baseline. Prints lines/s for
// both and their ratio; exits 1 when RE2 parses fewer than 1,000 lines/s (the anchor from
// peers-lessons.md: sustain at least 1000 metric lines/s).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "common/log_line.h"
#include "orchestrator/metrics/metric_parser.h"

namespace {

constexpr int kLines = 200000;
constexpr int kBaselineLines = 10000;
constexpr double kTargetLinesPerSecond = 1000;

const std::vector<std::pair<std::string, std::string>>& Definitions() {
  static const auto* defs = new std::vector<std::pair<std::string, std::string>>{
      {"validation:auc",
       R"(.*\[[0-9]+\].*#011validation-auc:([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?).*)"},
      {"train:auc", R"(.*\[[0-9]+\].*#011train-auc:([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?).*)"},
      {"val_loss", R"(val_loss: ([0-9\.]+))"},
      {"eval_loss", R"('eval_loss': ([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?))"},
      {"train:error", R"(Train_error=(.*?);)"},
  };
  return *defs;
}

// A deterministic mix of matching and non-matching lines, with raw tabs as trainers print them.
std::vector<std::string> GenerateLines(int n) {
  std::mt19937_64 engine(12345);
  std::uniform_real_distribution<double> value(0.0, 1.0);
  std::vector<std::string> lines;
  lines.reserve(static_cast<size_t>(n));
  char buf[256];
  for (int i = 0; i < n; ++i) {
    const double v = value(engine);
    switch (i % 5) {
      case 0:
        std::snprintf(buf, sizeof(buf), "[%d]\ttrain-auc:%.6f\tvalidation-auc:%.6f", i, v, v / 2);
        break;
      case 1:
        std::snprintf(buf, sizeof(buf),
                      "%d/%d [==============================] - 3s 2ms/step - loss: %.4f - "
                      "val_loss: %.4f",
                      i, n, v, v * 1.1);
        break;
      case 2:
        std::snprintf(buf, sizeof(buf), "{'eval_loss': %.6e, 'eval_runtime': 1.25, 'epoch': %d}",
                      v * 1e-3, i);
        break;
      case 3:
        std::snprintf(buf, sizeof(buf), "#quality_metric: host=algo-1, Train_error=%.5f;", v);
        break;
      default:
        std::snprintf(buf, sizeof(buf),
                      "2024-05-01 12:00:%02d,123 INFO Reading data chunk %d from "
                      "/opt/ml/input/data/train\r",
                      i % 60, i);
        break;
    }
    lines.emplace_back(buf);
  }
  return lines;
}

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

int main() {
  google::protobuf::RepeatedPtrField<amt::v1::MetricDefinition> defs;
  for (const auto& [name, regex] : Definitions()) {
    amt::v1::MetricDefinition* def = defs.Add();
    def->set_name(name);
    def->set_regex(regex);
  }
  absl::StatusOr<amt::metrics::MetricParser> parser = amt::metrics::MetricParser::Create(defs);
  if (!parser.ok()) {
    std::fprintf(stderr, "metrics_bench: %s\n", std::string(parser.status().message()).c_str());
    return 2;
  }
  const std::vector<std::string> lines = GenerateLines(kLines);

  // RE2, the production path.
  int64_t values = 0;
  double sum = 0;
  auto start = std::chrono::steady_clock::now();
  for (const std::string& raw : lines) {
    for (const amt::metrics::MetricValue& m : parser->Parse(amt::SageMakerLogLine(raw))) {
      ++values;
      sum += m.value;
    }
  }
  const double re2_seconds = Seconds(std::chrono::steady_clock::now() - start);
  const double re2_rate = kLines / re2_seconds;

  // Baseline: std::regex with the same patterns, group 1, same number parsing.
  std::vector<std::regex> regexes;
  for (const auto& [name, regex] : Definitions()) regexes.emplace_back(regex);
  int64_t baseline_values = 0;
  start = std::chrono::steady_clock::now();
  for (int i = 0; i < kBaselineLines; ++i) {
    const std::string line = amt::SageMakerLogLine(lines[static_cast<size_t>(i)]);
    std::smatch match;
    for (const std::regex& re : regexes) {
      if (std::regex_search(line, match, re) && amt::metrics::ParseNumber(match.str(1))) {
        ++baseline_values;
      }
    }
  }
  const double baseline_seconds = Seconds(std::chrono::steady_clock::now() - start);
  const double baseline_rate = kBaselineLines / baseline_seconds;

  const bool pass = re2_rate >= kTargetLinesPerSecond;
  std::printf("metrics_bench: %d lines x %zu definitions\n", kLines, Definitions().size());
  std::printf("  RE2 MetricParser : %12.0f lines/s  (%.3f s, %lld values, checksum %.3f)\n",
              re2_rate, re2_seconds, static_cast<long long>(values), sum);
  std::printf("  std::regex base  : %12.0f lines/s  (%.3f s over %d lines, %lld values)\n",
              baseline_rate, baseline_seconds, kBaselineLines,
              static_cast<long long>(baseline_values));
  std::printf("  ratio RE2/std::regex: %.2fx\n", re2_rate / baseline_rate);
  std::printf("  target >= %.0f lines/s: %s\n", kTargetLinesPerSecond, pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}
