#include "orchestrator/api/sagemaker_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tests/unit/api/api_fixture.h"

namespace amt::api {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class SageMakerApiTest : public ApiFixture {};

TEST(IsTerminalStatus, IsTrueForTheThreeEndsOnly) {
  EXPECT_TRUE(IsTerminalStatus("Completed"));
  EXPECT_TRUE(IsTerminalStatus("Failed"));
  EXPECT_TRUE(IsTerminalStatus("Stopped"));
  EXPECT_FALSE(IsTerminalStatus("InProgress"));
  EXPECT_FALSE(IsTerminalStatus("Stopping"));
  EXPECT_FALSE(IsTerminalStatus(""));
}

TEST_F(SageMakerApiTest, CreatesDescribesListsAndStopsATrainingJob) {
  auto created = api_->CreateTrainingJob(TrainingJobRequest("one"));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->training_job_arn(),
            "arn:aws:sagemaker:us-east-1:000000000000:training-job/one");

  v1::DescribeTrainingJobRequest describe;
  describe.set_training_job_name("one");
  auto described = api_->DescribeTrainingJob(describe);
  ASSERT_TRUE(described.ok()) << described.status();
  EXPECT_EQ(described->training_job_name(), "one");
  EXPECT_EQ(described->training_job_status(), "InProgress");

  auto listed = api_->ListTrainingJobs(v1::ListTrainingJobsRequest());
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->training_job_summaries_size(), 1);
  EXPECT_EQ(listed->training_job_summaries(0).training_job_name(), "one");

  v1::StopTrainingJobRequest stop;
  stop.set_training_job_name("one");
  auto stopped = api_->StopTrainingJob(stop);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_EQ(stopped->ByteSizeLong(), 0u);  // SageMaker's StopTrainingJob answers nothing
}

TEST_F(SageMakerApiTest, AddsListsAndDeletesTheTagsOfATrainingJob) {
  auto request = TrainingJobRequest("tagged");
  v1::Tag* created_with = request.add_tags();
  created_with->set_key("team");
  created_with->set_value("ml");
  ASSERT_TRUE(api_->CreateTrainingJob(request).ok());
  const std::string arn = "arn:aws:sagemaker:us-east-1:000000000000:training-job/tagged";

  v1::AddTagsRequest add;
  add.set_resource_arn(arn);
  v1::Tag* tag = add.add_tags();
  tag->set_key("cost-center");
  tag->set_value("42");
  auto added = api_->AddTags(add);
  ASSERT_TRUE(added.ok()) << added.status();
  ASSERT_EQ(added->tags_size(), 1);

  v1::ListTagsRequest list;
  list.set_resource_arn(arn);
  auto listed = api_->ListTags(list);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->tags_size(), 2);
  EXPECT_EQ(listed->tags(0).key(), "team");
  EXPECT_EQ(listed->tags(1).key(), "cost-center");

  v1::DeleteTagsRequest remove;
  remove.set_resource_arn(arn);
  remove.add_tag_keys("team");
  ASSERT_TRUE(api_->DeleteTags(remove).ok());
  listed = api_->ListTags(list);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->tags_size(), 1);
  EXPECT_EQ(listed->tags(0).key(), "cost-center");
}

TEST_F(SageMakerApiTest, RefusesTagsOfAResourceItDoesNotHaveOrABadArn) {
  v1::ListTagsRequest list;
  list.set_resource_arn("arn:aws:sagemaker:us-east-1:000000000000:training-job/nobody");
  EXPECT_EQ(api_->ListTags(list).status().message(), "Requested resource not found.");
  list.set_resource_arn("arn:aws:sagemaker:us-east-1:000000000000:endpoint/e");
  EXPECT_EQ(api_->ListTags(list).status().message(), "Requested resource not found.");
  list.set_resource_arn("not-an-arn");
  EXPECT_THAT(std::string(api_->ListTags(list).status().message()),
              HasSubstr("Member must satisfy regular expression pattern"));
  v1::DeleteTagsRequest remove;  // TagKeys is required, at least 1
  remove.set_resource_arn("arn:aws:sagemaker:us-east-1:000000000000:training-job/nobody");
  EXPECT_THAT(std::string(api_->DeleteTags(remove).status().message()), HasSubstr("tagKeys"));
}

