// End to end: real amtd, real amt-worker, real trainer processes, real gRPC on loopback.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/integration/harness.h"
#include "tests/support/requests.h"

namespace amt::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// The Random example (examples/random-tuning.json) as `name`: this strategy, these limits
// (MaxNumberOfTrainingJobs left out when 0), `ranges` (the example's when ""), these static
// hyperparameters, image and MaxRuntimeInSeconds; minimising "validation:loss", seed 3.
std::string TuningJson(const std::string& name, const std::string& strategy, int max_jobs,
                       int parallel, const std::string& ranges, const std::string& statics,
                       const std::string& image = "amt-local/toy-trainer:latest",
                       int max_runtime = 600) {
  nlohmann::json job = ExampleWith("random-tuning.json", R"j({
    "HyperParameterTuningJobConfig": {
      "HyperParameterTuningJobObjective": {"MetricName": "validation:loss"},
      "TrainingJobEarlyStoppingType": null, "RandomSeed": 3},
    "TrainingJobDefinition": {
      "AlgorithmSpecification": {"MetricDefinitions": [
        {"Name": "validation:loss", "Regex": "val_loss=([0-9.eE+-]+)"},
        {"Name": "validation:accuracy", "Regex": "val_accuracy=([0-9.eE+-]+)"}]},
      "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"}}})j");
  job["HyperParameterTuningJobName"] = name;
  auto& config = job["HyperParameterTuningJobConfig"];
  config["Strategy"] = strategy;
  config["ResourceLimits"] = {{"MaxParallelTrainingJobs", parallel}};
  if (max_jobs > 0) config["ResourceLimits"]["MaxNumberOfTrainingJobs"] = max_jobs;
  if (!ranges.empty()) config["ParameterRanges"] = nlohmann::json::parse(ranges);
  auto& definition = job["TrainingJobDefinition"];
  definition["StaticHyperParameters"] = nlohmann::json::parse(statics);
  definition["AlgorithmSpecification"]["TrainingImage"] = image;
  definition["StoppingCondition"]["MaxRuntimeInSeconds"] = max_runtime;
  return job.dump();
}

// The Random example's ranges: learning_rate, num_layers and optimizer.
constexpr char kRandomRanges[] = "";

class TuningIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_.str();
    image_map_ = WriteImageMap(dir_);
  }
  std::unique_ptr<Amtd> StartAmtd(std::vector<std::string> extra = {}) {
    extra.insert(extra.end(), {"--image-map", image_map_, "--slots", "4", "--stop-grace", "5"});
    return std::make_unique<Amtd>(dir_ + "/data", extra);
  }
  void Create(Amtd& amtd, const std::string& json) {
    grpc::ClientContext ctx;
    v1::CreateHyperParameterTuningJobResponse response;
    auto status =
        amtd.stub().CreateHyperParameterTuningJob(&ctx, TuningRequestFromJson(json), &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  TempDir temp_{"amt-it"};  // removed after amtd_ ends
  std::string dir_;
  std::string image_map_;
};

TEST_F(TuningIntegrationTest, RandomJobWithTwoInParallelCompletes) {
  auto amtd = StartAmtd();
  Create(*amtd, TuningJson("rand", "Random", 4, 2, kRandomRanges, R"j({"epochs": "4"})j"));
  // Parallelism is never exceeded in any snapshot.
  int max_running = 0;
  auto last = WaitForTuningSnapshot(amtd->stub(), "rand", [&](const auto& s) {
    max_running =
        std::max(max_running, s.tuning_job().training_job_status_counters().in_progress());
    const auto& st = s.tuning_job().hyper_parameter_tuning_job_status();
    return st == "Completed" || st == "Failed" || st == "Stopped";
  });
  const auto& t = last.tuning_job();
  EXPECT_EQ(t.hyper_parameter_tuning_job_status(), "Completed");
  EXPECT_LE(max_running, 2);
  EXPECT_EQ(t.training_job_status_counters().completed(), 4);
  EXPECT_EQ(t.objective_status_counters().succeeded(), 4);
  ASSERT_EQ(last.training_jobs_size(), 4);
  ASSERT_TRUE(t.has_best_training_job());
  float best = 1e9;
  for (const auto& j : last.training_jobs()) {
    best = std::min(best, j.final_hyper_parameter_tuning_job_objective_metric().value());
    EXPECT_EQ(j.tuned_hyper_parameters().size(), 3u);
  }
  EXPECT_FLOAT_EQ(t.best_training_job().final_hyper_parameter_tuning_job_objective_metric().value(),
                  best);

  // The best job's details: statuses, metrics, the model in the local S3 folder, its logs.
  grpc::ClientContext ctx;
  v1::DescribeTrainingJobRequest req;
  req.set_training_job_name(t.best_training_job().training_job_name());
  v1::DescribeTrainingJobResponse job;
  ASSERT_TRUE(amtd->stub().DescribeTrainingJob(&ctx, req, &job).ok());
  EXPECT_EQ(job.training_job_status(), "Completed");
  EXPECT_EQ(job.secondary_status(), "Completed");
  EXPECT_EQ(job.hyper_parameters().at("_tuning_objective_metric"), "validation:loss");
  EXPECT_EQ(job.final_metric_data_list_size(), 2);
  EXPECT_EQ(job.model_artifacts().s3_model_artifacts(),
            "s3://bucket/out/" + job.training_job_name() + "/output/model.tar.gz");
  EXPECT_TRUE(
      fs::exists(dir_ + "/data/s3/bucket/out/" + job.training_job_name() + "/output/model.tar.gz"));
  grpc::ClientContext lctx;
  v1::GetTrainingJobLogsRequest lreq;
  lreq.set_training_job_name(job.training_job_name());
  auto reader = amtd->stub().GetTrainingJobLogs(&lctx, lreq);
  v1::GetTrainingJobLogsResponse page;
  int val_lines = 0;
  bool saw_tab_marker = false;
  while (reader->Read(&page)) {
    for (const auto& l : page.lines()) {
      if (l.message().find("val_loss=") != std::string::npos) ++val_lines;
      if (l.message().find("#011") != std::string::npos) saw_tab_marker = true;
    }
  }
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_EQ(val_lines, 4);      // one per epoch
  EXPECT_TRUE(saw_tab_marker);  // tabs are shown as #011, as in SageMaker's logs
}

TEST_F(TuningIntegrationTest, GridJobRunsEveryCombinationOnce) {
  auto amtd = StartAmtd();
  Create(*amtd, TuningJson("grid", "Grid", 0, 3, R"j({
    "CategoricalParameterRanges": [{"Name": "optimizer", "Values": ["sgd", "adam"]},
                                   {"Name": "num_layers", "Values": ["2", "4", "6"]}]})j",
                           R"j({"epochs": "2", "learning_rate": "0.01"})j"));
  auto last = WaitForTuningJob(amtd->stub(), "grid");
  EXPECT_EQ(last.tuning_job().hyper_parameter_tuning_job_status(), "Completed");
  ASSERT_EQ(last.training_jobs_size(), 6);
  std::set<std::string> combos;
  for (const auto& j : last.training_jobs()) {
    combos.insert(j.tuned_hyper_parameters().at("optimizer") + "/" +
                  j.tuned_hyper_parameters().at("num_layers"));
  }
  EXPECT_EQ(combos.size(), 6u);
}

TEST_F(TuningIntegrationTest, StoppingATuningJobStopsItsRunningJobs) {
  auto amtd = StartAmtd();
  Create(*amtd, TuningJson("stopme", "Random", 6, 2, kRandomRanges,
                           R"j({"epochs": "1000", "sleep_ms": "50"})j"));
  // Wait until both jobs are training (an event from the worker), then stop.
  WaitForTuningSnapshot(amtd->stub(), "stopme", [](const auto& s) {
    int training = 0;
    for (const auto& j : s.training_jobs()) training += j.has_training_start_time() ? 1 : 0;
    return training == 2;
  });
  grpc::ClientContext ctx;
  v1::StopHyperParameterTuningJobRequest stop;
  stop.set_hyper_parameter_tuning_job_name("stopme");
  v1::StopHyperParameterTuningJobResponse none;
  ASSERT_TRUE(amtd->stub().StopHyperParameterTuningJob(&ctx, stop, &none).ok());
  auto last = WaitForTuningJob(amtd->stub(), "stopme");
  EXPECT_EQ(last.tuning_job().hyper_parameter_tuning_job_status(), "Stopped");
  EXPECT_EQ(last.tuning_job().training_job_status_counters().stopped(), 2);
  EXPECT_EQ(last.training_jobs_size(), 2);
  for (const auto& j : last.training_jobs()) EXPECT_EQ(j.training_job_status(), "Stopped");
}

