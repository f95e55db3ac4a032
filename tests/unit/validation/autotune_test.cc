#include "orchestrator/validation/autotune.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "common/json.h"
#include "orchestrator/validation/validation.h"
#include "tests/support/requests.h"
#include "tests/support/status_matchers.h"

namespace amt::validation {
namespace {

using ::amt::testing::IsOk;

// What the SageMaker SDK sends for HyperparameterTuner(estimator, "val:loss", autotune=True,
// hyperparameters_to_keep_static=["epochs"]) with max_jobs left out: its defaults for Strategy,
// the parallelism, MaxNumberOfTrainingJobs 1 and early stopping Off are left out here to show
// what Autotune chooses for unset members.
// (examples/autotune.json with these members.)
constexpr char kAutotuned[] = R"json({
  "HyperParameterTuningJobName": "auto",
  "HyperParameterTuningJobConfig": {
    "HyperParameterTuningJobObjective": {"MetricName": "val:loss"},
    "ParameterRanges": {"AutoParameters": [
      {"Name": "learning_rate", "ValueHint": "0.01"},
      {"Name": "num_layers", "ValueHint": "4"},
      {"Name": "dropout", "ValueHint": "0.5"},
      {"Name": "batch_size", "ValueHint": "\"128\""},
      {"Name": "use_bias", "ValueHint": "True"},
      {"Name": "optimizer", "ValueHint": "\"adam\""},
      {"Name": "num_epochs", "ValueHint": "20"},
      {"Name": "offset", "ValueHint": "0"}
    ]},
    "RandomSeed": null
  },
  "TrainingJobDefinition": {
    "StaticHyperParameters": {"epochs": "10", "sleep_ms": null},
    "AlgorithmSpecification": {"TrainingImage": "toy:latest",
      "MetricDefinitions": [{"Name": "val:loss", "Regex": "val_loss=([0-9.eE+-]+)"}]}
  }
})json";

v1::CreateHyperParameterTuningJobRequest Autotuned() {
  return ::amt::testing::TuningRequest("autotune.json", kAutotuned);
}

std::string RangesJson(const v1::CreateHyperParameterTuningJobRequest& r) {
  auto ranges = r.hyper_parameter_tuning_job_config().parameter_ranges();
  ranges.clear_auto_parameters();
  return ProtoToAwsJson(ranges);
}

TEST(Autotune, ChoosesARangeFromEachValueHint) {
  auto r = Autotuned();
  ASSERT_THAT(ApplyAutotune(r), IsOk());
  EXPECT_EQ(
      RangesJson(r),
      R"({"IntegerParameterRanges":[)"
      R"({"Name":"num_layers","MinValue":"1","MaxValue":"40","ScalingType":"Logarithmic"},)"
      R"({"Name":"batch_size","MinValue":"12","MaxValue":"1280","ScalingType":"Logarithmic"},)"
      R"({"Name":"offset","MinValue":"0","MaxValue":"10","ScalingType":"Linear"}],)"
      R"("ContinuousParameterRanges":[)"
      R"({"Name":"learning_rate","MinValue":"0.001","MaxValue":"0.1","ScalingType":"Logarithmic"},)"
      R"({"Name":"dropout","MinValue":"0.05","MaxValue":"1","ScalingType":"Logarithmic"}],)"
      R"("CategoricalParameterRanges":[{"Name":"use_bias","Values":["True","False"]}]})");
  // Not eligible: a string, and an epochs-like hyperparameter (the budget). Static, as hinted.
  const auto& statics = r.training_job_definition().static_hyper_parameters();
  EXPECT_EQ(statics.at("optimizer"), "\"adam\"");
  EXPECT_EQ(statics.at("num_epochs"), "20");
  EXPECT_EQ(statics.at("epochs"), "10");
  // The AutoParameters stay, for the echo.
  EXPECT_EQ(r.hyper_parameter_tuning_job_config().parameter_ranges().auto_parameters_size(), 8);
}

TEST(Autotune, FillsTheUnsetSettingsAndKeepsTheGivenOnes) {
  auto r = Autotuned();
  ASSERT_THAT(ApplyAutotune(r), IsOk());
  const auto& config = r.hyper_parameter_tuning_job_config();
  EXPECT_EQ(config.training_job_early_stopping_type(), "Auto");
  EXPECT_EQ(config.resource_limits().max_number_of_training_jobs(), 60);  // 6 tuned x 10
  EXPECT_EQ(config.resource_limits().max_parallel_training_jobs(), 2);
  EXPECT_EQ(
      config.tuning_job_completion_criteria().convergence_detected().complete_on_convergence(),
      "Enabled");
  EXPECT_EQ(r.training_job_definition().retry_strategy().maximum_retry_attempts(), 2);
  EXPECT_EQ(config.strategy(), "Bayesian");

  r = Autotuned();
  auto* given = r.mutable_hyper_parameter_tuning_job_config();
  given->set_training_job_early_stopping_type("Off");
  given->mutable_resource_limits()->set_max_number_of_training_jobs(5);
  given->mutable_tuning_job_completion_criteria()
      ->mutable_convergence_detected()
      ->set_complete_on_convergence("Disabled");
  r.mutable_training_job_definition()->mutable_retry_strategy()->set_maximum_retry_attempts(7);
  ASSERT_THAT(ApplyAutotune(r), IsOk());
  EXPECT_EQ(given->training_job_early_stopping_type(), "Off");
  EXPECT_EQ(given->resource_limits().max_number_of_training_jobs(), 5);
  EXPECT_EQ(
      given->tuning_job_completion_criteria().convergence_detected().complete_on_convergence(),
      "Disabled");
  EXPECT_EQ(r.training_job_definition().retry_strategy().maximum_retry_attempts(), 7);
}

