// What only the SQLite store promises: durability across reopen and process death, WAL mode,
// the schema version, and the data directory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "orchestrator/store/store.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/store/store_test_util.h"

namespace amt::store {
namespace {

using ::amt::store::testing::EqualsProto;
using ::amt::store::testing::IsOk;
using ::amt::store::testing::Point;
using ::amt::store::testing::StatusIs;
using ::amt::store::testing::TrainingRecord;
using ::amt::store::testing::TuningRecord;
using ::amt::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A second, independent connection to the store's database file.
class RawConnection {
 public:
  explicit RawConnection(const std::filesystem::path& file) {
    if (sqlite3_open_v2(file.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
        SQLITE_OK) {
      ADD_FAILURE() << "cannot open " << file << ": " << sqlite3_errmsg(db_);
    }
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  ~RawConnection() { sqlite3_close(db_); }

  // The first column of the first row of `sql`, as text ("" when there is no row).
  std::string QueryText(const std::string& sql) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db_);
      return "";
    }
    std::string result;
    if (sqlite3_step(statement) == SQLITE_ROW) {
      const unsigned char* text = sqlite3_column_text(statement, 0);
      if (text != nullptr) result = reinterpret_cast<const char*>(text);
    }
    sqlite3_finalize(statement);
    return result;
  }

  void Exec(const std::string& sql) {
    ASSERT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sql << ": " << sqlite3_errmsg(db_);
  }

 private:
  sqlite3* db_ = nullptr;
};

// A VFS over the default one that counts the syncs of WAL files, registered as the default while
// it lives (the store opens its database with the default VFS).
class SyncCountingVfs {
 public:
  SyncCountingVfs() : base_(sqlite3_vfs_find(nullptr)), vfs_(*base_) {
    vfs_.zName = "amt-sync-counting";
    vfs_.szOsFile = static_cast<int>(sizeof(File)) + base_->szOsFile;
    vfs_.pAppData = this;
    vfs_.xOpen = &Open;
    vfs_.pNext = nullptr;
    EXPECT_EQ(sqlite3_vfs_register(&vfs_, /*makeDflt=*/1), SQLITE_OK);
  }
  SyncCountingVfs(const SyncCountingVfs&) = delete;
  SyncCountingVfs& operator=(const SyncCountingVfs&) = delete;
  ~SyncCountingVfs() {
    sqlite3_vfs_unregister(&vfs_);
    sqlite3_vfs_register(base_, /*makeDflt=*/1);
  }

  int wal_syncs() const { return wal_syncs_; }

 private:
  // Our file; the base VFS's follows it in the same allocation.
  struct File {
    sqlite3_file file;
    sqlite3_file* real;
    SyncCountingVfs* owner;
    bool wal;
  };
  static sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<File*>(f)->real; }

  static int Open(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* file, int flags,
                  int* out_flags) {
    auto* self = static_cast<SyncCountingVfs*>(vfs->pAppData);
    auto* f = reinterpret_cast<File*>(file);
    f->real = reinterpret_cast<sqlite3_file*>(f + 1);
    f->owner = self;
    f->wal = (flags & SQLITE_OPEN_WAL) != 0;
    f->real->pMethods = nullptr;
    const int rc = self->base_->xOpen(self->base_, name, f->real, flags, out_flags);
    f->file.pMethods = f->real->pMethods != nullptr ? &kMethods : nullptr;
    return rc;
  }
  static int Sync(sqlite3_file* file, int flags) {
    auto* f = reinterpret_cast<File*>(file);
    if (f->wal) ++f->owner->wal_syncs_;
    return f->real->pMethods->xSync(f->real, flags);
  }

