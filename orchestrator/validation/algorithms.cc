#include "orchestrator/validation/algorithms.h"

#include <map>

namespace amt::validation {
namespace {

// A number as SageMaker's built-in regexes capture it (group 1).
constexpr char kNumber[] = "([-+]?[0-9]*\\.?[0-9]+(?:[eE][-+]?[0-9]+)?)";

}  // namespace

std::string FrameworkOfImage(const std::string& image) {
  const size_t slash = image.find('/');
  if (slash == std::string::npos) return "";
  if (image.substr(0, slash).find(".dkr.ecr.") == std::string::npos) return "";
  std::string repository = image.substr(slash + 1);
  repository = repository.substr(0, repository.find_first_of(":@"));
  static const std::map<std::string, std::string> kFrameworks = {
      {"sagemaker-scikit-learn", "sklearn"},
      {"sagemaker-xgboost", "xgboost"},
      {"xgboost", "xgboost"},
      {"pytorch-training", "pytorch"},
      {"sagemaker-pytorch", "pytorch"},
      {"tensorflow-training", "tensorflow"},
      {"sagemaker-tensorflow-scriptmode", "tensorflow"},
      {"sagemaker-tensorflow", "tensorflow"},
      {"huggingface-pytorch-training", "huggingface"},
      {"huggingface-tensorflow-training", "huggingface"},
      {"mxnet-training", "mxnet"},
      {"sagemaker-mxnet", "mxnet"}};
  const auto it = kFrameworks.find(repository);
  return it == kFrameworks.end() ? "" : it->second;
}

bool IsBuiltInXgboost(const std::string& image,
                      const google::protobuf::Map<std::string, std::string>& hyperparameters) {
  return FrameworkOfImage(image) == "xgboost" && !hyperparameters.contains("sagemaker_program");
}

std::vector<v1::MetricDefinition> BuiltInXgboostMetricDefinitions() {
  static const char* const kTrain[] = {
      "mae",  "accuracy", "mse",   "error", "ndcg", "f1_binary", "auc", "poisson-nloglik",
      "rmse", "logloss",  "aucpr", "f1",    "map"};
  static const char* const kValidation[] = {"aucpr",
                                            "f1_binary",
                                            "mae",
                                            "logloss",
                                            "f1",
                                            "recall",
                                            "poisson-nloglik",
                                            "precision",
                                            "map",
                                            "auc",
                                            "error",
                                            "accuracy",
                                            "balanced_accuracy",
                                            "rmse",
                                            "mse",
                                            "ndcg"};
  std::vector<v1::MetricDefinition> definitions;
  const auto add = [&](const std::string& channel, const std::string& metric) {
    v1::MetricDefinition definition;
    definition.set_name(channel + ":" + metric);
    definition.set_regex(".*\\[[0-9]+\\].*#011" + channel + "-" + metric + ":" + kNumber + ".*");
    definitions.push_back(std::move(definition));
  };
  for (const char* metric : kTrain) add("train", metric);
  for (const char* metric : kValidation) add("validation", metric);
  return definitions;
}

namespace {

void AddBuiltInMetricDefinitions(v1::HyperParameterTrainingJobDefinition& definition,
                                 const std::string& objective) {
  v1::HyperParameterAlgorithmSpecification& spec = *definition.mutable_algorithm_specification();
  if (spec.metric_definitions_size() > 0 ||
      !IsBuiltInXgboost(spec.training_image(), definition.static_hyper_parameters())) {
    return;
  }
  std::string objective_regex;
  for (const v1::MetricDefinition& metric : BuiltInXgboostMetricDefinitions()) {
    *spec.add_metric_definitions() = metric;
    if (metric.name() == objective) objective_regex = metric.regex();
  }
  if (!objective_regex.empty()) {
    v1::MetricDefinition* repeat = spec.add_metric_definitions();
    repeat->set_name("ObjectiveMetric");
    repeat->set_regex(objective_regex);
  }
}

}  // namespace

void AddBuiltInMetricDefinitions(v1::CreateHyperParameterTuningJobRequest& request) {
  if (request.has_training_job_definition()) {
    AddBuiltInMetricDefinitions(*request.mutable_training_job_definition(),
                                request.hyper_parameter_tuning_job_config()
                                    .hyper_parameter_tuning_job_objective()
                                    .metric_name());
  }
  for (v1::HyperParameterTrainingJobDefinition& definition :
       *request.mutable_training_job_definitions()) {
    const std::string objective = definition.tuning_objective().metric_name();
    AddBuiltInMetricDefinitions(definition, objective);
  }
}

void AddBuiltInMetricDefinitions(v1::CreateTrainingJobRequest& request) {
  v1::AlgorithmSpecification& spec = *request.mutable_algorithm_specification();
  if (spec.metric_definitions_size() > 0 ||
      !IsBuiltInXgboost(spec.training_image(), request.hyper_parameters())) {
    return;
  }
  for (const v1::MetricDefinition& metric : BuiltInXgboostMetricDefinitions()) {
    *spec.add_metric_definitions() = metric;
  }
}

}  // namespace amt::validation
