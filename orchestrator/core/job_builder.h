// Building records: the one place a TrainingJobRecord is made, for a CreateTrainingJob request and
// for a tuning job's launch alike (a launch is a CreateTrainingJob request made from the tuning
// job's TrainingJobDefinition), and the record of a new tuning job. Pure functions: the caller
// persists what they return.
#ifndef AMT_ORCHESTRATOR_CORE_JOB_BUILDER_H_
#define AMT_ORCHESTRATOR_CORE_JOB_BUILDER_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "amt/v1/state.pb.h"
#include "common/arn.h"
#include "orchestrator/search/strategy.h"

namespace amt::core {

struct RecordOptions {
  ArnContext arn;
  // Managed spot's discount, kept in the record so a job is billed as it was when created.
  double spot_discount = 0.7;
};

// InProgress/Starting at `now`: the request's members echoed, its ARN and ModelArtifacts.
v1::TrainingJobRecord NewTrainingJobRecord(const v1::CreateTrainingJobRequest& request,
                                           const RecordOptions& options, double now);

// The CreateTrainingJob request of `tuning`'s `index`-th (1-based) training job, launched from
// its `definition`-th (0-based) training-job definition (0 for TrainingJobDefinition): the
// definition's members, its static hyperparameters with `suggestion` over them, the tuning job's
// tags (SageMaker copies them onto every training job), the ResourceConfig (or the first instance
// configuration of HyperParameterTuningResourceConfig), and the name TrainingJobNameFor gives.
v1::CreateTrainingJobRequest TrainingJobRequestFor(const v1::TuningJobRecord& tuning, int index,
                                                   int definition,
                                                   const search::Assignment& suggestion);

// The record of `tuning`'s `index`-th training job: NewTrainingJobRecord of
// TrainingJobRequestFor, linked to its tuning job (TuningJobArn, index, definition,
// TunedHyperParameters).
v1::TrainingJobRecord NewTuningTrainingJob(const v1::TuningJobRecord& tuning, int index,
                                           int definition, const search::Assignment& suggestion,
                                           const RecordOptions& options, double now);

// UpdateTrainingJob applied to `job` at `now`: a ProfilerConfig merged into the job's (members
// given replace, ProfilingStatus follows DisableProfiler), ProfilerRuleConfigurations added (a
// rule of the same name replaced), each with its evaluation status (amt-local runs no rule),
// RemoteDebugConfig, and ResourceConfig.KeepAlivePeriodInSeconds (amt-local keeps no warm pools:
// echoed only). Ours, where SageMaker's rules are not documented: ValidationException when the
// request changes nothing, or changes the profiler or remote debugging of a job that is no longer
// InProgress. Nothing is changed on error.
absl::Status ApplyTrainingJobUpdate(v1::TrainingJobRecord& job,
                                    const v1::UpdateTrainingJobRequest& request, double now);

// A new tuning job's record, InProgress at `now`: the request echoed with the objective added to
// the static hyperparameters of each definition (as SageMaker does), `seed`, and for Hyperband its
// resource bounds. The budget (max_jobs) is left to the caller, which knows the strategy.
// ValidationException when Hyperband's MaxResource cannot be found.
absl::StatusOr<v1::TuningJobRecord> NewTuningJobRecord(
    const v1::CreateHyperParameterTuningJobRequest& request, const ArnContext& arn, uint64_t seed,
    double now);

}  // namespace amt::core

#endif  // AMT_ORCHESTRATOR_CORE_JOB_BUILDER_H_
