#include "orchestrator/core/orchestrator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "common/json.h"
#include "tests/unit/core/orchestrator_fixture.h"

namespace amt::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST_F(OrchestratorTest, RandomJobHonoursParallelismBudgetAndCounters) {
  ASSERT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());
  auto link = Connect(8);
  auto starts = link->Starts();
  ASSERT_EQ(starts.size(), 2u);  // MaxParallelTrainingJobs
  EXPECT_THAT(starts[0].training_job_name(), ::testing::MatchesRegex("demo-001-[0-9a-f]{8}"));
  EXPECT_THAT(starts[1].training_job_name(), ::testing::MatchesRegex("demo-002-[0-9a-f]{8}"));
  EXPECT_THAT(starts[0].command(), ElementsAre("/bin/toy", "train"));
  EXPECT_EQ(starts[0].hyperparameters().at("_tuning_objective_metric"), "val:loss");
  EXPECT_EQ(starts[0].hyperparameters().at("epochs"), "3");
  EXPECT_EQ(starts[0].model_output_path(),
            "/s3/bucket/out/" + starts[0].training_job_name() + "/output/model.tar.gz");
  auto d = Describe();
  EXPECT_EQ(d.hyper_parameter_tuning_job_status(), "InProgress");
  EXPECT_EQ(d.training_job_status_counters().in_progress(), 2);
  EXPECT_EQ(d.objective_status_counters().pending(), 2);
  EXPECT_FALSE(d.has_best_training_job());

  Succeed(starts[0], {0.9, 0.5});
  starts = link->Starts();
  ASSERT_EQ(starts.size(), 3u);  // a slot freed, the third trial starts
  Succeed(starts[1], {0.8, 0.3});
  Succeed(starts[2], {0.7});
  starts = link->Starts();
  ASSERT_EQ(starts.size(), 4u);
  Succeed(starts[3], {0.6, 0.4});
  EXPECT_EQ(link->Starts().size(), 4u);  // MaxNumberOfTrainingJobs, exactly

  d = Describe();
  EXPECT_EQ(d.hyper_parameter_tuning_job_status(), "Completed");
  EXPECT_EQ(d.training_job_status_counters().completed(), 4);
  EXPECT_EQ(d.training_job_status_counters().in_progress(), 0);
  EXPECT_EQ(d.objective_status_counters().succeeded(), 4);
  EXPECT_EQ(d.best_training_job().training_job_name(), starts[1].training_job_name());
  EXPECT_FLOAT_EQ(d.best_training_job().final_hyper_parameter_tuning_job_objective_metric().value(),
                  0.3f);
  EXPECT_TRUE(d.has_hyper_parameter_tuning_end_time());
  EXPECT_EQ(d.training_job_definition().static_hyper_parameters().at("_tuning_objective_metric"),
            "val:loss");
  // The objective is the latest emitted value, not the best one.
  auto job = orch_->DescribeTrainingJob(starts[0].training_job_name());
  ASSERT_TRUE(job.ok());
  ASSERT_EQ(job->final_metric_data_list_size(), 1);
  EXPECT_FLOAT_EQ(job->final_metric_data_list(0).value(), 0.5f);
  EXPECT_EQ(job->tuning_job_arn(), d.hyper_parameter_tuning_job_arn());
}

TEST_F(OrchestratorTest, JobsWithTheSameMetricDefinitionsShareOneParserHandedOverBeforeTheirStart) {
  ASSERT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());
  auto link = Connect(8);
  const auto starts = link->Starts();
  ASSERT_EQ(starts.size(), 2u);
  ASSERT_EQ(link->expected.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const auto& expected = link->expected[i];
    EXPECT_EQ(expected.training_job_name, starts[i].training_job_name());
    // Handed over before the job's StartJob went out: the worker's first log line finds it.
    ASSERT_LT(expected.sent_before, link->sent.size());
    EXPECT_EQ(link->sent[expected.sent_before].start().training_job_name(),
              starts[i].training_job_name());
    auto parser = orch_->MetricParserOf(starts[i].training_job_name());
    ASSERT_TRUE(parser.has_value());
    EXPECT_TRUE(expected.parser.SameAs(*parser));
  }
  // One compilation for both trials of the tuning job.
  EXPECT_TRUE(link->expected[0].parser.SameAs(link->expected[1].parser));
  const auto values = link->expected[1].parser.Parse("epoch 1 val_loss=0.25");
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(values[0].name, "val:loss");
  EXPECT_EQ(values[0].value, 0.25);

  // Other definitions, another parser.
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob()).ok());
  ASSERT_EQ(link->expected.size(), 3u);
  EXPECT_EQ(link->expected[2].training_job_name, "solo");
  EXPECT_FALSE(link->expected[2].parser.SameAs(link->expected[0].parser));
  EXPECT_EQ(link->expected[2].parser.Parse("loss=2")[0].name, "loss");
}

TEST_F(OrchestratorTest, SameRandomSeedGivesSameHyperparameters) {
  ASSERT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());
  auto first = Connect(8)->Starts();
  auto other_store = store::NewInMemoryStore();
  OrchestratorOptions options;
  options.launch.image_map = {{"toy:latest", {"/bin/toy"}}};
  Orchestrator other(options, *other_store, clock_, timers_);
  ASSERT_TRUE(other.CreateTuningJob(TuningRequest()).ok());
  auto link = std::make_shared<FakeWorkerLink>();
  v1::WorkerHello hello;
  hello.set_worker_id("w2");
  hello.set_slots(8);
  ASSERT_TRUE(other.OnWorkerConnected(hello, link).ok());
  auto second = link->Starts();
  ASSERT_EQ(first.size(), second.size());
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].hyperparameters().at("lr"), second[i].hyperparameters().at("lr"));
    EXPECT_EQ(first[i].hyperparameters().at("opt"), second[i].hyperparameters().at("opt"));
  }
}

TEST_F(OrchestratorTest, GridInfersBudgetFromCombinations) {
  auto r = TuningRequest();
  auto* c = r.mutable_hyper_parameter_tuning_job_config();
  c->set_strategy("Grid");
  c->mutable_resource_limits()->clear_max_number_of_training_jobs();
  c->mutable_resource_limits()->set_max_parallel_training_jobs(10);
  c->mutable_parameter_ranges()->clear_continuous_parameter_ranges();
  auto* cat = c->mutable_parameter_ranges()->add_categorical_parameter_ranges();
  cat->set_name("layers");
  for (auto v : {"1", "2", "3"}) cat->add_values(v);
  ASSERT_TRUE(orch_->CreateTuningJob(r).ok());
  auto link = Connect(10);
  auto starts = link->Starts();
  ASSERT_EQ(starts.size(), 6u);
  std::set<std::pair<std::string, std::string>> combos;
  for (const auto& s : starts)
    combos.emplace(s.hyperparameters().at("opt"), s.hyperparameters().at("layers"));
  EXPECT_EQ(combos.size(), 6u);
  for (const auto& s : starts) Succeed(s, {1.0});
  EXPECT_EQ(Describe().hyper_parameter_tuning_job_status(), "Completed");
  EXPECT_EQ(link->Starts().size(), 6u);
}

