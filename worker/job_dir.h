// JobDir: one training job's emulated /opt/ml, `<work-dir>/<training_job_name>/`, and the
// environment a trainer gets (TRAINING_JOB_*, SM_*, AMT_JOB_DIR). Pure file I/O, no processes.
//
// Layout (SageMaker's /opt/ml, spec section 9):
//   input/config/{hyperparameters,resourceconfig,inputdataconfig}.json
//   input/data/<channel>      symlink to the channel's local path (an empty dir if it has none)
//   model/                    tarred into model.tar.gz when the job ends
//   output/data/              tarred into output.tar.gz when non-empty
//   output/intermediate/      SM_OUTPUT_INTERMEDIATE_DIR
//   output/failure            written by a failing trainer
//   checkpoints/              only with a checkpoint config: CheckpointConfig.LocalPath cannot be
//                             honoured literally (/opt/ml is not writable), so trainers must use
//                             SM_CHECKPOINT_DIR, as they must use the other SM_* paths.
#ifndef AMT_WORKER_JOB_DIR_H_
#define AMT_WORKER_JOB_DIR_H_

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "amt/v1/worker.pb.h"

namespace amt::worker {

// FailureReason is at most this many characters (UTF-8 code points) of output/failure.
inline constexpr size_t kMaxFailureReasonChars = 1024;

struct JobDirOptions {
  std::string work_dir;  // relative paths are made absolute against the current directory
  int num_cpus = 1;      // SM_NUM_CPUS
};

struct JobPaths {
  std::filesystem::path root;  // <work-dir>/<training_job_name>, absolute
  std::filesystem::path input;
  std::filesystem::path input_config;
  std::filesystem::path input_data;
  std::filesystem::path model;
  std::filesystem::path output;
  std::filesystem::path output_data;
  std::filesystem::path output_intermediate;
  std::filesystem::path failure;
  std::filesystem::path checkpoints;  // empty when the job has no checkpoint config
};

class JobDir {
 public:
  // Creates the layout for `job`, first removing what a previous attempt left in the same
  // directory (each attempt gets a fresh /opt/ml, like a fresh instance; checkpoints survive
  // through the sync dir), and copies the checkpoint sync dir's files into checkpoints/.
  // Errors: InvalidArgument for a training job or channel name that is not a SageMaker name
  // (it becomes a path) or a channel's input_config_json that is not a JSON object; NotFound for
  // a channel local_path that does not exist; Internal for file-system failures.
  static absl::StatusOr<JobDir> Create(const JobDirOptions& options, const amt::v1::StartJob& job);

  const JobPaths& paths() const { return paths_; }

  // TRAINING_JOB_NAME, TRAINING_JOB_ARN, the SM_* variables and AMT_JOB_DIR, over the request's
  // Environment (ours win on a clash). The worker's own PATH/HOME/LANG are not included.
  const std::map<std::string, std::string>& environment() const { return environment_; }

  // Copies files that are new or changed (size or mtime) in checkpoints/ to the sync dir, and
  // deletes there the files copied in at start that the trainer has deleted (SageMaker's sync
  // semantics, run once when the job exits; periodic sync during training is a later issue).
  // OK without a sync dir. Internal on file-system errors.
  absl::Status SyncCheckpointsOut() const;

  // The first kMaxFailureReasonChars characters of output/failure, trailing whitespace removed;
  // "" when the trainer wrote none.
  std::string ReadFailureReason() const;

  // True when output/data has at least one entry (output.tar.gz is written only then).
  bool HasOutputData() const;

 private:
  struct FileStamp {
    std::uintmax_t size = 0;
    std::filesystem::file_time_type mtime;
  };

  JobPaths paths_;
  std::map<std::string, std::string> environment_;
  std::filesystem::path checkpoint_sync_dir_;
  // Relative path -> stamp of the local copy, for the files copied in at start.
  std::map<std::string, FileStamp> copied_in_;
};

// The first `max_chars` UTF-8 characters of `text` (a character starts at every byte that is not
// a UTF-8 continuation byte, so a multi-byte character is never cut), with trailing whitespace
// removed.
std::string TruncateFailureReason(const std::string& text, size_t max_chars);

}  // namespace amt::worker

#endif  // AMT_WORKER_JOB_DIR_H_
