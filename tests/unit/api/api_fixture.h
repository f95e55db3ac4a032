// A real SageMakerApi over a real orchestrator on a real Loop, with an in-memory store (behind a
// store that fails on demand), a fake
// clock and timers that never fire, for the tests of api/ and gateway/. Worker events are driven
// by hand (Connect, Start, Log) through the loop, as amt-worker's reports would be.
#ifndef AMT_TESTS_UNIT_API_API_FIXTURE_H_
#define AMT_TESTS_UNIT_API_API_FIXTURE_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/json.h"
#include "orchestrator/api/loop.h"
#include "orchestrator/api/sagemaker_api.h"
#include "orchestrator/core/orchestrator.h"
#include "orchestrator/store/faulty_store.h"
#include "orchestrator/store/store.h"
#include "tests/support/requests.h"

namespace amt::api {

// Timers that never fire: the tests here look at requests, not at SageMaker's waits.
class NeverTimers final : public core::Timers {
 public:
  uint64_t At(double, std::function<void()>) override { return next_++; }
  void Cancel(uint64_t) override {}

 private:
  uint64_t next_ = 1;
};

// Records what the orchestrator sends to its one fake worker.
class RecordingWorkerLink final : public core::WorkerLink {
 public:
  void Send(const v1::OrchestratorMessage& message) override { sent.push_back(message); }
  void Drop() override { ++drops; }
  std::vector<v1::OrchestratorMessage> sent;
  int drops = 0;
};

// A CreateTrainingJob request that passes validation (examples/training-job.json), for an image
// the worker never runs.
inline v1::CreateTrainingJobRequest TrainingJobRequest(const std::string& name) {
  v1::CreateTrainingJobRequest r = ::amt::testing::TrainingRequest(
      "training-job.json", R"({"AlgorithmSpecification": {"TrainingImage": "toy:latest"}})");
  r.set_training_job_name(name);
  return r;
}

// A Random tuning job (examples/random-tuning.json) of `max_jobs` training jobs, all at once, on
// the image of TrainingJobRequest.
inline v1::CreateHyperParameterTuningJobRequest TuningJobRequest(const std::string& name,
                                                                 int max_jobs) {
  v1::CreateHyperParameterTuningJobRequest r =
      ::amt::testing::TuningRequest("random-tuning.json", R"j({"HyperParameterTuningJobConfig": {
        "HyperParameterTuningJobObjective": {"MetricName": "val:loss"},
        "ParameterRanges": {
          "ContinuousParameterRanges": [{"Name": "lr", "MinValue": "0.001", "MaxValue": "0.1"}],
          "IntegerParameterRanges": null, "CategoricalParameterRanges": null}},
      "TrainingJobDefinition": {"AlgorithmSpecification": {"TrainingImage": "toy:latest",
        "MetricDefinitions": [{"Name": "val:loss", "Regex": "val_loss=([0-9.]+)"}]}}})j");
  r.set_hyper_parameter_tuning_job_name(name);
  auto* limits = r.mutable_hyper_parameter_tuning_job_config()->mutable_resource_limits();
  limits->set_max_number_of_training_jobs(max_jobs);
  limits->set_max_parallel_training_jobs(max_jobs);
  return r;
}

class ApiFixture : public ::testing::Test {
 protected:
  ApiFixture() : store_(store::NewInMemoryStore()), faulty_(*store_) {
    core::OrchestratorOptions options;
    options.launch.s3_root = "/s3";
    options.launch.image_map = {{"toy:latest", {"/bin/toy"}}};
    options.launch.is_executable = [](const std::string&) { return false; };
    options.seed_source = [] { return 1234u; };
    orchestrator_ = std::make_unique<core::Orchestrator>(options, faulty_, clock_, timers_);
    loop_.Start();
    EXPECT_TRUE(loop_.Call([this] { return orchestrator_->Load(); }).ok());
    api_ = std::make_unique<SageMakerApi>(loop_, *orchestrator_);
  }
  ~ApiFixture() override { loop_.Stop(); }

  // Connects a worker with one slot; the orchestrator starts pending jobs on it.
  void ConnectWorker(int slots = 1) {
    loop_.Call([this, slots] {
      v1::WorkerHello hello;
      hello.set_worker_id("w1");
      hello.set_slots(slots);
      hello.set_instance_id("w1-process");
      ASSERT_TRUE(orchestrator_->OnWorkerConnected(hello, link_).ok());
    });
  }

  // The names of the jobs the orchestrator has told the worker to start, in order.
  std::vector<std::string> Started() {
    return loop_.Call([this] {
      std::vector<std::string> names;
      for (const auto& m : link_->sent) {
        if (m.has_start()) names.push_back(m.start().training_job_name());
      }
      return names;
    });
  }

  // The worker reports that job `name` (attempt 1... as assigned) started and printed `lines`.
  void StartAndLog(const std::string& name, const std::vector<std::string>& lines) {
    loop_.Call([&] {
      int64_t attempt = 0;
      for (const auto& m : link_->sent) {
        if (m.has_start() && m.start().training_job_name() == name) attempt = m.start().attempt();
      }
      v1::WorkerMessage started;
      started.mutable_started()->set_training_job_name(name);
      started.mutable_started()->set_attempt(attempt);
      orchestrator_->OnWorkerReport("w1", nullptr, started);
      v1::WorkerMessage logs;
      v1::LogBatch& batch = *logs.mutable_logs();
      batch.set_training_job_name(name);
      batch.set_attempt(attempt);
      for (const auto& l : lines) {
        auto* line = batch.add_lines();
        line->set_text(l);
        line->set_timestamp(clock_.Now());
      }
      orchestrator_->OnWorkerReport("w1", nullptr, logs);
    });
  }

  FakeClock clock_;
  std::unique_ptr<store::Store> store_;
  store::FaultyStore faulty_;  // passes every call to store_ until told to fail
  NeverTimers timers_;
  std::shared_ptr<RecordingWorkerLink> link_ = std::make_shared<RecordingWorkerLink>();
  std::unique_ptr<core::Orchestrator> orchestrator_;
  Loop loop_;
  std::unique_ptr<SageMakerApi> api_;
};

}  // namespace amt::api

#endif  // AMT_TESTS_UNIT_API_API_FIXTURE_H_
