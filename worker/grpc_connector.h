// GrpcConnector: the StreamConnector that opens WorkerService.Connect on amtd over an insecure
// gRPC channel. A thin adapter: all behaviour lives in Agent.
#ifndef AMT_WORKER_GRPC_CONNECTOR_H_
#define AMT_WORKER_GRPC_CONNECTOR_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "amt/v1/worker.grpc.pb.h"
#include "grpcpp/channel.h"
#include "worker/worker_stream.h"

namespace amt::worker {

class GrpcConnector final : public StreamConnector {
 public:
  // `target` is HOST:PORT. The channel's own reconnect backoff is capped at `connect_timeout`,
  // which is also how long Connect() waits for the channel to be ready.
  // `credential`, when set, gives the x-amt-credential metadata (common/grpc_credential.h) of
  // each new stream: amtd started with --credentials refuses a worker without one.
  explicit GrpcConnector(const std::string& target,
                         std::chrono::milliseconds connect_timeout = std::chrono::seconds(1),
                         std::function<std::string()> credential = nullptr);

  // Unavailable when the channel is not ready within connect_timeout.
  absl::StatusOr<std::unique_ptr<WorkerStream>> Connect() override;

 private:
  const std::string target_;
  const std::chrono::milliseconds connect_timeout_;
  const std::function<std::string()> credential_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<amt::v1::WorkerService::Stub> stub_;
};

}  // namespace amt::worker

#endif  // AMT_WORKER_GRPC_CONNECTOR_H_
