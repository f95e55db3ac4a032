#include "cli/commands.h"

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>

#include "tests/support/status_matchers.h"
#include "tests/unit/cli/fake_tuning_stub.h"

namespace amt::cli {
namespace {

using ::amt::testing::IsOk;
using ::amt::testing::StatusIs;

using testing::FakeTuningStub;

constexpr char kTuningJobJson[] = R"({
  "HyperParameterTuningJobName": "from-file",
  "HyperParameterTuningJobConfig": {
    "Strategy": "Random",
    "ResourceLimits": {"MaxNumberOfTrainingJobs": 4, "MaxParallelTrainingJobs": 2}
  }
})";

class CommandsTest : public ::testing::Test {
 protected:
  FakeTuningStub stub_;
  std::ostringstream out_;
  std::ostringstream err_;
  Commands commands_{stub_, "127.0.0.1:7070", out_, err_};
};

v1::TrainingJobSummary TrainingJob(const std::string& name) {
  v1::TrainingJobSummary job;
  job.set_training_job_name(name);
  return job;
}

v1::ListTrainingJobsResponse Page(std::initializer_list<std::string> names,
                                  const std::string& next_token) {
  v1::ListTrainingJobsResponse page;
  for (const std::string& name : names) *page.add_training_job_summaries() = TrainingJob(name);
  if (!next_token.empty()) page.set_next_token(next_token);
  return page;
}

// --- flags -> requests ---

TEST(ShouldPaginate, IsTrueByDefault) {
  const absl::StatusOr<bool> paginate = ShouldPaginate(PaginationOptions());
  ASSERT_THAT(paginate, IsOk());
  EXPECT_TRUE(*paginate);
}

TEST(ShouldPaginate, IsFalseWithNoPaginateMaxResultsOrNextToken) {
  PaginationOptions no_paginate;
  no_paginate.no_paginate = true;
  PaginationOptions max_results;
  max_results.max_results = 5;
  PaginationOptions next_token;
  next_token.next_token = "t";
  EXPECT_FALSE(*ShouldPaginate(no_paginate));
  EXPECT_FALSE(*ShouldPaginate(max_results));
  EXPECT_FALSE(*ShouldPaginate(next_token));
}

TEST(ShouldPaginate, RejectsPaginatorArgumentsWhenPaginationIsOff) {
  PaginationOptions options;
  options.max_results = 5;
  options.page_size = 2;
  options.starting_token = "t";
  const absl::StatusOr<bool> paginate = ShouldPaginate(options);
  EXPECT_THAT(
      paginate,
      StatusIs(absl::StatusCode::kInvalidArgument,
               "Cannot specify --no-paginate along with pagination arguments: --starting-token, "
               "--page-size"));
}

TEST(BuildListTrainingJobsRequest, LeavesUnsetFlagsUnset) {
  const v1::ListTrainingJobsRequest request = BuildListTrainingJobsRequest({});
  EXPECT_FALSE(request.has_max_results());
  EXPECT_FALSE(request.has_next_token());
  EXPECT_FALSE(request.has_sort_by());
  EXPECT_FALSE(request.has_sort_order());
  EXPECT_FALSE(request.has_name_contains());
  EXPECT_FALSE(request.has_status_equals());
}

TEST(BuildListTrainingJobsRequest, MapsFiltersAndPaginatorArgumentsWhenPaginating) {
  ListTrainingJobsOptions options;
  options.pagination.page_size = 3;
  options.pagination.starting_token = "start";
  options.sort_by = "Name";
  options.sort_order = "Descending";
  options.name_contains = "demo";
  options.status_equals = "Completed";
  const v1::ListTrainingJobsRequest request = BuildListTrainingJobsRequest(options);
  EXPECT_EQ(request.max_results(), 3);
  EXPECT_EQ(request.next_token(), "start");
  EXPECT_EQ(request.sort_by(), "Name");
  EXPECT_EQ(request.sort_order(), "Descending");
  EXPECT_EQ(request.name_contains(), "demo");
  EXPECT_EQ(request.status_equals(), "Completed");
}

