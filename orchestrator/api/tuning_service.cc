#include "orchestrator/api/tuning_service.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace amt::api {
namespace {

// How long a stream waits for a change before it looks again at cancellation and shutdown.
constexpr std::chrono::milliseconds kStreamPoll(100);
// Log lines per message of GetTrainingJobLogs.
constexpr int kLogPage = 1000;

// Sends the API's answer, or its error with SageMaker's message.
template <typename T>
grpc::Status Reply(absl::StatusOr<T> result, T* response) {
  if (!result.ok()) return ToGrpc(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}

}  // namespace

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

#define AMT_DEFINE_UNARY_RPC(Op)                                                                   \
  grpc::Status TuningServiceImpl::Op(grpc::ServerContext* context, const v1::Op##Request* request, \
                                     v1::Op##Response* response) {                                 \
    if (grpc::Status refused = auth_.CheckClient(*context); !refused.ok()) {                       \
      return refused;                                                                              \
    }                                                                                              \
    return Reply(api_.Op(*request), response);                                                     \
  }
AMT_UNARY_OPERATIONS(AMT_DEFINE_UNARY_RPC)
#undef AMT_DEFINE_UNARY_RPC

grpc::Status TuningServiceImpl::GetTrainingJobLogs(
    grpc::ServerContext* context, const v1::GetTrainingJobLogsRequest* request,
    grpc::ServerWriter<v1::GetTrainingJobLogsResponse>* writer) {
  if (grpc::Status refused = auth_.CheckClient(*context); !refused.ok()) return refused;
  // Subscribe before the first read, so no change between the two is missed.
  std::unique_ptr<ChangeFeed> changes;
  if (request->follow()) changes = api_.Subscribe(request->training_job_name());
  v1::GetTrainingJobLogsRequest read = *request;
  while (true) {
    if (changes != nullptr && !changes->Wait(kStreamPoll)) {
      if (Ending(context)) return grpc::Status::OK;
      continue;
    }
    if (Ending(context)) return grpc::Status::OK;
    // Read everything available, then end if the job had ended by the first read of the round.
    bool ended = false;
    while (true) {
      absl::StatusOr<LogPage> page = api_.ReadTrainingJobLogs(read, kLogPage);
      if (!page.ok()) return ToGrpc(page.status());
      ended = page->job_ended;
      read.set_start_sequence(page->next_sequence);
      if (page->lines.lines_size() > 0 && !writer->Write(page->lines)) return grpc::Status::OK;
      if (!page->full) break;
    }
    if (!request->follow() || ended) return grpc::Status::OK;
  }
}

// Sends `get(*changes)` now and after every change, skipping snapshots equal (after `comparable`)
// to the last one sent, until `terminal(snapshot)`, cancellation or shutdown.
template <typename Snapshot, typename Get, typename Comparable, typename IsTerminal>
grpc::Status TuningServiceImpl::Watch(grpc::ServerContext* context,
                                      grpc::ServerWriter<Snapshot>* writer,
                                      std::unique_ptr<ChangeFeed> changes, Get get,
                                      Comparable comparable, IsTerminal terminal) {
  std::string last_sent;
  while (true) {
    const bool changed = changes->Wait(kStreamPoll);
    if (Ending(context)) return grpc::Status::OK;
    if (!changed) continue;
    absl::StatusOr<Snapshot> snapshot = get(*changes);
    if (!snapshot.ok()) return ToGrpc(snapshot.status());
    std::string bytes;
    comparable(*snapshot).SerializeToString(&bytes);
    if (bytes != last_sent) {
      last_sent = std::move(bytes);
      if (!writer->Write(*snapshot)) return grpc::Status::OK;
    }
    if (terminal(*snapshot)) return grpc::Status::OK;
  }
}

grpc::Status TuningServiceImpl::WatchHyperParameterTuningJob(
    grpc::ServerContext* context, const v1::WatchHyperParameterTuningJobRequest* request,
    grpc::ServerWriter<v1::WatchHyperParameterTuningJobResponse>* writer) {
  if (grpc::Status refused = auth_.CheckClient(*context); !refused.ok()) return refused;
  const bool changes_only = request->changes_only();
  // Changes only: the feed keeps which training jobs changed, and each message reads just those
  // (a whole snapshot first, and after a change that names no training job).
  return Watch(
      context, writer,
      changes_only ? api_.SubscribeTuningJob(request->hyper_parameter_tuning_job_name())
                   : api_.Subscribe(),
      [&](ChangeFeed& feed) {
        if (!changes_only) return api_.SnapshotHyperParameterTuningJob(*request);
        const std::optional<std::vector<std::string>> changed = feed.TakeChangedTrainingJobs();
        return api_.SnapshotHyperParameterTuningJob(*request,
                                                    changed.has_value() ? &*changed : nullptr);
      },
      [](v1::WatchHyperParameterTuningJobResponse s) {
        s.mutable_tuning_job()->clear_consumed_resources();  // RuntimeInSeconds ticks on its own
        return s;
      },
      [](const v1::WatchHyperParameterTuningJobResponse& s) {
        return IsTerminalStatus(s.tuning_job().hyper_parameter_tuning_job_status());
      });
}

grpc::Status TuningServiceImpl::WatchTrainingJob(
    grpc::ServerContext* context, const v1::WatchTrainingJobRequest* request,
    grpc::ServerWriter<v1::DescribeTrainingJobResponse>* writer) {
  if (grpc::Status refused = auth_.CheckClient(*context); !refused.ok()) return refused;
  return Watch(
      context, writer, api_.Subscribe(),
      [&](ChangeFeed&) { return api_.SnapshotTrainingJob(*request); },
      [](const v1::DescribeTrainingJobResponse& s) { return s; },
      [](const v1::DescribeTrainingJobResponse& s) {
        return IsTerminalStatus(s.training_job_status());
      });
}

}  // namespace amt::api
