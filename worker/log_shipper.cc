#include "worker/log_shipper.h"

#include <utility>

#include "common/log_line.h"

namespace amt::worker {

LogShipper::LogShipper(std::string training_job_name, int attempt, const Clock& clock,
                       LogShipperOptions options, SendFn send)
    : training_job_name_(std::move(training_job_name)),
      attempt_(attempt),
      clock_(clock),
      options_(options),
      send_(std::move(send)) {}

LogShipper::~LogShipper() { Close(); }

void LogShipper::Add(OutputStream stream, const std::string& line) {
  amt::v1::LogRecord record;
  record.set_timestamp(clock_.Now());
  record.set_text(SageMakerLogLine(line));
  record.set_stderr(stream == OutputStream::kStderr);
  std::lock_guard<std::mutex> lock(mu_);
  if (closing_) return;
  pending_.push_back({std::chrono::steady_clock::now(), std::move(record)});
  if (pending_.size() == 1 || pending_.size() >= options_.max_lines) cv_.notify_all();
}

void LogShipper::Start() {
  thread_ = std::thread([this] { Run(); });
}

void LogShipper::Close() {
  if (closed_) return;
  closed_ = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    thread_.join();  // Run() sends what is left before it returns
    return;
  }
  std::unique_lock<std::mutex> lock(mu_);
  while (!pending_.empty()) {
    auto batch = TakeBatch();
    lock.unlock();
    send_(std::move(batch));
    lock.lock();
  }
}

amt::v1::LogBatch LogShipper::TakeBatch() {
  amt::v1::LogBatch batch;
  batch.set_training_job_name(training_job_name_);
  batch.set_attempt(attempt_);
  while (!pending_.empty() && static_cast<size_t>(batch.lines_size()) < options_.max_lines) {
    *batch.add_lines() = std::move(pending_.front().record);
    pending_.pop_front();
  }
  return batch;
}

void LogShipper::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    const bool full = pending_.size() >= options_.max_lines;
    const bool due = !pending_.empty() && std::chrono::steady_clock::now() >=
                                              pending_.front().queued + options_.max_delay;
    if (full || due || (closing_ && !pending_.empty())) {
      auto batch = TakeBatch();
      lock.unlock();
      send_(std::move(batch));
      lock.lock();
      continue;
    }
    if (closing_) return;
    if (pending_.empty()) {
      cv_.wait(lock);
    } else {
      cv_.wait_until(lock, pending_.front().queued + options_.max_delay);
    }
  }
}

}  // namespace amt::worker
