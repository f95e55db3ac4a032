// UnservedQueryHandler: the answer to a request of the AWS query protocol (query_protocol.h) for
// a service or action amtd does not serve (SNS, SQS, IAM's ListRoles, ...): 400 InvalidAction in
// the protocol's XML ErrorResponse, which every botocore parses into a ClientError, never the
// JSON 404 that a query client cannot read. It goes after every handler that serves a query
// service (STS, IAM, CloudWatch) and before S3's, which takes what is left.
//
// A request is one of the protocol when it is POST / with a form body (content type
// application/x-www-form-urlencoded) that has Action= and Version=.
#ifndef AMT_ORCHESTRATOR_GATEWAY_UNSERVED_QUERY_H_
#define AMT_ORCHESTRATOR_GATEWAY_UNSERVED_QUERY_H_

#include <string_view>

#include "orchestrator/gateway/query_service.h"

namespace amt::gateway {

class UnservedQueryHandler final : public query::ServiceHandler {
 public:
  UnservedQueryHandler() : ServiceHandler("") {}

  std::string_view Description() const override;
  bool Accepts(const HttpRequest& request) const override;
  // 400 InvalidAction: "amt-local does not serve <Action> of <service> (API version
  // <Version>)", the service from the request's credential scope when it is signed.
  HttpResponse Handle(const HttpRequest& request) const override;
};

}  // namespace amt::gateway

#endif  // AMT_ORCHESTRATOR_GATEWAY_UNSERVED_QUERY_H_
