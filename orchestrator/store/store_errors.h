// Internal to amt_store: the error statuses and record checks both Store implementations share,
// so the contract tests can hold them to the same messages.
#ifndef AMT_ORCHESTRATOR_STORE_STORE_ERRORS_H_
#define AMT_ORCHESTRATOR_STORE_STORE_ERRORS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "amt/v1/state.pb.h"

namespace amt::store::internal {

inline absl::Status TuningJobNotFound(std::string_view name) {
  return absl::NotFoundError("tuning job '" + std::string(name) + "' not found");
}

inline absl::Status TrainingJobNotFound(std::string_view name) {
  return absl::NotFoundError("training job '" + std::string(name) + "' not found");
}

inline absl::Status DuplicateLogLine(int64_t sequence, std::string_view training_job_name) {
  return absl::AlreadyExistsError("log line " + std::to_string(sequence) + " of training job '" +
                                  std::string(training_job_name) + "' already stored");
}

inline absl::Status NegativeLimit(int limit) {
  return absl::InvalidArgumentError("log limit must be >= 0, got " + std::to_string(limit));
}

// BeginBatch inside a batch (`open`), or CommitBatch outside one.
inline absl::Status BatchMisuse(bool open) {
  return absl::FailedPreconditionError(open ? "a batch is already open"
                                            : "no batch is open to commit");
}

inline absl::Status CheckRecord(const v1::TuningJobRecord& record) {
  if (record.describe().hyper_parameter_tuning_job_name().empty()) {
    return absl::InvalidArgumentError("tuning job record has no HyperParameterTuningJobName");
  }
  return absl::OkStatus();
}

inline absl::Status CheckRecord(const v1::TrainingJobRecord& record) {
  if (record.describe().training_job_name().empty()) {
    return absl::InvalidArgumentError("training job record has no TrainingJobName");
  }
  return absl::OkStatus();
}

}  // namespace amt::store::internal

#endif  // AMT_ORCHESTRATOR_STORE_STORE_ERRORS_H_
