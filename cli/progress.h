// ProgressRenderer: shows a tuning job's progress from WatchHyperParameterTuningJob snapshots,
// for `amt watch` and `amt run`. A snapshot may carry every training job or only those that
// changed (ChangesOnly): the renderer keeps the latest of each.
//
// TTY mode redraws, in place, a header (tuning-job status and counters, best job so far) and a
// table with one row per training job: name, status, latest objective, tuned hyperparameters,
// and under it why the latest stopped job was stopped. Non-TTY mode (CI logs) prints one line per
// change instead, never prints a line twice, and says once per stopped job why it was stopped.
// Both end with Finish(): final status, counters, the best training job and its hyperparameters
// (or the FailureReason).
//
// Example, non-TTY:
//   Tuning job demo: InProgress
//   Training job demo-001-a1b2c3d4: InProgress [lr=0.01]
//   Training job demo-001-a1b2c3d4: Completed, val:loss=0.25
//   Best so far: demo-001-a1b2c3d4, val:loss=0.25
//   Training job demo-002-e5f6a7b8: InProgress [lr=0.5]
//   Training job demo-002-e5f6a7b8: Stopping [lr=0.5] (median rule, epoch 3: val:loss 0.9 > ...)
//   Training job demo-002-e5f6a7b8: Stopped, val:loss=0.9
//   Tuning job demo: Completed
#ifndef AMT_CLI_PROGRESS_H_
#define AMT_CLI_PROGRESS_H_

#include <map>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "amt/v1/tuning.pb.h"

namespace amt::cli {

// Columns of the terminal on stdout (TIOCGWINSZ, else $COLUMNS, else 80).
int TerminalWidth();

class ProgressRenderer {
 public:
  // At most this many training-job rows in the TTY table: running jobs first, then the most
  // recent others; a last line counts the rows left out.
  static constexpr int kMaxRows = 20;

  // `out` must outlive the renderer. `width` is the terminal's column count: TTY lines are cut
  // to it so that the cursor-up redraw stays exact (0 = never cut). Non-TTY lines are never cut.
  ProgressRenderer(std::ostream& out, bool tty, int width = 80);

  // Shows one snapshot. Not thread-safe; call from one thread.
  void Update(const v1::WatchHyperParameterTuningJobResponse& snapshot);

  // Prints the summary under whatever Update printed. Call once, after the last Update.
  void Finish(const v1::DescribeHyperParameterTuningJobResponse& final);

 private:
  // Adds the snapshot's training jobs and stop reasons to jobs_ and stop_reasons_: a snapshot may
  // carry only the training jobs that changed (WatchHyperParameterTuningJob's ChangesOnly).
  void Merge(const v1::WatchHyperParameterTuningJobResponse& snapshot);
  void Redraw(const v1::WatchHyperParameterTuningJobResponse& snapshot);
  void PrintChanges(const v1::WatchHyperParameterTuningJobResponse& snapshot);
  // Non-TTY: prints `line` unless it was printed before.
  void Emit(const std::string& line);
  std::vector<std::string> TableLines(
      const v1::WatchHyperParameterTuningJobResponse& snapshot) const;
  std::string Cut(const std::string& line) const;

  std::ostream& out_;
  const bool tty_;
  const int width_;
  // Every training job seen so far, as last seen, in creation order (then by name).
  using JobKey = std::pair<double, std::string>;
  std::map<JobKey, v1::HyperParameterTrainingJobSummary> jobs_;
  std::map<std::string, double> creation_times_;     // training job -> its JobKey's time
  std::map<std::string, std::string> stop_reasons_;  // training job -> why it was stopped
  int drawn_lines_ = 0;                              // TTY: lines to move up before a redraw
  std::string tuning_status_;                        // non-TTY: last status shown
  std::map<std::string, std::string> job_statuses_;  // non-TTY: training job -> last status
  std::set<std::string> printed_;                    // non-TTY: every line printed so far
  std::set<std::string> reasons_shown_;              // non-TTY: jobs whose stop reason was shown
};

}  // namespace amt::cli

#endif  // AMT_CLI_PROGRESS_H_
