#include "cli/commands.h"

#include <utility>
#include <vector>

#include "cli/errors.h"
#include "cli/input.h"
#include "cli/output.h"
#include "cli/progress.h"
#include "common/grpc_credential.h"
#include "common/status_macros.h"

namespace amt::cli {
namespace {

template <typename Request>
void SetPaging(const PaginationOptions& options, bool paginate, Request* request) {
  const std::optional<int>& limit = paginate ? options.page_size : options.max_results;
  const std::optional<std::string>& token = paginate ? options.starting_token : options.next_token;
  if (limit.has_value()) request->set_max_results(*limit);
  if (token.has_value()) request->set_next_token(*token);
}

bool IsTerminal(const std::string& tuning_job_status) {
  return tuning_job_status == "Completed" || tuning_job_status == "Failed" ||
         tuning_job_status == "Stopped";
}

}  // namespace

absl::StatusOr<bool> ShouldPaginate(const PaginationOptions& options) {
  const bool paginate =
      !options.no_paginate && !options.max_results.has_value() && !options.next_token.has_value();
  if (paginate) return true;
  // The aws cli rejects its paginator arguments once pagination is off
  // (ensure_paging_params_not_set).
  std::vector<std::string> used;
  if (options.starting_token.has_value()) used.push_back("--starting-token");
  if (options.page_size.has_value()) used.push_back("--page-size");
  if (!used.empty()) {
    std::string message = "Cannot specify --no-paginate along with pagination arguments: ";
    for (size_t i = 0; i < used.size(); ++i) message += (i == 0 ? "" : ", ") + used[i];
    return absl::InvalidArgumentError(message);
  }
  return false;
}

v1::ListHyperParameterTuningJobsRequest BuildListHyperParameterTuningJobsRequest(
    const ListHyperParameterTuningJobsOptions& options) {
  v1::ListHyperParameterTuningJobsRequest request;
  const absl::StatusOr<bool> paginate = ShouldPaginate(options.pagination);
  SetPaging(options.pagination, paginate.ok() && *paginate, &request);
  if (options.sort_by) request.set_sort_by(*options.sort_by);
  if (options.sort_order) request.set_sort_order(*options.sort_order);
  if (options.name_contains) request.set_name_contains(*options.name_contains);
  if (options.status_equals) request.set_status_equals(*options.status_equals);
  return request;
}

v1::ListTrainingJobsForHyperParameterTuningJobRequest
BuildListTrainingJobsForHyperParameterTuningJobRequest(
    const ListTrainingJobsForHyperParameterTuningJobOptions& options) {
  v1::ListTrainingJobsForHyperParameterTuningJobRequest request;
  request.set_hyper_parameter_tuning_job_name(options.hyper_parameter_tuning_job_name);
  const absl::StatusOr<bool> paginate = ShouldPaginate(options.pagination);
  SetPaging(options.pagination, paginate.ok() && *paginate, &request);
  if (options.sort_by) request.set_sort_by(*options.sort_by);
  if (options.sort_order) request.set_sort_order(*options.sort_order);
  if (options.status_equals) request.set_status_equals(*options.status_equals);
  return request;
}

v1::ListTrainingJobsRequest BuildListTrainingJobsRequest(const ListTrainingJobsOptions& options) {
  v1::ListTrainingJobsRequest request;
  const absl::StatusOr<bool> paginate = ShouldPaginate(options.pagination);
  SetPaging(options.pagination, paginate.ok() && *paginate, &request);
  if (options.sort_by) request.set_sort_by(*options.sort_by);
  if (options.sort_order) request.set_sort_order(*options.sort_order);
  if (options.name_contains) request.set_name_contains(*options.name_contains);
  if (options.status_equals) request.set_status_equals(*options.status_equals);
  return request;
}

absl::StatusOr<v1::CreateHyperParameterTuningJobRequest> BuildCreateHyperParameterTuningJobRequest(
    const CreateHyperParameterTuningJobOptions& options) {
  v1::CreateHyperParameterTuningJobRequest request;
  RETURN_IF_ERROR(LoadRequest(options.cli_input_json, options.members, &request));
  if (options.hyper_parameter_tuning_job_name) {
    request.set_hyper_parameter_tuning_job_name(*options.hyper_parameter_tuning_job_name);
  }
  return request;
}

absl::StatusOr<v1::CreateTrainingJobRequest> BuildCreateTrainingJobRequest(
    const CreateTrainingJobOptions& options) {
  v1::CreateTrainingJobRequest request;
  RETURN_IF_ERROR(LoadRequest(options.cli_input_json, options.members, &request));
  if (options.training_job_name) request.set_training_job_name(*options.training_job_name);
  return request;
}

absl::StatusOr<std::unique_ptr<google::protobuf::Message>> BuildRequest(
    const Operation& operation, const OperationOptions& options) {
  std::unique_ptr<google::protobuf::Message> request(operation.request->New());
  RETURN_IF_ERROR(LoadRequest(options.cli_input_json, options.members, request.get()));
  return request;
}

Commands::Commands(v1::TuningService::StubInterface& stub, std::string endpoint, std::ostream& out,
                   std::ostream& err, std::chrono::seconds call_timeout)
    : stub_(stub),
      endpoint_(std::move(endpoint)),
      out_(out),
      err_(err),
      call_timeout_(call_timeout) {}

void Commands::Sign(grpc::ClientContext& context) const {
  if (credential_) context.AddMetadata(auth::kGrpcCredentialMetadata, credential_());
}

void Commands::Prepare(grpc::ClientContext& context) const {
  Sign(context);
  // gRPC deadlines are wall-clock by definition; this is I/O configuration, not logic.
  context.set_deadline(std::chrono::system_clock::now() + call_timeout_);
}

template <typename Request, typename Response>
grpc::Status Commands::Call(grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&,
                                                         Response*),
                            const Request& request, Response* response) {
  grpc::ClientContext context;
  Prepare(context);
  return (stub_.*method)(&context, request, response);
}

