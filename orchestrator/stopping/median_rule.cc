#include "orchestrator/stopping/median_rule.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace amt::stopping {
namespace {

std::string NonFinite(const JobCurve& job, size_t epoch) {
  return "Training job '" + job.job + "' has a non-finite objective value at epoch " +
         std::to_string(epoch) + ".";
}

bool IsReference(JobState state, MedianRuleOptions::Reference reference) {
  switch (reference) {
    case MedianRuleOptions::Reference::kCompletedOrStoppedJobs:
      return state == JobState::kCompleted || state == JobState::kStopped;
    case MedianRuleOptions::Reference::kCompletedJobs:
      return state == JobState::kCompleted;
    case MedianRuleOptions::Reference::kAllPreviousJobs:
      return true;
  }
  return false;
}

// "3 completed or stopped jobs", "1 completed job", "2 previous jobs".
std::string Jobs(int64_t n, MedianRuleOptions::Reference reference) {
  std::string kind = "previous";
  if (reference == MedianRuleOptions::Reference::kCompletedOrStoppedJobs) {
    kind = "completed or stopped";
  } else if (reference == MedianRuleOptions::Reference::kCompletedJobs) {
    kind = "completed";
  }
  return std::to_string(n) + " " + kind + (n == 1 ? " job" : " jobs");
}

double Median(std::vector<double> xs) {
  const size_t mid = xs.size() / 2;
  std::nth_element(xs.begin(), xs.begin() + mid, xs.end());
  if (xs.size() % 2 == 1) return xs[mid];
  // The lower middle element is the largest of the lower half.
  const double lower = *std::max_element(xs.begin(), xs.begin() + mid);
  return lower + (xs[mid] - lower) / 2;
}

}  // namespace

absl::StatusOr<std::vector<MedianPoint>> MedianReferenceCurve(const std::vector<JobCurve>& jobs,
                                                              const MedianRuleOptions& options) {
  if (absl::Status status = ValidateMedianRuleOptions(options); !status.ok()) return status;
  std::vector<const JobCurve*> references;
  size_t longest = 0;
  for (const JobCurve& job : jobs) {
    if (!IsReference(job.state, options.reference)) continue;
    references.push_back(&job);
    longest = std::max(longest, job.values.size());
  }
  // Running sums, one per reference, advanced an epoch at a time: O(total emissions).
  std::vector<double> sums(references.size(), 0.0);
  std::vector<MedianPoint> line;
  std::vector<double> averages;
  for (size_t epoch = 1; epoch <= longest; ++epoch) {
    averages.clear();
    for (size_t i = 0; i < references.size(); ++i) {
      const JobCurve& job = *references[i];
      if (job.values.size() < epoch) continue;
      sums[i] += job.values[epoch - 1];
      const double average = sums[i] / static_cast<double>(epoch);
      if (std::isfinite(average)) averages.push_back(average);
    }
    if (static_cast<int64_t>(epoch) <= options.grace_epochs) continue;
    if (static_cast<int64_t>(averages.size()) < options.min_reference_jobs) break;
    MedianPoint point;
    point.epoch = static_cast<int64_t>(epoch);
    point.reference_jobs = static_cast<int64_t>(averages.size());
    point.median = Median(averages);
    line.push_back(point);
  }
  return line;
}

absl::Status ValidateMedianRuleOptions(const MedianRuleOptions& options) {
  if (options.min_reference_jobs < 1) {
    return absl::InvalidArgumentError(
        "MedianRuleOptions.min_reference_jobs must be at least 1; got " +
        std::to_string(options.min_reference_jobs) + ".");
  }
  if (options.grace_epochs < 0) {
    return absl::InvalidArgumentError("MedianRuleOptions.grace_epochs must be at least 0; got " +
                                      std::to_string(options.grace_epochs) + ".");
  }
  return absl::OkStatus();
}

absl::StatusOr<Decision> EvaluateMedianRule(const JobCurve& current,
                                            const std::vector<JobCurve>& previous,
                                            const Objective& objective,
                                            const MedianRuleOptions& options) {
  if (absl::Status status = ValidateMedianRuleOptions(options); !status.ok()) return status;
  const size_t epoch = current.values.size();
  if (epoch == 0) {
    return absl::InvalidArgumentError("Training job '" + current.job +
                                      "' has no objective emission to evaluate.");
  }
  for (size_t e = 0; e < epoch; ++e) {
    if (!std::isfinite(current.values[e])) {
      return absl::InvalidArgumentError(NonFinite(current, e + 1));
    }
  }

  Decision decision;
  decision.rule = "median";
  decision.epoch = static_cast<int64_t>(epoch);
  double value = current.values.back();
  if (options.compare_best_so_far) {
    value = objective.minimize ? *std::min_element(current.values.begin(), current.values.end())
                               : *std::max_element(current.values.begin(), current.values.end());
  }
  decision.value = value;
  const std::string what = "epoch " + std::to_string(epoch) + ": " +
                           (options.compare_best_so_far ? "best " : "") + objective.metric_name +
                           (options.compare_best_so_far ? " so far " : " ");
  if (static_cast<int64_t>(epoch) <= options.grace_epochs) {
    decision.reason = Reason::kGracePeriod;
    decision.explanation = what + FormatValue(value) + "; the rule compares from epoch " +
                           std::to_string(options.grace_epochs + 1) + " (grace_epochs " +
                           std::to_string(options.grace_epochs) + "): continue";
    return decision;
  }

  std::vector<double> averages;
  for (const JobCurve& job : previous) {
    if (job.job == current.job || job.values.size() < epoch) continue;
    if (!IsReference(job.state, options.reference)) continue;
    double sum = 0;
    for (size_t e = 0; e < epoch; ++e) {
      if (!std::isfinite(job.values[e])) return absl::InvalidArgumentError(NonFinite(job, e + 1));
      sum += job.values[e];
    }
    averages.push_back(sum / static_cast<double>(epoch));
  }
  decision.reference_jobs = static_cast<int64_t>(averages.size());

  if (decision.reference_jobs < options.min_reference_jobs) {
    decision.reason = Reason::kTooFewReferences;
    decision.explanation = what + FormatValue(value) + "; " +
                           Jobs(decision.reference_jobs, options.reference) + " reached epoch " +
                           std::to_string(epoch) + ", the rule needs " +
                           std::to_string(options.min_reference_jobs) + ": continue";
    return decision;
  }

  const double median = Median(std::move(averages));
  decision.threshold = median;
  decision.stop = objective.minimize ? value > median : value < median;
  decision.reason = decision.stop ? Reason::kWorse : Reason::kNotWorse;
  const char* op =
      objective.minimize ? (decision.stop ? " > " : " <= ") : (decision.stop ? " < " : " >= ");
  auto [value_text, median_text] = FormatCompared(value, median);
  decision.explanation = what + value_text + op + median_text +
                         ", the median of the running averages to epoch " + std::to_string(epoch) +
                         " of " + Jobs(decision.reference_jobs, options.reference) + ": " +
                         (decision.stop ? "stop" : "continue");
  return decision;
}

}  // namespace amt::stopping
