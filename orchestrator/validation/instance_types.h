// The ML instance types a training job may name (ResourceConfig.InstanceType,
// HyperParameterTuningInstanceConfig.InstanceType, InstanceGroup.InstanceType): botocore's
// TrainingInstanceType enum, generated into instance_types.cc by scripts/gen-instance-types.py.
#ifndef AMT_ORCHESTRATOR_VALIDATION_INSTANCE_TYPES_H_
#define AMT_ORCHESTRATOR_VALIDATION_INSTANCE_TYPES_H_

#include <string>
#include <vector>

namespace amt::validation {

const std::vector<std::string>& TrainingInstanceTypes();

}  // namespace amt::validation

#endif  // AMT_ORCHESTRATOR_VALIDATION_INSTANCE_TYPES_H_