TEST(BuildListTrainingJobsRequest, UsesMaxResultsAndNextTokenWhenNotPaginating) {
  ListTrainingJobsOptions options;
  options.pagination.max_results = 7;
  options.pagination.next_token = "tok";
  const v1::ListTrainingJobsRequest request = BuildListTrainingJobsRequest(options);
  EXPECT_EQ(request.max_results(), 7);
  EXPECT_EQ(request.next_token(), "tok");
}

TEST(BuildListHyperParameterTuningJobsRequest, MapsEveryFlag) {
  ListHyperParameterTuningJobsOptions options;
  options.pagination.max_results = 2;
  options.sort_by = "CreationTime";
  options.sort_order = "Ascending";
  options.name_contains = "tune";
  options.status_equals = "InProgress";
  const v1::ListHyperParameterTuningJobsRequest request =
      BuildListHyperParameterTuningJobsRequest(options);
  EXPECT_EQ(request.max_results(), 2);
  EXPECT_FALSE(request.has_next_token());
  EXPECT_EQ(request.sort_by(), "CreationTime");
  EXPECT_EQ(request.sort_order(), "Ascending");
  EXPECT_EQ(request.name_contains(), "tune");
  EXPECT_EQ(request.status_equals(), "InProgress");
}

TEST(BuildListTrainingJobsForHyperParameterTuningJobRequest, MapsEveryFlag) {
  ListTrainingJobsForHyperParameterTuningJobOptions options;
  options.hyper_parameter_tuning_job_name = "demo";
  options.pagination.next_token = "n";
  options.sort_by = "FinalObjectiveMetricValue";
  options.sort_order = "Descending";
  options.status_equals = "Failed";
  const v1::ListTrainingJobsForHyperParameterTuningJobRequest request =
      BuildListTrainingJobsForHyperParameterTuningJobRequest(options);
  EXPECT_EQ(request.hyper_parameter_tuning_job_name(), "demo");
  EXPECT_EQ(request.next_token(), "n");
  EXPECT_FALSE(request.has_max_results());
  EXPECT_EQ(request.sort_by(), "FinalObjectiveMetricValue");
  EXPECT_EQ(request.sort_order(), "Descending");
  EXPECT_EQ(request.status_equals(), "Failed");
}

TEST(BuildCreateHyperParameterTuningJobRequest, KeepsFileMembersWithoutOverride) {
  const absl::StatusOr<v1::CreateHyperParameterTuningJobRequest> request =
      BuildCreateHyperParameterTuningJobRequest({kTuningJobJson, std::nullopt, {}});
  ASSERT_THAT(request, IsOk());
  EXPECT_EQ(request->hyper_parameter_tuning_job_name(), "from-file");
  EXPECT_EQ(
      request->hyper_parameter_tuning_job_config().resource_limits().max_parallel_training_jobs(),
      2);
}

TEST(BuildCreateHyperParameterTuningJobRequest, NameFlagOverridesFileMember) {
  const absl::StatusOr<v1::CreateHyperParameterTuningJobRequest> request =
      BuildCreateHyperParameterTuningJobRequest({kTuningJobJson, "from-flag", {}});
  ASSERT_THAT(request, IsOk());
  EXPECT_EQ(request->hyper_parameter_tuning_job_name(), "from-flag");
  EXPECT_EQ(request->hyper_parameter_tuning_job_config().strategy(), "Random");
}

TEST(BuildCreateTrainingJobRequest, NameFlagOverridesFileMember) {
  const absl::StatusOr<v1::CreateTrainingJobRequest> request = BuildCreateTrainingJobRequest(
      {R"({"TrainingJobName": "a", "RoleArn": "arn:aws:iam::1:role/r"})", "b", {}});
  ASSERT_THAT(request, IsOk());
  EXPECT_EQ(request->training_job_name(), "b");
  EXPECT_EQ(request->role_arn(), "arn:aws:iam::1:role/r");
}

