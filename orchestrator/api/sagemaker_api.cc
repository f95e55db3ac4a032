#include "orchestrator/api/sagemaker_api.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "common/mutex.h"
#include "common/status_macros.h"
#include "orchestrator/core/orchestrator.h"
#include "orchestrator/validation/algorithms.h"
#include "orchestrator/validation/validation.h"

namespace amt::api {
namespace {

// A name member as the validators take it: absent stays absent.
std::optional<std::string> NameOf(bool has, const std::string& name) {
  return has ? std::optional<std::string>(name) : std::nullopt;
}

absl::Status ValidateTuningName(bool has, const std::string& name) {
  return validation::ValidateTuningJobName(NameOf(has, name), "hyperParameterTuningJobName");
}

absl::Status ValidateTrainingName(bool has, const std::string& name) {
  return validation::ValidateTrainingJobName(NameOf(has, name), "trainingJobName");
}

// Stop* answer an empty response; the orchestrator answers a bare Status.
template <typename Response>
absl::StatusOr<Response> Empty(const absl::Status& status) {
  if (!status.ok()) return status;
  return Response();
}

}  // namespace

bool IsTerminalStatus(std::string_view status) {
  return status == "Completed" || status == "Failed" || status == "Stopped";
}

// Shared between a stream's thread and the listener the orchestrator calls on the loop.
struct ChangeFeed::Flag {
  Mutex mu;
  CondVar cv;
  bool changed ABSL_GUARDED_BY(mu) = true;  // the first Wait returns at once
  // For SubscribeTuningJob: the training jobs that changed since the last take, unless
  // `everything` (also true at first: the first read is a whole snapshot).
  std::set<std::string> training_jobs ABSL_GUARDED_BY(mu);
  bool everything ABSL_GUARDED_BY(mu) = true;

