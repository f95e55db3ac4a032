#include "orchestrator/core/listing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace amt::core {
namespace {

using ::testing::ElementsAre;

v1::TrainingJobSummary Job(const std::string& name, const std::string& status, double created) {
  v1::TrainingJobSummary s;
  s.set_training_job_name(name);
  s.set_training_job_status(status);
  s.set_creation_time(created);
  s.set_last_modified_time(created + 1);
  return s;
}

std::vector<std::string> Names(const v1::ListTrainingJobsResponse& r) {
  std::vector<std::string> out;
  for (const auto& s : r.training_job_summaries()) out.push_back(s.training_job_name());
  return out;
}

const std::vector<v1::TrainingJobSummary> kJobs = {
    Job("alpha-1", "Completed", 10), Job("Beta-2", "Failed", 20), Job("alpha-3", "InProgress", 30)};

TEST(ListTrainingJobs, DefaultsToCreationTimeAscendingAndTenResults) {
  auto r = ListTrainingJobs(kJobs, {});
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(Names(*r), ElementsAre("alpha-1", "Beta-2", "alpha-3"));
  EXPECT_FALSE(r->has_next_token());
}

TEST(ListTrainingJobs, NameContainsIgnoresCase) {
  v1::ListTrainingJobsRequest req;
  req.set_name_contains("BETA");
  EXPECT_THAT(Names(*ListTrainingJobs(kJobs, req)), ElementsAre("Beta-2"));
}

TEST(ListTrainingJobs, FiltersByStatusAndTimeWindows) {
  v1::ListTrainingJobsRequest req;
  req.set_creation_time_after(10);  // strictly after
  EXPECT_THAT(Names(*ListTrainingJobs(kJobs, req)), ElementsAre("Beta-2", "alpha-3"));
  req.set_last_modified_time_before(31);
  EXPECT_THAT(Names(*ListTrainingJobs(kJobs, req)), ElementsAre("Beta-2"));
  v1::ListTrainingJobsRequest by_status;
  by_status.set_status_equals("InProgress");
  EXPECT_THAT(Names(*ListTrainingJobs(kJobs, by_status)), ElementsAre("alpha-3"));
}

// botocore's documentation: MaxResults jobs are taken first, ignoring StatusEquals, and then
// filtered; the token goes on from the page's end.
TEST(ListTrainingJobs, TakesThePageFirstAndThenFiltersByStatus) {
  v1::ListTrainingJobsRequest req;
  req.set_status_equals("InProgress");
  req.set_max_results(2);
  auto first = ListTrainingJobs(kJobs, req);
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(Names(*first).empty());  // alpha-1 and Beta-2 taken, neither InProgress
  ASSERT_TRUE(first->has_next_token());
  req.set_next_token(first->next_token());
  auto second = ListTrainingJobs(kJobs, req);
  ASSERT_TRUE(second.ok());
  EXPECT_THAT(Names(*second), ElementsAre("alpha-3"));
  EXPECT_FALSE(second->has_next_token());
  req.clear_next_token();
  req.set_status_equals("Completed");
  EXPECT_THAT(Names(*ListTrainingJobs(kJobs, req)), ElementsAre("alpha-1"));
}

TEST(ListTrainingJobs, SortsByNameDescending) {
  v1::ListTrainingJobsRequest req;
  req.set_sort_by("Name");
  req.set_sort_order("Descending");
  EXPECT_THAT(Names(*ListTrainingJobs(kJobs, req)), ElementsAre("alpha-3", "alpha-1", "Beta-2"));
}

TEST(ListTuningJobs, SharesTheFiltersAndSortsByNameByDefault) {
  std::vector<v1::HyperParameterTuningJobSummary> all;
  for (const auto& [name, status, created] :
       std::vector<std::tuple<std::string, std::string, double>>{
           {"zeta", "Completed", 1}, {"Eta", "InProgress", 2}, {"theta", "Completed", 3}}) {
    v1::HyperParameterTuningJobSummary s;
    s.set_hyper_parameter_tuning_job_name(name);
    s.set_hyper_parameter_tuning_job_status(status);
    s.set_creation_time(created);
    s.set_last_modified_time(created);
    all.push_back(s);
  }
  v1::ListHyperParameterTuningJobsRequest req;
  req.set_status_equals("Completed");
  req.set_name_contains("ETA");
  auto r = ListTuningJobs(all, req);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->hyper_parameter_tuning_job_summaries_size(), 2);
  EXPECT_EQ(r->hyper_parameter_tuning_job_summaries(0).hyper_parameter_tuning_job_name(), "theta");
  EXPECT_EQ(r->hyper_parameter_tuning_job_summaries(1).hyper_parameter_tuning_job_name(), "zeta");
}

}  // namespace
}  // namespace amt::core
