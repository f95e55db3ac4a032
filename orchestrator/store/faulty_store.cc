#include "orchestrator/store/faulty_store.h"

#include "common/status_macros.h"

namespace amt::store {

absl::Status FaultyStore::Check() {
  if (fail_writes_) {
    ++failed_writes_;
    return absl::InternalError("injected store failure: disk full");
  }
  ++writes_;
  return absl::OkStatus();
}

absl::Status FaultyStore::PutTuningJob(const v1::TuningJobRecord& record) {
  RETURN_IF_ERROR(Check());
  return base_.PutTuningJob(record);
}

absl::Status FaultyStore::PutTrainingJob(const v1::TrainingJobRecord& record) {
  RETURN_IF_ERROR(Check());
  return base_.PutTrainingJob(record);
}

absl::Status FaultyStore::CommitTrainingJobProgress(const v1::TrainingJobRecord& record,
                                                    const std::vector<LogEntry>& logs,
                                                    const std::vector<v1::MetricPoint>& metrics) {
  RETURN_IF_ERROR(Check());
  return base_.CommitTrainingJobProgress(record, logs, metrics);
}

absl::Status FaultyStore::CommitTuningStep(const v1::TuningJobRecord& tuning,
                                           const std::vector<v1::TrainingJobRecord>& training) {
  RETURN_IF_ERROR(Check());
  return base_.CommitTuningStep(tuning, training);
}

absl::Status FaultyStore::DeleteTuningJob(std::string_view name,
                                          const std::vector<v1::TrainingJobRecord>& training) {
  RETURN_IF_ERROR(Check());
  return base_.DeleteTuningJob(name, training);
}

absl::Status FaultyStore::DeleteTrainingJob(std::string_view name) {
  RETURN_IF_ERROR(Check());
  return base_.DeleteTrainingJob(name);
}

}  // namespace amt::store
