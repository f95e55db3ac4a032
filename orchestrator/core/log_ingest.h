// Log ingestion: what a batch of a training job's log lines does to its record, as a pure
// function (no store, no timers, no clock). The orchestrator applies a worker's LogBatch with it,
// then writes the lines and points it returns and, when it returns a stop message, stops the job.
//
// For each new line: the next log sequence; the host (algo-1 when a one-host job's worker leaves
// it out); the values the job's MetricDefinitions capture (SageMaker: each definition's leftmost
// match), each a metric point and the metric's final value; for the tuning objective, the
// objective, its history and, while the job is InProgress and no stop is decided, an early
// stopping decision (core/early_stopping.h) recorded on the job.
#ifndef AMT_ORCHESTRATOR_CORE_LOG_INGEST_H_
#define AMT_ORCHESTRATOR_CORE_LOG_INGEST_H_

#include <optional>
#include <string>
#include <vector>

#include "amt/v1/state.pb.h"
#include "amt/v1/worker.pb.h"
#include "orchestrator/core/early_stopping.h"
#include "orchestrator/metrics/metric_parser.h"
#include "orchestrator/store/store.h"

namespace amt::core {

// A batch's metric values parsed off the loop (by a worker stream's thread) with `parser`, a copy
// of the job's: values[i] are line i's.
struct ParsedLogs {
  metrics::MetricParser parser;
  std::vector<std::vector<metrics::MetricValue>> values;
};

// What a batch is judged against.
struct LogContext {
  const metrics::MetricParser& parser;  // the job's MetricDefinitions
  // The tuning objective's MetricName; empty for a standalone training job.
  const std::string& objective_metric;
  // The job's tuning job and all of its training jobs (the job among them); nullptr for a
  // standalone one. Early stopping decides over them.
  const v1::TuningJobRecord* tuning = nullptr;
  const std::vector<const v1::TrainingJobRecord*>* tuning_jobs = nullptr;
  const EarlyStoppingOptions* early_stopping = nullptr;
};

struct IngestedLogs {
  std::vector<store::LogEntry> logs;    // to write, numbered
  std::vector<v1::MetricPoint> points;  // to write
  // Set when early stopping decided to stop the job: its StopTrainingJob message.
  std::string stop_message;
};

// Applies the lines of `batch` (of the job's current attempt) that `job` has not stored yet: a
// replayed batch (its worker had no Ack) starts at or before lines already stored, and those are
// skipped. nullopt when no line is new. `parsed`, when given, is used when its parser is the
// job's and it has one entry per line; otherwise the lines are parsed here.
std::optional<IngestedLogs> IngestLogBatch(v1::TrainingJobRecord& job, const v1::LogBatch& batch,
                                           const ParsedLogs* parsed, const LogContext& context);

}  // namespace amt::core

#endif  // AMT_ORCHESTRATOR_CORE_LOG_INGEST_H_
