// amtd: the amt-local orchestrator. Flags map onto DaemonOptions; see `amtd --help`.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/arn.h"
#include "orchestrator/daemon/daemon.h"

namespace {

// What the command line sets: DaemonOptions and the few flags that are turned into them.
struct Flags {
  amt::daemon::DaemonOptions options;
  std::optional<int> http_port;
  double http_idle_timeout = 60;
  bool no_local_worker = false;
};

// Where amtd listens, its data and its workers.
void AddServerFlags(CLI::App& app, Flags& flags) {
  app.add_option("--host", flags.options.host, "Address to listen on (loopback by default)")
      ->capture_default_str();
  app.add_option("--port", flags.options.port,
                 "Port to listen on; 0 picks a free one (printed at start)")
      ->capture_default_str();
  app.add_option("--http-port", flags.http_port,
                 "Port of the AWS JSON 1.1 gateway (boto3: endpoint_url=http://HOST:PORT); default "
                 "7071, or a free one when --port is 0; -1 serves no HTTP");
  app.add_option_function<std::string>(
         "--ui", [&flags](const std::string& value) { flags.options.ui = value == "on"; },
         "on: serve the web page (tuning jobs, their training jobs, logs) at http://HOST:PORT/ "
         "of the HTTP gateway, for a browser on this machine (an amtd without --credentials; "
         "the page reads the same API as boto3); off: no page. Default: on")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option_function<std::string>(
         "--https-proxy",
         [&flags](const std::string& value) { flags.options.https_proxy = value == "on"; },
         "on: the HTTP port is also an HTTPS proxy (HTTPS_PROXY=http://HOST:PORT, `amt env`): a "
         "CONNECT to an AWS host (*.amazonaws.com) is answered by amtd itself, with a "
         "certificate of a CA kept in --data-dir (proxy-ca.pem; AWS_CA_BUNDLE), so clients that "
         "pin AWS's endpoints reach amtd unchanged; other hosts are tunnelled untouched when amtd "
         "listens on loopback, refused otherwise. off: CONNECT is refused. Default: on")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--http-idle-timeout", flags.http_idle_timeout,
                 "Seconds an HTTP connection may stay without a request before it is closed")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--http-max-connections", flags.options.http.max_connections,
                 "Open HTTP connections at most; more are closed as soon as they are accepted")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--http-allowed-hosts", flags.options.http.allowed_hosts,
                 "Host names HTTP requests may be addressed to besides localhost and 127.0.0.1 "
                 "(requests for any other name are refused: DNS rebinding). With a non-loopback "
                 "--host and no names given, every name is accepted")
      ->delimiter(',');
  app.add_option("--http-threads", flags.options.http.threads,
                 "Threads serving HTTP connections: a request that waits (on the disk, on the "
                 "orchestrator's loop) holds only its own connection, and one thread")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--http-disk-threads", flags.options.http.disk_threads,
                 "Threads for S3 requests, which wait on the disk: apart from --http-threads, so "
                 "uploads waiting on fsync never delay a SageMaker call")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app.add_option("--http-max-body-bytes", flags.options.http.max_body_bytes,
                 "Largest HTTP request body; larger ones get 413 SerializationException")
      ->capture_default_str();
  app.add_option("--credentials", flags.options.credentials_file,
                 "An AWS shared-credentials file ([profile] aws_access_key_id / "
                 "aws_secret_access_key): every HTTP request must then be signed (SigV4) with one "
                 "of its keys, as AWS checks them. Without it any signature, or none, is accepted")
      ->check(CLI::ExistingFile);
  app.add_flag("--insecure", flags.options.insecure,
               "Listen on a non-loopback --host without --credentials (refused otherwise: whoever "
               "reaches the port can run any command as this user)");
  app.add_flag("--init", flags.options.init,
               "Start with an empty state although --data-dir has job folders but no database "
               "(amt.db missing or empty); without it amtd refuses, as it would forget every job");
  app.add_option("--data-dir", flags.options.data_dir,
                 "State folder: amt.db, s3/, jobs/, worker.log")
      ->capture_default_str();
  app.add_flag(
      "--no-local-worker", flags.no_local_worker,
      "Do not start a local amt-worker; workers join with amt-worker --orchestrator HOST:PORT");
  app.add_option("--slots", flags.options.local_worker_slots,
                 "Training jobs the local worker runs at once (0: number of CPUs)")
      ->capture_default_str();
  app.add_option("--worker-binary", flags.options.worker_binary,
                 "amt-worker executable (default: next to amtd)");
  app.add_flag("--keep-job-dirs", flags.options.keep_job_dirs,
               "The local worker keeps the folder (<data-dir>/jobs/<job>, the emulated /opt/ml) of "
               "every job; by default a job that succeeded leaves only its S3 artifacts");
  app.add_option("--local-worker-orphan-timeout", flags.options.local_worker_orphan_timeout_seconds,
                 "Seconds the local worker keeps running its jobs after amtd was killed, waiting "
                 "for the next amtd of this --data-dir to adopt them; then it stops them and exits "
                 "(0: never)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
}

