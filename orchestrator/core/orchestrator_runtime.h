// What the orchestrator loop keeps per job besides its record: compiled MetricDefinitions, search
// strategies, the tally of ended jobs and the jobs' timers. Private to the Orchestrator's files
// (orchestrator*.cc); rebuilt from the records after a restart, never stored.
#ifndef AMT_ORCHESTRATOR_CORE_ORCHESTRATOR_RUNTIME_H_
#define AMT_ORCHESTRATOR_CORE_ORCHESTRATOR_RUNTIME_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/core/timers.h"
#include "orchestrator/core/tuning_job.h"
#include "orchestrator/metrics/metric_parser.h"
#include "orchestrator/search/strategy.h"

namespace amt::core {

// Per training job. Its timers are cancelled with it.
struct JobRuntime {
  std::optional<metrics::MetricParser> parser;
  std::string objective_metric;  // tuning objective MetricName, empty for standalone jobs
  ScopedTimer runtime_timer;     // StoppingCondition.MaxRuntimeInSeconds
  ScopedTimer lost_timer;        // its worker is gone
  ScopedTimer spot_timer;        // the current attempt's Spot interruption
  ScopedTimer max_wait_timer;    // StoppingCondition.MaxWaitTimeInSeconds
};

// Per tuning job.
struct TuningRuntime {
  // One per training-job definition, each over its definition's ranges.
  std::vector<std::unique_ptr<search::Strategy>> strategies;
  // Its ended leading training jobs, tallied once (tuning_job.h).
  SettledJobs settled;
  ScopedTimer runtime_timer;  // ResourceLimits.MaxRuntimeInSeconds
};

// Compiled MetricDefinitions are shared by every job that has the same ones (the training jobs
// of one tuning job do), so a set is compiled, and RE2's lazily built automata warmed, once
// instead of once per job; at most this many distinct sets are kept.
inline constexpr size_t kMaxSharedParsers = 64;

// Jobs and tuning jobs by lower-cased name; parsers by their definitions'
// bytes (Orchestrator::SharedParser).
struct Runtimes {
  std::map<std::string, JobRuntime> jobs;
  std::map<std::string, TuningRuntime> tunings;
  std::map<std::string, metrics::MetricParser> parsers;
};

}  // namespace amt::core

#endif  // AMT_ORCHESTRATOR_CORE_ORCHESTRATOR_RUNTIME_H_
