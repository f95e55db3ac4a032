#include "orchestrator/api/report_queue.h"

#include <utility>

#include "orchestrator/core/orchestrator.h"

namespace amt::api {

void ReportQueue::Push(Report report) {
  const bool waits = report.message->has_logs() && report.message->logs().exit_follows();
  MutexLock lock(&mu_);
  queue_.push_back(std::move(report));
  if (drain_posted_) return;  // the drain posted (or running) takes it
  if (waits && !waiting_) {   // the next report's drain takes it
    waiting_ = true;
    return;
  }
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
      waiting_ = false;
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
