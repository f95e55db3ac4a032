// `amt run`: an embedded orchestrator (amt::daemon::Daemon on a free loopback port, state in
// --data-dir) with its local amt-worker, one job file, a live view, and an exit code.
#include "cli/run.h"

#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "amt/v1/tuning.grpc.pb.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "cli/input.h"
#include "cli/progress.h"
#include "common/json.h"
#include "orchestrator/daemon/daemon.h"

namespace amt::cli {
namespace {

// The most instances a training job of `request` runs (InstanceCount of its definitions).
int MostInstances(const v1::CreateHyperParameterTuningJobRequest& request) {
  std::vector<const v1::HyperParameterTrainingJobDefinition*> definitions;
  if (request.has_training_job_definition())
    definitions.push_back(&request.training_job_definition());
  for (const auto& definition : request.training_job_definitions()) {
    definitions.push_back(&definition);
  }
  int most = 1;
  for (const auto* definition : definitions) {
    const auto& h = definition->hyper_parameter_tuning_resource_config();
    most = std::max({most, definition->resource_config().instance_count(), h.instance_count()});
    for (const auto& config : h.instance_configs()) most = std::max(most, config.instance_count());
  }
  return most;
}

namespace fs = std::filesystem;

constexpr int kMaxNameTries = 1000;

// What Autotune chose, as the tuning job describes it: the ranges, the AutoParameters kept static,
// the budget, early stopping, convergence and retries.
std::string AutotuneText(const v1::DescribeHyperParameterTuningJobResponse& d) {
  const auto& config = d.hyper_parameter_tuning_job_config();
  std::ostringstream out;
  const auto ranges = [&out](const v1::ParameterRanges& r,
                             const google::protobuf::Map<std::string, std::string>& statics) {
    for (const auto& range : r.integer_parameter_ranges()) {
      out << "  " << range.name() << ": integer " << range.min_value() << ".." << range.max_value()
          << " " << range.scaling_type() << "\n";
    }
    for (const auto& range : r.continuous_parameter_ranges()) {
      out << "  " << range.name() << ": " << range.min_value() << ".." << range.max_value() << " "
          << range.scaling_type() << "\n";
    }
    for (const auto& range : r.categorical_parameter_ranges()) {
      out << "  " << range.name() << ":";
      for (const auto& value : range.values()) out << " " << value;
      out << "\n";
    }
    for (const auto& parameter : r.auto_parameters()) {
      if (statics.contains(parameter.name())) {
        out << "  " << parameter.name() << " = " << statics.at(parameter.name())
            << " (static: not tunable from its hint)\n";
      }
    }
  };
  out << "Autotune chose:\n";
  if (d.training_job_definitions_size() == 0) {
    ranges(config.parameter_ranges(), d.training_job_definition().static_hyper_parameters());
  }
  for (const auto& definition : d.training_job_definitions()) {
    out << " " << definition.definition_name() << ":\n";
    ranges(definition.hyper_parameter_ranges(), definition.static_hyper_parameters());
  }
  out << "  " << config.resource_limits().max_number_of_training_jobs() << " training jobs, early "
      << "stopping " << config.training_job_early_stopping_type() << ", CompleteOnConvergence "
      << config.tuning_job_completion_criteria().convergence_detected().complete_on_convergence()
      << "\n";
  return out.str();
}

// "objective Minimize val:loss", or with TrainingJobDefinitions each definition's:
// "objectives Minimize a: val:loss, b: rmse".
std::string ObjectiveText(const v1::CreateHyperParameterTuningJobRequest& request) {
  if (request.training_job_definitions_size() == 0) {
    const auto& objective =
        request.hyper_parameter_tuning_job_config().hyper_parameter_tuning_job_objective();
    return "objective " + objective.type() + " " + objective.metric_name();
  }
  std::string text =
      "objectives " + request.training_job_definitions(0).tuning_objective().type() + " ";
  for (int i = 0; i < request.training_job_definitions_size(); ++i) {
    const auto& definition = request.training_job_definitions(i);
    text += (i > 0 ? ", " : "") + definition.definition_name() + ": " +
            definition.tuning_objective().metric_name();
  }
  return text;
}

// A free variant of `name` (name, name-2, name-3, ...) within `max_length`, given an exists check.
std::string FreeName(const std::string& name, size_t max_length,
                     const std::function<bool(const std::string&)>& exists) {
  if (!exists(name)) return name;
  for (int i = 2; i < kMaxNameTries; ++i) {
    const std::string suffix = "-" + std::to_string(i);
    std::string candidate = name.substr(0, max_length - suffix.size()) + suffix;
    if (!exists(candidate)) return candidate;
  }
  return name;  // let the service report the conflict
}

// Ctrl-C stops the job the SageMaker way (Stop*), and the view carries on until it has stopped.
class InterruptStopper {
 public:
  explicit InterruptStopper(std::function<void()> stop) : stop_(std::move(stop)) {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGUSR1);  // used to wake the thread at exit
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    thread_ = std::thread([this] {
      int sig = 0;
      while (sigwait(&set_, &sig) == 0 && sig == SIGINT) {
        std::cerr << "\namt run: stopping (Ctrl-C again to keep stopping)\n";
        stop_();
      }
    });
  }
  ~InterruptStopper() {
    pthread_kill(thread_.native_handle(), SIGUSR1);
    thread_.join();
  }