TEST_F(OrchestratorTest, FirstFiveFailuresFailTheTuningJob) {
  auto r = TuningRequest();
  r.mutable_hyper_parameter_tuning_job_config()
      ->mutable_resource_limits()
      ->set_max_number_of_training_jobs(10);
  r.mutable_hyper_parameter_tuning_job_config()
      ->mutable_resource_limits()
      ->set_max_parallel_training_jobs(1);
  ASSERT_TRUE(orch_->CreateTuningJob(r).ok());
  auto link = Connect(1);
  for (int i = 0; i < 5; ++i) {
    auto starts = link->Starts();
    ASSERT_EQ(starts.size(), static_cast<size_t>(i + 1));
    Started(starts.back());
    Exit(starts.back(), 1, "ClientError: the training data is empty");
  }
  EXPECT_EQ(link->Starts().size(), 5u);
  auto d = Describe();
  EXPECT_EQ(d.hyper_parameter_tuning_job_status(), "Failed");
  EXPECT_EQ(d.failure_reason(),
            "No training job succeeded after 5 attempts. Please take a look at the training job "
            "failures to get more details.");
  EXPECT_EQ(d.training_job_status_counters().non_retryable_error(), 5);
  EXPECT_EQ(d.objective_status_counters().failed(), 5);
  auto job = orch_->DescribeTrainingJob(link->Starts()[0].training_job_name());
  EXPECT_EQ(job->failure_reason(), "ClientError: the training data is empty");
}

TEST_F(OrchestratorTest, AllJobsFailedWithSmallBudget) {
  auto r = TuningRequest();
  r.mutable_hyper_parameter_tuning_job_config()
      ->mutable_resource_limits()
      ->set_max_number_of_training_jobs(2);
  ASSERT_TRUE(orch_->CreateTuningJob(r).ok());
  auto link = Connect(2);
  for (const auto& s : link->Starts()) Exit(s, 1);
  auto d = Describe();
  EXPECT_EQ(d.hyper_parameter_tuning_job_status(), "Failed");
  EXPECT_EQ(d.failure_reason(),
            "All training jobs failed. Please take a look at the training jobs failures to get "
            "more details.");
}

// Issue 14: the tuning job's MaxRuntimeInSeconds ends it one way, Completed, whether or not its
// stopped jobs had printed an objective (it used to end Failed "All training jobs failed" when
// none had).
class TuningRuntimeTest : public OrchestratorTest, public ::testing::WithParamInterface<bool> {};

TEST_P(TuningRuntimeTest, ReachingMaxRuntimeStopsTheJobsAndCompletes) {
  const bool printed_objective = GetParam();
  auto r = TuningRequest();
  r.mutable_hyper_parameter_tuning_job_config()
      ->mutable_resource_limits()
      ->set_max_runtime_in_seconds(120);
  ASSERT_TRUE(orch_->CreateTuningJob(r).ok());
  auto link = Connect(2);
  const auto starts = link->Starts();
  ASSERT_EQ(starts.size(), 2u);
  for (const auto& s : starts) Started(s);
  if (printed_objective) Log(starts[0], {"val_loss=0.42"});
  timers_.Advance(121);
  EXPECT_EQ(Describe().hyper_parameter_tuning_job_status(), "InProgress");  // jobs stopping
  ASSERT_EQ(link->Stops().size(), 2u);
  for (const auto& s : starts) Exit(s, 0);
  const auto d = Describe();
  EXPECT_EQ(d.hyper_parameter_tuning_job_status(), "Completed");
  EXPECT_FALSE(d.has_failure_reason());
  EXPECT_EQ(d.training_job_status_counters().stopped(), 2);
  EXPECT_EQ(d.training_job_status_counters().non_retryable_error(), 0);
  EXPECT_EQ(d.objective_status_counters().succeeded(), printed_objective ? 1 : 0);
  EXPECT_EQ(d.has_best_training_job(), printed_objective);
  EXPECT_EQ(link->Starts().size(), 2u);  // nothing launched past the limit
}

INSTANTIATE_TEST_SUITE_P(WithAndWithoutAnObjective, TuningRuntimeTest, ::testing::Bool());

TEST_F(OrchestratorTest, StopTuningJobStopsRunningJobsThenEndsStopped) {
  ASSERT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());
  auto link = Connect(2);
  auto starts = link->Starts();
  Started(starts[0]);
  Started(starts[1]);
  Log(starts[0], {"val_loss=0.42"});
  ASSERT_TRUE(orch_->StopTuningJob("demo").ok());
  EXPECT_EQ(Describe().hyper_parameter_tuning_job_status(), "Stopping");
  auto stops = link->Stops();
  ASSERT_EQ(stops.size(), 2u);
  EXPECT_DOUBLE_EQ(stops[0].grace_seconds(), 120);
  Exit(starts[0], 0);
  EXPECT_EQ(Describe().hyper_parameter_tuning_job_status(), "Stopping");
  Exit(starts[1], 143);
  auto d = Describe();
  EXPECT_EQ(d.hyper_parameter_tuning_job_status(), "Stopped");
  EXPECT_EQ(d.training_job_status_counters().stopped(), 2);
  EXPECT_EQ(d.objective_status_counters().succeeded(), 1);  // job 1 had emitted an objective
  EXPECT_EQ(d.objective_status_counters().failed(), 1);
  EXPECT_EQ(link->Starts().size(), 2u);  // nothing launched after the stop
  auto job = orch_->DescribeTrainingJob(starts[1].training_job_name());
  EXPECT_EQ(job->training_job_status(), "Stopped");
  EXPECT_EQ(job->secondary_status(), "Stopped");
  auto snapshot = orch_->Snapshot("demo");
  ASSERT_TRUE(snapshot.ok());
  EXPECT_THAT(snapshot->stop_reasons(),
              ::testing::UnorderedElementsAre(
                  ::testing::Pair(starts[0].training_job_name(), "the tuning job was stopped"),
                  ::testing::Pair(starts[1].training_job_name(), "the tuning job was stopped")));
}