  void Set() {
    MutexLock lock(&mu);
    changed = true;
    everything = true;
    cv.Signal();
  }
  void SetTrainingJob(const std::string& name) {
    MutexLock lock(&mu);
    changed = true;
    if (!everything) training_jobs.insert(name);
    cv.Signal();
  }
};

ChangeFeed::ChangeFeed(Loop& loop, core::Orchestrator& orchestrator, std::shared_ptr<Flag> flag,
                       uint64_t subscription)
    : loop_(loop),
      orchestrator_(orchestrator),
      flag_(std::move(flag)),
      subscription_(subscription) {}

ChangeFeed::~ChangeFeed() {
  assert(!loop_.InLoopThread());
  loop_.Call([this] { orchestrator_.Unsubscribe(subscription_); });
}

bool ChangeFeed::Wait(std::chrono::milliseconds timeout) {
  MutexLock lock(&flag_->mu);
  flag_->cv.AwaitFor(&flag_->mu, timeout, [this] {
    flag_->mu.AssertHeld();
    return flag_->changed;
  });
  const bool was = flag_->changed;
  flag_->changed = false;
  return was;
}

std::optional<std::vector<std::string>> ChangeFeed::TakeChangedTrainingJobs() {
  MutexLock lock(&flag_->mu);
  flag_->changed = false;  // what changed since Wait returned is taken now, not read again
  if (flag_->everything) {
    flag_->everything = false;
    flag_->training_jobs.clear();
    return std::nullopt;
  }
  std::vector<std::string> names(flag_->training_jobs.begin(), flag_->training_jobs.end());
  flag_->training_jobs.clear();
  return names;
}

absl::StatusOr<v1::CreateHyperParameterTuningJobResponse>
SageMakerApi::CreateHyperParameterTuningJob(
    const v1::CreateHyperParameterTuningJobRequest& request) const {
  ASSIGN_OR_RETURN(const v1::CreateHyperParameterTuningJobRequest completed,
                   validation::CompleteCreateHyperParameterTuningJob(request));
  return loop_.Call([&] { return orchestrator_.CreateTuningJob(completed); });
}

absl::StatusOr<v1::DescribeHyperParameterTuningJobResponse>
SageMakerApi::DescribeHyperParameterTuningJob(
    const v1::DescribeHyperParameterTuningJobRequest& request) const {
  RETURN_IF_ERROR(ValidateTuningName(request.has_hyper_parameter_tuning_job_name(),
                                     request.hyper_parameter_tuning_job_name()));
  return loop_.Call(
      [&] { return orchestrator_.DescribeTuningJob(request.hyper_parameter_tuning_job_name()); });
}

absl::StatusOr<v1::ListHyperParameterTuningJobsResponse> SageMakerApi::ListHyperParameterTuningJobs(
    const v1::ListHyperParameterTuningJobsRequest& request) const {
  RETURN_IF_ERROR(validation::ValidateListHyperParameterTuningJobs(request));
  return loop_.Call([&] { return orchestrator_.ListTuningJobs(request); });
}

absl::StatusOr<v1::ListTrainingJobsForHyperParameterTuningJobResponse>
SageMakerApi::ListTrainingJobsForHyperParameterTuningJob(
    const v1::ListTrainingJobsForHyperParameterTuningJobRequest& request) const {
  RETURN_IF_ERROR(validation::ValidateListTrainingJobsForHyperParameterTuningJob(request));
  return loop_.Call([&] { return orchestrator_.ListTrainingJobsForTuningJob(request); });
}

absl::StatusOr<v1::StopHyperParameterTuningJobResponse> SageMakerApi::StopHyperParameterTuningJob(
    const v1::StopHyperParameterTuningJobRequest& request) const {
  RETURN_IF_ERROR(ValidateTuningName(request.has_hyper_parameter_tuning_job_name(),
                                     request.hyper_parameter_tuning_job_name()));
  return Empty<v1::StopHyperParameterTuningJobResponse>(loop_.Call(
      [&] { return orchestrator_.StopTuningJob(request.hyper_parameter_tuning_job_name()); }));
}

absl::StatusOr<v1::DeleteHyperParameterTuningJobResponse>
SageMakerApi::DeleteHyperParameterTuningJob(
    const v1::DeleteHyperParameterTuningJobRequest& request) const {
  RETURN_IF_ERROR(ValidateTuningName(request.has_hyper_parameter_tuning_job_name(),
                                     request.hyper_parameter_tuning_job_name()));
  return Empty<v1::DeleteHyperParameterTuningJobResponse>(loop_.Call(
      [&] { return orchestrator_.DeleteTuningJob(request.hyper_parameter_tuning_job_name()); }));
}

absl::StatusOr<v1::CreateTrainingJobResponse> SageMakerApi::CreateTrainingJob(
    const v1::CreateTrainingJobRequest& request) const {
  RETURN_IF_ERROR(validation::ValidateCreateTrainingJob(request));
  v1::CreateTrainingJobRequest completed = request;
  validation::AddBuiltInMetricDefinitions(completed);
  return loop_.Call([&] { return orchestrator_.CreateTrainingJob(completed); });
}

absl::StatusOr<v1::DescribeTrainingJobResponse> SageMakerApi::DescribeTrainingJob(
    const v1::DescribeTrainingJobRequest& request) const {
  RETURN_IF_ERROR(
      ValidateTrainingName(request.has_training_job_name(), request.training_job_name()));
  return loop_.Call([&] { return orchestrator_.DescribeTrainingJob(request.training_job_name()); });
}

absl::StatusOr<v1::ListTrainingJobsResponse> SageMakerApi::ListTrainingJobs(
    const v1::ListTrainingJobsRequest& request) const {
  RETURN_IF_ERROR(validation::ValidateListTrainingJobs(request));
  return loop_.Call([&] { return orchestrator_.ListTrainingJobs(request); });
}

absl::StatusOr<v1::StopTrainingJobResponse> SageMakerApi::StopTrainingJob(
    const v1::StopTrainingJobRequest& request) const {
  RETURN_IF_ERROR(
      ValidateTrainingName(request.has_training_job_name(), request.training_job_name()));
  return Empty<v1::StopTrainingJobResponse>(
      loop_.Call([&] { return orchestrator_.StopTrainingJob(request.training_job_name()); }));
}

absl::StatusOr<v1::DeleteTrainingJobResponse> SageMakerApi::DeleteTrainingJob(
    const v1::DeleteTrainingJobRequest& request) const {
  RETURN_IF_ERROR(
      ValidateTrainingName(request.has_training_job_name(), request.training_job_name()));
  return Empty<v1::DeleteTrainingJobResponse>(
      loop_.Call([&] { return orchestrator_.DeleteTrainingJob(request.training_job_name()); }));
}

absl::StatusOr<v1::UpdateTrainingJobResponse> SageMakerApi::UpdateTrainingJob(
    const v1::UpdateTrainingJobRequest& request) const {
  RETURN_IF_ERROR(validation::ValidateUpdateTrainingJob(request));
  return loop_.Call([&] { return orchestrator_.UpdateTrainingJob(request); });
}

absl::StatusOr<v1::AddTagsResponse> SageMakerApi::AddTags(const v1::AddTagsRequest& request) const {
  RETURN_IF_ERROR(validation::ValidateAddTags(request));
  return loop_.Call([&] { return orchestrator_.AddTags(request); });
}

absl::StatusOr<v1::ListTagsResponse> SageMakerApi::ListTags(
    const v1::ListTagsRequest& request) const {
  RETURN_IF_ERROR(validation::ValidateListTags(request));
  return loop_.Call([&] { return orchestrator_.ListTags(request); });
}

absl::StatusOr<v1::DeleteTagsResponse> SageMakerApi::DeleteTags(
    const v1::DeleteTagsRequest& request) const {
  RETURN_IF_ERROR(validation::ValidateDeleteTags(request));
  return Empty<v1::DeleteTagsResponse>(
      loop_.Call([&] { return orchestrator_.DeleteTags(request); }));
}

absl::StatusOr<v1::ExplainTrainingJobResponse> SageMakerApi::ExplainTrainingJob(
    const v1::ExplainTrainingJobRequest& request) const {
  RETURN_IF_ERROR(
      ValidateTrainingName(request.has_training_job_name(), request.training_job_name()));
  return loop_.Call([&] { return orchestrator_.ExplainTrainingJob(request.training_job_name()); });
}

absl::StatusOr<v1::ExplainHyperParameterTuningJobResponse>
SageMakerApi::ExplainHyperParameterTuningJob(
    const v1::ExplainHyperParameterTuningJobRequest& request) const {
  RETURN_IF_ERROR(ValidateTuningName(request.has_hyper_parameter_tuning_job_name(),
                                     request.hyper_parameter_tuning_job_name()));
  return loop_.Call([&] {
    return orchestrator_.ExplainHyperParameterTuningJob(request.hyper_parameter_tuning_job_name());
  });
}

absl::StatusOr<LogPage> SageMakerApi::ReadTrainingJobLogs(
    const v1::GetTrainingJobLogsRequest& request, int max_lines) const {
  RETURN_IF_ERROR(
      ValidateTrainingName(request.has_training_job_name(), request.training_job_name()));
  const std::string& name = request.training_job_name();
  return loop_.Call([&]() -> absl::StatusOr<LogPage> {
    // The status first, then the lines: a line is committed before the status that ends the job,
    // so a job seen ended has all its lines in the read that follows.
    ASSIGN_OR_RETURN(const v1::DescribeTrainingJobResponse job,
                     orchestrator_.DescribeTrainingJob(name));
    ASSIGN_OR_RETURN(const std::vector<store::LogEntry> entries,
                     orchestrator_.ReadLogs(name, request.start_sequence(), max_lines,
                                            request.has_host() ? &request.host() : nullptr));
    LogPage page;
    ASSIGN_OR_RETURN(page.log_length, orchestrator_.LogLength(name));
    page.creation_time = job.creation_time();
    page.instance_count = std::max(1, job.resource_config().instance_count());
    page.next_sequence = request.start_sequence();
    for (const store::LogEntry& e : entries) {
      v1::LogLine* line = page.lines.add_lines();
      line->set_sequence(e.sequence);
      line->set_timestamp(e.timestamp);
      line->set_message(e.message);
      line->set_host(e.host);
      page.next_sequence = e.sequence + 1;
    }
    page.full = static_cast<int>(entries.size()) >= max_lines;
    page.job_ended = IsTerminalStatus(job.training_job_status());
    return page;
  });
}

absl::StatusOr<std::vector<v1::MetricPoint>> SageMakerApi::ReadTrainingJobMetrics(
    const std::string& name) const {
  RETURN_IF_ERROR(ValidateTrainingName(true, name));
  return loop_.Call([&] { return orchestrator_.ReadMetrics(name); });
}

absl::StatusOr<std::vector<TrainingJobMetricNames>> SageMakerApi::ListTrainingJobMetricNames()
    const {
  return loop_.Call([&]() -> absl::StatusOr<std::vector<TrainingJobMetricNames>> {
    std::vector<TrainingJobMetricNames> jobs;
    v1::ListTrainingJobsRequest request;
    request.set_max_results(100);
    while (true) {
      ASSIGN_OR_RETURN(const v1::ListTrainingJobsResponse page,
                       orchestrator_.ListTrainingJobs(request));
      for (const v1::TrainingJobSummary& summary : page.training_job_summaries()) {
        ASSIGN_OR_RETURN(const v1::DescribeTrainingJobResponse job,
                         orchestrator_.DescribeTrainingJob(summary.training_job_name()));
        if (job.final_metric_data_list().empty()) continue;
        TrainingJobMetricNames& names = jobs.emplace_back();
        names.training_job_name = job.training_job_name();
        for (const v1::MetricData& metric : job.final_metric_data_list()) {
          names.metric_names.push_back(metric.metric_name());
        }
        std::sort(names.metric_names.begin(), names.metric_names.end());
      }
      if (!page.has_next_token() || page.next_token().empty()) break;
      request.set_next_token(page.next_token());
    }
    std::sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) {
      return a.training_job_name < b.training_job_name;
    });
    return jobs;
  });
}

