// The Orchestrator's requests that remove or change what was created:
// DeleteHyperParameterTuningJob, DeleteTrainingJob, UpdateTrainingJob and the tag operations.
// (Creating, describing, listing and stopping are in orchestrator.cc.) Each is written to the
// store before it is acknowledged; a failed write changes nothing.
#include <algorithm>

#include "absl/strings/ascii.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "orchestrator/core/job_builder.h"
#include "orchestrator/core/orchestrator.h"
#include "orchestrator/core/orchestrator_runtime.h"
#include "orchestrator/core/tags.h"

namespace amt::core {
namespace {

std::string Key(const std::string& name) { return absl::AsciiStrToLower(name); }

// Ours: DeleteTrainingJob and UpdateTrainingJob model ResourceNotFound (botocore), with AWS's
// usual words.
absl::Status NoSuchTrainingJob() { return ResourceNotFoundError("Requested resource not found."); }

}  // namespace

absl::Status Orchestrator::DeleteTuningJob(const std::string& name) {
  auto* t = FindTuning(name);
  if (t == nullptr) return TuningJobNotFound(name);
  const std::string& stored_name = t->describe().hyper_parameter_tuning_job_name();
  // Ours (SageMaker documents no rule): a tuning job still running, or one that a running tuning
  // job warm-starts from (a restarted amtd rebuilds its prior observations from its parents),
  // is in use.
  if (IsActive(*t)) {
    return ResourceInUseError("The hyperparameter tuning job " + stored_name + " is " +
                              t->describe().hyper_parameter_tuning_job_status() +
                              "; only a tuning job that has ended (Completed, Stopped or Failed) "
                              "can be deleted. Stop it first.");
  }
  for (const auto& key : tuning_order_) {
    const auto& other = tuning_.at(key);
    if (!IsActive(other)) continue;
    for (const auto& parent :
         other.describe().warm_start_config().parent_hyper_parameter_tuning_jobs()) {
      if (Key(parent.hyper_parameter_tuning_job_name()) == Key(stored_name)) {
        return ResourceInUseError(
            "The hyperparameter tuning job " + stored_name + " is a warm-start parent of the " +
            other.describe().hyper_parameter_tuning_job_status() + " tuning job " +
            other.describe().hyper_parameter_tuning_job_name() +
            "; it can be deleted once that one has ended.");
      }
    }
  }
  RETURN_IF_ERROR(state_.CheckWritable());
  // Its training jobs stay (SageMaker deletes only the tuning job's entry), no longer linked to
  // it: a new tuning job of the same name starts without them.
  std::vector<v1::TrainingJobRecord> unlinked;
  for (const auto* job : JobsOf(*t)) {
    unlinked.push_back(*job);
    unlinked.back().clear_tuning_job_name();
  }
  if (auto status = store_.DeleteTuningJob(stored_name, unlinked); !status.ok()) {
    if (status.code() != absl::StatusCode::kNotFound) state_.OnStoreFailure(status);
    return status;
  }
  for (auto& job : unlinked) {
    training_.at(Key(job.describe().training_job_name())).clear_tuning_job_name();
  }
  const std::string key = Key(stored_name);
  const std::string notified = stored_name;
  tuning_children_.erase(key);
  rt_->tunings.erase(key);
  state_.ForgetTuning(key);
  std::erase(tuning_order_, key);
  tuning_.erase(key);
  Notify(notified, "");
  return absl::OkStatus();
}

absl::Status Orchestrator::DeleteTrainingJob(const std::string& name) {
  auto* job = FindTraining(name);
  if (job == nullptr) return NoSuchTrainingJob();
  const std::string stored_name = job->describe().training_job_name();
  // SageMaker: only a job in a terminal state. Ours: not one whose tuning job is still running
  // (its counters and strategy count every job it launched).
  if (!IsTerminal(*job)) {
    return ResourceInUseError("The training job " + stored_name + " is " +
                              job->describe().training_job_status() +
                              "; only a training job that has ended (Completed, Failed or "
                              "Stopped) can be deleted.");
  }
  const std::string tuning_name = job->tuning_job_name();
  if (const auto* t = FindTuning(tuning_name); t != nullptr && IsActive(*t)) {
    return ResourceInUseError("The training job " + stored_name + " belongs to the " +
                              t->describe().hyper_parameter_tuning_job_status() + " tuning job " +
                              t->describe().hyper_parameter_tuning_job_name() +
                              "; it can be deleted once that one has ended.");
  }
  RETURN_IF_ERROR(state_.CheckWritable());
  if (auto status = store_.DeleteTrainingJob(stored_name); !status.ok()) {
    if (status.code() != absl::StatusCode::kNotFound) state_.OnStoreFailure(status);
    return status;
  }
  const std::string key = Key(stored_name);
  if (!tuning_name.empty()) {
    if (auto it = tuning_children_.find(Key(tuning_name)); it != tuning_children_.end()) {
      std::erase(it->second, job);
    }
    // Its tuning job's tally of ended jobs counted this one: start it over.
    if (auto it = rt_->tunings.find(Key(tuning_name)); it != rt_->tunings.end()) {
      it->second.settled = SettledJobs();
    }
  }
  rt_->jobs.erase(key);
  state_.ForgetTraining(key);
  std::erase(training_order_, key);
  training_.erase(key);
  Notify(tuning_name, stored_name);
  return absl::OkStatus();
}

absl::StatusOr<v1::UpdateTrainingJobResponse> Orchestrator::UpdateTrainingJob(
    const v1::UpdateTrainingJobRequest& request) {
  auto* job = FindTraining(request.training_job_name());
  if (job == nullptr) return NoSuchTrainingJob();
  RETURN_IF_ERROR(state_.CheckWritable());
  v1::TrainingJobRecord updated = *job;
  RETURN_IF_ERROR(ApplyTrainingJobUpdate(updated, request, clock_.Now()));
  RETURN_IF_ERROR(state_.PersistNew(nullptr, {updated}));
  *job = std::move(updated);
  Notify(job->tuning_job_name(), job->describe().training_job_name());
  v1::UpdateTrainingJobResponse response;
  response.set_training_job_arn(job->describe().training_job_arn());
  return response;
}

// ---------------------------------------------------------------- tags

TagList* Orchestrator::TagsOfArn(const std::string& arn, std::function<absl::Status()>* persist) {
  const TaggedResource resource = ResourceOfArn(arn);
  if (resource.kind == TaggedResource::Kind::kTrainingJob) {
    auto* job = FindTraining(resource.name);
    if (job == nullptr || Key(job->describe().training_job_arn()) != Key(arn)) return nullptr;
    *persist = [this, job] { return Persist(*job); };
    return job->mutable_describe()->mutable_tags();
  }
  if (resource.kind == TaggedResource::Kind::kTuningJob) {
    auto* tuning = FindTuning(resource.name);
    if (tuning == nullptr || Key(tuning->describe().hyper_parameter_tuning_job_arn()) != Key(arn)) {
      return nullptr;
    }
    *persist = [this, tuning] { return Persist(*tuning); };
    return tuning->mutable_describe()->mutable_tags();
  }
  return nullptr;
}

absl::StatusOr<v1::AddTagsResponse> Orchestrator::AddTags(const v1::AddTagsRequest& request) {
  std::function<absl::Status()> persist;
  TagList* tags = TagsOfArn(request.resource_arn(), &persist);
  if (tags == nullptr) return TrainingJobNotFound();
  RETURN_IF_ERROR(state_.CheckWritable());
  RETURN_IF_ERROR(core::AddTags(*tags, request.tags()));
  RETURN_IF_ERROR(persist());
  v1::AddTagsResponse out;
  *out.mutable_tags() = request.tags();
  return out;
}

absl::StatusOr<v1::ListTagsResponse> Orchestrator::ListTags(const v1::ListTagsRequest& request) {
  std::function<absl::Status()> persist;
  const TagList* tags = TagsOfArn(request.resource_arn(), &persist);
  if (tags == nullptr) return TrainingJobNotFound();
  v1::ListTagsResponse out;  // at most 50 tags and MaxResults >= 50: one page
  *out.mutable_tags() = *tags;
  return out;
}

absl::Status Orchestrator::DeleteTags(const v1::DeleteTagsRequest& request) {
  std::function<absl::Status()> persist;
  TagList* tags = TagsOfArn(request.resource_arn(), &persist);
  if (tags == nullptr) return TrainingJobNotFound();
  RETURN_IF_ERROR(state_.CheckWritable());
  core::DeleteTags(*tags, request.tag_keys());
  return persist();
}

}  // namespace amt::core