TEST_F(SageMakerApiTest, RefusesAnInvalidNameWithSageMakersValidationMessage) {
  v1::DescribeTrainingJobRequest describe;
  describe.set_training_job_name("bad_name!");
  auto described = api_->DescribeTrainingJob(describe);
  EXPECT_EQ(described.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(described.status().message()),
              StartsWith("1 validation error detected: Value 'bad_name!' at 'trainingJobName' "
                         "failed to satisfy constraint"));

  // An absent name is SageMaker's "must not be null", not a lookup of "".
  auto missing =
      api_->DescribeHyperParameterTuningJob(v1::DescribeHyperParameterTuningJobRequest());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("hyperParameterTuningJobName"));
}

TEST_F(SageMakerApiTest, AnswersTheOrchestratorsErrorsUnchanged) {
  v1::DescribeHyperParameterTuningJobRequest describe;
  describe.set_hyper_parameter_tuning_job_name("nope");
  auto described = api_->DescribeHyperParameterTuningJob(describe);
  EXPECT_EQ(described.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(described.status().message(),
            "Amazon SageMaker can't find a tuning job called nope. Type another name.");

  ASSERT_TRUE(api_->CreateTrainingJob(TrainingJobRequest("twice")).ok());
  auto again = api_->CreateTrainingJob(TrainingJobRequest("twice"));
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
}

TEST_F(SageMakerApiTest, ValidatesTheNameOfEveryStreamRead) {
  v1::GetTrainingJobLogsRequest logs;
  logs.set_training_job_name("bad_name!");
  EXPECT_EQ(api_->ReadTrainingJobLogs(logs, 10).status().code(),
            absl::StatusCode::kInvalidArgument);
  v1::WatchHyperParameterTuningJobRequest watch;
  EXPECT_EQ(api_->SnapshotHyperParameterTuningJob(watch).status().code(),
            absl::StatusCode::kInvalidArgument);
  v1::WatchTrainingJobRequest watch_training;
  watch_training.set_training_job_name("nope");
  EXPECT_EQ(api_->SnapshotTrainingJob(watch_training).status().message(),
            "Requested resource not found.");
}

TEST_F(SageMakerApiTest, ReadsLogsInPagesFromTheStartSequence) {
  ASSERT_TRUE(api_->CreateTrainingJob(TrainingJobRequest("talker")).ok());
  ConnectWorker();
  StartAndLog("talker", {"one", "two", "three"});

  v1::GetTrainingJobLogsRequest request;
  request.set_training_job_name("talker");
  auto page = api_->ReadTrainingJobLogs(request, 2);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->lines.lines_size(), 2);
  EXPECT_EQ(page->lines.lines(0).message(), "one");
  EXPECT_EQ(page->lines.lines(1).message(), "two");
  EXPECT_EQ(page->lines.lines(0).host(), "algo-1");  // a one-host job's lines
  EXPECT_EQ(page->instance_count, 1);
  EXPECT_TRUE(page->full);
  EXPECT_FALSE(page->job_ended);

  request.set_start_sequence(page->next_sequence);
  page = api_->ReadTrainingJobLogs(request, 2);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->lines.lines_size(), 1);
  EXPECT_EQ(page->lines.lines(0).message(), "three");
  EXPECT_FALSE(page->full);

  request.set_start_sequence(page->next_sequence);
  page = api_->ReadTrainingJobLogs(request, 2);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->lines.lines_size(), 0);
  EXPECT_EQ(page->next_sequence, request.start_sequence());  // nothing new: same place next time
}

TEST_F(SageMakerApiTest, ChangeFeedReportsChangesOfItsJob) {
  const auto all = api_->Subscribe();
  const auto mine = api_->Subscribe("mine");
  const auto other = api_->Subscribe("other");
  // The first wait returns at once, so a stream sends its first snapshot without waiting.
  EXPECT_TRUE(all->Wait(std::chrono::milliseconds(0)));
  EXPECT_TRUE(mine->Wait(std::chrono::milliseconds(0)));
  EXPECT_TRUE(other->Wait(std::chrono::milliseconds(0)));
  EXPECT_FALSE(all->Wait(std::chrono::milliseconds(0)));

  ASSERT_TRUE(api_->CreateTrainingJob(TrainingJobRequest("mine")).ok());
  // The listener ran on the loop before CreateTrainingJob returned: no wait is needed.
  EXPECT_TRUE(all->Wait(std::chrono::milliseconds(0)));
  EXPECT_TRUE(mine->Wait(std::chrono::milliseconds(0)));
  EXPECT_FALSE(other->Wait(std::chrono::milliseconds(0)));
}