TEST(BuildCreateTrainingJobRequest, ReturnsInputErrors) {
  const absl::StatusOr<v1::CreateTrainingJobRequest> request =
      BuildCreateTrainingJobRequest({"file:///no/such.json", std::nullopt, {}});
  EXPECT_THAT(request,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Error parsing parameter 'cli-input-json': Unable to load paramfile "
                       "file:///no/such.json: No such file or directory"));
}

// --- unary commands ---

TEST_F(CommandsTest, CreateHyperParameterTuningJobSendsOverriddenNameAndPrintsArn) {
  v1::CreateHyperParameterTuningJobResponse response;
  response.set_hyper_parameter_tuning_job_arn(
      "arn:aws:sagemaker:us-east-1:123456789012:hyper-parameter-tuning-job/from-flag");
  stub_.create_tuning.Reply(response);
  EXPECT_EQ(commands_.CreateHyperParameterTuningJob({kTuningJobJson, "from-flag", {}}), 0);
  ASSERT_EQ(stub_.create_tuning.requests.size(), 1u);
  EXPECT_EQ(stub_.create_tuning.requests[0].hyper_parameter_tuning_job_name(), "from-flag");
  EXPECT_EQ(
      out_.str(),
      "{\n    \"HyperParameterTuningJobArn\": "
      "\"arn:aws:sagemaker:us-east-1:123456789012:hyper-parameter-tuning-job/from-flag\"\n}\n");
  EXPECT_EQ(err_.str(), "");
}

TEST_F(CommandsTest, CreateWithUnreadableInputExits252WithoutCalling) {
  EXPECT_EQ(commands_.CreateTrainingJob({"{\"TrainingJobName\": 1}", std::nullopt, {}}), 252);
  EXPECT_TRUE(stub_.create_training.requests.empty());
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(),
            "\nParameter validation failed:\nNUMBER_VALUE can not be converted to a String "
            "(member TrainingJobName)\n");
}

TEST_F(CommandsTest, CreateTrainingJobPrintsArn) {
  v1::CreateTrainingJobResponse response;
  response.set_training_job_arn("arn:aws:sagemaker:us-east-1:123456789012:training-job/t");
  stub_.create_training.Reply(response);
  EXPECT_EQ(commands_.CreateTrainingJob({R"({"TrainingJobName": "t"})", std::nullopt, {}}), 0);
  EXPECT_EQ(stub_.create_training.requests.at(0).training_job_name(), "t");
  EXPECT_EQ(out_.str(),
            "{\n    \"TrainingJobArn\": "
            "\"arn:aws:sagemaker:us-east-1:123456789012:training-job/t\"\n}\n");
}

TEST_F(CommandsTest, DescribeServiceErrorExits254WithAwsCliText) {
  stub_.describe_tuning.Fail(grpc::StatusCode::NOT_FOUND,
                             "Amazon SageMaker can't find a tuning job called nope. Type another "
                             "name.");
  EXPECT_EQ(commands_.DescribeHyperParameterTuningJob("nope"), 254);
  EXPECT_EQ(stub_.describe_tuning.requests.at(0).hyper_parameter_tuning_job_name(), "nope");
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(),
            "\nAn error occurred (ResourceNotFound) when calling the "
            "DescribeHyperParameterTuningJob operation: Amazon SageMaker can't find a tuning job "
            "called nope. Type another name.\n");
}

