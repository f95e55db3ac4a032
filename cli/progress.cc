#include "cli/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace amt::cli {

int TerminalWidth() {
  winsize size{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  if (const char* columns = std::getenv("COLUMNS"); columns != nullptr && std::atoi(columns) > 0) {
    return std::atoi(columns);
  }
  return 80;
}
namespace {

using v1::DescribeHyperParameterTuningJobResponse;
using v1::HyperParameterTrainingJobSummary;
using v1::WatchHyperParameterTuningJobResponse;

constexpr char kCursorUp[] = "\x1b[";     // followed by the line count and 'A'
constexpr char kClearToEnd[] = "\x1b[J";  // erase from the cursor to the end of the screen

bool IsTerminal(const std::string& status) {
  return status == "Completed" || status == "Failed" || status == "Stopped";
}

bool IsRunning(const HyperParameterTrainingJobSummary& job) {
  return job.training_job_status() == "InProgress" || job.training_job_status() == "Stopping";
}

// Six significant digits: enough to tell objectives apart, short enough for a column.
std::string FormatValue(float value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g", static_cast<double>(value));
  return buffer;
}

bool HasObjective(const HyperParameterTrainingJobSummary& job) {
  return job.has_final_hyper_parameter_tuning_job_objective_metric() &&
         job.final_hyper_parameter_tuning_job_objective_metric().has_value();
}

// "val:loss=0.25", or "" when the job has no objective value yet.
std::string Objective(const HyperParameterTrainingJobSummary& job) {
  if (!HasObjective(job)) return "";
  const auto& metric = job.final_hyper_parameter_tuning_job_objective_metric();
  return metric.metric_name() + "=" + FormatValue(metric.value());
}

// Tuned hyperparameters as "k=v" sorted by name (protobuf maps have no order).
std::vector<std::string> HyperParameters(const HyperParameterTrainingJobSummary& job) {
  std::vector<std::pair<std::string, std::string>> sorted(job.tuned_hyper_parameters().begin(),
                                                          job.tuned_hyper_parameters().end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::string> out;
  out.reserve(sorted.size());
  for (const auto& [name, value] : sorted) out.push_back(name + "=" + value);
  return out;
}

std::string Join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : separator) + parts[i];
  return out;
}

std::string TrainingCounters(const DescribeHyperParameterTuningJobResponse& job) {
  const auto& c = job.training_job_status_counters();
  return "Completed " + std::to_string(c.completed()) + ", InProgress " +
         std::to_string(c.in_progress()) + ", RetryableError " +
         std::to_string(c.retryable_error()) + ", NonRetryableError " +
         std::to_string(c.non_retryable_error()) + ", Stopped " + std::to_string(c.stopped());
}

std::string ObjectiveCounters(const DescribeHyperParameterTuningJobResponse& job) {
  const auto& c = job.objective_status_counters();
  return "Succeeded " + std::to_string(c.succeeded()) + ", Pending " + std::to_string(c.pending()) +
         ", Failed " + std::to_string(c.failed());
}

// "demo-001-a1b2c3d4, val:loss=0.25" (the objective part only when there is one).
// "<job> (<definition>)" when the job has a TrainingJobDefinitionName (multi-algorithm tuning).
std::string JobName(const HyperParameterTrainingJobSummary& job) {
  return job.training_job_name() + (job.has_training_job_definition_name()
                                        ? " (" + job.training_job_definition_name() + ")"
                                        : "");
}

std::string JobWithObjective(const HyperParameterTrainingJobSummary& job) {
  const std::string objective = Objective(job);
  return JobName(job) + (objective.empty() ? "" : ", " + objective);
}

// The snapshot's training jobs in creation order (then by name).
std::vector<const HyperParameterTrainingJobSummary*> SortedJobs(
    const WatchHyperParameterTuningJobResponse& snapshot) {
  std::vector<const HyperParameterTrainingJobSummary*> jobs;
  jobs.reserve(snapshot.training_jobs_size());
  for (const auto& job : snapshot.training_jobs()) jobs.push_back(&job);
  std::stable_sort(jobs.begin(), jobs.end(), [](const auto* a, const auto* b) {
    if (a->creation_time() != b->creation_time()) return a->creation_time() < b->creation_time();
    return a->training_job_name() < b->training_job_name();
  });
  return jobs;
}

// "Warm start (IdenticalDataAndAlgorithm) from a, b: 16 training jobs known", or "".
std::string WarmStartLine(const WatchHyperParameterTuningJobResponse& snapshot) {
  const DescribeHyperParameterTuningJobResponse& tuning = snapshot.tuning_job();
  if (!tuning.has_warm_start_config()) return "";
  std::vector<std::string> parents;
  for (const auto& p : tuning.warm_start_config().parent_hyper_parameter_tuning_jobs()) {
    parents.push_back(p.hyper_parameter_tuning_job_name());
  }
  const int known = snapshot.warm_start_observations();
  return "Warm start (" + tuning.warm_start_config().warm_start_type() + ") from " +
         Join(parents, ", ") + ": " + std::to_string(known) + " training job" +
         (known == 1 ? "" : "s") + " known before the first";
}

// Cuts `text` to at most `max` bytes without splitting a UTF-8 sequence.
std::string CutBytes(const std::string& text, size_t max) {
  if (text.size() <= max) return text;
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

std::string Pad(const std::string& text, size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

std::string TrimRight(std::string text) {
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

}  // namespace

ProgressRenderer::ProgressRenderer(std::ostream& out, bool tty, int width)
    : out_(out), tty_(tty), width_(width) {}

void ProgressRenderer::Update(const WatchHyperParameterTuningJobResponse& snapshot) {
  Merge(snapshot);
  if (tty_) {
    Redraw(snapshot);
  } else {
    PrintChanges(snapshot);
  }
  out_.flush();
}

void ProgressRenderer::Merge(const WatchHyperParameterTuningJobResponse& snapshot) {
  for (const HyperParameterTrainingJobSummary& job : snapshot.training_jobs()) {
    const std::string& name = job.training_job_name();
    auto [at, added] = creation_times_.try_emplace(name, job.creation_time());
    if (!added && at->second != job.creation_time()) {  // never expected; keep the order right
      jobs_.erase({at->second, name});
      at->second = job.creation_time();
    }
    jobs_[{job.creation_time(), name}] = job;
  }
  for (const auto& [name, reason] : snapshot.stop_reasons()) stop_reasons_[name] = reason;
}

std::string ProgressRenderer::Cut(const std::string& line) const {
  if (width_ <= 0) return line;
  return CutBytes(line, static_cast<size_t>(width_));
}

std::vector<std::string> ProgressRenderer::TableLines(
    const WatchHyperParameterTuningJobResponse& snapshot) const {
  const DescribeHyperParameterTuningJobResponse& tuning = snapshot.tuning_job();
  std::vector<std::string> lines;

  std::string header = "Tuning job " + tuning.hyper_parameter_tuning_job_name() + ": " +
                       tuning.hyper_parameter_tuning_job_status() + " (" +
                       std::to_string(jobs_.size());
  const auto& limits = tuning.hyper_parameter_tuning_job_config().resource_limits();
  if (limits.has_max_number_of_training_jobs()) {
    header += " of " + std::to_string(limits.max_number_of_training_jobs());
  }
  lines.push_back(header + " training jobs)");
  if (std::string warm = WarmStartLine(snapshot); !warm.empty()) lines.push_back(warm);
  lines.push_back(TrainingCounters(tuning));
  if (tuning.has_best_training_job()) {
    lines.push_back("Best: " + JobWithObjective(tuning.best_training_job()));
  }

  // Which rows: all when they fit; else running jobs first, then the most recent others.
  std::vector<const HyperParameterTrainingJobSummary*> jobs;
  const size_t total = jobs_.size();
  if (total <= static_cast<size_t>(kMaxRows)) {
    for (const auto& [key, job] : jobs_) jobs.push_back(&job);
  } else {
    std::set<JobKey> keep;
    for (const auto& [key, job] : jobs_) {
      if (keep.size() == static_cast<size_t>(kMaxRows)) break;
      if (IsRunning(job)) keep.insert(key);
    }
    for (auto it = jobs_.rbegin();
         it != jobs_.rend() && keep.size() < static_cast<size_t>(kMaxRows); ++it) {
      keep.insert(it->first);
    }
    for (const JobKey& key : keep) jobs.push_back(&jobs_.at(key));
  }

  struct Row {
    std::string name, status, objective, hyper_parameters;
  };
  std::vector<Row> rows;
  Row head{"TRAINING JOB", "STATUS", "OBJECTIVE", "HYPERPARAMETERS"};
  size_t name_width = head.name.size(), status_width = head.status.size();
  size_t objective_width = head.objective.size();
  for (const HyperParameterTrainingJobSummary* job : jobs) {
    Row row{JobName(*job), job->training_job_status(),
            HasObjective(*job)
                ? FormatValue(job->final_hyper_parameter_tuning_job_objective_metric().value())
                : "-",
            Join(HyperParameters(*job), " ")};
    name_width = std::max(name_width, row.name.size());
    status_width = std::max(status_width, row.status.size());
    objective_width = std::max(objective_width, row.objective.size());
    rows.push_back(std::move(row));
  }
  rows.insert(rows.begin(), head);
  for (const Row& row : rows) {
    const std::string prefix = Pad(row.name, name_width) + "  " + Pad(row.status, status_width) +
                               "  " + Pad(row.objective, objective_width) + "  ";
    std::string hyper_parameters = row.hyper_parameters;
    // Hyperparameters give way first: cut with "..." so that the row stays one screen line.
    if (width_ > 0 && prefix.size() + hyper_parameters.size() > static_cast<size_t>(width_) &&
        prefix.size() + 3 < static_cast<size_t>(width_)) {
      hyper_parameters = CutBytes(hyper_parameters, width_ - prefix.size() - 3) + "...";
    }
    lines.push_back(TrimRight(prefix + hyper_parameters));
  }
  if (total > jobs.size()) {
    lines.push_back("(" + std::to_string(total - jobs.size()) + " more training jobs not shown)");
  }
  // Why the most recently stopped job (by creation) was stopped.
  for (auto job = jobs_.rbegin(); job != jobs_.rend(); ++job) {
    auto reason = stop_reasons_.find(job->first.second);
    if (reason == stop_reasons_.end()) continue;
    lines.push_back("Last stop: " + job->first.second + ": " + reason->second);
    break;
  }
  return lines;
}

void ProgressRenderer::Redraw(const WatchHyperParameterTuningJobResponse& snapshot) {
  std::string text;
  if (drawn_lines_ > 0) {
    text += kCursorUp + std::to_string(drawn_lines_) + "A" + kClearToEnd;
  }
  const std::vector<std::string> lines = TableLines(snapshot);
  for (const std::string& line : lines) text += Cut(line) + "\n";
  out_ << text;  // one write, so the terminal never shows half a table
  drawn_lines_ = static_cast<int>(lines.size());
}

void ProgressRenderer::Emit(const std::string& line) {
  if (!printed_.insert(line).second) return;
  out_ << line << '\n';
}

void ProgressRenderer::PrintChanges(const WatchHyperParameterTuningJobResponse& snapshot) {
  const DescribeHyperParameterTuningJobResponse& tuning = snapshot.tuning_job();
  const std::string& status = tuning.hyper_parameter_tuning_job_status();
  const std::string status_line =
      "Tuning job " + tuning.hyper_parameter_tuning_job_name() + ": " + status;
  const bool status_changed = status != tuning_status_;
  tuning_status_ = status;
  // A running status reads best before the jobs it covers, a final one after them.
  if (status_changed && !IsTerminal(status)) Emit(status_line);
  if (std::string warm = WarmStartLine(snapshot); !warm.empty()) Emit(warm);

  for (const HyperParameterTrainingJobSummary* changed : SortedJobs(snapshot)) {
    const HyperParameterTrainingJobSummary& job = *changed;
    std::string& last = job_statuses_[job.training_job_name()];
    if (last == job.training_job_status()) continue;
    last = job.training_job_status();
    std::string line = "Training job " + JobName(job) + ": " + last;
    if (last == "Failed") {
      if (job.has_failure_reason()) line += ": " + job.failure_reason();
    } else if (IsTerminal(last)) {
      const std::string objective = Objective(job);
      if (!objective.empty()) line += ", " + objective;
    } else {
      const std::vector<std::string> hyper_parameters = HyperParameters(job);
      if (!hyper_parameters.empty()) line += " [" + Join(hyper_parameters, " ") + "]";
    }
    // Why it stops, once: on the Stopping line, or on Stopped when Stopping was never seen.
    auto reason = stop_reasons_.find(job.training_job_name());
    if (reason != stop_reasons_.end() && reasons_shown_.insert(job.training_job_name()).second) {
      line += " (" + reason->second + ")";
    }
    Emit(line);
  }

  if (tuning.has_best_training_job()) {
    Emit("Best so far: " + JobWithObjective(tuning.best_training_job()));
  }
  if (status_changed && IsTerminal(status)) Emit(status_line);
}

void ProgressRenderer::Finish(const DescribeHyperParameterTuningJobResponse& final) {
  std::string text = "Tuning job " + final.hyper_parameter_tuning_job_name() +
                     " ended: " + final.hyper_parameter_tuning_job_status() + "\n";
  text += "Training jobs: " + TrainingCounters(final) + "\n";
  text += "Objectives: " + ObjectiveCounters(final) + "\n";
  if (final.has_consumed_resources()) {
    text += "Runtime: " + std::to_string(final.consumed_resources().runtime_in_seconds()) + " s\n";
  }
  if (final.has_best_training_job()) {
    text += "Best training job: " + JobWithObjective(final.best_training_job()) + "\n";
    for (const std::string& hp : HyperParameters(final.best_training_job())) {
      text += "  " + hp + "\n";
    }
  } else {
    text += "Best training job: none\n";
  }
  if (final.has_overall_best_training_job() &&
      final.overall_best_training_job().training_job_name() !=
          final.best_training_job().training_job_name()) {
    text += "Overall best training job (warm start): " +
            JobWithObjective(final.overall_best_training_job()) + "\n";
  }
  if (final.has_failure_reason()) text += "Failure reason: " + final.failure_reason() + "\n";
  out_ << text;
  out_.flush();
  drawn_lines_ = 0;  // the summary and the table above it stay on screen
}

}  // namespace amt::cli
