#include "orchestrator/gateway/unserved_query.h"

#include <optional>
#include <string>

#include "orchestrator/gateway/query_protocol.h"

namespace amt::gateway {
namespace {

// The error's namespace: AWS's query services write their own; with no service known, none.
std::string XmlnsOf(const std::optional<std::string>& service, const std::string* version) {
  if (!service.has_value() || version == nullptr) return "";
  return "https://" + *service + ".amazonaws.com/doc/" + *version + "/";
}

}  // namespace

std::string_view UnservedQueryHandler::Description() const {
  return "AWS query-protocol requests amtd does not serve (POST / with a form body with Action= "
         "and Version=): InvalidAction in XML";
}

bool UnservedQueryHandler::Accepts(const HttpRequest& request) const {
  if (request.method != "POST") return false;
  const std::string_view target = request.target;
  if (target.substr(0, target.find('?')) != "/") return false;
  if (!query::IsFormContentType(request)) return false;
  const query::Form form = query::ParseForm(request.body);
  return query::FormValue(form, "Action") != nullptr &&
         query::FormValue(form, "Version") != nullptr;
}

HttpResponse UnservedQueryHandler::Handle(const HttpRequest& request) const {
  const query::Form form = query::ParseForm(request.body);
  const std::string* action = query::FormValue(form, "Action");
  const std::string* version = query::FormValue(form, "Version");
  const std::optional<std::string> service = query::ScopeService(request);
  std::string message = "amt-local does not serve " + (action ? *action : std::string("-"));
  if (service.has_value()) message += " of " + *service;
  message += " (API version " + (version ? *version : std::string("-")) + ").";
  return query::ErrorReply(XmlnsOf(service, version), 400, "InvalidAction", message,
                           request.request_id);
}

}  // namespace amt::gateway
