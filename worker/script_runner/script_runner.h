// amt-script-runner: what the SageMaker training toolkit does inside a framework container
// (scikit-learn, PyTorch, XGBoost, TensorFlow, Hugging Face images), for a job amt-worker runs as
// a process: the framework estimators' "script mode". amtd runs a framework image's job as
// `amt-script-runner --python PY --s3-root DIR --framework NAME train` (core/launch_plan.h), and
// the worker gives it the job's emulated /opt/ml through the SM_* variables, as to any trainer.
//
// As the toolkit does (worker/script_runner/TOOLKIT.md has each rule and its source):
//  1. reads input/config/hyperparameters.json; `sagemaker_program` names the entry point,
//     `sagemaker_submit_directory` the code: an s3:// URI (a file under the S3 root), a file://
//     URI or a path, a tar.gz archive (the SDK's sourcedir.tar.gz) or a folder;
//  2. unpacks it into <job dir>/code (the container's /opt/ml/code) unless that holds files,
//     refusing members that would land outside it (or pass through a symbolic link), and at
//     most the job's volume: AMT_VOLUME_SIZE_GB (the worker's StartJob.volume_size_gb, the
//     job's VolumeSizeInGB) GB, 30 GB (SageMaker's default volume) when it is not set. A full
//     disk is a failure that says "No space left on device" and the job folder; what was
//     unpacked is removed, which makes room for output/failure;
//  3. installs requirements.txt with `<python> -m pip install -r requirements.txt` (a package
//     with setup.py: `pip install .`), unless --no-requirements;
//  4. opens the entry point beneath the code folder, refusing an absolute path, a ".." segment
//     and a symbolic link anywhere on its path (ClientError naming the program; nothing is
//     chmodded), then runs `<python> <program> --name value ...` (a .sh or other file: `/bin/sh -c
//     "./program args"`; a package: `<python> -m <module> args`) in the code folder, the user's
//     hyperparameters as arguments (sorted, values as Python's str() of their JSON) and the
//     toolkit's variables (SM_USER_ENTRY_POINT, SM_MODULE_NAME, SM_USER_ARGS, SM_TRAINING_ENV,
//     SM_FRAMEWORK_PARAMS, SM_LOG_LEVEL, PYTHONPATH with the code folder first, ...);
//  5. when a step fails, writes output/failure as the toolkit does (unless the script wrote one):
//     "ExecuteUserScriptError:\nExitCode 1\nErrorMessage \"<from stderr>\"\nCommand \"...\""
//     (InstallRequirementsError, InstallModuleError for pip), and exits 1; amtd shows it as
//     "AlgorithmError: ...". On success it writes an empty output/success and exits 0.
// A job of the XGBoost image without sagemaker_program is the built-in XGBoost algorithm: the
// runner runs `<python> <xgboost_algorithm>` instead (xgboost_algorithm.py).
// The script's standard output and error pass through (they are the job's log); the error is
// also kept to build ErrorMessage, which is captured for every framework (the PyTorch
// container's behaviour; the scikit-learn one leaves it empty).
#ifndef AMT_WORKER_SCRIPT_RUNNER_SCRIPT_RUNNER_H_
#define AMT_WORKER_SCRIPT_RUNNER_SCRIPT_RUNNER_H_

#include <map>
#include <string>
#include <vector>

#include "worker/script_runner/toolkit_environment.h"  // ToolkitEnvironment
#include "worker/tar_gz.h"

namespace amt::worker::script {

struct ScriptRunnerOptions {
  std::string python = "python3";  // the interpreter; a name without '/' is looked up in PATH
  std::string s3_root;             // s3://bucket/key is <s3_root>/bucket/key
  std::string framework;           // "sklearn", "xgboost", "pytorch", ... (messages only)
  bool install_requirements = true;
  // The built-in XGBoost algorithm (xgboost_algorithm.py, installed next to the runner as
  // amt-xgboost-algorithm.py): run with `python` for an XGBoost image's job without an entry
  // point.
  std::string xgboost_algorithm;
  // How the code's files are written as sourcedir.tar.gz is unpacked (ExtractOptions::write);
  // null: ::write. A fault seam: tests fill the disk with it.
  WriteFn unpack_write;
};

// Runs the job in the current environment (`environment`: the process's, with the worker's
// SM_* variables). Returns the runner's exit code: 0, or 1 when a step failed (output/failure
// says why).
int RunScriptMode(const ScriptRunnerOptions& options,
                  const std::map<std::string, std::string>& environment);

}  // namespace amt::worker::script

#endif  // AMT_WORKER_SCRIPT_RUNNER_SCRIPT_RUNNER_H_