TEST_F(TuningIntegrationTest, FailingTrainerIsReportedWithItsFailureFile) {
  auto amtd = StartAmtd();
  Create(*amtd, TuningJson("failing", "Random", 2, 2, kRandomRanges, R"j({"epochs": "1"})j",
                           "amt-local/failing-trainer:latest"));
  auto last = WaitForTuningJob(amtd->stub(), "failing");
  EXPECT_EQ(last.tuning_job().hyper_parameter_tuning_job_status(), "Failed");
  EXPECT_EQ(last.tuning_job().failure_reason(),
            "All training jobs failed. Please take a look at the training jobs failures to get "
            "more details.");
  EXPECT_EQ(last.tuning_job().training_job_status_counters().non_retryable_error(), 2);
  for (const auto& j : last.training_jobs()) {
    EXPECT_EQ(j.training_job_status(), "Failed");
    EXPECT_EQ(j.failure_reason(), "ClientError: the training data is empty");
    EXPECT_EQ(j.objective_status(), "Failed");
  }
}

TEST_F(TuningIntegrationTest, TrainerOutputThatIsNotUtf8IsStoredWithReplacementCharacters) {
  // A trainer printing Latin-1 ("caf\xe9") and a stray byte: once, this broke the worker's stream
  // and failed the job as RetryableError.
  const std::string trainer = dir_ + "/latin1-trainer";
  WriteFile(trainer, "#!/bin/sh\nprintf 'caf\\351 \\377 val_loss=0.25\\n'\n");
  fs::permissions(trainer, fs::perms::owner_all);
  auto amtd = StartAmtd();
  Create(*amtd,
         TuningJson("latin1", "Random", 2, 2, kRandomRanges, R"j({"epochs": "1"})j", trainer));
  auto last = WaitForTuningJob(amtd->stub(), "latin1");
  EXPECT_EQ(last.tuning_job().hyper_parameter_tuning_job_status(), "Completed");
  ASSERT_EQ(last.training_jobs_size(), 2);
  for (const auto& j : last.training_jobs()) {
    EXPECT_EQ(j.training_job_status(), "Completed") << j.failure_reason();
    EXPECT_FLOAT_EQ(j.final_hyper_parameter_tuning_job_objective_metric().value(), 0.25f);
    EXPECT_THAT(ReadLogs(amtd->stub(), j.training_job_name()),
                ::testing::ElementsAre("caf\xEF\xBF\xBD \xEF\xBF\xBD val_loss=0.25"));
  }
}

TEST_F(TuningIntegrationTest, JobOverMaxRuntimeEndsMaxRuntimeExceeded) {
  auto amtd = StartAmtd();
  Create(*amtd, TuningJson("slow", "Random", 1, 1, kRandomRanges,
                           R"j({"epochs": "100000", "sleep_ms": "20"})j",
                           "amt-local/toy-trainer:latest", /*max_runtime=*/1));
  auto last = WaitForTuningJob(amtd->stub(), "slow");
  ASSERT_EQ(last.training_jobs_size(), 1);
  grpc::ClientContext ctx;
  v1::DescribeTrainingJobRequest req;
  req.set_training_job_name(last.training_jobs(0).training_job_name());
  v1::DescribeTrainingJobResponse job;
  ASSERT_TRUE(amtd->stub().DescribeTrainingJob(&ctx, req, &job).ok());
  EXPECT_EQ(job.training_job_status(), "Stopped");
  EXPECT_EQ(job.secondary_status(), "MaxRuntimeExceeded");
  EXPECT_EQ(last.tuning_job().training_job_status_counters().stopped(), 1);
  // It had emitted objective values before the stop: the last one counts.
  EXPECT_EQ(last.training_jobs(0).objective_status(), "Succeeded");
  EXPECT_EQ(last.tuning_job().hyper_parameter_tuning_job_status(), "Completed");
}

