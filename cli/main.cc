// amt: the amt-local client. Argument parsing (CLI11) and production wiring only; the commands
// live in amt_cli_lib (cli/commands.h) and `amt run` in cli/run.h.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <string>

#include "amt/v1/tuning.grpc.pb.h"
#include "cli/commands.h"
#include "cli/env.h"
#include "cli/errors.h"
#include "cli/input.h"
#include "cli/progress.h"
#include "cli/run.h"
#include "common/grpc_credential.h"
#include "grpcpp/grpcpp.h"

namespace {

using amt::cli::Commands;

constexpr char kDefaultEndpoint[] = "127.0.0.1:7070";

constexpr char kUsage[] =
    "usage: amt [--endpoint HOST:PORT] COMMAND [flags]\n"
    "To see help text, you can run:\n"
    "\n"
    "  amt --help\n"
    "  amt COMMAND --help\n"
    "\n";

// An optional flag: the optional stays empty unless the flag is given.
template <typename T>
CLI::Option* AddOptional(CLI::App* app, const std::string& name, std::optional<T>& target,
                         const std::string& help) {
  return app->add_option_function<T>(
      name, [&target](const T& value) { target = value; }, help);
}

void AddPagination(CLI::App* app, amt::cli::PaginationOptions& options) {
  AddOptional(app, "--max-results", options.max_results,
              "MaxResults of the one call made: turns automatic pagination off (as in the aws "
              "cli), so the response's NextToken is printed");
  AddOptional(app, "--next-token", options.next_token,
              "NextToken from a previous response: turns automatic pagination off and fetches "
              "that one page");
  AddOptional(app, "--page-size", options.page_size,
              "MaxResults of each call while paginating (the output still has every item)");
  AddOptional(app, "--starting-token", options.starting_token,
              "NextToken to start paginating from");
  app->add_flag("--no-paginate", options.no_paginate,
                "Make one call and print that page with its NextToken, instead of following "
                "NextToken and printing every item");
}

// Columns of the terminal on stdout: the window size, else $COLUMNS, else 80.
bool StdoutIsTerminal() {
  const char* term = std::getenv("TERM");
  return isatty(STDOUT_FILENO) == 1 && !(term != nullptr && std::string(term) == "dumb");
}

}  // namespace

// The aws cli's per-member flags (--training-job-definition '{...}', --role-arn ARN, ...) for every
// top-level member of the request but `skip` (declared on its own).
void AddMemberFlags(CLI::App* app, const google::protobuf::Descriptor* request,
                    const std::string& skip, std::map<std::string, std::string>& members) {
  for (const auto& [flag, field] : amt::cli::MemberFlags(request)) {
    const std::string member = field->json_name();
    if (member == skip) continue;
    const bool text =
        field->type() == google::protobuf::FieldDescriptor::TYPE_STRING && !field->is_repeated();
    app->add_option_function<std::string>(
        flag, [&members, member](const std::string& value) { members[member] = value; },
        member + (text ? " (text)" : " (JSON)") + "; overrides the one in --cli-input-json");
  }
}

