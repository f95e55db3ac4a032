// The `amt` client commands over a TuningService stub: Send for any unary operation amtd serves
// (cli/operations.h), the SageMaker operations that have their own flags, and `logs`, `watch`,
// `explain`. They mirror `aws sagemaker ...`: the response is printed as JSON with
// SageMaker member names (4-space indentation), list commands follow NextToken like the aws cli's
// paginators, errors go to stderr in the aws cli's words with its exit codes (cli/errors.h).
// main.cc maps flags (CLI11) onto the option structs below; nothing here parses argv.
#ifndef AMT_CLI_COMMANDS_H_
#define AMT_CLI_COMMANDS_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "amt/v1/tuning.grpc.pb.h"
#include "amt/v1/tuning.pb.h"
#include "cli/operations.h"

namespace amt::cli {

// Any operation's request, as the aws cli takes it: --cli-input-json (file://path, a bare path,
// or inline JSON; may be empty) and one flag per top-level member on top (cli/input.h
// LoadRequest): SageMaker name -> the flag's text.
struct OperationOptions {
  std::string cli_input_json;
  std::map<std::string, std::string> members;
};

struct CreateHyperParameterTuningJobOptions {
  std::string
      cli_input_json;  // file://path, a bare path, or inline JSON (cli/input.h); may be empty
  std::optional<std::string> hyper_parameter_tuning_job_name;  // overrides the file's member
  // Other members given as flags (--training-job-definition '{...}'): SageMaker name -> text.
  std::map<std::string, std::string> members;
};

struct CreateTrainingJobOptions {
  std::string cli_input_json;
  std::optional<std::string> training_job_name;  // overrides the file's member
  std::map<std::string, std::string> members;    // as above
};

// The aws cli's paging arguments. `max_results` and `next_token` are the operation's own
// members: giving either turns automatic pagination off, as in the aws cli (customizations/
// paginate.py). `page_size` and `starting_token` are the aws cli's paginator arguments: MaxResults
// of every call and the NextToken of the first call while paginating.
struct PaginationOptions {
  std::optional<int> max_results;
  std::optional<std::string> next_token;
  std::optional<int> page_size;
  std::optional<std::string> starting_token;
  bool no_paginate = false;
};

struct ListHyperParameterTuningJobsOptions {
  PaginationOptions pagination;
  std::optional<std::string> sort_by;
  std::optional<std::string> sort_order;
  std::optional<std::string> name_contains;
  std::optional<std::string> status_equals;
};

struct ListTrainingJobsForHyperParameterTuningJobOptions {
  std::string hyper_parameter_tuning_job_name;
  PaginationOptions pagination;
  std::optional<std::string> sort_by;
  std::optional<std::string> sort_order;
  std::optional<std::string> status_equals;
};

struct ListTrainingJobsOptions {
  PaginationOptions pagination;
  std::optional<std::string> sort_by;
  std::optional<std::string> sort_order;
  std::optional<std::string> name_contains;
  std::optional<std::string> status_equals;
};

struct LogsOptions {
  std::string training_job_name;
  bool follow = false;              // keep printing new lines until the training job ends
  std::optional<std::string> host;  // only this host's lines (algo-2); all hosts' when unset
  bool prefix_host = false;         // "algo-2: " before each line
};

struct WatchOptions {
  std::string hyper_parameter_tuning_job_name;
  bool tty = false;  // redraw a table in place (true) or print one line per change (false)
  int width = 80;    // terminal columns; TTY lines are cut to fit
};

// --- Pure parts (flags -> requests), exposed for tests. ---

// Whether the list command follows NextToken: not with --no-paginate, --max-results or
// --next-token. InvalidArgument "Cannot specify --no-paginate along with pagination arguments:
// --starting-token, --page-size" (the ones given) when pagination is off and the aws cli's
// paginator arguments are given.
absl::StatusOr<bool> ShouldPaginate(const PaginationOptions& options);

// The request for the first page: MaxResults/NextToken from --page-size/--starting-token while
// paginating, from --max-results/--next-token otherwise; unset flags leave members unset.
v1::ListHyperParameterTuningJobsRequest BuildListHyperParameterTuningJobsRequest(
    const ListHyperParameterTuningJobsOptions& options);
v1::ListTrainingJobsForHyperParameterTuningJobRequest
BuildListTrainingJobsForHyperParameterTuningJobRequest(
    const ListTrainingJobsForHyperParameterTuningJobOptions& options);
v1::ListTrainingJobsRequest BuildListTrainingJobsRequest(const ListTrainingJobsOptions& options);

// The create requests: --cli-input-json parsed, then explicit flags override the file's members.
// InvalidArgument with the text to print (cli/input.h) when the input cannot be read or parsed.
absl::StatusOr<v1::CreateHyperParameterTuningJobRequest> BuildCreateHyperParameterTuningJobRequest(
    const CreateHyperParameterTuningJobOptions& options);
absl::StatusOr<v1::CreateTrainingJobRequest> BuildCreateTrainingJobRequest(
    const CreateTrainingJobOptions& options);

// A fresh request of `operation`'s type from `options`. InvalidArgument with the text to print
// (cli/input.h LoadRequest) when the input cannot be read or parsed.
absl::StatusOr<std::unique_ptr<google::protobuf::Message>> BuildRequest(
    const Operation& operation, const OperationOptions& options);

// --- The commands. ---

// Every method returns the process exit code (cli/errors.h): 0, 252 for bad parameters, 254 for
// a service error, 255 for no connection; Watch returns 1 when the tuning job did not complete.
// Output goes to `out`, errors to `err`. Single-threaded; blocking calls.
class Commands {
 public:
  // `stub`, `out` and `err` must outlive this object. `endpoint` is only quoted in errors.
  // Unary calls time out after `call_timeout` (the aws cli's default read timeout is 60 s);
  // the streams of `logs` and `watch` have no deadline.
  Commands(v1::TuningService::StubInterface& stub, std::string endpoint, std::ostream& out,
           std::ostream& err, std::chrono::seconds call_timeout = std::chrono::seconds(60));