// SageMaker's waits, and where trainers come from.
// The local worker's container engine and the containers' limits (docs/sagemaker-mapping.md,
// "Your own training image"), and its GPUs ("GPUs").
void AddContainerFlags(CLI::App& app, Flags& flags) {
  app.add_option("--container-runtime", flags.options.container_runtime,
                 "The local worker's container engine: training images it holds (pulled, or built "
                 "and tagged with the TrainingImage's name) run as containers with SageMaker's "
                 "/opt/ml contract: docker, podman, auto (Docker when its daemon answers, else "
                 "Podman, else none) or none (images run only through the image map, as "
                 "executables or in script mode)")
      ->check(CLI::IsMember({"auto", "docker", "podman", "none"}))
      ->capture_default_str();
  app.add_option("--container-resource-scale", flags.options.container_resource_scale,
                 "Multiplies a training job's InstanceType vCPUs and memory for its container's "
                 "--cpus (at most this machine's CPUs) and --memory (0: no limits): 0.25 makes "
                 "ml.m5.large's 8 GiB a 2 GiB limit")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--gpus", flags.options.gpus,
                 "The GPUs of the local worker's training jobs: all (every GPU nvidia-smi lists), "
                 "none, or indices such as 0,2. A job of a GPU InstanceType (ml.g5.xlarge: 1) "
                 "gets that many per instance as devices of its own (CUDA_VISIBLE_DEVICES, "
                 "SM_NUM_GPUS) and waits while other jobs hold them; on a machine without GPUs "
                 "it runs on CPU")
      ->capture_default_str();
  app.add_option("--gpu-share", flags.options.gpu_share,
                 "How many training jobs may hold one GPU at once (small models on one GPU)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
}

void AddTimingFlags(CLI::App& app, Flags& flags) {
  app.add_option("--time-scale", flags.options.orchestrator.time_scale,
                 "Multiplies SageMaker's waits (120 s stop grace, MaxRuntimeInSeconds, worker-lost "
                 "timeout); 0.01 makes them 100x shorter")
      ->capture_default_str();
  app.add_option("--stop-grace", flags.options.orchestrator.stop_grace_seconds,
                 "Seconds between SIGTERM and SIGKILL when a job is stopped (before --time-scale)")
      ->capture_default_str();
  app.add_option(
         "--worker-lost-timeout", flags.options.orchestrator.worker_lost_timeout_seconds,
         "Seconds a running job may go without its worker before it fails as RetryableError")
      ->capture_default_str();
  app.add_option(
      "--image-map", flags.options.image_map_file,
      "JSON file mapping TrainingImage URIs to local commands (see examples/image-map.json)");
  app.add_option("--s3-root", flags.options.s3_root,
                 "Folder standing for S3 (default: DATA_DIR/s3)");
  app.add_option_function<std::vector<std::string>>(
         "--python",
         [&flags](const std::vector<std::string>& values) {
           for (const std::string& value : values) {
             amt::core::SetPython(flags.options.orchestrator.launch, value);
           }
         },
         "Python interpreter for framework images run in script mode (SKLearn, PyTorch, "
         "XGBoost, ... estimators): PATH for all, FRAMEWORK=PATH for one of sklearn, xgboost, "
         "pytorch, tensorflow, huggingface, mxnet (e.g. a venv's bin/python); default python3")
      ->type_name("[FRAMEWORK=]PATH")
      ->allow_extra_args(false);
}

