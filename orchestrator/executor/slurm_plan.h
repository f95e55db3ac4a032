// The pure half of the Slurm executor (slurm_executor.h): what `sbatch` is given for one
// training-job attempt, how `squeue` output reads, and what a Slurm job's end means for the
// training job. No processes, no clock: unit-tested on strings.
//
// One attempt is one Slurm job, named after the training job (so `squeue` and `sacct` show the
// training-job names), whose batch script runs a one-shot amt-worker: it runs that attempt (all
// its hosts, on the node Slurm gave it), reports to amtd over the worker protocol, and exits.
// The Slurm job's comment ("amt-local worker=... job=... attempt=... instances=...") is how an
// amtd that restarted finds the jobs it submitted.
#ifndef AMT_ORCHESTRATOR_EXECUTOR_SLURM_PLAN_H_
#define AMT_ORCHESTRATOR_EXECUTOR_SLURM_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "amt/v1/worker.pb.h"
#include "common/instance_type.h"
#include "orchestrator/core/provisioner.h"

namespace amt::executor {

struct SlurmOptions {
  std::string partition;  // sbatch --partition; empty: the cluster's default
  std::string account;    // sbatch --account; empty: none
  // More sbatch options, passed as they are, before ours (ours win where Slurm takes the last).
  std::vector<std::string> extra_sbatch_args;
  // Slurm jobs submitted and not ended, at most (--max-slurm-jobs); MaxParallelTrainingJobs
  // bounds each tuning job on top of it.
  int max_jobs = 64;
  // Multiplies the instance type's vCPUs and memory (InstanceResources) before they are asked
  // of Slurm, so ml.m5.large's 2 vCPUs can be 1 CPU on a small cluster; at least 1 CPU is
  // asked. 0: ask for no CPUs, memory or GPUs at all (Slurm's defaults).
  double resource_scale = 1.0;
  // What the Slurm job runs, as the nodes see it: the amt-worker executable, amtd's
  // WorkerService address, where job folders go, and an AWS credentials file when amtd has one.
  std::string worker_binary;
  std::string orchestrator_address;
  std::string work_dir;
  std::string credentials_file;
  std::string output_dir;  // the Slurm jobs' stdout/stderr files (%j.out), the worker's log
  // How long a one-shot worker keeps trying to reach amtd before it stops its job and exits.
  double worker_orphan_timeout_seconds = 600;
  // The commands (found on PATH unless given with a path).
  std::string sbatch = "sbatch";
  std::string squeue = "squeue";
  std::string scancel = "scancel";
  std::string srun = "srun";          // as the nodes see them: the one-shot worker runs these
  std::string scontrol = "scontrol";  // for multi-instance jobs (amt-worker --srun-hosts)
  // A multi-instance job (InstanceCount N > 1): true asks for N nodes, one task each, and runs
  // host k on the k-th (as SageMaker gives every host an instance of its own); false asks for N
  // tasks on one node, the hosts on a loopback network of their own there (amtd --slurm-hosts).
  bool host_per_node = true;
  double poll_seconds = 0.25;  // squeue every this long while jobs are submitted
  // Ask for ResourceConfig.VolumeSizeInGB as sbatch --tmp (nodes must declare TmpDisk; off for
  // clusters whose nodes do not).
  bool volume_as_tmp = true;
  // Names this amtd in its Slurm jobs' comments (its data dir, hashed), so a restarted amtd takes
  // back its own jobs and no other amtd's on the same cluster. No spaces.
  std::string owner;
};

// The Slurm job's comment naming what it runs, and its reading.
struct SlurmJobTag {
  std::string owner;  // SlurmOptions::owner of the amtd that submitted it
  std::string worker_id;
  std::string training_job_name;
  int attempt = 0;
  int instances = 1;
};
std::string CommentFor(const SlurmJobTag& tag);
std::optional<SlurmJobTag> ParseComment(std::string_view comment);

// sbatch's arguments (without "sbatch" itself) for `start` run by one-shot worker `worker_id`:
// --parsable, the job name, the comment, the output file, partition and account, the resources
// of InstanceType x resource_scale (--cpus-per-task, --mem, --gres=gpu:K), VolumeSizeInGB as
// --tmp, a --time of MaxRuntimeInSeconds plus `extra_seconds` (a safety net: amtd stops the job
// itself at the limit), and --wrap with the worker's command line. `max_runtime_seconds` <= 0:
// no --time. InvalidArgument for an instance type ResourcesOf cannot read.
absl::StatusOr<std::vector<std::string>> SbatchArguments(const SlurmOptions& options,
                                                         const amt::v1::StartJob& start,
                                                         const std::string& worker_id,
                                                         double max_runtime_seconds,
                                                         int volume_size_gb);

// One line of `squeue -h -t all -o '%i|%T|%r|%k'`.
struct SlurmJobState {
  std::string job_id;
  std::string state;   // PENDING, RUNNING, COMPLETED, CANCELLED, NODE_FAIL, OUT_OF_MEMORY, ...
  std::string reason;  // Resources, Priority, None, ...
  std::string comment;
};
// The format string to give squeue, and its output read back (lines that do not parse skipped).
inline constexpr char kSqueueFormat[] = "%i|%T|%r|%k";
std::vector<SlurmJobState> ParseSqueue(std::string_view text);

// Whether a Slurm state is one the job never leaves.
bool IsFinalState(std::string_view state);

// What the end of a Slurm job means for the training-job attempt it ran, when its worker did not
// report the attempt's exit (it died with the job, or never started): node failure, preemption,
// boot failure or a job Slurm no longer knows (empty `state`) are kRetryable; OUT_OF_MEMORY is
// kOutOfMemory; CANCELLED is kCancelled; any other end (COMPLETED, FAILED, TIMEOUT without a
// report: the worker could not run or reach amtd) is kFailed. The message says what Slurm said.
core::ProvisionedEnd ClassifyEnd(const std::string& job_id, std::string_view state,
                                 std::string_view reason);

// A pending job's reason that means it will never start (the request exceeds the partition or
// the cluster): "PartitionConfig", "BadConstraints", ... nullopt for ordinary waits (Resources,
// Priority).
std::optional<std::string> NeverStartsReason(std::string_view reason);

// Whether that reason (or an sbatch refusal, by its words) is about the size of the request:
// nodes, CPUs, memory, GPUs or disk ("PartitionConfig", "PartitionNodeLimit", "BadConstraints";
// "Requested node configuration is not available", "Memory specification can not be
// satisfied", ...), so that what the job asked is worth setting against what the partition has.
bool IsSizeReason(std::string_view reason_or_refusal);

// What one Slurm job asks of each node, read back from its sbatch arguments (the last of each
// "--option=value" wins, as in sbatch, so --sbatch-arg values count where ours do not override
// them). 0: not asked (Slurm's default).
struct SlurmRequest {
  std::string partition;  // empty: the cluster's default
  int nodes = 1;
  int hosts = 1;  // tasks in all: the training job's hosts
  int cpus_per_node = 0;
  int64_t memory_mb_per_node = 0;
  int gpus_per_node = 0;
  int64_t tmp_mb_per_node = 0;
};
SlurmRequest RequestOf(const std::vector<std::string>& sbatch_args);

// What a partition offers: its nodes, and the most CPUs, memory, GPUs and temporary disk any one
// of them has (each the largest on its own, so a request above one of them fits no node), capped
// by the partition's MaxNodes, MaxCPUsPerNode and MaxMemPerNode.
struct SlurmOffer {
  std::string partition;
  int nodes = 0;
  int cpus_per_node = 0;
  int64_t memory_mb_per_node = 0;
  int gpus_per_node = 0;
  int64_t tmp_mb_per_node = 0;
};
// From `scontrol -o show partition` (`partitions`, a line per partition) and `scontrol -o show
// node` (`nodes`, a line per node, which names its partitions): the offer of `partition`, or of
// the default one (Default=YES) when `partition` is empty. NotFound when there is no such
// partition (or no default).
absl::StatusOr<SlurmOffer> ParseOffer(std::string_view partitions, std::string_view nodes,
                                      std::string_view partition);

// Whether `asked` can never fit `offer`: more nodes than it has, or more of something per node
// than its largest node has.
bool Exceeds(const SlurmRequest& asked, const SlurmOffer& offer);

// The FailureReason (without "ClientError: ") of a job Slurm refused or will never start for its
// size: `what` (Slurm's words: "Slurm job 12 can never start (PartitionNodeLimit)"), what the
// job asked, what the partition offers (or why that could not be read), and which knob asks for
// less: InstanceCount or --slurm-hosts one-node for nodes, InstanceType or
// --slurm-resource-scale for CPUs and memory, VolumeSizeInGB or --slurm-no-tmp for disk.
std::string TooBigMessage(std::string_view what, const SlurmRequest& asked,
                          const absl::StatusOr<SlurmOffer>& offer, const SlurmOptions& options);

// `text` quoted for /bin/sh (single quotes).
std::string ShellQuote(std::string_view text);

}  // namespace amt::executor

#endif  // AMT_ORCHESTRATOR_EXECUTOR_SLURM_PLAN_H_