  // Every call then carries the x-amt-credential `credential()` makes (common/grpc_credential.h),
  // for an amtd started with --credentials.
  void set_credential(std::function<std::string()> credential) {
    credential_ = std::move(credential);
  }

  // Any unary operation: the request from `options` (BuildRequest), one call, the response
  // printed as JSON (nothing for an empty one). The commands below are the same with their own
  // flags: the name of the job as a required flag, the aws cli's automatic pagination.
  int Send(const Operation& operation, const OperationOptions& options);

  int CreateHyperParameterTuningJob(const CreateHyperParameterTuningJobOptions& options);
  int DescribeHyperParameterTuningJob(const std::string& hyper_parameter_tuning_job_name);
  int ListHyperParameterTuningJobs(const ListHyperParameterTuningJobsOptions& options);
  int ListTrainingJobsForHyperParameterTuningJob(
      const ListTrainingJobsForHyperParameterTuningJobOptions& options);
  int StopHyperParameterTuningJob(const std::string& hyper_parameter_tuning_job_name);
  int DeleteHyperParameterTuningJob(const std::string& hyper_parameter_tuning_job_name);
  int CreateTrainingJob(const CreateTrainingJobOptions& options);
  int DescribeTrainingJob(const std::string& training_job_name);
  int ListTrainingJobs(const ListTrainingJobsOptions& options);
  int StopTrainingJob(const std::string& training_job_name);
  int DeleteTrainingJob(const std::string& training_job_name);

  // Prints the Message of every log line, one per line, as the trainer printed it.
  int Logs(const LogsOptions& options);

  // Renders the WatchHyperParameterTuningJob stream with a ProgressRenderer until the tuning
  // job ends, then its summary. 0 iff the tuning job ended Completed, else 1.
  int Watch(const WatchOptions& options);

  // Prints every early-stopping decision of a training job (ExplainTrainingJob): one line per
  // objective emission with the values compared, or the response JSON with `json`.
  int Explain(const std::string& training_job_name, bool json);

 private:
  using Stub = v1::TuningService::StubInterface;

  // One call; prints the response (or the error). Defined in commands.cc.
  template <typename Request, typename Response>
  int Unary(const std::string& operation,
            grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
            const Request& request);

  // Calls until NextToken runs out (when `paginate`), concatenating the list that `list`
  // selects, and prints the merged response without NextToken. Defined in commands.cc.
  template <typename Request, typename Response, typename ListFn>
  int List(const std::string& operation,
           grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
           Request request, const PaginationOptions& pagination, ListFn list);

  template <typename Request, typename Response>
  grpc::Status Call(grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                    const Request& request, Response* response);

  // Signs `context` and sets the unary calls' deadline.
  void Prepare(grpc::ClientContext& context) const;
  int Print(const google::protobuf::Message& response);
  int Fail(const grpc::Status& status, const std::string& operation);
  int FailUsage(const absl::Status& status);

  Stub& stub_;
  const std::string endpoint_;
  std::ostream& out_;
  std::ostream& err_;
  const std::chrono::seconds call_timeout_;
  std::function<std::string()> credential_;
  // Adds the credential (if any) to a call's context.
  void Sign(grpc::ClientContext& context) const;
};

}  // namespace amt::cli

#endif  // AMT_CLI_COMMANDS_H_
