// Autotune (`Autotune: {Mode: Enabled}`): SageMaker chooses the tuning settings the request leaves
// unset, and ranges for the hyperparameters named in ParameterRanges.AutoParameters from an
// example value of each (ValueHint). What AWS's Autotune picks is not documented (spec Appendix
// D, UNCONFIRMED); amt-local's choices, all in docs/sagemaker-mapping.md's table of choices:
//  - Each AutoParameter by its ValueHint (one pair of JSON quotes, as the SDK's framework
//    estimators send, is read through):
//      integer v >= 1          IntegerParameterRange [max(1, v / 10), 10 v], Logarithmic
//      integer 0               IntegerParameterRange [0, 10], Linear
//      integer v < 0           IntegerParameterRange [10 v, 0], Linear
//      number 0 < x < 1        ContinuousParameterRange [x / 10, min(1, 10 x)], Logarithmic
//      number x >= 1           ContinuousParameterRange [x / 10, 10 x], Logarithmic
//      number 0                ContinuousParameterRange [0, 1], Linear
//      number x < 0            ContinuousParameterRange [10 x, 0], Linear
//      true / false            CategoricalParameterRange of both, in the hint's case
//      anything else, and the  a static hyperparameter with the hint as its value (not eligible,
//      epochs-like names       as AWS puts it; an epochs-like one is the training budget)
//  - TrainingJobEarlyStoppingType, when unset: Auto for a single definition with Bayesian or
//    Random; Off otherwise.
//  - ResourceLimits.MaxNumberOfTrainingJobs, when unset: 10 per tuned hyperparameter, at least
//    10 and at most 100 (the Grid strategy, which sizes itself, is not autotuned).
//  - TuningJobCompletionCriteria.ConvergenceDetected, when unset: CompleteOnConvergence Enabled.
//  - Each definition's RetryStrategy, when unset: MaximumRetryAttempts 2.
// The completed request is what the tuning job runs and what Describe echoes (AutoParameters
// kept beside the ranges chosen from them), with Autotune itself. Pure.
#ifndef AMT_ORCHESTRATOR_VALIDATION_AUTOTUNE_H_
#define AMT_ORCHESTRATOR_VALIDATION_AUTOTUNE_H_

#include "absl/status/status.h"
#include "amt/v1/tuning.pb.h"

namespace amt::validation {

inline constexpr int kAutotuneJobsPerHyperParameter = 10;
inline constexpr int kAutotuneMinJobs = 10;
inline constexpr int kAutotuneMaxJobs = 100;
inline constexpr int kAutotuneRetryAttempts = 2;

// Applies Autotune's choices to `request` when it has Autotune Enabled; does nothing otherwise.
// ValidationException (ours) when an AutoParameter is also a static hyperparameter or a range,
// or with the Grid strategy. Run after the member constraints, before AMT's rules.
absl::Status ApplyAutotune(v1::CreateHyperParameterTuningJobRequest& request);

}  // namespace amt::validation

#endif  // AMT_ORCHESTRATOR_VALIDATION_AUTOTUNE_H_
