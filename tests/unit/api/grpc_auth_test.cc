// GrpcAuth on the real services over a real in-process gRPC server: with credentials, calls and
// streams need a valid x-amt-credential, and only the amt-worker profile's key registers a worker.
#include "orchestrator/api/grpc_auth.h"

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>

#include "common/grpc_credential.h"
#include "orchestrator/api/tuning_service.h"
#include "orchestrator/api/worker_service.h"
#include "tests/unit/api/api_fixture.h"

namespace amt::api {
namespace {

using ::testing::HasSubstr;

constexpr char kFile[] =
    "[default]\n"
    "aws_access_key_id = AKIDCLIENT\n"
    "aws_secret_access_key = client-secret\n"
    "[amt-worker]\n"
    "aws_access_key_id = AKIDWORKER\n"
    "aws_secret_access_key = worker-secret\n";

int64_t Now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class GrpcAuthTest : public ApiFixture {
 protected:
  void SetUp() override {
    auto credentials = auth::Credentials::Parse(kFile, "test");
    ASSERT_TRUE(credentials.ok()) << credentials.status();
    const GrpcAuth auth(std::make_shared<const auth::Credentials>(std::move(*credentials)));
    tuning_ = std::make_unique<TuningServiceImpl>(*api_, auth);
    workers_ = std::make_unique<WorkerServiceImpl>(loop_, *orchestrator_, auth);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(tuning_.get());
    builder.RegisterService(workers_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                       grpc::InsecureChannelCredentials());
    tuning_stub_ = v1::TuningService::NewStub(channel);
    worker_stub_ = v1::WorkerService::NewStub(channel);
  }
  void TearDown() override {
    tuning_->Shutdown();
    server_->Shutdown(std::chrono::system_clock::now());
  }

  grpc::Status List(const std::string& credential) {
    grpc::ClientContext context;
    if (!credential.empty()) context.AddMetadata(auth::kGrpcCredentialMetadata, credential);
    v1::ListTrainingJobsResponse response;
    return tuning_stub_->ListTrainingJobs(&context, v1::ListTrainingJobsRequest(), &response);
  }

  std::unique_ptr<TuningServiceImpl> tuning_;
  std::unique_ptr<WorkerServiceImpl> workers_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::TuningService::Stub> tuning_stub_;
  std::unique_ptr<v1::WorkerService::Stub> worker_stub_;
};

TEST_F(GrpcAuthTest, AUnaryCallNeedsAValidCredential) {
  const grpc::Status missing = List("");
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(missing.error_message(), HasSubstr("requires credentials"));
  EXPECT_EQ(List(auth::MakeGrpcCredential("AKIDCLIENT", "wrong", Now())).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(List(auth::MakeGrpcCredential("AKIDNOBODY", "client-secret", Now())).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(
      List(auth::MakeGrpcCredential("AKIDCLIENT", "client-secret", Now() - 3600)).error_code(),
      grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(List(auth::MakeGrpcCredential("AKIDCLIENT", "client-secret", Now())).ok());
}

TEST_F(GrpcAuthTest, AStreamNeedsAValidCredential) {
  grpc::ClientContext context;
  v1::WatchTrainingJobRequest request;
  request.set_training_job_name("any");
  auto reader = tuning_stub_->WatchTrainingJob(&context, request);
  v1::DescribeTrainingJobResponse ignored;
  EXPECT_FALSE(reader->Read(&ignored));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(GrpcAuthTest, OnlyTheWorkerProfilesKeyRegistersAWorker) {
  // A client's key (the [default] profile) cannot pose as a worker.
  {
    grpc::ClientContext context;
    context.AddMetadata(auth::kGrpcCredentialMetadata,
                        auth::MakeGrpcCredential("AKIDCLIENT", "client-secret", Now()));
    auto stream = worker_stub_->Connect(&context);
    v1::OrchestratorMessage ignored;
    EXPECT_FALSE(stream->Read(&ignored));
    const grpc::Status refused = stream->Finish();
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_THAT(refused.error_message(), HasSubstr("[amt-worker]"));
  }
  // The worker's key registers, and the worker is given the next job.
  grpc::ClientContext context;
  context.AddMetadata(auth::kGrpcCredentialMetadata,
                      auth::MakeGrpcCredential("AKIDWORKER", "worker-secret", Now()));
  auto stream = worker_stub_->Connect(&context);
  v1::WorkerMessage hello;
  hello.mutable_hello()->set_worker_id("remote");
  hello.mutable_hello()->set_slots(1);
  ASSERT_TRUE(stream->Write(hello));
  ASSERT_TRUE(api_->CreateTrainingJob(TrainingJobRequest("for-the-worker")).ok());
  v1::OrchestratorMessage assigned;
  ASSERT_TRUE(stream->Read(&assigned));  // first the welcome: the Hello was taken
  EXPECT_TRUE(assigned.has_ack());
  EXPECT_EQ(assigned.ack().seq(), 0u);
  ASSERT_TRUE(stream->Read(&assigned));
  EXPECT_EQ(assigned.start().training_job_name(), "for-the-worker");
  context.TryCancel();
  while (stream->Read(&assigned)) {
  }
  (void)stream->Finish();
}

}  // namespace
}  // namespace amt::api
