// SageMakerJsonHandler: SageMaker's own wire protocol (AWS JSON 1.1) in front of SageMakerApi, so
// that boto3, the aws cli and the SageMaker Python SDK talk to amtd unchanged (spec §10). It is
// one ProtocolHandler of HttpServer; the AWS JSON helpers below serve any other JSON protocol
// service (CloudWatch Logs) the same way.
//
// amt-local's own operations (ExplainTrainingJob, ExplainHyperParameterTuningJob: the web page's
// reads) are served the same way as `X-Amz-Target: AmtLocal.<Operation>`.
//
// A request is `POST /` with `X-Amz-Target: SageMaker.<Operation>` and a JSON body in the
// SageMaker shape; the handler parses the body into the operation's request message (the proto
// json_names are SageMaker's member names), calls the SageMakerApi method of the same name (the
// table in proto/amt/v1/operations.h: same validation, same loop, same persistence as over gRPC),
// and prints the response message back as JSON. Errors are AWS JSON errors:
// {"__type": "<SageMaker error name>", "message": "..."} with HTTP 400, 500 for InternalFailure.
//
// The transcoding is pure (no sockets): HttpServer (http_server.h) carries the bytes.
#ifndef AMT_ORCHESTRATOR_GATEWAY_AWS_JSON_H_
#define AMT_ORCHESTRATOR_GATEWAY_AWS_JSON_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/api/sagemaker_api.h"
#include "orchestrator/gateway/protocol_handler.h"

namespace amt::gateway {

// {"__type": name, "message": message} as AWS JSON errors carry it. Never throws: bytes that are
// not UTF-8 become U+FFFD.
std::string AwsErrorBody(std::string_view name, std::string_view message);

// Parses an AWS JSON request body into `message`: "" counts as "{}"; unknown members are ignored.
// InvalidArgument with a readable (UTF-8) message when the body is not UTF-8, not a JSON object,
// or has a member of the wrong type: the AWS JSON protocols answer it as SerializationException.
absl::Status DecodeAwsJsonBody(std::string_view body, google::protobuf::Message* message);

class SageMakerJsonHandler final : public ProtocolHandler {
 public:
  // `api` must outlive the handler. Thread-safe (the API is).
  explicit SageMakerJsonHandler(const api::SageMakerApi& api);

  std::string_view Description() const override;
  // POST with an X-Amz-Target header naming SageMaker or amt-local ("SageMaker.<anything>",
  // "AmtLocal.<anything>").
  bool Accepts(const HttpRequest& request) const override;
  // Content type application/x-amz-json-1.1, header x-amzn-RequestId, and:
  //   unknown operation            -> 400 UnknownOperationException
  //   body not UTF-8, not a JSON object, or a member of the wrong type
  //                                -> 400 SerializationException
  //   the operation's own errors   -> 400 with SageMaker's name (ValidationException,
  //                                   ResourceNotFound, ResourceInUse, ...), 500 InternalFailure
  HttpResponse Handle(const HttpRequest& request) const override;
  // 413 SerializationException (see the .cc for why that name).
  HttpResponse BodyTooLarge(const HttpRequest& request, size_t limit_bytes) const override;

  // The operations served, "AmtLocal.<Operation>" and "SageMaker.<Operation>", sorted.
  std::vector<std::string> Operations() const;

 private:
  using Operation = std::function<HttpResponse(std::string_view body)>;
  std::map<std::string, Operation, std::less<>> operations_;
};

}  // namespace amt::gateway

#endif  // AMT_ORCHESTRATOR_GATEWAY_AWS_JSON_H_
