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

void LogShipper::Add(OutputStream stream, const std::string& line, const std::string& host) {
  amt::v1::LogRecord record;
  if (!host.empty()) record.set_host(host);
  record.set_timestamp(clock_.Now());
  record.set_text(SageMakerLogLine(line));
  record.set_stderr(stream == OutputStream::kStderr);
  MutexLock lock(&mu_);
  if (closing_) return;
  pending_.push_back({std::chrono::steady_clock::now(), std::move(record)});
  if (pending_.size() == 1 || pending_.size() >= options_.max_lines) cv_.Signal();
}

void LogShipper::Start() {
  thread_ = std::thread([this] { Run(); });
}

void LogShipper::Close(bool exit_follows) {
  if (closed_) return;
  closed_ = true;
  {
    MutexLock lock(&mu_);
    closing_ = true;
    exit_follows_ = exit_follows;
    cv_.Signal();
  }
  if (thread_.joinable()) {
    thread_.join();  // Run() sends what is left before it returns
    return;
  }
  mu_.Lock();
  while (!pending_.empty()) {
    auto batch = TakeBatch();
    mu_.Unlock();
    send_(std::move(batch));
    mu_.Lock();
  }
  mu_.Unlock();
}

amt::v1::LogBatch LogShipper::TakeBatch() {
  amt::v1::LogBatch batch;
  batch.set_training_job_name(training_job_name_);
  batch.set_attempt(attempt_);
  batch.set_first_line(batched_lines_);
  while (!pending_.empty() && static_cast<size_t>(batch.lines_size()) < options_.max_lines) {
    *batch.add_lines() = std::move(pending_.front().record);
    pending_.pop_front();
  }
  batched_lines_ += batch.lines_size();
  if (closing_ && exit_follows_ && pending_.empty()) batch.set_exit_follows(true);
  return batch;
}

void LogShipper::Run() {
  mu_.Lock();
  while (true) {
    const bool full = pending_.size() >= options_.max_lines;
    const bool due = !pending_.empty() && std::chrono::steady_clock::now() >=
                                              pending_.front().queued + options_.max_delay;
    if (full || due || (closing_ && !pending_.empty())) {
      auto batch = TakeBatch();
      mu_.Unlock();  // send_ writes to the stream: never under mu_, so Add() does not wait on it
      send_(std::move(batch));
      mu_.Lock();
      continue;
    }
    if (closing_) break;
    if (pending_.empty()) {
      cv_.Wait(&mu_);
    } else {
      const auto due = pending_.front().queued + options_.max_delay;
      cv_.WaitFor(&mu_, due - std::chrono::steady_clock::now());
    }
  }
  mu_.Unlock();
}

}  // namespace amt::worker
