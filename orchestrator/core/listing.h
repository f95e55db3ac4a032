// Sorting, filtering and pagination of the List* operations, as SageMaker does them: MaxResults
// default 10, opaque NextToken, the documented SortBy/SortOrder defaults. Pure functions over
// snapshots of records.
#ifndef AMT_ORCHESTRATOR_CORE_LISTING_H_
#define AMT_ORCHESTRATOR_CORE_LISTING_H_

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "amt/v1/state.pb.h"

namespace amt::core {

// The List operations' summaries of a record.
v1::TrainingJobSummary ListSummaryOf(const v1::TrainingJobRecord& job);
v1::HyperParameterTuningJobSummary ListSummaryOf(const v1::TuningJobRecord& tuning);

// Requests are validated (enums, ranges) before these are called. A NextToken not made by us is
// InvalidArgument "Invalid pagination token".
absl::StatusOr<v1::ListHyperParameterTuningJobsResponse> ListTuningJobs(
    const std::vector<v1::HyperParameterTuningJobSummary>& all,
    const v1::ListHyperParameterTuningJobsRequest& request);

// Over a tuning job's training job records, making summaries (`summary_of`) for the page only:
// a list call costs a sort of pointers, not a summary of every job. Jobs without an objective are
// left out when sorting by FinalObjectiveMetricValue, as SageMaker documents.
absl::StatusOr<v1::ListTrainingJobsForHyperParameterTuningJobResponse> ListTuningTrainingJobs(
    const std::vector<const v1::TrainingJobRecord*>& jobs,
    const v1::ListTrainingJobsForHyperParameterTuningJobRequest& request,
    const std::function<v1::HyperParameterTrainingJobSummary(const v1::TrainingJobRecord&)>&
        summary_of);

// With StatusEquals and MaxResults, takes the page first and then filters it, as botocore documents
// SageMaker (a page may hold fewer than MaxResults jobs and still have a NextToken; listing.cc,
// docs/sagemaker-mapping.md).
absl::StatusOr<v1::ListTrainingJobsResponse> ListTrainingJobs(
    const std::vector<v1::TrainingJobSummary>& all, const v1::ListTrainingJobsRequest& request);

}  // namespace amt::core

#endif  // AMT_ORCHESTRATOR_CORE_LISTING_H_
