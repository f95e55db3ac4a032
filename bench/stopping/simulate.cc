#include "bench/stopping/simulate.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "orchestrator/search/strategy.h"

namespace amt::bench {

absl::StatusOr<std::vector<Config>> Configurations(const std::string& strategy, uint64_t seed,
                                                   int64_t count) {
  absl::StatusOr<std::unique_ptr<search::Strategy>> made =
      search::MakeStrategy(strategy, BenchSpace(), seed);
  if (!made.ok()) return made.status();
  std::vector<Config> configs;
  search::History history;  // neither Random nor Hyperband reads results
  for (int64_t i = 0; i < count; ++i) {
    absl::StatusOr<search::Assignment> params = (*made)->Suggest(history, i);
    if (!params.ok()) return params.status();
    absl::StatusOr<Config> config = ParseConfig(*params);
    if (!config.ok()) return config.status();
    configs.push_back(*config);
  }
  return configs;
}

absl::StatusOr<std::vector<TrialRecord>> Simulate(Method method, const Problem& problem,
                                                  const std::vector<Config>& configs,
                                                  const SimulationOptions& options) {
  const stopping::Objective objective{"loss", /*minimize=*/true};
  stopping::AshaOptions asha = options.asha;
  asha.max_resource = options.max_epochs;
  std::vector<stopping::JobCurve> finished;
  std::vector<TrialRecord> records;
  const int64_t n = std::min<int64_t>(options.trials, static_cast<int64_t>(configs.size()));
  for (int64_t i = 0; i < n; ++i) {
    stopping::JobCurve job{"trial-" + std::to_string(i), i, {}, stopping::JobState::kRunning};
    for (int64_t epoch = 1; epoch <= options.max_epochs; ++epoch) {
      job.values.push_back(ObservedLoss(problem, configs[i], i, epoch));
      absl::StatusOr<stopping::Decision> decision;
      if (method == Method::kAuto) {
        decision = stopping::EvaluateMedianRule(job, finished, objective, options.median);
      } else if (method == Method::kHyperband) {
        decision = stopping::EvaluateAsha(job, finished, objective, asha);
      } else {
        continue;
      }
      if (!decision.ok()) return decision.status();
      if (decision->stop) break;
    }
    const int64_t epochs = static_cast<int64_t>(job.values.size());
    records.push_back({epochs, job.values.back(), TrueLoss(problem, configs[i], epochs)});
    job.state =
        epochs < options.max_epochs ? stopping::JobState::kStopped : stopping::JobState::kCompleted;
    finished.push_back(std::move(job));
  }
  return records;
}

int64_t EpochsOf(const std::vector<TrialRecord>& trials, int64_t n) {
  int64_t total = 0;
  for (int64_t i = 0; i < n && i < static_cast<int64_t>(trials.size()); ++i) {
    total += trials[i].epochs;
  }
  return total;
}

double RegretOf(const std::vector<TrialRecord>& trials, int64_t n, double optimum) {
  const TrialRecord* best = nullptr;
  for (int64_t i = 0; i < n && i < static_cast<int64_t>(trials.size()); ++i) {
    if (best == nullptr || trials[i].reported < best->reported) best = &trials[i];
  }
  return best == nullptr ? std::numeric_limits<double>::infinity() : best->true_loss - optimum;
}

std::optional<int64_t> EpochsToReach(const std::vector<TrialRecord>& trials, double target,
                                     double optimum) {
  const TrialRecord* best = nullptr;
  int64_t epochs = 0;
  for (const TrialRecord& trial : trials) {
    epochs += trial.epochs;
    if (best == nullptr || trial.reported < best->reported) best = &trial;
    if (best->true_loss - optimum <= target) return epochs;
  }
  return std::nullopt;
}

}  // namespace amt::bench
