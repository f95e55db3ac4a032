#include "orchestrator/gateway/aws_json.h"

#include <utility>

#include "common/errors.h"
#include "common/json.h"
#include "nlohmann/json.hpp"

namespace amt::gateway {
namespace {

constexpr std::string_view kTargetPrefix = "SageMaker.";

HttpReply ErrorReply(int status, std::string_view name, std::string_view message) {
  return {status, AwsErrorBody(name, message)};
}

HttpReply FromGrpc(const grpc::Status& status) {
  // TuningServiceImpl carries absl codes as gRPC codes of the same number (api::ToGrpc).
  const auto code = static_cast<absl::StatusCode>(status.error_code());
  const std::string_view name = SageMakerErrorName(code);
  return ErrorReply(name == "InternalFailure" ? 500 : 400, name, status.error_message());
}

// One unary operation: JSON body -> Request -> the service method -> Response -> JSON.
template <typename Request, typename Response>
std::function<HttpReply(std::string_view)> Unary(
    api::TuningServiceImpl& service,
    grpc::Status (api::TuningServiceImpl::*method)(grpc::ServerContext*, const Request*,
                                                   Response*)) {
  return [&service, method](std::string_view body) {
    Request request;
    // AWS JSON bodies are objects; protobuf's parser would also take other JSON for a message.
    const auto first = body.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && body[first] != '{') {
      return ErrorReply(400, "SerializationException", "The request body must be a JSON object.");
    }
    if (first != std::string_view::npos) {
      if (absl::Status parsed = JsonToProto(body, &request); !parsed.ok()) {
        return ErrorReply(400, "SerializationException", std::string(parsed.message()));
      }
    }
    Response response;
    const grpc::Status status = (service.*method)(nullptr, &request, &response);
    if (!status.ok()) return FromGrpc(status);
    return HttpReply{200, ProtoToAwsJson(response)};
  };
}

}  // namespace

std::string AwsErrorBody(std::string_view name, std::string_view message) {
  return nlohmann::json{{"__type", name}, {"message", message}}.dump();
}

AwsJsonGateway::AwsJsonGateway(api::TuningServiceImpl& service) {
  using S = api::TuningServiceImpl;
  const std::string p(kTargetPrefix);
  handlers_[p + "CreateHyperParameterTuningJob"] =
      Unary(service, &S::CreateHyperParameterTuningJob);
  handlers_[p + "DescribeHyperParameterTuningJob"] =
      Unary(service, &S::DescribeHyperParameterTuningJob);
  handlers_[p + "ListHyperParameterTuningJobs"] = Unary(service, &S::ListHyperParameterTuningJobs);
  handlers_[p + "ListTrainingJobsForHyperParameterTuningJob"] =
      Unary(service, &S::ListTrainingJobsForHyperParameterTuningJob);
  handlers_[p + "StopHyperParameterTuningJob"] = Unary(service, &S::StopHyperParameterTuningJob);
  handlers_[p + "CreateTrainingJob"] = Unary(service, &S::CreateTrainingJob);
  handlers_[p + "DescribeTrainingJob"] = Unary(service, &S::DescribeTrainingJob);
  handlers_[p + "ListTrainingJobs"] = Unary(service, &S::ListTrainingJobs);
  handlers_[p + "StopTrainingJob"] = Unary(service, &S::StopTrainingJob);
}

HttpReply AwsJsonGateway::Handle(std::string_view target, std::string_view body) const {
  const auto handler = handlers_.find(target);
  if (handler == handlers_.end()) {
    return ErrorReply(400, "UnknownOperationException",
                      target.empty() ? "Missing X-Amz-Target header."
                                     : "Unknown operation " + std::string(target) + ".");
  }
  return handler->second(body);
}

std::vector<std::string> AwsJsonGateway::Operations() const {
  std::vector<std::string> out;
  for (const auto& [name, handler] : handlers_) out.push_back(name);
  return out;
}

}  // namespace amt::gateway
