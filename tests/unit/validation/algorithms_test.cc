#include "orchestrator/validation/algorithms.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace amt::validation {
namespace {

TEST(FrameworkOfImage, ReadsTheSdksFrameworkImageUris) {
  EXPECT_EQ(FrameworkOfImage("683313688378.dkr.ecr.us-east-1.amazonaws.com/"
                             "sagemaker-scikit-learn:1.2-1-cpu-py3"),
            "sklearn");
  EXPECT_EQ(
      FrameworkOfImage("683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-xgboost:1.7-1"),
      "xgboost");
  EXPECT_EQ(FrameworkOfImage("763104351884.dkr.ecr.eu-west-1.amazonaws.com/"
                             "pytorch-training:2.1-cpu-py310"),
            "pytorch");
  EXPECT_EQ(FrameworkOfImage("727897471807.dkr.ecr.cn-north-1.amazonaws.com.cn/"
                             "tensorflow-training:2.13-cpu-py310"),
            "tensorflow");
  EXPECT_EQ(FrameworkOfImage("763104351884.dkr.ecr.us-east-1.amazonaws.com/"
                             "huggingface-pytorch-training@sha256:abc"),
            "huggingface");
  EXPECT_EQ(FrameworkOfImage("123.dkr.ecr.us-east-1.amazonaws.com/my-own-trainer:1"), "");
  EXPECT_EQ(FrameworkOfImage("sagemaker-scikit-learn:1.2-1"), "");  // not an ECR URI
  EXPECT_EQ(FrameworkOfImage("/usr/bin/python3"), "");
}

TEST(AddBuiltInMetricDefinitions, GivesTheBuiltInXgboostItsMetricsAndObjectiveMetric) {
  v1::CreateHyperParameterTuningJobRequest request;
  request.mutable_hyper_parameter_tuning_job_config()
      ->mutable_hyper_parameter_tuning_job_objective()
      ->set_metric_name("validation:auc");
  auto& definition = *request.mutable_training_job_definition();
  definition.mutable_algorithm_specification()->set_training_image(
      "683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-xgboost:1.7-1");
  (*definition.mutable_static_hyper_parameters())["num_round"] = "10";
  AddBuiltInMetricDefinitions(request);
  const auto& metrics = definition.algorithm_specification().metric_definitions();
  ASSERT_EQ(metrics.size(), 30);  // 13 train:, 16 validation:, ObjectiveMetric
  std::string auc_regex;
  for (const auto& metric : metrics) {
    if (metric.name() == "validation:auc") auc_regex = metric.regex();
  }
  EXPECT_EQ(auc_regex,
            ".*\\[[0-9]+\\].*#011validation-auc:([-+]?[0-9]*\\.?[0-9]+(?:[eE][-+]?[0-9]+)?).*");
  EXPECT_EQ(metrics[metrics.size() - 1].name(), "ObjectiveMetric");
  EXPECT_EQ(metrics[metrics.size() - 1].regex(), auc_regex);

  // Script mode (an entry point) and definitions of the user's own are left alone.
  v1::CreateTrainingJobRequest script;
  script.mutable_algorithm_specification()->set_training_image(
      "683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-xgboost:1.7-1");
  (*script.mutable_hyper_parameters())["sagemaker_program"] = "\"train.py\"";
  AddBuiltInMetricDefinitions(script);
  EXPECT_EQ(script.algorithm_specification().metric_definitions_size(), 0);
}

}  // namespace
}  // namespace amt::validation