TEST(Autotune, TheBudgetIsTenJobsPerTunedHyperParameterBetweenTenAndAHundred) {
  auto r = Autotuned();
  auto* ranges = r.mutable_hyper_parameter_tuning_job_config()->mutable_parameter_ranges();
  ranges->mutable_auto_parameters()->DeleteSubrange(1, 7);  // learning_rate only
  ASSERT_THAT(ApplyAutotune(r), IsOk());
  EXPECT_EQ(r.hyper_parameter_tuning_job_config().resource_limits().max_number_of_training_jobs(),
            10);
  r = Autotuned();
  ranges = r.mutable_hyper_parameter_tuning_job_config()->mutable_parameter_ranges();
  for (int i = 0; i < 12; ++i) {
    auto* p = ranges->add_auto_parameters();
    p->set_name("x" + std::to_string(i));
    p->set_value_hint("1.5");
  }
  ASSERT_THAT(ApplyAutotune(r), IsOk());
  EXPECT_EQ(r.hyper_parameter_tuning_job_config().resource_limits().max_number_of_training_jobs(),
            100);
}

TEST(Autotune, HyperbandAndMultipleDefinitionsKeepEarlyStoppingOff) {
  auto r = Autotuned();
  r.mutable_hyper_parameter_tuning_job_config()->set_strategy("Hyperband");
  ASSERT_THAT(ApplyAutotune(r), IsOk());
  EXPECT_EQ(r.hyper_parameter_tuning_job_config().training_job_early_stopping_type(), "Off");
  EXPECT_THAT(CompleteCreateHyperParameterTuningJob(Autotuned()).status(), IsOk());
}

TEST(Autotune, RefusesGridAndAHyperParameterGivenTwice) {
  auto r = Autotuned();
  r.mutable_hyper_parameter_tuning_job_config()->set_strategy("Grid");
  EXPECT_EQ(ApplyAutotune(r).message(),
            "Autotune chooses integer and continuous ranges, which the Grid strategy does not "
            "search; use the Bayesian, Random or Hyperband strategy with Autotune.");
  r = Autotuned();
  (*r.mutable_training_job_definition()->mutable_static_hyper_parameters())["dropout"] = "0.1";
  EXPECT_EQ(ApplyAutotune(r).message(),
            "AutoParameter 'dropout' is also a static hyperparameter; give it once.");
  r = Autotuned();
  auto* range = r.mutable_hyper_parameter_tuning_job_config()
                    ->mutable_parameter_ranges()
                    ->add_continuous_parameter_ranges();
  range->set_name("learning_rate");
  EXPECT_EQ(ApplyAutotune(r).message(),
            "AutoParameter 'learning_rate' also has a parameter range; give it once.");
}

TEST(Autotune, WithoutAutotuneNothingChanges) {
  auto r = Autotuned();
  r.clear_autotune();
  const std::string before = r.SerializeAsString();
  ASSERT_THAT(ApplyAutotune(r), IsOk());
  EXPECT_EQ(r.SerializeAsString(), before);
}

TEST(Autotune, EachDefinitionOfAMultiAlgorithmJobGetsItsOwnRanges) {
  auto r = Autotuned();
  auto definition = r.training_job_definition();
  *definition.mutable_tuning_objective() =
      r.hyper_parameter_tuning_job_config().hyper_parameter_tuning_job_objective();
  *definition.mutable_hyper_parameter_ranges() =
      r.hyper_parameter_tuning_job_config().parameter_ranges();
  r.clear_training_job_definition();
  r.mutable_hyper_parameter_tuning_job_config()->clear_hyper_parameter_tuning_job_objective();
  r.mutable_hyper_parameter_tuning_job_config()->clear_parameter_ranges();
  definition.set_definition_name("a");
  *r.add_training_job_definitions() = definition;
  definition.set_definition_name("b");
  definition.mutable_hyper_parameter_ranges()->mutable_auto_parameters()->DeleteSubrange(1, 7);
  *r.add_training_job_definitions() = definition;
  const auto completed = CompleteCreateHyperParameterTuningJob(r);
  ASSERT_THAT(completed.status(), IsOk());
  EXPECT_EQ(completed->training_job_definitions(1)
                .hyper_parameter_ranges()
                .continuous_parameter_ranges_size(),
            1);
  EXPECT_EQ(completed->hyper_parameter_tuning_job_config().training_job_early_stopping_type(),
            "Off");
  EXPECT_EQ(completed->hyper_parameter_tuning_job_config()
                .resource_limits()
                .max_number_of_training_jobs(),
            70);  // 6 + 1 tuned
}

}  // namespace
}  // namespace amt::validation
