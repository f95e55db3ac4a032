// WorkerServiceImpl: amt.v1.WorkerService, the stream each amt-worker keeps open. The handler
// thread reads the worker's reports and queues them for the orchestrator loop (a few at a time: a
// flooding worker is held back by gRPC flow control, not queued in front of API calls); the loop
// applies what is queued, of every worker, as one group commit (report_queue.h). A writer thread
// per connection sends assignments, so the loop never blocks on a slow worker.
#ifndef AMT_ORCHESTRATOR_API_WORKER_SERVICE_H_
#define AMT_ORCHESTRATOR_API_WORKER_SERVICE_H_

#include <memory>

#include "amt/v1/worker.grpc.pb.h"
#include "orchestrator/api/grpc_auth.h"
#include "orchestrator/api/loop.h"

namespace amt::core {
class Orchestrator;
}  // namespace amt::core

namespace amt::api {

class ReportQueue;

class WorkerServiceImpl final : public v1::WorkerService::Service {
 public:
  // A worker is refused (UNAUTHENTICATED, PERMISSION_DENIED) unless `auth` lets it register.
  WorkerServiceImpl(Loop& loop, core::Orchestrator& orchestrator, GrpcAuth auth = GrpcAuth());
  ~WorkerServiceImpl() override;

  grpc::Status Connect(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::OrchestratorMessage, v1::WorkerMessage>* stream) override;

 private:
  Loop& loop_;
  core::Orchestrator& orchestrator_;
  const GrpcAuth auth_;
  const std::unique_ptr<ReportQueue> reports_;  // shared by every stream
};

}  // namespace amt::api

#endif  // AMT_ORCHESTRATOR_API_WORKER_SERVICE_H_