  static constexpr sqlite3_io_methods kMethods = {
      3,
      [](sqlite3_file* f) { return Real(f)->pMethods->xClose(Real(f)); },
      [](sqlite3_file* f, void* b, int n, sqlite3_int64 o) {
        return Real(f)->pMethods->xRead(Real(f), b, n, o);
      },
      [](sqlite3_file* f, const void* b, int n, sqlite3_int64 o) {
        return Real(f)->pMethods->xWrite(Real(f), b, n, o);
      },
      [](sqlite3_file* f, sqlite3_int64 n) { return Real(f)->pMethods->xTruncate(Real(f), n); },
      &Sync,
      [](sqlite3_file* f, sqlite3_int64* n) { return Real(f)->pMethods->xFileSize(Real(f), n); },
      [](sqlite3_file* f, int l) { return Real(f)->pMethods->xLock(Real(f), l); },
      [](sqlite3_file* f, int l) { return Real(f)->pMethods->xUnlock(Real(f), l); },
      [](sqlite3_file* f, int* r) { return Real(f)->pMethods->xCheckReservedLock(Real(f), r); },
      [](sqlite3_file* f, int op, void* a) {
        // The journal pointer must be this file, so that its syncs are counted.
        if (op == SQLITE_FCNTL_JOURNAL_POINTER) return SQLITE_NOTFOUND;
        return Real(f)->pMethods->xFileControl(Real(f), op, a);
      },
      [](sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); },
      [](sqlite3_file* f) { return Real(f)->pMethods->xDeviceCharacteristics(Real(f)); },
      [](sqlite3_file* f, int p, int s, int e, void volatile** m) {
        return Real(f)->pMethods->xShmMap(Real(f), p, s, e, m);
      },
      [](sqlite3_file* f, int o, int n, int fl) {
        return Real(f)->pMethods->xShmLock(Real(f), o, n, fl);
      },
      [](sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); },
      [](sqlite3_file* f, int d) { return Real(f)->pMethods->xShmUnmap(Real(f), d); },
      [](sqlite3_file* f, sqlite3_int64 o, int n, void** p) {
        return Real(f)->pMethods->xFetch(Real(f), o, n, p);
      },
      [](sqlite3_file* f, sqlite3_int64 o, void* p) {
        return Real(f)->pMethods->xUnfetch(Real(f), o, p);
      },
  };

  sqlite3_vfs* base_;
  sqlite3_vfs vfs_;
  int wal_syncs_ = 0;
};

std::unique_ptr<Store> OpenOrDie(const std::string& dir) {
  absl::StatusOr<std::unique_ptr<Store>> store = OpenSqliteStore(dir);
  EXPECT_THAT(store, IsOk());
  return store.ok() ? std::move(store).value() : nullptr;
}

// Writes one of everything the store keeps.
void WriteOneOfEverything(Store& store) {
  ASSERT_THAT(store.PutTuningJob(TuningRecord("tune", 1)), IsOk());
  v1::TrainingJobRecord job = TrainingRecord("tune-001", "tune", 1);
  job.set_next_log_sequence(2);
  job.set_objective(0.75);
  ASSERT_THAT(store.CommitTrainingJobProgress(job, {{0, 10.0, "start"}, {1, 11.0, "acc=0.75"}},
                                              {Point("acc", 0.75, 1)}),
              IsOk());
}

void ExpectOneOfEverything(Store& store) {
  v1::TrainingJobRecord job = TrainingRecord("tune-001", "tune", 1);
  job.set_next_log_sequence(2);
  job.set_objective(0.75);
  EXPECT_THAT(store.GetTuningJob("tune").value(), EqualsProto(TuningRecord("tune", 1)));
  EXPECT_THAT(store.ListTrainingJobsForTuningJob("tune").value(), ElementsAre(EqualsProto(job)));
  EXPECT_EQ(store.ReadLogs("tune-001", 0, 10).value(),
            (std::vector<LogEntry>{{0, 10.0, "start"}, {1, 11.0, "acc=0.75"}}));
  EXPECT_THAT(store.ReadMetrics("tune-001").value(),
              ElementsAre(EqualsProto(Point("acc", 0.75, 1))));
}

TEST(SqliteStore, DataSurvivesClosingAndReopening) {
  TempDir dir;
  {
    std::unique_ptr<Store> store = OpenOrDie(dir.str());
    ASSERT_NE(store, nullptr);
    WriteOneOfEverything(*store);
  }

  std::unique_ptr<Store> reopened = OpenOrDie(dir.str());
  ASSERT_NE(reopened, nullptr);
  ExpectOneOfEverything(*reopened);
}

TEST(SqliteStore, CreationOrderContinuesAfterReopening) {
  TempDir dir;
  {
    std::unique_ptr<Store> store = OpenOrDie(dir.str());
    ASSERT_NE(store, nullptr);
    ASSERT_THAT(store->PutTuningJob(TuningRecord("b")), IsOk());
    ASSERT_THAT(store->PutTuningJob(TuningRecord("a")), IsOk());
  }
  std::unique_ptr<Store> store = OpenOrDie(dir.str());
  ASSERT_NE(store, nullptr);
  ASSERT_THAT(store->PutTuningJob(TuningRecord("0")), IsOk());
  ASSERT_THAT(store->PutTuningJob(TuningRecord("B", 3)), IsOk());

  std::vector<std::string> names;
  const absl::StatusOr<std::vector<v1::TuningJobRecord>> records = store->ListTuningJobs();
  for (const auto& record : records.value()) {
    names.push_back(record.describe().hyper_parameter_tuning_job_name());
  }
  EXPECT_THAT(names, ElementsAre("B", "a", "0"));
}

