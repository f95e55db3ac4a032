// Worker identity over a real gRPC stream to a real amtd: a process that connects as a worker
// cannot report on a job that runs on the local worker, nor take the local worker's place by
// saying Hello with its id.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "amt/v1/worker.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "tests/integration/harness.h"
#include "tests/support/requests.h"

namespace amt::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

using WorkerStream = grpc::ClientReaderWriter<v1::WorkerMessage, v1::OrchestratorMessage>;

// The training-job example (examples/training-job.json) as `name`, 600 epochs of 100 ms.
std::string LongJobJson(const std::string& name) {
  nlohmann::json job = ExampleWith("training-job.json", R"j({
    "HyperParameters": {"epochs": "600", "sleep_ms": "100",
                        "learning_rate": null, "num_layers": null, "optimizer": null},
    "AlgorithmSpecification": {
      "MetricDefinitions": [{"Name": "validation:loss", "Regex": "val_loss=([0-9.eE+-]+)"}]},
    "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
    "StoppingCondition": {"MaxRuntimeInSeconds": 600},
    "CheckpointConfig": null, "Environment": null})j");
  job["TrainingJobName"] = name;
  return job.dump();
}

bool Training(const v1::DescribeTrainingJobResponse& job) {
  return job.secondary_status() == "Training" || Terminal(job);
}

v1::WorkerMessage Hello(const std::string& id, const std::string& instance) {
  v1::WorkerMessage m;
  m.mutable_hello()->set_worker_id(id);
  m.mutable_hello()->set_slots(4);
  m.mutable_hello()->set_host("intruder");
  m.mutable_hello()->set_instance_id(instance);
  return m;
}

class WorkerIdentityIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_.str();
    amtd_ = std::make_unique<Amtd>(dir_ + "/data",
                                   std::vector<std::string>{"--image-map", WriteImageMap(dir_)});
    workers_ = v1::WorkerService::NewStub(
        grpc::CreateChannel(amtd_->endpoint(), grpc::InsecureChannelCredentials()));
    CreateTrainingJob(*amtd_, LongJobJson("victim"));
    const auto job = WaitForTrainingJob(amtd_->stub(), "victim", Training);
    ASSERT_EQ(job.secondary_status(), "Training");
  }

  void TearDown() override {
    for (const char* name : {"victim", "after"}) {
      grpc::ClientContext ctx;
      v1::StopTrainingJobRequest request;
      request.set_training_job_name(name);
      v1::StopTrainingJobResponse response;
      (void)amtd_->stub().StopTrainingJob(&ctx, request, &response);
    }
  }

  v1::DescribeTrainingJobResponse DescribeVictim() {
    grpc::ClientContext ctx;
    v1::DescribeTrainingJobRequest request;
    request.set_training_job_name("victim");
    v1::DescribeTrainingJobResponse job;
    EXPECT_TRUE(amtd_->stub().DescribeTrainingJob(&ctx, request, &job).ok());
    return job;
  }

  TempDir temp_{"amt-identity"};  // removed after amtd_ ends
  std::string dir_;
  std::unique_ptr<Amtd> amtd_;
  std::unique_ptr<v1::WorkerService::Stub> workers_;
};

TEST_F(WorkerIdentityIntegrationTest, ForgedReportsOnTheLocalWorkersJobAreRefused) {
  grpc::ClientContext ctx;
  std::unique_ptr<WorkerStream> stream = workers_->Connect(&ctx);
  ASSERT_TRUE(stream->Write(Hello("evil", "e1")));
  v1::OrchestratorMessage reply;
  ASSERT_TRUE(stream->Read(&reply));  // the welcome: an Ack of nothing
  EXPECT_TRUE(reply.has_ack());
  EXPECT_EQ(reply.ack().seq(), 0u);

  v1::WorkerMessage logs;
  logs.set_seq(1);
  logs.mutable_logs()->set_training_job_name("victim");
  logs.mutable_logs()->set_attempt(1);
  logs.mutable_logs()->set_first_line(100000);
  logs.mutable_logs()->add_lines()->set_text("epoch=1 val_loss=0.0001");
  v1::WorkerMessage exited;
  exited.set_seq(2);
  exited.mutable_exited()->set_training_job_name("victim");
  exited.mutable_exited()->set_attempt(1);
  exited.mutable_exited()->set_model_uploaded(true);
  ASSERT_TRUE(stream->Write(logs));
  ASSERT_TRUE(stream->Write(exited));
  // Both are acknowledged once handled (so the intruder does not replay them), and dropped.
  uint64_t acked = 0;
  while (acked < 2 && stream->Read(&reply)) {
    if (reply.has_ack()) acked = reply.ack().seq();
  }
  ASSERT_EQ(acked, 2u);

  const v1::DescribeTrainingJobResponse job = DescribeVictim();
  EXPECT_EQ(job.training_job_status(), "InProgress");
  for (const auto& metric : job.final_metric_data_list()) {
    EXPECT_NE(metric.value(), 0.0001f) << "the forged metric was taken";
  }
  for (const auto& line : ReadLogs(amtd_->stub(), "victim")) {
    EXPECT_THAT(line, ::testing::Not(HasSubstr("val_loss=0.0001")));
  }
  ctx.TryCancel();
}

TEST_F(WorkerIdentityIntegrationTest, AHelloWithTheLocalWorkersIdIsRefusedAndTheWorkerStays) {
  grpc::ClientContext ctx;
  std::unique_ptr<WorkerStream> stream = workers_->Connect(&ctx);
  (void)stream->Write(Hello("local", "not-the-local-worker"));
  v1::OrchestratorMessage reply;
  EXPECT_FALSE(stream->Read(&reply));
  const grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_THAT(status.error_message(), HasSubstr("worker id \"local\" is already connected"));

  // The local worker still runs its job and takes the next one.
  CreateTrainingJob(*amtd_, LongJobJson("after"));
  EXPECT_EQ(WaitForTrainingJob(amtd_->stub(), "after", Training).secondary_status(), "Training");
  const v1::DescribeTrainingJobResponse job = DescribeVictim();
  EXPECT_EQ(job.training_job_status(), "InProgress");
  EXPECT_THAT(job.failure_reason(), IsEmpty());
}

}  // namespace
}  // namespace amt::testing
