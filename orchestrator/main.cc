// amtd: the amt-local orchestrator. Flags map onto DaemonOptions; see `amtd --help`.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <iostream>
#include <map>
#include <optional>
#include <string>

#include "orchestrator/daemon/daemon.h"

int main(int argc, char** argv) {
  amt::daemon::DaemonOptions options;
  bool no_local_worker = false;
  CLI::App app{
      "amtd: runs Amazon SageMaker Automatic Model Tuning jobs locally.\n"
      "Serves amt.v1.TuningService (the SageMaker operations) and amt.v1.WorkerService over gRPC,\n"
      "SageMaker's own AWS JSON 1.1 API over HTTP for boto3 and the aws cli (--http-port),\n"
      "keeps every job in SQLite under --data-dir, and starts a local amt-worker unless told not "
      "to."};
  app.add_option("--host", options.host, "Address to listen on (loopback by default)")
      ->capture_default_str();
  app.add_option("--port", options.port, "Port to listen on; 0 picks a free one (printed at start)")
      ->capture_default_str();
  std::optional<int> http_port;
  app.add_option("--http-port", http_port,
                 "Port of the AWS JSON 1.1 gateway (boto3: endpoint_url=http://HOST:PORT); default "
                 "7071, or a free one when --port is 0; -1 serves no HTTP");
  double http_idle_timeout = 60;
  app.add_option("--http-idle-timeout", http_idle_timeout,
                 "Seconds an HTTP connection may stay without a request before it is closed")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--http-max-connections", options.http.max_connections,
                 "Open HTTP connections at most; more are closed as soon as they are accepted")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--http-max-body-bytes", options.http.max_body_bytes,
                 "Largest HTTP request body; larger ones get 413 SerializationException")
      ->capture_default_str();
  app.add_option("--data-dir", options.data_dir, "State folder: amt.db, s3/, jobs/, worker.log")
      ->capture_default_str();
  app.add_flag(
      "--no-local-worker", no_local_worker,
      "Do not start a local amt-worker; workers join with amt-worker --orchestrator HOST:PORT");
  app.add_option("--slots", options.local_worker_slots,
                 "Training jobs the local worker runs at once (0: number of CPUs)")
      ->capture_default_str();
  app.add_option("--worker-binary", options.worker_binary,
                 "amt-worker executable (default: next to amtd)");
  app.add_option("--time-scale", options.orchestrator.time_scale,
                 "Multiplies SageMaker's waits (120 s stop grace, MaxRuntimeInSeconds, worker-lost "
                 "timeout); 0.01 makes them 100x shorter")
      ->capture_default_str();
  app.add_option("--stop-grace", options.orchestrator.stop_grace_seconds,
                 "Seconds between SIGTERM and SIGKILL when a job is stopped (before --time-scale)")
      ->capture_default_str();
  app.add_option(
         "--worker-lost-timeout", options.orchestrator.worker_lost_timeout_seconds,
         "Seconds a running job may go without its worker before it fails as RetryableError")
      ->capture_default_str();
  app.add_option(
      "--image-map", options.image_map_file,
      "JSON file mapping TrainingImage URIs to local commands (see examples/image-map.json)");
  app.add_option("--s3-root", options.s3_root, "Folder standing for S3 (default: DATA_DIR/s3)");
  using Reference = amt::stopping::MedianRuleOptions::Reference;
  const std::map<std::string, Reference> references = {
      {"finished", Reference::kCompletedOrStoppedJobs},
      {"completed", Reference::kCompletedJobs},
      {"all", Reference::kAllPreviousJobs}};
  app.add_option("--median-reference", options.orchestrator.early_stopping.median_rule.reference,
                 "AUTO early stopping: which previous jobs form the median: finished (Completed or "
                 "Stopped), completed (Completed only) or all (running ones too)")
      ->transform(CLI::CheckedTransformer(references).description(""))
      ->type_name("finished|completed|all")
      ->default_str("finished");
  app.add_option("--median-min-jobs",
                 options.orchestrator.early_stopping.median_rule.min_reference_jobs,
                 "AUTO early stopping: reference jobs needed before the rule may stop a job")
      ->capture_default_str();
  app.add_flag(
      "--median-compare-best", options.orchestrator.early_stopping.median_rule.compare_best_so_far,
      "AUTO early stopping: compare the job's best value so far instead of its current one");
  app.add_option("--median-grace-epochs",
                 options.orchestrator.early_stopping.median_rule.grace_epochs,
                 "AUTO early stopping: the first epochs of each job that are never compared "
                 "(0: compare from epoch 1, the literal reading of SageMaker's \"after each "
                 "epoch\"; 2 protects slow starters, see bench/README.md)")
      ->capture_default_str();
  app.add_option("--hyperband-eta", options.orchestrator.early_stopping.hyperband_reduction_factor,
                 "Hyperband: reduction factor; a job continues at a rung when in the top 1/eta")
      ->capture_default_str();
  app.add_option("--hyperband-brackets", options.orchestrator.early_stopping.hyperband_brackets,
                 "Hyperband: number of brackets (1 = plain asynchronous successive halving)")
      ->capture_default_str();
  app.add_option("--spot-mean-seconds", options.orchestrator.spot.mean_seconds_to_interruption,
                 "Managed spot simulation: mean training seconds before a spot job is interrupted "
                 "(SageMaker seconds, scaled by --time-scale); 0: never")
      ->capture_default_str();
  app.add_option("--spot-max-interruptions", options.orchestrator.spot.max_interruptions,
                 "Managed spot simulation: interruptions per training job at most")
      ->capture_default_str();
  app.add_option("--spot-discount", options.orchestrator.spot.discount,
                 "Managed spot simulation: BillableTimeInSeconds = training x (1 - discount)")
      ->capture_default_str();
  app.add_option("--spot-seed", options.orchestrator.spot_seed,
                 "Managed spot simulation: seed of the interruption times (same seed, same run)")
      ->capture_default_str();
  app.add_flag("--hyperband-stop-last-epoch",
               options.orchestrator.early_stopping.hyperband_stop_last_epoch,
               "Hyperband: stop a job reaching MaxResource even at its own last epoch (it ends "
               "Stopped); by default it ends by itself, Completed");
  app.add_option(
         "--sqlite-sync", options.sqlite_sync,
         "full: every acknowledged change is fsynced (survives power loss); normal: "
         "survives kill -9 of amtd only (no fsync per commit; on a fast disk it gains little)")
      ->capture_default_str();
  app.add_option("--region", options.orchestrator.arn.region, "Region written into ARNs")
      ->capture_default_str();
  app.add_option("--account", options.orchestrator.arn.account, "Account id written into ARNs")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  options.start_local_worker = !no_local_worker;
  options.http.idle_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(http_idle_timeout * 1000));

  std::signal(SIGPIPE, SIG_IGN);  // a closed stdout or client must not kill amtd
  // Block SIGINT/SIGTERM in every thread (gRPC's included), then wait for them here.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  options.http_port = http_port.value_or(options.port == 0 ? 0 : 7071);
  // A reader of our stdout or a client going away must never end amtd.
  std::signal(SIGPIPE, SIG_IGN);
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
  std::cout << banner << std::endl;
  int sig = 0;
  sigwait(&signals, &sig);
  std::cerr << "amtd: shutting down\n";
  (*daemon)->Shutdown();
  return 0;
}
