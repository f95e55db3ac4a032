// GrpcConnector: the StreamConnector that opens WorkerService.Connect on amtd over an insecure
// gRPC channel. A thin adapter: all behaviour lives in Agent.
#ifndef AMT_WORKER_GRPC_CONNECTOR_H_
#define AMT_WORKER_GRPC_CONNECTOR_H_

#include <chrono>
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
  explicit GrpcConnector(const std::string& target,
                         std::chrono::milliseconds connect_timeout = std::chrono::seconds(1));

  // Unavailable when the channel is not ready within connect_timeout.
  absl::StatusOr<std::unique_ptr<WorkerStream>> Connect() override;

 private:
  const std::string target_;
  const std::chrono::milliseconds connect_timeout_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<amt::v1::WorkerService::Stub> stub_;
};

}  // namespace amt::worker

#endif  // AMT_WORKER_GRPC_CONNECTOR_H_
