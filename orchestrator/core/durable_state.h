// DurableState: the orchestrator's one path to its Store, and what it does while the store fails.
//
// Every change of a record is written here before the request that made it is answered, so a
// reply acknowledges durable state; the writes of one worker report are one batch (group
// commit: BeginBatch .. CommitBatch), durable together before the report is acknowledged. When a
// write fails, the change is kept in memory (the record's key, and the log lines and metric points
// of a training job not yet written, in order) and written again every `retry_seconds`; until all
// of it is written the state is *degraded*: CheckWritable refuses mutating requests with
// ServiceUnavailable and the orchestrator launches nothing. While degraded and past
// `max_unsaved_log_bytes` of unwritten log text, a worker connection's reports are held back on the
// worker (HoldBack) until the store recovers, so memory stays bounded however long it fails. When
// every change is written again, `on_recovered` runs with the connections whose reports were held
// back.
//
// The retries read the current record of each key through `Records` (the orchestrator owns the
// records), so a record changed many times while the store failed is written once, as it is now.
//
// Threading: the orchestrator loop's, like the Orchestrator; no locks.
#ifndef AMT_ORCHESTRATOR_CORE_DURABLE_STATE_H_
#define AMT_ORCHESTRATOR_CORE_DURABLE_STATE_H_

#include <cstddef>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "amt/v1/state.pb.h"
#include "common/clock.h"
#include "orchestrator/core/timers.h"
#include "orchestrator/core/worker_pool.h"
#include "orchestrator/store/store.h"

namespace amt::core {

struct DurableStateOptions {
  // While the store fails, unsaved state is written again every this many seconds.
  double retry_seconds = 1;
  // While the store fails, log text kept in memory before reports are held back on the workers.
  size_t max_unsaved_log_bytes = 64 << 20;
  // Where store failures and recovery are reported; dropped when empty.
  std::function<void(const std::string&)> log = nullptr;
  // A deferred change (Defer) waits this many seconds at most for a batch that writes anything;
  // then `on_deferred_due` runs (the caller writes it with WriteDeferred(true)).
  double defer_seconds = 0.5;
  std::function<void()> on_deferred_due = nullptr;
};

class DurableState {
 public:
  // The current records, by key (a lower-cased name). A key given to Persist stays valid until
  // Forget* drops it.
  struct Records {
    std::function<const v1::TuningJobRecord&(const std::string& key)> tuning;
    std::function<const v1::TrainingJobRecord&(const std::string& key)> training;
  };
  // The connections whose reports were held back, with their worker ids.
  using HeldLinks = std::map<const WorkerLink*, std::string>;

  // `store`, `clock` and `timers` must outlive this object; destroying it cancels its retry.
  DurableState(DurableStateOptions options, store::Store& store, const Clock& clock, Timers& timers,
               Records records, std::function<void(const HeldLinks&)> on_recovered);
  DurableState(const DurableState&) = delete;
  DurableState& operator=(const DurableState&) = delete;