absl::StatusOr<v1::WatchHyperParameterTuningJobResponse>
SageMakerApi::SnapshotHyperParameterTuningJob(
    const v1::WatchHyperParameterTuningJobRequest& request,
    const std::vector<std::string>* training_jobs) const {
  RETURN_IF_ERROR(ValidateTuningName(request.has_hyper_parameter_tuning_job_name(),
                                     request.hyper_parameter_tuning_job_name()));
  return loop_.Call([&] {
    return orchestrator_.Snapshot(request.hyper_parameter_tuning_job_name(), training_jobs);
  });
}

absl::StatusOr<v1::DescribeTrainingJobResponse> SageMakerApi::SnapshotTrainingJob(
    const v1::WatchTrainingJobRequest& request) const {
  RETURN_IF_ERROR(
      ValidateTrainingName(request.has_training_job_name(), request.training_job_name()));
  return loop_.Call([&] { return orchestrator_.DescribeTrainingJob(request.training_job_name()); });
}

std::unique_ptr<ChangeFeed> SageMakerApi::Subscribe(const std::string& training_job) const {
  assert(!loop_.InLoopThread());
  auto flag = std::make_shared<ChangeFeed::Flag>();
  const uint64_t id = loop_.Call([&] {
    return orchestrator_.Subscribe(
        [flag, training_job](const std::string&, const std::string& changed) {
          if (training_job.empty() || changed.empty() || changed == training_job) flag->Set();
        });
  });
  // ChangeFeed's constructor is private: no make_unique.
  return std::unique_ptr<ChangeFeed>(new ChangeFeed(loop_, orchestrator_, std::move(flag), id));
}

