#include "orchestrator/core/durable_state.h"

#include <iterator>
#include <utility>

#include "absl/strings/ascii.h"
#include "common/errors.h"

namespace amt::core {
namespace {

std::string Key(const std::string& name) { return absl::AsciiStrToLower(name); }

size_t TextBytes(const std::vector<store::LogEntry>& logs) {
  size_t bytes = 0;
  for (const auto& entry : logs) bytes += entry.message.size();
  return bytes;
}

}  // namespace

DurableState::DurableState(DurableStateOptions options, store::Store& store, const Clock& clock,
                           Timers& timers, Records records,
                           std::function<void(const HeldLinks&)> on_recovered)
    : options_(std::move(options)),
      store_(store),
      clock_(clock),
      timers_(timers),
      records_(std::move(records)),
      on_recovered_(std::move(on_recovered)) {}

absl::Status DurableState::Persist(const v1::TrainingJobRecord& job,
                                   std::vector<store::LogEntry> logs,
                                   std::vector<v1::MetricPoint> points) {
  const std::string key = Key(job.describe().training_job_name());
  deferred_.erase(key);  // the whole record is written now, or kept to write again
  if (auto it = unsaved_training_.find(key); it != unsaved_training_.end()) {
    // Earlier lines are still unwritten: keep the order, write them all at the next retry.
    auto& u = it->second;
    unsaved_log_bytes_ += TextBytes(logs);
    u.logs.insert(u.logs.end(), logs.begin(), logs.end());
    u.points.insert(u.points.end(), points.begin(), points.end());
    return ServiceUnavailableError("state not written yet: the store is failing");
  }
  absl::Status status = logs.empty() && points.empty()
                            ? store_.PutTrainingJob(job)
                            : store_.CommitTrainingJobProgress(job, logs, points);
  if (!status.ok()) {
    unsaved_log_bytes_ += TextBytes(logs);
    unsaved_training_[key] = Unsaved{std::move(logs), std::move(points)};
    OnStoreFailure(status);
  } else if (batch_open_) {
    Journal(key, std::move(logs), std::move(points));
  }
  return status;
}

absl::Status DurableState::Persist(const v1::TuningJobRecord& tuning) {
  const std::string key = Key(tuning.describe().hyper_parameter_tuning_job_name());
  absl::Status status = store_.PutTuningJob(tuning);
  if (status.ok()) {
    unsaved_tuning_.erase(key);  // the record is whole: nothing older is left to write
    if (batch_open_) Journal(key);
  } else {
    unsaved_tuning_.insert(key);
    OnStoreFailure(status);
  }
  return status;
}

absl::Status DurableState::PersistNew(const v1::TuningJobRecord* tuning,
                                      const std::vector<v1::TrainingJobRecord>& training) {
  absl::Status status = tuning == nullptr  ? store_.PutTrainingJob(training.front())
                        : training.empty() ? store_.PutTuningJob(*tuning)
                                           : store_.CommitTuningStep(*tuning, training);
  if (!status.ok()) {
    OnStoreFailure(status);
  } else if (batch_open_) {
    if (tuning != nullptr) Journal(Key(tuning->describe().hyper_parameter_tuning_job_name()));
    for (const auto& job : training) Journal(Key(job.describe().training_job_name()), {}, {});
  }
  return status;
}

void DurableState::BeginBatch() {
  if (batch_depth_++ > 0) return;
  batch_open_ = store_.BeginBatch().ok();  // else each write commits on its own
}

absl::Status DurableState::CommitBatch() {
  absl::Status written = WriteBatch();
  return written.ok() ? Sync() : written;
}

absl::Status DurableState::Sync() {
  if (!unsynced_) return absl::OkStatus();
  absl::Status status = store_.Sync();
  if (status.ok()) {
    unsynced_ = false;
  } else {
    OnStoreFailure(status);  // RetryUnsaved syncs again
  }
  return status;
}

absl::Status DurableState::WriteBatch() {
  if (batch_depth_ == 0 || --batch_depth_ > 0 || !batch_open_) return absl::OkStatus();
  batch_open_ = false;
  std::set<std::string> tuning = std::move(batch_tuning_);
  std::map<std::string, Unsaved> training = std::move(batch_training_);
  batch_tuning_.clear();
  batch_training_.clear();
  absl::Status status = store_.WriteBatch();
  if (status.ok()) {
    unsynced_ = true;
    return status;
  }
  // Nothing of the batch is in the store: all of it is written again, each record as it is
  // then, its log lines before any that failed on their own since (they came later).
  unsaved_tuning_.insert(tuning.begin(), tuning.end());
  for (auto& [key, batch] : training) {
    unsaved_log_bytes_ += TextBytes(batch.logs);
    auto [it, inserted] = unsaved_training_.try_emplace(key);
    Unsaved& u = it->second;
    if (!inserted) {
      batch.logs.insert(batch.logs.end(), u.logs.begin(), u.logs.end());
      batch.points.insert(batch.points.end(), u.points.begin(), u.points.end());
    }
    u = std::move(batch);
  }
  OnStoreFailure(status);
  return status;
}

void DurableState::Defer(const v1::TrainingJobRecord& job) {
  deferred_.insert(Key(job.describe().training_job_name()));
  if (defer_timer_.armed() || !options_.on_deferred_due) return;
  defer_timer_.Arm(timers_, clock_.Now() + options_.defer_seconds, [this] {
    defer_timer_ = ScopedTimer();  // this one has fired
    options_.on_deferred_due();
  });
}

bool DurableState::WriteDeferred(bool force) {
  if (deferred_.empty()) return true;
  const bool wrote = !batch_tuning_.empty() || !batch_training_.empty();
  if (batch_open_ && !wrote && !force && !failing_) return false;
  const std::set<std::string> keys = std::move(deferred_);
  deferred_.clear();
  defer_timer_.Cancel();
  for (const auto& key : keys) (void)Persist(records_.training(key));
  return true;
}

void DurableState::Journal(const std::string& tuning_key) { batch_tuning_.insert(tuning_key); }

void DurableState::Journal(const std::string& training_key, std::vector<store::LogEntry> logs,
                           std::vector<v1::MetricPoint> points) {
  Unsaved& u = batch_training_[training_key];
  u.logs.insert(u.logs.end(), std::make_move_iterator(logs.begin()),
                std::make_move_iterator(logs.end()));
  u.points.insert(u.points.end(), std::make_move_iterator(points.begin()),
                  std::make_move_iterator(points.end()));
}

void DurableState::OnStoreFailure(const absl::Status& status) {
  if (!failing_ && options_.log) {
    options_.log("the state store failed (" + std::string(status.message()) +
                 "); amtd refuses changes and launches nothing until its writes succeed again");
  }
  failing_ = true;
  if (!retry_timer_.armed()) ArmRetry();
}

void DurableState::ForgetTuning(const std::string& key) {
  unsaved_tuning_.erase(key);
  batch_tuning_.erase(key);
}

void DurableState::ForgetTraining(const std::string& key) {
  deferred_.erase(key);
  batch_training_.erase(key);
  if (auto it = unsaved_training_.find(key); it != unsaved_training_.end()) {
    unsaved_log_bytes_ -= TextBytes(it->second.logs);
    unsaved_training_.erase(it);
  }
}

void DurableState::ArmRetry() {
  retry_timer_.Arm(timers_, clock_.Now() + options_.retry_seconds, [this] { RetryUnsaved(); });
}

void DurableState::RetryUnsaved() {
  retry_timer_ = ScopedTimer();  // this one has fired
  if (unsynced_) {
    if (!store_.Sync().ok()) {
      ArmRetry();
      return;
    }
    unsynced_ = false;
  }
  for (auto it = unsaved_tuning_.begin(); it != unsaved_tuning_.end();) {
    if (!store_.PutTuningJob(records_.tuning(*it)).ok()) break;
    it = unsaved_tuning_.erase(it);
  }
  for (auto it = unsaved_training_.begin(); it != unsaved_training_.end();) {
    const auto& record = records_.training(it->first);
    if (!store_.CommitTrainingJobProgress(record, it->second.logs, it->second.points).ok()) break;
    unsaved_log_bytes_ -= TextBytes(it->second.logs);
    it = unsaved_training_.erase(it);
  }
  if (!unsaved_tuning_.empty() || !unsaved_training_.empty()) {
    ArmRetry();
    return;
  }
  failing_ = false;
  if (options_.log) options_.log("the state store accepts writes again; amtd carries on");
  if (on_recovered_) on_recovered_(held_links_);
}

absl::Status DurableState::CheckWritable() const {
  if (!failing_) return absl::OkStatus();
  return ServiceUnavailableError(
      "amtd cannot write its state store at the moment (see amtd's log); the request was not "
      "accepted. Try again once the store accepts writes.");
}

bool DurableState::HoldBack(const std::string& worker_id, const WorkerLink* link,
                            bool is_log_batch) {
  if (held_links_.count(link) > 0) return true;
  if (!failing_ || !is_log_batch || unsaved_log_bytes_ < options_.max_unsaved_log_bytes) {
    return false;
  }
  held_links_.emplace(link, worker_id);
  if (options_.log) {
    options_.log("the store still fails and " + std::to_string(unsaved_log_bytes_) +
                 " bytes of log lines wait to be written (--max-unsaved-log-bytes): worker " +
                 worker_id + "'s reports wait on the worker until the store accepts writes");
  }
  return true;
}

}  // namespace amt::core
