// The amt client against a real amtd: the commands generated from the operation table (issue 35)
// for the operations that had none before, UpdateTrainingJob and the tags, run as a user types
// them (the built build/bin/amt, --endpoint, member flags and --cli-input-json). amtd runs
// without a worker: the training job stays InProgress, which these operations do not care about.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/harness.h"
#include "tests/support/requests.h"

namespace amt::testing {
namespace {

using ::testing::HasSubstr;

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// The training-job example (examples/training-job.json) as "tagged", running /bin/true.
std::string TrainingJob() {
  return ExampleText("training-job.json", R"({
    "TrainingJobName": "tagged",
    "HyperParameters": null, "CheckpointConfig": null, "Environment": null,
    "AlgorithmSpecification": {"TrainingImage": "shell", "MetricDefinitions": null,
                               "ContainerEntrypoint": ["/bin/true"]},
    "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
    "ResourceConfig": {"VolumeSizeInGB": 1}})");
}

class CliIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_.str();
    amtd_ = std::make_unique<Amtd>(dir_ + "/data", std::vector<std::string>{"--no-local-worker"});
    WriteFile(dir_ + "/job.json", TrainingJob());
    const Result created = Amt("create-training-job --cli-input-json file://" + dir_ + "/job.json");
    ASSERT_EQ(created.exit_code, 0) << created.err;
    arn_ = nlohmann::json::parse(created.out).at("TrainingJobArn").get<std::string>();
  }

  // Runs `build/bin/amt --endpoint <amtd> <args>` (args as a shell would split them).
  Result Amt(const std::string& args) {
    const std::string base = dir_ + "/amt-" + std::to_string(++runs_);
    const std::string command = "env -u AMT_ENDPOINT -u AMT_CREDENTIALS " + BinDir() +
                                "/amt --endpoint " + amtd_->endpoint() + " " + args + " >" + base +
                                ".out 2>" + base + ".err </dev/null";
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFile(base + ".out"),
            ReadFile(base + ".err")};
  }

  // The job's tags as `amt list-tags` prints them: Key -> Value.
  std::map<std::string, std::string> ListTags() {
    const Result listed = Amt("list-tags --resource-arn " + arn_);
    EXPECT_EQ(listed.exit_code, 0) << listed.err;
    std::map<std::string, std::string> tags;
    const nlohmann::json response = nlohmann::json::parse(listed.out);
    for (const auto& tag : response.at("Tags")) {
      tags[tag.at("Key").get<std::string>()] = tag.at("Value").get<std::string>();
    }
    return tags;
  }

  TempDir temp_{"amt-cli"};  // removed after amtd_ ends
  std::string dir_;
  std::unique_ptr<Amtd> amtd_;
  std::string arn_;
  int runs_ = 0;
};

TEST_F(CliIntegrationTest, UpdateTrainingJobChangesWhatDescribeShows) {
  const Result updated =
      Amt("update-training-job --training-job-name tagged "
          "--resource-config '{\"KeepAlivePeriodInSeconds\": 120}'");
  ASSERT_EQ(updated.exit_code, 0) << updated.err;
  EXPECT_EQ(updated.err, "");
  EXPECT_EQ(nlohmann::json::parse(updated.out).at("TrainingJobArn"), arn_);

  const Result described = Amt("describe-training-job --training-job-name tagged");
  ASSERT_EQ(described.exit_code, 0) << described.err;
  EXPECT_EQ(nlohmann::json::parse(described.out)
                .at("ResourceConfig")
                .at("KeepAlivePeriodInSeconds")
                .get<int>(),
            120);
}

TEST_F(CliIntegrationTest, UpdateTrainingJobWithNothingToChangeIsAmtdsValidationError) {
  const Result updated = Amt("update-training-job --training-job-name tagged");
  EXPECT_EQ(updated.exit_code, 254);
  EXPECT_EQ(updated.out, "");
  EXPECT_THAT(updated.err, HasSubstr("An error occurred (ValidationException) when calling the "
                                     "UpdateTrainingJob operation: UpdateTrainingJob needs at "
                                     "least one of"));
}

TEST_F(CliIntegrationTest, AddListAndDeleteTags) {
  const Result added = Amt("add-tags --resource-arn " + arn_ +
                           " --tags '[{\"Key\": \"team\", \"Value\": \"ml\"}, "
                           "{\"Key\": \"stage\", \"Value\": \"dev\"}]'");
  ASSERT_EQ(added.exit_code, 0) << added.err;
  EXPECT_EQ(nlohmann::json::parse(added.out).at("Tags").size(), 2u);
  EXPECT_EQ(ListTags(), (std::map<std::string, std::string>{{"stage", "dev"}, {"team", "ml"}}));

  // The request as a file, as the aws cli takes it; a tag of the same key is overwritten.
  WriteFile(dir_ + "/tags.json",
            R"({"ResourceArn": ")" + arn_ + R"(", "Tags": [{"Key": "team", "Value": "search"}]})");
  const Result overwritten = Amt("add-tags --cli-input-json file://" + dir_ + "/tags.json");
  ASSERT_EQ(overwritten.exit_code, 0) << overwritten.err;
  EXPECT_EQ(ListTags(), (std::map<std::string, std::string>{{"stage", "dev"}, {"team", "search"}}));

  const Result deleted = Amt("delete-tags --resource-arn " + arn_ + " --tag-keys '[\"stage\"]'");
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  EXPECT_EQ(deleted.out, "");  // DeleteTags' response is empty, as the aws cli prints it
  EXPECT_EQ(ListTags(), (std::map<std::string, std::string>{{"team", "search"}}));
}

TEST_F(CliIntegrationTest, ListTagsOfAnUnknownJobIsAServiceError) {
  const Result listed =
      Amt("list-tags --resource-arn arn:aws:sagemaker:us-east-1:000000000000:training-job/nope");
  EXPECT_EQ(listed.exit_code, 254);
  EXPECT_EQ(listed.out, "");
  EXPECT_EQ(listed.err,
            "\nAn error occurred (ValidationException) when calling the ListTags operation: "
            "Requested resource not found.\n");
}

}  // namespace
}  // namespace amt::testing
