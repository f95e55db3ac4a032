// The training toolkit's variables for the user's process in script mode (SM_USER_ENTRY_POINT,
// SM_MODULE_NAME, SM_USER_ARGS, SM_FRAMEWORK_PARAMS, SM_TRAINING_ENV, PYTHONPATH, ...), which
// amt-script-runner (script_runner.h) sets over the worker's SM_* variables.
// worker/script_runner/TOOLKIT.md has each rule and its source.
#ifndef AMT_WORKER_SCRIPT_RUNNER_TOOLKIT_ENVIRONMENT_H_
#define AMT_WORKER_SCRIPT_RUNNER_TOOLKIT_ENVIRONMENT_H_

#include <map>
#include <string>
#include <vector>

namespace amt::worker::script {

// The environment of the user's process: `environment` plus the toolkit's variables for
// `hyperparameters` (raw, as in hyperparameters.json), the code folder and the arguments.
std::map<std::string, std::string> ToolkitEnvironment(
    const std::map<std::string, std::string>& environment,
    const std::map<std::string, std::string>& hyperparameters, const std::string& code_dir,
    const std::vector<std::string>& user_args);

// The module an entry point names, as `python -m` takes it: `program` without its ".py".
std::string ModuleName(const std::string& program);

}  // namespace amt::worker::script

#endif  // AMT_WORKER_SCRIPT_RUNNER_TOOLKIT_ENVIRONMENT_H_
