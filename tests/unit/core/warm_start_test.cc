#include "orchestrator/core/warm_start.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/requests.h"

namespace amt::core {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;
using ::testing::SizeIs;

// The warm-start example (examples/warm-start.json), minimising "loss" over "lr" and "layers",
// warm-started from "parent".
v1::CreateHyperParameterTuningJobRequest Child() {
  return ::amt::testing::TuningRequest("warm-start.json", R"j({
    "HyperParameterTuningJobName": "child",
    "HyperParameterTuningJobConfig": {
      "HyperParameterTuningJobObjective": {"MetricName": "loss"},
      "ResourceLimits": {"MaxNumberOfTrainingJobs": 4, "MaxParallelTrainingJobs": 1},
      "ParameterRanges": {
        "ContinuousParameterRanges": [{"Name": "lr", "MinValue": "0.001", "MaxValue": "0.1"}],
        "IntegerParameterRanges": [{"Name": "layers", "MinValue": "1", "MaxValue": "4"}],
        "CategoricalParameterRanges": null}},
    "TrainingJobDefinition": {"StaticHyperParameters": {"epochs": "3", "sleep_ms": null}},
    "WarmStartConfig": {
      "ParentHyperParameterTuningJobs": [{"HyperParameterTuningJobName": "parent"}]}})j");
}

// A parent with the child's objective and hyperparameters, ended Completed.
v1::TuningJobRecord Parent() {
  const auto child = Child();
  v1::TuningJobRecord p;
  auto* d = p.mutable_describe();
  d->set_hyper_parameter_tuning_job_name("parent");
  d->set_hyper_parameter_tuning_job_status("Completed");
  *d->mutable_hyper_parameter_tuning_job_config() = child.hyper_parameter_tuning_job_config();
  *d->mutable_training_job_definition() = child.training_job_definition();
  (*d->mutable_training_job_definition()
        ->mutable_static_hyper_parameters())["_tuning_objective_metric"] = "loss";
  return p;
}

TEST(WarmStart, AcceptsAMatchingEndedParent) {
  const auto parent = Parent();
  EXPECT_TRUE(CheckWarmStart(Child(), {&parent}).ok());
}

TEST(WarmStart, MissingParentIsResourceNotFound) {
  EXPECT_EQ(CheckWarmStart(Child(), {nullptr}),
            absl::NotFoundError(
                "Amazon SageMaker can't find a tuning job called parent. Type another name."));
}

TEST(WarmStart, RunningParentIsRefused) {
  auto parent = Parent();
  parent.mutable_describe()->set_hyper_parameter_tuning_job_status("InProgress");
  EXPECT_EQ(CheckWarmStart(Child(), {&parent}).message(),
            "The parent tuning job parent is InProgress; warm start needs parent tuning jobs that "
            "are Completed, Stopped or Failed.");
}

TEST(WarmStart, GridIsRefused) {
  auto child = Child();
  child.mutable_hyper_parameter_tuning_job_config()->set_strategy("Grid");
  const auto parent = Parent();
  EXPECT_EQ(CheckWarmStart(child, {&parent}).code(), absl::StatusCode::kInvalidArgument);
}

TEST(WarmStart, MakingATunableStaticCountsOneChangeAndATypeChangeIsRefused) {
  auto parent = Parent();
  auto child = Child();
  // layers becomes static: 1 change, allowed; the count of hyperparameters stays 3.
  child.mutable_hyper_parameter_tuning_job_config()
      ->mutable_parameter_ranges()
      ->clear_integer_parameter_ranges();
  (*child.mutable_training_job_definition()->mutable_static_hyper_parameters())["layers"] = "2";
  EXPECT_TRUE(CheckWarmStart(child, {&parent}).ok());
  // lr becomes an integer: refused.
  auto typed = Child();
  auto* ranges = typed.mutable_hyper_parameter_tuning_job_config()->mutable_parameter_ranges();
  ranges->clear_continuous_parameter_ranges();
  auto* lr = ranges->add_integer_parameter_ranges();
  lr->set_name("lr");
  lr->set_min_value("1");
  lr->set_max_value("2");
  EXPECT_EQ(CheckWarmStart(typed, {&parent}).message(),
            "The hyperparameter lr is Continuous in the parent tuning job parent and Integer "
            "here; warm start does not allow changing its type.");
}

TEST(WarmStart, ObservationsAreTheSucceededJobsInTheChildsSpace) {
  v1::TuningJobRecord child;
  auto request = Child();
  *child.mutable_describe()->mutable_hyper_parameter_tuning_job_config() =
      request.hyper_parameter_tuning_job_config();
  *child.mutable_describe()->mutable_warm_start_config() = request.warm_start_config();
  std::vector<v1::TrainingJobRecord> jobs(3);
  for (int i = 0; i < 3; ++i) {
    auto& hps = *jobs[i].mutable_describe()->mutable_hyper_parameters();
    hps["lr"] = std::to_string(0.01 * (i + 1));
    hps["layers"] = "2";
    hps["epochs"] = "3";  // static: not part of the search space
    jobs[i].set_objective_status(i == 1 ? "Failed" : "Succeeded");
    jobs[i].set_objective(0.5 + i);
  }
  jobs[2].clear_objective();  // Succeeded without a value: nothing to learn from
  auto observations = WarmStartObservations(child, {&jobs[0], &jobs[1], &jobs[2]});
  ASSERT_THAT(observations, SizeIs(1));
  EXPECT_EQ(observations[0].objective, 0.5);
  EXPECT_THAT(observations[0].params, ElementsAre(Pair("layers", "2"), Pair("lr", "0.010000")));
  child.mutable_describe()->clear_warm_start_config();
  EXPECT_THAT(WarmStartObservations(child, {&jobs[0]}), SizeIs(0));
}

TEST(WarmStart, OverallBestIsTheBestOfTheJobAndItsParentsForIdenticalData) {
  v1::DescribeHyperParameterTuningJobResponse child;
  auto request = Child();
  *child.mutable_hyper_parameter_tuning_job_config() = request.hyper_parameter_tuning_job_config();
  *child.mutable_warm_start_config() = request.warm_start_config();
  auto set_best = [](v1::HyperParameterTrainingJobSummary* s, const std::string& name, float v) {
    s->set_training_job_name(name);
    s->mutable_final_hyper_parameter_tuning_job_objective_metric()->set_value(v);
  };
  set_best(child.mutable_best_training_job(), "mine", 0.4f);
  auto parent = Parent();
  set_best(parent.mutable_describe()->mutable_best_training_job(), "theirs", 0.3f);
  EXPECT_EQ(OverallBestTrainingJob(child, {&parent, nullptr})->training_job_name(), "theirs");
  set_best(child.mutable_best_training_job(), "mine", 0.2f);
  EXPECT_EQ(OverallBestTrainingJob(child, {&parent})->training_job_name(), "mine");
  child.mutable_warm_start_config()->set_warm_start_type("TransferLearning");
  EXPECT_FALSE(OverallBestTrainingJob(child, {&parent}).has_value());
}

}  // namespace
}  // namespace amt::core
