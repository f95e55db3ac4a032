#include "worker/script_runner/toolkit_environment.h"

#include <cctype>
#include <set>

#include "nlohmann/json.hpp"
#include "worker/toolkit.h"

namespace amt::worker::script {
namespace {

using nlohmann::json;
using Environment = std::map<std::string, std::string>;

constexpr char kHost[] = "algo-1";
constexpr char kGroup[] = "homogeneousCluster";

std::string Get(const Environment& map, const std::string& key, const std::string& fallback = "") {
  const auto it = map.find(key);
  return it == map.end() ? fallback : it->second;
}

// A decoded value as the toolkit writes it into a variable: a string as it is, null as "".
std::string Text(const json& value) {
  return value.is_string() ? value.get<std::string>() : (value.is_null() ? "" : value.dump());
}

// What the toolkit reads from the sagemaker_* hyperparameters, and the user's.
struct ToolkitHyperparameters {
  std::string program;                     // sagemaker_program
  std::string module_dir;                  // sagemaker_submit_directory
  json framework_params = json::object();  // the other sagemaker_* ones but the reserved
  json log_level;                          // sagemaker_container_log_level; null when not set
  std::string job_name;                    // sagemaker_job_name
  std::string region;                      // sagemaker_region
  json user;                               // the user's, decoded
};

ToolkitHyperparameters ReadToolkitHyperparameters(const Environment& hyperparameters) {
  const auto decoded = [&](const std::string& name) -> json {
    const auto it = hyperparameters.find(name);
    return it == hyperparameters.end() ? json() : toolkit::DecodeHyperparameter(it->second);
  };
  ToolkitHyperparameters hps;
  hps.program = Text(decoded("sagemaker_program"));
  hps.module_dir = Text(decoded("sagemaker_submit_directory"));
  static const std::set<std::string> kReserved = {
      "sagemaker_program",  "sagemaker_submit_directory",    "sagemaker_enable_cloudwatch_metrics",
      "sagemaker_region",   "sagemaker_container_log_level", "sagemaker_job_name",
      "sagemaker_s3_output"};
  for (const auto& [name, value] : hyperparameters) {
    if (name.rfind("sagemaker_", 0) == 0 && kReserved.count(name) == 0) {
      hps.framework_params[name] = toolkit::DecodeHyperparameter(value);
    }
  }
  hps.log_level = decoded("sagemaker_container_log_level");
  hps.job_name = Text(decoded("sagemaker_job_name"));
  hps.region = Text(decoded("sagemaker_region"));
  hps.user = toolkit::UserHyperparameters(hyperparameters);
  return hps;
}

// The variables the toolkit sets one by one (SM_TRAINING_ENV repeats them).
void AddToolkitVariables(const Environment& environment, const ToolkitHyperparameters& hps,
                         const std::string& code_dir, const std::vector<std::string>& user_args,
                         Environment& env) {
  env["SM_USER_ENTRY_POINT"] = hps.program;
  env["SM_MODULE_NAME"] = ModuleName(hps.program);
  env["SM_MODULE_DIR"] = hps.module_dir.empty() ? code_dir : hps.module_dir;
  env["SM_FRAMEWORK_PARAMS"] = hps.framework_params.dump();
  env["SM_LOG_LEVEL"] = hps.log_level.is_null() ? "20" : Text(hps.log_level);
  env["SM_FRAMEWORK_MODULE"] = Get(environment, "SAGEMAKER_TRAINING_MODULE");
  env["SM_USER_ARGS"] = json(user_args).dump();
  env["SM_HPS"] = hps.user.dump();
  env["SM_CURRENT_INSTANCE_GROUP"] = kGroup;
  env["SM_CURRENT_INSTANCE_GROUP_HOSTS"] = json::array({kHost}).dump();
  env["SM_INSTANCE_GROUPS"] = json::array({kGroup}).dump();
  env["SM_INSTANCE_GROUPS_DICT"] = json{
      {kGroup,
       {{"instance_group_name", kGroup},
        {"instance_type", Get(environment, "SM_CURRENT_INSTANCE_TYPE", "local")},
        {"hosts",
         json::array({kHost})}}}}.dump();
  env["SM_DISTRIBUTION_INSTANCE_GROUPS"] = "[]";
  env["SM_IS_HETERO"] = "false";
  env["SM_NUM_NEURONS"] = "0";
  env["SAGEMAKER_JOB_NAME"] = hps.job_name;
  env["CURRENT_HOST"] = Get(environment, "SM_CURRENT_HOST", kHost);
  env["SAGEMAKER_REGION"] = hps.region;
  const std::string pythonpath = Get(environment, "PYTHONPATH");
  env["PYTHONPATH"] = pythonpath.empty() ? code_dir : code_dir + ":" + pythonpath;
}

// channel_input_dirs: SM_CHANNEL_<NAME>'s folder by lower-case name.
json ChannelInputDirs(const Environment& env) {
  json channel_dirs = json::object();
  for (const auto& [key, value] : env) {
    if (key.rfind("SM_CHANNEL_", 0) == 0 && key != "SM_CHANNELS") {
      std::string name = key.substr(11);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      channel_dirs[name] = value;
    }
  }
  return channel_dirs;
}

// SM_TRAINING_ENV: the toolkit's Environment properties, from the variables `env` has.
json TrainingEnv(Environment& env, const ToolkitHyperparameters& hps) {
  const auto parsed = [&](const std::string& name, json fallback) {
    const json value = json::parse(Get(env, name), nullptr, /*allow_exceptions=*/false);
    return value.is_discarded() ? fallback : value;
  };
  const json hosts = parsed("SM_HOSTS", json::array({kHost}));
  return {{"additional_framework_parameters", hps.framework_params},
          {"channel_input_dirs", ChannelInputDirs(env)},
          {"current_host", env["CURRENT_HOST"]},
          {"current_instance_group", kGroup},
          {"current_instance_group_hosts", json::array({kHost})},
          {"current_instance_type", Get(env, "SM_CURRENT_INSTANCE_TYPE", "local")},
          {"distribution_hosts", json::array()},
          {"distribution_instance_groups", json::array()},
          {"framework_module", env["SM_FRAMEWORK_MODULE"]},
          {"hosts", hosts},
          {"hyperparameters", hps.user},
          {"input_config_dir", Get(env, "SM_INPUT_CONFIG_DIR")},
          {"input_data_config", parsed("SM_INPUT_DATA_CONFIG", json::object())},
          {"input_dir", Get(env, "SM_INPUT_DIR")},
          {"instance_groups", json::array({kGroup})},
          {"instance_groups_dict", parsed("SM_INSTANCE_GROUPS_DICT", json::object())},
          {"is_hetero", false},
          {"is_master", hosts.empty() || hosts[0] == env["CURRENT_HOST"]},
          {"is_modelparallel_enabled", nullptr},
          {"is_smddpmprun_installed", false},
          {"is_smddprun_installed", false},
          {"job_name", Get(env, "TRAINING_JOB_NAME")},
          {"log_level", parsed("SM_LOG_LEVEL", 20)},
          {"master_hostname", hosts.empty() ? json(kHost) : hosts[0]},
          {"model_dir", Get(env, "SM_MODEL_DIR")},
          {"module_dir", env["SM_MODULE_DIR"]},
          {"module_name", env["SM_MODULE_NAME"]},
          {"network_interface_name", Get(env, "SM_NETWORK_INTERFACE_NAME", "eth0")},
          {"num_cpus", parsed("SM_NUM_CPUS", 1)},
          {"num_gpus", parsed("SM_NUM_GPUS", 0)},
          {"num_neurons", 0},
          {"output_data_dir", Get(env, "SM_OUTPUT_DATA_DIR")},
          {"output_dir", Get(env, "SM_OUTPUT_DIR")},
          {"output_intermediate_dir", Get(env, "SM_OUTPUT_INTERMEDIATE_DIR")},
          {"resource_config", parsed("SM_RESOURCE_CONFIG", json::object())},
          {"user_entry_point", hps.program}};
}

}  // namespace

std::map<std::string, std::string> ToolkitEnvironment(
    const std::map<std::string, std::string>& environment,
    const std::map<std::string, std::string>& hyperparameters, const std::string& code_dir,
    const std::vector<std::string>& user_args) {
  std::map<std::string, std::string> env = environment;
  const ToolkitHyperparameters hps = ReadToolkitHyperparameters(hyperparameters);
  AddToolkitVariables(environment, hps, code_dir, user_args, env);
  env["SM_TRAINING_ENV"] = TrainingEnv(env, hps).dump();
  return env;
}

std::string ModuleName(const std::string& program) {
  return program.ends_with(".py") ? program.substr(0, program.size() - 3) : program;
}

}  // namespace amt::worker::script