TEST_F(OrchestratorTest, MaxRuntimeStopsTheJobAndReportsMaxRuntimeExceeded) {
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob()).ok());
  auto described = orch_->DescribeTrainingJob("solo");
  EXPECT_EQ(described->secondary_status(), "Starting");  // no worker yet
  auto link = Connect(1);
  auto starts = link->Starts();
  ASSERT_EQ(starts.size(), 1u);
  Started(starts[0]);
  Log(starts[0], {"loss=1.5e-03 step", "loss=cat"});
  timers_.Advance(29);
  EXPECT_TRUE(link->Stops().empty());
  timers_.Advance(2);
  ASSERT_EQ(link->Stops().size(), 1u);
  Exit(starts[0], 0);
  auto job = orch_->DescribeTrainingJob("solo");
  EXPECT_EQ(job->training_job_status(), "Stopped");
  EXPECT_EQ(job->secondary_status(), "MaxRuntimeExceeded");
  ASSERT_EQ(job->final_metric_data_list_size(), 1);
  EXPECT_FLOAT_EQ(job->final_metric_data_list(0).value(), 1.5e-3f);
  auto logs = orch_->ReadLogs("solo", 0, 10);
  ASSERT_TRUE(logs.ok());
  ASSERT_EQ(logs->size(), 2u);
  EXPECT_EQ((*logs)[1].message, "loss=cat");
}

TEST_F(OrchestratorTest, RestartReadoptsRunningJobsAndCarriesOn) {
  ASSERT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());
  auto link = Connect(2);
  auto starts = link->Starts();
  Succeed(starts[0], {0.5});
  starts = link->Starts();
  ASSERT_EQ(starts.size(), 3u);
  Started(starts[1]);
  // amtd goes away; a new one loads the same store and the worker comes back with its jobs.
  orch_.reset();
  Rebuild();
  ASSERT_TRUE(orch_->Load().ok());
  v1::JobRef r1, r2;
  r1.set_training_job_name(starts[1].training_job_name());
  r1.set_attempt(starts[1].attempt());
  r2.set_training_job_name(starts[2].training_job_name());
  r2.set_attempt(starts[2].attempt());
  auto link2 = Connect(2, {r1, r2});
  EXPECT_TRUE(link2->Starts().empty());  // both slots are taken by the re-adopted jobs
  Succeed(starts[1], {0.4});
  auto more = link2->Starts();
  ASSERT_EQ(more.size(), 1u);
  EXPECT_THAT(more[0].training_job_name(), ::testing::StartsWith("demo-004-"));
  Succeed(starts[2], {0.45});
  Succeed(more[0], {0.6});
  auto d = Describe();
  EXPECT_EQ(d.hyper_parameter_tuning_job_status(), "Completed");
  EXPECT_EQ(d.training_job_status_counters().completed(), 4);
  EXPECT_EQ(d.best_training_job().training_job_name(), starts[1].training_job_name());
}

TEST_F(OrchestratorTest, GpuJobsWaitForTheWorkersGpusNotItsSlotsAlsoAfterARestart) {
  auto request = TuningRequest();
  request.mutable_training_job_definition()->mutable_resource_config()->set_instance_type(
      "ml.g5.xlarge");  // 1 GPU
  ASSERT_TRUE(orch_->CreateTuningJob(request).ok());
  // Eight slots, one GPU: one trial at a time, although MaxParallelTrainingJobs is 2.
  auto link = Connect(8, {}, /*gpus=*/1);
  auto starts = link->Starts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].instance_type(), "ml.g5.xlarge");
  Succeed(starts[0], {0.5});
  starts = link->Starts();
  ASSERT_EQ(starts.size(), 2u);  // the GPU is free again: the next trial
  Started(starts[1]);
  // amtd restarts; the worker comes back running that trial, which holds the GPU still.
  orch_.reset();
  Rebuild();
  ASSERT_TRUE(orch_->Load().ok());
  v1::JobRef running;
  running.set_training_job_name(starts[1].training_job_name());
  running.set_attempt(starts[1].attempt());
  auto link2 = Connect(8, {running}, /*gpus=*/1);
  EXPECT_TRUE(link2->Starts().empty());
  Succeed(starts[1], {0.4});
  EXPECT_EQ(link2->Starts().size(), 1u);
}

TEST_F(OrchestratorTest, JobsTheWorkerNoLongerRunsFailAsRetryableOnlyOnceTheyStarted) {
  ASSERT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());
  auto starts = Connect(2)->Starts();
  ASSERT_EQ(starts.size(), 2u);
  Started(starts[0]);  // starts[1] never reported JobStarted
  timers_.Advance(1);  // starts[0]'s start is written within 0.5 s (a crash before: launched again)
  orch_.reset();
  Rebuild();
  ASSERT_TRUE(orch_->Load().ok());
  auto link = Connect(2);  // reconnects with no running jobs
  auto job = orch_->DescribeTrainingJob(starts[0].training_job_name());
  EXPECT_EQ(job->training_job_status(), "Failed");
  EXPECT_THAT(job->failure_reason(), ::testing::StartsWith("InternalServerError: "));
  auto d = Describe();
  EXPECT_EQ(d.training_job_status_counters().retryable_error(), 1);
  // The job that never started is launched again (attempt 2); a new trial replaces the failed one.
  const auto relaunched = link->Starts();
  ASSERT_EQ(relaunched.size(), 2u);
  EXPECT_EQ(relaunched[0].training_job_name(), starts[1].training_job_name());
  EXPECT_EQ(relaunched[0].attempt(), 2);
  EXPECT_EQ(orch_->DescribeTrainingJob(starts[1].training_job_name())->training_job_status(),
            "InProgress");
}

TEST_F(OrchestratorTest, LostWorkerTimesOutRunningJobs) {
  ASSERT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());
  auto link = Connect(2);
  auto starts = link->Starts();
  Started(starts[0]);
  orch_->OnWorkerDisconnected("w1", link.get());
  timers_.Advance(59);
  EXPECT_EQ(orch_->DescribeTrainingJob(starts[0].training_job_name())->training_job_status(),
            "InProgress");
  timers_.Advance(2);
  EXPECT_EQ(orch_->DescribeTrainingJob(starts[0].training_job_name())->training_job_status(),
            "Failed");
}