std::unique_ptr<ChangeFeed> SageMakerApi::SubscribeTuningJob(const std::string& tuning_job) const {
  assert(!loop_.InLoopThread());
  auto flag = std::make_shared<ChangeFeed::Flag>();
  const uint64_t id = loop_.Call([&] {
    return orchestrator_.Subscribe(
        [flag, tuning_job](const std::string& tuning, const std::string& training) {
          if (tuning.empty() && training.empty()) {
            flag->Set();  // names no job (a restart, a worker's loss): read everything
          } else if (absl::EqualsIgnoreCase(tuning, tuning_job)) {
            if (training.empty()) {
              flag->Set();
            } else {
              flag->SetTrainingJob(training);
            }
          }
        });
  });
  return std::unique_ptr<ChangeFeed>(new ChangeFeed(loop_, orchestrator_, std::move(flag), id));
}

absl::StatusOr<std::function<void()>> SageMakerApi::WatchJob(
    JobKind kind, const std::string& name, std::function<void(bool ended)> on_change) const {
  assert(!loop_.InLoopThread());
  const bool tuning = kind == JobKind::kTuningJob;
  RETURN_IF_ERROR(tuning ? ValidateTuningName(true, name) : ValidateTrainingName(true, name));
  core::Orchestrator& orchestrator = orchestrator_;
  // Whether the job has ended; on the loop.
  auto ended = [&orchestrator, tuning, name]() -> absl::StatusOr<bool> {
    if (tuning) {
      ASSIGN_OR_RETURN(const auto job, orchestrator.DescribeTuningJob(name));
      return IsTerminalStatus(job.hyper_parameter_tuning_job_status());
    }
    ASSIGN_OR_RETURN(const auto job, orchestrator.DescribeTrainingJob(name));
    return IsTerminalStatus(job.training_job_status());
  };
  ASSIGN_OR_RETURN(const uint64_t id, loop_.Call([&]() -> absl::StatusOr<uint64_t> {
    ASSIGN_OR_RETURN(const bool now, ended());
    on_change(now);
    return orchestrator.Subscribe(
        [ended, on_change, tuning, name](const std::string& tuning_job,
                                         const std::string& training_job) {
          if ((tuning ? tuning_job : training_job) != name) return;
          const absl::StatusOr<bool> is = ended();
          on_change(!is.ok() || *is);  // a job deleted meanwhile has ended too
        });
  }));
  auto once = std::make_shared<std::once_flag>();
  Loop& loop = loop_;
  return std::function<void()>([once, &loop, &orchestrator, id] {
    std::call_once(*once,
                   [&] { loop.Post([&orchestrator, id] { orchestrator.Unsubscribe(id); }); });
  });
}

}  // namespace amt::api
