#include "orchestrator/core/listing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

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

// Only a page's worth is put in order, so the pages must still be those of a stable sort of
// everything: equal keys in creation order, in both orders, with nothing skipped or repeated.
TEST(ListTrainingJobs, PagesOfManyTiedJobsFollowAStableSortOfAll) {
  const std::vector<std::string> statuses = {"Completed", "Failed", "InProgress", "Stopped"};
  std::vector<v1::TrainingJobSummary> all;
  for (int i = 0; i < 50; ++i) {
    all.push_back(Job("job-" + std::to_string(i), statuses[(i * 7) % 4], i));
  }
  for (const std::string order : {"Ascending", "Descending"}) {
    std::vector<v1::TrainingJobSummary> expected = all;
    std::stable_sort(expected.begin(), expected.end(), [&](const auto& a, const auto& b) {
      return order == "Descending" ? b.training_job_status() < a.training_job_status()
                                   : a.training_job_status() < b.training_job_status();
    });
    std::vector<std::string> want;
    for (const auto& s : expected) want.push_back(s.training_job_name());
    v1::ListTrainingJobsRequest req;
    req.set_sort_by("Status");
    req.set_sort_order(order);
    req.set_max_results(7);
    std::vector<std::string> got;
    for (int page = 0; page < 20; ++page) {
      auto r = ListTrainingJobs(all, req);
      ASSERT_TRUE(r.ok());
      for (const auto& name : Names(*r)) got.push_back(name);
      if (!r->has_next_token()) break;
      req.set_next_token(r->next_token());
    }
    EXPECT_EQ(got, want) << order;
  }
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
