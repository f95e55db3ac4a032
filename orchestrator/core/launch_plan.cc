#include "orchestrator/core/launch_plan.h"

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "common/errors.h"
#include "orchestrator/validation/algorithms.h"

namespace amt::core {
namespace {

std::string StripTrailingSlash(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string Expand(const std::string& value, const std::string& map_dir,
                   const std::string& bin_dir) {
  return absl::StrReplaceAll(value, {{"${IMAGE_MAP_DIR}", map_dir}, {"${AMT_BIN}", bin_dir}});
}

// A string hyperparameter as the SageMaker SDK writes it (JSON-encoded: "\"s3://...\"") or as
// a user may (the bare text): the string, "" when there is none.
std::string StringHyperparameter(const google::protobuf::Map<std::string, std::string>& hps,
                                 const std::string& name) {
  const auto it = hps.find(name);
  if (it == hps.end()) return "";
  const auto decoded = nlohmann::json::parse(it->second, nullptr, /*allow_exceptions=*/false);
  if (!decoded.is_discarded() && decoded.is_string()) return decoded.get<std::string>();
  return it->second;
}

}  // namespace

absl::StatusOr<ImageMap> ParseImageMap(const std::string& json, const std::string& map_dir,
                                       const std::string& bin_dir) {
  const auto doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return ValidationError("image map: expected a JSON object of image -> command");
  }
  ImageMap map;
  for (const auto& [image, value] : doc.items()) {
    std::vector<std::string> argv;
    if (value.is_string()) {
      argv.push_back(Expand(value.get<std::string>(), map_dir, bin_dir));
    } else if (value.is_array() && !value.empty()) {
      for (const auto& part : value) {
        if (!part.is_string())
          return ValidationError("image map: '" + image + "': arguments must be strings");
        argv.push_back(Expand(part.get<std::string>(), map_dir, bin_dir));
      }
    } else {
      return ValidationError("image map: '" + image + "': expected a path or a list of arguments");
    }
    map.emplace(image, std::move(argv));
  }
  return map;
}

void SetPython(LaunchOptions& options, const std::string& value) {
  const size_t equals = value.find('=');
  if (equals == std::string::npos) {
    options.default_python = value;
  } else {
    options.python_for_framework[value.substr(0, equals)] = value.substr(equals + 1);
  }
}

std::string MapUri(const std::string& uri, const std::string& s3_root) {
  if (absl::StartsWith(uri, "s3://")) {
    return StripTrailingSlash(s3_root) + "/" + StripTrailingSlash(uri.substr(5));
  }
  if (absl::StartsWith(uri, "file://")) return uri.substr(7);
  return uri;
}

absl::StatusOr<std::vector<std::string>> ResolveCommand(const v1::AlgorithmSpecification& spec,
                                                        const LaunchOptions& options) {
  std::vector<std::string> argv;
  const std::string& image = spec.training_image();
  if (spec.container_entrypoint_size() > 0) {
    argv.assign(spec.container_entrypoint().begin(), spec.container_entrypoint().end());
  } else if (auto it = options.image_map.find(image); it != options.image_map.end()) {
    argv = it->second;
  } else if (!image.empty() && options.is_executable && options.is_executable(image)) {
    argv.push_back(image);
  } else if (const std::string framework = validation::FrameworkOfImage(image);
             !framework.empty() && !options.script_runner.empty()) {
    const auto python = options.python_for_framework.find(framework);
    argv = {options.script_runner,
            "--python",
            python != options.python_for_framework.end() ? python->second : options.default_python,
            "--s3-root",
            options.s3_root,
            "--framework",
            framework};
  } else {
    return ValidationError(
        "Cannot run the training image '" + image +
        "': it is neither an entry of the image map, nor an executable file, nor a SageMaker "
        "framework image (scikit-learn, XGBoost, PyTorch, TensorFlow, Hugging Face, MXNet) that "
        "amt-local runs in script mode. Add it to the image map (amtd --image-map FILE) or give "
        "the path of a local executable.");
  }
  if (spec.container_arguments_size() > 0) {
    argv.insert(argv.end(), spec.container_arguments().begin(), spec.container_arguments().end());
  } else if (spec.container_entrypoint_size() == 0) {
    argv.push_back("train");
  }
  return argv;
}

std::string ModelArtifactUri(const v1::DescribeTrainingJobResponse& job) {
  return StripTrailingSlash(job.output_data_config().s3_output_path()) + "/" +
         job.training_job_name() + "/output/model.tar.gz";
}

absl::StatusOr<v1::StartJob> PlanLaunch(const v1::TrainingJobRecord& job,
                                        const LaunchOptions& options) {
  const auto& d = job.describe();
  const v1::AlgorithmSpecification& algorithm = d.algorithm_specification();
  auto argv = ResolveCommand(algorithm, options);
  v1::StartJob start;
  const std::string& image = algorithm.training_image();
  if (options.containers && !image.empty() && options.image_map.count(image) == 0 &&
      !(options.is_executable && options.is_executable(image))) {
    v1::ContainerJob* container = start.mutable_container();
    container->set_image(image);
    *container->mutable_entrypoint() = algorithm.container_entrypoint();
    *container->mutable_arguments() = algorithm.container_arguments();
    container->set_network_isolation(d.enable_network_isolation());
    // Script mode: the code goes to /opt/ml/code (worker.proto's ContainerJob.code_path).
    const std::string submit =
        StringHyperparameter(d.hyper_parameters(), "sagemaker_submit_directory");
    if (!submit.empty()) {
      container->set_code_uri(submit);
      container->set_code_path(MapUri(submit, options.s3_root));
    }
    if (!argv.ok()) argv = std::vector<std::string>();
  }
  if (!argv.ok()) return argv.status();
  start.set_training_job_name(d.training_job_name());
  start.set_attempt(job.attempt());
  start.set_training_job_arn(d.training_job_arn());
  for (auto& a : *argv) start.add_command(a);
  *start.mutable_hyperparameters() = d.hyper_parameters();
  *start.mutable_environment() = d.environment();
  const std::string job_mode = d.algorithm_specification().has_training_input_mode()
                                   ? d.algorithm_specification().training_input_mode()
                                   : "File";
  start.set_input_mode(job_mode);
  for (const auto& ch : d.input_data_config()) {
    auto* c = start.add_channels();
    c->set_channel_name(ch.channel_name());
    c->set_local_path(MapUri(ch.data_source().s3_data_source().s3_uri(), options.s3_root));
    nlohmann::json cfg = nlohmann::json::object();
    if (ch.has_content_type()) cfg["ContentType"] = ch.content_type();
    cfg["TrainingInputMode"] = ch.has_input_mode() ? ch.input_mode() : job_mode;
    cfg["S3DistributionType"] = ch.data_source().s3_data_source().has_s3_data_distribution_type()
                                    ? ch.data_source().s3_data_source().s3_data_distribution_type()
                                    : "FullyReplicated";
    cfg["RecordWrapperType"] = ch.has_record_wrapper_type() ? ch.record_wrapper_type() : "None";
    c->set_input_config_json(cfg.dump());
  }
  const std::string out_dir =
      MapUri(StripTrailingSlash(d.output_data_config().s3_output_path()), options.s3_root) + "/" +
      d.training_job_name() + "/output";
  start.set_model_output_path(out_dir + "/model.tar.gz");
  start.set_output_data_path(out_dir + "/output.tar.gz");
  if (d.has_checkpoint_config() && d.checkpoint_config().has_s3_uri()) {
    start.set_checkpoint_local_sync_dir(MapUri(d.checkpoint_config().s3_uri(), options.s3_root));
    start.set_checkpoint_container_path(d.checkpoint_config().has_local_path()
                                            ? d.checkpoint_config().local_path()
                                            : "/opt/ml/checkpoints/");
  }
  start.set_instance_type(d.resource_config().instance_type());
  start.set_instance_count(
      d.resource_config().has_instance_count() ? d.resource_config().instance_count() : 1);
  return start;
}

}  // namespace amt::core