TEST_F(OrchestratorTest, RetryStrategyRestartsAJobInPlaceAfterAnInternalError) {
  auto r = TuningRequest();
  r.mutable_training_job_definition()->mutable_retry_strategy()->set_maximum_retry_attempts(1);
  r.mutable_hyper_parameter_tuning_job_config()
      ->mutable_resource_limits()
      ->set_max_number_of_training_jobs(1);
  ASSERT_TRUE(orch_->CreateTuningJob(r).ok());
  auto link = Connect(1);
  const auto first = link->Starts()[0];
  Started(first);
  orch_->OnWorkerDisconnected("w1", link.get());
  timers_.Advance(61);  // lost: retried in place, not failed
  auto job = orch_->DescribeTrainingJob(first.training_job_name());
  EXPECT_EQ(job->training_job_status(), "InProgress");
  EXPECT_EQ(job->secondary_status(), "Starting");
  EXPECT_EQ(job->secondary_status_transitions().rbegin()->status_message(),
            "Retrying the training job after an internal error (the worker running it was "
            "lost): retry 1 of 1");
  auto again = Connect(1);  // a worker comes back: the same job, attempt 2
  ASSERT_EQ(again->Starts().size(), 1u);
  EXPECT_EQ(again->Starts()[0].training_job_name(), first.training_job_name());
  EXPECT_EQ(again->Starts()[0].attempt(), 2);
  Started(again->Starts()[0]);
  orch_->OnWorkerDisconnected("w1", again.get());
  timers_.Advance(61);  // no retry left: RetryableError
  job = orch_->DescribeTrainingJob(first.training_job_name());
  EXPECT_EQ(job->training_job_status(), "Failed");
  EXPECT_EQ(Describe().training_job_status_counters().retryable_error(), 1);
  EXPECT_EQ(Describe().training_job_status_counters().in_progress(), 0);
}

TEST_F(OrchestratorTest, AJobWhoseWorkerWasShutDownUnderItIsAnInternalErrorNotItsExit) {
  // Slurm ending a job's allocation (a node failure, scancel) SIGTERMs its worker, whose trainer
  // may well exit 0 on it: the job did not complete, its instance went away.
  auto r = TuningRequest();
  r.mutable_training_job_definition()->mutable_retry_strategy()->set_maximum_retry_attempts(1);
  r.mutable_hyper_parameter_tuning_job_config()
      ->mutable_resource_limits()
      ->set_max_number_of_training_jobs(1);
  ASSERT_TRUE(orch_->CreateTuningJob(r).ok());
  auto link = Connect(1);
  const auto first = link->Starts()[0];
  Started(first);
  const auto shut_down = [&](const v1::StartJob& s) {
    v1::WorkerMessage m;
    v1::JobExited& e = *m.mutable_exited();
    e.set_training_job_name(s.training_job_name());
    e.set_attempt(s.attempt());
    e.set_exit_code(0);
    e.set_stop_requested(true);
    e.set_worker_shutdown(true);
    e.set_model_uploaded(true);
    Report(m);
  };
  shut_down(first);
  auto job = orch_->DescribeTrainingJob(first.training_job_name());
  EXPECT_EQ(job->training_job_status(), "InProgress");
  // Retried in place: relaunched at once on the worker's free slot, attempt 2.
  ASSERT_EQ(link->Starts().size(), 2u);
  const auto second = link->Starts()[1];
  EXPECT_EQ(second.attempt(), 2);
  Started(second);
  shut_down(second);  // no retry left
  job = orch_->DescribeTrainingJob(first.training_job_name());
  EXPECT_EQ(job->training_job_status(), "Failed");
  EXPECT_EQ(job->failure_reason(),
            "InternalServerError: The worker running this training job was shut down before the "
            "job ended.");
  EXPECT_EQ(Describe().training_job_status_counters().retryable_error(), 1);
}

TEST_F(OrchestratorTest, AStoppingJobWhoseWorkerShutsDownEndsStopped) {
  ASSERT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());
  auto link = Connect(1);
  const auto first = link->Starts()[0];
  Started(first);
  ASSERT_TRUE(orch_->StopTrainingJob(first.training_job_name()).ok());
  v1::WorkerMessage m;
  v1::JobExited& e = *m.mutable_exited();
  e.set_training_job_name(first.training_job_name());
  e.set_attempt(first.attempt());
  e.set_stop_requested(true);
  e.set_worker_shutdown(true);
  Report(m);
  EXPECT_EQ(orch_->DescribeTrainingJob(first.training_job_name())->training_job_status(),
            "Stopped");
}

TEST_F(OrchestratorTest, ErrorsUseSageMakerNamesAndTexts) {
  ASSERT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());
  auto dup = orch_->CreateTuningJob(TuningRequest());
  EXPECT_EQ(dup.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(
      dup.status().message(),
      "A hyperparameter tuning job with the name, demo, already exists. Choose a different name.");
  auto upper = TuningRequest();
  upper.set_hyper_parameter_tuning_job_name("DEMO");  // names are unique case-insensitively
  EXPECT_EQ(orch_->CreateTuningJob(upper).status().code(), absl::StatusCode::kAlreadyExists);
  auto missing = orch_->DescribeTuningJob("nope");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "Amazon SageMaker can't find a tuning job called nope. Type another name.");
  auto no_job = orch_->DescribeTrainingJob("nope");
  EXPECT_EQ(no_job.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(no_job.status().message(), "Requested resource not found.");
}

TEST_F(OrchestratorTest, UnknownImageFailsTheJobAsClientError) {
  auto r = TuningRequest();
  r.mutable_training_job_definition()->mutable_algorithm_specification()->set_training_image(
      "123456789012.dkr.ecr.us-east-1.amazonaws.com/unknown:1");
  r.mutable_hyper_parameter_tuning_job_config()
      ->mutable_resource_limits()
      ->set_max_number_of_training_jobs(2);
  ASSERT_TRUE(orch_->CreateTuningJob(r).ok());
  auto link = Connect(2);
  EXPECT_TRUE(link->Starts().empty());
  auto d = Describe();
  EXPECT_EQ(d.hyper_parameter_tuning_job_status(), "Failed");
  auto jobs = orch_->Snapshot("demo");
  ASSERT_EQ(jobs->training_jobs_size(), 2);
  EXPECT_THAT(jobs->training_jobs(0).failure_reason(),
              HasSubstr("ClientError: Cannot run the training image "
                        "'123456789012.dkr.ecr.us-east-1.amazonaws.com/unknown:1'"));
}