// AUTO early stopping's and Hyperband's undocumented parts (docs/sagemaker-mapping.md).
void AddEarlyStoppingFlags(CLI::App& app, Flags& flags) {
  using Reference = amt::stopping::MedianRuleOptions::Reference;
  static const std::map<std::string, Reference> references = {
      {"finished", Reference::kCompletedOrStoppedJobs},
      {"completed", Reference::kCompletedJobs},
      {"all", Reference::kAllPreviousJobs}};
  app.add_option("--median-reference",
                 flags.options.orchestrator.early_stopping.median_rule.reference,
                 "AUTO early stopping: which previous jobs form the median: finished (Completed or "
                 "Stopped), completed (Completed only) or all (running ones too)")
      ->transform(CLI::CheckedTransformer(references).description(""))
      ->type_name("finished|completed|all")
      ->default_str("finished");
  app.add_option("--convergence-jobs", flags.options.orchestrator.convergence_jobs,
                 "CompleteOnConvergence Enabled: a tuning job has converged, and completes, once "
                 "this many jobs in a row did not improve its best objective by 1%")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  static const std::map<std::string, amt::search::Allocation> allocations = {
      {"round-robin", amt::search::Allocation::kRoundRobin},
      {"random", amt::search::Allocation::kRandom}};
  app.add_option("--multi-algorithm-allocation",
                 flags.options.orchestrator.multi_algorithm_allocation,
                 "Multi-algorithm tuning (TrainingJobDefinitions): how trials are dealt over the "
                 "definitions: round-robin (equal shares, in request order) or random (uniform, "
                 "from the tuning job's seed); fixed per tuning job at its creation")
      ->transform(CLI::CheckedTransformer(allocations).description(""))
      ->type_name("round-robin|random")
      ->default_str("round-robin");
  app.add_option("--median-min-jobs",
                 flags.options.orchestrator.early_stopping.median_rule.min_reference_jobs,
                 "AUTO early stopping: reference jobs needed before the rule may stop a job")
      ->capture_default_str();
  app.add_flag(
      "--median-compare-best",
      flags.options.orchestrator.early_stopping.median_rule.compare_best_so_far,
      "AUTO early stopping: compare the job's best value so far instead of its current one");
  app.add_option("--median-grace-epochs",
                 flags.options.orchestrator.early_stopping.median_rule.grace_epochs,
                 "AUTO early stopping: the first epochs of each job that are never compared "
                 "(0: compare from epoch 1, the literal reading of SageMaker's \"after each "
                 "epoch\"; 2 protects slow starters, see bench/README.md)")
      ->capture_default_str();
  app.add_option("--hyperband-eta",
                 flags.options.orchestrator.early_stopping.hyperband_reduction_factor,
                 "Hyperband: reduction factor; a job continues at a rung when in the top 1/eta")
      ->capture_default_str();
  app.add_option("--hyperband-brackets",
                 flags.options.orchestrator.early_stopping.hyperband_brackets,
                 "Hyperband: number of brackets (1 = plain asynchronous successive halving)")
      ->capture_default_str();
  app.add_flag("--hyperband-stop-last-epoch",
               flags.options.orchestrator.early_stopping.hyperband_stop_last_epoch,
               "Hyperband: stop a job reaching MaxResource even at its own last epoch (it ends "
               "Stopped); by default it ends by itself, Completed");
  using Asha = amt::stopping::AshaOptions;
  static const std::map<std::string, Asha::Allocation> brackets_by = {
      {"capped", Asha::Allocation::kCostCapped},
      {"round-robin", Asha::Allocation::kRoundRobin},
      {"budget", Asha::Allocation::kByBudget}};
  app.add_option("--hyperband-allocation",
                 flags.options.orchestrator.early_stopping.hyperband_allocation,
                 "Hyperband: how jobs go to brackets: capped (round robin by launch index, "
                 "tilted toward the earliest-deciding bracket just enough that a job costs no "
                 "more epochs than under Hyperband's own shares), round-robin, or budget "
                 "(Hyperband's shares: most jobs to the brackets that decide early)")
      ->transform(CLI::CheckedTransformer(brackets_by).description(""))
      ->type_name("capped|round-robin|budget")
      ->default_str("capped");
  static const std::map<std::string, Asha::FewAtRung> few = {
      {"best", Asha::FewAtRung::kBest}, {"continue", Asha::FewAtRung::kContinue}};
  app.add_option("--hyperband-few-at-rung",
                 flags.options.orchestrator.early_stopping.hyperband_few_at_rung,
                 "Hyperband: at a rung fewer than eta jobs of the bracket have reached, only the "
                 "best continues (best, Optuna's rule) or all continue (continue)")
      ->transform(CLI::CheckedTransformer(few).description(""))
      ->type_name("best|continue")
      ->default_str("best");
}

