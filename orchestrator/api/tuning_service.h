// TuningServiceImpl: amt.v1.TuningService over gRPC. Decodes and validates on the gRPC thread
// (pure code), then calls the orchestrator on its loop. absl::Status codes become gRPC codes of the
// same number, with SageMaker's message; clients map them back to SageMaker error names
// (common/errors.h).
#ifndef AMT_ORCHESTRATOR_API_TUNING_SERVICE_H_
#define AMT_ORCHESTRATOR_API_TUNING_SERVICE_H_

#include <atomic>

#include "amt/v1/tuning.grpc.pb.h"
#include "orchestrator/api/loop.h"
#include "orchestrator/core/orchestrator.h"

namespace amt::api {

grpc::Status ToGrpc(const absl::Status& status);

class TuningServiceImpl final : public v1::TuningService::Service {
 public:
  // `loop` and `orchestrator` must outlive the service; the orchestrator is used on the loop only.
  TuningServiceImpl(Loop& loop, core::Orchestrator& orchestrator)
      : loop_(loop), orchestrator_(orchestrator) {}

  // Ends open streams (watch, logs --follow) so the server can shut down. Thread-safe.
  void Shutdown() { shutting_down_ = true; }

  grpc::Status CreateHyperParameterTuningJob(grpc::ServerContext*,
                                             const v1::CreateHyperParameterTuningJobRequest*,
                                             v1::CreateHyperParameterTuningJobResponse*) override;
  grpc::Status DescribeHyperParameterTuningJob(
      grpc::ServerContext*, const v1::DescribeHyperParameterTuningJobRequest*,
      v1::DescribeHyperParameterTuningJobResponse*) override;
  grpc::Status ListHyperParameterTuningJobs(grpc::ServerContext*,
                                            const v1::ListHyperParameterTuningJobsRequest*,
                                            v1::ListHyperParameterTuningJobsResponse*) override;
  grpc::Status ListTrainingJobsForHyperParameterTuningJob(
      grpc::ServerContext*, const v1::ListTrainingJobsForHyperParameterTuningJobRequest*,
      v1::ListTrainingJobsForHyperParameterTuningJobResponse*) override;
  grpc::Status StopHyperParameterTuningJob(grpc::ServerContext*,
                                           const v1::StopHyperParameterTuningJobRequest*,
                                           v1::StopHyperParameterTuningJobResponse*) override;
  grpc::Status CreateTrainingJob(grpc::ServerContext*, const v1::CreateTrainingJobRequest*,
                                 v1::CreateTrainingJobResponse*) override;
  grpc::Status DescribeTrainingJob(grpc::ServerContext*, const v1::DescribeTrainingJobRequest*,
                                   v1::DescribeTrainingJobResponse*) override;
  grpc::Status ListTrainingJobs(grpc::ServerContext*, const v1::ListTrainingJobsRequest*,
                                v1::ListTrainingJobsResponse*) override;
  grpc::Status StopTrainingJob(grpc::ServerContext*, const v1::StopTrainingJobRequest*,
                               v1::StopTrainingJobResponse*) override;
  grpc::Status GetTrainingJobLogs(grpc::ServerContext*, const v1::GetTrainingJobLogsRequest*,
                                  grpc::ServerWriter<v1::GetTrainingJobLogsResponse>*) override;
  grpc::Status WatchHyperParameterTuningJob(
      grpc::ServerContext*, const v1::WatchHyperParameterTuningJobRequest*,
      grpc::ServerWriter<v1::WatchHyperParameterTuningJobResponse>*) override;
  grpc::Status WatchTrainingJob(grpc::ServerContext*, const v1::WatchTrainingJobRequest*,
                                grpc::ServerWriter<v1::DescribeTrainingJobResponse>*) override;
  grpc::Status ExplainTrainingJob(grpc::ServerContext*, const v1::ExplainTrainingJobRequest*,
                                  v1::ExplainTrainingJobResponse*) override;

 private:
  template <typename Snapshot, typename Get, typename Comparable, typename IsTerminal>
  grpc::Status Watch(grpc::ServerContext* context, grpc::ServerWriter<Snapshot>* writer, Get get,
                     Comparable comparable, IsTerminal terminal);

  Loop& loop_;
  core::Orchestrator& orchestrator_;
  std::atomic<bool> shutting_down_{false};
};

}  // namespace amt::api

#endif  // AMT_ORCHESTRATOR_API_TUNING_SERVICE_H_
