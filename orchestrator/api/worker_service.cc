#include "orchestrator/api/worker_service.h"

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <semaphore>
#include <thread>

namespace amt::api {
namespace {

// Reports of one worker stream posted to the loop and not yet applied: enough to keep the loop
// busy while the handler reads the next one, few enough that an API call queued behind them
// waits for a handful of batches at most.
constexpr std::ptrdiff_t kMaxReportsInFlight = 4;

// The orchestrator's handle on one worker stream: Send queues, a writer thread drains.
class StreamLink final : public core::WorkerLink {
 public:
  StreamLink(grpc::ServerContext* context,
             grpc::ServerReaderWriter<v1::OrchestratorMessage, v1::WorkerMessage>* stream)
      : context_(context), stream_(stream), writer_([this] { WriteLoop(); }) {}

  ~StreamLink() override { Close(); }

  void Send(const v1::OrchestratorMessage& message) override {
    std::lock_guard lock(mu_);
    if (closed_) return;
    queue_.push_back(message);
    cv_.notify_one();
  }

  // Cancels the call: the handler's Read fails, the handler ends and the worker reconnects. The
  // context is only touched while the handler has not closed the link (it outlives the call).
  void Drop() override {
    std::lock_guard lock(mu_);
    if (!closed_) context_->TryCancel();
  }

  // Stops the writer; later Sends are dropped (the worker re-reports on reconnect). Idempotent;
  // called by the handler thread before the stream goes away.
  void Close() {
    {
      std::lock_guard lock(mu_);
      closed_ = true;
      cv_.notify_one();
    }
    if (writer_.joinable()) writer_.join();
  }

 private:
  void WriteLoop() {
    while (true) {
      v1::OrchestratorMessage message;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return closed_ || !queue_.empty(); });
        if (closed_) return;
        message = std::move(queue_.front());
        queue_.pop_front();
      }
      if (!stream_->Write(message)) return;
    }
  }

  grpc::ServerContext* context_;
  grpc::ServerReaderWriter<v1::OrchestratorMessage, v1::WorkerMessage>* stream_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<v1::OrchestratorMessage> queue_;
  bool closed_ = false;
  std::thread writer_;
};

}  // namespace

grpc::Status WorkerServiceImpl::Connect(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<v1::OrchestratorMessage, v1::WorkerMessage>* stream) {
  if (grpc::Status refused = auth_.CheckWorker(*context); !refused.ok()) return refused;
  v1::WorkerMessage first;
  if (!stream->Read(&first)) return grpc::Status::OK;
  if (!first.has_hello()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "the first message must be WorkerHello");
  }
  const std::string worker_id = first.hello().worker_id();
  auto link = std::make_shared<StreamLink>(context, stream);
  loop_.Post([this, hello = first.hello(), link] { orchestrator_.OnWorkerConnected(hello, link); });
  // At most kMaxReportsInFlight reports of this stream wait for the loop: past that the handler
  // stops reading, so gRPC's flow control holds a flooding worker back instead of the loop's
  // queue growing without bound in front of every API call.
  auto window = std::make_shared<std::counting_semaphore<>>(kMaxReportsInFlight);
  auto message = std::make_shared<v1::WorkerMessage>();
  while (stream->Read(message.get())) {
    window->acquire();
    // `link` is captured so its address, the connection's identity, stays unique meanwhile.
    loop_.Post([this, worker_id, link, message, window] {
      orchestrator_.OnWorkerReport(worker_id, link.get(), *message);
      window->release();
    });
    message = std::make_shared<v1::WorkerMessage>();
  }
  link->Close();
  // The orchestrator may still hold the link; it only compares its address from now on.
  loop_.Call([&] { orchestrator_.OnWorkerDisconnected(worker_id, link.get()); });
  return grpc::Status::OK;
}

}  // namespace amt::api
