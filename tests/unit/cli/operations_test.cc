// The client's operation table (cli/operations.h) against the shared one
// (proto/amt/v1/operations.h) and the proto's service: every operation amtd serves is there, with
// its command name and a call that reaches the stub method of the same name.
#include "cli/operations.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "google/protobuf/descriptor.h"
#include "proto/amt/v1/operations.h"
#include "tests/unit/cli/fake_tuning_stub.h"

namespace amt::cli {
namespace {

#define AMT_NAME(Op) #Op,
const std::vector<std::string>& Served() {
  static const auto* names = new std::vector<std::string>{AMT_UNARY_OPERATIONS(AMT_NAME)};
  return *names;
}
#undef AMT_NAME

TEST(Operations, HaveAnEntryPerServedOperationInTheTablesOrder) {
  std::vector<std::string> names;
  for (const Operation& operation : Operations()) names.push_back(operation.name);
  EXPECT_EQ(names, Served());
}

TEST(Operations, CarryTheTypesOfTheServiceMethodOfTheirName) {
  const auto* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName("amt.v1.TuningService");
  ASSERT_NE(service, nullptr);
  for (const Operation& operation : Operations()) {
    const auto* method = service->FindMethodByName(operation.name);
    ASSERT_NE(method, nullptr) << operation.name;
    EXPECT_EQ(operation.request->GetDescriptor(), method->input_type()) << operation.name;
    EXPECT_EQ(operation.response->GetDescriptor(), method->output_type()) << operation.name;
    EXPECT_FALSE(operation.summary.empty()) << operation.name;
    EXPECT_THAT(operation.summary, ::testing::Not(::testing::StartsWith("Send ")))
        << operation.name << " has no --help line of its own in cli/operations.cc";
  }
}

TEST(Operations, CommandsAreTheAwsCliNames) {
  std::set<std::string> commands;
  for (const Operation& operation : Operations()) commands.insert(operation.command);
  EXPECT_EQ(commands.size(), Operations().size()) << "two operations share a command";
  for (const char* command :
       {"create-hyper-parameter-tuning-job", "describe-hyper-parameter-tuning-job",
        "list-training-jobs-for-hyper-parameter-tuning-job", "update-training-job", "add-tags",
        "list-tags", "delete-tags", "explain-training-job", "explain-hyper-parameter-tuning-job"}) {
    EXPECT_THAT(commands, ::testing::Contains(command));
  }
}

TEST(Operations, CallReachesTheStubMethodOfTheirName) {
  testing::FakeTuningStub stub;
  stub.list_tags.Reply({});
  const Operation* operation = FindOperation("ListTags");
  ASSERT_NE(operation, nullptr);
  v1::ListTagsRequest request;
  request.set_resource_arn("arn:aws:sagemaker:us-east-1:123456789012:training-job/t");
  v1::ListTagsResponse response;
  grpc::ClientContext context;
  EXPECT_TRUE(operation->call(stub, &context, request, &response).ok());
  ASSERT_EQ(stub.list_tags.requests.size(), 1u);
  EXPECT_EQ(stub.list_tags.requests[0].resource_arn(), request.resource_arn());
}

TEST(FindOperation, IsNullForAnUnknownName) {
  EXPECT_EQ(FindOperation("GetTrainingJobLogs"), nullptr);  // a stream, not in the table
  EXPECT_EQ(FindOperation("update-training-job"), nullptr);
  ASSERT_NE(FindOperation("UpdateTrainingJob"), nullptr);
  EXPECT_EQ(FindOperation("UpdateTrainingJob")->command, "update-training-job");
}

}  // namespace
}  // namespace amt::cli