TEST(SqliteStoreDeathTest, CommittedWritesSurviveKillOfTheProcess) {
  // "fast" (fork at EXPECT_EXIT) so the child writes to the directory the parent then reads.
  GTEST_FLAG_SET(death_test_style, "fast");
  TempDir dir;
  // The child writes, then dies by SIGKILL: no destructor, no close, no checkpoint.
  EXPECT_EXIT(
      {
        absl::StatusOr<std::unique_ptr<Store>> store = OpenSqliteStore(dir.str());
        if (!store.ok()) std::_Exit(1);
        WriteOneOfEverything(**store);
        raise(SIGKILL);
      },
      ::testing::KilledBySignal(SIGKILL), "");

  std::unique_ptr<Store> reopened = OpenOrDie(dir.str());
  ASSERT_NE(reopened, nullptr);
  ExpectOneOfEverything(*reopened);
}

TEST(SqliteStore, UsesWriteAheadLogging) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenOrDie(dir.str());
  ASSERT_NE(store, nullptr);

  RawConnection other(dir.path() / kDatabaseFileName);
  EXPECT_EQ(other.QueryText("PRAGMA journal_mode"), "wal");
}

TEST(SqliteStore, WritesAreCommittedWhenTheCallReturns) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenOrDie(dir.str());
  ASSERT_NE(store, nullptr);
  RawConnection other(dir.path() / kDatabaseFileName);

  ASSERT_THAT(store->PutTuningJob(TuningRecord("tune")), IsOk());
  EXPECT_EQ(other.QueryText("SELECT name FROM tuning_jobs"), "tune");

  ASSERT_THAT(store->CommitTrainingJobProgress(TrainingRecord("job"), {{0, 1.0, "a"}},
                                               {Point("acc", 0.5, 0)}),
              IsOk());
  EXPECT_EQ(other.QueryText("SELECT count(*) FROM training_jobs"), "1");
  EXPECT_EQ(other.QueryText("SELECT message FROM logs WHERE training_job = 'job'"), "a");
  EXPECT_EQ(other.QueryText("SELECT count(*) FROM metrics"), "1");
}

TEST(SqliteStore, ABatchIsCommittedByCommitBatchAndNotBefore) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenOrDie(dir.str());
  ASSERT_NE(store, nullptr);
  RawConnection other(dir.path() / kDatabaseFileName);
  ASSERT_THAT(store->BeginBatch(), IsOk());
  ASSERT_THAT(store->PutTuningJob(TuningRecord("tune")), IsOk());
  ASSERT_THAT(store->CommitTrainingJobProgress(TrainingRecord("job"), {{0, 1.0, "a"}}, {}), IsOk());
  EXPECT_EQ(other.QueryText("SELECT count(*) FROM tuning_jobs"), "0");
  EXPECT_EQ(other.QueryText("SELECT count(*) FROM logs"), "0");
  ASSERT_THAT(store->CommitBatch(), IsOk());
  EXPECT_EQ(other.QueryText("SELECT name FROM tuning_jobs"), "tune");
  EXPECT_EQ(other.QueryText("SELECT message FROM logs WHERE training_job = 'job'"), "a");
}

