#include "orchestrator/daemon/daemon.h"

#include <grpcpp/grpcpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/ip/address.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>

#include "common/command.h"
#include "common/credentials.h"
#include "orchestrator/api/loop.h"
#include "orchestrator/api/sagemaker_api.h"
#include "orchestrator/api/tuning_service.h"
#include "orchestrator/api/worker_service.h"
#include "orchestrator/core/orchestrator.h"
#include "orchestrator/daemon/local_worker.h"
#include "orchestrator/executor/slurm_executor.h"
#include "orchestrator/gateway/aws_json.h"
#include "orchestrator/gateway/certificate_authority.h"
#include "orchestrator/gateway/cloudwatch/cloudwatch_metrics.h"
#include "orchestrator/gateway/http_server.h"
#include "orchestrator/gateway/iam.h"
#include "orchestrator/gateway/logs/cloudwatch_logs.h"
#include "orchestrator/gateway/s3/s3_rest.h"
#include "orchestrator/gateway/sts.h"
#include "orchestrator/gateway/unserved_query.h"
#include "orchestrator/gateway/web_page.h"
#include "orchestrator/s3/object_store.h"
#include "orchestrator/store/store.h"

namespace amt::daemon {
namespace {

namespace fs = std::filesystem;

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// A data dir whose job folders outlived its database (amt.db deleted, or truncated to nothing)
// would start empty and forget every job without a word: refused, unless --init.
absl::Status CheckStateNotLost(const std::string& data_dir) {
  std::error_code ec;
  const fs::path jobs = fs::path(data_dir) / "jobs";
  if (!fs::is_directory(jobs, ec) || fs::is_empty(jobs, ec)) return absl::OkStatus();
  const fs::path db = fs::path(data_dir) / store::kDatabaseFileName;
  const bool missing = !fs::exists(db, ec);
  const auto size = [&ec](const fs::path& p) {
    return fs::exists(p, ec) ? fs::file_size(p, ec) : 0;
  };
  // In WAL mode committed pages may still sit in amt.db-wal.
  if (!missing && size(db) + size(fs::path(db.string() + "-wal")) > 0) return absl::OkStatus();
  return absl::FailedPreconditionError(
      "the data directory " + data_dir + " has training job folders (jobs/) but its state " +
      "database " + db.string() + (missing ? " is missing" : " is empty") +
      ": starting would forget every job. Restore amt.db, or start afresh with --init.");
}

// The local worker removes the folder of every job that succeeded, so jobs/ alone would not show
// that the data dir has a history: a marker in it does (CheckStateNotLost), written once the
// database is open. A failure to write it is not fatal (the check then relies on job folders).
void MarkJobsFolder(const std::string& data_dir) {
  std::error_code ec;
  const fs::path jobs = fs::path(data_dir) / "jobs";
  fs::create_directories(jobs, ec);
  const fs::path marker = jobs / ".amtd-state";
  if (fs::exists(marker, ec)) return;
  std::ofstream(marker) << "The state of the jobs of this data dir is in ../amt.db: amtd refuses "
                           "to start without it (amtd --init starts afresh).\n";
}

class DaemonImpl final : public Daemon {
 public:
  ~DaemonImpl() override { Shutdown(); }

  absl::Status Init(const DaemonOptions& options) {
    options_ = options;
    if (auto s = LoadCredentials(); !s.ok()) return s;
    std::error_code ec;
    fs::create_directories(options.data_dir, ec);
    if (ec)
      return absl::InternalError("cannot create data dir " + options.data_dir + ": " +
                                 ec.message());
    data_dir_ = fs::absolute(options.data_dir).string();
    auto orch = OrchestratorOptionsFor(options);
    if (!orch.ok()) return orch.status();
    if (auto s = StartCore(options, *orch); !s.ok()) return s;
    if (auto s = StartGrpc(options); !s.ok()) return s;
    if (options.http_port >= 0) {
      if (auto s = StartHttp(options); !s.ok()) return s;
    }
    if (options.start_local_worker && options.executor == "local") {
      return StartLocalWorker(options);
    }
    return absl::OkStatus();
  }