// The managed spot simulation.
void AddSpotFlags(CLI::App& app, Flags& flags) {
  app.add_option("--spot-mean-seconds",
                 flags.options.orchestrator.spot.mean_seconds_to_interruption,
                 "Managed spot simulation: mean training seconds before a spot job is interrupted "
                 "(SageMaker seconds, scaled by --time-scale); 0: never")
      ->capture_default_str();
  app.add_option("--spot-interrupt-after", flags.options.orchestrator.spot.interrupt_after_seconds,
                 "Managed spot simulation: interrupt every attempt exactly this many training "
                 "seconds in (scaled by --time-scale), instead of at a seeded exponential time; "
                 "0: off")
      ->capture_default_str();
  app.add_option("--spot-max-interruptions", flags.options.orchestrator.spot.max_interruptions,
                 "Managed spot simulation: interruptions per training job at most")
      ->capture_default_str();
  app.add_option("--spot-discount", flags.options.orchestrator.spot.discount,
                 "Managed spot simulation: BillableTimeInSeconds = training x (1 - discount)")
      ->capture_default_str();
  app.add_option("--spot-seed", flags.options.orchestrator.spot_seed,
                 "Managed spot simulation: seed of the interruption times (same seed, same run)")
      ->capture_default_str();
}

// The state store and the ARNs.
void AddStoreFlags(CLI::App& app, Flags& flags) {
  app.add_option(
         "--sqlite-sync", flags.options.sqlite_sync,
         "full: every acknowledged change is fsynced (survives power loss; a trial's launch "
         "on the local worker overlaps that fsync, as a power loss would end the trial too); "
         "normal: survives kill -9 of amtd only (no fsync per commit; on a fast disk it gains "
         "little)")
      ->capture_default_str();
  app.add_option("--max-unsaved-log-bytes", flags.options.orchestrator.max_unsaved_log_bytes,
                 "While the state store fails, log lines kept in memory at most (bytes); past "
                 "that the workers keep their reports until the store accepts writes again")
      ->capture_default_str();
  app.add_option("--region", flags.options.orchestrator.arn.region, "Region written into ARNs")
      ->capture_default_str();
  app.add_option("--account", flags.options.orchestrator.arn.account,
                 "Account id written into ARNs")
      ->capture_default_str();
  app.add_option("--execution-role", flags.options.orchestrator.arn.execution_role,
                 "The role every caller has assumed: STS's GetCallerIdentity answers "
                 "arn:aws:sts::<account>:assumed-role/<this>/amt-local and IAM's GetRole knows "
                 "it, so the SageMaker SDK's get_execution_role() returns "
                 "arn:aws:iam::<account>:role/<this>")
      ->capture_default_str()
      ->check(
          [](const std::string& name) {
            return amt::IsRoleName(name) ? std::string()
                                         : "an IAM role name is 1-64 of A-Z a-z 0-9 + = , . @ _ -";
          },
          "ROLE");
}