// Under synchronous=FULL a batch is committed in two steps: WriteBatch makes it visible (and
// survives kill -9, below) without a sync, Sync makes it durable with one sync of the WAL, as a
// commit outside a batch does by itself. Under NORMAL nothing syncs.
TEST(SqliteStore, ABatchIsWrittenWithoutASyncAndSyncedOnceBySync) {
  TempDir dir;
  SyncCountingVfs vfs;
  std::unique_ptr<Store> store = OpenOrDie(dir.str());
  ASSERT_NE(store, nullptr);
  RawConnection other(dir.path() / kDatabaseFileName);
  ASSERT_THAT(store->PutTuningJob(TuningRecord("before")), IsOk());
  const int syncs = vfs.wal_syncs();
  EXPECT_GE(syncs, 1);                 // a commit outside a batch syncs
  ASSERT_THAT(store->Sync(), IsOk());  // nothing waits for a sync
  EXPECT_EQ(vfs.wal_syncs(), syncs);

  ASSERT_THAT(store->BeginBatch(), IsOk());
  ASSERT_THAT(store->PutTuningJob(TuningRecord("tune")), IsOk());
  ASSERT_THAT(store->CommitTrainingJobProgress(TrainingRecord("job"), {{0, 1.0, "a"}}, {}), IsOk());
  ASSERT_THAT(store->WriteBatch(), IsOk());
  EXPECT_EQ(vfs.wal_syncs(), syncs);
  EXPECT_EQ(other.QueryText("SELECT name FROM tuning_jobs WHERE name = 'tune'"), "tune");
  EXPECT_EQ(other.QueryText("SELECT message FROM logs WHERE training_job = 'job'"), "a");
  ASSERT_THAT(store->Sync(), IsOk());
  EXPECT_EQ(vfs.wal_syncs(), syncs + 1);
  ASSERT_THAT(store->Sync(), IsOk());
  EXPECT_EQ(vfs.wal_syncs(), syncs + 1);

  // A batch that changed nothing wrote nothing to sync.
  ASSERT_THAT(store->BeginBatch(), IsOk());
  ASSERT_THAT(store->WriteBatch(), IsOk());
  ASSERT_THAT(store->Sync(), IsOk());
  EXPECT_EQ(vfs.wal_syncs(), syncs + 1);

  // Back to FULL after the batch: a commit of its own syncs again.
  ASSERT_THAT(store->PutTuningJob(TuningRecord("after")), IsOk());
  EXPECT_EQ(vfs.wal_syncs(), syncs + 2);
  EXPECT_EQ(store->CommitBatch().code(), absl::StatusCode::kFailedPrecondition);  // no batch
  EXPECT_EQ(vfs.wal_syncs(), syncs + 2);
}

TEST(SqliteStore, UnderNormalSyncNothingIsSynced) {
  TempDir dir;
  SyncCountingVfs vfs;
  absl::StatusOr<std::unique_ptr<Store>> store =
      OpenSqliteStore(dir.str(), SqliteOptions{.full_sync = false});
  ASSERT_THAT(store, IsOk());
  const int created = vfs.wal_syncs();  // the new WAL's header
  ASSERT_THAT((*store)->PutTuningJob(TuningRecord("one")), IsOk());
  ASSERT_THAT((*store)->BeginBatch(), IsOk());
  ASSERT_THAT((*store)->PutTuningJob(TuningRecord("two")), IsOk());
  ASSERT_THAT((*store)->CommitBatch(), IsOk());
  EXPECT_EQ(vfs.wal_syncs(), created);
}

TEST(SqliteStoreDeathTest, ABatchWrittenButNotSyncedSurvivesKillOfTheProcess) {
  GTEST_FLAG_SET(death_test_style, "fast");
  TempDir dir;
  EXPECT_EXIT(
      {
        absl::StatusOr<std::unique_ptr<Store>> store = OpenSqliteStore(dir.str());
        if (!store.ok()) std::_Exit(1);
        if (!(*store)->BeginBatch().ok()) std::_Exit(1);
        if (!(*store)->PutTuningJob(TuningRecord("written")).ok()) std::_Exit(1);
        if (!(*store)->WriteBatch().ok()) std::_Exit(1);
        raise(SIGKILL);
      },
      ::testing::KilledBySignal(SIGKILL), "");
  std::unique_ptr<Store> reopened = OpenOrDie(dir.str());
  ASSERT_NE(reopened, nullptr);
  EXPECT_THAT(reopened->GetTuningJob("written"), IsOk());
}

TEST(SqliteStoreDeathTest, ABatchNotCommittedIsLostWhenTheProcessIsKilled) {
  GTEST_FLAG_SET(death_test_style, "fast");
  TempDir dir;
  EXPECT_EXIT(
      {
        absl::StatusOr<std::unique_ptr<Store>> store = OpenSqliteStore(dir.str());
        if (!store.ok()) std::_Exit(1);
        if (!(*store)->PutTuningJob(TuningRecord("before")).ok()) std::_Exit(1);
        if (!(*store)->BeginBatch().ok()) std::_Exit(1);
        if (!(*store)->PutTuningJob(TuningRecord("inside")).ok()) std::_Exit(1);
        raise(SIGKILL);
      },
      ::testing::KilledBySignal(SIGKILL), "");
  std::unique_ptr<Store> reopened = OpenOrDie(dir.str());
  ASSERT_NE(reopened, nullptr);
  EXPECT_THAT(reopened->GetTuningJob("before"), IsOk());
  EXPECT_THAT(reopened->GetTuningJob("inside"),
              StatusIs(absl::StatusCode::kNotFound, "tuning job 'inside' not found"));
}