 private:
  sigset_t set_;
  std::function<void()> stop_;
  std::thread thread_;
};

// "The page: <page>#/<kind>/<name>" when the page is served.
void PrintPage(const std::string& page, const std::string& kind, const std::string& name) {
  if (!page.empty()) std::cout << "The page: " << page << "/#/" << kind << "/" << name << "\n";
}

int RunTrainingJob(v1::TuningService::Stub& stub, const std::string& endpoint,
                   v1::CreateTrainingJobRequest request, const RunOptions& options,
                   const std::string& page) {
  const auto exists = [&stub](const std::string& n) {
    grpc::ClientContext ctx;
    v1::DescribeTrainingJobRequest r;
    r.set_training_job_name(n);
    v1::DescribeTrainingJobResponse d;
    return stub.DescribeTrainingJob(&ctx, r, &d).ok();
  };
  if (!options.name.empty()) request.set_training_job_name(options.name);
  request.set_training_job_name(FreeName(request.training_job_name(), 63, exists));
  grpc::ClientContext ctx;
  v1::CreateTrainingJobResponse created;
  const auto status = stub.CreateTrainingJob(&ctx, request, &created);
  if (!status.ok()) {
    const auto error = DescribeRpcError(status, "CreateTrainingJob", endpoint);
    std::cerr << error.text;
    return error.exit_code;
  }
  const std::string name = request.training_job_name();
  std::cout << "Training job " << name << " (" << created.training_job_arn() << ")\n";
  PrintPage(page, "training-jobs", name);
  InterruptStopper stopper([&stub, name] {
    grpc::ClientContext c;
    v1::StopTrainingJobRequest r;
    r.set_training_job_name(name);
    v1::StopTrainingJobResponse none;
    (void)stub.StopTrainingJob(&c, r, &none);
  });
  grpc::ClientContext wctx;
  v1::WatchTrainingJobRequest watch;
  watch.set_training_job_name(name);
  auto reader = stub.WatchTrainingJob(&wctx, watch);
  v1::DescribeTrainingJobResponse job;
  // As the SageMaker SDK prints them: every new entry, and the current entry again when only its
  // message changed (SageMaker updates one entry per status).
  int shown = 0;
  std::string last_message;
  while (reader->Read(&job)) {
    const int count = job.secondary_status_transitions_size();
    if (count == 0) continue;
    if (count == shown &&
        job.secondary_status_transitions(count - 1).status_message() != last_message) {
      --shown;
    }
    for (; shown < count; ++shown) {
      const auto& t = job.secondary_status_transitions(shown);
      if (!options.quiet) std::cout << t.status() << " - " << t.status_message() << "\n";
    }
    last_message = job.secondary_status_transitions(count - 1).status_message();
  }
  (void)reader->Finish();
  std::cout << "\nTraining job " << name << " ended " << job.training_job_status() << "/"
            << job.secondary_status() << "\n";
  if (job.has_failure_reason()) std::cout << "FailureReason: " << job.failure_reason() << "\n";
  for (const auto& m : job.final_metric_data_list()) {
    std::cout << "  " << m.metric_name() << " = " << m.value() << "\n";
  }
  if (job.has_training_time_in_seconds()) {
    std::cout << "Training seconds: " << job.training_time_in_seconds() << "\n"
              << "Billable seconds: " << job.billable_time_in_seconds() << "\n";
    // The SageMaker Python SDK's third line for spot jobs, one decimal.
    if (job.enable_managed_spot_training() && job.training_time_in_seconds() > 0) {
      char savings[64];
      std::snprintf(savings, sizeof(savings), "Managed Spot Training savings: %.1f%%\n",
                    100.0 * (1.0 - static_cast<double>(job.billable_time_in_seconds()) /
                                       job.training_time_in_seconds()));
      std::cout << savings;
    }
  }
  return job.training_job_status() == "Completed" ? kExitSuccess : kExitNotCompleted;
}

int RunTuning(v1::TuningService::Stub& stub, const std::string& endpoint,
              v1::CreateHyperParameterTuningJobRequest request, const RunOptions& options,
              const std::string& page) {
  const auto exists = [&stub](const std::string& n) {
    grpc::ClientContext ctx;
    v1::DescribeHyperParameterTuningJobRequest r;
    r.set_hyper_parameter_tuning_job_name(n);
    v1::DescribeHyperParameterTuningJobResponse d;
    return stub.DescribeHyperParameterTuningJob(&ctx, r, &d).ok();
  };
  if (!options.name.empty()) request.set_hyper_parameter_tuning_job_name(options.name);
  request.set_hyper_parameter_tuning_job_name(
      FreeName(request.hyper_parameter_tuning_job_name(), 32, exists));
  grpc::ClientContext ctx;
  v1::CreateHyperParameterTuningJobResponse created;
  const auto status = stub.CreateHyperParameterTuningJob(&ctx, request, &created);
  if (!status.ok()) {
    const auto error = DescribeRpcError(status, "CreateHyperParameterTuningJob", endpoint);
    std::cerr << error.text;
    return error.exit_code;
  }
  const std::string name = request.hyper_parameter_tuning_job_name();
  std::cout << "Tuning job " << name << " (" << created.hyper_parameter_tuning_job_arn() << ")\n"
            << "Strategy " << request.hyper_parameter_tuning_job_config().strategy() << ", "
            << ObjectiveText(request) << "; state in " << fs::absolute(options.data_dir).string()
            << "\n";
  PrintPage(page, "tuning-jobs", name);
  if (request.has_autotune()) {
    grpc::ClientContext c;
    v1::DescribeHyperParameterTuningJobRequest r;
    r.set_hyper_parameter_tuning_job_name(name);
    v1::DescribeHyperParameterTuningJobResponse described;
    if (stub.DescribeHyperParameterTuningJob(&c, r, &described).ok()) {
      std::cout << AutotuneText(described);
    }
  }
  std::cout << "\n";
  InterruptStopper stopper([&stub, name] {
    grpc::ClientContext c;
    v1::StopHyperParameterTuningJobRequest r;
    r.set_hyper_parameter_tuning_job_name(name);
    v1::StopHyperParameterTuningJobResponse none;
    (void)stub.StopHyperParameterTuningJob(&c, r, &none);
  });
  Commands commands(stub, endpoint, std::cout, std::cerr);
  WatchOptions watch;
  watch.hyper_parameter_tuning_job_name = name;
  watch.tty = !options.quiet && ::isatty(STDOUT_FILENO) == 1;
  watch.width = TerminalWidth();
  return commands.Watch(watch);
}

// A job file read and parsed: a tuning job's request, or a training job's.
struct JobFile {
  bool is_tuning = false;
  v1::CreateHyperParameterTuningJobRequest tuning;
  v1::CreateTrainingJobRequest training;
};

// The job file of `options`, or nullopt once the reason it cannot run is printed.
std::optional<JobFile> ReadJobFile(const RunOptions& options) {
  auto text = ReadCliInputJson(options.job_file);
  if (!text.ok()) {
    std::cerr << "amt run: " << text.status().message() << "\n";
    return std::nullopt;
  }
  const auto doc = nlohmann::json::parse(*text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    std::cerr << "amt run: " << options.job_file << " is not a JSON object\n";
    return std::nullopt;
  }
  JobFile job;
  job.is_tuning =
      doc.contains("HyperParameterTuningJobName") || doc.contains("HyperParameterTuningJobConfig");
  const bool is_training = doc.contains("TrainingJobName");
  if (!job.is_tuning && !is_training) {
    std::cerr << "amt run: " << options.job_file
              << " is neither a CreateHyperParameterTuningJob nor a CreateTrainingJob request\n";
    return std::nullopt;
  }
  const auto parsed =
      job.is_tuning ? JsonToProto(*text, &job.tuning) : JsonToProto(*text, &job.training);
  if (!parsed.ok()) {
    std::cerr << "amt run: " << options.job_file << ": " << parsed.message() << "\n";
    return std::nullopt;
  }
  return job;
}

// The embedded orchestrator's options for running `job` as `options` ask.
daemon::DaemonOptions DaemonOptionsFor(const RunOptions& options, const JobFile& job) {
  daemon::DaemonOptions d;
  d.port = 0;
  d.data_dir = options.data_dir;
  d.orchestrator.time_scale = options.time_scale;
  d.orchestrator.spot.mean_seconds_to_interruption = options.spot_mean_seconds;
  d.orchestrator.spot_seed = options.spot_seed;
  d.orchestrator.spot.interrupt_after_seconds = options.spot_interrupt_after;
  d.orchestrator.spot.max_interruptions = options.spot_max_interruptions;
  // LaunchOptions and core::SetPython come with DaemonOptions (daemon.h).
  for (const std::string& value : options.python) core::SetPython(d.orchestrator.launch, value);
  d.image_map_file = options.image_map;
  if (d.image_map_file.empty()) {
    // A job file next to an image-map.json uses it, as the examples do.
    std::string path = options.job_file;
    if (path.rfind("file://", 0) == 0) path = path.substr(7);
    const fs::path beside = fs::path(path).parent_path() / "image-map.json";
    if (fs::exists(beside)) d.image_map_file = beside.string();
  }
  d.local_worker_slots = options.slots;
  if (d.local_worker_slots <= 0) {
    // A slot per instance: MaxParallelTrainingJobs jobs of the most instances at once.
    d.local_worker_slots = job.is_tuning
                               ? std::max(1, job.tuning.hyper_parameter_tuning_job_config()
                                                 .resource_limits()
                                                 .max_parallel_training_jobs()) *
                                     MostInstances(job.tuning)
                               : std::max(1, job.training.resource_config().instance_count());
  }
  d.http_port = options.http_port;
  d.ui = options.ui;
  return d;
}

// Starts the embedded orchestrator; on a free HTTP port when `d`'s is taken.
absl::StatusOr<std::unique_ptr<daemon::Daemon>> StartDaemon(daemon::DaemonOptions d) {
  auto daemon = daemon::Daemon::Start(d);
  if (!daemon.ok() && d.http_port > 0 &&
      daemon.status().message().find(":" + std::to_string(d.http_port) + " ") !=
          std::string_view::npos) {
    // The HTTP port is taken (an amtd, another amt run): any free port serves as well.
    d.http_port = 0;
    daemon = daemon::Daemon::Start(d);
  }
  return daemon;
}

}  // namespace

