// SageMaker's ML instance types ("ml.m5.xlarge") as vCPUs, memory and GPUs. Pure.
#ifndef AMT_COMMON_INSTANCE_TYPE_H_
#define AMT_COMMON_INSTANCE_TYPE_H_

#include <optional>
#include <string_view>

namespace amt {

// What an ML instance type is made of: what a Slurm job asks for (orchestrator/executor) and
// what a training container is given (worker/container_engine.h).
struct InstanceResources {
  int vcpus = 0;
  int memory_gib = 0;
  int gpus = 0;
};
// From the type's size (large: 2 vCPUs, xlarge: 4, Nxlarge: 4N, medium: 2) and family (memory
// per vCPU: c 2 GiB, m and t 4 GiB, r and x 8 GiB and more; GPUs from the SageMaker Python SDK's
// instance_gpu_info.json). nullopt for a type it cannot read ("ml.foo").
std::optional<InstanceResources> ResourcesOf(std::string_view instance_type);

}  // namespace amt

#endif  // AMT_COMMON_INSTANCE_TYPE_H_
