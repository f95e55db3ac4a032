// Strategy: Bayesian end to end on the toy trainer: real amtd, amt-worker and trainer processes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "tests/integration/harness.h"
#include "tests/support/requests.h"

namespace amt::testing {
namespace {

TEST(BayesianIntegrationTest, RunsToCompletionWithDistinctInRangeSuggestions) {
  const TempDir temp("amt-bayes");
  const std::string dir = temp.str();
  Amtd amtd(dir + "/data", {"--image-map", WriteImageMap(dir), "--slots", "2"});
  // The Bayesian example (examples/bayesian-tuning.json): 10 jobs, num_layers' scaling left to
  // Auto.
  const std::string json = ExampleText("bayesian-tuning.json", R"j({
    "HyperParameterTuningJobName": "bayes",
    "HyperParameterTuningJobConfig": {
      "ResourceLimits": {"MaxNumberOfTrainingJobs": 10},
      "ParameterRanges": {
        "IntegerParameterRanges": [{"Name": "num_layers", "MinValue": "1", "MaxValue": "8"}]},
      "TrainingJobEarlyStoppingType": null, "RandomSeed": 5},
    "TrainingJobDefinition": {
      "StaticHyperParameters": {"epochs": "4", "sleep_ms": null},
      "AlgorithmSpecification": {
        "MetricDefinitions": [{"Name": "val_loss", "Regex": "val_loss=([0-9.eE+-]+)"}]},
      "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
      "StoppingCondition": {"MaxRuntimeInSeconds": 600}}})j");
  grpc::ClientContext ctx;
  v1::CreateHyperParameterTuningJobResponse response;
  auto status =
      amtd.stub().CreateHyperParameterTuningJob(&ctx, TuningRequestFromJson(json), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  auto last = WaitForTuningJob(amtd.stub(), "bayes");
  EXPECT_EQ(last.tuning_job().hyper_parameter_tuning_job_status(), "Completed");
  ASSERT_EQ(last.training_jobs_size(), 10);
  EXPECT_EQ(last.tuning_job().objective_status_counters().succeeded(), 10);
  std::set<std::string> configurations;
  for (const auto& job : last.training_jobs()) {
    const auto& hp = job.tuned_hyper_parameters();
    const double lr = std::stod(hp.at("learning_rate"));
    const int layers = std::stoi(hp.at("num_layers"));
    EXPECT_GE(lr, 0.0001);
    EXPECT_LE(lr, 1.0);
    EXPECT_GE(layers, 1);
    EXPECT_LE(layers, 8);
    EXPECT_THAT(hp.at("optimizer"), ::testing::AnyOf("sgd", "adam", "rmsprop"));
    configurations.insert(hp.at("learning_rate") + "/" + hp.at("num_layers") + "/" +
                          hp.at("optimizer"));
  }
  EXPECT_EQ(configurations.size(), 10u);  // parallel suggestions are not duplicates
}

}  // namespace
}  // namespace amt::testing
