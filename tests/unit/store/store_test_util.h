// Helpers for the store tests: record builders, a proto-equality matcher and a Status matcher
// (temporary folders: tests/support/temp_dir.h).
#ifndef AMT_TESTS_UNIT_STORE_STORE_TEST_UTIL_H_
#define AMT_TESTS_UNIT_STORE_STORE_TEST_UTIL_H_

#include <gmock/gmock.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "amt/v1/state.pb.h"

namespace amt::store::testing {

inline v1::TuningJobRecord TuningRecord(const std::string& name, int launched = 0) {
  v1::TuningJobRecord record;
  record.mutable_describe()->set_hyper_parameter_tuning_job_name(name);
  record.mutable_describe()->set_hyper_parameter_tuning_job_status("InProgress");
  record.set_launched(launched);
  return record;
}

inline v1::TrainingJobRecord TrainingRecord(const std::string& name,
                                            const std::string& tuning_job_name = "",
                                            int index = 0) {
  v1::TrainingJobRecord record;
  record.mutable_describe()->set_training_job_name(name);
  record.mutable_describe()->set_training_job_status("InProgress");
  record.set_tuning_job_name(tuning_job_name);
  record.set_index(index);
  (*record.mutable_tuned_hyperparameters())["lr"] = "0.1";
  (*record.mutable_tuned_hyperparameters())["depth"] = "4";
  record.set_attempt(1);
  return record;
}

inline v1::MetricPoint Point(const std::string& name, double value, int64_t log_sequence) {
  v1::MetricPoint point;
  point.set_metric_name(name);
  point.set_value(value);
  point.set_timestamp(1700000000.5 + static_cast<double>(log_sequence));
  point.set_log_sequence(log_sequence);
  return point;
}

MATCHER_P(EqualsProto, expected, "equals " + expected.ShortDebugString()) {
  std::string differences;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&differences);
  if (differencer.Compare(expected, arg)) return true;
  *result_listener << differences;
  return false;
}

inline const absl::Status& GetStatus(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

MATCHER_P2(StatusIs, code, message, "has status " + absl::Status(code, message).ToString()) {
  const absl::Status& status = GetStatus(arg);
  *result_listener << "status is " << status.ToString();
  return status.code() == code && std::string(status.message()) == std::string(message);
}

MATCHER(IsOk, "is OK") {
  const absl::Status& status = GetStatus(arg);
  *result_listener << "status is " << status.ToString();
  return status.ok();
}

}  // namespace amt::store::testing

#endif  // AMT_TESTS_UNIT_STORE_STORE_TEST_UTIL_H_