  std::string endpoint() const override { return endpoint_; }
  std::string http_endpoint() const override { return http_endpoint_; }
  std::string proxy_ca_file() const override { return proxy_ca_file_; }
  std::string worker_socket() const override {
    return worker_endpoint_.rfind("unix:", 0) == 0 ? worker_endpoint_ : "";
  }

  void Shutdown() override {
    if (shut_down_) return;
    shut_down_ = true;
    // Stop listening first, so reports of jobs ended by the shutdown itself are not taken for
    // real outcomes: jobs that were running stay InProgress in the store and are settled on the
    // next start (their worker re-adopts them, or they fail as RetryableError).
    if (http_server_) http_server_->Stop();
    if (tuning_service_) tuning_service_->Shutdown();
    if (server_) server_->Shutdown(std::chrono::system_clock::now());
    if (local_worker_) local_worker_->Stop();  // it stops its jobs on SIGTERM and exits
    if (loop_) {
      // The orchestrator cancels its timers on destruction: both go on the loop, in that order.
      loop_->Call([this] {
        if (orchestrator_) orchestrator_->FlushDeferred();
        orchestrator_.reset();
        timers_.reset();
      });
      loop_->Stop();
    }
    // Its Slurm jobs keep running; the next amtd of this data dir takes them back.
    slurm_.reset();
  }

 private:
  // The folder standing for S3: what jobs read and write, and what the S3 handler serves.
  std::string S3RootFor(const DaemonOptions& options) const {
    return options.s3_root.empty() ? data_dir_ + "/s3" : fs::absolute(options.s3_root).string();
  }

  // The orchestrator's options: the caller's, completed (S3 root, image map, seeds, log) and
  // checked.
  absl::StatusOr<core::OrchestratorOptions> OrchestratorOptionsFor(const DaemonOptions& options) {
    core::OrchestratorOptions orch = options.orchestrator;
    orch.launch.s3_root = S3RootFor(options);
    orch.launch.is_executable = IsExecutableFile;
    orch.launch.containers = options.container_runtime != "none";
    if (orch.launch.script_runner.empty()) {
      orch.launch.script_runner = ExecutableDir() + "/amt-script-runner";
    }
    if (!options.image_map_file.empty()) {
      std::ifstream in(options.image_map_file);
      if (!in) return absl::InvalidArgumentError("cannot read image map " + options.image_map_file);
      std::stringstream text;
      text << in.rdbuf();
      const std::string map_dir = fs::absolute(options.image_map_file).parent_path().string();
      auto map = core::ParseImageMap(text.str(), map_dir, ExecutableDir());
      if (!map.ok()) return map.status();
      orch.launch.image_map = std::move(*map);
    }
    if (!orch.seed_source) orch.seed_source = [] { return std::random_device{}(); };
    if (!orch.log) {
      orch.log = [](const std::string& message) { std::cerr << "amtd: " << message << std::endl; };
    }
    const core::EarlyStoppingOptions& early = orch.early_stopping;
    if (auto s = stopping::ValidateMedianRuleOptions(early.median_rule); !s.ok()) return s;
    if (early.hyperband_reduction_factor < 2 || early.hyperband_brackets < 1) {
      return absl::InvalidArgumentError(
          "--hyperband-eta must be >= 2 and --hyperband-brackets >= 1");
    }
    if (auto s = spot::ValidateSpotOptions(orch.spot); !s.ok()) return s;
    return orch;
  }