TEST_F(CommandsTest, DescribeTrainingJobPrintsResponse) {
  v1::DescribeTrainingJobResponse response;
  response.set_training_job_name("t");
  response.set_training_job_status("Completed");
  stub_.describe_training.Reply(response);
  EXPECT_EQ(commands_.DescribeTrainingJob("t"), 0);
  EXPECT_EQ(stub_.describe_training.requests.at(0).training_job_name(), "t");
  EXPECT_EQ(out_.str(),
            "{\n"
            "    \"TrainingJobName\": \"t\",\n"
            "    \"TrainingJobStatus\": \"Completed\"\n"
            "}\n");
}

TEST_F(CommandsTest, ConnectionFailureExits255) {
  stub_.describe_training.Fail(grpc::StatusCode::UNAVAILABLE, "failed to connect to all addresses");
  EXPECT_EQ(commands_.DescribeTrainingJob("t"), 255);
  EXPECT_EQ(err_.str(), "\nCould not connect to the endpoint URL: \"127.0.0.1:7070\"\n");
}

TEST_F(CommandsTest, StopCommandsPrintNothing) {
  stub_.stop_tuning.Reply({});
  stub_.stop_training.Reply({});
  EXPECT_EQ(commands_.StopHyperParameterTuningJob("demo"), 0);
  EXPECT_EQ(commands_.StopTrainingJob("demo-001"), 0);
  EXPECT_EQ(stub_.stop_tuning.requests.at(0).hyper_parameter_tuning_job_name(), "demo");
  EXPECT_EQ(stub_.stop_training.requests.at(0).training_job_name(), "demo-001");
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(), "");
}

TEST_F(CommandsTest, DeleteCommandsSendTheNameAndPrintNothing) {
  stub_.delete_tuning.Reply({});
  stub_.delete_training.Reply({});
  EXPECT_EQ(commands_.DeleteHyperParameterTuningJob("demo"), 0);
  EXPECT_EQ(commands_.DeleteTrainingJob("demo-001"), 0);
  EXPECT_EQ(stub_.delete_tuning.requests.at(0).hyper_parameter_tuning_job_name(), "demo");
  EXPECT_EQ(stub_.delete_training.requests.at(0).training_job_name(), "demo-001");
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(), "");
}

// --- pagination ---

TEST_F(CommandsTest, ListTrainingJobsFollowsNextTokenAndPrintsMergedListWithoutToken) {
  stub_.list_training.Reply(Page({"a", "b"}, "t1"));
  stub_.list_training.Reply(Page({"c"}, "t2"));
  stub_.list_training.Reply(Page({"d"}, ""));
  ListTrainingJobsOptions options;
  options.pagination.page_size = 2;
  options.status_equals = "Completed";
  EXPECT_EQ(commands_.ListTrainingJobs(options), 0);
  ASSERT_EQ(stub_.list_training.requests.size(), 3u);
  EXPECT_FALSE(stub_.list_training.requests[0].has_next_token());
  EXPECT_EQ(stub_.list_training.requests[1].next_token(), "t1");
  EXPECT_EQ(stub_.list_training.requests[2].next_token(), "t2");
  for (const auto& request : stub_.list_training.requests) {
    EXPECT_EQ(request.max_results(), 2);
    EXPECT_EQ(request.status_equals(), "Completed");
  }
  EXPECT_EQ(out_.str(),
            "{\n"
            "    \"TrainingJobSummaries\": [\n"
            "        {\n            \"TrainingJobName\": \"a\"\n        },\n"
            "        {\n            \"TrainingJobName\": \"b\"\n        },\n"
            "        {\n            \"TrainingJobName\": \"c\"\n        },\n"
            "        {\n            \"TrainingJobName\": \"d\"\n        }\n"
            "    ]\n"
            "}\n");
}