TEST_F(SageMakerApiTest, TuningJobFeedKeepsWhichOfItsTrainingJobsChanged) {
  ASSERT_TRUE(api_->CreateHyperParameterTuningJob(TuningJobRequest("tj", 2)).ok());
  const auto feed = api_->SubscribeTuningJob("TJ");  // names match case-insensitively
  EXPECT_TRUE(feed->Wait(std::chrono::milliseconds(0)));
  EXPECT_EQ(feed->TakeChangedTrainingJobs(), std::nullopt);  // first: the whole snapshot
  ConnectWorker(2);
  const std::vector<std::string> started = Started();
  ASSERT_EQ(started.size(), 2u);
  feed->TakeChangedTrainingJobs();  // whatever starting them changed

  StartAndLog(started[1], {"val_loss=0.5"});
  // Another tuning job's or a standalone job's changes are not this feed's.
  ASSERT_TRUE(api_->CreateTrainingJob(TrainingJobRequest("solo")).ok());
  EXPECT_TRUE(feed->Wait(std::chrono::milliseconds(0)));
  EXPECT_EQ(feed->TakeChangedTrainingJobs(), std::vector<std::string>{started[1]});
  EXPECT_FALSE(feed->Wait(std::chrono::milliseconds(0)));  // taken: not a change again

  v1::WatchHyperParameterTuningJobRequest watch;
  watch.set_hyper_parameter_tuning_job_name("tj");
  const std::vector<std::string> changed = {started[1]};
  auto some = api_->SnapshotHyperParameterTuningJob(watch, &changed);
  ASSERT_TRUE(some.ok()) << some.status();
  ASSERT_EQ(some->training_jobs_size(), 1);
  EXPECT_EQ(some->training_jobs(0).training_job_name(), started[1]);
  EXPECT_EQ(some->tuning_job().training_job_status_counters().in_progress(), 2);

  // A change of the tuning job itself asks for everything again.
  v1::StopHyperParameterTuningJobRequest stop;
  stop.set_hyper_parameter_tuning_job_name("tj");
  ASSERT_TRUE(api_->StopHyperParameterTuningJob(stop).ok());
  EXPECT_TRUE(feed->Wait(std::chrono::milliseconds(0)));
  EXPECT_EQ(feed->TakeChangedTrainingJobs(), std::nullopt);
}

TEST_F(SageMakerApiTest, WatchJobCallsBackNowAndOnEveryChangeOfItsJobUntilCancelled) {
  ASSERT_TRUE(api_->CreateTrainingJob(TrainingJobRequest("mine")).ok());
  std::mutex mu;
  std::vector<bool> calls;  // `ended` of each call
  auto watched = api_->WatchJob(SageMakerApi::JobKind::kTrainingJob, "mine", [&](bool ended) {
    std::lock_guard lock(mu);
    calls.push_back(ended);
  });
  ASSERT_TRUE(watched.ok()) << watched.status();
  const auto seen = [&] {
    std::lock_guard lock(mu);
    return calls;
  };
  EXPECT_THAT(seen(), ::testing::ElementsAre(false));  // at once: the job runs
  ASSERT_TRUE(api_->CreateTrainingJob(TrainingJobRequest("other")).ok());
  EXPECT_EQ(seen().size(), 1u);  // another job's change is not this one's
  v1::StopTrainingJobRequest stop;
  stop.set_training_job_name("mine");
  ASSERT_TRUE(api_->StopTrainingJob(stop).ok());
  // The listener ran on the loop before StopTrainingJob returned.
  v1::DescribeTrainingJobRequest describe;
  describe.set_training_job_name("mine");
  const bool ended = IsTerminalStatus(api_->DescribeTrainingJob(describe)->training_job_status());
  ASSERT_GE(seen().size(), 2u);
  EXPECT_EQ(seen().back(), ended);

  (*watched)();
  (*watched)();  // a second call does nothing
  const size_t before = seen().size();
  (void)api_->StopTrainingJob(stop);
  ASSERT_TRUE(api_->CreateTrainingJob(TrainingJobRequest("third")).ok());
  v1::DeleteTrainingJobRequest remove;
  remove.set_training_job_name("mine");
  (void)api_->DeleteTrainingJob(remove);
  EXPECT_EQ(seen().size(), before);  // cancelled: no more calls

  EXPECT_EQ(api_->WatchJob(SageMakerApi::JobKind::kTuningJob, "nope", [](bool) {}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(
      api_->WatchJob(SageMakerApi::JobKind::kTrainingJob, "bad name", [](bool) {}).status().code(),
      absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace amt::api