  // The store (which locks the data dir), the loop, timers and the orchestrator, loaded.
  absl::Status StartCore(const DaemonOptions& options, const core::OrchestratorOptions& orch) {
    if (options.sqlite_sync != "full" && options.sqlite_sync != "normal") {
      return absl::InvalidArgumentError("--sqlite-sync must be full or normal");
    }
    if (!options.init) {
      if (auto s = CheckStateNotLost(data_dir_); !s.ok()) return s;
    }
    store::SqliteOptions sqlite;
    sqlite.full_sync = options.sqlite_sync == "full";
    auto store = store::OpenSqliteStore(data_dir_, sqlite);
    if (!store.ok()) return store.status();
    store_ = std::move(*store);
    MarkJobsFolder(data_dir_);
    // Before the loop exists: a refusal here leaves nothing to stop.
    if (options.executor == "slurm") {
      if (auto s = StartSlurm(options); !s.ok()) return s;
    } else if (options.executor != "local") {
      return absl::InvalidArgumentError("--executor must be local or slurm");
    }
    loop_ = std::make_unique<api::Loop>();
    timers_ = std::make_unique<api::AsioTimers>(*loop_, clock_);
    orchestrator_ =
        std::make_unique<core::Orchestrator>(orch, *store_, clock_, *timers_, slurm_.get());
    loop_->Start();
    if (auto s = loop_->Call([this] { return orchestrator_->Load(); }); !s.ok()) return s;
    if (slurm_ != nullptr) {
      // The Slurm jobs an earlier amtd of this data dir submitted, taken back before any worker
      // can connect (their workers reconnect by themselves once they run).
      auto recovered = slurm_->Recover();
      if (!recovered.ok()) return recovered.status();
      loop_->Call([this, &recovered] {
        // Nothing is connected yet, so none is refused.
        for (auto& r : *recovered) (void)orchestrator_->OnWorkerConnected(r.hello, r.link);
      });
    }
    return absl::OkStatus();
  }

  // The Slurm executor, its settings completed; FailedPrecondition when Slurm does not answer.
  absl::Status StartSlurm(const DaemonOptions& options) {
    executor::SlurmOptions slurm = options.slurm;
    if (slurm.worker_binary.empty()) {
      slurm.worker_binary =
          options.worker_binary.empty() ? ExecutableDir() + "/amt-worker" : options.worker_binary;
    }
    if (slurm.orchestrator_address.empty()) {
      // On this machine the data dir's Unix socket (known before the port is); other nodes
      // need --slurm-orchestrator-address HOST:PORT.
      slurm.orchestrator_address = "unix:" + WorkerSocketPath();
    }
    if (slurm.work_dir.empty()) slurm.work_dir = data_dir_ + "/jobs";
    if (slurm.output_dir.empty()) slurm.output_dir = data_dir_ + "/slurm";
    if (slurm.owner.empty()) {
      char owner[32];
      std::snprintf(owner, sizeof(owner), "%016zx", std::hash<std::string>{}(data_dir_));
      slurm.owner = owner;
    }
    if (slurm.credentials_file.empty() && !options.credentials_file.empty()) {
      slurm.credentials_file = fs::absolute(options.credentials_file).string();
    }
    if (!options.slurm_bin_dir.empty()) {
      slurm.sbatch = options.slurm_bin_dir + "/sbatch";
      slurm.squeue = options.slurm_bin_dir + "/squeue";
      slurm.scancel = options.slurm_bin_dir + "/scancel";
      slurm.srun = options.slurm_bin_dir + "/srun";
      slurm.scontrol = options.slurm_bin_dir + "/scontrol";
    }
    std::error_code ec;
    fs::create_directories(slurm.output_dir, ec);
    fs::create_directories(slurm.work_dir, ec);
    command_runner_ = NewProcessCommandRunner();
    executor::SlurmExecutorHooks hooks;
    hooks.post = [this](std::function<void()> task) { loop_->Post(std::move(task)); };
    hooks.ended = [this](const std::string& worker_id, const core::WorkerLink* link,
                         const std::string& job, int attempt, const core::ProvisionedEnd& end) {
      if (orchestrator_)
        orchestrator_->OnProvisionedWorkerEnded(worker_id, link, job, attempt, end);
    };
    hooks.log = [](const std::string& message) { std::cerr << "amtd: slurm: " << message << "\n"; };
    auto started =
        executor::SlurmExecutor::Start(std::move(slurm), *command_runner_, std::move(hooks));
    if (!started.ok()) return started.status();
    slurm_ = std::move(*started);
    return absl::OkStatus();
  }

