// The operation table (operations.h) against the proto: every unary RPC of amt.v1.TuningService
// is in it, with the request and response types its naming promises.
#include "proto/amt/v1/operations.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "amt/v1/tuning.pb.h"
#include "google/protobuf/descriptor.h"

namespace amt::api {
namespace {

struct Entry {
  std::string name;
  const google::protobuf::Descriptor* request;
  const google::protobuf::Descriptor* response;
};

#define AMT_ENTRY(Op) Entry{#Op, v1::Op##Request::descriptor(), v1::Op##Response::descriptor()},
const std::vector<Entry>& Unary() {
  static const auto* entries = new std::vector<Entry>{AMT_UNARY_OPERATIONS(AMT_ENTRY)};
  return *entries;
}
const std::vector<Entry>& SageMaker() {
  static const auto* entries = new std::vector<Entry>{AMT_SAGEMAKER_OPERATIONS(AMT_ENTRY)};
  return *entries;
}
#undef AMT_ENTRY

const google::protobuf::ServiceDescriptor* TuningService() {
  return google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
      "amt.v1.TuningService");
}

TEST(Operations, ListEveryUnaryMethodOfTheServiceWithItsTypes) {
  const auto* service = TuningService();
  ASSERT_NE(service, nullptr);
  std::set<std::string> unary_methods;
  for (int i = 0; i < service->method_count(); ++i) {
    const auto* method = service->method(i);
    if (!method->client_streaming() && !method->server_streaming()) {
      unary_methods.insert(method->name());
    }
  }
  std::set<std::string> listed;
  for (const Entry& e : Unary()) {
    listed.insert(e.name);
    const auto* method = service->FindMethodByName(e.name);
    ASSERT_NE(method, nullptr) << e.name;
    EXPECT_EQ(method->input_type(), e.request) << e.name;
    EXPECT_EQ(method->output_type(), e.response) << e.name;
  }
  EXPECT_EQ(listed, unary_methods);
  EXPECT_EQ(listed.size(), Unary().size()) << "an operation is listed twice";
}

TEST(Operations, SageMakerOnesAreTheFifteenSageMakerOperations) {
  std::vector<std::string> names;
  for (const Entry& e : SageMaker()) names.push_back(e.name);
  EXPECT_THAT(names,
              ::testing::UnorderedElementsAre(
                  "CreateHyperParameterTuningJob", "DescribeHyperParameterTuningJob",
                  "ListHyperParameterTuningJobs", "ListTrainingJobsForHyperParameterTuningJob",
                  "StopHyperParameterTuningJob", "DeleteHyperParameterTuningJob",
                  "CreateTrainingJob", "DescribeTrainingJob", "ListTrainingJobs", "StopTrainingJob",
                  "DeleteTrainingJob", "UpdateTrainingJob", "AddTags", "ListTags", "DeleteTags"));
}

}  // namespace
}  // namespace amt::api
