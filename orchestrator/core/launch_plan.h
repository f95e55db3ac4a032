// How a training job becomes a process on a worker: TrainingImage -> argv through the image map,
// s3:// URIs -> folders under the local S3 root, and the StartJob message that carries it all.
// Pure functions (file checks are injected).
#ifndef AMT_ORCHESTRATOR_CORE_LAUNCH_PLAN_H_
#define AMT_ORCHESTRATOR_CORE_LAUNCH_PLAN_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "amt/v1/state.pb.h"
#include "amt/v1/worker.pb.h"

namespace amt::core {

// Image URI -> argv prefix. A real ECR URI in a job file runs a local trainer this way.
using ImageMap = std::map<std::string, std::vector<std::string>>;

// Parses an image-map JSON object {"image": ["/path/to/exe", "arg", ...] | "/path/to/exe"}.
// `${IMAGE_MAP_DIR}` in a value is replaced by `map_dir` (the folder of the map file) and
// `${AMT_BIN}` by `bin_dir` (the folder of the amt executables). InvalidArgument on bad JSON.
absl::StatusOr<ImageMap> ParseImageMap(const std::string& json, const std::string& map_dir,
                                       const std::string& bin_dir);

struct LaunchOptions {
  // Folder standing for S3: s3://bucket/key is <s3_root>/bucket/key.
  std::string s3_root;
  ImageMap image_map;
  // The script-mode runner (amt-script-runner, next to amt-worker) that framework images run as,
  // and the Python interpreter for each framework ("sklearn", "xgboost", "pytorch", "tensorflow",
  // "huggingface", "mxnet"); a framework not in the map gets `default_python`.
  std::string script_runner;
  std::map<std::string, std::string> python_for_framework;
  std::string default_python = "python3";
  // Whether a path names an executable file (injected: the real check is a stat()).
  std::function<bool(const std::string&)> is_executable;
  // Workers may run training images as containers (amtd --container-runtime is not none): an
  // image that is neither in the image map nor an executable goes to the worker as
  // StartJob.container, with the command it would run otherwise (none: the worker fails the job
  // when its engine lacks the image too).
  bool containers = false;
};

// One `--python` value: `PATH` sets the default interpreter, `FRAMEWORK=PATH` that framework's.
void SetPython(LaunchOptions& options, const std::string& value);

// s3://bucket/key -> <s3_root>/bucket/key; file:///x and plain paths are kept as they are.
std::string MapUri(const std::string& uri, const std::string& s3_root);

// argv for the job: the image map entry for TrainingImage (exact match), else TrainingImage
// itself when it names an executable file, else, for a framework image
// (validation::FrameworkOfImage), the
// script runner: `<script_runner> --python <interpreter> --s3-root <s3_root> --framework <name>`.
// ContainerEntrypoint replaces that command and ContainerArguments replace the default argument
// `train`. InvalidArgument (a ClientError for the job) when the image cannot be resolved.
absl::StatusOr<std::vector<std::string>> ResolveCommand(const v1::AlgorithmSpecification& spec,
                                                        const LaunchOptions& options);

// <S3OutputPath>/<job>/output/model.tar.gz, as SageMaker names it.
std::string ModelArtifactUri(const v1::DescribeTrainingJobResponse& job);

// The StartJob for the record's current attempt. Errors as ResolveCommand, unless
// `options.containers` (see there).
absl::StatusOr<v1::StartJob> PlanLaunch(const v1::TrainingJobRecord& job,
                                        const LaunchOptions& options);

}  // namespace amt::core

#endif  // AMT_ORCHESTRATOR_CORE_LAUNCH_PLAN_H_
