#include "orchestrator/api/tuning_service.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "orchestrator/validation/validation.h"

namespace amt::api {
namespace {

// A wake-up flag shared between a streaming handler thread and the loop's change listener.
struct Signal {
  std::mutex mu;
  std::condition_variable cv;
  bool changed = true;  // the first snapshot is sent at once

  void Set() {
    std::lock_guard lock(mu);
    changed = true;
    cv.notify_one();
  }
  // Waits until set, or 100 ms (to notice cancellation and shutdown). Returns whether set.
  bool WaitAndClear() {
    std::unique_lock lock(mu);
    cv.wait_for(lock, std::chrono::milliseconds(100), [this] { return changed; });
    const bool was = changed;
    changed = false;
    return was;
  }
};

// Completed, Failed and Stopped end both tuning and training jobs.
bool Terminal(const std::string& s) { return s == "Completed" || s == "Failed" || s == "Stopped"; }

// A name member as the validators take it: absent stays absent.
std::optional<std::string> NameOf(bool has, const std::string& name) {
  return has ? std::optional<std::string>(name) : std::nullopt;
}

// Sends the orchestrator's answer, or its error with SageMaker's message.
template <typename T>
grpc::Status Reply(absl::StatusOr<T> result, T* response) {
  if (!result.ok()) return ToGrpc(result.status());
  *response = std::move(*result);
  return grpc::Status::OK;
}

}  // namespace

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

#define AMT_RETURN_IF_INVALID(expr)          \
  do {                                       \
    const absl::Status amt_s_ = (expr);      \
    if (!amt_s_.ok()) return ToGrpc(amt_s_); \
  } while (0)

grpc::Status TuningServiceImpl::CreateHyperParameterTuningJob(
    grpc::ServerContext*, const v1::CreateHyperParameterTuningJobRequest* request,
    v1::CreateHyperParameterTuningJobResponse* response) {
  AMT_RETURN_IF_INVALID(validation::ValidateCreateHyperParameterTuningJob(*request));
  return Reply(loop_.Call([&] { return orchestrator_.CreateTuningJob(*request); }), response);
}

grpc::Status TuningServiceImpl::DescribeHyperParameterTuningJob(
    grpc::ServerContext*, const v1::DescribeHyperParameterTuningJobRequest* request,
    v1::DescribeHyperParameterTuningJobResponse* response) {
  const auto name = NameOf(request->has_hyper_parameter_tuning_job_name(),
                           request->hyper_parameter_tuning_job_name());
  AMT_RETURN_IF_INVALID(validation::ValidateTuningJobName(name, "hyperParameterTuningJobName"));
  return Reply(loop_.Call([&] { return orchestrator_.DescribeTuningJob(*name); }), response);
}

grpc::Status TuningServiceImpl::ListHyperParameterTuningJobs(
    grpc::ServerContext*, const v1::ListHyperParameterTuningJobsRequest* request,
    v1::ListHyperParameterTuningJobsResponse* response) {
  AMT_RETURN_IF_INVALID(validation::ValidateListHyperParameterTuningJobs(*request));
  return Reply(loop_.Call([&] { return orchestrator_.ListTuningJobs(*request); }), response);
}

grpc::Status TuningServiceImpl::ListTrainingJobsForHyperParameterTuningJob(
    grpc::ServerContext*, const v1::ListTrainingJobsForHyperParameterTuningJobRequest* request,
    v1::ListTrainingJobsForHyperParameterTuningJobResponse* response) {
  AMT_RETURN_IF_INVALID(validation::ValidateListTrainingJobsForHyperParameterTuningJob(*request));
  return Reply(loop_.Call([&] { return orchestrator_.ListTrainingJobsForTuningJob(*request); }),
               response);
}

grpc::Status TuningServiceImpl::StopHyperParameterTuningJob(
    grpc::ServerContext*, const v1::StopHyperParameterTuningJobRequest* request,
    v1::StopHyperParameterTuningJobResponse*) {
  const auto name = NameOf(request->has_hyper_parameter_tuning_job_name(),
                           request->hyper_parameter_tuning_job_name());
  AMT_RETURN_IF_INVALID(validation::ValidateTuningJobName(name, "hyperParameterTuningJobName"));
  return ToGrpc(loop_.Call([&] { return orchestrator_.StopTuningJob(*name); }));
}

grpc::Status TuningServiceImpl::CreateTrainingJob(grpc::ServerContext*,
                                                  const v1::CreateTrainingJobRequest* request,
                                                  v1::CreateTrainingJobResponse* response) {
  AMT_RETURN_IF_INVALID(validation::ValidateCreateTrainingJob(*request));
  return Reply(loop_.Call([&] { return orchestrator_.CreateTrainingJob(*request); }), response);
}

grpc::Status TuningServiceImpl::DescribeTrainingJob(grpc::ServerContext*,
                                                    const v1::DescribeTrainingJobRequest* request,
                                                    v1::DescribeTrainingJobResponse* response) {
  const auto name = NameOf(request->has_training_job_name(), request->training_job_name());
  AMT_RETURN_IF_INVALID(validation::ValidateTrainingJobName(name, "trainingJobName"));
  return Reply(loop_.Call([&] { return orchestrator_.DescribeTrainingJob(*name); }), response);
}

grpc::Status TuningServiceImpl::ListTrainingJobs(grpc::ServerContext*,
                                                 const v1::ListTrainingJobsRequest* request,
                                                 v1::ListTrainingJobsResponse* response) {
  AMT_RETURN_IF_INVALID(validation::ValidateListTrainingJobs(*request));
  return Reply(loop_.Call([&] { return orchestrator_.ListTrainingJobs(*request); }), response);
}

grpc::Status TuningServiceImpl::StopTrainingJob(grpc::ServerContext*,
                                                const v1::StopTrainingJobRequest* request,
                                                v1::StopTrainingJobResponse*) {
  const auto name = NameOf(request->has_training_job_name(), request->training_job_name());
  AMT_RETURN_IF_INVALID(validation::ValidateTrainingJobName(name, "trainingJobName"));
  return ToGrpc(loop_.Call([&] { return orchestrator_.StopTrainingJob(*name); }));
}

grpc::Status TuningServiceImpl::ExplainTrainingJob(grpc::ServerContext*,
                                                   const v1::ExplainTrainingJobRequest* request,
                                                   v1::ExplainTrainingJobResponse* response) {
  const auto name = NameOf(request->has_training_job_name(), request->training_job_name());
  AMT_RETURN_IF_INVALID(validation::ValidateTrainingJobName(name, "trainingJobName"));
  return Reply(loop_.Call([&] { return orchestrator_.ExplainTrainingJob(*name); }), response);
}

grpc::Status TuningServiceImpl::GetTrainingJobLogs(
    grpc::ServerContext* context, const v1::GetTrainingJobLogsRequest* request,
    grpc::ServerWriter<v1::GetTrainingJobLogsResponse>* writer) {
  const auto name = NameOf(request->has_training_job_name(), request->training_job_name());
  AMT_RETURN_IF_INVALID(validation::ValidateTrainingJobName(name, "trainingJobName"));
  auto signal = std::make_shared<Signal>();
  const std::string wanted = *name;
  uint64_t subscription = 0;
  if (request->follow()) {
    subscription = loop_.Call([&] {
      return orchestrator_.Subscribe([signal, wanted](const std::string&, const std::string& job) {
        if (job.empty() || job == wanted) signal->Set();
      });
    });
  }
  int64_t next = request->start_sequence();
  grpc::Status result = grpc::Status::OK;
  constexpr int kPage = 1000;
  while (true) {
    const bool changed = signal->WaitAndClear();
    if (context->IsCancelled() || shutting_down_) break;
    if (!changed) continue;
    bool terminal = false;
    // Read everything available, then note whether the job has ended: lines written before the
    // end were committed before the status changed, so nothing is missed.
    while (true) {
      auto page =
          loop_.Call([&]() -> absl::StatusOr<std::pair<std::vector<store::LogEntry>, bool>> {
            auto job = orchestrator_.DescribeTrainingJob(wanted);
            if (!job.ok()) return job.status();
            auto lines = orchestrator_.ReadLogs(wanted, next, kPage);
            if (!lines.ok()) return lines.status();
            return std::make_pair(std::move(*lines), Terminal(job->training_job_status()));
          });
      if (!page.ok()) {
        result = ToGrpc(page.status());
        break;
      }
      terminal = page->second;
      if (!page->first.empty()) {
        v1::GetTrainingJobLogsResponse response;
        for (const auto& e : page->first) {
          auto* line = response.add_lines();
          line->set_sequence(e.sequence);
          line->set_timestamp(e.timestamp);
          line->set_message(e.message);
          next = e.sequence + 1;
        }
        if (!writer->Write(response)) {
          terminal = true;
          break;
        }
      }
      if (static_cast<int>(page->first.size()) < kPage) break;
    }
    if (!result.ok() || !request->follow() || terminal) break;
  }
  if (subscription != 0) loop_.Call([&] { orchestrator_.Unsubscribe(subscription); });
  return result;
}

// Sends `snapshot()` now and after every change, skipping snapshots equal (after `comparable`)
// to the last one sent, until `terminal(snapshot)`, cancellation or shutdown.
template <typename Snapshot, typename Get, typename Comparable, typename IsTerminal>
grpc::Status TuningServiceImpl::Watch(grpc::ServerContext* context,
                                      grpc::ServerWriter<Snapshot>* writer, Get get,
                                      Comparable comparable, IsTerminal terminal) {
  auto signal = std::make_shared<Signal>();
  const uint64_t subscription = loop_.Call([&] {
    return orchestrator_.Subscribe(
        [signal](const std::string&, const std::string&) { signal->Set(); });
  });
  grpc::Status result = grpc::Status::OK;
  std::string last_sent;
  while (true) {
    const bool changed = signal->WaitAndClear();
    if (context->IsCancelled() || shutting_down_) break;
    if (!changed) continue;
    absl::StatusOr<Snapshot> snapshot = loop_.Call(get);
    if (!snapshot.ok()) {
      result = ToGrpc(snapshot.status());
      break;
    }
    std::string bytes;
    comparable(*snapshot).SerializeToString(&bytes);
    if (bytes != last_sent) {
      last_sent = std::move(bytes);
      if (!writer->Write(*snapshot)) break;
    }
    if (terminal(*snapshot)) break;
  }
  loop_.Call([&] { orchestrator_.Unsubscribe(subscription); });
  return result;
}

grpc::Status TuningServiceImpl::WatchHyperParameterTuningJob(
    grpc::ServerContext* context, const v1::WatchHyperParameterTuningJobRequest* request,
    grpc::ServerWriter<v1::WatchHyperParameterTuningJobResponse>* writer) {
  const auto name = NameOf(request->has_hyper_parameter_tuning_job_name(),
                           request->hyper_parameter_tuning_job_name());
  AMT_RETURN_IF_INVALID(validation::ValidateTuningJobName(name, "hyperParameterTuningJobName"));
  return Watch(
      context, writer, [&] { return orchestrator_.Snapshot(*name); },
      [](v1::WatchHyperParameterTuningJobResponse s) {
        s.mutable_tuning_job()->clear_consumed_resources();  // RuntimeInSeconds ticks on its own
        return s;
      },
      [](const v1::WatchHyperParameterTuningJobResponse& s) {
        return Terminal(s.tuning_job().hyper_parameter_tuning_job_status());
      });
}

grpc::Status TuningServiceImpl::WatchTrainingJob(
    grpc::ServerContext* context, const v1::WatchTrainingJobRequest* request,
    grpc::ServerWriter<v1::DescribeTrainingJobResponse>* writer) {
  const auto name = NameOf(request->has_training_job_name(), request->training_job_name());
  AMT_RETURN_IF_INVALID(validation::ValidateTrainingJobName(name, "trainingJobName"));
  return Watch(
      context, writer, [&] { return orchestrator_.DescribeTrainingJob(*name); },
      [](const v1::DescribeTrainingJobResponse& s) { return s; },
      [](const v1::DescribeTrainingJobResponse& s) { return Terminal(s.training_job_status()); });
}

}  // namespace amt::api
