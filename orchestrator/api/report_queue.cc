#include "orchestrator/api/report_queue.h"

#include <utility>

#include "orchestrator/core/orchestrator.h"

namespace amt::api {

void ReportQueue::Push(Report report) {
  const bool waits = report.message->has_logs() && report.message->logs().exit_follows();
  MutexLock lock(&mu_);
  queue_.push_back(std::move(report));
  if (drain_posted_ || waits) return;  // the drain posted (or running), or the next, takes it
  drain_posted_ = true;
  post_([this] { Drain(); });
}

void ReportQueue::Flush() {
  MutexLock lock(&mu_);
  if (drain_posted_ || queue_.empty()) return;
  drain_posted_ = true;
  post_([this] { Drain(); });
}

void ReportQueue::Drain() {
  std::vector<Report> applied;
  orchestrator_.BeginReports();
  while (true) {
    std::vector<Report> batch;
    {
      MutexLock lock(&mu_);
      if (queue_.empty()) {
        drain_posted_ = false;  // a report queued from now on posts the next drain
        break;
      }
      batch.swap(queue_);
    }
    // Bounded: each stream has at most a few reports in flight until on_applied (below).
    for (Report& report : batch) {
      orchestrator_.OnWorkerReport(report.worker_id, report.link.get(), *report.message,
                                   report.parsed.get());
      applied.push_back(std::move(report));
    }
  }
  orchestrator_.EndReports();
  for (const Report& report : applied) {
    if (report.on_applied) report.on_applied();
  }
}

}  // namespace amt::api
