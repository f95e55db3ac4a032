// The SQLite Store (OpenSqliteStore): one database file in WAL mode, records as serialized protos
// next to the columns the queries need, every statement prepared once and reused.
#include <sqlite3.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "common/status_macros.h"
#include "orchestrator/store/data_dir_lock.h"
#include "orchestrator/store/sqlite_internal.h"
#include "orchestrator/store/store.h"
#include "orchestrator/store/store_errors.h"

namespace amt::store {
namespace {

using internal::Database;
using internal::kSchemaV1;
using internal::kUpgradeToV2;
using internal::Statement;
using internal::StatementUse;

class SqliteStore final : public Store {
 public:
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& path, bool full_sync,
                                                     DataDirLock lock) {
    sqlite3* raw = nullptr;
    // NOMUTEX: the store is used by one thread (the orchestrator loop), so SQLite's own
    // serialization would only cost time.
    const int rc =
        sqlite3_open_v2(path.c_str(), &raw,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    Database db(raw);  // sqlite3_open_v2 returns a handle to close even when it fails
    if (rc != SQLITE_OK) {
      return absl::InternalError("sqlite: cannot open '" + path + "': " +
                                 (raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
    }
    auto store = std::unique_ptr<SqliteStore>(new SqliteStore(std::move(lock), std::move(db)));
    RETURN_IF_ERROR(store->Configure(full_sync));
    RETURN_IF_ERROR(store->MigrateSchema());
    RETURN_IF_ERROR(store->PrepareStatements());
    return std::unique_ptr<Store>(std::move(store));
  }

  absl::Status PutTuningJob(const v1::TuningJobRecord& record) override {
    RETURN_IF_ERROR(internal::CheckRecord(record));
    return WriteTuning(record);
  }

  absl::StatusOr<v1::TuningJobRecord> GetTuningJob(std::string_view name) override {
    StatementUse use(get_tuning_);
    RETURN_IF_ERROR(BindText(use, 1, name));
    ASSIGN_OR_RETURN(std::vector<v1::TuningJobRecord> records,
                     ReadRecords<v1::TuningJobRecord>(use, "read tuning job"));
    if (records.empty()) return internal::TuningJobNotFound(name);
    return std::move(records.front());
  }

  absl::StatusOr<std::vector<v1::TuningJobRecord>> ListTuningJobs() override {
    StatementUse use(list_tuning_);
    return ReadRecords<v1::TuningJobRecord>(use, "list tuning jobs");
  }

  absl::Status PutTrainingJob(const v1::TrainingJobRecord& record) override {
    RETURN_IF_ERROR(internal::CheckRecord(record));
    return WriteTraining(record);
  }

  absl::StatusOr<v1::TrainingJobRecord> GetTrainingJob(std::string_view name) override {
    StatementUse use(get_training_);
    RETURN_IF_ERROR(BindText(use, 1, name));
    ASSIGN_OR_RETURN(std::vector<v1::TrainingJobRecord> records,
                     ReadRecords<v1::TrainingJobRecord>(use, "read training job"));
    if (records.empty()) return internal::TrainingJobNotFound(name);
    return std::move(records.front());
  }

  absl::StatusOr<std::vector<v1::TrainingJobRecord>> ListTrainingJobs() override {
    StatementUse use(list_training_);
    return ReadRecords<v1::TrainingJobRecord>(use, "list training jobs");
  }

  absl::StatusOr<std::vector<v1::TrainingJobRecord>> ListTrainingJobsForTuningJob(
      std::string_view tuning_job_name) override {
    ASSIGN_OR_RETURN(bool exists, Exists(tuning_exists_, tuning_job_name));
    if (!exists) return internal::TuningJobNotFound(tuning_job_name);
    StatementUse use(list_training_for_tuning_);
    RETURN_IF_ERROR(BindText(use, 1, tuning_job_name));
    return ReadRecords<v1::TrainingJobRecord>(use, "list training jobs of a tuning job");
  }

  absl::Status CommitTrainingJobProgress(const v1::TrainingJobRecord& record,
                                         const std::vector<LogEntry>& logs,
                                         const std::vector<v1::MetricPoint>& metrics) override {
    RETURN_IF_ERROR(internal::CheckRecord(record));
    const std::string& name = record.describe().training_job_name();
    return InTransaction([&]() -> absl::Status {
      RETURN_IF_ERROR(WriteTraining(record));
      for (const LogEntry& entry : logs) RETURN_IF_ERROR(InsertLog(name, entry));
      for (const v1::MetricPoint& point : metrics) RETURN_IF_ERROR(InsertMetric(name, point));
      return absl::OkStatus();
    });
  }

  absl::Status CommitTuningStep(const v1::TuningJobRecord& tuning,
                                const std::vector<v1::TrainingJobRecord>& training) override {
    RETURN_IF_ERROR(internal::CheckRecord(tuning));
    for (const v1::TrainingJobRecord& record : training) {
      RETURN_IF_ERROR(internal::CheckRecord(record));
    }
    return InTransaction([&]() -> absl::Status {
      RETURN_IF_ERROR(WriteTuning(tuning));
      for (const v1::TrainingJobRecord& record : training) RETURN_IF_ERROR(WriteTraining(record));
      return absl::OkStatus();
    });
  }

  absl::Status DeleteTuningJob(std::string_view name,
                               const std::vector<v1::TrainingJobRecord>& training) override {
    for (const v1::TrainingJobRecord& record : training) {
      RETURN_IF_ERROR(internal::CheckRecord(record));
    }
    return InTransaction([&]() -> absl::Status {
      RETURN_IF_ERROR(DeleteByName(delete_tuning_, name, "delete tuning job"));
      if (sqlite3_changes(db_.get()) == 0) return internal::TuningJobNotFound(name);
      for (const v1::TrainingJobRecord& record : training) RETURN_IF_ERROR(WriteTraining(record));
      return absl::OkStatus();
    });
  }

  absl::Status DeleteTrainingJob(std::string_view name) override {
    return InTransaction([&]() -> absl::Status {
      RETURN_IF_ERROR(DeleteByName(delete_training_, name, "delete training job"));
      if (sqlite3_changes(db_.get()) == 0) return internal::TrainingJobNotFound(name);
      RETURN_IF_ERROR(DeleteByName(delete_logs_, name, "delete log lines"));
      return DeleteByName(delete_metrics_, name, "delete metric points");
    });
  }

  absl::StatusOr<std::vector<LogEntry>> ReadLogs(std::string_view training_job_name, int64_t from,
                                                 int limit) override {
    return ReadLogLines(read_logs_, training_job_name, nullptr, from, limit);
  }

  absl::StatusOr<std::vector<LogEntry>> ReadHostLogs(std::string_view training_job_name,
                                                     std::string_view host, int64_t from,
                                                     int limit) override {
    return ReadLogLines(read_host_logs_, training_job_name, &host, from, limit);
  }

  absl::StatusOr<std::vector<v1::MetricPoint>> ReadMetrics(
      std::string_view training_job_name) override {
    ASSIGN_OR_RETURN(bool exists, Exists(training_exists_, training_job_name));
    if (!exists) return internal::TrainingJobNotFound(training_job_name);
    StatementUse use(read_metrics_);
    RETURN_IF_ERROR(BindText(use, 1, training_job_name));
    std::vector<v1::MetricPoint> points;
    int rc;
    while ((rc = sqlite3_step(use.get())) == SQLITE_ROW) {
      v1::MetricPoint& point = points.emplace_back();
      point.set_metric_name(ColumnText(use.get(), 0));
      point.set_value(ColumnDouble(use.get(), 1));
      point.set_timestamp(ColumnDouble(use.get(), 2));
      point.set_log_sequence(sqlite3_column_int64(use.get(), 3));
    }
    RETURN_IF_ERROR(CheckDone(rc, "read metrics"));
    return points;
  }

  // Under synchronous=FULL a batch is committed with NORMAL (the WAL written, not synced) and
  // synced by Sync: the two steps of one FULL commit. SQLite refuses to change the level inside
  // a transaction, so it changes before BEGIN and back after COMMIT.
  absl::Status BeginBatch() override {
    if (batch_) return internal::BatchMisuse(true);
    if (full_sync_) RETURN_IF_ERROR(SetSynchronous(false));
    {
      StatementUse use(begin_);
      absl::Status begun = CheckDone(sqlite3_step(use.get()), "begin batch");
      if (!begun.ok()) {
        if (full_sync_) (void)SetSynchronous(true);
        return begun;
      }
    }
    batch_ = true;
    changes_at_begin_ = sqlite3_total_changes64(db_.get());
    return absl::OkStatus();
  }

  absl::Status WriteBatch() override {
    if (!batch_) return internal::BatchMisuse(false);
    batch_ = false;
    absl::Status status;
    // An I/O error or a full disk inside it may have rolled it all back already (SQLite's own).
    if (sqlite3_get_autocommit(db_.get())) {
      status = absl::InternalError("sqlite: the batch was rolled back by an earlier error");
    } else {
      // A batch that changed no row wrote no WAL frame: nothing for Sync to do.
      const bool wrote = sqlite3_total_changes64(db_.get()) != changes_at_begin_;
      status = Finish(absl::OkStatus(), /*synced=*/!full_sync_ || !wrote);
    }
    if (full_sync_) {
      const absl::Status restored = SetSynchronous(true);
      if (status.ok()) status = restored;
    }
    return status;
  }

  // fdatasync of the WAL (SQLite's own call, as at a FULL commit: the first one after the WAL
  // was created syncs its directory too).
  absl::Status Sync() override {
    if (!unsynced_) return absl::OkStatus();
    sqlite3_file* wal = nullptr;
    RETURN_IF_ERROR(
        Check(sqlite3_file_control(db_.get(), "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal), "sync"));
    if (wal != nullptr && wal->pMethods != nullptr) {
      const int rc = wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL);
      if (rc != SQLITE_OK) {
        return absl::InternalError(std::string("sqlite: sync of the WAL: ") + sqlite3_errstr(rc));
      }
    }
    unsynced_ = false;
    return absl::OkStatus();
  }

 private:
  SqliteStore(DataDirLock lock, Database db) : lock_(std::move(lock)), db_(std::move(db)) {}

  // Not a prepared statement: SQLite applies a PRAGMA synchronous when it compiles it, and
  // stepping it again changes nothing.
  absl::Status SetSynchronous(bool full) {
    return Exec(full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL", "synchronous");
  }

  absl::Status Error(std::string_view what) const {
    return absl::InternalError("sqlite: " + std::string(what) + ": " + sqlite3_errmsg(db_.get()));
  }

  absl::Status Check(int rc, std::string_view what) const {
    return rc == SQLITE_OK ? absl::OkStatus() : Error(what);
  }

  absl::Status CheckDone(int rc, std::string_view what) const {
    return rc == SQLITE_DONE ? absl::OkStatus() : Error(what);
  }

  absl::Status Exec(const char* sql, std::string_view what) {
    return Check(sqlite3_exec(db_.get(), sql, nullptr, nullptr, nullptr), what);
  }

  // Runs a statement that returns one integer or text row (PRAGMA queries).
  absl::StatusOr<std::string> QueryOne(const char* sql) {
    sqlite3_stmt* raw = nullptr;
    RETURN_IF_ERROR(Check(sqlite3_prepare_v2(db_.get(), sql, -1, &raw, nullptr), sql));
    Statement statement(raw);
    if (sqlite3_step(raw) != SQLITE_ROW) return Error(sql);
    return ColumnText(raw, 0);
  }

  absl::Status Configure(bool full_sync) {
    full_sync_ = full_sync;
    // Another connection (an inspecting sqlite3 shell, a second amtd by mistake) may hold the
    // write lock briefly; wait for it rather than failing the write.
    RETURN_IF_ERROR(Check(sqlite3_busy_timeout(db_.get(), 5000), "busy_timeout"));
    ASSIGN_OR_RETURN(std::string mode, QueryOne("PRAGMA journal_mode = WAL"));
    if (mode != "wal") {
      return absl::InternalError("sqlite: cannot switch to WAL mode, journal_mode is '" + mode +
                                 "'");
    }
    // FULL (the default, not WAL's usual NORMAL): fsync the WAL at every commit, so an
    // acknowledged write also survives power loss. NORMAL still survives a crash of the process
    // (kill -9): the WAL is in the OS's page cache; only a power loss may drop the last commits.
    return SetSynchronous(full_sync);
  }

  absl::Status MigrateSchema() {
    return InTransactionWith("BEGIN IMMEDIATE", [this]() -> absl::Status {
      ASSIGN_OR_RETURN(std::string text, QueryOne("PRAGMA user_version"));
      const int version = std::stoi(text);
      if (version == kSchemaVersion) return absl::OkStatus();
      if (version > kSchemaVersion) {
        return absl::FailedPreconditionError(
            "amt.db has schema version " + std::to_string(version) +
            ", newer than this build supports (" + std::to_string(kSchemaVersion) + ")");
      }
      // 0: a new database; then each version's upgrade step in turn.
      if (version < 1) RETURN_IF_ERROR(Exec(kSchemaV1, "create schema"));
      if (version < 2) RETURN_IF_ERROR(Exec(kUpgradeToV2, "upgrade schema to version 2"));
      return absl::OkStatus();
    });
  }

  absl::Status Prepare(Statement& statement, const char* sql) {
    sqlite3_stmt* raw = nullptr;
    // PERSISTENT: these live as long as the store and run many times.
    RETURN_IF_ERROR(Check(
        sqlite3_prepare_v3(db_.get(), sql, -1, SQLITE_PREPARE_PERSISTENT, &raw, nullptr), sql));
    statement.reset(raw);
    return absl::OkStatus();
  }

  absl::Status PrepareStatements() {
    RETURN_IF_ERROR(Prepare(begin_, "BEGIN IMMEDIATE"));
    RETURN_IF_ERROR(Prepare(commit_, "COMMIT"));
    RETURN_IF_ERROR(Prepare(rollback_, "ROLLBACK"));
    RETURN_IF_ERROR(Prepare(savepoint_, "SAVEPOINT write"));
    RETURN_IF_ERROR(Prepare(rollback_to_, "ROLLBACK TO write"));
    RETURN_IF_ERROR(Prepare(release_, "RELEASE write"));
    // Upserts rather than INSERT OR REPLACE: REPLACE deletes the old row and gives the new one a
    // new rowid, which would move a replaced job to the end of the creation order.
    RETURN_IF_ERROR(Prepare(put_tuning_,
                            "INSERT INTO tuning_jobs (name, record) VALUES (?1, ?2) "
                            "ON CONFLICT (name) DO UPDATE SET name = excluded.name, "
                            "record = excluded.record"));
    RETURN_IF_ERROR(Prepare(get_tuning_, "SELECT record FROM tuning_jobs WHERE name = ?1"));
    RETURN_IF_ERROR(Prepare(tuning_exists_, "SELECT 1 FROM tuning_jobs WHERE name = ?1"));
    RETURN_IF_ERROR(Prepare(list_tuning_, "SELECT record FROM tuning_jobs ORDER BY creation"));
    RETURN_IF_ERROR(
        Prepare(put_training_,
                "INSERT INTO training_jobs (name, tuning_job_name, job_index, record) "
                "VALUES (?1, ?2, ?3, ?4) "
                "ON CONFLICT (name) DO UPDATE SET name = excluded.name, "
                "tuning_job_name = excluded.tuning_job_name, job_index = excluded.job_index, "
                "record = excluded.record"));
    RETURN_IF_ERROR(Prepare(get_training_, "SELECT record FROM training_jobs WHERE name = ?1"));
    RETURN_IF_ERROR(Prepare(training_exists_, "SELECT 1 FROM training_jobs WHERE name = ?1"));
    RETURN_IF_ERROR(Prepare(list_training_, "SELECT record FROM training_jobs ORDER BY creation"));
    RETURN_IF_ERROR(Prepare(list_training_for_tuning_,
                            "SELECT record FROM training_jobs WHERE tuning_job_name = ?1 "
                            "ORDER BY job_index, creation"));
    RETURN_IF_ERROR(Prepare(insert_log_,
                            "INSERT INTO logs (training_job, sequence, timestamp, message, host) "
                            "VALUES (?1, ?2, ?3, ?4, ?5)"));
    RETURN_IF_ERROR(Prepare(read_logs_,
                            "SELECT sequence, timestamp, message, host FROM logs "
                            "WHERE training_job = ?1 AND sequence >= ?2 "
                            "ORDER BY sequence LIMIT ?3"));
    RETURN_IF_ERROR(Prepare(read_host_logs_,
                            "SELECT sequence, timestamp, message, host FROM logs "
                            "WHERE training_job = ?1 AND sequence >= ?2 AND host = ?4 "
                            "ORDER BY sequence LIMIT ?3"));
    RETURN_IF_ERROR(Prepare(insert_metric_,
                            "INSERT INTO metrics (training_job, metric_name, value, timestamp, "
                            "log_sequence) VALUES (?1, ?2, ?3, ?4, ?5)"));
    RETURN_IF_ERROR(Prepare(delete_tuning_, "DELETE FROM tuning_jobs WHERE name = ?1"));
    RETURN_IF_ERROR(Prepare(delete_training_, "DELETE FROM training_jobs WHERE name = ?1"));
    RETURN_IF_ERROR(Prepare(delete_logs_, "DELETE FROM logs WHERE training_job = ?1"));
    RETURN_IF_ERROR(Prepare(delete_metrics_, "DELETE FROM metrics WHERE training_job = ?1"));
    RETURN_IF_ERROR(Prepare(read_metrics_,
                            "SELECT metric_name, value, timestamp, log_sequence FROM metrics "
                            "WHERE training_job = ?1 ORDER BY id"));
    return absl::OkStatus();
  }

  // Runs `body` in one transaction: committed when it returns OK, rolled back otherwise (and
  // when COMMIT itself fails), so a write is either all there or not at all.
  // Inside a batch, a savepoint instead: undone alone on failure, committed with the batch.
  absl::Status InTransaction(const std::function<absl::Status()>& body) {
    if (batch_) return InSavepoint(body);
    {
      StatementUse use(begin_);
      RETURN_IF_ERROR(CheckDone(sqlite3_step(use.get()), "begin transaction"));
    }
    return Finish(body());
  }

  // Ends the open transaction: commits it after `status` OK, else (or when COMMIT fails) rolls
  // it back. Returns the first error. `synced` false: the commit wrote WAL frames without
  // syncing them (a batch's under synchronous=FULL), so Sync has work to do.
  absl::Status Finish(absl::Status status, bool synced = true) {
    if (status.ok()) {
      StatementUse use(commit_);
      status = CheckDone(sqlite3_step(use.get()), "commit");
      if (status.ok() && !synced) unsynced_ = true;  // only Sync clears it
    }
    if (!status.ok() && !sqlite3_get_autocommit(db_.get())) {
      StatementUse use(rollback_);
      sqlite3_step(use.get());  // the first error is the one to report
    }
    return status;
  }

  absl::Status InSavepoint(const std::function<absl::Status()>& body) {
    {
      StatementUse use(savepoint_);
      RETURN_IF_ERROR(CheckDone(sqlite3_step(use.get()), "savepoint"));
    }
    absl::Status status = body();
    if (!status.ok() && !sqlite3_get_autocommit(db_.get())) {
      StatementUse use(rollback_to_);
      sqlite3_step(use.get());  // the first error is the one to report
    }
    if (!sqlite3_get_autocommit(db_.get())) {
      StatementUse use(release_);
      const absl::Status released = CheckDone(sqlite3_step(use.get()), "release savepoint");
      if (status.ok()) status = released;
    }
    return status;
  }

  // The same before the statements are prepared (schema setup).
  absl::Status InTransactionWith(const char* begin, const std::function<absl::Status()>& body) {
    RETURN_IF_ERROR(Exec(begin, "begin transaction"));
    absl::Status status = body();
    if (status.ok()) status = Exec("COMMIT", "commit");
    if (!status.ok() && !sqlite3_get_autocommit(db_.get())) {
      sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
    }
    return status;
  }

  absl::Status BindText(const StatementUse& use, int index, std::string_view text) {
    // A null data pointer would bind SQL NULL; an empty name is "" (e.g. a standalone job's
    // tuning_job_name). SQLITE_STATIC: the text outlives the StatementUse that clears it.
    const char* data = text.data() != nullptr ? text.data() : "";
    return Check(
        sqlite3_bind_text64(use.get(), index, data, text.size(), SQLITE_STATIC, SQLITE_UTF8),
        "bind");
  }

  absl::Status BindBlob(const StatementUse& use, int index, const std::string& bytes) {
    return Check(sqlite3_bind_blob64(use.get(), index, bytes.data(), bytes.size(), SQLITE_STATIC),
                 "bind");
  }

  static std::string ColumnText(sqlite3_stmt* statement, int column) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement, column));
    if (text == nullptr) return std::string();
    return std::string(text, static_cast<size_t>(sqlite3_column_bytes(statement, column)));
  }

  // SQLite binds a NaN as NULL; a trainer may well print "nan", so give NaN back.
  static double ColumnDouble(sqlite3_stmt* statement, int column) {
    if (sqlite3_column_type(statement, column) == SQLITE_NULL) {
      return std::numeric_limits<double>::quiet_NaN();
    }
    return sqlite3_column_double(statement, column);
  }

  absl::Status DeleteByName(const Statement& statement, std::string_view name,
                            std::string_view what) {
    StatementUse use(statement);
    RETURN_IF_ERROR(BindText(use, 1, name));
    return CheckDone(sqlite3_step(use.get()), what);
  }

  absl::StatusOr<bool> Exists(const Statement& statement, std::string_view name) {
    StatementUse use(statement);
    RETURN_IF_ERROR(BindText(use, 1, name));
    const int rc = sqlite3_step(use.get());
    if (rc == SQLITE_ROW) return true;
    RETURN_IF_ERROR(CheckDone(rc, "look up job"));
    return false;
  }

  template <typename Record>
  absl::StatusOr<std::vector<Record>> ReadRecords(const StatementUse& use, std::string_view what) {
    std::vector<Record> records;
    int rc;
    while ((rc = sqlite3_step(use.get())) == SQLITE_ROW) {
      const void* bytes = sqlite3_column_blob(use.get(), 0);
      const int size = sqlite3_column_bytes(use.get(), 0);
      if (!records.emplace_back().ParseFromArray(bytes, size)) {
        return absl::DataLossError("amt.db: cannot parse a stored record (" + std::string(what) +
                                   ")");
      }
    }
    RETURN_IF_ERROR(CheckDone(rc, what));
    return records;
  }

  absl::Status WriteTuning(const v1::TuningJobRecord& record) {
    const std::string bytes = record.SerializeAsString();
    StatementUse use(put_tuning_);
    RETURN_IF_ERROR(BindText(use, 1, record.describe().hyper_parameter_tuning_job_name()));
    RETURN_IF_ERROR(BindBlob(use, 2, bytes));
    return CheckDone(sqlite3_step(use.get()), "write tuning job");
  }

  absl::Status WriteTraining(const v1::TrainingJobRecord& record) {
    const std::string bytes = record.SerializeAsString();
    StatementUse use(put_training_);
    RETURN_IF_ERROR(BindText(use, 1, record.describe().training_job_name()));
    RETURN_IF_ERROR(BindText(use, 2, record.tuning_job_name()));
    RETURN_IF_ERROR(Check(sqlite3_bind_int(use.get(), 3, record.index()), "bind"));
    RETURN_IF_ERROR(BindBlob(use, 4, bytes));
    return CheckDone(sqlite3_step(use.get()), "write training job");
  }

  // `host` null: every host's lines.
  absl::StatusOr<std::vector<LogEntry>> ReadLogLines(Statement& statement,
                                                     std::string_view training_job_name,
                                                     const std::string_view* host, int64_t from,
                                                     int limit) {
    if (limit < 0) return internal::NegativeLimit(limit);
    ASSIGN_OR_RETURN(bool exists, Exists(training_exists_, training_job_name));
    if (!exists) return internal::TrainingJobNotFound(training_job_name);
    StatementUse use(statement);
    RETURN_IF_ERROR(BindText(use, 1, training_job_name));
    RETURN_IF_ERROR(Check(sqlite3_bind_int64(use.get(), 2, from), "bind"));
    RETURN_IF_ERROR(Check(sqlite3_bind_int64(use.get(), 3, limit), "bind"));
    if (host != nullptr) RETURN_IF_ERROR(BindText(use, 4, *host));
    std::vector<LogEntry> entries;
    int rc;
    while ((rc = sqlite3_step(use.get())) == SQLITE_ROW) {
      entries.push_back(LogEntry{.sequence = sqlite3_column_int64(use.get(), 0),
                                 .timestamp = ColumnDouble(use.get(), 1),
                                 .message = ColumnText(use.get(), 2),
                                 .host = ColumnText(use.get(), 3)});
    }
    RETURN_IF_ERROR(CheckDone(rc, "read logs"));
    return entries;
  }

  absl::Status InsertLog(const std::string& training_job_name, const LogEntry& entry) {
    StatementUse use(insert_log_);
    RETURN_IF_ERROR(BindText(use, 1, training_job_name));
    RETURN_IF_ERROR(Check(sqlite3_bind_int64(use.get(), 2, entry.sequence), "bind"));
    RETURN_IF_ERROR(Check(sqlite3_bind_double(use.get(), 3, entry.timestamp), "bind"));
    RETURN_IF_ERROR(BindText(use, 4, entry.message));
    RETURN_IF_ERROR(BindText(use, 5, entry.host));
    const int rc = sqlite3_step(use.get());
    if (rc == SQLITE_CONSTRAINT &&
        sqlite3_extended_errcode(db_.get()) == SQLITE_CONSTRAINT_PRIMARYKEY) {
      return internal::DuplicateLogLine(entry.sequence, training_job_name);
    }
    return CheckDone(rc, "write log line");
  }

  absl::Status InsertMetric(const std::string& training_job_name, const v1::MetricPoint& point) {
    StatementUse use(insert_metric_);
    RETURN_IF_ERROR(BindText(use, 1, training_job_name));
    RETURN_IF_ERROR(BindText(use, 2, point.metric_name()));
    RETURN_IF_ERROR(Check(sqlite3_bind_double(use.get(), 3, point.value()), "bind"));
    RETURN_IF_ERROR(Check(sqlite3_bind_double(use.get(), 4, point.timestamp()), "bind"));
    RETURN_IF_ERROR(Check(sqlite3_bind_int64(use.get(), 5, point.log_sequence()), "bind"));
    return CheckDone(sqlite3_step(use.get()), "write metric point");
  }

  DataDirLock lock_;  // released after the database is closed
  Database db_;       // declared before the statements: destroyed after every one of them
  Statement begin_, commit_, rollback_;
  Statement savepoint_, rollback_to_, release_;  // one write's part of a batch
  bool batch_ = false;                           // between BeginBatch and WriteBatch
  bool full_sync_ = true;                        // synchronous=FULL (else NORMAL)
  bool unsynced_ = false;                        // a batch written and not synced since
  sqlite3_int64 changes_at_begin_ = 0;           // sqlite3_total_changes64 at BeginBatch
  Statement put_tuning_, get_tuning_, tuning_exists_, list_tuning_;
  Statement put_training_, get_training_, training_exists_, list_training_,
      list_training_for_tuning_;
  Statement insert_log_, read_logs_, read_host_logs_, insert_metric_, read_metrics_;
  Statement delete_tuning_, delete_training_, delete_logs_, delete_metrics_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> OpenSqliteStore(const std::string& data_dir,
                                                       const SqliteOptions& options) {
  if (data_dir.empty()) return absl::InvalidArgumentError("store data directory is empty");
  std::error_code error;
  std::filesystem::create_directories(data_dir, error);
  if (error) {
    return absl::InternalError("cannot create store data directory '" + data_dir +
                               "': " + error.message());
  }
  ASSIGN_OR_RETURN(DataDirLock lock, DataDirLock::Acquire(data_dir));
  return SqliteStore::Open((std::filesystem::path(data_dir) / kDatabaseFileName).string(),
                           options.full_sync, std::move(lock));
}

}  // namespace amt::store
