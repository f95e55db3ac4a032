#ifndef AMT_COMMON_MUTEX_H_
#define AMT_COMMON_MUTEX_H_

// A mutex and condition variable for the threads that share state (the worker's agent, job
// runners and log shippers), annotated for clang's -Wthread-safety like absl::Mutex, but built on
// std::mutex and std::condition_variable.
//
// Why not absl::Mutex: Debian 12's Abseil is built without ThreadSanitizer support, so TSan cannot
// see absl::Mutex's lock and unlock (it synchronises with its own futex code) and reports every
// access it guards as a race. std::mutex is pthread_mutex_t underneath, which TSan intercepts.
// The model is LevelDB's port::Mutex/port::CondVar.
//
// Unlike absl::Mutex there is no Await(Condition): a thread that waits for a flag waits on a
// CondVar, and the thread that sets the flag signals it.

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/base/thread_annotations.h"

namespace amt {

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  // For the analysis only: documents (and lets clang assume) that the caller holds the lock.
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` for its scope.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Releases `mu`, waits for a signal (or a spurious wake-up), takes `mu` again.
  void Wait(Mutex* mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();  // still held: the caller's MutexLock unlocks it
  }

  // As Wait, for at most `timeout`. Returns true when the time ran out (as absl's
  // WaitWithTimeout); a signal or spurious wake-up returns false. A negative timeout is zero.
  template <typename Rep, typename Period>
  bool WaitFor(Mutex* mu, std::chrono::duration<Rep, Period> timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool timed_out = cv_.wait_for(lock, timeout) == std::cv_status::timeout;
    lock.release();
    return timed_out;
  }

  // Waits until `ready()` is true or `timeout` has passed; returns ready(). Every thread that
  // makes ready() true must SignalAll() (or Signal()) after changing it under `mu`.
  template <typename Rep, typename Period, typename Predicate>
  bool AwaitFor(Mutex* mu, std::chrono::duration<Rep, Period> timeout, Predicate ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool result = cv_.wait_for(lock, timeout, ready);
    lock.release();
    return result;
  }

  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace amt

#endif  // AMT_COMMON_MUTEX_H_