int Commands::Print(const google::protobuf::Message& response) {
  out_ << FormatResponse(response);
  out_.flush();
  return kExitSuccess;
}

template <typename Request, typename Response>
int Commands::Unary(const std::string& operation,
                    grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                    const Request& request) {
  Response response;
  const grpc::Status status = Call(method, request, &response);
  if (!status.ok()) return Fail(status, operation);
  return Print(response);
}

int Commands::Send(const Operation& operation, const OperationOptions& options) {
  absl::StatusOr<std::unique_ptr<google::protobuf::Message>> request =
      BuildRequest(operation, options);
  if (!request.ok()) return FailUsage(request.status());
  std::unique_ptr<google::protobuf::Message> response(operation.response->New());
  grpc::ClientContext context;
  Prepare(context);
  const grpc::Status status = operation.call(stub_, &context, **request, response.get());
  if (!status.ok()) return Fail(status, operation.name);
  return Print(*response);
}

template <typename Request, typename Response, typename ListFn>
int Commands::List(const std::string& operation,
                   grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                   Request request, const PaginationOptions& pagination, ListFn list) {
  const absl::StatusOr<bool> paginate = ShouldPaginate(pagination);
  if (!paginate.ok()) return FailUsage(paginate.status());
  Response merged;
  while (true) {
    Response page;
    const grpc::Status status = Call(method, request, &page);
    if (!status.ok()) return Fail(status, operation);
    if (!*paginate) {
      merged = std::move(page);
      break;
    }
    auto* items = list(page);
    auto* all = list(merged);
    for (auto& item : *items) *all->Add() = std::move(item);
    if (!page.has_next_token() || page.next_token().empty()) break;
    // botocore's PageIterator guards against a server that loops; so do we.
    if (request.has_next_token() && page.next_token() == request.next_token()) {
      err_ << "\nError during pagination: The same next token was received twice: {'NextToken': '"
           << page.next_token() << "'}\n";
      err_.flush();
      return kExitOtherError;
    }
    request.set_next_token(page.next_token());
  }
  out_ << FormatResponse(merged);
  out_.flush();
  return kExitSuccess;
}

int Commands::Fail(const grpc::Status& status, const std::string& operation) {
  const CliError error = DescribeRpcError(status, operation, endpoint_);
  err_ << error.text;
  err_.flush();
  return error.exit_code;
}