int main(int argc, char** argv) {
  CLI::App app{
      "amt: the amt-local client, shaped like `aws sagemaker ...`: each command sends one "
      "SageMaker operation to amtd and prints the response as JSON with SageMaker's member "
      "names.\nExit codes (as the aws cli's): 0 success, 252 bad usage or parameters, 254 the "
      "service returned an error, 255 no connection.",
      "amt"};
  app.require_subcommand(1);
  // Like the aws cli's global options, --endpoint may also come after the command.
  app.fallthrough();
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string(kUsage) + "amt: error: " + e.what() + "\n";
  });

  std::string endpoint = kDefaultEndpoint;
  app.add_option("--endpoint", endpoint,
                 "amtd's gRPC address HOST:PORT; default: $AMT_ENDPOINT, else 127.0.0.1:7070")
      ->envname("AMT_ENDPOINT");
  std::string credentials_file;
  std::string profile;
  app.add_option("--credentials", credentials_file,
                 "The AWS credentials file amtd was started with (amtd --credentials); default: "
                 "$AMT_CREDENTIALS")
      ->envname("AMT_CREDENTIALS");
  app.add_option("--profile", profile,
                 "The profile of that file whose key to use; default: $AMT_PROFILE, else "
                 "[default], else the file's only key")
      ->envname("AMT_PROFILE");

  // The chosen command; runs after parsing succeeded.
  std::function<int(Commands&)> command;
  std::function<int()> standalone;

  // --- tuning jobs ---
  amt::cli::CreateHyperParameterTuningJobOptions create_tuning;
  CLI::App* sub = app.add_subcommand("create-hyper-parameter-tuning-job",
                                     "Start a tuning job (CreateHyperParameterTuningJob)");
  sub->add_option("--cli-input-json", create_tuning.cli_input_json,
                  "The request as SageMaker JSON: file://path, a path, or inline {...}");
  AddOptional(sub, "--hyper-parameter-tuning-job-name",
              create_tuning.hyper_parameter_tuning_job_name,
              "HyperParameterTuningJobName; overrides the one in --cli-input-json");
  AddMemberFlags(sub, amt::v1::CreateHyperParameterTuningJobRequest::descriptor(),
                 "HyperParameterTuningJobName", create_tuning.members);
  sub->callback([&] {
    command = [&](Commands& c) { return c.CreateHyperParameterTuningJob(create_tuning); };
  });

  std::string describe_tuning_name;
  sub = app.add_subcommand("describe-hyper-parameter-tuning-job",
                           "Show a tuning job (DescribeHyperParameterTuningJob)");
  sub->add_option("--hyper-parameter-tuning-job-name", describe_tuning_name,
                  "The tuning job's name")
      ->required();
  sub->callback([&] {
    command = [&](Commands& c) { return c.DescribeHyperParameterTuningJob(describe_tuning_name); };
  });

  amt::cli::ListHyperParameterTuningJobsOptions list_tuning;
  sub = app.add_subcommand("list-hyper-parameter-tuning-jobs",
                           "List tuning jobs (ListHyperParameterTuningJobs); follows NextToken "
                           "and prints every item unless told otherwise");
  AddPagination(sub, list_tuning.pagination);
  AddOptional(sub, "--sort-by", list_tuning.sort_by, "Name (default), Status or CreationTime");
  AddOptional(sub, "--sort-order", list_tuning.sort_order, "Ascending (default) or Descending");
  AddOptional(sub, "--name-contains", list_tuning.name_contains,
              "Only tuning jobs whose name contains this string");
  AddOptional(sub, "--status-equals", list_tuning.status_equals,
              "Only tuning jobs in this status: Completed, InProgress, Failed, Stopped, Stopping");
  sub->callback(
      [&] { command = [&](Commands& c) { return c.ListHyperParameterTuningJobs(list_tuning); }; });

  amt::cli::ListTrainingJobsForHyperParameterTuningJobOptions list_for_tuning;
  sub = app.add_subcommand(
      "list-training-jobs-for-hyper-parameter-tuning-job",
      "List the training jobs a tuning job launched (ListTrainingJobsForHyperParameterTuningJob)");
  sub->add_option("--hyper-parameter-tuning-job-name",
                  list_for_tuning.hyper_parameter_tuning_job_name, "The tuning job's name")
      ->required();
  AddPagination(sub, list_for_tuning.pagination);
  AddOptional(sub, "--sort-by", list_for_tuning.sort_by,
              "Name (default), CreationTime, Status or FinalObjectiveMetricValue");
  AddOptional(sub, "--sort-order", list_for_tuning.sort_order, "Ascending (default) or Descending");
  AddOptional(sub, "--status-equals", list_for_tuning.status_equals,
              "Only training jobs in this status: InProgress, Completed, Failed, Stopping, "
              "Stopped");
  sub->callback([&] {
    command = [&](Commands& c) {
      return c.ListTrainingJobsForHyperParameterTuningJob(list_for_tuning);
    };
  });

  std::string stop_tuning_name;
  sub = app.add_subcommand("stop-hyper-parameter-tuning-job",
                           "Stop a tuning job and its running training jobs "
                           "(StopHyperParameterTuningJob); prints nothing");
  sub->add_option("--hyper-parameter-tuning-job-name", stop_tuning_name, "The tuning job's name")
      ->required();
  sub->callback([&] {
    command = [&](Commands& c) { return c.StopHyperParameterTuningJob(stop_tuning_name); };
  });

  std::string delete_tuning_name;
  sub = app.add_subcommand("delete-hyper-parameter-tuning-job",
                           "Delete an ended tuning job's entry; its training jobs stay "
                           "(DeleteHyperParameterTuningJob); prints nothing");
  sub->add_option("--hyper-parameter-tuning-job-name", delete_tuning_name, "The tuning job's name")
      ->required();
  sub->callback([&] {
    command = [&](Commands& c) { return c.DeleteHyperParameterTuningJob(delete_tuning_name); };
  });

  // --- training jobs ---
  amt::cli::CreateTrainingJobOptions create_training;
  sub = app.add_subcommand("create-training-job", "Start a training job (CreateTrainingJob)");
  sub->add_option("--cli-input-json", create_training.cli_input_json,
                  "The request as SageMaker JSON: file://path, a path, or inline {...}");
  AddOptional(sub, "--training-job-name", create_training.training_job_name,
              "TrainingJobName; overrides the one in --cli-input-json");
  AddMemberFlags(sub, amt::v1::CreateTrainingJobRequest::descriptor(), "TrainingJobName",
                 create_training.members);
  sub->callback(
      [&] { command = [&](Commands& c) { return c.CreateTrainingJob(create_training); }; });

  std::string describe_training_name;
  sub = app.add_subcommand("describe-training-job", "Show a training job (DescribeTrainingJob)");
  sub->add_option("--training-job-name", describe_training_name, "The training job's name")
      ->required();
  sub->callback([&] {
    command = [&](Commands& c) { return c.DescribeTrainingJob(describe_training_name); };
  });

  amt::cli::ListTrainingJobsOptions list_training;
  sub = app.add_subcommand("list-training-jobs",
                           "List training jobs (ListTrainingJobs); follows NextToken and prints "
                           "every item unless told otherwise");
  AddPagination(sub, list_training.pagination);
  AddOptional(sub, "--sort-by", list_training.sort_by, "CreationTime (default), Name or Status");
  AddOptional(sub, "--sort-order", list_training.sort_order, "Ascending (default) or Descending");
  AddOptional(sub, "--name-contains", list_training.name_contains,
              "Only training jobs whose name contains this string");
  AddOptional(sub, "--status-equals", list_training.status_equals,
              "Only training jobs in this status: InProgress, Completed, Failed, Stopping, "
              "Stopped");
  sub->callback([&] { command = [&](Commands& c) { return c.ListTrainingJobs(list_training); }; });

  std::string stop_training_name;
  sub = app.add_subcommand("stop-training-job",
                           "Stop a training job (StopTrainingJob); prints "
                           "nothing");
  sub->add_option("--training-job-name", stop_training_name, "The training job's name")->required();
  sub->callback(
      [&] { command = [&](Commands& c) { return c.StopTrainingJob(stop_training_name); }; });

  std::string delete_training_name;
  sub = app.add_subcommand("delete-training-job",
                           "Delete an ended training job with its logs and metrics "
                           "(DeleteTrainingJob); prints nothing");
  sub->add_option("--training-job-name", delete_training_name, "The training job's name")
      ->required();
  sub->callback(
      [&] { command = [&](Commands& c) { return c.DeleteTrainingJob(delete_training_name); }; });

  // --- amt-local extras ---
  amt::cli::LogsOptions logs;
  sub = app.add_subcommand("logs",
                           "Print a training job's log lines exactly as the trainer printed them "
                           "(tabs shown as #011, as in SageMaker's logs)");
  sub->add_option("TRAINING_JOB", logs.training_job_name, "The training job's name")->required();
  sub->add_flag("--follow,-f", logs.follow, "Keep printing new lines until the training job ends");
  sub->add_option("--host", logs.host,
                  "Only the lines of this host of a multi-instance job (algo-1, algo-2, ...: "
                  "its CloudWatch log stream); every host's, in the order they came, without it");
  sub->add_flag("--prefix-host", logs.prefix_host,
                "Print each line's host before it (algo-2: ...)");
  sub->callback([&] { command = [&](Commands& c) { return c.Logs(logs); }; });

  std::string explain_name;
  bool explain_json = false;
  sub = app.add_subcommand("explain",
                           "Explain early stopping for a training job: every decision of the AUTO "
                           "median rule or Hyperband, with the values compared (epoch, the job's "
                           "value, the median or rung cut-off, how many reference jobs)");
  sub->add_option("TRAINING_JOB", explain_name, "The training job's name")->required();
  sub->add_flag("--json", explain_json, "Print the ExplainTrainingJob response as JSON");
  sub->callback(
      [&] { command = [&](Commands& c) { return c.Explain(explain_name, explain_json); }; });

  amt::cli::WatchOptions watch;
  sub = app.add_subcommand("watch",
                           "Show a tuning job's training jobs live until the tuning job ends, "
                           "then a summary. Exit code 0 iff the tuning job Completed, else 1. On "
                           "a terminal: a table redrawn in place; otherwise one line per change");
  sub->add_option("TUNING_JOB", watch.hyper_parameter_tuning_job_name, "The tuning job's name")
      ->required();
  sub->callback([&] {
    watch.tty = StdoutIsTerminal();
    watch.width = amt::cli::TerminalWidth();
    command = [&](Commands& c) { return c.Watch(watch); };
  });

  amt::cli::EnvOptions env;
  sub = app.add_subcommand(
      "env",
      "Print the shell lines that point every AWS client (boto3, the SageMaker Python SDK, the "
      "aws cli) at amtd: eval \"$(amt env)\", then run your SageMaker code unchanged");
  sub->add_option("--endpoint-url", env.endpoint_url,
                  "amtd's HTTP endpoint; default: $AMT_ENDPOINT_URL, else " +
                      std::string(amt::cli::kDefaultHttpEndpoint));
  sub->add_option("--region", env.region,
                  "The region exported when the environment has none (AWS_REGION, "
                  "AWS_DEFAULT_REGION)")
      ->capture_default_str();
  std::string env_data_dir = ".amt";
  sub->add_option("--data-dir", env_data_dir,
                  "amtd's --data-dir: when it holds amtd's HTTPS proxy CA (proxy-ca.pem), also "
                  "export HTTPS_PROXY, NO_PROXY and AWS_CA_BUNDLE, so that clients that pin "
                  "AWS's endpoints (the SDK's STS calls) or ignore AWS_ENDPOINT_URL (Debian's aws "
                  "cli v2) reach amtd too")
      ->envname("AMT_DATA_DIR")
      ->capture_default_str();
  sub->callback([&] {
    standalone = [&] {
      env.credentials_file = credentials_file;
      env.profile = profile;
      std::error_code ec;
      const std::filesystem::path ca =
          std::filesystem::absolute(amt::cli::ProxyCaFile(env_data_dir), ec);
      if (!ec && std::filesystem::exists(ca, ec)) {
        env.proxy_ca_file = ca.string();
      } else {
        std::cerr << "amt env: no HTTPS proxy CA at " << ca.string()
                  << " (amtd not started yet, or another --data-dir): AWS_ENDPOINT_URL only\n";
      }
      const absl::StatusOr<std::string> exports =
          amt::cli::EnvExports(env, [](const char* name) -> std::optional<std::string> {
            const char* value = std::getenv(name);
            if (value == nullptr || *value == '\0') return std::nullopt;
            return std::string(value);
          });
      if (!exports.ok()) {
        std::cerr << "amt env: " << exports.status().message() << "\n";
        return amt::cli::kExitUsage;
      }
      std::cout << *exports;
      return 0;
    };
  });

  amt::cli::RunOptions run;
  sub = app.add_subcommand("run",
                           "Run a job file on this machine with an embedded orchestrator and a "
                           "local worker, showing progress; no amtd needed");
  sub->add_option("JOB_FILE", run.job_file,
                  "CreateHyperParameterTuningJob or CreateTrainingJob request JSON")
      ->required();
  sub->add_option("--data-dir", run.data_dir, "Where jobs, logs and the state database go")
      ->capture_default_str();
  sub->add_option("--slots", run.slots,
                  "Training jobs run at once on this machine; 0 = MaxParallelTrainingJobs")
      ->capture_default_str();
  sub->add_option("--time-scale", run.time_scale,
                  "Multiply SageMaker's waits (stop grace, runtime limits) by this, e.g. 0.01 "
                  "in CI")
      ->capture_default_str();
  sub->add_option("--image-map", run.image_map,
                  "JSON file mapping TrainingImage URIs to local commands (argv arrays)");
  sub->add_option("--name", run.name,
                  "Job name; default: the file's name, plus a -NNNN suffix if taken");
  sub->add_flag("--quiet,-q", run.quiet, "Print only the final summary");
  sub->add_option("--spot-mean-seconds", run.spot_mean_seconds,
                  "Jobs with EnableManagedSpotTraining: mean training seconds before an "
                  "interruption (SageMaker seconds, scaled by --time-scale); 0: never")
      ->capture_default_str();
  sub->add_option("--spot-seed", run.spot_seed, "Seed of the simulated spot interruptions")
      ->capture_default_str();
  sub->add_option("--spot-interrupt-after", run.spot_interrupt_after,
                  "Interrupt every spot attempt exactly this many training seconds in, instead "
                  "of at a seeded random time; 0: off")
      ->capture_default_str();
  sub->add_option("--spot-max-interruptions", run.spot_max_interruptions,
                  "Interruptions per spot training job at most")
      ->capture_default_str();
  sub->add_option("--python", run.python,
                  "Python interpreter for framework images (script mode): PATH, or "
                  "FRAMEWORK=PATH for one of sklearn, xgboost, pytorch, ...; repeatable")
      ->type_name("[FRAMEWORK=]PATH");
  sub->add_option("--http-port", run.http_port,
                  "The page and SageMaker's HTTP API while the job runs (the address is "
                  "printed); a free port when this one is taken; 0: a free port, -1: none")
      ->capture_default_str();
  sub->add_option_function<std::string>(
         "--ui", [&run](const std::string& value) { run.ui = value == "on"; },
         "Serve the web page (learning curves, stop decisions) on the HTTP port")
      ->type_name("on|off")
      ->default_str("on")
      ->check(CLI::IsMember({"on", "off"}));
  sub->add_flag("--keep-serving", run.keep_serving,
                "Once the job has ended, keep serving the page until Ctrl-C");
  sub->callback([&] { standalone = [&] { return amt::cli::RunTuningJob(run); }; });

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return amt::cli::kExitUsage;
  }

  if (standalone) return standalone();
  if (endpoint.empty()) endpoint = kDefaultEndpoint;
  grpc::ChannelArguments channel_args;
  channel_args.SetMaxReceiveMessageSize(64 << 20);  // a Describe of a big tuning job, a log batch
  const std::shared_ptr<grpc::Channel> channel =
      grpc::CreateCustomChannel(endpoint, grpc::InsecureChannelCredentials(), channel_args);
  const std::unique_ptr<amt::v1::TuningService::Stub> stub =
      amt::v1::TuningService::NewStub(channel);
  Commands commands(*stub, endpoint, std::cout, std::cerr);
  if (!credentials_file.empty()) {
    auto credential = amt::auth::GrpcCredentialMaker(credentials_file, profile);
    if (!credential.ok()) {
      std::cerr << "amt: " << credential.status().message() << "\n";
      return amt::cli::kExitUsage;
    }
    commands.set_credential(std::move(*credential));
  }
  return command(commands);
}
