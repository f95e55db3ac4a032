// LogShipper: turns one job's output lines into LogBatch messages. A line is cleaned the way
// SageMaker shows it (SageMakerLogLine, common/log_line.h: tab -> "#011", '\r' removed, invalid
// UTF-8 replaced), timestamped with the injected Clock, and
// batched: a batch goes out when it holds `max_lines` lines or when its oldest line has waited
// `max_delay` (a wall-clock wait on the shipper's own thread: the worker is the real-process edge).
#ifndef AMT_WORKER_LOG_SHIPPER_H_
#define AMT_WORKER_LOG_SHIPPER_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "amt/v1/worker.pb.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "worker/process_launcher.h"

namespace amt::worker {

struct LogShipperOptions {
  size_t max_lines = 64;
  std::chrono::milliseconds max_delay{50};
};

class LogShipper {
 public:
  using SendFn = std::function<void(amt::v1::LogBatch batch)>;

  // `send` is called on the shipper's thread (or in Close() when Start() never ran), one batch
  // at a time, in line order. `clock` must outlive the shipper.
  LogShipper(std::string training_job_name, int attempt, const Clock& clock,
             LogShipperOptions options, SendFn send);
  ~LogShipper();  // Close()s.

  LogShipper(const LogShipper&) = delete;
  LogShipper& operator=(const LogShipper&) = delete;

  // Queues one raw output line of `host` (LogRecord.host; empty for a one-host job).
  // Thread-safe. Lines added after Close() are dropped.
  void Add(OutputStream stream, const std::string& line, const std::string& host = {})
      ABSL_LOCKS_EXCLUDED(mu_);

  // Starts sending (lines queued before wait, so no batch precedes JobStarted). Call once.
  void Start();

  // Sends every queued line, stops the shipper's thread and returns once all was sent.
  // Idempotent; call from one thread. `exit_follows`: the caller reports the job's exit right
  // after, so the last batch sent from now on says so (LogBatch.exit_follows).
  void Close(bool exit_follows = false) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Run() ABSL_LOCKS_EXCLUDED(mu_);
  // Removes up to max_lines queued lines into a batch.
  amt::v1::LogBatch TakeBatch() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string training_job_name_;
  const int attempt_;
  const Clock& clock_;
  const LogShipperOptions options_;
  const SendFn send_;

  Mutex mu_;
  CondVar cv_;  // wakes the shipper's thread: a first or max_lines-th line, or Close()
  struct Pending {
    std::chrono::steady_clock::time_point queued;
    amt::v1::LogRecord record;
  };
  std::deque<Pending> pending_ ABSL_GUARDED_BY(mu_);
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool exit_follows_ ABSL_GUARDED_BY(mu_) = false;  // Close(true)
  int64_t batched_lines_ ABSL_GUARDED_BY(mu_) =
      0;                 // lines taken into batches (LogBatch.first_line)
  bool closed_ = false;  // touched only by Close()
  std::thread thread_;
};

}  // namespace amt::worker

#endif  // AMT_WORKER_LOG_SHIPPER_H_
