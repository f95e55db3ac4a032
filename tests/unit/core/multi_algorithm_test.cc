// Multi-algorithm tuning (TrainingJobDefinitions) through the Orchestrator: trials dealt over the
// definitions, each job built from its own definition, its summary naming the definition, and
// BestTrainingJob across definitions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/core/orchestrator_fixture.h"

namespace amt::core {
namespace {

// Two algorithms of the toy image: "linear" tunes lr and reports val:loss; "forest" tunes depth
// and reports rmse. Both minimise.
constexpr char kMultiPatch[] = R"j({
  "HyperParameterTuningJobName": "demo",
  "HyperParameterTuningJobConfig": {"ResourceLimits": {"MaxNumberOfTrainingJobs": 4}, "RandomSeed": 7},
  "TrainingJobDefinitions": [
    {
      "DefinitionName": "linear",
      "TuningObjective": {"Type": "Minimize", "MetricName": "val:loss"},
      "HyperParameterRanges": {
        "ContinuousParameterRanges": [{"Name": "lr", "MinValue": "0.0001", "MaxValue": "0.1"}]
      },
      "StaticHyperParameters": {"epochs": "3"},
      "AlgorithmSpecification": {"TrainingImage": "toy:latest", "TrainingInputMode": "File",
        "MetricDefinitions": [{"Name": "val:loss", "Regex": "val_loss=([0-9.eE+-]+)"}]},
      "RoleArn": "arn:aws:iam::123456789012:role/R",
      "OutputDataConfig": {"S3OutputPath": "s3://bucket/linear"},
      "ResourceConfig": {"InstanceType": "ml.m5.large", "InstanceCount": 1, "VolumeSizeInGB": 10},
      "StoppingCondition": {"MaxRuntimeInSeconds": 600}
    },
    {
      "DefinitionName": "forest",
      "TuningObjective": {"Type": "Minimize", "MetricName": "rmse"},
      "HyperParameterRanges": {
        "IntegerParameterRanges": [{"Name": "depth", "MinValue": "1", "MaxValue": "5"}]
      },
      "StaticHyperParameters": {"trees": "10"},
      "AlgorithmSpecification": {"TrainingImage": "toy:latest", "TrainingInputMode": "File",
        "MetricDefinitions": [{"Name": "rmse", "Regex": "rmse=([0-9.eE+-]+)"}]},
      "RoleArn": "arn:aws:iam::123456789012:role/R",
      "OutputDataConfig": {"S3OutputPath": "s3://bucket/forest"},
      "HyperParameterTuningResourceConfig": {"InstanceType": "ml.c5.xlarge", "InstanceCount": 1,
                                             "VolumeSizeInGB": 5},
      "StoppingCondition": {"MaxRuntimeInSeconds": 600}
    }
  ]
})j";

// The multi-algorithm example (examples/multi-algorithm.json) with the two definitions above.
v1::CreateHyperParameterTuningJobRequest MultiRequest() {
  return ::amt::testing::TuningRequest("multi-algorithm.json", kMultiPatch);
}

class MultiAlgorithmTest : public OrchestratorTest {
 protected:
  // A "forest" job that reports these rmse values and exits 0.
  void SucceedForest(const v1::StartJob& s, const std::vector<double>& rmse) {
    Started(s);
    std::vector<std::string> lines;
    for (double v : rmse) lines.push_back("rmse=" + std::to_string(v));
    Log(s, lines);
    clock_.Advance(1);
    Exit(s, 0);
  }
};