int RunTuningJob(const RunOptions& options) {
  std::optional<JobFile> job = ReadJobFile(options);
  if (!job) return kExitUsage;
  const daemon::DaemonOptions d = DaemonOptionsFor(options, *job);
  // Block SIGINT before any thread starts, so only InterruptStopper sees it.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  auto daemon = StartDaemon(d);
  if (!daemon.ok()) {
    std::cerr << "amt run: cannot start the orchestrator: " << daemon.status().message() << "\n";
    return kExitOtherError;
  }
  const std::string endpoint = (*daemon)->endpoint();
  auto stub =
      v1::TuningService::NewStub(grpc::CreateChannel(endpoint, grpc::InsecureChannelCredentials()));
  const std::string page = d.ui ? (*daemon)->http_endpoint() : "";
  const int code = job->is_tuning
                       ? RunTuning(*stub, endpoint, std::move(job->tuning), options, page)
                       : RunTrainingJob(*stub, endpoint, std::move(job->training), options, page);
  if (options.keep_serving && !(*daemon)->http_endpoint().empty()) {
    std::cout << "\nThe page stays at " << (*daemon)->http_endpoint() << "/ until Ctrl-C."
              << std::endl;
    int sig = 0;
    while (sigwait(&set, &sig) == 0 && sig != SIGINT) {
    }
  }
  (*daemon)->Shutdown();
  return code;
}

}  // namespace amt::cli