TEST_F(CommandsTest, ListTrainingJobsWithNoPaginatePrintsOnePageWithNextToken) {
  stub_.list_training.Reply(Page({"a"}, "t1"));
  ListTrainingJobsOptions options;
  options.pagination.no_paginate = true;
  EXPECT_EQ(commands_.ListTrainingJobs(options), 0);
  EXPECT_EQ(stub_.list_training.requests.size(), 1u);
  EXPECT_EQ(out_.str(),
            "{\n"
            "    \"TrainingJobSummaries\": [\n"
            "        {\n            \"TrainingJobName\": \"a\"\n        }\n"
            "    ],\n"
            "    \"NextToken\": \"t1\"\n"
            "}\n");
}

TEST_F(CommandsTest, ListTrainingJobsWithMaxResultsMakesOneCall) {
  stub_.list_training.Reply(Page({"a"}, "t1"));
  ListTrainingJobsOptions options;
  options.pagination.max_results = 1;
  EXPECT_EQ(commands_.ListTrainingJobs(options), 0);
  ASSERT_EQ(stub_.list_training.requests.size(), 1u);
  EXPECT_EQ(stub_.list_training.requests[0].max_results(), 1);
  EXPECT_NE(out_.str().find("\"NextToken\": \"t1\""), std::string::npos);
}

TEST_F(CommandsTest, ListTrainingJobsErrorOnLaterPagePrintsOnlyTheError) {
  stub_.list_training.Reply(Page({"a"}, "t1"));
  stub_.list_training.Fail(grpc::StatusCode::INVALID_ARGUMENT, "bad token");
  EXPECT_EQ(commands_.ListTrainingJobs({}), 254);
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(),
            "\nAn error occurred (ValidationException) when calling the ListTrainingJobs "
            "operation: bad token\n");
}

TEST_F(CommandsTest, ListTrainingJobsStopsWhenTheSameTokenComesBack) {
  stub_.list_training.Reply(Page({"a"}, "loop"));
  stub_.list_training.Reply(Page({"b"}, "loop"));
  EXPECT_EQ(commands_.ListTrainingJobs({}), 255);
  EXPECT_EQ(stub_.list_training.requests.size(), 2u);
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(),
            "\nError during pagination: The same next token was received twice: {'NextToken': "
            "'loop'}\n");
}

TEST_F(CommandsTest, ListWithConflictingPagingFlagsExits252WithoutCalling) {
  ListTrainingJobsOptions options;
  options.pagination.no_paginate = true;
  options.pagination.page_size = 5;
  EXPECT_EQ(commands_.ListTrainingJobs(options), 252);
  EXPECT_TRUE(stub_.list_training.requests.empty());
  EXPECT_EQ(err_.str(),
            "\nCannot specify --no-paginate along with pagination arguments: --page-size\n");
}

TEST_F(CommandsTest, ListHyperParameterTuningJobsMergesPages) {
  v1::ListHyperParameterTuningJobsResponse first;
  first.add_hyper_parameter_tuning_job_summaries()->set_hyper_parameter_tuning_job_name("x");
  first.set_next_token("n");
  v1::ListHyperParameterTuningJobsResponse second;
  second.add_hyper_parameter_tuning_job_summaries()->set_hyper_parameter_tuning_job_name("y");
  stub_.list_tuning.Reply(first);
  stub_.list_tuning.Reply(second);
  ListHyperParameterTuningJobsOptions options;
  options.name_contains = "demo";
  EXPECT_EQ(commands_.ListHyperParameterTuningJobs(options), 0);
  ASSERT_EQ(stub_.list_tuning.requests.size(), 2u);
  EXPECT_EQ(stub_.list_tuning.requests[1].next_token(), "n");
  EXPECT_EQ(stub_.list_tuning.requests[1].name_contains(), "demo");
  EXPECT_EQ(out_.str(),
            "{\n"
            "    \"HyperParameterTuningJobSummaries\": [\n"
            "        {\n            \"HyperParameterTuningJobName\": \"x\"\n        },\n"
            "        {\n            \"HyperParameterTuningJobName\": \"y\"\n        }\n"
            "    ]\n"
            "}\n");
}

