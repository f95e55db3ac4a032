// The Store contract in memory (NewInMemoryStore), for unit tests of the core.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "orchestrator/store/store.h"
#include "orchestrator/store/store_errors.h"

namespace amt::store {
namespace {

// SQLite's NOCASE folds ASCII only; fold the same way so both stores agree on every name.
std::string FoldCase(std::string_view name) {
  std::string folded(name);
  for (char& c : folded) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return folded;
}

template <typename Record>
struct Entry {
  int64_t creation = 0;  // position in creation order, kept when the record is replaced
  Record record;
};

class InMemoryStore final : public Store {
 public:
  absl::Status PutTuningJob(const v1::TuningJobRecord& record) override {
    RETURN_IF_ERROR(internal::CheckRecord(record));
    StoreTuning(record);
    return absl::OkStatus();
  }

  absl::StatusOr<v1::TuningJobRecord> GetTuningJob(std::string_view name) override {
    auto it = tuning_.find(FoldCase(name));
    if (it == tuning_.end()) return internal::TuningJobNotFound(name);
    return it->second.record;
  }

  absl::StatusOr<std::vector<v1::TuningJobRecord>> ListTuningJobs() override {
    return InCreationOrder(tuning_, [](const auto&) { return true; });
  }

  absl::Status PutTrainingJob(const v1::TrainingJobRecord& record) override {
    RETURN_IF_ERROR(internal::CheckRecord(record));
    StoreTraining(record);
    return absl::OkStatus();
  }

  absl::StatusOr<v1::TrainingJobRecord> GetTrainingJob(std::string_view name) override {
    auto it = training_.find(FoldCase(name));
    if (it == training_.end()) return internal::TrainingJobNotFound(name);
    return it->second.record;
  }

  absl::StatusOr<std::vector<v1::TrainingJobRecord>> ListTrainingJobs() override {
    return InCreationOrder(training_, [](const auto&) { return true; });
  }

  absl::StatusOr<std::vector<v1::TrainingJobRecord>> ListTrainingJobsForTuningJob(
      std::string_view tuning_job_name) override {
    const std::string key = FoldCase(tuning_job_name);
    if (!tuning_.contains(key)) return internal::TuningJobNotFound(tuning_job_name);
    std::vector<v1::TrainingJobRecord> jobs =
        InCreationOrder(training_, [&key](const v1::TrainingJobRecord& record) {
          return FoldCase(record.tuning_job_name()) == key;
        });
    // Stable, so equal indexes keep creation order (as the SQLite store's ORDER BY does).
    std::stable_sort(jobs.begin(), jobs.end(),
                     [](const v1::TrainingJobRecord& a, const v1::TrainingJobRecord& b) {
                       return a.index() < b.index();
                     });
    return jobs;
  }

  absl::Status CommitTrainingJobProgress(const v1::TrainingJobRecord& record,
                                         const std::vector<LogEntry>& logs,
                                         const std::vector<v1::MetricPoint>& metrics) override {
    RETURN_IF_ERROR(internal::CheckRecord(record));
    const std::string& name = record.describe().training_job_name();
    const std::string key = FoldCase(name);
    // Check everything before changing anything: the commit is all or nothing.
    auto stored = logs_.find(key);
    std::set<int64_t> seen;
    for (const LogEntry& entry : logs) {
      const bool already_stored = stored != logs_.end() && stored->second.contains(entry.sequence);
      if (already_stored || !seen.insert(entry.sequence).second) {
        return internal::DuplicateLogLine(entry.sequence, name);
      }
    }
    StoreTraining(record);
    std::map<int64_t, LogEntry>& lines = logs_[key];
    for (const LogEntry& entry : logs) lines.emplace(entry.sequence, entry);
    std::vector<v1::MetricPoint>& points = metrics_[key];
    points.insert(points.end(), metrics.begin(), metrics.end());
    return absl::OkStatus();
  }

  absl::Status CommitTuningStep(const v1::TuningJobRecord& tuning,
                                const std::vector<v1::TrainingJobRecord>& training) override {
    RETURN_IF_ERROR(internal::CheckRecord(tuning));
    for (const v1::TrainingJobRecord& record : training) {
      RETURN_IF_ERROR(internal::CheckRecord(record));
    }
    StoreTuning(tuning);
    for (const v1::TrainingJobRecord& record : training) StoreTraining(record);
    return absl::OkStatus();
  }

