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

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "amt/v1/worker.pb.h"
#include "common/mutex.h"
#include "worker/process_launcher.h"

namespace amt::worker {

// Where a job's folder is inside its container (SageMaker's /opt/ml).
inline constexpr char kContainerMlRoot[] = "/opt/ml";

// FailureReason is at most this many characters (UTF-8 code points) of output/failure.
inline constexpr size_t kMaxFailureReasonChars = 1024;

class JobDirPool;
class FailedJobDirs;

struct JobDirOptions {
  std::string work_dir;  // relative paths are made absolute against the current directory
  int num_cpus = 1;      // SM_NUM_CPUS
  // OMP_NUM_THREADS, MKL_NUM_THREADS and OPENBLAS_NUM_THREADS of each job, where its request's
  // Environment sets none of them; 0: not set (amt-worker --threads-per-job).
  int threads_per_job = 0;
  // Where Create takes an emptied folder of an earlier job from, instead of making the layout's
  // directories anew; none when null. Shared by the worker's job threads.
  std::shared_ptr<JobDirPool> spares;
  // The failed jobs' folders kept for inspection, at most a number of them (the oldest go);
  // every folder is kept when null. Create tells it when a folder's path is used again.
  std::shared_ptr<FailedJobDirs> failed;
  // How Create writes the job folder's files, as ::write(2) does (the count written, or -1 with
  // errno); null: ::write. A fault seam: tests fill the disk with it.
  std::function<ssize_t(int fd, const void* data, size_t size)> write;
};

// Which host of its training job a folder is for: InstanceCount N runs hosts algo-1..algo-N, each
// a process with a folder of its own (host_network.h).
struct HostSpec {
  int index = 1;  // 1-based: algo-<index>
  int count = 1;  // the job's InstanceCount
  // Every host's loopback address, by index - 1 (host_network.h); empty for a single host.
  std::vector<std::string> addresses;
  // When set, written to the folder's `hosts` file (JobPaths::hosts_file), which the launcher
  // mounts over /etc/hosts (HostsFileText).
  std::string hosts_file_text;
  // This host's GPUs (nvidia-smi's indices) when the worker hands GPUs out (gpu_inventory.h):
  // SM_NUM_GPUS is their count and a process sees only them (CUDA_VISIBLE_DEVICES, in PCI bus
  // order; empty: none); a container gets them from its engine (ContainerSpec::gpus). nullopt:
  // the worker hands out none; SM_NUM_GPUS is 0 and CUDA_VISIBLE_DEVICES is the worker's.
  std::optional<std::vector<int>> gpus;
};

struct JobPaths {
  // <work-dir>/<training_job_name> for algo-1, <work-dir>/<training_job_name>.algo-<k> for the
  // other hosts of a multi-instance job (a training job name has no '.'), absolute.
  std::filesystem::path root;
  std::filesystem::path input;
  std::filesystem::path input_config;
  std::filesystem::path input_data;
  std::filesystem::path model;
  std::filesystem::path output;
  std::filesystem::path output_data;
  std::filesystem::path output_intermediate;
  std::filesystem::path failure;
  std::filesystem::path checkpoints;  // empty when the job has no checkpoint config
  std::filesystem::path hosts_file;   // <root>/hosts; empty without HostSpec::hosts_file_text
};

// Folders of jobs that succeeded, emptied down to the layout (the directories and the three
// config files, which the next job overwrites in place) and kept for the next jobs. Why: removing
// every finished job's folder and creating the next one's deletes and allocates a dozen inodes
// per job, and on ext4 without a journal (as on this project's CI machines) allocating an inode
// skips every inode of its group deleted in the last 30 seconds or so: with a few hundred jobs a
// second, most of amt-worker's time went to ext4's find_inode_bit/recently_deleted (perf), and
// throughput fell as a tuning job went on (bench/orchestrator/scale.py). Reusing the folder
// leaves only the trainer's own files to delete. Thread-safe.
class JobDirPool {
 public:
  // Spare folders wait in `dir` (<work-dir>/.spare-folders), at most `capacity` of them; what an
  // earlier worker left there is removed.
  JobDirPool(std::filesystem::path dir, size_t capacity);

  // Moves a spare folder to `root`, which must not exist. False when there is none (or the move
  // failed: the spare is then removed).
  bool TakeInto(const std::filesystem::path& root);

  // Empties the folder of `paths` down to the layout and keeps it as a spare; removes it instead
  // when the pool is full or on a file-system error. The folder is gone from paths.root either way.
  // The same as Keep(Detach(paths)).
  void Recycle(const JobPaths& paths);

  // Recycle in two steps, so that only the first is on a job's way to its exit report. Detach
  // moves the folder of `paths` into the pool's directory (one rename): gone from paths.root at
  // once. nullopt when the move failed (the folder is then removed). Keep empties the moved
  // folder down to the layout and keeps it as a spare, or removes it (pool full, an error).
  struct Detached {
    JobPaths paths;  // the folder's paths where it was moved to
  };
  std::optional<Detached> Detach(const JobPaths& paths);
  void Keep(const Detached& detached);

 private:
  const std::filesystem::path dir_;
  const size_t capacity_;
  Mutex mu_;
  std::vector<std::filesystem::path> spares_ ABSL_GUARDED_BY(mu_);
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 0;
};

// The folders of failed jobs, kept for inspection (logs, output/failure, what the trainer
// wrote), but not forever: at most `keep` of them, the oldest removed as new ones come, so a
// worker that runs many failing jobs does not fill its disk (and, with it, amtd's). Only this
// worker process's failures count. Thread-safe.
class FailedJobDirs {
 public:
  explicit FailedJobDirs(size_t keep) : keep_(keep) {}