  // Writes `job` with its new log lines and metric points. On failure (or while earlier changes
  // of this job are unwritten, which keeps their order) keeps them to write again, enters the
  // degraded state and returns the error.
  absl::Status Persist(const v1::TrainingJobRecord& job, std::vector<store::LogEntry> logs = {},
                       std::vector<v1::MetricPoint> points = {});
  absl::Status Persist(const v1::TuningJobRecord& tuning);
  // New records (a standalone training job; a tuning job; a tuning job and its new trials):
  // written at once, or not kept (the caller drops them) and the store's error returned.
  absl::Status PersistNew(const v1::TuningJobRecord* tuning,
                          const std::vector<v1::TrainingJobRecord>& training);
  // Group commit (store.h's batch). Between BeginBatch and CommitBatch the writes of Persist and
  // PersistNew go into one store transaction, and CommitBatch makes them durable together: one
  // sync of the disk instead of one per write. The caller holds back what acknowledges them
  // (replies, Acks, messages to workers) until CommitBatch has returned. When the commit fails,
  // every record written in the batch (a new one too, with its new log lines and metric points)
  // is kept as unsaved and written again, as after a failed write: degraded, and CommitBatch
  // returns the store's error. A batch the store cannot begin leaves each write committed on its
  // own. Nested pairs count: only the outermost commits.
  void BeginBatch();
  absl::Status CommitBatch();
  // CommitBatch in its two steps (store.h): WriteBatch commits the batch so that a crash of
  // amtd loses nothing of it (its failure is CommitBatch's, above), Sync makes it durable. A
  // failed Sync leaves the state degraded (the batch's records are in the store and are not
  // written again) until a retry's sync succeeds; the caller holds back what acknowledges the
  // batch until Sync has returned OK.
  absl::Status WriteBatch();
  absl::Status Sync();
  // A deferred write: a change of `job`'s record that its worker reports again until it is
  // acknowledged (its start) is noted, not written now; the next batch that writes anything
  // writes the record too (WriteDeferred), at no sync of its own, or, after defer_seconds,
  // on_deferred_due does. The caller holds back the report's acknowledgement until then. A
  // Persist of the record writes the change as well.
  void Defer(const v1::TrainingJobRecord& job);
  // Writes the deferred records into the open batch when it has written something, when
  // `force`, or when no batch is open or the store fails (then each is a write of its own, kept
  // as unsaved if it fails); returns whether nothing is deferred any more.
  bool WriteDeferred(bool force);
  // Whether a change waits in Defer.
  bool deferring() const { return !deferred_.empty(); }
  // A write the caller made itself (a delete) failed with `status`: degraded until retries
  // succeed.
  void OnStoreFailure(const absl::Status& status);
  // The record of `key` was deleted: nothing of it is written again.
  void ForgetTuning(const std::string& key);
  void ForgetTraining(const std::string& key);

  // Whether the store is failing (degraded).
  bool failing() const { return failing_; }
  // OK, or ServiceUnavailable while degraded (for the mutating requests).
  absl::Status CheckWritable() const;
  // Whether a report over `link` waits on its worker instead of being applied: an earlier report
  // of `link` waits (the order of a connection's reports is kept), or this is a log batch while
  // degraded with max_unsaved_log_bytes of log text unwritten (then `link` is held from now on).
  bool HoldBack(const std::string& worker_id, const WorkerLink* link, bool is_log_batch);
  // `link` ended: its later reports (if it were to send any) are not held.
  void ForgetLink(const WorkerLink* link) { held_links_.erase(link); }
  // The text of the log lines kept unwritten.
  size_t unsaved_log_bytes() const { return unsaved_log_bytes_; }

 private:
  // Log lines and metric points of one training job not yet written, in order.
  struct Unsaved {
    std::vector<store::LogEntry> logs;
    std::vector<v1::MetricPoint> points;
  };
  // Writes what is unsaved; leaves the degraded state when all of it is written.
  void RetryUnsaved();
  // Notes a write of the open batch: what to keep as unsaved if its commit fails.
  void Journal(const std::string& tuning_key);
  void Journal(const std::string& training_key, std::vector<store::LogEntry> logs,
               std::vector<v1::MetricPoint> points);
  void ArmRetry();

  DurableStateOptions options_;
  store::Store& store_;
  const Clock& clock_;
  Timers& timers_;
  Records records_;
  std::function<void(const HeldLinks&)> on_recovered_;

  std::set<std::string> deferred_;  // keys of training records with a deferred change
  std::set<std::string> unsaved_tuning_;
  std::map<std::string, Unsaved> unsaved_training_;
  size_t unsaved_log_bytes_ = 0;
  HeldLinks held_links_;
  bool failing_ = false;
  bool unsynced_ = false;  // a batch written and not yet synced
  // The open batch: its depth, whether the store's transaction began, and what it wrote.
  int batch_depth_ = 0;
  bool batch_open_ = false;
  std::set<std::string> batch_tuning_;
  std::map<std::string, Unsaved> batch_training_;
  ScopedTimer defer_timer_;  // armed while a change is deferred
  ScopedTimer retry_timer_;  // declared last: cancelled first
};

}  // namespace amt::core

#endif  // AMT_ORCHESTRATOR_CORE_DURABLE_STATE_H_
