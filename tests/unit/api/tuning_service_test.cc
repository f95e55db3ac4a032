// TuningServiceImpl over a real in-process gRPC server: the thin wrapper translates statuses once
// and streams from SageMakerApi's reads.
#include "orchestrator/api/tuning_service.h"

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "tests/unit/api/api_fixture.h"

namespace amt::api {
namespace {

using ::testing::StartsWith;

class TuningServiceTest : public ApiFixture {
 protected:
  void SetUp() override {
    service_ = std::make_unique<TuningServiceImpl>(*api_);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::TuningService::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                                           grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    service_->Shutdown();
    server_->Shutdown();
  }

  std::unique_ptr<TuningServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::TuningService::Stub> stub_;
};

TEST(ToGrpc, KeepsTheCodeNumberAndTheMessage) {
  const grpc::Status s = ToGrpc(absl::NotFoundError("Amazon SageMaker can't find it."));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "Amazon SageMaker can't find it.");
  EXPECT_TRUE(ToGrpc(absl::OkStatus()).ok());
}

TEST_F(TuningServiceTest, ServesTheApisAnswerAndItsErrors) {
  grpc::ClientContext create_context;
  v1::CreateTrainingJobResponse created;
  ASSERT_TRUE(
      stub_->CreateTrainingJob(&create_context, TrainingJobRequest("over-grpc"), &created).ok());
  EXPECT_EQ(created.training_job_arn(),
            "arn:aws:sagemaker:us-east-1:000000000000:training-job/over-grpc");

  grpc::ClientContext context;
  v1::DescribeTrainingJobRequest request;
  request.set_training_job_name("bad_name!");
  v1::DescribeTrainingJobResponse response;
  const grpc::Status status = stub_->DescribeTrainingJob(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              StartsWith("1 validation error detected: Value 'bad_name!' at 'trainingJobName'"));
}

TEST_F(TuningServiceTest, ServesTheExtensionOperation) {
  grpc::ClientContext context;
  v1::ExplainTrainingJobRequest request;
  request.set_training_job_name("nope");
  v1::ExplainTrainingJobResponse response;
  const grpc::Status status = stub_->ExplainTrainingJob(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);  // ValidationException
}

TEST_F(TuningServiceTest, RefusesANameThatIsNotUtf8WithoutHarm) {
  // Proto3 strings must be UTF-8: gRPC's own deserialization refuses the request (INTERNAL,
  // before the service runs), and the server lives on.
  grpc::ClientContext context;
  v1::DescribeTrainingJobRequest request;
  request.set_training_job_name("\xff\xfe");
  v1::DescribeTrainingJobResponse response;
  const grpc::Status status = stub_->DescribeTrainingJob(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INTERNAL) << status.error_message();

  // And the service carries on.
  grpc::ClientContext next;
  v1::ListTrainingJobsResponse listed;
  EXPECT_TRUE(stub_->ListTrainingJobs(&next, v1::ListTrainingJobsRequest(), &listed).ok());
}

TEST_F(TuningServiceTest, StreamsLogsOfAJob) {
  ASSERT_TRUE(api_->CreateTrainingJob(TrainingJobRequest("talker")).ok());
  ConnectWorker();
  StartAndLog("talker", {"one", "two"});

  grpc::ClientContext context;
  v1::GetTrainingJobLogsRequest request;
  request.set_training_job_name("talker");
  request.set_start_sequence(1);
  auto reader = stub_->GetTrainingJobLogs(&context, request);
  std::vector<std::string> lines;
  v1::GetTrainingJobLogsResponse page;
  while (reader->Read(&page)) {
    for (const auto& line : page.lines()) lines.push_back(line.message());
  }
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_EQ(lines, std::vector<std::string>({"two"}));
}

TEST_F(TuningServiceTest, WatchWithChangesOnlySendsEverythingFirstThenWhatChanged) {
  ASSERT_TRUE(api_->CreateHyperParameterTuningJob(TuningJobRequest("tj", 3)).ok());
  ConnectWorker(3);
  const std::vector<std::string> started = Started();
  ASSERT_EQ(started.size(), 3u);

  grpc::ClientContext context;
  v1::WatchHyperParameterTuningJobRequest request;
  request.set_hyper_parameter_tuning_job_name("tj");
  request.set_changes_only(true);
  auto reader = stub_->WatchHyperParameterTuningJob(&context, request);
  v1::WatchHyperParameterTuningJobResponse message;
  ASSERT_TRUE(reader->Read(&message));
  EXPECT_EQ(message.training_jobs_size(), 3);

  StartAndLog(started[2], {"val_loss=0.5"});
  ASSERT_TRUE(reader->Read(&message));
  ASSERT_EQ(message.training_jobs_size(), 1);
  EXPECT_EQ(message.training_jobs(0).training_job_name(), started[2]);
  EXPECT_EQ(message.tuning_job().training_job_status_counters().in_progress(), 3);
  context.TryCancel();
  while (reader->Read(&message)) {
  }
  reader->Finish();
}

TEST_F(TuningServiceTest, WatchOfAMissingJobEndsWithTheApisError) {
  grpc::ClientContext context;
  v1::WatchTrainingJobRequest request;
  request.set_training_job_name("nope");
  auto reader = stub_->WatchTrainingJob(&context, request);
  v1::DescribeTrainingJobResponse snapshot;
  EXPECT_FALSE(reader->Read(&snapshot));
  const grpc::Status status = reader->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "Requested resource not found.");
}

}  // namespace
}  // namespace amt::api
