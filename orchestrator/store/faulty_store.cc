#include "orchestrator/store/faulty_store.h"

#include <utility>

#include "common/status_macros.h"
#include "orchestrator/store/store_errors.h"

namespace amt::store {

absl::Status FaultyStore::Check() {
  if (fail_writes_) {
    ++failed_writes_;
    return absl::InternalError("injected store failure: disk full");
  }
  ++writes_;
  return absl::OkStatus();
}

absl::Status FaultyStore::Write(std::function<absl::Status()> write) {
  RETURN_IF_ERROR(Check());
  if (!in_batch_) return write();
  pending_.push_back(std::move(write));
  return absl::OkStatus();
}

absl::Status FaultyStore::BeginBatch() {
  if (in_batch_) return internal::BatchMisuse(true);
  in_batch_ = true;
  return absl::OkStatus();
}

absl::Status FaultyStore::WriteBatch() {
  if (!in_batch_) return internal::BatchMisuse(false);
  in_batch_ = false;
  std::vector<std::function<absl::Status()>> writes = std::move(pending_);
  pending_.clear();
  if (fail_commits_ || fail_writes_) {
    ++failed_commits_;
    return absl::InternalError("injected commit failure: disk full");
  }
  ++commits_;
  for (const auto& write : writes) RETURN_IF_ERROR(write());
  return absl::OkStatus();
}

absl::Status FaultyStore::Sync() {
  if (fail_syncs_) {
    ++failed_syncs_;
    return absl::InternalError("injected sync failure: I/O error");
  }
  ++syncs_;
  return base_.Sync();
}

absl::Status FaultyStore::PutTuningJob(const v1::TuningJobRecord& record) {
  return Write([this, record] { return base_.PutTuningJob(record); });
}

absl::Status FaultyStore::PutTrainingJob(const v1::TrainingJobRecord& record) {
  return Write([this, record] { return base_.PutTrainingJob(record); });
}

absl::Status FaultyStore::CommitTrainingJobProgress(const v1::TrainingJobRecord& record,
                                                    const std::vector<LogEntry>& logs,
                                                    const std::vector<v1::MetricPoint>& metrics) {
  return Write([this, record, logs, metrics] {
    return base_.CommitTrainingJobProgress(record, logs, metrics);
  });
}

absl::Status FaultyStore::CommitTuningStep(const v1::TuningJobRecord& tuning,
                                           const std::vector<v1::TrainingJobRecord>& training) {
  return Write([this, tuning, training] { return base_.CommitTuningStep(tuning, training); });
}

absl::Status FaultyStore::DeleteTuningJob(std::string_view name,
                                          const std::vector<v1::TrainingJobRecord>& training) {
  return Write(
      [this, name = std::string(name), training] { return base_.DeleteTuningJob(name, training); });
}

absl::Status FaultyStore::DeleteTrainingJob(std::string_view name) {
  return Write([this, name = std::string(name)] { return base_.DeleteTrainingJob(name); });
}

}  // namespace amt::store