TEST_F(OrchestratorTest, SnapshotOfSomeJobsHasOnlyThoseOfTheTuningJobThatExist) {
  ASSERT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());
  ASSERT_TRUE(orch_->CreateTrainingJob(SoloJob("solo")).ok());
  auto link = Connect(3);
  auto starts = link->Starts();
  ASSERT_GE(starts.size(), 2u);
  std::vector<std::string> tuning_jobs;
  for (const auto& s : starts) {
    if (s.training_job_name() != "solo") tuning_jobs.push_back(s.training_job_name());
  }
  ASSERT_EQ(tuning_jobs.size(), 2u);
  ASSERT_TRUE(orch_->StopTrainingJob(tuning_jobs[1]).ok());

  // Another tuning job's name, a standalone job and a name no job has are skipped; names match
  // case-insensitively, as SageMaker's do.
  std::string upper = tuning_jobs[1];
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::vector<std::string> only = {upper, "solo", "no-such-job"};
  auto some = orch_->Snapshot("DEMO", &only);
  ASSERT_TRUE(some.ok()) << some.status();
  EXPECT_EQ(some->tuning_job().hyper_parameter_tuning_job_name(), "demo");
  ASSERT_EQ(some->training_jobs_size(), 1);
  EXPECT_EQ(some->training_jobs(0).training_job_name(), tuning_jobs[1]);
  EXPECT_EQ(some->training_jobs(0).training_job_status(), "Stopping");

  const std::vector<std::string> none;
  EXPECT_EQ(orch_->Snapshot("demo", &none)->training_jobs_size(), 0);
  EXPECT_EQ(orch_->Snapshot("demo")->training_jobs_size(), 2);
}

TEST_F(OrchestratorTest, TargetObjectiveEndsTheTuningJobCompleted) {
  auto r = TuningRequest();
  r.mutable_hyper_parameter_tuning_job_config()
      ->mutable_tuning_job_completion_criteria()
      ->set_target_objective_metric_value(0.2f);
  ASSERT_TRUE(orch_->CreateTuningJob(r).ok());
  auto link = Connect(2);
  auto starts = link->Starts();
  Started(starts[1]);
  Succeed(starts[0], {0.1});
  ASSERT_EQ(link->Stops().size(), 1u);  // the other running job is stopped
  Exit(starts[1], 0);
  auto d = Describe();
  EXPECT_EQ(d.hyper_parameter_tuning_job_status(), "Completed");
  EXPECT_THAT(
      orch_->Snapshot("demo")->stop_reasons(),
      ::testing::ElementsAre(::testing::Pair(starts[1].training_job_name(),
                                             "the tuning job reached TargetObjectiveMetricValue")));
  EXPECT_EQ(link->Starts().size(), 2u);
}

TEST_F(OrchestratorTest, ListsPaginateWithNextToken) {
  ASSERT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());
  auto link = Connect(2);
  v1::ListTrainingJobsForHyperParameterTuningJobRequest req;
  req.set_hyper_parameter_tuning_job_name("demo");
  req.set_max_results(1);
  auto page1 = orch_->ListTrainingJobsForTuningJob(req);
  ASSERT_TRUE(page1.ok());
  ASSERT_EQ(page1->training_job_summaries_size(), 1);
  ASSERT_TRUE(page1->has_next_token());
  req.set_next_token(page1->next_token());
  auto page2 = orch_->ListTrainingJobsForTuningJob(req);
  ASSERT_EQ(page2->training_job_summaries_size(), 1);
  EXPECT_FALSE(page2->has_next_token());
  EXPECT_NE(page1->training_job_summaries(0).training_job_name(),
            page2->training_job_summaries(0).training_job_name());
  req.set_next_token("garbage");
  EXPECT_EQ(orch_->ListTrainingJobsForTuningJob(req).status().message(),
            "Invalid pagination token");
}

TEST_F(OrchestratorTest, AutoEarlyStoppingStopsAWorseJobAndExplainsEveryDecision) {
  auto r = TuningRequest();
  auto* c = r.mutable_hyper_parameter_tuning_job_config();
  c->set_training_job_early_stopping_type("Auto");
  c->mutable_resource_limits()->set_max_parallel_training_jobs(1);
  c->mutable_resource_limits()->set_max_number_of_training_jobs(2);
  ASSERT_TRUE(orch_->CreateTuningJob(r).ok());
  auto link = Connect(1);
  Succeed(link->Starts()[0], {1.0, 0.8, 0.6});
  auto second = link->Starts()[1];
  Started(second);
  // Epochs 1 and 2 are the default grace period: far worse, and not compared.
  Log(second, {"val_loss=5", "val_loss=5"});
  EXPECT_TRUE(link->Stops().empty());
  Log(second, {"val_loss=0.85"});  // epoch 3: 0.85 > 0.8 = mean(1.0, 0.8, 0.6): stop
  ASSERT_EQ(link->Stops().size(), 1u);
  auto job = orch_->DescribeTrainingJob(second.training_job_name());
  EXPECT_EQ(job->training_job_status(), "Stopping");
  EXPECT_THAT(job->secondary_status_transitions().rbegin()->status_message(),
              ::testing::StartsWith("Stopping the training job: epoch 3"));
  Exit(second, 0);
  job = orch_->DescribeTrainingJob(second.training_job_name());
  EXPECT_EQ(job->training_job_status(), "Stopped");
  EXPECT_EQ(job->secondary_status(), "Stopped");

  auto explained = orch_->ExplainTrainingJob(second.training_job_name());
  ASSERT_TRUE(explained.ok());
  EXPECT_EQ(explained->early_stopping(), "Auto");
  ASSERT_EQ(explained->decisions_size(), 3);
  EXPECT_FALSE(explained->decisions(0).stop());
  EXPECT_THAT(explained->decisions(1).explanation(),
              ::testing::HasSubstr("the rule compares from epoch 3 (grace_epochs 2)"));
  const auto& stop = explained->decisions(2);
  EXPECT_TRUE(stop.stop());
  EXPECT_EQ(stop.rule(), "Median");
  EXPECT_EQ(stop.epoch(), 3);
  EXPECT_DOUBLE_EQ(stop.value(), 0.85);
  EXPECT_DOUBLE_EQ(stop.threshold(), 0.8);
  EXPECT_EQ(stop.reference_jobs(), 1);
  EXPECT_THAT(explained->objective_values(), ElementsAre(5, 5, 0.85));
  EXPECT_THAT(orch_->Snapshot("demo")->stop_reasons(),
              ::testing::ElementsAre(::testing::Pair(
                  second.training_job_name(),
                  "median rule, epoch 3: val:loss 0.85 > 0.8, the median of the running averages "
                  "to epoch 3 of 1 completed or stopped job")));

  auto d = Describe();
  EXPECT_EQ(d.hyper_parameter_tuning_job_status(), "Completed");
  EXPECT_EQ(d.training_job_status_counters().stopped(), 1);
  EXPECT_EQ(d.objective_status_counters().succeeded(), 2);  // the stopped job keeps its last value

  // The tuning job's picture: both curves, the stop on the second, the median line now (the two
  // finished jobs' running averages: to epoch 3, 0.8 and 3.6167; their median 2.2083).
  auto picture = orch_->ExplainHyperParameterTuningJob("demo");
  ASSERT_TRUE(picture.ok()) << picture.status();
  EXPECT_EQ(picture->hyper_parameter_tuning_job_name(), "demo");
  EXPECT_EQ(picture->early_stopping(), "Auto");
  EXPECT_EQ(picture->objective_metric_name(), "val:loss");
  EXPECT_EQ(picture->objective_type(), "Minimize");
  ASSERT_EQ(picture->training_jobs_size(), 2);
  EXPECT_EQ(picture->training_jobs(0).training_job_status(), "Completed");
  EXPECT_THAT(picture->training_jobs(0).objective_values(), ElementsAre(1.0, 0.8, 0.6));
  EXPECT_EQ(picture->training_jobs(0).decisions_size(), 0);  // its continues are not drawn
  EXPECT_EQ(picture->training_jobs(1).training_job_name(), second.training_job_name());
  EXPECT_EQ(picture->training_jobs(1).training_job_status(), "Stopped");
  ASSERT_EQ(picture->training_jobs(1).decisions_size(), 1);
  EXPECT_EQ(picture->training_jobs(1).decisions(0).explanation(), stop.explanation());
  ASSERT_EQ(picture->median_reference_size(), 1);  // epoch 3: grace before, nobody after
  EXPECT_EQ(picture->median_reference(0).epoch(), 3);
  EXPECT_DOUBLE_EQ(picture->median_reference(0).median(), (0.8 + (5 + 5 + 0.85) / 3) / 2);
  EXPECT_EQ(picture->median_reference(0).reference_jobs(), 2);
}

