// The orchestrator's state store: tuning-job and training-job records (amt/v1/state.proto), the
// log lines of every training job and the metric points captured from them. Two implementations
// share one contract: SQLite (durable, the production store) and in memory (unit tests of the
// core). Every write is committed when the call returns (or, inside a batch, when CommitBatch,
// or its first step WriteBatch, returns), so a kill -9 of amtd loses nothing that was
// acknowledged after it; a write outside a batch, and a batch once Sync returns, also survive a
// power loss.
//
// Not thread-safe: a Store is owned and used by the orchestrator loop only.
#ifndef AMT_ORCHESTRATOR_STORE_STORE_H_
#define AMT_ORCHESTRATOR_STORE_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "amt/v1/state.pb.h"

namespace amt::store {

// One line of a training job's output, numbered by the orchestrator (next_log_sequence).
struct LogEntry {
  int64_t sequence = 0;
  double timestamp = 0;  // epoch seconds
  std::string message;
  // The host that printed it: algo-1 .. algo-N for a job of InstanceCount N (lines stored by a
  // schema-1 amtd read as algo-1).
  std::string host = "algo-1";

  friend bool operator==(const LogEntry&, const LogEntry&) = default;
};

// Names are unique case-insensitively (ASCII), for tuning jobs (SageMaker's rule) and training
// jobs alike: a Put of "ABC" replaces the record stored as "abc" (the stored name becomes "ABC")
// and keeps its creation position. Lookups by name are case-insensitive too.
//
// Errors common to all methods: InvalidArgument for a record without a name; NotFound with
// "tuning job 'x' not found" / "training job 'x' not found"; Internal with SQLite's error text
// when the database fails (the write is then rolled back, nothing of it is kept).
class Store {
 public:
  virtual ~Store() = default;

  // Inserts or replaces the record named describe.hyper_parameter_tuning_job_name.
  virtual absl::Status PutTuningJob(const v1::TuningJobRecord& record) = 0;
  // NotFound when no tuning job has that name.
  virtual absl::StatusOr<v1::TuningJobRecord> GetTuningJob(std::string_view name) = 0;
  // All tuning jobs in creation order (first Put of each name).
  virtual absl::StatusOr<std::vector<v1::TuningJobRecord>> ListTuningJobs() = 0;

  // Inserts or replaces the record named describe.training_job_name.
  virtual absl::Status PutTrainingJob(const v1::TrainingJobRecord& record) = 0;
  // NotFound when no training job has that name.
  virtual absl::StatusOr<v1::TrainingJobRecord> GetTrainingJob(std::string_view name) = 0;
  // All training jobs (standalone and tuning-launched) in creation order.
  virtual absl::StatusOr<std::vector<v1::TrainingJobRecord>> ListTrainingJobs() = 0;
  // The training jobs whose tuning_job_name matches (case-insensitively), by ascending index
  // (creation order among equal indexes). NotFound when no tuning job has that name.
  virtual absl::StatusOr<std::vector<v1::TrainingJobRecord>> ListTrainingJobsForTuningJob(
      std::string_view tuning_job_name) = 0;

  // Atomically: replaces (or inserts) the training job record and appends its new log lines and
  // metric points, in one transaction, so a crash never leaves metrics without the record that
  // counts them. AlreadyExists, with nothing written, when a log sequence is already stored for
  // that job or repeats within `logs`: "log line 7 of training job 'x' already stored".
  virtual absl::Status CommitTrainingJobProgress(const v1::TrainingJobRecord& record,
                                                 const std::vector<LogEntry>& logs,
                                                 const std::vector<v1::MetricPoint>& metrics) = 0;
  // Atomically puts a tuning job and some of its training jobs (e.g. a new launch and the
  // updated counters). Nothing is written when any record is invalid.
  virtual absl::Status CommitTuningStep(const v1::TuningJobRecord& tuning,
                                        const std::vector<v1::TrainingJobRecord>& training) = 0;

