#include "orchestrator/gateway/aws_json.h"

#include <cstdio>
#include <utility>

#include "common/errors.h"
#include "common/json.h"
#include "common/utf8.h"
#include "nlohmann/json.hpp"
#include "proto/amt/v1/operations.h"

namespace amt::gateway {
namespace {

constexpr std::string_view kTargetPrefix = "SageMaker.";
// amt-local's own operations (proto/amt/v1/operations.h AMT_EXTENSION_OPERATIONS), for the web
// page.
constexpr std::string_view kExtensionPrefix = "AmtLocal.";
constexpr char kContentType[] = "application/x-amz-json-1.1";

HttpResponse JsonReply(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.content_type = kContentType;
  response.body = std::move(body);
  return response;
}

HttpResponse ErrorReply(int status, std::string_view name, std::string_view message) {
  return JsonReply(status, AwsErrorBody(name, message));
}

// The one place where an absl::Status becomes a SageMaker error on the HTTP wire.
HttpResponse FromStatus(const absl::Status& status) {
  const std::string_view name = SageMakerErrorName(status.code());
  // AWS's common errors: InternalFailure is a 500, ServiceUnavailable a 503 (botocore retries
  // both); every SageMaker error is a 400.
  const int http_status = name == "InternalFailure"      ? 500
                          : name == "ServiceUnavailable" ? 503
                                                         : 400;
  return ErrorReply(http_status, name, std::string(status.message()));
}

// One operation: JSON body -> Request -> the API method -> Response -> JSON.
template <typename Request, typename Response>
std::function<HttpResponse(std::string_view)> Unary(
    const api::SageMakerApi& api,
    absl::StatusOr<Response> (api::SageMakerApi::*method)(const Request&) const) {
  return [&api, method](std::string_view body) {
    Request request;
    if (absl::Status decoded = DecodeAwsJsonBody(body, &request); !decoded.ok()) {
      return ErrorReply(400, "SerializationException", std::string(decoded.message()));
    }
    absl::StatusOr<Response> response = (api.*method)(request);
    if (!response.ok()) return FromStatus(response.status());
    return JsonReply(200, ProtoToAwsJson(*response));
  };
}

}  // namespace

std::string AwsErrorBody(std::string_view name, std::string_view message) {
  // nlohmann's dump() throws type_error 316 on bytes that are not UTF-8 (a parser's message may
  // quote the raw request); `replace` keeps an error reply from taking amtd down.
  return nlohmann::json{{"__type", name}, {"message", message}}.dump(
      -1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

absl::Status DecodeAwsJsonBody(std::string_view body, google::protobuf::Message* message) {
  // Checked first: protobuf's parser quotes the offending input in its message, and a message
  // must be UTF-8 to be sent back in a JSON error.
  if (const auto bad = InvalidUtf8Offset(body); bad.has_value()) {
    char byte[8];
    std::snprintf(byte, sizeof(byte), "0x%02X", static_cast<unsigned char>(body[*bad]));
    return absl::InvalidArgumentError("The request body is not valid UTF-8: byte " +
                                      std::string(byte) + " at offset " + std::to_string(*bad) +
                                      ".");
  }
  // AWS JSON bodies are objects; protobuf's parser would also take other JSON for a message.
  const auto first = body.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return absl::OkStatus();  // "" counts as "{}"
  if (body[first] != '{') {
    return absl::InvalidArgumentError("The request body must be a JSON object.");
  }
  return JsonToProto(body, message);
}

SageMakerJsonHandler::SageMakerJsonHandler(const api::SageMakerApi& api) {
  // The HTTP targets: SageMaker's operations of the table, the same the gRPC service serves.
#define AMT_ADD_OPERATION(Op) \
  operations_[std::string(kTargetPrefix) + #Op] = Unary(api, &api::SageMakerApi::Op);
  AMT_SAGEMAKER_OPERATIONS(AMT_ADD_OPERATION)
#undef AMT_ADD_OPERATION
#define AMT_ADD_EXTENSION(Op) \
  operations_[std::string(kExtensionPrefix) + #Op] = Unary(api, &api::SageMakerApi::Op);
  AMT_EXTENSION_OPERATIONS(AMT_ADD_EXTENSION)
#undef AMT_ADD_EXTENSION
}

std::string_view SageMakerJsonHandler::Description() const {
  return "SageMaker's AWS JSON 1.1 API (POST / with X-Amz-Target: SageMaker.<Operation>, and "
         "amt-local's AmtLocal.<Operation>)";
}

bool SageMakerJsonHandler::Accepts(const HttpRequest& request) const {
  const std::string* target = request.Header("x-amz-target");
  return request.method == "POST" && target != nullptr &&
         (target->starts_with(kTargetPrefix) || target->starts_with(kExtensionPrefix));
}

HttpResponse SageMakerJsonHandler::Handle(const HttpRequest& request) const {
  const std::string* target = request.Header("x-amz-target");
  const auto operation =
      target == nullptr ? operations_.end() : operations_.find(std::string_view(*target));
  HttpResponse response =
      operation != operations_.end()
          ? operation->second(request.body)
          : ErrorReply(400, "UnknownOperationException",
                       target == nullptr ? "Missing X-Amz-Target header."
                                         : "Unknown operation " + *target + ".");
  response.headers.emplace_back("x-amzn-RequestId", request.request_id);
  return response;
}

HttpResponse SageMakerJsonHandler::BodyTooLarge(const HttpRequest& request,
                                                size_t limit_bytes) const {
  // 413 is what HTTP calls it (proxies and plain clients understand it, and botocore does not
  // retry it); the __type is SerializationException because the body was never read, so it
  // cannot be validated member by member as a ValidationException would imply.
  HttpResponse response = ErrorReply(
      413, "SerializationException",
      "The request body exceeds the limit of " + std::to_string(limit_bytes) + " bytes.");
  response.headers.emplace_back("x-amzn-RequestId", request.request_id);
  return response;
}

std::vector<std::string> SageMakerJsonHandler::Operations() const {
  std::vector<std::string> out;
  for (const auto& [name, operation] : operations_) out.push_back(name);
  return out;
}

}  // namespace amt::gateway
