// FakeStreamConnector and FakeWorkerStream: an in-memory WorkerService stream. The test pushes
// OrchestratorMessages, ends or breaks the stream, and waits for what the agent wrote.
#ifndef AMT_TESTS_UNIT_WORKER_FAKE_WORKER_STREAM_H_
#define AMT_TESTS_UNIT_WORKER_FAKE_WORKER_STREAM_H_

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "worker/worker_stream.h"

namespace amt::worker::testing {

// One stream as the test sees it. Thread-safe.
class FakeStreamState {
 public:
  void Push(amt::v1::OrchestratorMessage message) {
    std::lock_guard<std::mutex> lock(mu_);
    inbound_.push_back(std::move(message));
    cv_.notify_all();
  }

  // amtd goes away: Read returns false and Write fails from now on.
  void Break() {
    std::lock_guard<std::mutex> lock(mu_);
    ended_ = true;
    cv_.notify_all();
  }

  // amtd refuses the worker: the stream ends with `status` (what Finish returns).
  void Refuse(absl::Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = std::move(status);
    ended_ = true;
    cv_.notify_all();
  }
  absl::Status status() const {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }

  std::vector<amt::v1::WorkerMessage> written() const {
    std::lock_guard<std::mutex> lock(mu_);
    return written_;
  }

  // Waits (up to 10 s) until `done(written)` holds; returns what was written by then.
  std::vector<amt::v1::WorkerMessage> WaitForWritten(
      const std::function<bool(const std::vector<amt::v1::WorkerMessage>&)>& done) const {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(10), [&] { return done(written_); });
    return written_;
  }

  bool Read(amt::v1::OrchestratorMessage* message) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return ended_ || !inbound_.empty(); });
    if (inbound_.empty()) return false;  // as gRPC: what arrived before the end is still read
    *message = std::move(inbound_.front());
    inbound_.pop_front();
    return true;
  }

  bool Write(const amt::v1::WorkerMessage& message) {
    std::lock_guard<std::mutex> lock(mu_);
    if (ended_) return false;
    written_.push_back(message);
    cv_.notify_all();
    return true;
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::deque<amt::v1::OrchestratorMessage> inbound_;
  std::vector<amt::v1::WorkerMessage> written_;
  bool ended_ = false;
  absl::Status status_;
};

class FakeWorkerStream final : public WorkerStream {
 public:
  explicit FakeWorkerStream(std::shared_ptr<FakeStreamState> state) : state_(std::move(state)) {}
  bool Read(amt::v1::OrchestratorMessage* message) override { return state_->Read(message); }
  bool Write(const amt::v1::WorkerMessage& message) override { return state_->Write(message); }
  void Cancel() override { state_->Break(); }
  absl::Status Finish() override { return state_->status(); }

 private:
  std::shared_ptr<FakeStreamState> state_;
};

// Hands out the streams the test offers, in order; Connect blocks until one is offered or the
// connector is closed (then Unavailable).
class FakeStreamConnector final : public StreamConnector {
 public:
  std::shared_ptr<FakeStreamState> Offer() {
    auto state = std::make_shared<FakeStreamState>();
    std::lock_guard<std::mutex> lock(mu_);
    offered_.push_back(state);
    cv_.notify_all();
    return state;
  }

  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }

  absl::StatusOr<std::unique_ptr<WorkerStream>> Connect() override {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return closed_ || !offered_.empty(); });
    if (offered_.empty()) return absl::UnavailableError("closed");
    auto state = std::move(offered_.front());
    offered_.pop_front();
    return std::unique_ptr<WorkerStream>(std::make_unique<FakeWorkerStream>(std::move(state)));
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<FakeStreamState>> offered_;
  bool closed_ = false;
};

}  // namespace amt::worker::testing

#endif  // AMT_TESTS_UNIT_WORKER_FAKE_WORKER_STREAM_H_
