// AwsJsonGateway: SageMaker's own wire protocol (AWS JSON 1.1) in front of TuningService, so that
// boto3, the aws cli and the SageMaker Python SDK talk to amtd unchanged (spec §10).
//
// A request is `POST /` with `X-Amz-Target: SageMaker.<Operation>` and a JSON body in the
// SageMaker shape; the gateway parses the body into the operation's request message (the proto
// json_names are SageMaker's member names), calls the same TuningServiceImpl method the gRPC
// server calls (same validation, same loop, same persistence before the reply), and prints the
// response message back as JSON. Errors are AWS JSON errors: HTTP 400 with
// {"__type": "<SageMaker error name>", "message": "..."}, 500 for internal failures.
//
// The transcoding is pure (no sockets): HttpServer (http_server.h) carries the bytes.
#ifndef AMT_ORCHESTRATOR_GATEWAY_AWS_JSON_H_
#define AMT_ORCHESTRATOR_GATEWAY_AWS_JSON_H_

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "orchestrator/api/tuning_service.h"

namespace amt::gateway {

struct HttpReply {
  int status = 200;
  std::string body;  // application/x-amz-json-1.1
};

class AwsJsonGateway {
 public:
  // `service` must outlive the gateway. Thread-safe when the service is (it is).
  explicit AwsJsonGateway(api::TuningServiceImpl& service);

  // Handles one request. `target` is the X-Amz-Target header ("SageMaker.DescribeTrainingJob"),
  // `body` the JSON body ("" counts as "{}").
  //   unknown or missing target    -> 400 UnknownOperationException
  //   body not a JSON object, or a member of the wrong type -> 400 SerializationException
  //   the operation's own errors   -> 400 with SageMaker's name (ValidationException,
  //                                   ResourceNotFound, ResourceInUse, ...), 500 InternalFailure
  HttpReply Handle(std::string_view target, std::string_view body) const;

  // The operations served, "SageMaker.<Operation>", sorted.
  std::vector<std::string> Operations() const;

 private:
  using Handler = std::function<HttpReply(std::string_view body)>;
  std::map<std::string, Handler, std::less<>> handlers_;
};

// {"__type": name, "message": message} as AWS JSON errors carry it.
std::string AwsErrorBody(std::string_view name, std::string_view message);

}  // namespace amt::gateway

#endif  // AMT_ORCHESTRATOR_GATEWAY_AWS_JSON_H_