TEST_F(CommandsTest, ListTrainingJobsForHyperParameterTuningJobMergesPages) {
  v1::ListTrainingJobsForHyperParameterTuningJobResponse first;
  first.add_training_job_summaries()->set_training_job_name("demo-001");
  first.set_next_token("n");
  v1::ListTrainingJobsForHyperParameterTuningJobResponse second;
  second.add_training_job_summaries()->set_training_job_name("demo-002");
  stub_.list_for_tuning.Reply(first);
  stub_.list_for_tuning.Reply(second);
  ListTrainingJobsForHyperParameterTuningJobOptions options;
  options.hyper_parameter_tuning_job_name = "demo";
  EXPECT_EQ(commands_.ListTrainingJobsForHyperParameterTuningJob(options), 0);
  ASSERT_EQ(stub_.list_for_tuning.requests.size(), 2u);
  EXPECT_EQ(stub_.list_for_tuning.requests[0].hyper_parameter_tuning_job_name(), "demo");
  EXPECT_EQ(stub_.list_for_tuning.requests[1].hyper_parameter_tuning_job_name(), "demo");
  EXPECT_EQ(stub_.list_for_tuning.requests[1].next_token(), "n");
  EXPECT_EQ(out_.str(),
            "{\n"
            "    \"TrainingJobSummaries\": [\n"
            "        {\n            \"TrainingJobName\": \"demo-001\",\n"
            "            \"TunedHyperParameters\": {}\n        },\n"
            "        {\n            \"TrainingJobName\": \"demo-002\",\n"
            "            \"TunedHyperParameters\": {}\n        }\n"
            "    ]\n"
            "}\n");
}

// --- logs ---

v1::GetTrainingJobLogsResponse LogBatch(std::initializer_list<std::string> messages) {
  v1::GetTrainingJobLogsResponse batch;
  for (const std::string& message : messages) batch.add_lines()->set_message(message);
  return batch;
}

TEST_F(CommandsTest, LogsPrintsEveryMessageVerbatim) {
  stub_.logs.messages = {LogBatch({"epoch 1#011loss=0.5", "  indented"}), LogBatch({"done"})};
  EXPECT_EQ(commands_.Logs({.training_job_name = "demo-001", .follow = false, .host = {}}), 0);
  ASSERT_EQ(stub_.logs.requests.size(), 1u);
  EXPECT_EQ(stub_.logs.requests[0].training_job_name(), "demo-001");
  EXPECT_FALSE(stub_.logs.requests[0].has_follow());
  EXPECT_FALSE(stub_.logs.requests[0].has_host());
  EXPECT_EQ(out_.str(), "epoch 1#011loss=0.5\n  indented\ndone\n");
}

TEST_F(CommandsTest, LogsAsksForOneHostAndPrefixesEachLineWithItsHost) {
  v1::GetTrainingJobLogsResponse batch;
  auto* line = batch.add_lines();
  line->set_message("sum=3");
  line->set_host("algo-2");
  batch.add_lines()->set_message("no host");  // as from an amtd before hosts: algo-1
  stub_.logs.messages = {batch};
  LogsOptions options{.training_job_name = "multi", .follow = false, .host = "algo-2"};
  options.prefix_host = true;
  EXPECT_EQ(commands_.Logs(options), 0);
  EXPECT_EQ(stub_.logs.requests.at(0).host(), "algo-2");
  EXPECT_EQ(out_.str(), "algo-2: sum=3\nalgo-1: no host\n");
}

TEST_F(CommandsTest, LogsFollowSetsFollowAndReportsStreamError) {
  stub_.logs.messages = {LogBatch({"line"})};
  stub_.logs.status =
      grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "Requested resource not found.");
  EXPECT_EQ(commands_.Logs({.training_job_name = "x", .follow = true, .host = {}}), 254);
  EXPECT_TRUE(stub_.logs.requests.at(0).follow());
  EXPECT_EQ(out_.str(), "line\n");
  EXPECT_EQ(err_.str(),
            "\nAn error occurred (ValidationException) when calling the GetTrainingJobLogs "
            "operation: Requested resource not found.\n");
}

