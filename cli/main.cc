// amt: the amt-local client. Argument parsing (CLI11) and production wiring only; the commands
// live in amt_cli_lib (cli/commands.h) and `amt run` in cli/run.h. Every unary operation amtd
// serves gets its subcommand from the table (cli/operations.h): the ones users have typed since
// before the table keep their own flags (HandWritten), the others take their request as the aws
// cli does (--cli-input-json and one flag per member); the conveniences (logs, explain, watch,
// env, run) follow.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "amt/v1/tuning.grpc.pb.h"
#include "cli/commands.h"
#include "cli/env.h"
#include "cli/errors.h"
#include "cli/input.h"
#include "cli/operations.h"
#include "cli/progress.h"
#include "cli/run.h"
#include "common/grpc_credential.h"
#include "grpcpp/grpcpp.h"

namespace {

using amt::cli::Commands;
using amt::cli::Operation;

constexpr char kDefaultEndpoint[] = "127.0.0.1:7070";

constexpr char kUsage[] =
    "usage: amt [--endpoint HOST:PORT] COMMAND [flags]\n"
    "To see help text, you can run:\n"
    "\n"
    "  amt --help\n"
    "  amt COMMAND --help\n"
    "\n";

constexpr char kDescription[] =
    "amt: the amt-local client, shaped like `aws sagemaker ...`: every operation amtd serves has "
    "its command, which sends it to amtd and prints the response as JSON with SageMaker's member "
    "names; a command without flags of its own takes its request as --cli-input-json "
    "(file://path, a path, or inline {...}) and/or one flag per member (--training-job-name NAME, "
    "--resource-config '{...}'). Then amt-local's own commands: logs, explain, watch, env, run.\n"
    "Exit codes (as the aws cli's): 0 success, 252 bad usage or parameters, 254 the service "
    "returned an error, 255 no connection.";

constexpr char kInputHelp[] = "The request as SageMaker JSON: file://path, a path, or inline {...}";

// The global options, which may come before or after the command.
struct Globals {
  std::string endpoint = kDefaultEndpoint;
  std::string credentials_file;
  std::string profile;
};

// What parsing chose: a command sent to amtd, or one that needs no amtd (env, run).
struct Chosen {
  std::function<int(Commands&)> command;
  std::function<int()> standalone;
};

// Registers the flags of an operation's subcommand and, in its callback, the command to run.
using AddFlags = std::function<void(CLI::App*, Chosen&)>;

// An optional flag: the optional stays empty unless the flag is given.
template <typename T>
CLI::Option* AddOptional(CLI::App* app, const std::string& name, std::optional<T>& target,
                         const std::string& help) {
  return app->add_option_function<T>(
      name, [&target](const T& value) { target = value; }, help);
}

// Columns of the terminal on stdout: the window size, else $COLUMNS, else 80.
bool StdoutIsTerminal() {
  const char* term = std::getenv("TERM");
  return isatty(STDOUT_FILENO) == 1 && !(term != nullptr && std::string(term) == "dumb");
}

void AddGlobalFlags(CLI::App& app, Globals& globals) {
  app.add_option("--endpoint", globals.endpoint,
                 "amtd's gRPC address HOST:PORT; default: $AMT_ENDPOINT, else 127.0.0.1:7070")
      ->envname("AMT_ENDPOINT");
  app.add_option("--credentials", globals.credentials_file,
                 "The AWS credentials file amtd was started with (amtd --credentials); default: "
                 "$AMT_CREDENTIALS")
      ->envname("AMT_CREDENTIALS");
  app.add_option("--profile", globals.profile,
                 "The profile of that file whose key to use; default: $AMT_PROFILE, else "
                 "[default], else the file's only key")
      ->envname("AMT_PROFILE");
}

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

// Runs `method` with `options` once parsing chose `sub`.
template <typename Options>
void Choose(CLI::App* sub, Chosen& chosen, std::shared_ptr<Options> options,
            int (Commands::*method)(const Options&)) {
  sub->callback([options, method, &chosen] {
    chosen.command = [options, method](Commands& c) { return (c.*method)(*options); };
  });
}

// An operation without flags of its own: --cli-input-json plus a flag per member, sent as is.
void AddGenericFlags(CLI::App* sub, const Operation& operation, Chosen& chosen) {
  auto options = std::make_shared<amt::cli::OperationOptions>();
  sub->add_option("--cli-input-json", options->cli_input_json, kInputHelp);
  AddMemberFlags(sub, operation.request->GetDescriptor(), "", options->members);
  sub->callback([options, &operation, &chosen] {
    chosen.command = [options, &operation](Commands& c) { return c.Send(operation, *options); };
  });
}

// The Describe, Stop and Delete commands: the job's name as a required flag.
AddFlags NameOnly(const std::string& flag, const std::string& help,
                  int (Commands::*method)(const std::string&)) {
  return [flag, help, method](CLI::App* sub, Chosen& chosen) {
    auto name = std::make_shared<std::string>();
    sub->add_option(flag, *name, help)->required();
    Choose(sub, chosen, name, method);
  };
}

// The create commands: --cli-input-json, the job's name and every other member as flags.
template <typename Options>
AddFlags Create(const std::string& name_flag, const std::string& name_member,
                std::optional<std::string> Options::*name,
                const google::protobuf::Descriptor* request,
                int (Commands::*method)(const Options&)) {
  return [=](CLI::App* sub, Chosen& chosen) {
    auto options = std::make_shared<Options>();
    sub->add_option("--cli-input-json", options->cli_input_json, kInputHelp);
    AddOptional(sub, name_flag, (*options).*name,
                name_member + "; overrides the one in --cli-input-json");
    AddMemberFlags(sub, request, name_member, options->members);
    Choose(sub, chosen, options, method);
  };
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

void AddListTuningJobs(CLI::App* sub, Chosen& chosen) {
  auto list = std::make_shared<amt::cli::ListHyperParameterTuningJobsOptions>();
  AddPagination(sub, list->pagination);
  AddOptional(sub, "--sort-by", list->sort_by, "Name (default), Status or CreationTime");
  AddOptional(sub, "--sort-order", list->sort_order, "Ascending (default) or Descending");
  AddOptional(sub, "--name-contains", list->name_contains,
              "Only tuning jobs whose name contains this string");
  AddOptional(sub, "--status-equals", list->status_equals,
              "Only tuning jobs in this status: Completed, InProgress, Failed, Stopped, Stopping");
  Choose(sub, chosen, list, &Commands::ListHyperParameterTuningJobs);
}

void AddListTrainingJobsForTuningJob(CLI::App* sub, Chosen& chosen) {
  auto list = std::make_shared<amt::cli::ListTrainingJobsForHyperParameterTuningJobOptions>();
  sub->add_option("--hyper-parameter-tuning-job-name", list->hyper_parameter_tuning_job_name,
                  "The tuning job's name")
      ->required();
  AddPagination(sub, list->pagination);
  AddOptional(sub, "--sort-by", list->sort_by,
              "Name (default), CreationTime, Status or FinalObjectiveMetricValue");
  AddOptional(sub, "--sort-order", list->sort_order, "Ascending (default) or Descending");
  AddOptional(sub, "--status-equals", list->status_equals,
              "Only training jobs in this status: InProgress, Completed, Failed, Stopping, "
              "Stopped");
  Choose(sub, chosen, list, &Commands::ListTrainingJobsForHyperParameterTuningJob);
}

void AddListTrainingJobs(CLI::App* sub, Chosen& chosen) {
  auto list = std::make_shared<amt::cli::ListTrainingJobsOptions>();
  AddPagination(sub, list->pagination);
  AddOptional(sub, "--sort-by", list->sort_by, "CreationTime (default), Name or Status");
  AddOptional(sub, "--sort-order", list->sort_order, "Ascending (default) or Descending");
  AddOptional(sub, "--name-contains", list->name_contains,
              "Only training jobs whose name contains this string");
  AddOptional(sub, "--status-equals", list->status_equals,
              "Only training jobs in this status: InProgress, Completed, Failed, Stopping, "
              "Stopped");
  Choose(sub, chosen, list, &Commands::ListTrainingJobs);
}

// The operations whose commands had their own flags before the table, kept as users type them:
// the job's name as a required flag, the aws cli's paginator flags and list filters.
const std::map<std::string, AddFlags>& HandWritten() {
  constexpr char kTuningName[] = "--hyper-parameter-tuning-job-name";
  constexpr char kTrainingName[] = "--training-job-name";
  static const auto* table = new std::map<std::string, AddFlags>{
      {"CreateHyperParameterTuningJob",
       Create(kTuningName, "HyperParameterTuningJobName",
              &amt::cli::CreateHyperParameterTuningJobOptions::hyper_parameter_tuning_job_name,
              amt::v1::CreateHyperParameterTuningJobRequest::descriptor(),
              &Commands::CreateHyperParameterTuningJob)},
      {"DescribeHyperParameterTuningJob",
       NameOnly(kTuningName, "The tuning job's name", &Commands::DescribeHyperParameterTuningJob)},
      {"ListHyperParameterTuningJobs", AddListTuningJobs},
      {"ListTrainingJobsForHyperParameterTuningJob", AddListTrainingJobsForTuningJob},
      {"StopHyperParameterTuningJob",
       NameOnly(kTuningName, "The tuning job's name", &Commands::StopHyperParameterTuningJob)},
      {"DeleteHyperParameterTuningJob",
       NameOnly(kTuningName, "The tuning job's name", &Commands::DeleteHyperParameterTuningJob)},
      {"CreateTrainingJob",
       Create(kTrainingName, "TrainingJobName",
              &amt::cli::CreateTrainingJobOptions::training_job_name,
              amt::v1::CreateTrainingJobRequest::descriptor(), &Commands::CreateTrainingJob)},
      {"DescribeTrainingJob",
       NameOnly(kTrainingName, "The training job's name", &Commands::DescribeTrainingJob)},
      {"ListTrainingJobs", AddListTrainingJobs},
      {"StopTrainingJob",
       NameOnly(kTrainingName, "The training job's name", &Commands::StopTrainingJob)},
      {"DeleteTrainingJob",
       NameOnly(kTrainingName, "The training job's name", &Commands::DeleteTrainingJob)},
  };
  return *table;
}

// One subcommand per operation amtd serves, in the table's order.
void AddOperationCommands(CLI::App& app, Chosen& chosen) {
  for (const Operation& operation : amt::cli::Operations()) {
    CLI::App* sub = app.add_subcommand(operation.command, operation.summary);
    const auto hand_written = HandWritten().find(operation.name);
    if (hand_written != HandWritten().end()) {
      hand_written->second(sub, chosen);
    } else {
      AddGenericFlags(sub, operation, chosen);
    }
  }
}

void AddLogs(CLI::App& app, Chosen& chosen) {
  auto logs = std::make_shared<amt::cli::LogsOptions>();
  CLI::App* sub = app.add_subcommand(
      "logs",
      "Print a training job's log lines exactly as the trainer printed them (tabs shown as #011, "
      "as in SageMaker's logs)");
  sub->add_option("TRAINING_JOB", logs->training_job_name, "The training job's name")->required();
  sub->add_flag("--follow,-f", logs->follow, "Keep printing new lines until the training job ends");
  sub->add_option("--host", logs->host,
                  "Only the lines of this host of a multi-instance job (algo-1, algo-2, ...: "
                  "its CloudWatch log stream); every host's, in the order they came, without it");
  sub->add_flag("--prefix-host", logs->prefix_host,
                "Print each line's host before it (algo-2: ...)");
  Choose(sub, chosen, logs, &Commands::Logs);
}

void AddExplain(CLI::App& app, Chosen& chosen) {
  auto name = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* sub = app.add_subcommand(
      "explain",
      "Explain early stopping for a training job: every decision of the AUTO median rule or "
      "Hyperband, with the values compared (epoch, the job's value, the median or rung "
      "cut-off, how many reference jobs)");
  sub->add_option("TRAINING_JOB", *name, "The training job's name")->required();
  sub->add_flag("--json", *json, "Print the ExplainTrainingJob response as JSON");
  sub->callback([name, json, &chosen] {
    chosen.command = [name, json](Commands& c) { return c.Explain(*name, *json); };
  });
}

void AddWatch(CLI::App& app, Chosen& chosen) {
  auto watch = std::make_shared<amt::cli::WatchOptions>();
  CLI::App* sub = app.add_subcommand(
      "watch",
      "Show a tuning job's training jobs live until the tuning job ends, then a summary. Exit "
      "code 0 iff the tuning job Completed, else 1. On a terminal: a table redrawn in place; "
      "otherwise one line per change");
  sub->add_option("TUNING_JOB", watch->hyper_parameter_tuning_job_name, "The tuning job's name")
      ->required();
  sub->callback([watch, &chosen] {
    watch->tty = StdoutIsTerminal();
    watch->width = amt::cli::TerminalWidth();
    chosen.command = [watch](Commands& c) { return c.Watch(*watch); };
  });
}

// `amt env`: prints the exports, or why it cannot.
int PrintEnv(amt::cli::EnvOptions env, const std::string& data_dir) {
  std::error_code ec;
  const std::filesystem::path ca = std::filesystem::absolute(amt::cli::ProxyCaFile(data_dir), ec);
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
}

void AddEnv(CLI::App& app, const Globals& globals, Chosen& chosen) {
  auto env = std::make_shared<amt::cli::EnvOptions>();
  auto data_dir = std::make_shared<std::string>(".amt");
  CLI::App* sub = app.add_subcommand(
      "env",
      "Print the shell lines that point every AWS client (boto3, the SageMaker Python SDK, the "
      "aws cli) at amtd: eval \"$(amt env)\", then run your SageMaker code unchanged");
  sub->add_option("--endpoint-url", env->endpoint_url,
                  "amtd's HTTP endpoint; default: $AMT_ENDPOINT_URL, else " +
                      std::string(amt::cli::kDefaultHttpEndpoint));
  sub->add_option("--region", env->region,
                  "The region exported when the environment has none (AWS_REGION, "
                  "AWS_DEFAULT_REGION)")
      ->capture_default_str();
  sub->add_option("--data-dir", *data_dir,
                  "amtd's --data-dir: when it holds amtd's HTTPS proxy CA (proxy-ca.pem), also "
                  "export HTTPS_PROXY, NO_PROXY and AWS_CA_BUNDLE, so that clients that pin "
                  "AWS's endpoints (the SDK's STS calls) or ignore AWS_ENDPOINT_URL (Debian's aws "
                  "cli v2) reach amtd too")
      ->envname("AMT_DATA_DIR")
      ->capture_default_str();
  sub->callback([env, data_dir, &globals, &chosen] {
    chosen.standalone = [env, data_dir, &globals] {
      env->credentials_file = globals.credentials_file;
      env->profile = globals.profile;
      return PrintEnv(*env, *data_dir);
    };
  });
}

// `amt run`'s simulation of managed spot training.
void AddRunSpotFlags(CLI::App* sub, amt::cli::RunOptions& run) {
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
}

void AddRun(CLI::App& app, Chosen& chosen) {
  auto run = std::make_shared<amt::cli::RunOptions>();
  CLI::App* sub = app.add_subcommand("run",
                                     "Run a job file on this machine with an embedded "
                                     "orchestrator and a local worker, showing progress; no amtd "
                                     "needed");
  sub->add_option("JOB_FILE", run->job_file,
                  "CreateHyperParameterTuningJob or CreateTrainingJob request JSON")
      ->required();
  sub->add_option("--data-dir", run->data_dir, "Where jobs, logs and the state database go")
      ->capture_default_str();
  sub->add_option("--slots", run->slots,
                  "Training jobs run at once on this machine; 0 = MaxParallelTrainingJobs")
      ->capture_default_str();
  sub->add_option("--time-scale", run->time_scale,
                  "Multiply SageMaker's waits (stop grace, runtime limits) by this, e.g. 0.01 "
                  "in CI")
      ->capture_default_str();
  sub->add_option("--image-map", run->image_map,
                  "JSON file mapping TrainingImage URIs to local commands (argv arrays)");
  sub->add_option("--name", run->name,
                  "Job name; default: the file's name, plus a -NNNN suffix if taken");
  sub->add_flag("--quiet,-q", run->quiet, "Print only the final summary");
  AddRunSpotFlags(sub, *run);
  sub->add_option("--python", run->python,
                  "Python interpreter for framework images (script mode): PATH, or "
                  "FRAMEWORK=PATH for one of sklearn, xgboost, pytorch, ...; repeatable")
      ->type_name("[FRAMEWORK=]PATH");
  sub->add_option("--http-port", run->http_port,
                  "The page and SageMaker's HTTP API while the job runs (the address is "
                  "printed); a free port when this one is taken; 0: a free port, -1: none")
      ->capture_default_str();
  sub->add_option_function<std::string>(
         "--ui", [run](const std::string& value) { run->ui = value == "on"; },
         "Serve the web page (learning curves, stop decisions) on the HTTP port")
      ->type_name("on|off")
      ->default_str("on")
      ->check(CLI::IsMember({"on", "off"}));
  sub->add_flag("--keep-serving", run->keep_serving,
                "Once the job has ended, keep serving the page until Ctrl-C");
  sub->callback(
      [run, &chosen] { chosen.standalone = [run] { return amt::cli::RunTuningJob(*run); }; });
}

// Connects to amtd and runs the chosen command.
int RunCommand(Globals globals, const std::function<int(Commands&)>& command) {
  if (globals.endpoint.empty()) globals.endpoint = kDefaultEndpoint;
  grpc::ChannelArguments channel_args;
  channel_args.SetMaxReceiveMessageSize(64 << 20);  // a Describe of a big tuning job, a log batch
  const std::shared_ptr<grpc::Channel> channel =
      grpc::CreateCustomChannel(globals.endpoint, grpc::InsecureChannelCredentials(), channel_args);
  const std::unique_ptr<amt::v1::TuningService::Stub> stub =
      amt::v1::TuningService::NewStub(channel);
  Commands commands(*stub, globals.endpoint, std::cout, std::cerr);
  if (!globals.credentials_file.empty()) {
    auto credential = amt::auth::GrpcCredentialMaker(globals.credentials_file, globals.profile);
    if (!credential.ok()) {
      std::cerr << "amt: " << credential.status().message() << "\n";
      return amt::cli::kExitUsage;
    }
    commands.set_credential(std::move(*credential));
  }
  return command(commands);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{kDescription, "amt"};
  app.require_subcommand(1);
  // Like the aws cli's global options, --endpoint may also come after the command.
  app.fallthrough();
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string(kUsage) + "amt: error: " + e.what() + "\n";
  });
  Globals globals;
  AddGlobalFlags(app, globals);

  Chosen chosen;
  AddOperationCommands(app, chosen);
  AddLogs(app, chosen);
  AddExplain(app, chosen);
  AddWatch(app, chosen);
  AddEnv(app, globals, chosen);
  AddRun(app, chosen);

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
  if (chosen.standalone) return chosen.standalone();
  return RunCommand(globals, chosen.command);
}
