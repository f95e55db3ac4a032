// Script mode's step 3: the training code's dependencies (requirements.txt, or the code as a
// package with setup.py), installed with pip as the SageMaker training toolkit does, but into a
// virtual environment of the job rather than the interpreter itself.
//
// Why: a distribution's system Python (Debian's /usr/bin/python3, the interpreter the
// examples run with) is externally managed (PEP 668): pip refuses to install into it, even a
// requirements file whose packages are all there. The job's environment (<job>/venv) is made with
// --system-site-packages, so what the interpreter has is found ("Requirement already satisfied":
// nothing downloaded, works offline), and what pip adds lands in the job's folder, never in the
// system. The user's code then runs with the environment's interpreter, its bin/ first on PATH
// and VIRTUAL_ENV set, as `source venv/bin/activate` would.
#ifndef AMT_WORKER_SCRIPT_RUNNER_REQUIREMENTS_H_
#define AMT_WORKER_SCRIPT_RUNNER_REQUIREMENTS_H_

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace amt::worker::script {

// What a child process did (exit code as Python's Popen reports it, the tail of its standard
// error, and why it could not start, if it could not).
struct ProcessResult {
  int exit_code = 0;
  std::string stderr_tail;
  std::string launch_error;
};
using RunFn =
    std::function<ProcessResult(const std::vector<std::string>& argv, const std::string& cwd,
                                const std::map<std::string, std::string>& env)>;

struct DependencyPlan {
  std::string python;              // the job's interpreter
  std::filesystem::path code_dir;  // where requirements.txt (or setup.py) is; pip's cwd
  std::filesystem::path venv_dir;  // the environment to make
  bool package = false;            // the entry point is a package: `pip install .`
  bool requirements = false;       // code_dir has requirements.txt
};

// pip's own reasons from its standard error: its "ERROR: " lines without the prefix, joined as
// the toolkit joins lines ("\n "), so the FailureReason names the package and why before pip's
// retry warnings; else toolkit::ErrorMessageFromOutput; else the last line that is not empty.
std::string PipErrorMessage(const std::string& output);

// Installs the plan's dependencies, if it has any, into a new virtual environment at
// plan.venv_dir; then `python` becomes the environment's interpreter and `env` gets VIRTUAL_ENV,
// its bin/ first on PATH and no PYTHONHOME. Returns the FailureReason when a step failed:
// InstallRequirementsError (requirements.txt) or InstallModuleError (a package), in the
// toolkit's shape (toolkit::ProcessErrorMessage). Nothing to install: nothing changes.
std::optional<std::string> InstallDependencies(const DependencyPlan& plan, const RunFn& run,
                                               std::string& python,
                                               std::map<std::string, std::string>& env);

}  // namespace amt::worker::script

#endif  // AMT_WORKER_SCRIPT_RUNNER_REQUIREMENTS_H_
