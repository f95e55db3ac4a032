// SageMakerApi: amtd's operations, free of any transport. A request message goes in; the response
// message or an absl::Status comes out, its code carrying SageMaker's error name
// (common/errors.h). The gRPC service (tuning_service.h) and the HTTP gateway (gateway/aws_json.h)
// both wrap it, and each translates a Status once, into its own wire shape.
//
// Every call validates the request on the calling thread (pure code, orchestrator/validation),
// then runs the orchestrator on its loop (Loop::Call) and blocks until the answer, which was
// persisted before it is returned. Thread-safe; never call it from the loop thread (it would wait
// for itself).
//
// Streams (gRPC's logs and watch, later HTTP long polls or CloudWatch Logs) are built from the
// reads below plus a ChangeFeed; the waiting itself belongs to the transport, which knows when its
// client has gone.
#ifndef AMT_ORCHESTRATOR_API_SAGEMAKER_API_H_
#define AMT_ORCHESTRATOR_API_SAGEMAKER_API_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "amt/v1/state.pb.h"
#include "amt/v1/tuning.pb.h"
#include "orchestrator/api/loop.h"

namespace amt::core {
class Orchestrator;
}  // namespace amt::core

namespace amt::api {

// Completed, Failed and Stopped end both tuning and training jobs.
bool IsTerminalStatus(std::string_view status);

// A subscription to the orchestrator's change notifications, for one stream. Created by
// SageMakerApi::Subscribe; unsubscribes on destruction (through the loop: not from the loop
// thread). Used by one thread at a time.
class ChangeFeed {
 public:
  ~ChangeFeed();
  ChangeFeed(const ChangeFeed&) = delete;
  ChangeFeed& operator=(const ChangeFeed&) = delete;

  // Waits until a change is notified or `timeout` passes, and returns whether there was a change
  // since the previous call. The first call returns true at once, so a stream sends its first
  // snapshot without waiting.
  bool Wait(std::chrono::milliseconds timeout);

  // For a feed from SubscribeTuningJob: the names of its training jobs that changed since the
  // previous call, or nullopt when a change named no training job (the tuning job's own status,
  // a restart), which asks for a whole snapshot. The first call returns nullopt. What it takes
  // no longer counts as a change for the next Wait.
  std::optional<std::vector<std::string>> TakeChangedTrainingJobs();

 private:
  friend class SageMakerApi;
  struct Flag;
  ChangeFeed(Loop& loop, core::Orchestrator& orchestrator, std::shared_ptr<Flag> flag,
             uint64_t subscription);

  Loop& loop_;
  core::Orchestrator& orchestrator_;
  std::shared_ptr<Flag> flag_;
  uint64_t subscription_;
};

// One read of a training job's log, for GetTrainingJobLogs-like streams and polls.
struct LogPage {
  // The lines from the request's start_sequence on, at most the `max_lines` asked for.
  v1::GetTrainingJobLogsResponse lines;
  // The start_sequence of the next read.
  int64_t next_sequence = 0;
  // The number of lines the job had logged when they were read (the sequence of its next line).
  int64_t log_length = 0;
  // The job's creation time (epoch seconds), which names its CloudWatch log streams.
  double creation_time = 0;
  // Its ResourceConfig.InstanceCount (at least 1): one log stream per host.
  int instance_count = 1;
  // `max_lines` lines came back: more may be there already.
  bool full = false;
  // The job had ended when the lines were read: lines are committed before the status changes,
  // so a read that is not full has everything the job will ever print.
  bool job_ended = false;
};

// A training job's metrics that have values, for CloudWatch's ListMetrics.
struct TrainingJobMetricNames {
  std::string training_job_name;
  std::vector<std::string> metric_names;  // sorted, each with at least one value
};

class SageMakerApi {
 public:
  // `loop` and `orchestrator` must outlive the API; the orchestrator is used on the loop only.
  SageMakerApi(Loop& loop, core::Orchestrator& orchestrator)
      : loop_(loop), orchestrator_(orchestrator) {}