  // `root` is kept; the folders now over the cap, oldest first, are moved aside (a rename, under
  // the lock, so a retry's Create at the same path never meets them) and returned for the caller
  // to remove (outside any lock: removing a big folder takes time).
  std::vector<std::filesystem::path> Keep(const std::filesystem::path& root);
  // A new job folder is made at `root` (a retry of the job): it is no failed folder any more.
  void Reused(const std::filesystem::path& root);

 private:
  const size_t keep_;
  Mutex mu_;
  std::deque<std::filesystem::path> kept_ ABSL_GUARDED_BY(mu_);  // oldest first
  uint64_t removed_ ABSL_GUARDED_BY(mu_) = 0;                    // names the moved-aside ones
};

class JobDir {
 public:
  // Creates the layout for `job`, first removing what a previous attempt left in the same
  // directory (each attempt gets a fresh /opt/ml, like a fresh instance; checkpoints survive
  // through the sync dir), and copies the checkpoint sync dir's files into checkpoints/.
  // Errors: InvalidArgument for a training job or channel name that is not a SageMaker name
  // (it becomes a path) or a channel's input_config_json that is not a JSON object; NotFound for
  // a channel local_path that does not exist; ResourceExhausted when the disk is full (ENOSPC or
  // EDQUOT), Internal for other file-system failures, both with a message that starts "cannot
  // prepare the job folder <root>: " and has the path and the system's reason ("No space left
  // on device").
  // For a multi-instance job, `host` says which host's folder this is: its name goes in
  // resourceconfig.json's current_host and SM_CURRENT_HOST, every host's in hosts and SM_HOSTS,
  // the addresses in AMT_HOST_ADDRESSES ({"algo-1": "127.1.0.1", ...}), and the network
  // interface is "lo" (the hosts' addresses are loopback ones; a single host keeps "eth0").
  //
  // `in_container`: the trainer runs in a container (container_launcher.h) that sees the folder
  // as /opt/ml: the environment and checkpointconfig.json then name /opt/ml paths (the
  // checkpoints at CheckpointConfig.LocalPath, /opt/ml/checkpoints by default, as SageMaker
  // mounts them), and container_mounts() says what to mount where.
  static absl::StatusOr<JobDir> Create(const JobDirOptions& options, const amt::v1::StartJob& job,
                                       const HostSpec& host = {}, bool in_container = false);

  const JobPaths& paths() const { return paths_; }

  // For a container (Create's `in_container`): input/config read-only at
  // /opt/ml/input/config, each channel's data read-only at /opt/ml/input/data/<channel> (the
  // folder or file the channel's link points at), model/ and output/ writable at /opt/ml/model
  // and /opt/ml/output, checkpoints/ at the checkpoint path. Empty otherwise.
  const std::vector<ContainerMount>& container_mounts() const { return container_mounts_; }

  // TRAINING_JOB_NAME, TRAINING_JOB_ARN, the SM_* variables, AMT_JOB_DIR (and for several hosts
  // AMT_HOST_ADDRESSES; with a StartJob.volume_size_gb, AMT_VOLUME_SIZE_GB, the cap
  // amt-script-runner unpacks the job's code within), over the request's
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

  // checkpoints/, checkpointconfig.json, and the sync dir's files copied in (Create's stage for
  // a job with a checkpoint config).
  // `local_path`: checkpoints/ as the trainer sees it (checkpointconfig.json's LocalPath).
  absl::Status MakeCheckpoints(const JobDirOptions& options, const amt::v1::StartJob& job,
                               const std::filesystem::path& local_path);

  JobPaths paths_;
  std::map<std::string, std::string> environment_;
  std::vector<ContainerMount> container_mounts_;
  std::filesystem::path checkpoint_sync_dir_;
  // Relative path -> stamp of the local copy, for the files copied in at start.
  std::map<std::string, FileStamp> copied_in_;
};

// What TrimFailedJobDir removed.
struct TrimmedJobDir {
  uint64_t bytes = 0;             // the regular files' sizes
  std::filesystem::path largest;  // the largest file removed, relative to the folder's root
  uint64_t largest_bytes = 0;
};

// Files of a failed job's folder at most this big stay when the folder is trimmed.
inline constexpr uint64_t kSmallFileBytes = uint64_t{64} << 10;

// Trims the folder of a job that failed on a full disk down to what says why it failed, so
// that the folder kept for inspection does not keep the disk full (and with it amtd's state
// store, on the same disk by default): removes everything in model/, output/data/,
// checkpoints/ and input/data/ (a channel's link is removed, never followed: it points at user
// data), code/ (amt-script-runner's copy of the job's code), and every other file over
// kSmallFileBytes (what a trainer wrote in its working folder or output/intermediate/); keeps
// the layout's folders, the config JSON files, output/failure and the trainer's other small
// files (logs it wrote). Internal on a file-system error (what was removed until then stays
// removed).
absl::StatusOr<TrimmedJobDir> TrimFailedJobDir(const JobPaths& paths);

// The first `max_chars` UTF-8 characters of `text` (a character starts at every byte that is not
// a UTF-8 continuation byte, so a multi-byte character is never cut), with trailing whitespace
// removed.
std::string TruncateFailureReason(const std::string& text, size_t max_chars);

}  // namespace amt::worker

#endif  // AMT_WORKER_JOB_DIR_H_
