// The job folder's view of a job for its trainer (JobDir, job_dir.h): its hosts as
// resourceconfig.json says them, and the environment (TRAINING_JOB_*, SM_*, AMT_*) over the
// request's Environment. Pure: no I/O.
#ifndef AMT_WORKER_JOB_ENVIRONMENT_H_
#define AMT_WORKER_JOB_ENVIRONMENT_H_

#include <map>
#include <string>
#include <vector>

#include "amt/v1/worker.pb.h"
#include "nlohmann/json.hpp"
#include "worker/job_dir.h"

namespace amt::worker {

// The job's hosts as a trainer sees them: resourceconfig.json and the SM_* variables that repeat
// it.
struct Cluster {
  std::string current_host;
  nlohmann::json hosts;  // every host's name
  // The hosts of a multi-instance job reach each other over loopback addresses.
  std::string network_interface;
  std::string instance_type;
  nlohmann::json resource_config;
};

// The hosts of `job` seen from `host`.
Cluster ClusterOf(const amt::v1::StartJob& job, const HostSpec& host);

// What the environment is built from, besides the request.
struct JobEnvironmentInputs {
  const JobDirOptions& options;
  const HostSpec& host;
  const JobPaths& paths;
  const Cluster& cluster;
  const std::vector<const amt::v1::ChannelAssignment*>& channels;
  const nlohmann::json& input_data_config;  // inputdataconfig.json
  bool in_container = false;  // the trainer runs in a container (JobDir::Create's in_container)
};

// The environment JobDir::environment() documents: the request's Environment, then ours on top
// (the thread caps only where the request sets none of them).
std::map<std::string, std::string> JobEnvironment(const amt::v1::StartJob& job,
                                                  const JobEnvironmentInputs& in);

}  // namespace amt::worker

#endif  // AMT_WORKER_JOB_ENVIRONMENT_H_
