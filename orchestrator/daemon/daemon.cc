#include "orchestrator/daemon/daemon.h"

#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>

#include "orchestrator/api/loop.h"
#include "orchestrator/api/sagemaker_api.h"
#include "orchestrator/api/tuning_service.h"
#include "orchestrator/api/worker_service.h"
#include "orchestrator/core/orchestrator.h"
#include "orchestrator/gateway/aws_json.h"
#include "orchestrator/gateway/http_server.h"
#include "orchestrator/store/store.h"

extern char** environ;

namespace amt::daemon {
namespace {

namespace fs = std::filesystem;

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// Starts the local worker with posix_spawn (amtd may be large; spawn does not copy it), its
// output going to <data_dir>/worker.log.
absl::StatusOr<pid_t> SpawnWorker(const std::vector<std::string>& argv,
                                  const std::string& log_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // The worker must receive signals: amtd's main thread blocks SIGINT/SIGTERM for sigwait.
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  // Its own process group: a Ctrl-C meant for `amt run` must not reach the worker directly (amt
  // run turns it into a Stop request and the worker stops the jobs the SageMaker way).
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, cargv[0], &actions, &attr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return absl::FailedPreconditionError("cannot start " + argv[0] + ": " + std::strerror(rc));
  }
  return pid;
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

class DaemonImpl final : public Daemon {
 public:
  ~DaemonImpl() override { Shutdown(); }

  absl::Status Init(const DaemonOptions& options) {
    options_ = options;
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
    if (options.start_local_worker) return StartLocalWorker(options);
    return absl::OkStatus();
  }

  std::string endpoint() const override { return endpoint_; }
  std::string http_endpoint() const override { return http_endpoint_; }

  void Shutdown() override {
    if (shut_down_) return;
    shut_down_ = true;
    // Stop listening first, so reports of jobs ended by the shutdown itself are not taken for
    // real outcomes: jobs that were running stay InProgress in the store and are settled on the
    // next start (their worker re-adopts them, or they fail as RetryableError).
    if (http_server_) http_server_->Stop();
    if (tuning_service_) tuning_service_->Shutdown();
    if (server_) server_->Shutdown(std::chrono::system_clock::now());
    if (worker_pid_ > 0) {
      ::kill(worker_pid_, SIGTERM);  // amt-worker stops its jobs on SIGTERM and exits
      int status = 0;
      ::waitpid(worker_pid_, &status, 0);
      worker_pid_ = 0;
    }
    if (loop_) {
      // The orchestrator cancels its timers on destruction: both go on the loop, in that order.
      loop_->Call([this] {
        orchestrator_.reset();
        timers_.reset();
      });
      loop_->Stop();
    }
  }

 private:
  // The orchestrator's options: the caller's, completed (S3 root, image map, seeds, log) and
  // checked.
  absl::StatusOr<core::OrchestratorOptions> OrchestratorOptionsFor(const DaemonOptions& options) {
    core::OrchestratorOptions orch = options.orchestrator;
    orch.launch.s3_root =
        options.s3_root.empty() ? data_dir_ + "/s3" : fs::absolute(options.s3_root).string();
    orch.launch.is_executable = IsExecutableFile;
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
    loop_ = std::make_unique<api::Loop>();
    timers_ = std::make_unique<api::AsioTimers>(*loop_, clock_);
    orchestrator_ = std::make_unique<core::Orchestrator>(orch, *store_, clock_, *timers_);
    loop_->Start();
    if (auto s = loop_->Call([this] { return orchestrator_->Load(); }); !s.ok()) return s;
    return absl::OkStatus();
  }

  // The SageMaker API and the gRPC server (TuningService, WorkerService).
  absl::Status StartGrpc(const DaemonOptions& options) {
    api_ = std::make_unique<api::SageMakerApi>(*loop_, *orchestrator_);
    tuning_service_ = std::make_unique<api::TuningServiceImpl>(*api_);
    worker_service_ = std::make_unique<api::WorkerServiceImpl>(*loop_, *orchestrator_);
    grpc::ServerBuilder builder;
    int selected_port = 0;
    builder.AddListeningPort(options.host + ":" + std::to_string(options.port),
                             grpc::InsecureServerCredentials(), &selected_port);
    builder.RegisterService(tuning_service_.get());
    builder.RegisterService(worker_service_.get());
    builder.SetMaxReceiveMessageSize(64 << 20);
    server_ = builder.BuildAndStart();
    if (server_ == nullptr || selected_port == 0) {
      return absl::FailedPreconditionError("cannot listen on " + options.host + ":" +
                                           std::to_string(options.port) + " (in use?)");
    }
    endpoint_ = options.host + ":" + std::to_string(selected_port);
    return absl::OkStatus();
  }

  // The HTTP server, one handler per AWS protocol.
  absl::Status StartHttp(const DaemonOptions& options) {
    gateway::HttpServerOptions http = options.http;
    http.host = options.host;
    http.port = options.http_port;
    if (!http.log) {
      http.log = [](std::string_view message) { std::cerr << "amtd: " << message << "\n"; };
    }
    // One handler per AWS protocol; S3, CloudWatch Logs, ... join SageMaker's here.
    std::vector<std::unique_ptr<gateway::ProtocolHandler>> handlers;
    handlers.push_back(std::make_unique<gateway::SageMakerJsonHandler>(*api_));
    auto server = gateway::HttpServer::Start(http, std::move(handlers));
    if (!server.ok()) return server.status();
    http_server_ = std::move(*server);
    http_endpoint_ = "http://" + options.host + ":" + std::to_string(http_server_->port());
    return absl::OkStatus();
  }

  // The local amt-worker, a process of its own.
  absl::Status StartLocalWorker(const DaemonOptions& options) {
    const std::string binary =
        options.worker_binary.empty() ? ExecutableDir() + "/amt-worker" : options.worker_binary;
    int slots = options.local_worker_slots;
    if (slots <= 0) slots = std::max(1u, std::thread::hardware_concurrency());
    auto pid = SpawnWorker(
        {binary, "--orchestrator", endpoint_, "--slots", std::to_string(slots), "--work-dir",
         data_dir_ + "/jobs", "--worker-id", "local", "--exit-with-parent"},
        data_dir_ + "/worker.log");
    if (!pid.ok()) return pid.status();
    worker_pid_ = *pid;
    return absl::OkStatus();
  }

  DaemonOptions options_;
  std::string data_dir_;
  SystemClock clock_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<api::Loop> loop_;
  std::unique_ptr<api::AsioTimers> timers_;
  std::unique_ptr<core::Orchestrator> orchestrator_;
  std::unique_ptr<api::SageMakerApi> api_;
  std::unique_ptr<api::TuningServiceImpl> tuning_service_;
  std::unique_ptr<api::WorkerServiceImpl> worker_service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<gateway::HttpServer> http_server_;
  std::string endpoint_;
  std::string http_endpoint_;
  pid_t worker_pid_ = 0;
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
