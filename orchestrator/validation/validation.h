// Request validation for amt-local's SageMaker operations, in SageMaker's two stages:
//
//  1. Member constraints of the botocore model (required members, lengths, patterns, enums,
//     numeric bounds), all collected into one ValidationException in AWS's standard form
//     ("N validation errors detected: Value '...' at 'member.path' failed to satisfy
//     constraint: ..."); see member_constraints.h.
//  2. Only when stage 1 passed, AMT's own rules (ranges, strategies, limits, Hyperband, managed
//     spot), one ValidationException each, the first failure winning. SageMaker's real texts are
//     used where the spec has them; every other text is amt-local's and is marked "ours" in
//     the files of stage 2 (validation_internal.h lists them).
//
// Every function is pure (no I/O, no clock, thread-safe) and returns OK or an absl::Status whose
// code maps to the SageMaker error name through common/errors.h; all failures here are
// InvalidArgument (ValidationException).
#ifndef AMT_ORCHESTRATOR_VALIDATION_VALIDATION_H_
#define AMT_ORCHESTRATOR_VALIDATION_VALIDATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "amt/v1/tuning.pb.h"

namespace amt::validation {

// Knobs with SageMaker's defaults. max_tunable_parameters, max_categorical_values and
// max_metric_definitions mirror bounds of the model itself (30 ranges per list, 30 values per
// categorical range, 40 metric definitions), which stage 1 keeps checking: those three can only
// tighten. The job limits can be raised or lowered freely.
struct Limits {
  int max_training_jobs_random = 10000;  // Random: 750 default quota, raisable to 10,000
  int max_training_jobs_other = 750;     // Bayesian, Hyperband, Grid (not raisable)
  int max_parallel_training_jobs = 100;  // quota 10, raisable to 100
  int max_tunable_parameters = 30;
  int max_categorical_values = 30;
  int max_metric_definitions = 40;
};

// Largest MaxResource Hyperband accepts (documented maximum: 20,000 epochs).
inline constexpr int kMaxHyperbandResource = 20000;
// MaxRuntimeInSeconds SageMaker assumes when StoppingCondition leaves it out (one day); managed
// spot's MaxWaitTimeInSeconds is compared against it then.
inline constexpr int kDefaultMaxRuntimeInSeconds = 86400;

// CreateHyperParameterTuningJob as SageMaker completes it before it runs: its member
// constraints checked, Autotune's choices applied (autotune.h), AMT's rules checked on the
// result, and a built-in algorithm's metric definitions added (algorithms.h). InvalidArgument on
// any violation.
absl::StatusOr<v1::CreateHyperParameterTuningJobRequest> CompleteCreateHyperParameterTuningJob(
    const v1::CreateHyperParameterTuningJobRequest& r, const Limits& limits = {});
// CompleteCreateHyperParameterTuningJob's verdict alone.
absl::Status ValidateCreateHyperParameterTuningJob(
    const v1::CreateHyperParameterTuningJobRequest& r, const Limits& limits = {});

// CreateTrainingJob. InvalidArgument on any violation.
absl::Status ValidateCreateTrainingJob(const v1::CreateTrainingJobRequest& r);

// The List operations: MaxResults 1-100, SortBy/SortOrder/StatusEquals enums, NameContains and
// NextToken lengths and patterns; for ListTrainingJobsForHyperParameterTuningJob also the tuning
// job name. InvalidArgument on any violation.
absl::Status ValidateListHyperParameterTuningJobs(const v1::ListHyperParameterTuningJobsRequest& r);
absl::Status ValidateListTrainingJobs(const v1::ListTrainingJobsRequest& r);
// UpdateTrainingJob: the name, ProfilerConfig, at most 20 ProfilerRuleConfigurations,
// KeepAlivePeriodInSeconds 0-21600. InvalidArgument on any violation.
absl::Status ValidateUpdateTrainingJob(const v1::UpdateTrainingJobRequest& r);
absl::Status ValidateAddTags(const v1::AddTagsRequest& r);
absl::Status ValidateListTags(const v1::ListTagsRequest& r);
absl::Status ValidateDeleteTags(const v1::DeleteTagsRequest& r);
absl::Status ValidateListTrainingJobsForHyperParameterTuningJob(
    const v1::ListTrainingJobsForHyperParameterTuningJobRequest& r);

// For Describe/Stop: the name is present, 1-32 (tuning) or 1-63 (training) characters and matches
// SageMaker's name pattern. `member` is the lowerCamelCase path used in the message, e.g.
// "hyperParameterTuningJobName". InvalidArgument on any violation.
absl::Status ValidateTuningJobName(const std::optional<std::string>& name, std::string_view member);
absl::Status ValidateTrainingJobName(const std::optional<std::string>& name,
                                     std::string_view member);

// Number of training jobs a Grid search over these ranges runs: the product of the number of
// values of every categorical range (categorical values are unique once validated). Integer and
// continuous ranges are ignored (Grid rejects them). 0 when there is no categorical range;
// saturates at INT64_MAX.
int64_t GridCombinations(const v1::ParameterRanges& ranges);

// Whether `name` is one of epochs, numepochs, n-epochs, n_epochs, num_epochs (Hyperband's
// resource, which Autotune keeps static).
bool IsEpochsHyperParameter(std::string_view name);

// The value of the first of the hyperparameters epochs, numepochs, n-epochs, n_epochs, num_epochs
// present, when it is a positive integer (one pair of JSON quotes, as the Python SDK adds, is
// accepted); nullopt when the first present is not, or none is present.
std::optional<int> EpochsHyperParameter(
    const google::protobuf::Map<std::string, std::string>& hyper_parameters);

// Hyperband's MaxResource: StrategyConfig.HyperbandStrategyConfig.MaxResource when given, else
// inferred from the first of the static hyperparameters epochs, numepochs, n-epochs, n_epochs,
// num_epochs present in TrainingJobDefinition, whose value must be a positive integer (one pair of
// JSON quotes, as the Python SDK adds, is accepted). InvalidArgument with SageMaker's text
// "MaxResource parameter is not provided and could not be inferred from provided static
// hyperparameters of TrainingJobDefinition." when it cannot be inferred. Does not check the
// 20,000 maximum (ValidateCreateHyperParameterTuningJob does).
absl::StatusOr<int> HyperbandMaxResource(const v1::CreateHyperParameterTuningJobRequest& r);

}  // namespace amt::validation

#endif  // AMT_ORCHESTRATOR_VALIDATION_VALIDATION_H_
