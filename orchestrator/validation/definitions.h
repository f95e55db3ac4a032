// The training-job definitions of a tuning job, in one shape for both forms SageMaker accepts:
// a single TrainingJobDefinition, whose objective and ranges are in HyperParameterTuningJobConfig,
// or TrainingJobDefinitions (multi-algorithm tuning, 1-10 definitions), each with its own
// TuningObjective and HyperParameterRanges. Works on a CreateHyperParameterTuningJobRequest and on
// a DescribeHyperParameterTuningJobResponse alike (both have the three members). Pure.
#ifndef AMT_ORCHESTRATOR_VALIDATION_DEFINITIONS_H_
#define AMT_ORCHESTRATOR_VALIDATION_DEFINITIONS_H_

#include <string>

#include "amt/v1/tuning.pb.h"

namespace amt::validation {

// One definition with the objective and ranges that apply to it.
struct DefinitionView {
  const v1::HyperParameterTrainingJobDefinition& definition;
  const v1::HyperParameterTuningJobObjective& objective;
  const v1::ParameterRanges& ranges;
};

// Whether the tuning job uses TrainingJobDefinitions.
template <typename TuningJob>
bool IsMultiAlgorithm(const TuningJob& t) {
  return t.training_job_definitions_size() > 0;
}

// Number of definitions: that of TrainingJobDefinitions, else 1.
template <typename TuningJob>
int DefinitionCount(const TuningJob& t) {
  return IsMultiAlgorithm(t) ? t.training_job_definitions_size() : 1;
}

// The `index`-th (0-based) definition. An index out of range reads as 0 (a damaged record must
// not crash amtd; validation keeps every index in range).
template <typename TuningJob>
DefinitionView DefinitionAt(const TuningJob& t, int index) {
  if (!IsMultiAlgorithm(t)) {
    const auto& config = t.hyper_parameter_tuning_job_config();
    return {t.training_job_definition(), config.hyper_parameter_tuning_job_objective(),
            config.parameter_ranges()};
  }
  if (index < 0 || index >= t.training_job_definitions_size()) index = 0;
  const v1::HyperParameterTrainingJobDefinition& d = t.training_job_definitions(index);
  return {d, d.tuning_objective(), d.hyper_parameter_ranges()};
}

// Minimize or Maximize: the order of all the tuning job's training jobs (BestTrainingJob, the 1%
// rule, early stopping). Validation makes every definition's TuningObjective.Type the same.
template <typename TuningJob>
const std::string& ObjectiveTypeOf(const TuningJob& t) {
  return DefinitionAt(t, 0).objective.type();
}

}  // namespace amt::validation

#endif  // AMT_ORCHESTRATOR_VALIDATION_DEFINITIONS_H_
