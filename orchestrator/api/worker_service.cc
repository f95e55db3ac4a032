#include "orchestrator/api/worker_service.h"

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <semaphore>
#include <string>
#include <thread>
#include <utility>

#include "common/mutex.h"
#include "orchestrator/api/report_queue.h"
#include "orchestrator/core/log_ingest.h"
#include "orchestrator/core/orchestrator.h"
#include "orchestrator/metrics/metric_parser.h"

namespace amt::api {
namespace {

// Reports of one worker stream posted to the loop and not yet applied: enough to keep the loop
// busy while the handler reads the next one, few enough that an API call queued behind them
// waits for a handful of batches at most.
constexpr std::ptrdiff_t kMaxReportsInFlight = 4;

// Parsers a stream keeps (one per training job it reported on): a worker runs a few jobs at a
// time, and one that ran thousands over one stream must not hold thousands of compiled patterns.
constexpr size_t kMaxCachedParsers = 64;

// The orchestrator's handle on one worker stream: Send queues, a writer thread drains once the
// link is released (the worker's Hello taken: what was queued meanwhile keeps its order).
class StreamLink final : public core::WorkerLink {
 public:
  StreamLink(grpc::ServerContext* context,
             grpc::ServerReaderWriter<v1::OrchestratorMessage, v1::WorkerMessage>* stream)
      : context_(context),
        stream_(stream),
        same_machine_(context->peer().starts_with("unix:")),
        writer_([this] { WriteLoop(); }) {}

  ~StreamLink() override { Close(); }

  void Send(const v1::OrchestratorMessage& message) override {
    MutexLock lock(&mu_);
    if (closed_) return;
    queue_.push_back(message);
    cv_.Signal();
  }

  void ExpectLogs(const std::string& training_job_name,
                  const metrics::MetricParser& parser) override {
    MutexLock lock(&mu_);
    if (expected_.size() >= kMaxCachedParsers) expected_.clear();  // jobs that never reported
    expected_.insert_or_assign(training_job_name, parser);
  }

  // The parser ExpectLogs handed over for `training_job_name`, once; nullopt when none was (a
  // job launched before amtd restarted, or over an earlier connection).
  std::optional<metrics::MetricParser> TakeExpected(const std::string& training_job_name) {
    MutexLock lock(&mu_);
    auto it = expected_.find(training_job_name);
    if (it == expected_.end()) return std::nullopt;
    std::optional<metrics::MetricParser> parser = std::move(it->second);
    expected_.erase(it);
    return parser;
  }

  // A unix socket's peer shares this kernel (amtd's own local worker, or one started beside it
  // on its socket).
  bool SameMachine() const override { return same_machine_; }

  // Starts writing what was queued.
  void Release() {
    MutexLock lock(&mu_);
    held_ = false;
    cv_.Signal();
  }

  // Cancels the call: the handler's Read fails, the handler ends and the worker reconnects. The
  // context is only touched while the handler has not closed the link (it outlives the call).
  void Drop() override {
    MutexLock lock(&mu_);
    if (!closed_) context_->TryCancel();
  }

  // Stops the writer; later Sends are dropped (the worker re-reports on reconnect). Idempotent;
  // called by the handler thread before the stream goes away.
  void Close() {
    {
      MutexLock lock(&mu_);
      closed_ = true;
      cv_.Signal();
    }
    if (writer_.joinable()) writer_.join();
  }

 private:
  void WriteLoop() {
    while (true) {
      v1::OrchestratorMessage message;
      {
        MutexLock lock(&mu_);
        while (!closed_ && (held_ || queue_.empty())) cv_.Wait(&mu_);
        if (closed_) return;
        message = std::move(queue_.front());
        queue_.pop_front();
      }
      if (!stream_->Write(message)) return;
    }
  }

  grpc::ServerContext* context_ ABSL_PT_GUARDED_BY(mu_);
  grpc::ServerReaderWriter<v1::OrchestratorMessage, v1::WorkerMessage>* stream_;
  const bool same_machine_;
  Mutex mu_;
  CondVar cv_;
  std::deque<v1::OrchestratorMessage> queue_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, metrics::MetricParser> expected_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool held_ ABSL_GUARDED_BY(mu_) = true;  // until Release()
  std::thread writer_;
};

}  // namespace

WorkerServiceImpl::WorkerServiceImpl(Loop& loop, core::Orchestrator& orchestrator, GrpcAuth auth)
    : loop_(loop),
      orchestrator_(orchestrator),
      auth_(std::move(auth)),
      reports_(std::make_unique<ReportQueue>(
          [&loop](std::function<void()> fn) { loop.Post(std::move(fn)); }, orchestrator)) {}

WorkerServiceImpl::~WorkerServiceImpl() = default;

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
  // The worker's first message, if its Hello is taken (WorkerHello): an Ack of nothing, before
  // any StartJob the orchestrator sends it as it takes the Hello (the link holds them until
  // released).
  v1::OrchestratorMessage welcome;
  welcome.mutable_ack()->set_seq(0);
  link->Send(welcome);
  // Waits for the loop: a refused Hello (another process has this id) ends the call with why.
  const absl::Status accepted =
      loop_.Call([&] { return orchestrator_.OnWorkerConnected(first.hello(), link); });
  if (!accepted.ok()) {
    link->Close();
    return grpc::Status(grpc::StatusCode::ALREADY_EXISTS, std::string(accepted.message()));
  }
  link->Release();
  // At most kMaxReportsInFlight reports of this stream wait for the loop: past that the handler
  // stops reading, so gRPC's flow control holds a flooding worker back instead of the loop's
  // queue growing without bound in front of every API call.
  auto window = std::make_shared<std::counting_semaphore<>>(kMaxReportsInFlight);
  // Log lines are matched against the job's MetricDefinitions here, on this stream's thread, not
  // on the loop: a flood of long lines against many regexes costs this worker's stream, not
  // every API call queued behind it (the loop takes the values as they are, ParsedLogs).
  std::map<std::string, std::optional<metrics::MetricParser>> parsers;  // by training job
  auto message = std::make_shared<v1::WorkerMessage>();
  while (stream->Read(message.get())) {
    std::shared_ptr<core::ParsedLogs> parsed;
    if (message->has_logs()) {
      const std::string& job = message->logs().training_job_name();
      auto it = parsers.find(job);
      if (it == parsers.end()) {
        if (parsers.size() >= kMaxCachedParsers) parsers.clear();
        std::optional<metrics::MetricParser> parser = link->TakeExpected(job);
        if (!parser.has_value()) {
          parser = loop_.Call([&] { return orchestrator_.MetricParserOf(job); });
        }
        it = parsers.emplace(job, std::move(parser)).first;
      }
      if (it->second.has_value()) {
        parsed = std::make_shared<core::ParsedLogs>(core::ParsedLogs{*it->second, {}});
        parsed->values.reserve(message->logs().lines_size());
        for (const auto& line : message->logs().lines()) {
          parsed->values.push_back(it->second->Parse(line.text()));
        }
      }
    }
    window->acquire();
    reports_->Push({worker_id, link, message, parsed, [window] { window->release(); }});
    message = std::make_shared<v1::WorkerMessage>();
  }
  link->Close();
  reports_->Flush();  // a LogBatch that waited for a JobExited that never came
  // The orchestrator may still hold the link; it only compares its address from now on.
  loop_.Call([&] { orchestrator_.OnWorkerDisconnected(worker_id, link.get()); });
  return grpc::Status::OK;
}

}  // namespace amt::api
