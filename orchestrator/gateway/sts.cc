#include "orchestrator/gateway/sts.h"

#include <string>

#include "orchestrator/gateway/query_protocol.h"
#include "orchestrator/gateway/xml.h"

namespace amt::gateway {
namespace {

constexpr std::string_view kVersion = "2011-06-15";

}  // namespace

std::string_view StsHandler::Description() const {
  return "STS's GetCallerIdentity (AWS query protocol: POST / with Action=GetCallerIdentity, "
         "signed for sts)";
}

bool StsHandler::Accepts(const HttpRequest& request) const {
  return query::IsQueryRequest(request, "sts", kVersion);
}

HttpResponse StsHandler::Handle(const HttpRequest& request) const {
  // botocore always sends a form; a signed request with anything else is answered as STS answers
  // a body it cannot read: as a request without an action.
  const query::Form form =
      query::IsFormContentType(request) ? query::ParseForm(request.body) : query::Form();
  const std::string* action = query::FormValue(form, "Action");
  if (action == nullptr || *action != "GetCallerIdentity") {
    const std::string named = action == nullptr ? std::string("no action") : *action;
    return query::ErrorReply(kStsXmlns, 400, "InvalidAction",
                             "amt-local serves GetCallerIdentity of STS, not " + named + ".",
                             request.request_id);
  }
  const ArnContext& arn = arn_context_;
  xml::Writer writer("GetCallerIdentityResponse", kStsXmlns);
  writer.Open("GetCallerIdentityResult")
      .Leaf("Arn", "arn:aws:sts::" + arn.account + ":assumed-role/" + arn.execution_role + "/" +
                       arn.role_session)
      .Leaf("UserId", ExecutionRoleId(arn) + ":" + arn.role_session)
      .Leaf("Account", arn.account)
      .Close()
      .Open("ResponseMetadata")
      .Leaf("RequestId", request.request_id)
      .Close();
  return query::Reply(200, std::move(writer).Finish(), request.request_id);
}

}  // namespace amt::gateway
