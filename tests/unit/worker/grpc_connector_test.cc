// GrpcConnector against an in-process WorkerService on port 0.
#include "worker/grpc_connector.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "tests/support/status_matchers.h"

namespace amt::worker {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

// Answers every WorkerHello with a StopJob for "job-<worker_id>", records what it reads.
class EchoService final : public amt::v1::WorkerService::Service {
 public:
  grpc::Status Connect(grpc::ServerContext* context,
                       grpc::ServerReaderWriter<amt::v1::OrchestratorMessage,
                                                amt::v1::WorkerMessage>* stream) override {
    amt::v1::WorkerMessage message;
    while (stream->Read(&message)) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        received_.push_back(message);
      }
      cv_.notify_all();
      if (message.has_hello()) {
        amt::v1::OrchestratorMessage reply;
        reply.mutable_stop()->set_training_job_name("job-" + message.hello().worker_id());
        reply.mutable_stop()->set_grace_seconds(120);
        stream->Write(reply);
      }
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      ended_ = true;
    }
    cv_.notify_all();
    return grpc::Status::OK;
  }

  std::vector<amt::v1::WorkerMessage> WaitForReceived(size_t count) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(10), [&] { return received_.size() >= count; });
    return received_;
  }

  bool WaitForEnd() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return ended_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<amt::v1::WorkerMessage> received_;
  bool ended_ = false;
};

TEST(GrpcConnector, ExchangesMessagesWithWorkerService) {
  EchoService service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(port, 0);

  GrpcConnector connector("127.0.0.1:" + std::to_string(port));
  auto stream = connector.Connect();
  ASSERT_THAT(stream, IsOk());
  amt::v1::WorkerMessage hello;
  hello.mutable_hello()->set_worker_id("w1");
  hello.mutable_hello()->set_slots(2);
  ASSERT_TRUE((*stream)->Write(hello));

  amt::v1::OrchestratorMessage reply;
  ASSERT_TRUE((*stream)->Read(&reply));
  EXPECT_EQ(reply.stop().training_job_name(), "job-w1");
  EXPECT_EQ(reply.stop().grace_seconds(), 120);
  const auto received = service.WaitForReceived(1);
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0].hello().slots(), 2);

  (*stream)->Cancel();
  EXPECT_FALSE((*stream)->Read(&reply));
  stream->reset();
  EXPECT_TRUE(service.WaitForEnd());
  server->Shutdown();
}

TEST(GrpcConnector, ReadFailsWhenTheServerGoesAway) {
  EchoService service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();

  GrpcConnector connector("127.0.0.1:" + std::to_string(port));
  auto stream = connector.Connect();
  ASSERT_THAT(stream, IsOk());
  amt::v1::WorkerMessage hello;
  hello.mutable_hello()->set_worker_id("w1");
  ASSERT_TRUE((*stream)->Write(hello));
  amt::v1::OrchestratorMessage reply;
  ASSERT_TRUE((*stream)->Read(&reply));

  // Shutdown cancels the open call after the deadline.
  server->Shutdown(std::chrono::system_clock::now());
  EXPECT_FALSE((*stream)->Read(&reply));
}

TEST(GrpcConnector, ConnectIsUnavailableWithoutAServer) {
  // Port 1 (tcpmux) has no listener here; the connection is refused.
  GrpcConnector connector("127.0.0.1:1", std::chrono::milliseconds(200));
  auto stream = connector.Connect();
  EXPECT_THAT(stream,
              StatusIs(absl::StatusCode::kUnavailable, "amtd at 127.0.0.1:1 is not reachable"));
}

}  // namespace
}  // namespace amt::worker
