#include "orchestrator/validation/validation.h"

#include <string>

#include "common/status_macros.h"
#include "orchestrator/validation/algorithms.h"
#include "orchestrator/validation/autotune.h"
#include "orchestrator/validation/member_constraints.h"
#include "orchestrator/validation/validation_internal.h"

namespace amt::validation {
namespace {

using internal::CheckTrainingRules;
using internal::CheckTuningRules;

absl::Status CheckMembersOf(const google::protobuf::Message& request) {
  ConstraintViolations violations;
  CheckMemberConstraints(request, "", &violations);
  return violations.ToStatus();
}

}  // namespace

absl::StatusOr<v1::CreateHyperParameterTuningJobRequest> CompleteCreateHyperParameterTuningJob(
    const v1::CreateHyperParameterTuningJobRequest& r, const Limits& limits) {
  RETURN_IF_ERROR(CheckMembersOf(r));
  v1::CreateHyperParameterTuningJobRequest completed = r;
  RETURN_IF_ERROR(ApplyAutotune(completed));
  RETURN_IF_ERROR(CheckTuningRules(completed, limits));
  AddBuiltInMetricDefinitions(completed);
  return completed;
}

absl::Status ValidateCreateHyperParameterTuningJob(
    const v1::CreateHyperParameterTuningJobRequest& r, const Limits& limits) {
  return CompleteCreateHyperParameterTuningJob(r, limits).status();
}

absl::Status ValidateCreateTrainingJob(const v1::CreateTrainingJobRequest& r) {
  RETURN_IF_ERROR(CheckMembersOf(r));
  return CheckTrainingRules(r);
}

absl::Status ValidateListHyperParameterTuningJobs(
    const v1::ListHyperParameterTuningJobsRequest& r) {
  return CheckMembersOf(r);
}

absl::Status ValidateListTrainingJobs(const v1::ListTrainingJobsRequest& r) {
  return CheckMembersOf(r);
}

absl::Status ValidateUpdateTrainingJob(const v1::UpdateTrainingJobRequest& r) {
  return CheckMembersOf(r);
}

absl::Status ValidateAddTags(const v1::AddTagsRequest& r) { return CheckMembersOf(r); }
absl::Status ValidateListTags(const v1::ListTagsRequest& r) { return CheckMembersOf(r); }
absl::Status ValidateDeleteTags(const v1::DeleteTagsRequest& r) { return CheckMembersOf(r); }

absl::Status ValidateListTrainingJobsForHyperParameterTuningJob(
    const v1::ListTrainingJobsForHyperParameterTuningJobRequest& r) {
  return CheckMembersOf(r);
}

absl::Status ValidateTuningJobName(const std::optional<std::string>& name,
                                   std::string_view member) {
  ConstraintViolations violations;
  CheckStringMember(name, std::string(member), TuningJobNameShape(), /*required=*/true,
                    &violations);
  return violations.ToStatus();
}

absl::Status ValidateTrainingJobName(const std::optional<std::string>& name,
                                     std::string_view member) {
  ConstraintViolations violations;
  CheckStringMember(name, std::string(member), TrainingJobNameShape(), /*required=*/true,
                    &violations);
  return violations.ToStatus();
}

}  // namespace amt::validation
