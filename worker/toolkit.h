// The SageMaker training toolkit's rules for a training script's inputs, shared by the job
// directory (SM_HPS, SM_HP_*) and the script runner (arguments, SM_USER_ARGS, FailureReason):
// what sagemaker-training-toolkit does inside a framework container, written from its source
// (worker/script_runner/TOOLKIT.md lists each rule with where it comes from).
#ifndef AMT_WORKER_TOOLKIT_H_
#define AMT_WORKER_TOOLKIT_H_

#include <map>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace amt::worker::toolkit {

// A hyperparameter's value as the toolkit reads hyperparameters.json: JSON-decoded when it is
// JSON ("5" -> 5, "\"adam\"" -> "adam", "[1, 2]" -> [1, 2]), else the string as it is.
nlohmann::json DecodeHyperparameter(const std::string& value);

// Hyperparameters the toolkit keeps for itself, out of the user's set (SM_HPS, SM_HP_*, the
// script's arguments): sagemaker_* and _tuning_objective_metric.
bool IsReservedHyperparameter(const std::string& name);

// The user's hyperparameters, decoded, by name.
nlohmann::json UserHyperparameters(const std::map<std::string, std::string>& hyperparameters);

// How the toolkit writes a decoded value as an argument, Python's str(): 5, 0.01, 1e-05, True,
// abc, [1, 'a', None], {'k': 1}; a null (None) as "".
std::string PythonStr(const nlohmann::json& value);

// The script's command-line arguments from the user's hyperparameters (a JSON object): names in
// sorted order, each "--name" ("-n" for a one-character name) then its value as PythonStr
// writes it; an object value as "k1=v1,k2=v2".
std::vector<std::string> ToCmdArgs(const nlohmann::json& user_hyperparameters);

// What the toolkit reports when a process it ran failed (ExecuteUserScriptError for the script,
// InstallRequirementsError for pip):
//   <error_type>:
//   ExitCode <exit_code>
//   ErrorMessage "<message>"
//   Command "<command joined by spaces>"
// (TK errors.py `_CalledProcessError.__str__`).
std::string ProcessErrorMessage(const std::string& error_type, int exit_code,
                                const std::string& message,
                                const std::vector<std::string>& command);

// The ErrorMessage the toolkit takes from a failed script's output when it captures it (the
// PyTorch container does; TK process.py `watch`, `check_error`): from the first line that names
// a Python exception class ("ValueError", "Exception", ..., or "Invalid requirement"), every
// line to the end, each stripped of spaces and colons at both ends and the lines joined by
// "\n " (the toolkit's " ".join of "line\n" pieces), repeated lines dropped, the whole
// stripped. "" when no line names one.
std::string ErrorMessageFromOutput(const std::string& output);

}  // namespace amt::worker::toolkit

#endif  // AMT_WORKER_TOOLKIT_H_
