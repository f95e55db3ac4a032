#include "orchestrator/core/listing.h"

#include <algorithm>
#include <charconv>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "common/errors.h"

namespace amt::core {
namespace {

constexpr int kDefaultMaxResults = 10;
constexpr std::string_view kTokenPrefix = "amt-page-v1:";

absl::StatusOr<size_t> Offset(bool has_token, const std::string& token) {
  if (!has_token || token.empty()) return 0;
  if (token.rfind(kTokenPrefix, 0) != 0) return ValidationError("Invalid pagination token");
  size_t offset = 0;
  const char* begin = token.data() + kTokenPrefix.size();
  const char* end = token.data() + token.size();
  auto [ptr, ec] = std::from_chars(begin, end, offset);
  if (ec != std::errc() || ptr != end) return ValidationError("Invalid pagination token");
  return offset;
}

// Copies the page [offset, offset+max) of `sorted` into `out`; sets the token when more remain.
template <typename T, typename Out>
void Page(const std::vector<T>& sorted, size_t offset, int max_results, Out* out,
          std::string* next_token, bool* has_next) {
  const size_t end = std::min(sorted.size(), offset + static_cast<size_t>(max_results));
  for (size_t i = offset; i < end; ++i) *out->Add() = sorted[i];
  *has_next = end < sorted.size();
  if (*has_next) *next_token = std::string(kTokenPrefix) + std::to_string(end);
}

template <typename T, typename Key>
void SortBy(std::vector<T>& v, bool descending, Key key) {
  std::stable_sort(v.begin(), v.end(), [&](const T& a, const T& b) {
    return descending ? key(b) < key(a) : key(a) < key(b);
  });
}

bool InWindow(double t, bool has_after, double after, bool has_before, double before) {
  return (!has_after || t > after) && (!has_before || t < before);
}

// The filters ListHyperParameterTuningJobs and ListTrainingJobs share: NameContains
// (case-insensitive), StatusEquals, and the CreationTime / LastModifiedTime windows.
template <typename Request>
bool Matches(const Request& r, const std::string& name, const std::string& status,
             double creation_time, double last_modified_time) {
  if (r.has_name_contains() &&
      !absl::StrContains(absl::AsciiStrToLower(name), absl::AsciiStrToLower(r.name_contains()))) {
    return false;
  }
  if (r.has_status_equals() && status != r.status_equals()) return false;
  return InWindow(creation_time, r.has_creation_time_after(), r.creation_time_after(),
                  r.has_creation_time_before(), r.creation_time_before()) &&
         InWindow(last_modified_time, r.has_last_modified_time_after(),
                  r.last_modified_time_after(), r.has_last_modified_time_before(),
                  r.last_modified_time_before());
}

}  // namespace

absl::StatusOr<v1::ListHyperParameterTuningJobsResponse> ListTuningJobs(
    const std::vector<v1::HyperParameterTuningJobSummary>& all,
    const v1::ListHyperParameterTuningJobsRequest& r) {
  auto offset = Offset(r.has_next_token(), r.next_token());
  if (!offset.ok()) return offset.status();
  std::vector<v1::HyperParameterTuningJobSummary> v;
  for (const auto& s : all) {
    if (Matches(r, s.hyper_parameter_tuning_job_name(), s.hyper_parameter_tuning_job_status(),
                s.creation_time(), s.last_modified_time())) {
      v.push_back(s);
    }
  }
  const bool desc = r.sort_order() == "Descending";
  const std::string by = r.has_sort_by() ? r.sort_by() : "Name";
  if (by == "CreationTime") {
    SortBy(v, desc, [](const auto& s) { return s.creation_time(); });
  } else if (by == "Status") {
    SortBy(v, desc, [](const auto& s) { return s.hyper_parameter_tuning_job_status(); });
  } else {
    SortBy(v, desc, [](const auto& s) { return s.hyper_parameter_tuning_job_name(); });
  }
  v1::ListHyperParameterTuningJobsResponse out;
  std::string token;
  bool more = false;
  Page(v, *offset, r.has_max_results() ? r.max_results() : kDefaultMaxResults,
       out.mutable_hyper_parameter_tuning_job_summaries(), &token, &more);
  if (more) out.set_next_token(token);
  return out;
}

absl::StatusOr<v1::ListTrainingJobsForHyperParameterTuningJobResponse> ListTuningTrainingJobs(
    const std::vector<v1::HyperParameterTrainingJobSummary>& all,
    const v1::ListTrainingJobsForHyperParameterTuningJobRequest& r) {
  auto offset = Offset(r.has_next_token(), r.next_token());
  if (!offset.ok()) return offset.status();
  const std::string by = r.has_sort_by() ? r.sort_by() : "Name";
  std::vector<v1::HyperParameterTrainingJobSummary> v;
  for (const auto& s : all) {
    if (r.has_status_equals() && s.training_job_status() != r.status_equals()) continue;
    if (by == "FinalObjectiveMetricValue" &&
        !s.has_final_hyper_parameter_tuning_job_objective_metric())
      continue;
    v.push_back(s);
  }
  const bool desc = r.sort_order() == "Descending";
  if (by == "CreationTime") {
    SortBy(v, desc, [](const auto& s) { return s.creation_time(); });
  } else if (by == "Status") {
    SortBy(v, desc, [](const auto& s) { return s.training_job_status(); });
  } else if (by == "FinalObjectiveMetricValue") {
    SortBy(v, desc, [](const auto& s) {
      return s.final_hyper_parameter_tuning_job_objective_metric().value();
    });
  } else {
    SortBy(v, desc, [](const auto& s) { return s.training_job_name(); });
  }
  v1::ListTrainingJobsForHyperParameterTuningJobResponse out;
  std::string token;
  bool more = false;
  Page(v, *offset, r.has_max_results() ? r.max_results() : kDefaultMaxResults,
       out.mutable_training_job_summaries(), &token, &more);
  if (more) out.set_next_token(token);
  return out;
}

absl::StatusOr<v1::ListTrainingJobsResponse> ListTrainingJobs(
    const std::vector<v1::TrainingJobSummary>& all, const v1::ListTrainingJobsRequest& r) {
  auto offset = Offset(r.has_next_token(), r.next_token());
  if (!offset.ok()) return offset.status();
  std::vector<v1::TrainingJobSummary> v;
  for (const auto& s : all) {
    if (Matches(r, s.training_job_name(), s.training_job_status(), s.creation_time(),
                s.last_modified_time())) {
      v.push_back(s);
    }
  }
  const bool desc = r.sort_order() == "Descending";
  const std::string by = r.has_sort_by() ? r.sort_by() : "CreationTime";
  if (by == "Name") {
    SortBy(v, desc, [](const auto& s) { return s.training_job_name(); });
  } else if (by == "Status") {
    SortBy(v, desc, [](const auto& s) { return s.training_job_status(); });
  } else {
    SortBy(v, desc, [](const auto& s) { return s.creation_time(); });
  }
  v1::ListTrainingJobsResponse out;
  std::string token;
  bool more = false;
  Page(v, *offset, r.has_max_results() ? r.max_results() : kDefaultMaxResults,
       out.mutable_training_job_summaries(), &token, &more);
  if (more) out.set_next_token(token);
  return out;
}

}  // namespace amt::core
