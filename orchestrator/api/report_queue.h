// ReportQueue: the worker reports read off every worker stream (WorkerServiceImpl) and not
// applied yet, and their group commit. The first report queued while the queue is idle posts a
// drain to the orchestrator loop; the drain applies every report queued by then, and those that
// arrive while it applies, between Orchestrator::BeginReports and EndReports: one commit of the
// store (one fdatasync) for all of them, such as a job's last LogBatch and its JobExited, which
// amt-worker sends back to back. The StartJobs, StopJobs, notifications and Acks they cause go
// out after that commit (orchestrator.h).
//
// Order: a report is applied before any loop work posted after it was queued (a drain posted
// before it, or one running when it came, takes it), so a stream's reports still come before its
// disconnect, and each stream's in the order read; but for a LogBatch that waits for its
// JobExited (Push), which is applied before any loop work its stream posts after that report,
// or after its Flush.
#ifndef AMT_ORCHESTRATOR_API_REPORT_QUEUE_H_
#define AMT_ORCHESTRATOR_API_REPORT_QUEUE_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "amt/v1/worker.pb.h"
#include "common/mutex.h"
#include "orchestrator/core/log_ingest.h"
#include "orchestrator/core/worker_pool.h"

namespace amt::core {
class Orchestrator;
}  // namespace amt::core

namespace amt::api {

class ReportQueue {
 public:
  struct Report {
    std::string worker_id;
    // Held until applied, so its address, the connection's identity, stays unique meanwhile.
    std::shared_ptr<core::WorkerLink> link;
    std::shared_ptr<v1::WorkerMessage> message;
    std::shared_ptr<core::ParsedLogs> parsed;  // may be null (Orchestrator::OnWorkerReport)
    // Runs on the loop once the report is applied and its group committed; may be empty.
    std::function<void()> on_applied;
  };
  // Runs its function on the orchestrator loop, later (Loop::Post).
  using PostFn = std::function<void(std::function<void()>)>;

  // `orchestrator` must outlive the queue; so must the queue every drain it posted.
  ReportQueue(PostFn post, core::Orchestrator& orchestrator)
      : post_(std::move(post)), orchestrator_(orchestrator) {}
  ReportQueue(const ReportQueue&) = delete;
  ReportQueue& operator=(const ReportQueue&) = delete;

  // Queues `report` (`message` set). Thread-safe; called by the streams' threads. A LogBatch
  // whose JobExited follows (exit_follows) posts no drain: it waits for the stream's next report,
  // which does (or for any other drain), so that both are one commit. One report waits at most:
  // a second such LogBatch posts the drain. Each stream has only a few reports in flight (its
  // window, released when a report is applied), and a window full of waiting LogBatches (jobs
  // ending together) would stop the stream from reading the JobExited they wait for.
  void Push(Report report) ABSL_LOCKS_EXCLUDED(mu_);
  // Posts a drain if reports wait without one: a stream ended, and a LogBatch that waited for its
  // JobExited is applied without it. Call before the stream's disconnect goes to the loop.
  void Flush() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // Applies what is queued as one group. Runs on the loop.
  void Drain() ABSL_LOCKS_EXCLUDED(mu_);

  const PostFn post_;
  core::Orchestrator& orchestrator_;
  Mutex mu_;
  std::vector<Report> queue_ ABSL_GUARDED_BY(mu_);
  bool drain_posted_ ABSL_GUARDED_BY(mu_) = false;
  bool waiting_ ABSL_GUARDED_BY(mu_) = false;  // a LogBatch waits for its JobExited, no drain
};

}  // namespace amt::api

#endif  // AMT_ORCHESTRATOR_API_REPORT_QUEUE_H_