  // SageMaker's operations (the list in operations.h). InvalidArgument (ValidationException)
  // when a request breaks SageMaker's constraints, with SageMaker's message ("1 validation error
  // detected: ..."); otherwise the orchestrator's answer: NotFound (ResourceNotFound),
  // AlreadyExists (ResourceInUse), ResourceExhausted (ResourceLimitExceeded), InvalidArgument for
  // SageMaker's other refusals, Internal when the store fails.
  absl::StatusOr<v1::CreateHyperParameterTuningJobResponse> CreateHyperParameterTuningJob(
      const v1::CreateHyperParameterTuningJobRequest& request) const;
  absl::StatusOr<v1::DescribeHyperParameterTuningJobResponse> DescribeHyperParameterTuningJob(
      const v1::DescribeHyperParameterTuningJobRequest& request) const;
  absl::StatusOr<v1::ListHyperParameterTuningJobsResponse> ListHyperParameterTuningJobs(
      const v1::ListHyperParameterTuningJobsRequest& request) const;
  absl::StatusOr<v1::ListTrainingJobsForHyperParameterTuningJobResponse>
  ListTrainingJobsForHyperParameterTuningJob(
      const v1::ListTrainingJobsForHyperParameterTuningJobRequest& request) const;
  absl::StatusOr<v1::StopHyperParameterTuningJobResponse> StopHyperParameterTuningJob(
      const v1::StopHyperParameterTuningJobRequest& request) const;
  absl::StatusOr<v1::DeleteHyperParameterTuningJobResponse> DeleteHyperParameterTuningJob(
      const v1::DeleteHyperParameterTuningJobRequest& request) const;
  absl::StatusOr<v1::CreateTrainingJobResponse> CreateTrainingJob(
      const v1::CreateTrainingJobRequest& request) const;
  absl::StatusOr<v1::DescribeTrainingJobResponse> DescribeTrainingJob(
      const v1::DescribeTrainingJobRequest& request) const;
  absl::StatusOr<v1::ListTrainingJobsResponse> ListTrainingJobs(
      const v1::ListTrainingJobsRequest& request) const;
  absl::StatusOr<v1::StopTrainingJobResponse> StopTrainingJob(
      const v1::StopTrainingJobRequest& request) const;
  absl::StatusOr<v1::DeleteTrainingJobResponse> DeleteTrainingJob(
      const v1::DeleteTrainingJobRequest& request) const;
  absl::StatusOr<v1::UpdateTrainingJobResponse> UpdateTrainingJob(
      const v1::UpdateTrainingJobRequest& request) const;
  absl::StatusOr<v1::AddTagsResponse> AddTags(const v1::AddTagsRequest& request) const;
  absl::StatusOr<v1::ListTagsResponse> ListTags(const v1::ListTagsRequest& request) const;
  absl::StatusOr<v1::DeleteTagsResponse> DeleteTags(const v1::DeleteTagsRequest& request) const;

  // amt-local's extension: the early-stopping decisions of a training job.
  absl::StatusOr<v1::ExplainTrainingJobResponse> ExplainTrainingJob(
      const v1::ExplainTrainingJobRequest& request) const;
  absl::StatusOr<v1::ExplainHyperParameterTuningJobResponse> ExplainHyperParameterTuningJob(
      const v1::ExplainHyperParameterTuningJobRequest& request) const;

  // Reads for streams. Each validates the name like the operations above (InvalidArgument) and
  // answers NotFound / InvalidArgument as Describe* does for a job that does not exist.
  // Up to `max_lines` log lines from `request.start_sequence()` on (`follow` is the caller's).
  absl::StatusOr<LogPage> ReadTrainingJobLogs(const v1::GetTrainingJobLogsRequest& request,
                                              int max_lines) const;
  // Every metric value the training job `name` captured (MetricDefinitions), in emission order.
  absl::StatusOr<std::vector<v1::MetricPoint>> ReadTrainingJobMetrics(
      const std::string& name) const;
  // Every training job that has captured a metric value, sorted by name, each with the names of
  // its metrics that have values (those of its FinalMetricDataList). One read on the loop, from
  // the orchestrator's records (no metric points are read). Internal when the store fails.
  absl::StatusOr<std::vector<TrainingJobMetricNames>> ListTrainingJobMetricNames() const;
  // The tuning job and all its training jobs, as one snapshot; with `training_jobs`, only those
  // of them (names of other jobs, or of jobs deleted meanwhile, are skipped).
  absl::StatusOr<v1::WatchHyperParameterTuningJobResponse> SnapshotHyperParameterTuningJob(
      const v1::WatchHyperParameterTuningJobRequest& request,
      const std::vector<std::string>* training_jobs = nullptr) const;
  // The training job, as DescribeTrainingJob shows it.
  absl::StatusOr<v1::DescribeTrainingJobResponse> SnapshotTrainingJob(
      const v1::WatchTrainingJobRequest& request) const;

  // Notifications of changes to `training_job` (and of changes that name no job), or of every
  // change when `training_job` is empty.
  std::unique_ptr<ChangeFeed> Subscribe(const std::string& training_job = "") const;
  // Notifications of changes to the tuning job `tuning_job` and its training jobs (and of
  // changes that name no job), which also keep which training jobs changed
  // (ChangeFeed::TakeChangedTrainingJobs).
  std::unique_ptr<ChangeFeed> SubscribeTuningJob(const std::string& tuning_job) const;

  // Which job WatchJob follows: a tuning job (its own changes and its training jobs'), or a
  // training job.
  enum class JobKind { kTuningJob, kTrainingJob };
  // Calls `on_change(ended)` on the loop thread (it must not block) now, and after every change
  // of the job `name`, with whether the job has ended (Completed, Failed or Stopped). Returns
  // what ends the subscription: non-blocking, thread-safe, to be called at least once while the
  // loop runs (later calls do nothing). Errors as Describe* for a bad name or a missing job.
  // For push transports (the web page's server-sent events), where ChangeFeed's waiting thread
  // would cost a thread per client.
  absl::StatusOr<std::function<void()>> WatchJob(JobKind kind, const std::string& name,
                                                 std::function<void(bool ended)> on_change) const;

 private:
  Loop& loop_;
  core::Orchestrator& orchestrator_;
};

}  // namespace amt::api

#endif  // AMT_ORCHESTRATOR_API_SAGEMAKER_API_H_