  // The SageMaker API and the gRPC server (TuningService, WorkerService).
  absl::Status StartGrpc(const DaemonOptions& options) {
    api_ = std::make_unique<api::SageMakerApi>(*loop_, *orchestrator_);
    const api::GrpcAuth auth(options_.http.credentials);
    tuning_service_ = std::make_unique<api::TuningServiceImpl>(*api_, auth);
    worker_service_ = std::make_unique<api::WorkerServiceImpl>(*loop_, *orchestrator_, auth);
    grpc::ServerBuilder builder;
    int selected_port = 0;
    builder.AddListeningPort(options.host + ":" + std::to_string(options.port),
                             grpc::InsecureServerCredentials(), &selected_port);
    worker_endpoint_ = LocalWorkerEndpoint(builder);
    builder.RegisterService(tuning_service_.get());
    builder.RegisterService(worker_service_.get());
    builder.SetMaxReceiveMessageSize(64 << 20);
    // Pings on quiet connections, so a worker whose machine vanished (no FIN ever comes) is seen
    // gone within about 30 s: its id is free again for the worker restarted there, which amtd
    // refuses while the old stream seems alive (Orchestrator::OnWorkerConnected).
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 20000);
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
    server_ = builder.BuildAndStart();
    if (server_ == nullptr || selected_port == 0) {
      return absl::FailedPreconditionError("cannot listen on " + options.host + ":" +
                                           std::to_string(options.port) + " (in use?)");
    }
    endpoint_ = options.host + ":" + std::to_string(selected_port);
    if (worker_endpoint_.empty()) worker_endpoint_ = endpoint_;
    return absl::OkStatus();
  }

  // Where workers on this machine reach amtd: a Unix socket in the data dir, the same address
  // for every amtd of that dir whatever its port, so a worker that outlived one finds the next
  // (the local worker, or one started by hand with --orchestrator unix:<data-dir>/amtd.sock).
  // A data dir whose socket path does not fit in sockaddr_un (107 bytes) gets one in /tmp named
  // by a hash of the data dir's path: as stable, and known before the TCP port is (the Slurm
  // executor writes it into batch scripts before the server starts).
  std::string WorkerSocketPath() const {
    const std::string socket = data_dir_ + "/amtd.sock";
    if (socket.size() <= 107) return socket;
    char path[64];
    std::snprintf(path, sizeof(path), "/tmp/amtd-%016zx.sock", std::hash<std::string>{}(data_dir_));
    return path;
  }

  std::string LocalWorkerEndpoint(grpc::ServerBuilder& builder) const {
    const std::string socket = WorkerSocketPath();
    std::error_code ec;
    fs::remove(socket, ec);  // a stale one of a killed amtd; the data-dir lock is ours
    builder.AddListeningPort("unix:" + socket, grpc::InsecureServerCredentials());
    return "unix:" + socket;
  }

  // The credentials file, and the refusal to serve a non-loopback address without one.
  absl::Status LoadCredentials() {
    if (!options_.credentials_file.empty()) {
      auto credentials = auth::Credentials::Load(options_.credentials_file);
      if (!credentials.ok()) return credentials.status();
      options_.http.credentials =
          std::make_shared<const auth::Credentials>(std::move(*credentials));
      return absl::OkStatus();
    }
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address(options_.host, ec);
    const bool loopback = options_.host == "localhost" || (!ec && address.is_loopback());
    if (loopback || options_.insecure) return absl::OkStatus();
    return absl::FailedPreconditionError(
        "refusing to listen on " + options_.host +
        " without --credentials: whoever reaches it can run any command as this user (a "
        "TrainingImage names an executable). Give --credentials FILE (an AWS credentials file "
        "whose keys clients must sign with), or --insecure to accept that.");
  }

