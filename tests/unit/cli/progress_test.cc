#include "cli/progress.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace amt::cli {
namespace {

using v1::DescribeHyperParameterTuningJobResponse;
using v1::HyperParameterTrainingJobSummary;
using v1::WatchHyperParameterTuningJobResponse;

HyperParameterTrainingJobSummary Job(
    const std::string& name, double created, const std::string& status,
    std::initializer_list<std::pair<std::string, std::string>> hps) {
  HyperParameterTrainingJobSummary job;
  job.set_training_job_name(name);
  job.set_creation_time(created);
  job.set_training_job_status(status);
  for (const auto& [key, value] : hps) (*job.mutable_tuned_hyper_parameters())[key] = value;
  return job;
}

HyperParameterTrainingJobSummary WithObjective(HyperParameterTrainingJobSummary job, float value) {
  auto* metric = job.mutable_final_hyper_parameter_tuning_job_objective_metric();
  metric->set_type("Minimize");
  metric->set_metric_name("val:loss");
  metric->set_value(value);
  return job;
}

DescribeHyperParameterTuningJobResponse Tuning(const std::string& status, int completed,
                                               int in_progress) {
  DescribeHyperParameterTuningJobResponse tuning;
  tuning.set_hyper_parameter_tuning_job_name("demo");
  tuning.set_hyper_parameter_tuning_job_status(status);
  tuning.mutable_hyper_parameter_tuning_job_config()
      ->mutable_resource_limits()
      ->set_max_number_of_training_jobs(3);
  tuning.mutable_training_job_status_counters()->set_completed(completed);
  tuning.mutable_training_job_status_counters()->set_in_progress(in_progress);
  tuning.mutable_objective_status_counters()->set_succeeded(completed);
  tuning.mutable_objective_status_counters()->set_pending(in_progress);
  return tuning;
}

WatchHyperParameterTuningJobResponse Snapshot(DescribeHyperParameterTuningJobResponse tuning,
                                              std::vector<HyperParameterTrainingJobSummary> jobs) {
  WatchHyperParameterTuningJobResponse snapshot;
  *snapshot.mutable_tuning_job() = std::move(tuning);
  for (auto& job : jobs) *snapshot.add_training_jobs() = std::move(job);
  return snapshot;
}

const HyperParameterTrainingJobSummary kJob1Running =
    Job("demo-001-aaaa", 10, "InProgress", {{"lr", "0.01"}, {"batch", "32"}});
const HyperParameterTrainingJobSummary kJob2Running =
    Job("demo-002-bbbb", 11, "InProgress", {{"lr", "0.1"}, {"batch", "64"}});
const HyperParameterTrainingJobSummary kJob1Done =
    WithObjective(Job("demo-001-aaaa", 10, "Completed", {{"lr", "0.01"}, {"batch", "32"}}), 0.25f);

// The three snapshots of a small run: two jobs start, the first completes (new best), the
// second fails and the tuning job completes.
std::vector<WatchHyperParameterTuningJobResponse> ScriptedRun() {
  DescribeHyperParameterTuningJobResponse after_first = Tuning("InProgress", 1, 1);
  *after_first.mutable_best_training_job() = kJob1Done;
  DescribeHyperParameterTuningJobResponse done = Tuning("Completed", 1, 0);
  done.mutable_training_job_status_counters()->set_non_retryable_error(1);
  done.mutable_objective_status_counters()->set_failed(1);
  *done.mutable_best_training_job() = kJob1Done;
  HyperParameterTrainingJobSummary job2_failed = kJob2Running;
  job2_failed.set_training_job_status("Failed");
  job2_failed.set_failure_reason("AlgorithmError: exit code 1");
  return {Snapshot(Tuning("InProgress", 0, 2), {kJob2Running, kJob1Running}),
          Snapshot(after_first, {kJob1Done, kJob2Running}),
          Snapshot(done, {kJob1Done, job2_failed})};
}

TEST(ProgressRendererLines, PrintsOneLinePerChangeInOrder) {
  std::ostringstream out;
  ProgressRenderer renderer(out, /*tty=*/false);
  for (const auto& snapshot : ScriptedRun()) renderer.Update(snapshot);
  EXPECT_EQ(out.str(),
            "Tuning job demo: InProgress\n"
            "Training job demo-001-aaaa: InProgress [batch=32 lr=0.01]\n"
            "Training job demo-002-bbbb: InProgress [batch=64 lr=0.1]\n"
            "Training job demo-001-aaaa: Completed, val:loss=0.25\n"
            "Best so far: demo-001-aaaa, val:loss=0.25\n"
            "Training job demo-002-bbbb: Failed: AlgorithmError: exit code 1\n"
            "Tuning job demo: Completed\n");
}

TEST(ProgressRendererLines, PrintsNothingForARepeatedSnapshot) {
  std::ostringstream out;
  ProgressRenderer renderer(out, /*tty=*/false);
  const auto run = ScriptedRun();
  renderer.Update(run[1]);
  const std::string first = out.str();
  renderer.Update(run[1]);
  EXPECT_EQ(out.str(), first);
}

TEST(ProgressRendererLines, NeverPrintsTheSameLineTwiceWhenAStatusComesBack) {
  std::ostringstream out;
  ProgressRenderer renderer(out, /*tty=*/false);
  HyperParameterTrainingJobSummary stopping = kJob1Running;
  stopping.set_training_job_status("Stopping");
  renderer.Update(Snapshot(Tuning("InProgress", 0, 1), {kJob1Running}));
  renderer.Update(Snapshot(Tuning("InProgress", 0, 1), {stopping}));
  renderer.Update(Snapshot(Tuning("InProgress", 0, 1), {kJob1Running}));
  EXPECT_EQ(out.str(),
            "Tuning job demo: InProgress\n"
            "Training job demo-001-aaaa: InProgress [batch=32 lr=0.01]\n"
            "Training job demo-001-aaaa: Stopping [batch=32 lr=0.01]\n");
}

TEST(ProgressRendererLines, SaysOnceWhyAJobIsStopped) {
  std::ostringstream out;
  ProgressRenderer renderer(out, /*tty=*/false);
  HyperParameterTrainingJobSummary stopping = kJob1Running;
  stopping.set_training_job_status("Stopping");
  HyperParameterTrainingJobSummary stopped = WithObjective(kJob1Running, 0.9f);
  stopped.set_training_job_status("Stopped");
  auto with_reason = [](WatchHyperParameterTuningJobResponse snapshot) {
    (*snapshot.mutable_stop_reasons())["demo-001-aaaa"] =
        "median rule, epoch 3: val:loss 0.9 > 0.5";
    return snapshot;
  };
  renderer.Update(Snapshot(Tuning("InProgress", 0, 1), {kJob1Running}));
  renderer.Update(with_reason(Snapshot(Tuning("InProgress", 0, 1), {stopping})));
  renderer.Update(with_reason(Snapshot(Tuning("InProgress", 0, 0), {stopped})));
  EXPECT_EQ(out.str(),
            "Tuning job demo: InProgress\n"
            "Training job demo-001-aaaa: InProgress [batch=32 lr=0.01]\n"
            "Training job demo-001-aaaa: Stopping [batch=32 lr=0.01] (median rule, epoch 3: "
            "val:loss 0.9 > 0.5)\n"
            "Training job demo-001-aaaa: Stopped, val:loss=0.9\n");
}

TEST(ProgressRendererLines, GivesTheReasonOnStoppedWhenStoppingWasNotSeen) {
  std::ostringstream out;
  ProgressRenderer renderer(out, /*tty=*/false);
  HyperParameterTrainingJobSummary stopped = kJob2Running;
  stopped.set_training_job_status("Stopped");
  auto snapshot = Snapshot(Tuning("Stopping", 0, 0), {stopped});
  (*snapshot.mutable_stop_reasons())["demo-002-bbbb"] = "the tuning job was stopped";
  renderer.Update(snapshot);
  EXPECT_NE(out.str().find("Training job demo-002-bbbb: Stopped (the tuning job was stopped)\n"),
            std::string::npos)
      << out.str();
}

TEST(ProgressRendererTable, ShowsWhyTheLatestStoppedJobWasStopped) {
  std::ostringstream out;
  ProgressRenderer renderer(out, /*tty=*/true, /*width=*/0);
  HyperParameterTrainingJobSummary first = kJob1Done;
  first.set_training_job_status("Stopped");
  HyperParameterTrainingJobSummary second = kJob2Running;
  second.set_training_job_status("Stopping");
  auto snapshot = Snapshot(Tuning("InProgress", 0, 1), {second, first});
  (*snapshot.mutable_stop_reasons())["demo-001-aaaa"] = "StopTrainingJob";
  (*snapshot.mutable_stop_reasons())["demo-002-bbbb"] = "Hyperband, epoch 1: val:loss 3 > 2";
  renderer.Update(snapshot);
  const std::string text = out.str();
  EXPECT_NE(text.find("\nLast stop: demo-002-bbbb: Hyperband, epoch 1: val:loss 3 > 2\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("StopTrainingJob"), std::string::npos) << text;
}

TEST(ProgressRendererLines, SaysWhereAWarmStartBegan) {
  std::ostringstream out;
  ProgressRenderer renderer(out, /*tty=*/false);
  auto tuning = Tuning("InProgress", 0, 1);
  auto* warm = tuning.mutable_warm_start_config();
  warm->set_warm_start_type("IdenticalDataAndAlgorithm");
  warm->add_parent_hyper_parameter_tuning_jobs()->set_hyper_parameter_tuning_job_name("first");
  warm->add_parent_hyper_parameter_tuning_jobs()->set_hyper_parameter_tuning_job_name("second");
  auto snapshot = Snapshot(tuning, {kJob1Running});
  snapshot.set_warm_start_observations(16);
  renderer.Update(snapshot);
  renderer.Update(snapshot);
  EXPECT_EQ(out.str(),
            "Tuning job demo: InProgress\n"
            "Warm start (IdenticalDataAndAlgorithm) from first, second: 16 training jobs known "
            "before the first\n"
            "Training job demo-001-aaaa: InProgress [batch=32 lr=0.01]\n");
}

TEST(ProgressRendererLines, NeverCutsLongLines) {
  std::ostringstream out;
  ProgressRenderer renderer(out, /*tty=*/false, /*width=*/20);
  renderer.Update(Snapshot(Tuning("InProgress", 0, 1), {kJob1Running}));
  EXPECT_NE(out.str().find("Training job demo-001-aaaa: InProgress [batch=32 lr=0.01]\n"),
            std::string::npos);
}

TEST(ProgressRendererTable, DrawsHeaderCountersAndOneRowPerJob) {
  std::ostringstream out;
  ProgressRenderer renderer(out, /*tty=*/true);
  renderer.Update(ScriptedRun()[1]);
  EXPECT_EQ(out.str(),
            "Tuning job demo: InProgress (2 of 3 training jobs)\n"
            "Completed 1, InProgress 1, RetryableError 0, NonRetryableError 0, Stopped 0\n"
            "Best: demo-001-aaaa, val:loss=0.25\n"
            "TRAINING JOB   STATUS      OBJECTIVE  HYPERPARAMETERS\n"
            "demo-001-aaaa  Completed   0.25       batch=32 lr=0.01\n"
            "demo-002-bbbb  InProgress  -          batch=64 lr=0.1\n");
}

TEST(ProgressRendererTable, MergesSnapshotsOfTheJobsThatChangedIntoTheWholeTable) {
  std::ostringstream out;
  ProgressRenderer renderer(out, /*tty=*/true);
  renderer.Update(ScriptedRun()[0]);
  // ChangesOnly: the next message has only the job that changed.
  DescribeHyperParameterTuningJobResponse after_first = Tuning("InProgress", 1, 1);
  *after_first.mutable_best_training_job() = kJob1Done;
  out.str("");
  renderer.Update(Snapshot(after_first, {kJob1Done}));
  EXPECT_EQ(out.str(),
            "\x1b[5A\x1b[J"
            "Tuning job demo: InProgress (2 of 3 training jobs)\n"
            "Completed 1, InProgress 1, RetryableError 0, NonRetryableError 0, Stopped 0\n"
            "Best: demo-001-aaaa, val:loss=0.25\n"
            "TRAINING JOB   STATUS      OBJECTIVE  HYPERPARAMETERS\n"
            "demo-001-aaaa  Completed   0.25       batch=32 lr=0.01\n"
            "demo-002-bbbb  InProgress  -          batch=64 lr=0.1\n");
}

TEST(ProgressRendererLines, PrintsOnlyWhatChangedFromSnapshotsOfTheJobsThatChanged) {
  std::ostringstream out;
  ProgressRenderer renderer(out, /*tty=*/false);
  renderer.Update(ScriptedRun()[0]);
  HyperParameterTrainingJobSummary stopping = kJob2Running;
  stopping.set_training_job_status("Stopping");
  WatchHyperParameterTuningJobResponse delta = Snapshot(Tuning("InProgress", 0, 2), {stopping});
  (*delta.mutable_stop_reasons())["demo-002-bbbb"] = "median rule";
  out.str("");
  renderer.Update(delta);
  EXPECT_EQ(out.str(), "Training job demo-002-bbbb: Stopping [batch=64 lr=0.1] (median rule)\n");
}

TEST(ProgressRendererTable, NamesTheDefinitionOfEveryJobOfAMultiAlgorithmTuningJob) {
  HyperParameterTrainingJobSummary linear = kJob1Done;
  linear.set_training_job_definition_name("linear");
  HyperParameterTrainingJobSummary forest =
      Job("demo-002-bbbb", 11, "InProgress", {{"depth", "3"}});
  forest.set_training_job_definition_name("forest");
  DescribeHyperParameterTuningJobResponse tuning = Tuning("InProgress", 1, 1);
  *tuning.mutable_best_training_job() = linear;
  std::ostringstream out;
  ProgressRenderer renderer(out, /*tty=*/true);
  renderer.Update(Snapshot(tuning, {linear, forest}));
  EXPECT_EQ(out.str(),
            "Tuning job demo: InProgress (2 of 3 training jobs)\n"
            "Completed 1, InProgress 1, RetryableError 0, NonRetryableError 0, Stopped 0\n"
            "Best: demo-001-aaaa (linear), val:loss=0.25\n"
            "TRAINING JOB            STATUS      OBJECTIVE  HYPERPARAMETERS\n"
            "demo-001-aaaa (linear)  Completed   0.25       batch=32 lr=0.01\n"
            "demo-002-bbbb (forest)  InProgress  -          depth=3\n");
  std::ostringstream lines;
  ProgressRenderer line_renderer(lines, /*tty=*/false);
  line_renderer.Update(Snapshot(Tuning("InProgress", 0, 1), {forest}));
  EXPECT_NE(lines.str().find("Training job demo-002-bbbb (forest): InProgress [depth=3]\n"),
            std::string::npos)
      << lines.str();
}

TEST(ProgressRendererTable, RedrawsInPlaceByMovingUpOverThePreviousTable) {
  std::ostringstream out;
  ProgressRenderer renderer(out, /*tty=*/true);
  const auto run = ScriptedRun();
  renderer.Update(run[0]);
  const std::string first =
      "Tuning job demo: InProgress (2 of 3 training jobs)\n"
      "Completed 0, InProgress 2, RetryableError 0, NonRetryableError 0, Stopped 0\n"
      "TRAINING JOB   STATUS      OBJECTIVE  HYPERPARAMETERS\n"
      "demo-001-aaaa  InProgress  -          batch=32 lr=0.01\n"
      "demo-002-bbbb  InProgress  -          batch=64 lr=0.1\n";
  ASSERT_EQ(out.str(), first);
  renderer.Update(run[2]);
  EXPECT_EQ(out.str(),
            first +
                "\x1b[5A\x1b[J"
                "Tuning job demo: Completed (2 of 3 training jobs)\n"
                "Completed 1, InProgress 0, RetryableError 0, NonRetryableError 1, Stopped 0\n"
                "Best: demo-001-aaaa, val:loss=0.25\n"
                "TRAINING JOB   STATUS     OBJECTIVE  HYPERPARAMETERS\n"
                "demo-001-aaaa  Completed  0.25       batch=32 lr=0.01\n"
                "demo-002-bbbb  Failed     -          batch=64 lr=0.1\n");
}

TEST(ProgressRendererTable, CutsHyperParametersToTheWidth) {
  std::ostringstream out;
  ProgressRenderer renderer(out, /*tty=*/true, /*width=*/50);
  renderer.Update(Snapshot(
      Tuning("InProgress", 0, 1),
      {Job("demo-001-aaaa", 10, "InProgress", {{"learning_rate", "0.001"}, {"momentum", "0.9"}})}));
  EXPECT_EQ(out.str(),
            "Tuning job demo: InProgress (1 of 3 training jobs)\n"
            "Completed 0, InProgress 1, RetryableError 0, NonRe\n"
            "TRAINING JOB   STATUS      OBJECTIVE  HYPERPARA...\n"
            "demo-001-aaaa  InProgress  -          learning_...\n");
}

TEST(ProgressRendererTable, ShowsRunningJobsFirstWhenThereAreTooManyRows) {
  std::vector<HyperParameterTrainingJobSummary> jobs;
  const int total = ProgressRenderer::kMaxRows + 5;
  for (int i = 0; i < total; ++i) {
    char name[16];
    std::snprintf(name, sizeof(name), "j%03d", i);
    // The oldest job is still running; every other one is done.
    jobs.push_back(Job(name, i, i == 0 ? "InProgress" : "Completed", {}));
  }
  DescribeHyperParameterTuningJobResponse tuning = Tuning("InProgress", total - 1, 1);
  tuning.clear_hyper_parameter_tuning_job_config();
  std::ostringstream out;
  ProgressRenderer renderer(out, /*tty=*/true);
  renderer.Update(Snapshot(tuning, jobs));
  std::string expected =
      "Tuning job demo: InProgress (25 training jobs)\n"
      "Completed 24, InProgress 1, RetryableError 0, NonRetryableError 0, Stopped 0\n"
      "TRAINING JOB  STATUS      OBJECTIVE  HYPERPARAMETERS\n"
      "j000          InProgress  -\n";
  for (int i = 6; i < total; ++i) {
    char row[64];
    std::snprintf(row, sizeof(row), "j%03d          Completed   -\n", i);
    expected += row;
  }
  expected += "(5 more training jobs not shown)\n";
  EXPECT_EQ(out.str(), expected);
}

TEST(ProgressRendererFinish, SummarisesCountersAndBestJobWithHyperParameters) {
  std::ostringstream out;
  ProgressRenderer renderer(out, /*tty=*/false);
  DescribeHyperParameterTuningJobResponse final = ScriptedRun()[2].tuning_job();
  final.mutable_consumed_resources()->set_runtime_in_seconds(73);
  renderer.Finish(final);
  EXPECT_EQ(out.str(),
            "Tuning job demo ended: Completed\n"
            "Training jobs: Completed 1, InProgress 0, RetryableError 0, NonRetryableError 1, "
            "Stopped 0\n"
            "Objectives: Succeeded 1, Pending 0, Failed 1\n"
            "Runtime: 73 s\n"
            "Best training job: demo-001-aaaa, val:loss=0.25\n"
            "  batch=32\n"
            "  lr=0.01\n");
}

TEST(ProgressRendererFinish, ShowsFailureReasonWhenFailed) {
  std::ostringstream out;
  ProgressRenderer renderer(out, /*tty=*/true);
  DescribeHyperParameterTuningJobResponse final = Tuning("Failed", 0, 0);
  final.mutable_training_job_status_counters()->set_non_retryable_error(2);
  final.mutable_objective_status_counters()->set_failed(2);
  final.set_failure_reason(
      "All training jobs failed. Please take a look at the training jobs failures to get more "
      "details.");
  renderer.Finish(final);
  EXPECT_EQ(out.str(),
            "Tuning job demo ended: Failed\n"
            "Training jobs: Completed 0, InProgress 0, RetryableError 0, NonRetryableError 2, "
            "Stopped 0\n"
            "Objectives: Succeeded 0, Pending 0, Failed 2\n"
            "Best training job: none\n"
            "Failure reason: All training jobs failed. Please take a look at the training jobs "
            "failures to get more details.\n");
}

TEST(ProgressRendererFinish, NamesOverallBestJobFromWarmStartWhenDifferent) {
  std::ostringstream out;
  ProgressRenderer renderer(out, /*tty=*/false);
  DescribeHyperParameterTuningJobResponse final = Tuning("Completed", 1, 0);
  *final.mutable_best_training_job() = kJob1Done;
  *final.mutable_overall_best_training_job() =
      WithObjective(Job("parent-007-cccc", 1, "Completed", {{"lr", "0.02"}}), 0.125f);
  renderer.Finish(final);
  EXPECT_EQ(out.str(),
            "Tuning job demo ended: Completed\n"
            "Training jobs: Completed 1, InProgress 0, RetryableError 0, NonRetryableError 0, "
            "Stopped 0\n"
            "Objectives: Succeeded 1, Pending 0, Failed 0\n"
            "Best training job: demo-001-aaaa, val:loss=0.25\n"
            "  batch=32\n"
            "  lr=0.01\n"
            "Overall best training job (warm start): parent-007-cccc, val:loss=0.125\n");
}

TEST(ProgressRendererFinish, LeavesTheTableOnScreen) {
  std::ostringstream out;
  ProgressRenderer renderer(out, /*tty=*/true);
  renderer.Update(ScriptedRun()[2]);
  const std::size_t table_end = out.str().size();
  renderer.Finish(ScriptedRun()[2].tuning_job());
  EXPECT_EQ(out.str().substr(table_end).find("\x1b["), std::string::npos);
}

}  // namespace
}  // namespace amt::cli
