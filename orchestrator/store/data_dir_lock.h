// DataDirLock: the exclusive lock an amtd holds on its data directory, so that a second amtd on
// the same directory refuses to start instead of diverging from the first. It is an flock(2) on
// <dir>/amtd.lock, released by the kernel when the holder exits in any way (kill -9 included), so
// a crashed amtd never leaves a stale lock behind. The file holds the holder's pid, for the
// message a second amtd prints. The descriptor is close-on-exec: trainers and the local worker
// never inherit it.
#ifndef AMT_ORCHESTRATOR_STORE_DATA_DIR_LOCK_H_
#define AMT_ORCHESTRATOR_STORE_DATA_DIR_LOCK_H_

#include <string>

#include "absl/status/statusor.h"

namespace amt::store {

class DataDirLock {
 public:
  // Takes the lock of `data_dir` (which must exist). FailedPrecondition "the data directory D is
  // in use by another amtd (pid N); stop it or choose another --data-dir" when another holder
  // has it; Internal when the lock file cannot be opened.
  static absl::StatusOr<DataDirLock> Acquire(const std::string& data_dir);

  DataDirLock(DataDirLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  DataDirLock& operator=(DataDirLock&& other) noexcept;
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;
  // Releases the lock.
  ~DataDirLock();

 private:
  explicit DataDirLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// The lock file's name under the data directory.
inline constexpr char kLockFileName[] = "amtd.lock";

}  // namespace amt::store

#endif  // AMT_ORCHESTRATOR_STORE_DATA_DIR_LOCK_H_
