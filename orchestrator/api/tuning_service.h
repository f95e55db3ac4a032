// TuningServiceImpl: amt.v1.TuningService over gRPC, a thin wrapper of SageMakerApi. Each unary
// RPC (the lists in operations.h) calls the SageMakerApi method of the same name; streams (logs,
// watch) loop over its reads and its ChangeFeed. An absl::Status becomes a gRPC status once, here:
// the same code number with SageMaker's message; clients map it back to SageMaker's error name
// (common/errors.h). Runs on gRPC's handler threads; thread-safe.
#ifndef AMT_ORCHESTRATOR_API_TUNING_SERVICE_H_
#define AMT_ORCHESTRATOR_API_TUNING_SERVICE_H_

#include <atomic>
#include <memory>

#include "amt/v1/tuning.grpc.pb.h"
#include "orchestrator/api/grpc_auth.h"
#include "orchestrator/api/sagemaker_api.h"
#include "proto/amt/v1/operations.h"

namespace amt::api {

// The gRPC status for `status`: absl and gRPC codes have the same numbers.
grpc::Status ToGrpc(const absl::Status& status);

class TuningServiceImpl final : public v1::TuningService::Service {
 public:
  // `api` must outlive the service. Every call is first checked by `auth`
  // (UNAUTHENTICATED when refused).
  explicit TuningServiceImpl(const SageMakerApi& api, GrpcAuth auth = GrpcAuth())
      : api_(api), auth_(std::move(auth)) {}

  // Ends open streams (watch, logs --follow) so the server can shut down. Thread-safe.
  void Shutdown() { shutting_down_ = true; }

#define AMT_DECLARE_UNARY_RPC(Op)                                               \
  grpc::Status Op(grpc::ServerContext* context, const v1::Op##Request* request, \
                  v1::Op##Response* response) override;
  AMT_UNARY_OPERATIONS(AMT_DECLARE_UNARY_RPC)
#undef AMT_DECLARE_UNARY_RPC

  grpc::Status GetTrainingJobLogs(grpc::ServerContext*, const v1::GetTrainingJobLogsRequest*,
                                  grpc::ServerWriter<v1::GetTrainingJobLogsResponse>*) override;
  grpc::Status WatchHyperParameterTuningJob(
      grpc::ServerContext*, const v1::WatchHyperParameterTuningJobRequest*,
      grpc::ServerWriter<v1::WatchHyperParameterTuningJobResponse>*) override;
  grpc::Status WatchTrainingJob(grpc::ServerContext*, const v1::WatchTrainingJobRequest*,
                                grpc::ServerWriter<v1::DescribeTrainingJobResponse>*) override;

 private:
  template <typename Snapshot, typename Get, typename Comparable, typename IsTerminal>
  grpc::Status Watch(grpc::ServerContext* context, grpc::ServerWriter<Snapshot>* writer,
                     std::unique_ptr<ChangeFeed> changes, Get get, Comparable comparable,
                     IsTerminal terminal);
  // Whether a stream should end: its client went away, or the server is shutting down.
  bool Ending(grpc::ServerContext* context) const {
    return context->IsCancelled() || shutting_down_;
  }

  const SageMakerApi& api_;
  const GrpcAuth auth_;
  std::atomic<bool> shutting_down_{false};
};

}  // namespace amt::api

#endif  // AMT_ORCHESTRATOR_API_TUNING_SERVICE_H_