int Commands::FailUsage(const absl::Status& status) {
  const CliError error = UsageError(std::string(status.message()));
  err_ << error.text;
  err_.flush();
  return error.exit_code;
}

int Commands::CreateHyperParameterTuningJob(const CreateHyperParameterTuningJobOptions& options) {
  absl::StatusOr<v1::CreateHyperParameterTuningJobRequest> request =
      BuildCreateHyperParameterTuningJobRequest(options);
  if (!request.ok()) return FailUsage(request.status());
  return Unary("CreateHyperParameterTuningJob", &Stub::CreateHyperParameterTuningJob, *request);
}

int Commands::DescribeHyperParameterTuningJob(const std::string& hyper_parameter_tuning_job_name) {
  v1::DescribeHyperParameterTuningJobRequest request;
  request.set_hyper_parameter_tuning_job_name(hyper_parameter_tuning_job_name);
  return Unary("DescribeHyperParameterTuningJob", &Stub::DescribeHyperParameterTuningJob, request);
}

int Commands::ListHyperParameterTuningJobs(const ListHyperParameterTuningJobsOptions& options) {
  return List("ListHyperParameterTuningJobs", &Stub::ListHyperParameterTuningJobs,
              BuildListHyperParameterTuningJobsRequest(options), options.pagination,
              [](v1::ListHyperParameterTuningJobsResponse& r) {
                return r.mutable_hyper_parameter_tuning_job_summaries();
              });
}

int Commands::ListTrainingJobsForHyperParameterTuningJob(
    const ListTrainingJobsForHyperParameterTuningJobOptions& options) {
  return List("ListTrainingJobsForHyperParameterTuningJob",
              &Stub::ListTrainingJobsForHyperParameterTuningJob,
              BuildListTrainingJobsForHyperParameterTuningJobRequest(options), options.pagination,
              [](v1::ListTrainingJobsForHyperParameterTuningJobResponse& r) {
                return r.mutable_training_job_summaries();
              });
}

int Commands::StopHyperParameterTuningJob(const std::string& hyper_parameter_tuning_job_name) {
  v1::StopHyperParameterTuningJobRequest request;
  request.set_hyper_parameter_tuning_job_name(hyper_parameter_tuning_job_name);
  return Unary("StopHyperParameterTuningJob", &Stub::StopHyperParameterTuningJob, request);
}

int Commands::DeleteHyperParameterTuningJob(const std::string& hyper_parameter_tuning_job_name) {
  v1::DeleteHyperParameterTuningJobRequest request;
  request.set_hyper_parameter_tuning_job_name(hyper_parameter_tuning_job_name);
  return Unary("DeleteHyperParameterTuningJob", &Stub::DeleteHyperParameterTuningJob, request);
}

int Commands::CreateTrainingJob(const CreateTrainingJobOptions& options) {
  absl::StatusOr<v1::CreateTrainingJobRequest> request = BuildCreateTrainingJobRequest(options);
  if (!request.ok()) return FailUsage(request.status());
  return Unary("CreateTrainingJob", &Stub::CreateTrainingJob, *request);
}

int Commands::DescribeTrainingJob(const std::string& training_job_name) {
  v1::DescribeTrainingJobRequest request;
  request.set_training_job_name(training_job_name);
  return Unary("DescribeTrainingJob", &Stub::DescribeTrainingJob, request);
}

int Commands::ListTrainingJobs(const ListTrainingJobsOptions& options) {
  return List("ListTrainingJobs", &Stub::ListTrainingJobs, BuildListTrainingJobsRequest(options),
              options.pagination,
              [](v1::ListTrainingJobsResponse& r) { return r.mutable_training_job_summaries(); });
}

int Commands::StopTrainingJob(const std::string& training_job_name) {
  v1::StopTrainingJobRequest request;
  request.set_training_job_name(training_job_name);
  return Unary("StopTrainingJob", &Stub::StopTrainingJob, request);
}

int Commands::DeleteTrainingJob(const std::string& training_job_name) {
  v1::DeleteTrainingJobRequest request;
  request.set_training_job_name(training_job_name);
  return Unary("DeleteTrainingJob", &Stub::DeleteTrainingJob, request);
}