  // The HTTP server, one handler per AWS protocol.
  absl::Status StartHttp(const DaemonOptions& options) {
    gateway::HttpServerOptions http = options_.http;  // with the credentials loaded
    http.host = options.host;
    http.port = options.http_port;
    if (!http.log) {
      http.log = [](std::string_view message) { std::cerr << "amtd: " << message << "\n"; };
    }
    // Uploads' bodies go to files here as they arrive (S3RestHandler::SpoolsBody); what a killed
    // amtd left half-written is of no use to anyone.
    http.spool_dir = data_dir_ + "/http-spool";
    std::error_code ec;
    fs::remove_all(http.spool_dir, ec);
    fs::create_directories(http.spool_dir, ec);
    if (ec) {
      return absl::FailedPreconditionError("cannot make " + http.spool_dir + ": " + ec.message());
    }
    fs::permissions(http.spool_dir, fs::perms::owner_all, ec);
    if (options.https_proxy) {
      auto ca = gateway::CertificateAuthority::LoadOrCreate(data_dir_);
      if (!ca.ok()) return ca.status();
      proxy_ca_file_ = (*ca)->certificate_path();
      http.proxy_ca = std::move(*ca);
    }
    // One handler per AWS protocol; S3, STS, ... join these here.
    std::vector<std::unique_ptr<gateway::ProtocolHandler>> handlers;
    handlers.push_back(std::make_unique<gateway::SageMakerJsonHandler>(*api_));
    handlers.push_back(
        std::make_unique<gateway::CloudWatchLogsHandler>(*api_, options.orchestrator.arn));
    handlers.push_back(std::make_unique<gateway::CloudWatchMetricsHandler>(*api_));
    handlers.push_back(std::make_unique<gateway::StsHandler>(options.orchestrator.arn));
    handlers.push_back(std::make_unique<gateway::IamHandler>(options.orchestrator.arn));
    // After every query service served: the rest of that protocol gets its XML InvalidAction.
    handlers.push_back(std::make_unique<gateway::UnservedQueryHandler>());
    // The page: before S3, which would take /ui/... for a bucket.
    if (options.ui) handlers.push_back(std::make_unique<gateway::WebPageHandler>(api_.get()));
    // Last: it takes unsigned requests whose path names a bucket.
    handlers.push_back(
        std::make_unique<gateway::S3RestHandler>(s3::ObjectStore(S3RootFor(options))));
    auto server = gateway::HttpServer::Start(http, std::move(handlers));
    if (!server.ok()) return server.status();
    http_server_ = std::move(*server);
    http_endpoint_ = "http://" + options.host + ":" + std::to_string(http_server_->port());
    return absl::OkStatus();
  }

  // The local amt-worker, a process of its own (local_worker.h): the one an earlier amtd left
  // running, or a new one.
  absl::Status StartLocalWorker(const DaemonOptions& options) {
    LocalWorkerOptions worker;
    worker.binary =
        options.worker_binary.empty() ? ExecutableDir() + "/amt-worker" : options.worker_binary;
    worker.endpoint = worker_endpoint_;
    worker.data_dir = data_dir_;
    worker.slots = options.local_worker_slots > 0
                       ? options.local_worker_slots
                       : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    worker.orphan_timeout_seconds = options.local_worker_orphan_timeout_seconds;
    worker.keep_job_dirs = options.keep_job_dirs;
    worker.container_runtime = options.container_runtime;
    worker.container_resource_scale = options.container_resource_scale;
    worker.gpus = options.gpus;
    worker.gpu_share = options.gpu_share;
    if (!options.credentials_file.empty()) {
      worker.credentials_file = fs::absolute(options.credentials_file).string();
    }
    worker.log = [](const std::string& message) { std::cerr << "amtd: " << message << "\n"; };
    auto started = LocalWorker::StartOrAdopt(worker);
    if (!started.ok()) return started.status();
    local_worker_ = std::move(*started);
    return absl::OkStatus();
  }

  DaemonOptions options_;
  std::string data_dir_;
  std::string proxy_ca_file_;  // "" when the HTTPS proxy is off
  SystemClock clock_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<api::Loop> loop_;
  std::unique_ptr<api::AsioTimers> timers_;
  std::unique_ptr<CommandRunner> command_runner_;
  std::unique_ptr<executor::SlurmExecutor> slurm_;  // --executor slurm; outlives orchestrator_
  std::unique_ptr<core::Orchestrator> orchestrator_;
  std::unique_ptr<api::SageMakerApi> api_;
  std::unique_ptr<api::TuningServiceImpl> tuning_service_;
  std::unique_ptr<api::WorkerServiceImpl> worker_service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<gateway::HttpServer> http_server_;
  std::string endpoint_;
  std::string http_endpoint_;
  std::string worker_endpoint_;  // the local worker's way to amtd
  std::unique_ptr<LocalWorker> local_worker_;
  bool shut_down_ = false;
};

}  // namespace

std::string ExecutableDir() {
  std::error_code ec;
  const auto exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Start(const DaemonOptions& options) {
  auto daemon = std::make_unique<DaemonImpl>();
  if (auto s = daemon->Init(options); !s.ok()) return s;
  return daemon;
}

}  // namespace amt::daemon