// Where attempts run: amt-worker processes, or Slurm jobs.
void AddExecutorFlags(CLI::App& app, Flags& flags) {
  auto& o = flags.options;
  app.add_option("--executor", o.executor,
                 "Where training jobs run: local (amt-worker processes: amtd's local worker and "
                 "any started with amt-worker --orchestrator) or slurm (every attempt one Slurm "
                 "job named after its training job, running a one-shot amt-worker; no local "
                 "worker; needs sbatch/squeue/scancel and SLURM_CONF as for those commands)")
      ->check(CLI::IsMember({"local", "slurm"}))
      ->capture_default_str();
  app.add_option("--slurm-partition", o.slurm.partition, "sbatch --partition (default: Slurm's)");
  app.add_option("--slurm-account", o.slurm.account, "sbatch --account");
  app.add_option("--sbatch-arg", o.slurm.extra_sbatch_args,
                 "One more sbatch option, passed as it is (repeat the flag for more), e.g. "
                 "--sbatch-arg=--qos=low");
  app.add_option("--max-slurm-jobs", o.slurm.max_jobs,
                 "Slurm jobs submitted and not ended, at most (each tuning job's "
                 "MaxParallelTrainingJobs applies too)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--slurm-resource-scale", o.slurm.resource_scale,
                 "Multiplies the InstanceType's vCPUs and memory (ml.m5.large: 2 vCPUs, 8 GiB) "
                 "asked of Slurm (--cpus-per-task, --mem; GPUs as --gres=gpu:K); at least 1 CPU. "
                 "0: ask for no resources (Slurm's defaults)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--slurm-orchestrator-address", o.slurm.orchestrator_address,
                 "How the Slurm jobs' workers reach amtd (default: unix:<data-dir>/amtd.sock, "
                 "this machine only; give HOST:PORT for other nodes, with --host and --port)");
  app.add_option("--slurm-work-dir", o.slurm.work_dir,
                 "Where the Slurm jobs' workers put job folders (default: <data-dir>/jobs; other "
                 "nodes need the data dir on a shared file system, as for the S3 folder)");
  app.add_option("--slurm-poll-seconds", o.slurm.poll_seconds,
                 "How often squeue is read while Slurm jobs are submitted")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag_callback(
      "--slurm-no-tmp", [&o] { o.slurm.volume_as_tmp = false; },
      "Do not ask for VolumeSizeInGB as sbatch --tmp (for clusters whose nodes declare no "
      "TmpDisk, where every such job would be refused)");
  app.add_option("--slurm-bin-dir", o.slurm_bin_dir,
                 "The folder of sbatch, squeue, scancel, srun and scontrol (default: found on "
                 "PATH)");
  app.add_option_function<std::string>(
         "--slurm-hosts",
         [&o](const std::string& value) { o.slurm.host_per_node = value == "nodes"; },
         "Where the hosts of a multi-instance training job (InstanceCount N > 1) run: nodes "
         "(N nodes, one task each: host algo-k is a job step on the k-th node, named by its "
         "address) or one-node (N tasks on one node, on a loopback network of the job's own); "
         "either way each host is a job step (srun) of the job's Slurm job. Default: nodes")
      ->check(CLI::IsMember({"nodes", "one-node"}));
}

// Runs the daemon until SIGINT or SIGTERM; the exit code.
int Run(const amt::daemon::DaemonOptions& options) {
  // A reader of our stdout or a client going away must never end amtd.
  std::signal(SIGPIPE, SIG_IGN);
  // Block SIGINT/SIGTERM in every thread (gRPC's included), then wait for them here.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  auto daemon = amt::daemon::Daemon::Start(options);
  if (!daemon.ok()) {
    std::cerr << "amtd: " << daemon.status().message() << "\n";
    return 1;
  }
  // One line, written at once: scripts read it to learn the ports.
  std::string banner = "amtd listening on " + (*daemon)->endpoint() + " (gRPC)";
  if (!(*daemon)->http_endpoint().empty()) {
    banner += ", " + (*daemon)->http_endpoint() + " (AWS JSON: boto3, aws cli)";
  }
  if (!(*daemon)->worker_socket().empty()) {
    banner += ", " + (*daemon)->worker_socket() + " (workers on this machine)";
  }
  if (!(*daemon)->http_endpoint().empty() && options.ui) {
    banner += ", the page at " + (*daemon)->http_endpoint() + "/";
  }
  if (!(*daemon)->proxy_ca_file().empty()) {
    banner += ", the HTTPS proxy for AWS hosts (CA " + (*daemon)->proxy_ca_file() + ")";
  }
  std::cout << banner << std::endl;
  int sig = 0;
  sigwait(&signals, &sig);
  std::cerr << "amtd: shutting down\n";
  (*daemon)->Shutdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  CLI::App app{
      "amtd: runs Amazon SageMaker Automatic Model Tuning jobs locally.\n"
      "Serves amt.v1.TuningService (the SageMaker operations) and amt.v1.WorkerService over gRPC,\n"
      "SageMaker's own AWS JSON 1.1 API over HTTP for boto3 and the aws cli (--http-port),\n"
      "keeps every job in SQLite under --data-dir, and starts a local amt-worker unless told not "
      "to."};
  AddServerFlags(app, flags);
  AddContainerFlags(app, flags);
  AddTimingFlags(app, flags);
  AddEarlyStoppingFlags(app, flags);
  AddSpotFlags(app, flags);
  AddStoreFlags(app, flags);
  AddExecutorFlags(app, flags);
  CLI11_PARSE(app, argc, argv);
  amt::daemon::DaemonOptions& options = flags.options;
  options.start_local_worker = !flags.no_local_worker;
  options.http.idle_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(flags.http_idle_timeout * 1000));
  options.http_port = flags.http_port.value_or(options.port == 0 ? 0 : 7071);
  return Run(options);
}