  // DeleteHyperParameterTuningJob: atomically deletes the tuning job `name` and puts `training`
  // (its training jobs, which outlive it, unlinked from it). NotFound, with nothing written, when
  // no tuning job has that name.
  virtual absl::Status DeleteTuningJob(std::string_view name,
                                       const std::vector<v1::TrainingJobRecord>& training) = 0;
  // DeleteTrainingJob: atomically deletes the training job `name` with its log lines and metric
  // points. NotFound when no training job has that name.
  virtual absl::Status DeleteTrainingJob(std::string_view name) = 0;

  // Log lines with sequence >= from, ascending, at most `limit` of them (0 gives none).
  // InvalidArgument for a negative limit; NotFound when no training job has that name.
  virtual absl::StatusOr<std::vector<LogEntry>> ReadLogs(std::string_view training_job_name,
                                                         int64_t from, int limit) = 0;
  // The same for the lines of one host ("algo-2"): those of it with sequence >= from.
  virtual absl::StatusOr<std::vector<LogEntry>> ReadHostLogs(std::string_view training_job_name,
                                                             std::string_view host, int64_t from,
                                                             int limit) = 0;
  // All metric points of a job in emission order. NotFound when no training job has that name.
  virtual absl::StatusOr<std::vector<v1::MetricPoint>> ReadMetrics(
      std::string_view training_job_name) = 0;

  // Group commit. The writes between BeginBatch and CommitBatch are one transaction: each is
  // still all or nothing and returns its own error at once, but none is committed (durable)
  // before CommitBatch, which commits all of them with one sync of the disk instead of one per
  // write. When CommitBatch fails in its WriteBatch (Internal), nothing of the batch is kept. A
  // store destroyed (or a process killed) inside a batch keeps nothing of it. Reads inside a batch
  // see its writes (SQLite, in memory). FailedPrecondition for a BeginBatch inside a batch or a
  // CommitBatch outside one.
  virtual absl::Status BeginBatch() = 0;
  absl::Status CommitBatch() {
    absl::Status written = WriteBatch();
    return written.ok() ? Sync() : written;
  }
  // CommitBatch in its two steps. WriteBatch commits the batch so that it survives a crash of
  // the process (kill -9): SQLite has written it to its WAL, in the OS's page cache, and every
  // read and a reopened store see it. Sync makes every write committed so far durable (it
  // survives a power loss: SQLite's one fdatasync of the WAL, as a synchronous=FULL commit
  // does); OK when nothing waits for it, and always for a store that syncs nothing (in memory,
  // synchronous=NORMAL). Between the two, what a commit made possible may go ahead if a power
  // loss would undo it too (a launch on this machine: Orchestrator::EndGroup). When Sync fails,
  // the writes stay committed but not durable; a later Sync (or synced commit) may make them so.
  // A commit outside a batch is synced before it returns, as before.
  virtual absl::Status WriteBatch() = 0;
  virtual absl::Status Sync() = 0;
};

// The file the SQLite store keeps under its data directory.
inline constexpr char kDatabaseFileName[] = "amt.db";

// The schema version this build writes (PRAGMA user_version). 2 added the logs' host; a
// version-1 database is upgraded when opened.
inline constexpr int kSchemaVersion = 2;

// Opens (creating if missing) `data_dir`/amt.db: SQLite in WAL mode with synchronous=FULL, so a
// committed write survives kill -9 of the process and power loss. Creates `data_dir` when
// missing, and holds its exclusive lock (data_dir_lock.h) while the store lives. Errors:
// InvalidArgument for an empty `data_dir`; Internal when the directory or database cannot be
// created or opened; FailedPrecondition when another store (another amtd) holds the directory,
// or the database was written by a newer schema version.
// full_sync false selects synchronous=NORMAL: a committed write still survives kill -9 of the
// process, but not a power loss; commits skip the fsync (amtd --sqlite-sync normal).
struct SqliteOptions {
  bool full_sync = true;
};
absl::StatusOr<std::unique_ptr<Store>> OpenSqliteStore(const std::string& data_dir,
                                                       const SqliteOptions& options = {});

// The same contract in memory, for unit tests of the core. Nothing survives destruction.
std::unique_ptr<Store> NewInMemoryStore();

}  // namespace amt::store

#endif  // AMT_ORCHESTRATOR_STORE_STORE_H_
