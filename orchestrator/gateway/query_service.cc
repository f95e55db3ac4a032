#include "orchestrator/gateway/query_service.h"

#include <string>

namespace amt::gateway::query {

HttpResponse ServiceHandler::BodyTooLarge(const HttpRequest& request, size_t limit_bytes) const {
  return ErrorReply(
      xmlns_, 413, "RequestEntityTooLarge",
      "The request body exceeds the limit of " + std::to_string(limit_bytes) + " bytes.",
      request.request_id);
}

HttpResponse ServiceHandler::Unauthenticated(const HttpRequest& request,
                                             const auth::AuthFailure& failure) const {
  return AuthErrorReply(xmlns_, failure, request.request_id);
}

}  // namespace amt::gateway::query