// --- watch ---

v1::WatchHyperParameterTuningJobResponse Snapshot(const std::string& status) {
  v1::WatchHyperParameterTuningJobResponse snapshot;
  snapshot.mutable_tuning_job()->set_hyper_parameter_tuning_job_name("demo");
  snapshot.mutable_tuning_job()->set_hyper_parameter_tuning_job_status(status);
  return snapshot;
}

TEST_F(CommandsTest, WatchExits0WhenTuningJobCompletes) {
  stub_.watch.messages = {Snapshot("InProgress"), Snapshot("Completed")};
  EXPECT_EQ(commands_.Watch({"demo", /*tty=*/false, 80}), 0);
  EXPECT_EQ(stub_.watch.requests.at(0).hyper_parameter_tuning_job_name(), "demo");
  EXPECT_TRUE(stub_.describe_tuning.requests.empty());
  EXPECT_EQ(out_.str(),
            "Tuning job demo: InProgress\n"
            "Tuning job demo: Completed\n"
            "Tuning job demo ended: Completed\n"
            "Training jobs: Completed 0, InProgress 0, RetryableError 0, NonRetryableError 0, "
            "Stopped 0\n"
            "Objectives: Succeeded 0, Pending 0, Failed 0\n"
            "Best training job: none\n");
}

TEST_F(CommandsTest, WatchExits1WhenTuningJobFails) {
  stub_.watch.messages = {Snapshot("Failed")};
  EXPECT_EQ(commands_.Watch({"demo", /*tty=*/false, 80}), 1);
}

TEST_F(CommandsTest, WatchDescribesTheJobWhenTheStreamEndsEarly) {
  stub_.watch.messages = {Snapshot("InProgress")};
  v1::DescribeHyperParameterTuningJobResponse now;
  now.set_hyper_parameter_tuning_job_name("demo");
  now.set_hyper_parameter_tuning_job_status("Stopped");
  stub_.describe_tuning.Reply(now);
  EXPECT_EQ(commands_.Watch({"demo", /*tty=*/false, 80}), 1);
  ASSERT_EQ(stub_.describe_tuning.requests.size(), 1u);
  EXPECT_EQ(stub_.describe_tuning.requests[0].hyper_parameter_tuning_job_name(), "demo");
  EXPECT_NE(out_.str().find("Tuning job demo ended: Stopped\n"), std::string::npos);
}

TEST_F(CommandsTest, WatchReportsStreamErrorWithItsOperationName) {
  stub_.watch.status = grpc::Status(grpc::StatusCode::NOT_FOUND,
                                    "Amazon SageMaker can't find a tuning job called demo. Type "
                                    "another name.");
  EXPECT_EQ(commands_.Watch({"demo", /*tty=*/false, 80}), 254);
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(),
            "\nAn error occurred (ResourceNotFound) when calling the WatchHyperParameterTuningJob "
            "operation: Amazon SageMaker can't find a tuning job called demo. Type another "
            "name.\n");
}

// --- any operation of the table (Send) ---

const Operation& Op(const std::string& name) {
  const Operation* operation = FindOperation(name);
  EXPECT_NE(operation, nullptr) << name;
  return *operation;
}

TEST(BuildRequest, MergesMemberFlagsOverTheInputJsonIntoTheOperationsRequestType) {
  const absl::StatusOr<std::unique_ptr<google::protobuf::Message>> request = BuildRequest(
      Op("UpdateTrainingJob"), {R"({"TrainingJobName": "from-file", "ResourceConfig": {}})",
                                {{"ResourceConfig", R"({"KeepAlivePeriodInSeconds": 120})"}}});
  ASSERT_THAT(request, IsOk());
  const auto* update = dynamic_cast<const v1::UpdateTrainingJobRequest*>(request->get());
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(update->training_job_name(), "from-file");
  EXPECT_EQ(update->resource_config().keep_alive_period_in_seconds(), 120);
}

