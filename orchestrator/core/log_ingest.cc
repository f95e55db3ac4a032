#include "orchestrator/core/log_ingest.h"

#include <algorithm>
#include <utility>

#include "orchestrator/core/training_job.h"

namespace amt::core {
namespace {

// The metrics of one log line (`values`, its parsed metric values): points, final values,
// objective history and, while no stop is decided, early-stopping decisions.
void ApplyMetrics(v1::TrainingJobRecord& job, const v1::LogRecord& line,
                  const std::vector<metrics::MetricValue>& values, int64_t sequence,
                  const LogContext& context, IngestedLogs& out) {
  auto* d = job.mutable_describe();
  for (const auto& m : values) {
    v1::MetricPoint& p = out.points.emplace_back();
    p.set_metric_name(m.name);
    p.set_value(m.value);
    p.set_timestamp(line.timestamp());
    p.set_log_sequence(sequence);
    auto final_value = std::find_if(
        d->mutable_final_metric_data_list()->begin(), d->mutable_final_metric_data_list()->end(),
        [&](const v1::MetricData& f) { return f.metric_name() == m.name; });
    v1::MetricData* f = final_value != d->mutable_final_metric_data_list()->end()
                            ? &*final_value
                            : d->add_final_metric_data_list();
    f->set_metric_name(m.name);
    f->set_value(static_cast<float>(m.value));
    f->set_timestamp(line.timestamp());
    if (context.objective_metric.empty() || m.name != context.objective_metric) continue;
    job.set_objective(m.value);
    job.set_objective_emissions(job.objective_emissions() + 1);
    job.add_objective_history(m.value);
    // Each emission is an epoch for early stopping; once a stop is decided the job is Stopping
    // and later emissions are only recorded.
    if (!out.stop_message.empty() || d->training_job_status() != kInProgress) continue;
    if (context.tuning == nullptr || context.tuning_jobs == nullptr ||
        context.early_stopping == nullptr) {
      continue;
    }
    auto decision =
        EvaluateEarlyStopping(job, *context.tuning, *context.tuning_jobs, *context.early_stopping);
    if (!decision.has_value()) continue;
    decision->set_timestamp(line.timestamp());
    if (decision->stop()) {
      out.stop_message = "Stopping the training job: " + decision->explanation();
    }
    *job.add_decisions() = std::move(*decision);
  }
}

}  // namespace

std::optional<IngestedLogs> IngestLogBatch(v1::TrainingJobRecord& job, const v1::LogBatch& batch,
                                           const ParsedLogs* parsed, const LogContext& context) {
  // Parsed off the loop by the same patterns: taken as they are (the loop's costliest work).
  const bool pre_parsed = parsed != nullptr && context.parser.SameAs(parsed->parser) &&
                          std::ssize(parsed->values) == batch.lines_size();
  const int64_t skip = std::max<int64_t>(0, job.attempt_log_lines() - batch.first_line());
  if (skip >= batch.lines_size()) return std::nullopt;
  IngestedLogs out;
  out.logs.reserve(batch.lines_size() - skip);
  job.set_attempt_log_lines(batch.first_line() + batch.lines_size());
  for (int i = static_cast<int>(skip); i < batch.lines_size(); ++i) {
    const v1::LogRecord& line = batch.lines(i);
    const int64_t seq = job.next_log_sequence();
    job.set_next_log_sequence(seq + 1);
    // A one-host job's worker leaves the host out: it is algo-1.
    out.logs.push_back(
        {seq, line.timestamp(), line.text(), line.host().empty() ? "algo-1" : line.host()});
    std::vector<metrics::MetricValue> parsed_here;
    if (!pre_parsed) parsed_here = context.parser.Parse(line.text());
    ApplyMetrics(job, line, pre_parsed ? parsed->values[i] : parsed_here, seq, context, out);
  }
  return out;
}

}  // namespace amt::core
