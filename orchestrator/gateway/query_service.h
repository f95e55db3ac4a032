// The base of the query-protocol services' handlers (STS, IAM, the unserved rest). Apart from
// query_protocol.{h,cc}, which is pure decoding and encoding (and so fuzzed alone, without the
// gateway's handler interface).
#ifndef AMT_ORCHESTRATOR_GATEWAY_QUERY_SERVICE_H_
#define AMT_ORCHESTRATOR_GATEWAY_QUERY_SERVICE_H_

#include <string>
#include <string_view>

#include "orchestrator/gateway/protocol_handler.h"
#include "orchestrator/gateway/query_protocol.h"

namespace amt::gateway::query {

// The base of a query-protocol service's handler (STS, IAM, the unserved rest): its refusals of
// a body over the limit (413 RequestEntityTooLarge) and of a bad signature (AuthErrorReply) in
// the ErrorResponse shape, under the service's XML namespace ("" for none).
class ServiceHandler : public ProtocolHandler {
 public:
  explicit ServiceHandler(std::string_view xmlns) : xmlns_(xmlns) {}

  HttpResponse BodyTooLarge(const HttpRequest& request, size_t limit_bytes) const override;
  HttpResponse Unauthenticated(const HttpRequest& request,
                               const auth::AuthFailure& failure) const override;

 protected:
  std::string_view xmlns() const { return xmlns_; }

 private:
  const std::string xmlns_;
};

}  // namespace amt::gateway::query

#endif  // AMT_ORCHESTRATOR_GATEWAY_QUERY_SERVICE_H_
