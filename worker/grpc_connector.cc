#include "worker/grpc_connector.h"

#include <algorithm>
#include <utility>

#include "common/grpc_credential.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace amt::worker {
namespace {

class GrpcWorkerStream final : public WorkerStream {
 public:
  GrpcWorkerStream(amt::v1::WorkerService::Stub& stub, const std::string& credential)
      : stream_(Open(stub, context_, credential)) {}

  ~GrpcWorkerStream() override {
    if (finished_) return;
    // Finish() needs the incoming side drained; after TryCancel that takes no time.
    context_.TryCancel();
    amt::v1::OrchestratorMessage ignored;
    while (stream_->Read(&ignored)) {
    }
    (void)stream_->Finish();
  }

  bool Read(amt::v1::OrchestratorMessage* message) override { return stream_->Read(message); }

  bool Write(const amt::v1::WorkerMessage& message) override { return stream_->Write(message); }

  void Cancel() override { context_.TryCancel(); }

  absl::Status Finish() override {
    finished_ = true;
    const grpc::Status status = stream_->Finish();
    switch (status.error_code()) {
      case grpc::StatusCode::ALREADY_EXISTS:
      case grpc::StatusCode::UNAUTHENTICATED:
      case grpc::StatusCode::PERMISSION_DENIED:
      case grpc::StatusCode::INVALID_ARGUMENT:
      case grpc::StatusCode::FAILED_PRECONDITION:
        return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                            status.error_message());
      default:
        return absl::OkStatus();  // ended, lost or cancelled: not a refusal
    }
  }

 private:
  static std::unique_ptr<
      grpc::ClientReaderWriter<amt::v1::WorkerMessage, amt::v1::OrchestratorMessage>>
  Open(amt::v1::WorkerService::Stub& stub, grpc::ClientContext& context,
       const std::string& credential) {
    if (!credential.empty()) context.AddMetadata(auth::kGrpcCredentialMetadata, credential);
    return stub.Connect(&context);
  }

  grpc::ClientContext context_;
  bool finished_ = false;  // Finish() was called: the destructor must not call it again
  std::unique_ptr<grpc::ClientReaderWriter<amt::v1::WorkerMessage, amt::v1::OrchestratorMessage>>
      stream_;
};

}  // namespace

GrpcConnector::GrpcConnector(const std::string& target, std::chrono::milliseconds connect_timeout,
                             std::function<std::string()> credential)
    : target_(target), connect_timeout_(connect_timeout), credential_(std::move(credential)) {
  grpc::ChannelArguments args;
  // gRPC's default reconnect backoff grows to 120 s; a worker must notice a restarted amtd fast.
  const int timeout_ms = static_cast<int>(connect_timeout.count());
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, std::min(100, timeout_ms));
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, std::min(100, timeout_ms));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, timeout_ms);
  channel_ = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
  stub_ = amt::v1::WorkerService::NewStub(channel_);
}

absl::StatusOr<std::unique_ptr<WorkerStream>> GrpcConnector::Connect() {
  // Reports buffered while disconnected go out right after the Hello, so only open the stream on
  // a ready channel (a stream on a dead channel would swallow them).
  if (!channel_->WaitForConnected(std::chrono::system_clock::now() + connect_timeout_)) {
    return absl::UnavailableError("amtd at " + target_ + " is not reachable");
  }
  return std::unique_ptr<WorkerStream>(
      std::make_unique<GrpcWorkerStream>(*stub_, credential_ ? credential_() : ""));
}

}  // namespace amt::worker