int Commands::Logs(const LogsOptions& options) {
  v1::GetTrainingJobLogsRequest request;
  request.set_training_job_name(options.training_job_name);
  if (options.follow) request.set_follow(true);
  if (options.host) request.set_host(*options.host);
  grpc::ClientContext context;  // no deadline: --follow lasts as long as the training job
  Sign(context);
  std::unique_ptr<grpc::ClientReaderInterface<v1::GetTrainingJobLogsResponse>> reader =
      stub_.GetTrainingJobLogs(&context, request);
  v1::GetTrainingJobLogsResponse batch;
  while (reader->Read(&batch)) {
    for (const v1::LogLine& line : batch.lines()) {
      if (options.prefix_host) out_ << (line.has_host() ? line.host() : "algo-1") << ": ";
      out_ << line.message() << '\n';
    }
    out_.flush();
  }
  const grpc::Status status = reader->Finish();
  if (!status.ok()) return Fail(status, "GetTrainingJobLogs");
  return kExitSuccess;
}

int Commands::Watch(const WatchOptions& options) {
  v1::WatchHyperParameterTuningJobRequest request;
  request.set_hyper_parameter_tuning_job_name(options.hyper_parameter_tuning_job_name);
  request.set_changes_only(true);  // the renderer merges; a message costs what changed
  ProgressRenderer renderer(out_, options.tty, options.width);
  grpc::ClientContext context;  // no deadline: the stream lasts as long as the tuning job
  Sign(context);
  std::unique_ptr<grpc::ClientReaderInterface<v1::WatchHyperParameterTuningJobResponse>> reader =
      stub_.WatchHyperParameterTuningJob(&context, request);
  v1::WatchHyperParameterTuningJobResponse snapshot;
  v1::DescribeHyperParameterTuningJobResponse last;
  while (reader->Read(&snapshot)) {
    renderer.Update(snapshot);
    last = snapshot.tuning_job();
  }
  const grpc::Status status = reader->Finish();
  if (!status.ok()) return Fail(status, "WatchHyperParameterTuningJob");
  // The stream ends once the tuning job is terminal; if it ended early (amtd shutting down),
  // ask for the current state rather than summarise a stale snapshot.
  if (!IsTerminal(last.hyper_parameter_tuning_job_status())) {
    v1::DescribeHyperParameterTuningJobRequest describe;
    describe.set_hyper_parameter_tuning_job_name(options.hyper_parameter_tuning_job_name);
    const grpc::Status describe_status =
        Call(&Stub::DescribeHyperParameterTuningJob, describe, &last);
    if (!describe_status.ok()) return Fail(describe_status, "DescribeHyperParameterTuningJob");
  }
  renderer.Finish(last);
  return last.hyper_parameter_tuning_job_status() == "Completed" ? kExitSuccess : kExitNotCompleted;
}

int Commands::Explain(const std::string& training_job_name, bool json) {
  v1::ExplainTrainingJobRequest request;
  request.set_training_job_name(training_job_name);
  if (json) return Unary("ExplainTrainingJob", &Stub::ExplainTrainingJob, request);
  v1::ExplainTrainingJobResponse response;
  const grpc::Status status = Call(&Stub::ExplainTrainingJob, request, &response);
  if (!status.ok()) return Fail(status, "ExplainTrainingJob");
  out_ << "Training job " << response.training_job_name();
  if (response.has_tuning_job_name()) out_ << " of tuning job " << response.tuning_job_name();
  out_ << ", early stopping " << response.early_stopping() << ", "
       << response.objective_values_size() << " objective emission(s)\n";
  if (response.early_stopping() == "Off") {
    out_ << "No early-stopping rule applies to this job: nothing was decided.\n";
    return kExitSuccess;
  }
  for (const auto& d : response.decisions()) {
    out_ << (d.stop() ? "STOP      " : "continue  ") << d.explanation() << "\n";
  }
  if (response.decisions_size() == 0) out_ << "No decision yet (no objective emitted).\n";
  return kExitSuccess;
}

}  // namespace amt::cli
