#include "orchestrator/core/listing.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <functional>
#include <initializer_list>
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

// One way a List operation sorts: its SortBy value and the order it stands for.
template <typename T>
struct SortKey {
  std::string_view name;
  bool (*less)(const T&, const T&);
};

// The skeleton every List operation shares: keeps the items `keep` accepts, sorts them by SortBy
// (`keys[0]` when absent or unknown) in SortOrder (stable: creation order among equals), and adds
// the page that NextToken and MaxResults select to `out`. Returns the next page's token, or ""
// when this was the last page.
// `emit(out, item)` adds one item of the page to `out` (by default: a copy of it).
// Only the items up to the end of the page are put in order (a partial sort of indices, ties broken
// by position, which makes it stable): a tuning job's first page of 100 out of 10,000 jobs costs
// one pass and a heap of 100, not a sort of 10,000 copies.
template <typename T, typename Request, typename Keep, typename Out,
          typename Emit = void (*)(Out*, const T&)>
absl::StatusOr<std::string> ListPage(
    const std::vector<T>& all, const Request& r, Keep keep, std::initializer_list<SortKey<T>> keys,
    Out* out, Emit emit = [](Out* o, const T& item) { *o->Add() = item; }) {
  auto offset = Offset(r.has_next_token(), r.next_token());
  if (!offset.ok()) return offset.status();
  std::vector<uint32_t> kept;
  kept.reserve(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    if (keep(all[i])) kept.push_back(static_cast<uint32_t>(i));
  }
  auto key = keys.begin();
  for (auto k = keys.begin(); k != keys.end(); ++k) {
    if (r.has_sort_by() && r.sort_by() == k->name) key = k;
  }
  const bool desc = r.sort_order() == "Descending";
  const size_t max_results =
      static_cast<size_t>(r.has_max_results() ? r.max_results() : kDefaultMaxResults);
  const size_t end =
      *offset >= kept.size() ? kept.size() : std::min(kept.size(), *offset + max_results);
  std::partial_sort(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(end), kept.end(),
                    [&](uint32_t a, uint32_t b) {
                      if (desc ? key->less(all[b], all[a]) : key->less(all[a], all[b])) {
                        return true;
                      }
                      if (desc ? key->less(all[a], all[b]) : key->less(all[b], all[a])) {
                        return false;
                      }
                      return a < b;
                    });
  for (size_t i = *offset; i < end; ++i) emit(out, all[kept[i]]);
  return end < kept.size() ? std::string(kTokenPrefix) + std::to_string(end) : std::string();
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

v1::TrainingJobSummary ListSummaryOf(const v1::TrainingJobRecord& job) {
  const auto& d = job.describe();
  v1::TrainingJobSummary s;
  s.set_training_job_name(d.training_job_name());
  s.set_training_job_arn(d.training_job_arn());
  s.set_creation_time(d.creation_time());
  if (d.has_training_end_time()) s.set_training_end_time(d.training_end_time());
  s.set_last_modified_time(d.last_modified_time());
  s.set_training_job_status(d.training_job_status());
  s.set_secondary_status(d.secondary_status());
  return s;
}

v1::HyperParameterTuningJobSummary ListSummaryOf(const v1::TuningJobRecord& tuning) {
  const auto& d = tuning.describe();
  v1::HyperParameterTuningJobSummary s;
  s.set_hyper_parameter_tuning_job_name(d.hyper_parameter_tuning_job_name());
  s.set_hyper_parameter_tuning_job_arn(d.hyper_parameter_tuning_job_arn());
  s.set_hyper_parameter_tuning_job_status(d.hyper_parameter_tuning_job_status());
  s.set_strategy(d.hyper_parameter_tuning_job_config().strategy());
  s.set_creation_time(d.creation_time());
  if (d.has_hyper_parameter_tuning_end_time()) {
    s.set_hyper_parameter_tuning_end_time(d.hyper_parameter_tuning_end_time());
  }
  s.set_last_modified_time(d.last_modified_time());
  *s.mutable_training_job_status_counters() = d.training_job_status_counters();
  *s.mutable_objective_status_counters() = d.objective_status_counters();
  *s.mutable_resource_limits() = d.hyper_parameter_tuning_job_config().resource_limits();
  return s;
}

absl::StatusOr<v1::ListHyperParameterTuningJobsResponse> ListTuningJobs(
    const std::vector<v1::HyperParameterTuningJobSummary>& all,
    const v1::ListHyperParameterTuningJobsRequest& r) {
  using S = v1::HyperParameterTuningJobSummary;
  v1::ListHyperParameterTuningJobsResponse out;
  auto token = ListPage(
      all, r,
      [&](const S& s) {
        return Matches(r, s.hyper_parameter_tuning_job_name(),
                       s.hyper_parameter_tuning_job_status(), s.creation_time(),
                       s.last_modified_time());
      },
      {{"Name",
        [](const S& a, const S& b) {
          return a.hyper_parameter_tuning_job_name() < b.hyper_parameter_tuning_job_name();
        }},
       {"CreationTime",
        [](const S& a, const S& b) { return a.creation_time() < b.creation_time(); }},
       {"Status",
        [](const S& a, const S& b) {
          return a.hyper_parameter_tuning_job_status() < b.hyper_parameter_tuning_job_status();
        }}},
      out.mutable_hyper_parameter_tuning_job_summaries());
  if (!token.ok()) return token.status();
  if (!token->empty()) out.set_next_token(*token);
  return out;
}

absl::StatusOr<v1::ListTrainingJobsForHyperParameterTuningJobResponse> ListTuningTrainingJobs(
    const std::vector<const v1::TrainingJobRecord*>& jobs,
    const v1::ListTrainingJobsForHyperParameterTuningJobRequest& r,
    const std::function<v1::HyperParameterTrainingJobSummary(const v1::TrainingJobRecord&)>&
        summary_of) {
  using P = const v1::TrainingJobRecord*;
  using Out = google::protobuf::RepeatedPtrField<v1::HyperParameterTrainingJobSummary>;
  const bool by_objective = r.has_sort_by() && r.sort_by() == "FinalObjectiveMetricValue";
  v1::ListTrainingJobsForHyperParameterTuningJobResponse out;
  auto token = ListPage(
      jobs, r,
      [&](P j) {
        return (!r.has_status_equals() ||
                j->describe().training_job_status() == r.status_equals()) &&
               (!by_objective || j->has_objective());
      },
      {{"Name",
        [](const P& a, const P& b) {
          return a->describe().training_job_name() < b->describe().training_job_name();
        }},
       {"CreationTime",
        [](const P& a, const P& b) {
          return a->describe().creation_time() < b->describe().creation_time();
        }},
       {"Status",
        [](const P& a, const P& b) {
          return a->describe().training_job_status() < b->describe().training_job_status();
        }},
       {"FinalObjectiveMetricValue",
        // The summaries' objective is a float: equal floats keep their creation order.
        [](const P& a, const P& b) {
          return static_cast<float>(a->objective()) < static_cast<float>(b->objective());
        }}},
      out.mutable_training_job_summaries(),
      [&](Out* page, const P& j) { *page->Add() = summary_of(*j); });
  if (!token.ok()) return token.status();
  if (!token->empty()) out.set_next_token(*token);
  return out;
}

absl::StatusOr<v1::ListTrainingJobsResponse> ListTrainingJobs(
    const std::vector<v1::TrainingJobSummary>& all, const v1::ListTrainingJobsRequest& r) {
  using S = v1::TrainingJobSummary;
  v1::ListTrainingJobsResponse out;
  // botocore's documentation of ListTrainingJobs: with StatusEquals and MaxResults, "the
  // MaxResults number of training jobs are first retrieved ignoring the StatusEquals parameter
  // and then they are filtered by the StatusEquals parameter": a page can hold fewer jobs than
  // MaxResults (or none) and still have a NextToken.
  v1::ListTrainingJobsRequest unfiltered = r;
  unfiltered.clear_status_equals();
  auto token = ListPage(
      all, unfiltered,
      [&](const S& s) {
        return Matches(unfiltered, s.training_job_name(), s.training_job_status(),
                       s.creation_time(), s.last_modified_time());
      },
      {{"CreationTime",
        [](const S& a, const S& b) { return a.creation_time() < b.creation_time(); }},
       {"Name",
        [](const S& a, const S& b) { return a.training_job_name() < b.training_job_name(); }},
       {"Status",
        [](const S& a, const S& b) { return a.training_job_status() < b.training_job_status(); }}},
      out.mutable_training_job_summaries());
  if (!token.ok()) return token.status();
  if (!token->empty()) out.set_next_token(*token);
  if (r.has_status_equals()) {
    auto* page = out.mutable_training_job_summaries();
    page->erase(
        std::remove_if(page->begin(), page->end(),
                       [&](const S& s) { return s.training_job_status() != r.status_equals(); }),
        page->end());
  }
  return out;
}

}  // namespace amt::core
