// FaultyStore: a Store that wraps another and fails on demand, the fault seam of the state store
// (LevelDB's EnvWrapper idea). Tests use it to drive every write site of the orchestrator through
// a failing write and back; it could front the SQLite store to rehearse a full disk.
//
// Not thread-safe, like every Store.
#ifndef AMT_ORCHESTRATOR_STORE_FAULTY_STORE_H_
#define AMT_ORCHESTRATOR_STORE_FAULTY_STORE_H_

#include <functional>
#include <memory>
#include <vector>

#include "orchestrator/store/store.h"

namespace amt::store {

class FaultyStore final : public Store {
 public:
  // `base` must outlive this store.
  explicit FaultyStore(Store& base) : base_(base) {}

  // While set, every write fails with Internal "injected store failure: disk full" and writes
  // nothing; reads still go through.
  void FailWrites(bool fail) { fail_writes_ = fail; }
  // While set, every WriteBatch (so every CommitBatch) fails with Internal "injected commit
  // failure: disk full" and nothing of the batch is written (as SQLite rolls it back); its
  // writes had each returned OK.
  void FailCommits(bool fail) { fail_commits_ = fail; }
  // While set, every Sync fails with Internal "injected sync failure: I/O error" (what was
  // written stays written, as after a failed fdatasync).
  void FailSyncs(bool fail) { fail_syncs_ = fail; }
  // Syncs that went through, and that were refused, so far.
  int syncs() const { return syncs_; }
  int failed_syncs() const { return failed_syncs_; }
  // Writes that were refused, and that went through, so far.
  int failed_writes() const { return failed_writes_; }
  int writes() const { return writes_; }
  // Whether a batch is open (between BeginBatch and WriteBatch).
  bool in_batch() const { return in_batch_; }
  // Batches committed, and refused, so far.
  int commits() const { return commits_; }
  int failed_commits() const { return failed_commits_; }

  absl::Status PutTuningJob(const v1::TuningJobRecord& record) override;
  absl::StatusOr<v1::TuningJobRecord> GetTuningJob(std::string_view name) override {
    return base_.GetTuningJob(name);
  }
  absl::StatusOr<std::vector<v1::TuningJobRecord>> ListTuningJobs() override {
    return base_.ListTuningJobs();
  }
  absl::Status PutTrainingJob(const v1::TrainingJobRecord& record) override;
  absl::StatusOr<v1::TrainingJobRecord> GetTrainingJob(std::string_view name) override {
    return base_.GetTrainingJob(name);
  }
  absl::StatusOr<std::vector<v1::TrainingJobRecord>> ListTrainingJobs() override {
    return base_.ListTrainingJobs();
  }
  absl::StatusOr<std::vector<v1::TrainingJobRecord>> ListTrainingJobsForTuningJob(
      std::string_view tuning_job_name) override {
    return base_.ListTrainingJobsForTuningJob(tuning_job_name);
  }
  absl::Status CommitTrainingJobProgress(const v1::TrainingJobRecord& record,
                                         const std::vector<LogEntry>& logs,
                                         const std::vector<v1::MetricPoint>& metrics) override;
  absl::Status CommitTuningStep(const v1::TuningJobRecord& tuning,
                                const std::vector<v1::TrainingJobRecord>& training) override;
  absl::Status DeleteTuningJob(std::string_view name,
                               const std::vector<v1::TrainingJobRecord>& training) override;
  absl::Status DeleteTrainingJob(std::string_view name) override;
  absl::StatusOr<std::vector<LogEntry>> ReadLogs(std::string_view training_job_name, int64_t from,
                                                 int limit) override {
    return base_.ReadLogs(training_job_name, from, limit);
  }
  absl::StatusOr<std::vector<LogEntry>> ReadHostLogs(std::string_view training_job_name,
                                                     std::string_view host, int64_t from,
                                                     int limit) override {
    return base_.ReadHostLogs(training_job_name, host, from, limit);
  }
  absl::StatusOr<std::vector<v1::MetricPoint>> ReadMetrics(
      std::string_view training_job_name) override {
    return base_.ReadMetrics(training_job_name);
  }
  // Inside a batch the writes are kept here and reach the base store at WriteBatch, in order
  // (all, or none when the commit fails), so reads inside a batch do not see them yet.
  absl::Status BeginBatch() override;
  absl::Status WriteBatch() override;
  absl::Status Sync() override;

 private:
  // The injected failure when writes fail, else OK (and the write is counted).
  absl::Status Check();
  // Runs `write` now, or at WriteBatch inside a batch.
  absl::Status Write(std::function<absl::Status()> write);

  Store& base_;
  bool fail_writes_ = false;
  int failed_writes_ = 0;
  int writes_ = 0;
  bool fail_commits_ = false;
  int commits_ = 0;
  int failed_commits_ = 0;
  bool fail_syncs_ = false;
  int syncs_ = 0;
  int failed_syncs_ = 0;
  bool in_batch_ = false;
  std::vector<std::function<absl::Status()>> pending_;  // the batch's writes
};

}  // namespace amt::store

#endif  // AMT_ORCHESTRATOR_STORE_FAULTY_STORE_H_