  absl::Status DeleteTuningJob(std::string_view name,
                               const std::vector<v1::TrainingJobRecord>& training) override {
    const auto it = tuning_.find(FoldCase(name));
    if (it == tuning_.end()) return internal::TuningJobNotFound(name);
    for (const v1::TrainingJobRecord& record : training) {
      RETURN_IF_ERROR(internal::CheckRecord(record));
    }
    tuning_.erase(it);
    for (const v1::TrainingJobRecord& record : training) StoreTraining(record);
    return absl::OkStatus();
  }

  absl::Status DeleteTrainingJob(std::string_view name) override {
    const std::string key = FoldCase(name);
    if (training_.erase(key) == 0) return internal::TrainingJobNotFound(name);
    logs_.erase(key);
    metrics_.erase(key);
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<LogEntry>> ReadLogs(std::string_view training_job_name, int64_t from,
                                                 int limit) override {
    return ReadLogLines(training_job_name, nullptr, from, limit);
  }

  absl::StatusOr<std::vector<LogEntry>> ReadHostLogs(std::string_view training_job_name,
                                                     std::string_view host, int64_t from,
                                                     int limit) override {
    return ReadLogLines(training_job_name, &host, from, limit);
  }

  // `host` null: every host's lines.
  absl::StatusOr<std::vector<LogEntry>> ReadLogLines(std::string_view training_job_name,
                                                     const std::string_view* host, int64_t from,
                                                     int limit) const {
    if (limit < 0) return internal::NegativeLimit(limit);
    const std::string key = FoldCase(training_job_name);
    if (!training_.contains(key)) return internal::TrainingJobNotFound(training_job_name);
    std::vector<LogEntry> result;
    auto found = logs_.find(key);
    if (found == logs_.end()) return result;
    for (auto it = found->second.lower_bound(from);
         it != found->second.end() && static_cast<int>(result.size()) < limit; ++it) {
      if (host == nullptr || it->second.host == *host) result.push_back(it->second);
    }
    return result;
  }

  absl::StatusOr<std::vector<v1::MetricPoint>> ReadMetrics(
      std::string_view training_job_name) override {
    const std::string key = FoldCase(training_job_name);
    if (!training_.contains(key)) return internal::TrainingJobNotFound(training_job_name);
    auto found = metrics_.find(key);
    if (found == metrics_.end()) return std::vector<v1::MetricPoint>{};
    return found->second;
  }

  // Writes are applied at once, and nothing outlives the store: a batch only has to be well
  // formed.
  absl::Status BeginBatch() override {
    if (in_batch_) return internal::BatchMisuse(true);
    in_batch_ = true;
    return absl::OkStatus();
  }

  absl::Status WriteBatch() override {
    if (!in_batch_) return internal::BatchMisuse(false);
    in_batch_ = false;
    return absl::OkStatus();
  }

  absl::Status Sync() override { return absl::OkStatus(); }

 private:
  template <typename Record>
  static void Upsert(std::map<std::string, Entry<Record>>& table, const std::string& name,
                     const Record& record, int64_t& next_creation) {
    auto [it, inserted] = table.try_emplace(FoldCase(name));
    if (inserted) it->second.creation = next_creation++;
    it->second.record = record;
  }

  void StoreTuning(const v1::TuningJobRecord& record) {
    Upsert(tuning_, record.describe().hyper_parameter_tuning_job_name(), record, next_creation_);
  }

  void StoreTraining(const v1::TrainingJobRecord& record) {
    Upsert(training_, record.describe().training_job_name(), record, next_creation_);
  }

  template <typename Record, typename Predicate>
  static std::vector<Record> InCreationOrder(const std::map<std::string, Entry<Record>>& table,
                                             Predicate keep) {
    std::vector<const Entry<Record>*> entries;
    for (const auto& [key, entry] : table) {
      if (keep(entry.record)) entries.push_back(&entry);
    }
    std::sort(entries.begin(), entries.end(), [](const Entry<Record>* a, const Entry<Record>* b) {
      return a->creation < b->creation;
    });
    std::vector<Record> records;
    records.reserve(entries.size());
    for (const Entry<Record>* entry : entries) records.push_back(entry->record);
    return records;
  }

  // Keyed by the case-folded name.
  std::map<std::string, Entry<v1::TuningJobRecord>> tuning_;
  std::map<std::string, Entry<v1::TrainingJobRecord>> training_;
  std::map<std::string, std::map<int64_t, LogEntry>> logs_;
  std::map<std::string, std::vector<v1::MetricPoint>> metrics_;
  int64_t next_creation_ = 0;
  bool in_batch_ = false;
};

}  // namespace

std::unique_ptr<Store> NewInMemoryStore() { return std::make_unique<InMemoryStore>(); }

}  // namespace amt::store