TEST_F(MultiAlgorithmTest, DealsTrialsRoundRobinEachFromItsOwnDefinition) {
  ASSERT_TRUE(orch_->CreateTuningJob(MultiRequest()).ok());
  auto link = Connect(8);
  auto starts = link->Starts();
  ASSERT_EQ(starts.size(), 2u);
  // Trial 1 is "linear": its hyperparameters, objective, output path and instance type.
  EXPECT_TRUE(starts[0].hyperparameters().contains("lr"));
  EXPECT_FALSE(starts[0].hyperparameters().contains("depth"));
  EXPECT_EQ(starts[0].hyperparameters().at("_tuning_objective_metric"), "val:loss");
  EXPECT_EQ(starts[0].hyperparameters().at("epochs"), "3");
  EXPECT_THAT(starts[0].model_output_path(), ::testing::StartsWith("/s3/bucket/linear/"));
  EXPECT_EQ(starts[0].instance_type(), "ml.m5.large");
  // Trial 2 is "forest".
  EXPECT_TRUE(starts[1].hyperparameters().contains("depth"));
  EXPECT_FALSE(starts[1].hyperparameters().contains("lr"));
  EXPECT_EQ(starts[1].hyperparameters().at("_tuning_objective_metric"), "rmse");
  EXPECT_EQ(starts[1].hyperparameters().at("trees"), "10");
  EXPECT_THAT(starts[1].model_output_path(), ::testing::StartsWith("/s3/bucket/forest/"));
  EXPECT_EQ(starts[1].instance_type(), "ml.c5.xlarge");

  Succeed(starts[0], {0.9, 0.5});
  SucceedForest(starts[1], {0.4, 0.2});
  starts = link->Starts();
  ASSERT_EQ(starts.size(), 4u);
  EXPECT_TRUE(starts[2].hyperparameters().contains("lr"));
  EXPECT_TRUE(starts[3].hyperparameters().contains("depth"));
  Succeed(starts[2], {0.3});
  SucceedForest(starts[3], {0.6});

  const auto d = Describe();
  EXPECT_EQ(d.hyper_parameter_tuning_job_status(), "Completed");
  EXPECT_EQ(d.training_job_status_counters().completed(), 4);
  // Best across definitions: forest's 0.2 beats linear's 0.3 and 0.5.
  EXPECT_EQ(d.best_training_job().training_job_name(), starts[1].training_job_name());
  EXPECT_EQ(d.best_training_job().training_job_definition_name(), "forest");
  EXPECT_EQ(d.best_training_job().final_hyper_parameter_tuning_job_objective_metric().metric_name(),
            "rmse");
  EXPECT_FLOAT_EQ(d.best_training_job().final_hyper_parameter_tuning_job_objective_metric().value(),
                  0.2f);
  // Described as created: TrainingJobDefinitions, no TrainingJobDefinition; each definition
  // with its objective among its static hyperparameters and its ResourceConfig.
  EXPECT_FALSE(d.has_training_job_definition());
  ASSERT_EQ(d.training_job_definitions_size(), 2);
  EXPECT_EQ(d.training_job_definitions(0).static_hyper_parameters().at("_tuning_objective_metric"),
            "val:loss");
  EXPECT_EQ(d.training_job_definitions(1).static_hyper_parameters().at("_tuning_objective_metric"),
            "rmse");
  EXPECT_EQ(d.training_job_definitions(1).resource_config().instance_type(), "ml.c5.xlarge");
  EXPECT_FALSE(d.hyper_parameter_tuning_job_config().has_hyper_parameter_tuning_job_objective());

  v1::ListTrainingJobsForHyperParameterTuningJobRequest list;
  list.set_hyper_parameter_tuning_job_name("demo");
  list.set_sort_by("Name");
  list.set_sort_order("Ascending");
  const auto jobs = orch_->ListTrainingJobsForTuningJob(list);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->training_job_summaries_size(), 4);
  std::vector<std::string> definitions;
  for (const auto& s : jobs->training_job_summaries()) {
    definitions.push_back(s.training_job_definition_name());
    EXPECT_EQ(s.final_hyper_parameter_tuning_job_objective_metric().metric_name(),
              s.training_job_definition_name() == "linear" ? "val:loss" : "rmse");
    EXPECT_EQ(s.tuned_hyper_parameters().size(), 1u);
  }
  EXPECT_THAT(definitions, ::testing::ElementsAre("linear", "forest", "linear", "forest"));
}

