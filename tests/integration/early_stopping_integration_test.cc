// AUTO early stopping and Hyperband end to end: real amtd, amt-worker and toy-trainer processes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/integration/harness.h"
#include "tests/support/requests.h"

namespace amt::testing {
namespace {

// The Random example (examples/random-tuning.json) as `name`, minimising val_loss, seed 11:
// `strategy` (a JSON object of Strategy, TrainingJobEarlyStoppingType, StrategyConfig) merged into
// its config, and these ranges, static hyperparameters and limits.
std::string JobJson(const std::string& name, const std::string& strategy, const std::string& ranges,
                    const std::string& statics, int max_jobs, int parallel) {
  nlohmann::json job = ExampleWith("random-tuning.json", R"j({
    "HyperParameterTuningJobConfig": {"TrainingJobEarlyStoppingType": null, "RandomSeed": 11},
    "TrainingJobDefinition": {
      "AlgorithmSpecification": {
        "MetricDefinitions": [{"Name": "val_loss", "Regex": "val_loss=([0-9.eE+-]+)"}]},
      "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
      "StoppingCondition": {"MaxRuntimeInSeconds": 600}}})j");
  job["HyperParameterTuningJobName"] = name;
  auto& config = job["HyperParameterTuningJobConfig"];
  config.merge_patch(nlohmann::json::parse(strategy));
  config["ResourceLimits"] = {{"MaxNumberOfTrainingJobs", max_jobs},
                              {"MaxParallelTrainingJobs", parallel}};
  config["ParameterRanges"] = nlohmann::json::parse(ranges);
  job["TrainingJobDefinition"]["StaticHyperParameters"] = nlohmann::json::parse(statics);
  return job.dump();
}

v1::ExplainTrainingJobResponse Explain(Amtd& amtd, const std::string& job) {
  grpc::ClientContext ctx;
  v1::ExplainTrainingJobRequest request;
  request.set_training_job_name(job);
  v1::ExplainTrainingJobResponse response;
  EXPECT_TRUE(amtd.stub().ExplainTrainingJob(&ctx, request, &response).ok());
  return response;
}

class EarlyStoppingIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_.str();
    amtd_ = std::make_unique<Amtd>(
        dir_ + "/data", std::vector<std::string>{"--image-map", WriteImageMap(dir_), "--slots", "4",
                                                 "--stop-grace", "5"});
  }
  void Create(const std::string& json) {
    grpc::ClientContext ctx;
    v1::CreateHyperParameterTuningJobResponse response;
    auto status =
        amtd_->stub().CreateHyperParameterTuningJob(&ctx, TuningRequestFromJson(json), &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  TempDir temp_{"amt-es"};  // removed after amtd_ ends
  std::string dir_;
  std::unique_ptr<Amtd> amtd_;
};

// Grid order is fixed, so the jobs are known: learning_rate 0.01 (good), 1 (poor: high floor,
// slow), 0.02 (good). The poor one runs through the default grace period (epochs 1 and 2), is
// worse than the first job's running average at epoch 3 and is stopped there; the third stays
// under the median and runs to its end.
TEST_F(EarlyStoppingIntegrationTest, AutoStopsThePoorConfigurationAndNotTheGoodOne) {
  Create(JobJson(
      "auto", R"j({"Strategy": "Grid", "TrainingJobEarlyStoppingType": "Auto"})j",
      R"j({"CategoricalParameterRanges": [{"Name": "learning_rate", "Values": ["0.01", "1", "0.02"]}]})j",
      R"j({"epochs": "6", "num_layers": "2", "sleep_ms": "40"})j", 3, 1));
  auto last = WaitForTuningJob(amtd_->stub(), "auto");
  ASSERT_EQ(last.training_jobs_size(), 3);
  EXPECT_EQ(last.tuning_job().hyper_parameter_tuning_job_status(), "Completed");
  EXPECT_EQ(last.training_jobs(0).training_job_status(), "Completed");
  EXPECT_EQ(last.training_jobs(1).training_job_status(), "Stopped");
  EXPECT_EQ(last.training_jobs(2).training_job_status(), "Completed");
  EXPECT_EQ(last.tuning_job().training_job_status_counters().stopped(), 1);

  const auto poor = Explain(*amtd_, last.training_jobs(1).training_job_name());
  EXPECT_EQ(poor.early_stopping(), "Auto");
  ASSERT_EQ(poor.decisions_size(), 3);
  EXPECT_FALSE(poor.decisions(0).stop());
  EXPECT_FALSE(poor.decisions(1).stop());
  const auto& stop = poor.decisions(2);
  EXPECT_TRUE(stop.stop());
  EXPECT_EQ(stop.epoch(), 3);
  EXPECT_EQ(stop.reference_jobs(), 1);
  EXPECT_GT(stop.value(), stop.threshold());
  EXPECT_THAT(stop.explanation(), ::testing::HasSubstr("median"));

  const auto good = Explain(*amtd_, last.training_jobs(2).training_job_name());
  EXPECT_EQ(good.decisions_size(), 6);  // one decision per epoch, all "continue"
  for (const auto& d : good.decisions()) EXPECT_FALSE(d.stop()) << d.explanation();
}

// MaxResource 9, MinResource 1, eta 3: rungs at epochs 1 and 3; every job ends at a rung (stopped
// there) or at MaxResource 9 (stopped on reaching it).
TEST_F(EarlyStoppingIntegrationTest, HyperbandStopsJobsAtRungsOrMaxResource) {
  Create(JobJson(
      "hband",
      R"j({"Strategy": "Hyperband", "StrategyConfig": {"HyperbandStrategyConfig": {"MinResource": 1, "MaxResource": 9}}})j",
      R"j({"ContinuousParameterRanges": [{"Name": "learning_rate", "MinValue": "0.0001", "MaxValue": "1", "ScalingType": "Logarithmic"}],
                      "IntegerParameterRanges": [{"Name": "num_layers", "MinValue": "1", "MaxValue": "8"}]})j",
      R"j({"epochs": "50", "sleep_ms": "20"})j", 6, 1));
  auto last = WaitForTuningJob(amtd_->stub(), "hband");
  ASSERT_EQ(last.training_jobs_size(), 6);
  EXPECT_EQ(last.tuning_job().hyper_parameter_tuning_job_status(), "Completed");
  EXPECT_EQ(last.tuning_job().training_job_status_counters().stopped(), 6);
  int reached_max = 0;
  for (const auto& job : last.training_jobs()) {
    const auto explained = Explain(*amtd_, job.training_job_name());
    ASSERT_GE(explained.decisions_size(), 1) << job.training_job_name();
    const auto& final = *explained.decisions().rbegin();
    EXPECT_TRUE(final.stop()) << final.explanation();
    EXPECT_EQ(final.rule(), "Hyperband");
    EXPECT_THAT(final.epoch(), ::testing::AnyOf(1, 3, 9)) << final.explanation();
    reached_max += final.epoch() == 9 ? 1 : 0;
  }
  EXPECT_GE(reached_max, 1);  // the first job has no competitor at its rungs
}

}  // namespace
}  // namespace amt::testing