TEST(SqliteStore, ReadsSeeWritesOfAnotherConnection) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenOrDie(dir.str());
  ASSERT_NE(store, nullptr);
  ASSERT_THAT(store->PutTuningJob(TuningRecord("one")), IsOk());
  ASSERT_THAT(store->ListTuningJobs(), IsOk());  // the cached statement has run once

  RawConnection other(dir.path() / kDatabaseFileName);
  other.Exec("DELETE FROM tuning_jobs");

  EXPECT_THAT(store->GetTuningJob("one"),
              StatusIs(absl::StatusCode::kNotFound, "tuning job 'one' not found"));
}

TEST(SqliteStore, NewDatabaseHasCurrentSchemaVersion) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenOrDie(dir.str());
  ASSERT_NE(store, nullptr);

  RawConnection other(dir.path() / kDatabaseFileName);
  EXPECT_EQ(other.QueryText("PRAGMA user_version"), std::to_string(kSchemaVersion));
}

TEST(SqliteStore, OpenRejectsNewerSchemaVersion) {
  TempDir dir;
  std::filesystem::create_directories(dir.path());
  {
    RawConnection other(dir.path() / kDatabaseFileName);
    other.Exec("PRAGMA user_version = 3");
  }

  EXPECT_THAT(OpenSqliteStore(dir.str()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "amt.db has schema version 3, newer than this build supports (2)"));
}

TEST(SqliteStore, UpgradesAVersion1DatabaseItsLogLinesBecomingAlgo1s) {
  TempDir dir;
  {
    std::unique_ptr<Store> store = OpenOrDie(dir.str());
    ASSERT_NE(store, nullptr);
    WriteOneOfEverything(*store);
  }
  {
    // What version 1 wrote: no host column.
    RawConnection other(dir.path() / kDatabaseFileName);
    other.Exec("ALTER TABLE logs DROP COLUMN host");
    other.Exec("PRAGMA user_version = 1");
  }
  std::unique_ptr<Store> store = OpenOrDie(dir.str());
  ASSERT_NE(store, nullptr);
  ExpectOneOfEverything(*store);
  EXPECT_EQ(store->ReadHostLogs("tune-001", "algo-1", 0, 10).value().size(), 2u);
  RawConnection other(dir.path() / kDatabaseFileName);
  EXPECT_EQ(other.QueryText("PRAGMA user_version"), "2");
}

TEST(SqliteStore, OpenCreatesMissingDataDirectories) {
  TempDir dir;
  const std::filesystem::path nested = dir.path() / "a" / "b";

  std::unique_ptr<Store> store = OpenOrDie(nested.string());
  ASSERT_NE(store, nullptr);

  EXPECT_TRUE(std::filesystem::is_regular_file(nested / "amt.db"));
}

TEST(SqliteStore, OpenFailsWhenDataDirectoryIsAFile) {
  TempDir dir;
  std::filesystem::create_directories(dir.path());
  const std::filesystem::path file = dir.path() / "not-a-dir";
  std::ofstream(file) << "x";

  absl::StatusOr<std::unique_ptr<Store>> store = OpenSqliteStore(file.string());

  EXPECT_EQ(store.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(store.status().message()),
              HasSubstr("cannot create store data directory '" + file.string() + "': "));
}

TEST(SqliteStore, OpenFailsWhenDatabaseIsNotSqlite) {
  TempDir dir;
  std::filesystem::create_directories(dir.path());
  std::ofstream(dir.path() / kDatabaseFileName) << std::string(4096, 'x');

  absl::StatusOr<std::unique_ptr<Store>> store = OpenSqliteStore(dir.str());

  EXPECT_EQ(store.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(store.status().message()), HasSubstr("file is not a database"));
}

TEST(SqliteStore, ASecondStoreOnTheSameDataDirectoryIsRefusedUntilTheFirstCloses) {
  TempDir dir;
  std::unique_ptr<Store> first = OpenOrDie(dir.str());
  EXPECT_THAT(OpenSqliteStore(dir.str()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "the data directory " + dir.str() + " is in use by another amtd (pid " +
                           std::to_string(::getpid()) + "); stop it or choose another --data-dir"));
  first.reset();
  EXPECT_THAT(OpenSqliteStore(dir.str()), IsOk());
}

TEST(SqliteStore, OpenRejectsEmptyDataDirectory) {
  EXPECT_THAT(OpenSqliteStore(""),
              StatusIs(absl::StatusCode::kInvalidArgument, "store data directory is empty"));
}

}  // namespace
}  // namespace amt::store