TEST_F(MultiAlgorithmTest, ARestartedAmtdDealsTheSameWay) {
  ASSERT_TRUE(orch_->CreateTuningJob(MultiRequest()).ok());
  auto link = Connect(1);
  auto starts = link->Starts();
  ASSERT_EQ(starts.size(), 1u);
  Succeed(starts[0], {0.5});
  starts = link->Starts();
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_TRUE(starts[1].hyperparameters().contains("depth"));
  orch_.reset();
  Rebuild();
  ASSERT_TRUE(orch_->Load().ok());
  v1::JobRef running;
  running.set_training_job_name(starts[1].training_job_name());
  running.set_attempt(starts[1].attempt());
  auto link2 = Connect(1, {running});
  SucceedForest(starts[1], {0.3});
  const auto more = link2->Starts();
  ASSERT_EQ(more.size(), 1u);
  EXPECT_TRUE(more[0].hyperparameters().contains("lr")) << "trial 3 is linear's";
  EXPECT_EQ(more[0].hyperparameters().at("_tuning_objective_metric"), "val:loss");
}

TEST_F(MultiAlgorithmTest, GridRunsEveryCombinationOfEveryDefinition) {
  auto r = MultiRequest();
  auto* config = r.mutable_hyper_parameter_tuning_job_config();
  config->set_strategy("Grid");
  config->mutable_resource_limits()->clear_max_number_of_training_jobs();
  config->mutable_resource_limits()->set_max_parallel_training_jobs(10);
  for (int d = 0; d < 2; ++d) {
    auto* ranges = r.mutable_training_job_definitions(d)->mutable_hyper_parameter_ranges();
    ranges->Clear();
    auto* range = ranges->add_categorical_parameter_ranges();
    range->set_name(d == 0 ? "lr" : "depth");
    for (int v = 0; v < (d == 0 ? 1 : 3); ++v) range->add_values(std::to_string(v + 1));
  }
  ASSERT_TRUE(orch_->CreateTuningJob(r).ok());
  auto link = Connect(10);
  const auto starts = link->Starts();
  ASSERT_EQ(starts.size(), 4u);  // 1 + 3 combinations
  std::vector<std::string> values;
  for (const auto& s : starts) {
    values.push_back(s.hyperparameters().contains("lr")
                         ? "lr=" + s.hyperparameters().at("lr")
                         : "depth=" + s.hyperparameters().at("depth"));
  }
  EXPECT_THAT(values, ::testing::UnorderedElementsAre("lr=1", "depth=1", "depth=2", "depth=3"));
  EXPECT_EQ(Describe().training_job_status_counters().in_progress(), 4);
}

TEST_F(MultiAlgorithmTest, AParentWithDefinitionsCannotWarmStartAChild) {
  ASSERT_TRUE(orch_->CreateTuningJob(MultiRequest()).ok());
  ASSERT_TRUE(orch_->StopTuningJob("demo").ok());
  auto link = Connect(1);
  ASSERT_EQ(Describe().hyper_parameter_tuning_job_status(), "Stopped");
  auto child = TuningRequest();
  child.set_hyper_parameter_tuning_job_name("child");
  auto* warm = child.mutable_warm_start_config();
  warm->add_parent_hyper_parameter_tuning_jobs()->set_hyper_parameter_tuning_job_name("demo");
  warm->set_warm_start_type("TransferLearning");
  const auto created = orch_->CreateTuningJob(child);
  EXPECT_EQ(created.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(created.status().message(),
            "The parent tuning job demo has TrainingJobDefinitions; warm start is available only "
            "from and for tuning jobs of a single algorithm (TrainingJobDefinition).");
}

}  // namespace
}  // namespace amt::core
