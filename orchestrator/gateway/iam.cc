#include "orchestrator/gateway/iam.h"

#include <string>

#include "orchestrator/gateway/query_protocol.h"
#include "orchestrator/gateway/xml.h"

namespace amt::gateway {
namespace {

constexpr std::string_view kVersion = "2010-05-08";

// The trust policy of a SageMaker execution role, URL-encoded as IAM sends policy documents
// (botocore decodes it into a dict): {"Version":"2012-10-17","Statement":[{"Effect":"Allow",
// "Principal":{"Service":"sagemaker.amazonaws.com"},"Action":"sts:AssumeRole"}]}
constexpr std::string_view kTrustPolicy =
    "%7B%22Version%22%3A%222012-10-17%22%2C%22Statement%22%3A%5B%7B%22Effect%22%3A%22Allow%22%2C"
    "%22Principal%22%3A%7B%22Service%22%3A%22sagemaker.amazonaws.com%22%7D%2C%22Action%22%3A%22"
    "sts%3AAssumeRole%22%7D%5D%7D";

// A fixed creation date: the role exists as long as amtd's configuration names it.
constexpr std::string_view kCreateDate = "2026-01-01T00:00:00Z";

}  // namespace

std::string_view IamHandler::Description() const {
  return "IAM's GetRole of amtd's execution role (AWS query protocol: POST / with "
         "Action=GetRole, signed for iam)";
}

bool IamHandler::Accepts(const HttpRequest& request) const {
  return query::IsQueryRequest(request, "iam", kVersion);
}

HttpResponse IamHandler::Handle(const HttpRequest& request) const {
  const query::Form form =
      query::IsFormContentType(request) ? query::ParseForm(request.body) : query::Form();
  const std::string* action = query::FormValue(form, "Action");
  if (action == nullptr || *action != "GetRole") {
    const std::string named = action == nullptr ? std::string("no action") : *action;
    return query::ErrorReply(kIamXmlns, 400, "InvalidAction",
                             "amt-local serves GetRole of IAM, not " + named + ".",
                             request.request_id);
  }
  const std::string* role = query::FormValue(form, "RoleName");
  if (role == nullptr || role->empty()) {
    return query::ErrorReply(kIamXmlns, 400, "ValidationError",
                             "1 validation error detected: Value null at 'roleName' failed to "
                             "satisfy constraint: Member must not be null",
                             request.request_id);
  }
  if (*role != arn_context_.execution_role) {
    return query::ErrorReply(kIamXmlns, 404, "NoSuchEntity",
                             "The role with name " + *role + " cannot be found.",
                             request.request_id);
  }
  xml::Writer writer("GetRoleResponse", kIamXmlns);
  writer.Open("GetRoleResult")
      .Open("Role")
      .Leaf("Path", "/")
      .Leaf("RoleName", arn_context_.execution_role)
      .Leaf("RoleId", ExecutionRoleId(arn_context_))
      .Leaf("Arn", ExecutionRoleArn(arn_context_))
      .Leaf("CreateDate", kCreateDate)
      .Leaf("AssumeRolePolicyDocument", kTrustPolicy)
      .Leaf("Description", "amt-local's execution role (amtd --execution-role)")
      .Leaf("MaxSessionDuration", "3600")
      .Close()
      .Close()
      .Open("ResponseMetadata")
      .Leaf("RequestId", request.request_id)
      .Close();
  return query::Reply(200, std::move(writer).Finish(), request.request_id);
}

}  // namespace amt::gateway
