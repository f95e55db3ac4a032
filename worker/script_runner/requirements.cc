#include "worker/script_runner/requirements.h"

#include <sstream>
#include <string_view>

#include "worker/toolkit.h"

namespace amt::worker::script {
namespace fs = std::filesystem;
namespace {

std::string LastLine(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::string last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return last;
}

}  // namespace

std::string PipErrorMessage(const std::string& output) {
  constexpr std::string_view kPrefix = "ERROR: ";
  std::istringstream in(output);
  std::string line;
  std::string joined;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.starts_with(kPrefix)) continue;
    if (!joined.empty()) joined += "\n ";
    joined += line.substr(kPrefix.size());
  }
  if (!joined.empty()) return joined;
  std::string message = toolkit::ErrorMessageFromOutput(output);
  if (!message.empty()) return message;
  return LastLine(output);
}

std::optional<std::string> InstallDependencies(const DependencyPlan& plan, const RunFn& run,
                                               std::string& python,
                                               std::map<std::string, std::string>& env) {
  std::vector<std::string> pip_args;
  std::string error_type;
  if (plan.package) {
    pip_args = {"install", "."};
    if (plan.requirements) pip_args.insert(pip_args.end(), {"-r", "requirements.txt"});
    error_type = "InstallModuleError";
  } else if (plan.requirements) {
    pip_args = {"install", "-r", "requirements.txt"};
    error_type = "InstallRequirementsError";
  } else {
    return std::nullopt;
  }

  // pip comes from the interpreter's own packages (--system-site-packages): Debian leaves
  // ensurepip out of its Python, so the environment is made without one of its own.
  const std::vector<std::string> make = {
      plan.python, "-m", "venv", "--system-site-packages", "--without-pip", plan.venv_dir.string()};
  const ProcessResult made = run(make, plan.code_dir.string(), env);
  if (!made.launch_error.empty() || made.exit_code != 0) {
    const std::string why =
        made.launch_error.empty() ? LastLine(made.stderr_tail) : made.launch_error;
    return toolkit::ProcessErrorMessage(
        error_type, made.exit_code,
        "cannot make a virtual environment for the job's packages: " + why, make);
  }
  const fs::path bin = plan.venv_dir / "bin";
  python = (bin / "python").string();
  env["VIRTUAL_ENV"] = plan.venv_dir.string();
  const auto path = env.find("PATH");
  env["PATH"] = bin.string() + ":" + (path == env.end() ? "/usr/bin:/bin" : path->second);
  env.erase("PYTHONHOME");

  std::vector<std::string> install = {python, "-m", "pip"};
  install.insert(install.end(), pip_args.begin(), pip_args.end());
  const ProcessResult installed = run(install, plan.code_dir.string(), env);
  if (!installed.launch_error.empty()) {
    return toolkit::ProcessErrorMessage(error_type, installed.exit_code, installed.launch_error,
                                        install);
  }
  if (installed.exit_code != 0) {
    return toolkit::ProcessErrorMessage(error_type, installed.exit_code,
                                        PipErrorMessage(installed.stderr_tail), install);
  }
  return std::nullopt;
}

}  // namespace amt::worker::script
