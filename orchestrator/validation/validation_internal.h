// What the files of the validation library's stage 2 (AMT's own rules, validation.h) share, and
// nothing outside amt_validation includes. Same contract as validation.h: pure, OK or
// InvalidArgument (ValidationException), the first failure winning.
//
// Stage 2's files: validation.cc (the public operations: stage 1, then these rules),
// tuning_rules.cc (the tuning job: single or multi-algorithm, strategy and limits, Hyperband),
// training_job_rules.cc (one training job's definition: what to run, its objective metric,
// resources, channels, S3 paths and managed spot; CreateTrainingJob), range_rules.cc (the
// hyperparameter ranges). SageMaker's real texts are the constants marked "SageMaker"; every
// other message in these files is ours, written because the spec has no real text for it.
#ifndef AMT_ORCHESTRATOR_VALIDATION_VALIDATION_INTERNAL_H_
#define AMT_ORCHESTRATOR_VALIDATION_VALIDATION_INTERNAL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "amt/v1/tuning.pb.h"
#include "orchestrator/validation/definitions.h"
#include "orchestrator/validation/validation.h"

namespace amt::validation::internal {

// A whole-string integer; a leading '+' is accepted as Java's Integer.parseInt does.
std::optional<int64_t> ParseInteger(std::string_view text);

// The ranges of one definition against its static hyperparameters (range_rules.cc).
absl::Status CheckRanges(const v1::ParameterRanges& ranges,
                         const google::protobuf::Map<std::string, std::string>& statics,
                         const Limits& limits, bool autotune);

// One training-job definition's own rules (training_job_rules.cc). `where` names the definition
// in the texts about its members.
absl::Status CheckDefinition(const DefinitionView& view, const std::string& where,
                             const Limits& limits, bool autotune);

// CreateTrainingJob's rules (training_job_rules.cc).
absl::Status CheckTrainingRules(const v1::CreateTrainingJobRequest& r);

// CreateHyperParameterTuningJob's rules, Autotune applied (tuning_rules.cc).
absl::Status CheckTuningRules(const v1::CreateHyperParameterTuningJobRequest& r,
                              const Limits& limits);

}  // namespace amt::validation::internal

#endif  // AMT_ORCHESTRATOR_VALIDATION_VALIDATION_INTERNAL_H_
