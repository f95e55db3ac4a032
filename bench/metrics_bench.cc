// Metric-parsing throughput: SageMakerLogLine + MetricParser::Parse with five typical
// MetricDefinitions over 200,000 generated log lines, against two baselines measured in the same
// run: bare RE2 (RE2::PartialMatch of each definition, capturing group 1, over lines already in
// SageMaker's form: the cost of the regexes alone), and std::regex (ECMAScript, regex_search) on
// the same definitions over the first 10,000 lines. Each RE2 side runs 3 times, alternating, and
// the fastest counts. Prints lines/s and the ratios; exits 1 when the parser parses fewer than
// 1,000 lines/s (the anchor from peers-lessons.md) or keeps less than 0.8 of bare RE2's
// throughput (issue 15).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "common/log_line.h"
#include "orchestrator/metrics/metric_parser.h"
#include "re2/re2.h"

namespace {

constexpr int kLines = 200000;
constexpr int kBaselineLines = 10000;
constexpr double kTargetLinesPerSecond = 1000;
constexpr double kTargetShareOfBareRe2 = 0.8;
constexpr int kRounds = 3;

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

  // RE2 through MetricParser, the production path, and bare RE2, alternating.
  std::vector<std::string> converted;
  converted.reserve(lines.size());
  for (const std::string& raw : lines) converted.push_back(amt::SageMakerLogLine(raw));
  std::vector<std::unique_ptr<re2::RE2>> bare;
  for (const auto& [name, regex] : Definitions()) bare.push_back(std::make_unique<re2::RE2>(regex));
  int64_t values = 0;
  int64_t bare_values = 0;
  double sum = 0;
  double re2_seconds = 1e300;
  double bare_seconds = 1e300;
  for (int round = 0; round < kRounds; ++round) {
    values = 0;
    sum = 0;
    auto start = std::chrono::steady_clock::now();
    for (const std::string& raw : lines) {
      for (const amt::metrics::MetricValue& m : parser->Parse(amt::SageMakerLogLine(raw))) {
        ++values;
        sum += m.value;
      }
    }
    re2_seconds = std::min(re2_seconds, Seconds(std::chrono::steady_clock::now() - start));
    bare_values = 0;
    start = std::chrono::steady_clock::now();
    for (const std::string& line : converted) {
      for (const auto& re : bare) {
        re2::StringPiece group;
        if (re2::RE2::PartialMatch(line, *re, &group)) ++bare_values;
      }
    }
    bare_seconds = std::min(bare_seconds, Seconds(std::chrono::steady_clock::now() - start));
  }
  const double re2_rate = kLines / re2_seconds;
  const double bare_rate = kLines / bare_seconds;

  // Baseline: std::regex with the same patterns, group 1, same number parsing.
  std::vector<std::regex> regexes;
  for (const auto& [name, regex] : Definitions()) regexes.emplace_back(regex);
  int64_t baseline_values = 0;
  auto start = std::chrono::steady_clock::now();
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

  const double share = re2_rate / bare_rate;
  const bool pass = re2_rate >= kTargetLinesPerSecond && share >= kTargetShareOfBareRe2;
  std::printf("metrics_bench: %d lines x %zu definitions\n", kLines, Definitions().size());
  std::printf("  RE2 MetricParser : %12.0f lines/s  (%.3f s, %lld values, checksum %.3f)\n",
              re2_rate, re2_seconds, static_cast<long long>(values), sum);
  std::printf("  bare RE2         : %12.0f lines/s  (%.3f s, %lld matches)\n", bare_rate,
              bare_seconds, static_cast<long long>(bare_values));
  std::printf("  std::regex base  : %12.0f lines/s  (%.3f s over %d lines, %lld values)\n",
              baseline_rate, baseline_seconds, kBaselineLines,
              static_cast<long long>(baseline_values));
  std::printf("  ratio RE2/std::regex: %.2fx\n", re2_rate / baseline_rate);
  std::printf("  MetricParser / bare RE2: %.2f (target >= %.1f)\n", share, kTargetShareOfBareRe2);
  std::printf("  target >= %.0f lines/s and >= %.1f of bare RE2: %s\n", kTargetLinesPerSecond,
              kTargetShareOfBareRe2, pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}
