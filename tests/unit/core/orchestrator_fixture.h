// The orchestrator's test fixture: an Orchestrator over an in-memory store behind a FaultyStore,
// fake timers and a fake worker link, a Random tuning request, and helpers that play a worker's
// reports (started, log lines, exit).
#ifndef AMT_TESTS_UNIT_CORE_ORCHESTRATOR_FIXTURE_H_
#define AMT_TESTS_UNIT_CORE_ORCHESTRATOR_FIXTURE_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/json.h"
#include "orchestrator/core/orchestrator.h"
#include "orchestrator/store/faulty_store.h"
#include "tests/support/requests.h"
#include "tests/unit/core/fakes.h"

namespace amt::core {

// The Random example (examples/random-tuning.json) on the fake worker's "toy:latest": 4 jobs, 2 at
// a time, objective "val:loss" over "lr" and "opt", seed 7, output under s3://bucket/out.
inline v1::CreateHyperParameterTuningJobRequest TuningRequest() {
  return ::amt::testing::TuningRequest("random-tuning.json", R"j({
    "HyperParameterTuningJobName": "demo",
    "HyperParameterTuningJobConfig": {
      "HyperParameterTuningJobObjective": {"MetricName": "val:loss"},
      "ResourceLimits": {"MaxNumberOfTrainingJobs": 4},
      "ParameterRanges": {
        "ContinuousParameterRanges": [
          {"Name": "lr", "MinValue": "0.0001", "MaxValue": "0.1", "ScalingType": "Logarithmic"}],
        "IntegerParameterRanges": null,
        "CategoricalParameterRanges": [{"Name": "opt", "Values": ["sgd", "adam"]}]},
      "RandomSeed": 7},
    "TrainingJobDefinition": {
      "StaticHyperParameters": {"epochs": "3", "sleep_ms": null},
      "AlgorithmSpecification": {"TrainingImage": "toy:latest",
        "MetricDefinitions": [{"Name": "val:loss", "Regex": "val_loss=([0-9.eE+-]+)"}]},
      "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
      "StoppingCondition": {"MaxRuntimeInSeconds": 600}}})j");
}

// A standalone training job (examples/training-job.json) on "toy:latest": metric "loss",
// MaxRuntimeInSeconds 30.
inline v1::CreateTrainingJobRequest SoloJob(const std::string& name = "solo") {
  v1::CreateTrainingJobRequest r = ::amt::testing::TrainingRequest("training-job.json", R"j({
      "HyperParameters": null, "CheckpointConfig": null, "Environment": null,
      "AlgorithmSpecification": {"TrainingImage": "toy:latest",
        "MetricDefinitions": [{"Name": "loss", "Regex": "loss=(\\S+)"}]},
      "OutputDataConfig": {"S3OutputPath": "s3://b/o"},
      "ResourceConfig": {"VolumeSizeInGB": 1},
      "StoppingCondition": {"MaxRuntimeInSeconds": 30}})j");
  r.set_training_job_name(name);
  return r;
}

class OrchestratorTest : public ::testing::Test {
 protected:
  OrchestratorTest() : store_(store::NewInMemoryStore()), faulty_(*store_), timers_(clock_) {
    Rebuild();
  }

  void Rebuild() {
    OrchestratorOptions options;
    options.launch.s3_root = "/s3";
    options.launch.image_map = {{"toy:latest", {"/bin/toy"}}};
    options.launch.is_executable = [](const std::string&) { return false; };
    options.seed_source = [] { return 1234u; };
    options.spot = spot_;
    options.spot_seed = 99;
    options.max_unsaved_log_bytes = max_unsaved_log_bytes_;
    options.log = [this](const std::string& message) { log_.push_back(message); };
    orch_ = std::make_unique<Orchestrator>(options, faulty_, clock_, timers_, provisioner_);
  }

  std::shared_ptr<FakeWorkerLink> Connect(int slots, std::vector<v1::JobRef> running = {},
                                          int gpus = 0) {
    auto link = std::make_shared<FakeWorkerLink>();
    v1::WorkerHello hello;
    hello.set_worker_id("w1");
    hello.set_slots(slots);
    hello.set_gpus(gpus);
    hello.set_gpu_share(1);
    // The same worker process each time: a reconnect replaces the earlier connection.
    hello.set_instance_id("w1-process");
    for (auto& r : running) *hello.add_running() = r;
    EXPECT_TRUE(orch_->OnWorkerConnected(hello, link).ok());
    return link;
  }

  // A worker report, as if from w1 over no connection: applied, never acknowledged
  // (worker_reports_test.cc covers the acknowledgements).
  void Report(const v1::WorkerMessage& report) { orch_->OnWorkerReport("w1", nullptr, report); }

  void Started(const v1::StartJob& s) {
    v1::WorkerMessage m;
    m.mutable_started()->set_training_job_name(s.training_job_name());
    m.mutable_started()->set_attempt(s.attempt());
    Report(m);
  }

  void Log(const v1::StartJob& s, const std::vector<std::string>& lines) {
    v1::WorkerMessage m;
    v1::LogBatch& b = *m.mutable_logs();
    b.set_training_job_name(s.training_job_name());
    b.set_attempt(s.attempt());
    // As a worker numbers them: the index of the first line within the attempt.
    int64_t& logged = lines_logged_[s.training_job_name() + "#" + std::to_string(s.attempt())];
    b.set_first_line(logged);
    logged += static_cast<int64_t>(lines.size());
    for (const auto& l : lines) {
      auto* r = b.add_lines();
      r->set_text(l);
      r->set_timestamp(clock_.Now());
    }
    Report(m);
  }

  void Exit(const v1::StartJob& s, int code, std::string failure = "") {
    v1::WorkerMessage m;
    v1::JobExited& e = *m.mutable_exited();
    e.set_training_job_name(s.training_job_name());
    e.set_attempt(s.attempt());
    e.set_exit_code(code);
    e.set_failure_reason(std::move(failure));
    e.set_model_uploaded(code == 0);
    Report(m);
  }

  // Runs one job to completion with the given objective values.
  void Succeed(const v1::StartJob& s, std::vector<double> losses) {
    Started(s);
    std::vector<std::string> lines;
    for (double l : losses) lines.push_back("epoch val_loss=" + std::to_string(l));
    Log(s, lines);
    clock_.Advance(1);
    Exit(s, 0);
  }

  v1::DescribeHyperParameterTuningJobResponse Describe(const std::string& name = "demo") {
    auto d = orch_->DescribeTuningJob(name);
    EXPECT_TRUE(d.ok()) << d.status();
    return *d;
  }

  spot::SpotOptions spot_;  // the library's defaults unless a test changes them and Rebuild()s
  Provisioner* provisioner_ = nullptr;  // likewise (provisioner_test.cc)
  size_t max_unsaved_log_bytes_ = OrchestratorOptions().max_unsaved_log_bytes;  // likewise
  FakeClock clock_;
  std::map<std::string, int64_t> lines_logged_;  // by job#attempt, for LogBatch.first_line
  std::unique_ptr<store::Store> store_;
  store::FaultyStore faulty_;  // passes every call to store_ until told to fail
  std::vector<std::string> log_;
  FakeTimers timers_;
  std::unique_ptr<Orchestrator> orch_;
};

}  // namespace amt::core

#endif  // AMT_TESTS_UNIT_CORE_ORCHESTRATOR_FIXTURE_H_
