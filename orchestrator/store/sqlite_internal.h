// The SQLite store's schema and its handle types (sqlite_store.cc): kept apart so the store's
// own file stays about its statements. Internal to orchestrator/store/.
#ifndef AMT_ORCHESTRATOR_STORE_SQLITE_INTERNAL_H_
#define AMT_ORCHESTRATOR_STORE_SQLITE_INTERNAL_H_

#include <sqlite3.h>

#include <memory>

namespace amt::store::internal {

// Version 1. Names compare with COLLATE NOCASE, so uniqueness and every lookup are
// case-insensitive (SageMaker's rule for tuning-job names). `creation` is the INTEGER PRIMARY KEY
// (the rowid): an upsert keeps it, so a replaced record keeps its place in creation order.
// REAL columns are nullable because SQLite stores a NaN as NULL (read back as NaN).
// Logs and metrics refer to their job by name (NOCASE as well), not by rowid, so they can be
// written in the same transaction as a record that is being inserted.
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE tuning_jobs (
  creation INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE COLLATE NOCASE,
  record BLOB NOT NULL
);
CREATE TABLE training_jobs (
  creation INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE COLLATE NOCASE,
  tuning_job_name TEXT NOT NULL COLLATE NOCASE,
  job_index INTEGER NOT NULL,
  record BLOB NOT NULL
);
CREATE INDEX training_jobs_by_tuning_job ON training_jobs (tuning_job_name, job_index, creation);
CREATE TABLE logs (
  training_job TEXT NOT NULL COLLATE NOCASE,
  sequence INTEGER NOT NULL,
  timestamp REAL,
  message TEXT NOT NULL,
  PRIMARY KEY (training_job, sequence)
) WITHOUT ROWID;
CREATE TABLE metrics (
  id INTEGER PRIMARY KEY,
  training_job TEXT NOT NULL COLLATE NOCASE,
  metric_name TEXT NOT NULL,
  value REAL,
  timestamp REAL,
  log_sequence INTEGER NOT NULL
);
CREATE INDEX metrics_by_training_job ON metrics (training_job, id);
PRAGMA user_version = 1;
)sql";

// Version 2: the host that printed each log line (multi-instance jobs).
constexpr char kUpgradeToV2[] = R"sql(
ALTER TABLE logs ADD COLUMN host TEXT NOT NULL DEFAULT 'algo-1';
PRAGMA user_version = 2;
)sql";

struct DatabaseCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
using Database = std::unique_ptr<sqlite3, DatabaseCloser>;

struct StatementFinalizer {
  void operator()(sqlite3_stmt* statement) const { sqlite3_finalize(statement); }
};
using Statement = std::unique_ptr<sqlite3_stmt, StatementFinalizer>;

// One use of a cached statement: resets it at the end of the scope, so it can run again and
// holds no read snapshot open between calls (which would stop WAL checkpoints).
class StatementUse {
 public:
  explicit StatementUse(const Statement& statement) : statement_(statement.get()) {}
  StatementUse(const StatementUse&) = delete;
  StatementUse& operator=(const StatementUse&) = delete;
  ~StatementUse() {
    sqlite3_reset(statement_);
    sqlite3_clear_bindings(statement_);
  }
  sqlite3_stmt* get() const { return statement_; }

 private:
  sqlite3_stmt* statement_;
};

}  // namespace amt::store::internal

#endif  // AMT_ORCHESTRATOR_STORE_SQLITE_INTERNAL_H_