TEST_F(CommandsTest, SendUpdateTrainingJobSendsTheFlagsAndPrintsTheArn) {
  v1::UpdateTrainingJobResponse response;
  response.set_training_job_arn("arn:aws:sagemaker:us-east-1:123456789012:training-job/t");
  stub_.update_training.Reply(response);
  EXPECT_EQ(commands_.Send(Op("UpdateTrainingJob"),
                           {"",
                            {{"TrainingJobName", "t"},
                             {"ProfilerConfig", R"({"ProfilingIntervalInMilliseconds": 500})"}}}),
            0);
  ASSERT_EQ(stub_.update_training.requests.size(), 1u);
  EXPECT_EQ(stub_.update_training.requests[0].training_job_name(), "t");
  EXPECT_EQ(
      stub_.update_training.requests[0].profiler_config().profiling_interval_in_milliseconds(),
      500);
  EXPECT_EQ(out_.str(),
            "{\n    \"TrainingJobArn\": "
            "\"arn:aws:sagemaker:us-east-1:123456789012:training-job/t\"\n}\n");
  EXPECT_EQ(err_.str(), "");
}

TEST_F(CommandsTest, SendAddTagsTakesTheRequestFromCliInputJson) {
  v1::AddTagsResponse response;
  auto* tag = response.add_tags();
  tag->set_key("team");
  tag->set_value("ml");
  stub_.add_tags.Reply(response);
  EXPECT_EQ(
      commands_.Send(Op("AddTags"),
                     {R"({"ResourceArn": "arn:x", "Tags": [{"Key": "team", "Value": "ml"}]})", {}}),
      0);
  ASSERT_EQ(stub_.add_tags.requests.size(), 1u);
  EXPECT_EQ(stub_.add_tags.requests[0].resource_arn(), "arn:x");
  ASSERT_EQ(stub_.add_tags.requests[0].tags_size(), 1);
  EXPECT_EQ(stub_.add_tags.requests[0].tags(0).key(), "team");
  EXPECT_EQ(out_.str(),
            "{\n    \"Tags\": [\n        {\n            \"Key\": \"team\",\n"
            "            \"Value\": \"ml\"\n        }\n    ]\n}\n");
}

TEST_F(CommandsTest, SendDeleteTagsPrintsNothing) {
  stub_.delete_tags.Reply({});
  EXPECT_EQ(commands_.Send(Op("DeleteTags"),
                           {"", {{"ResourceArn", "arn:x"}, {"TagKeys", R"(["team", "stage"])"}}}),
            0);
  ASSERT_EQ(stub_.delete_tags.requests.size(), 1u);
  EXPECT_EQ(stub_.delete_tags.requests[0].tag_keys_size(), 2);
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(), "");
}

TEST_F(CommandsTest, SendWithBadFlagJsonExits252WithoutCalling) {
  EXPECT_EQ(commands_.Send(Op("AddTags"), {"", {{"Tags", "team=ml"}}}), 252);
  EXPECT_TRUE(stub_.add_tags.requests.empty());
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(), "\nError parsing parameter 'tags': Invalid JSON: team=ml\n");
}

TEST_F(CommandsTest, SendServiceErrorNamesTheOperation) {
  stub_.list_tags.Fail(grpc::StatusCode::NOT_FOUND, "Requested resource not found.");
  EXPECT_EQ(commands_.Send(Op("ListTags"), {"", {{"ResourceArn", "arn:x"}}}), 254);
  EXPECT_EQ(err_.str(),
            "\nAn error occurred (ResourceNotFound) when calling the ListTags operation: "
            "Requested resource not found.\n");
}

}  // namespace
}  // namespace amt::cli