TEST_F(OrchestratorTest, EarlyStoppingOffRecordsNoDecision) {
  ASSERT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());
  auto link = Connect(2);
  Succeed(link->Starts()[0], {1.0, 0.8});
  Started(link->Starts()[1]);
  Log(link->Starts()[1], {"val_loss=5", "val_loss=6"});
  EXPECT_TRUE(link->Stops().empty());
  auto explained = orch_->ExplainTrainingJob(link->Starts()[1].training_job_name());
  EXPECT_EQ(explained->early_stopping(), "Off");
  EXPECT_EQ(explained->decisions_size(), 0);
  auto picture = orch_->ExplainHyperParameterTuningJob("demo");
  ASSERT_TRUE(picture.ok()) << picture.status();
  EXPECT_EQ(picture->early_stopping(), "Off");
  ASSERT_EQ(picture->training_jobs_size(), 3);  // the third began when the first ended
  EXPECT_EQ(picture->training_jobs(2).objective_values_size(), 0);
  EXPECT_THAT(picture->training_jobs(1).objective_values(), ElementsAre(5, 6));
  EXPECT_EQ(picture->median_reference_size(), 0);
  EXPECT_EQ(orch_->ExplainHyperParameterTuningJob("nope").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(OrchestratorTest, HyperbandStopsAJobReachingMaxResourceBeforeItsLastEpoch) {
  auto r = TuningRequest();
  auto* c = r.mutable_hyper_parameter_tuning_job_config();
  c->set_strategy("Hyperband");
  c->mutable_strategy_config()->mutable_hyperband_strategy_config()->set_max_resource(2);
  c->mutable_resource_limits()->set_max_parallel_training_jobs(1);
  c->mutable_resource_limits()->set_max_number_of_training_jobs(1);
  ASSERT_TRUE(orch_->CreateTuningJob(r).ok());  // epochs = 3, MaxResource 2
  auto link = Connect(1);
  auto s = link->Starts()[0];
  Started(s);
  Log(s, {"val_loss=1"});
  EXPECT_TRUE(link->Stops().empty());
  Log(s, {"val_loss=0.9"});
  ASSERT_EQ(link->Stops().size(), 1u);
  Exit(s, 0);
  EXPECT_EQ(orch_->DescribeTrainingJob(s.training_job_name())->training_job_status(), "Stopped");
  auto explained = orch_->ExplainTrainingJob(s.training_job_name());
  EXPECT_EQ(explained->early_stopping(), "Hyperband");
  ASSERT_EQ(explained->decisions_size(), 2);
  EXPECT_TRUE(explained->decisions(1).stop());
  EXPECT_EQ(explained->decisions(1).rule(), "Hyperband");
  EXPECT_EQ(explained->decisions(1).explanation(),
            "epoch 2: val:loss 0.9; reached MaxResource 2: stop");
}

TEST_F(OrchestratorTest, HyperbandLeavesAJobWhoseLastEpochIsMaxResourceToComplete) {
  auto r = TuningRequest();
  auto* c = r.mutable_hyper_parameter_tuning_job_config();
  c->set_strategy("Hyperband");
  c->mutable_resource_limits()->set_max_parallel_training_jobs(1);
  c->mutable_resource_limits()->set_max_number_of_training_jobs(1);
  ASSERT_TRUE(orch_->CreateTuningJob(r).ok());  // MaxResource inferred from epochs = 3
  auto link = Connect(1);
  auto s = link->Starts()[0];
  Succeed(s, {1, 0.9, 0.8});
  EXPECT_TRUE(link->Stops().empty());
  EXPECT_EQ(orch_->DescribeTrainingJob(s.training_job_name())->training_job_status(), "Completed");
  auto explained = orch_->ExplainTrainingJob(s.training_job_name());
  ASSERT_EQ(explained->decisions_size(), 3);
  EXPECT_FALSE(explained->decisions(2).stop());
  EXPECT_EQ(explained->decisions(2).explanation(),
            "epoch 3: val:loss 0.8; reached MaxResource 3, its last epoch: it ends by itself: "
            "continue");
  EXPECT_EQ(Describe().training_job_status_counters().completed(), 1);
}

// SoloJob as a managed spot job with checkpoints: MaxRuntimeInSeconds 1000, MaxWait 5000.
v1::CreateTrainingJobRequest SpotTrainingJob() {
  v1::CreateTrainingJobRequest r = SoloJob("spot");
  r.set_enable_managed_spot_training(true);
  r.mutable_checkpoint_config()->set_s3_uri("s3://b/checkpoints");
  r.mutable_stopping_condition()->set_max_runtime_in_seconds(1000);
  r.mutable_stopping_condition()->set_max_wait_time_in_seconds(5000);
  return r;
}

// The statuses of a training job's SecondaryStatusTransitions, repeats collapsed.
std::vector<std::string> SecondaryStatuses(const v1::DescribeTrainingJobResponse& job) {
  std::vector<std::string> out;
  for (const auto& t : job.secondary_status_transitions()) {
    if (out.empty() || out.back() != t.status()) out.push_back(t.status());
  }
  return out;
}

TEST_F(OrchestratorTest, SpotJobIsInterruptedRestartedFromCheckpointsAndBilledAtTheDiscount) {
  spot_.mean_seconds_to_interruption = 100;
  spot_.max_interruptions = 1;
  Rebuild();
  ASSERT_TRUE(orch_->CreateTrainingJob(SpotTrainingJob()).ok());
  auto link = Connect(1);
  ASSERT_EQ(link->Starts().size(), 1u);
  const auto first = link->Starts()[0];
  Started(first);
  const double after = *spot::InterruptionAfter(spot_, 99, "spot", 1, 0);
  ASSERT_LT(after, 700);  // room for the rest within MaxRuntimeInSeconds 1000
  timers_.Advance(after - 0.5);
  EXPECT_TRUE(link->Stops().empty());
  timers_.Advance(1);
  ASSERT_EQ(link->Stops().size(), 1u);  // SIGTERM, then the stop grace, like any stop
  EXPECT_EQ(link->Stops()[0].attempt(), 1);
  EXPECT_DOUBLE_EQ(link->Stops()[0].grace_seconds(), 120);
  auto job = orch_->DescribeTrainingJob("spot");
  EXPECT_EQ(job->training_job_status(), "InProgress");
  EXPECT_EQ(job->secondary_status(), "Interrupted");

  Exit(first, 0);                        // the trainer saved its checkpoint and exited on SIGTERM
  ASSERT_EQ(link->Starts().size(), 2u);  // relaunched at once: the slot is free again
  const auto second = link->Starts()[1];
  EXPECT_EQ(second.attempt(), 2);
  EXPECT_EQ(second.checkpoint_local_sync_dir(), first.checkpoint_local_sync_dir());
  Started(second);
  timers_.Advance(200);  // max_interruptions reached: no second interruption
  EXPECT_EQ(link->Stops().size(), 1u);
  Log(second, {"loss=0.5"});
  Exit(second, 0);

  job = orch_->DescribeTrainingJob("spot");
  EXPECT_EQ(job->training_job_status(), "Completed");
  EXPECT_THAT(SecondaryStatuses(*job),
              ElementsAre("Starting", "Downloading", "Training", "Interrupted", "Starting",
                          "Downloading", "Training", "Uploading", "Completed"));
  std::vector<std::string> messages;
  for (const auto& t : job->secondary_status_transitions()) messages.push_back(t.status_message());
  EXPECT_THAT(messages, ::testing::Contains("The Spot instances were interrupted; the job "
                                            "restarts from its checkpoints"));
  // Training time counts both attempts' training; billing applies the 70% discount.
  const int trained = static_cast<int>(std::lround(after + 0.5 + 200));
  EXPECT_NEAR(job->training_time_in_seconds(), trained, 1);
  EXPECT_EQ(job->billable_time_in_seconds(),
            spot::BillableSeconds(spot_, job->training_time_in_seconds()));
}

TEST_F(OrchestratorTest, SpotJobThatNeverGetsCapacityStopsAtMaxWait) {
  ASSERT_TRUE(orch_->CreateTrainingJob(SpotTrainingJob()).ok());  // no worker: never launched
  timers_.Advance(4999);
  EXPECT_EQ(orch_->DescribeTrainingJob("spot")->training_job_status(), "InProgress");
  timers_.Advance(2);
  auto job = orch_->DescribeTrainingJob("spot");
  EXPECT_EQ(job->training_job_status(), "Stopped");
  EXPECT_EQ(job->secondary_status(), "MaxWaitTimeExceeded");
  EXPECT_THAT(SecondaryStatuses(*job), ElementsAre("Starting", "Stopping", "MaxWaitTimeExceeded"));
}

TEST_F(OrchestratorTest, SpotJobWaitingAfterAnInterruptionStopsAtMaxWait) {
  spot_.mean_seconds_to_interruption = 100;
  Rebuild();
  ASSERT_TRUE(orch_->CreateTrainingJob(SpotTrainingJob()).ok());
  auto link = Connect(1);
  const auto first = link->Starts()[0];
  Started(first);
  const double after = *spot::InterruptionAfter(spot_, 99, "spot", 1, 0);
  ASSERT_LT(after, 900);
  timers_.Advance(after + 0.1);
  ASSERT_EQ(link->Stops().size(), 1u);
  // Another job is queued first, so the freed slot goes to it and the spot job waits.
  auto other = SpotTrainingJob();
  other.set_training_job_name("other");
  other.set_enable_managed_spot_training(false);
  other.mutable_stopping_condition()->clear_max_wait_time_in_seconds();
  ASSERT_TRUE(orch_->CreateTrainingJob(other).ok());
  Exit(first, 0);
  ASSERT_EQ(link->Starts().size(), 2u);
  EXPECT_EQ(link->Starts()[1].training_job_name(), "other");
  EXPECT_EQ(orch_->DescribeTrainingJob("spot")->secondary_status(), "Starting");
  timers_.Advance(5000);
  auto job = orch_->DescribeTrainingJob("spot");
  EXPECT_EQ(job->training_job_status(), "Stopped");
  EXPECT_EQ(job->secondary_status(), "MaxWaitTimeExceeded");
  EXPECT_THAT(SecondaryStatuses(*job),
              ElementsAre("Starting", "Downloading", "Training", "Interrupted", "Starting",
                          "Stopping", "MaxWaitTimeExceeded"));
  EXPECT_NEAR(job->training_time_in_seconds(), after + 0.1, 1);  // the one attempt's training
}

v1::CreateHyperParameterTuningJobRequest WarmChild(
    const std::string& name, const std::string& parent,
    const std::string& type = "IdenticalDataAndAlgorithm") {
  auto r = TuningRequest();
  r.set_hyper_parameter_tuning_job_name(name);
  r.mutable_warm_start_config()->set_warm_start_type(type);
  r.mutable_warm_start_config()
      ->add_parent_hyper_parameter_tuning_jobs()
      ->set_hyper_parameter_tuning_job_name(parent);
  return r;
}

TEST_F(OrchestratorTest, WarmStartChecksItsParents) {
  auto message = [this](const v1::CreateHyperParameterTuningJobRequest& r) {
    return std::string(orch_->CreateTuningJob(r).status().message());
  };
  EXPECT_EQ(orch_->CreateTuningJob(WarmChild("child", "ghost")).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(message(WarmChild("child", "ghost")),
            "Amazon SageMaker can't find a tuning job called ghost. Type another name.");
  ASSERT_TRUE(orch_->CreateTuningJob(TuningRequest()).ok());
  EXPECT_EQ(message(WarmChild("child", "demo")),
            "The parent tuning job demo is InProgress; warm start needs parent tuning jobs that "
            "are Completed, Stopped or Failed.");
  ASSERT_TRUE(orch_->StopTuningJob("demo").ok());  // no worker: nothing runs, it ends Stopped
  ASSERT_EQ(Describe().hyper_parameter_tuning_job_status(), "Stopped");

  auto grid = WarmChild("child", "demo");
  grid.mutable_hyper_parameter_tuning_job_config()->set_strategy("Grid");
  EXPECT_EQ(message(grid),
            "Warm start is available for the Bayesian and Random strategies; this tuning job "
            "uses Grid.");
  auto maximize = WarmChild("child", "demo");
  maximize.mutable_hyper_parameter_tuning_job_config()
      ->mutable_hyper_parameter_tuning_job_objective()
      ->set_type("Maximize");
  EXPECT_EQ(message(maximize),
            "The parent tuning job demo has the objective Minimize val:loss; warm start needs the "
            "same objective as this tuning job, Maximize val:loss.");
  auto more = WarmChild("child", "demo");
  (*more.mutable_training_job_definition()->mutable_static_hyper_parameters())["batch"] = "32";
  EXPECT_EQ(message(more),
            "The parent tuning job demo has 3 static and tunable hyperparameters and this tuning "
            "job has 4; warm start needs the same number (a hyperparameter may move between "
            "static and tunable).");
  // Moving a hyperparameter from tunable to static keeps the count: allowed.
  auto moved = WarmChild("child", "demo");
  moved.mutable_hyper_parameter_tuning_job_config()
      ->mutable_parameter_ranges()
      ->clear_categorical_parameter_ranges();
  (*moved.mutable_training_job_definition()->mutable_static_hyper_parameters())["opt"] = "adam";
  EXPECT_TRUE(orch_->CreateTuningJob(moved).ok());
  // 6 changed static values count 12 changes: too many. The parent has epochs and 5 more here
  // would change the count, so the parent is a new one with 6 statics.
  auto six = TuningRequest();
  six.set_hyper_parameter_tuning_job_name("six");
  auto* statics = six.mutable_training_job_definition()->mutable_static_hyper_parameters();
  for (const char* s : {"a", "b", "c", "d", "e"}) (*statics)[s] = "1";
  six.mutable_hyper_parameter_tuning_job_config()
      ->mutable_resource_limits()
      ->set_max_number_of_training_jobs(1);
  ASSERT_TRUE(orch_->CreateTuningJob(six).ok());
  ASSERT_TRUE(orch_->StopTuningJob("six").ok());
  auto changed = WarmChild("child3", "six");
  auto* child_statics =
      changed.mutable_training_job_definition()->mutable_static_hyper_parameters();
  for (const char* s : {"epochs", "a", "b", "c", "d", "e"}) (*child_statics)[s] = "2";
  EXPECT_EQ(message(changed),
            "This tuning job makes 12 changes to the hyperparameters of the parent tuning job six; "
            "warm start allows at most 10 (a tunable hyperparameter made static counts 1, or its "
            "number of values when categorical; a changed static value counts 2).");
  (*child_statics)["e"] = "1";  // 10 changes: allowed
  EXPECT_TRUE(orch_->CreateTuningJob(changed).ok());
  auto retyped = WarmChild("child2", "demo");
  auto* ranges = retyped.mutable_hyper_parameter_tuning_job_config()->mutable_parameter_ranges();
  ranges->clear_continuous_parameter_ranges();
  auto* lr = ranges->add_integer_parameter_ranges();
  lr->set_name("lr");
  lr->set_min_value("1");
  lr->set_max_value("10");
  EXPECT_EQ(message(retyped),
            "The hyperparameter lr is Continuous in the parent tuning job demo and Integer here; "
            "warm start does not allow changing its type.");
}

TEST_F(OrchestratorTest, WarmStartReportsTheOverallBestOfParentAndChild) {
  auto parent = TuningRequest();
  parent.mutable_hyper_parameter_tuning_job_config()
      ->mutable_resource_limits()
      ->set_max_number_of_training_jobs(1);
  ASSERT_TRUE(orch_->CreateTuningJob(parent).ok());
  auto link = Connect(1);
  Succeed(link->Starts()[0], {0.1});
  ASSERT_EQ(Describe().hyper_parameter_tuning_job_status(), "Completed");

  auto child = WarmChild("child", "demo");
  child.mutable_hyper_parameter_tuning_job_config()
      ->mutable_resource_limits()
      ->set_max_number_of_training_jobs(1);
  ASSERT_TRUE(orch_->CreateTuningJob(child).ok());
  auto transfer = WarmChild("transfer", "demo", "TransferLearning");
  transfer.mutable_hyper_parameter_tuning_job_config()
      ->mutable_resource_limits()
      ->set_max_number_of_training_jobs(1);
  ASSERT_TRUE(orch_->CreateTuningJob(transfer).ok());
  Succeed(link->Starts()[1], {0.5});
  Succeed(link->Starts()[2], {0.5});

  const auto d = Describe("child");
  EXPECT_EQ(d.best_training_job().training_job_name(), link->Starts()[1].training_job_name());
  EXPECT_EQ(d.overall_best_training_job().training_job_name(),
            link->Starts()[0].training_job_name());
  EXPECT_FLOAT_EQ(
      d.overall_best_training_job().final_hyper_parameter_tuning_job_objective_metric().value(),
      0.1f);
  EXPECT_EQ(orch_->Snapshot("child")->warm_start_observations(), 1);  // the parent's one job
  EXPECT_EQ(orch_->Snapshot("demo")->warm_start_observations(), 0);
  // OverallBestTrainingJob is for IdenticalDataAndAlgorithm only.
  EXPECT_FALSE(Describe("transfer").has_overall_best_training_job());
}

}  // namespace
}  // namespace amt::core
