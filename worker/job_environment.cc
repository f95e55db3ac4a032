#include "worker/job_environment.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include "worker/host_network.h"
#include "worker/toolkit.h"

namespace amt::worker {
using nlohmann::json;

namespace {

constexpr char kGroupName[] = "homogeneousCluster";

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

using Environment = std::map<std::string, std::string>;

// Numeric libraries (OpenMP in xgboost and torch, MKL, OpenBLAS) start a thread per CPU in every
// job: jobs side by side then spin-wait for each other's cores (three XGBoost jobs on two CPUs
// took 8x as long). Each job gets its share, unless its Environment says otherwise.
void AddThreadCaps(const amt::v1::StartJob& job, const JobDirOptions& options, Environment& env) {
  if (options.threads_per_job > 0 && !job.environment().contains("OMP_NUM_THREADS") &&
      !job.environment().contains("MKL_NUM_THREADS") &&
      !job.environment().contains("OPENBLAS_NUM_THREADS")) {
    for (const char* name : {"OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"}) {
      env[name] = std::to_string(options.threads_per_job);
    }
  }
}

// The job's identity and its folder's paths.
void AddJobAndPaths(const amt::v1::StartJob& job, const JobPaths& p, Environment& env) {
  env["TRAINING_JOB_NAME"] = job.training_job_name();
  env["TRAINING_JOB_ARN"] = job.training_job_arn();
  env["AMT_JOB_DIR"] = p.root.string();
  if (job.volume_size_gb() > 0) env["AMT_VOLUME_SIZE_GB"] = std::to_string(job.volume_size_gb());
  env["SM_MODEL_DIR"] = p.model.string();
  env["SM_INPUT_DIR"] = p.input.string();
  env["SM_INPUT_CONFIG_DIR"] = p.input_config.string();
  env["SM_OUTPUT_DIR"] = p.output.string();
  env["SM_OUTPUT_DATA_DIR"] = p.output_data.string();
  env["SM_OUTPUT_INTERMEDIATE_DIR"] = p.output_intermediate.string();
}

// The hosts, the instance and its resources.
void AddCluster(const JobEnvironmentInputs& in, Environment& env) {
  env["SM_CURRENT_HOST"] = in.cluster.current_host;
  env["SM_HOSTS"] = in.cluster.hosts.dump();
  if (!in.host.addresses.empty()) {
    json addresses = json::object();
    for (size_t i = 0; i < in.host.addresses.size(); ++i) {
      addresses[HostName(static_cast<int>(i) + 1)] = in.host.addresses[i];
    }
    env["AMT_HOST_ADDRESSES"] = addresses.dump();
  }
  env["SM_CURRENT_INSTANCE_TYPE"] = in.cluster.instance_type;
  env["SM_NETWORK_INTERFACE_NAME"] = in.cluster.network_interface;
  env["SM_NUM_CPUS"] = std::to_string(in.options.num_cpus);
  env["SM_NUM_GPUS"] = std::to_string(in.host.gpus ? in.host.gpus->size() : 0);
  if (in.host.gpus && !in.in_container) {
    // Indices as nvidia-smi numbers them, which is PCI bus order; CUDA's default order is
    // fastest first.
    std::string devices;
    for (const int gpu : *in.host.gpus)
      devices += (devices.empty() ? "" : ",") + std::to_string(gpu);
    env["CUDA_VISIBLE_DEVICES"] = devices;
    if (!devices.empty()) env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  }
  env["SM_RESOURCE_CONFIG"] = in.cluster.resource_config.dump();
}

void AddChannels(const JobEnvironmentInputs& in, Environment& env) {
  env["SM_INPUT_DATA_CONFIG"] = in.input_data_config.dump();
  std::set<std::string> names;  // sorted, as the toolkit does
  for (const auto* channel : in.channels) names.insert(channel->channel_name());
  env["SM_CHANNELS"] = json(names).dump();
  for (const auto* channel : in.channels) {
    env["SM_CHANNEL_" + Upper(channel->channel_name())] =
        (in.paths.input_data / channel->channel_name()).string();
  }
}

// The training toolkit JSON-decodes each hyperparameter value and keeps the raw string when
// that fails ("0.01" -> 0.01, "adam" -> "adam").
void AddHyperparameters(const amt::v1::StartJob& job, Environment& env) {
  json user_hyperparameters = json::object();
  for (const auto& [name, value] : job.hyperparameters()) {
    if (toolkit::IsReservedHyperparameter(name)) continue;
    json decoded = toolkit::DecodeHyperparameter(value);
    env["SM_HP_" + Upper(name)] = decoded.is_string() ? decoded.get<std::string>() : decoded.dump();
    user_hyperparameters[name] = std::move(decoded);
  }
  env["SM_HPS"] = user_hyperparameters.dump();
}

}  // namespace

Cluster ClusterOf(const amt::v1::StartJob& job, const HostSpec& host) {
  Cluster cluster;
  cluster.current_host = HostName(host.index);
  cluster.hosts = json::array();
  for (int i = 1; i <= host.count; ++i) cluster.hosts.push_back(HostName(i));
  // Loopback addresses for the hosts of one machine; a container's own interface otherwise.
  cluster.network_interface = host.addresses.empty() ? "eth0" : "lo";
  cluster.instance_type = job.instance_type().empty() ? "local" : job.instance_type();
  cluster.resource_config = {
      {"current_host", cluster.current_host},
      {"hosts", cluster.hosts},
      {"network_interface_name", cluster.network_interface},
      {"current_instance_type", cluster.instance_type},
      {"current_group_name", kGroupName},
      {"instance_groups", json::array({{{"instance_group_name", kGroupName},
                                        {"instance_type", cluster.instance_type},
                                        {"hosts", cluster.hosts}}})},
  };
  return cluster;
}

std::map<std::string, std::string> JobEnvironment(const amt::v1::StartJob& job,
                                                  const JobEnvironmentInputs& in) {
  Environment env;
  for (const auto& [key, value] : job.environment()) env[key] = value;
  AddThreadCaps(job, in.options, env);
  AddJobAndPaths(job, in.paths, env);
  AddCluster(in, env);
  AddChannels(in, env);
  AddHyperparameters(job, env);
  if (!in.paths.checkpoints.empty()) env["SM_CHECKPOINT_DIR"] = in.paths.checkpoints.string();
  return env;
}

}  // namespace amt::worker