TEST_F(TuningIntegrationTest, RestartInTheMiddleKeepsEverythingAndCarriesOn) {
  const std::string job = TuningJson("restart", "Random", 4, 1, kRandomRanges,
                                     R"j({"epochs": "3", "sleep_ms": "30"})j");
  std::string first_job;
  {
    auto amtd = StartAmtd();
    Create(*amtd, job);
    auto snap = WaitForTuningSnapshot(amtd->stub(), "restart", [](const auto& s) {
      return s.tuning_job().training_job_status_counters().completed() >= 1;
    });
    first_job = snap.training_jobs(0).training_job_name();
    amtd->Kill(SIGKILL);  // no goodbye: state must already be on disk
  }
  auto amtd = StartAmtd();
  auto last = WaitForTuningJob(amtd->stub(), "restart");
  const auto& t = last.tuning_job();
  EXPECT_EQ(t.hyper_parameter_tuning_job_status(), "Completed");
  const auto& c = t.training_job_status_counters();
  EXPECT_EQ(c.completed() + c.retryable_error() + c.stopped() + c.non_retryable_error(), 4);
  EXPECT_GE(c.completed(), 2);
  ASSERT_EQ(last.training_jobs_size(), 4);
  // The job finished before the kill is still there with its metrics and logs.
  EXPECT_EQ(last.training_jobs(0).training_job_name(), first_job);
  EXPECT_EQ(last.training_jobs(0).training_job_status(), "Completed");
  grpc::ClientContext ctx;
  v1::DescribeTrainingJobRequest req;
  req.set_training_job_name(first_job);
  v1::DescribeTrainingJobResponse d;
  ASSERT_TRUE(amtd->stub().DescribeTrainingJob(&ctx, req, &d).ok());
  EXPECT_EQ(d.final_metric_data_list_size(), 2);
  grpc::ClientContext lctx;
  v1::GetTrainingJobLogsRequest lreq;
  lreq.set_training_job_name(first_job);
  auto reader = amtd->stub().GetTrainingJobLogs(&lctx, lreq);
  v1::GetTrainingJobLogsResponse page;
  int lines = 0;
  while (reader->Read(&page)) lines += page.lines_size();
  EXPECT_GE(lines, 3);
}

TEST_F(TuningIntegrationTest, JobFoldersWithoutTheirDatabaseAreNotForgottenSilently) {
  const std::string data = dir_ + "/data";
  {
    auto amtd = StartAmtd();
    Create(*amtd, TuningJson("kept", "Random", 2, 2, kRandomRanges, R"j({"epochs": "1"})j"));
    WaitForTuningJob(amtd->stub(), "kept");
  }
  ASSERT_TRUE(fs::exists(data + "/jobs"));
  fs::remove(data + "/amt.db");
  fs::remove(data + "/amt.db-wal");
  fs::remove(data + "/amt.db-shm");
  const AmtdExit refused = RunAmtdToExit(data, {});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.output,
              HasSubstr("has training job folders (jobs/) but its state database " + data +
                        "/amt.db is missing: starting would forget every "
                        "job. Restore amt.db, or start afresh with --init."));
  auto fresh = StartAmtd({"--init"});  // told to: starts empty
  grpc::ClientContext ctx;
  v1::ListHyperParameterTuningJobsRequest request;
  v1::ListHyperParameterTuningJobsResponse response;
  ASSERT_TRUE(fresh->stub().ListHyperParameterTuningJobs(&ctx, request, &response).ok());
  EXPECT_EQ(response.hyper_parameter_tuning_job_summaries_size(), 0);
}

TEST_F(TuningIntegrationTest, ASecondAmtdOnTheSameDataDirectoryRefusesToStart) {
  auto first = StartAmtd();
  const AmtdExit second = RunAmtdToExit(dir_ + "/data", {});
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_THAT(second.output,
              HasSubstr("is in use by another amtd (pid " + std::to_string(first->pid()) +
                        "); stop it or choose another --data-dir"));
}

TEST_F(TuningIntegrationTest, BadRequestGetsSageMakersValidationError) {
  auto amtd = StartAmtd();
  auto request = TuningRequestFromJson(TuningJson("Bad_Name", "Random", 2, 1, kRandomRanges, "{}"));
  grpc::ClientContext ctx;
  v1::CreateHyperParameterTuningJobResponse response;
  auto status = amtd->stub().CreateHyperParameterTuningJob(&ctx, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "1 validation error detected: Value 'Bad_Name' at 'hyperParameterTuningJobName' failed "
            "to satisfy constraint: Member must satisfy regular expression pattern: "
            "^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,31}");
}

}  // namespace
}  // namespace amt::testing
