// IamHandler: AWS IAM's GetRole over the AWS query protocol (query_protocol.h), for the one role
// amtd's callers have assumed (ArnContext::execution_role, amtd's --execution-role; STS's
// GetCallerIdentity names it, sts.h). The SageMaker Python SDK's get_execution_role() asks IAM for
// that role's path after STS: with this answer it returns arn:aws:iam::<account>:role/<role>.
//
// A request is `POST /` with a form body `Action=GetRole&RoleName=...&Version=2010-05-08`,
// recognised by its SigV4 credential scope (service "iam") or, unsigned, by Action= and
// Version=2010-05-08 in the body. The reply is IAM's:
//   <GetRoleResponse xmlns="https://iam.amazonaws.com/doc/2010-05-08/"><GetRoleResult><Role>
//     <Path>/</Path><RoleName>...</RoleName><RoleId>AROA...</RoleId><Arn>...</Arn>
//     <CreateDate>2026-01-01T00:00:00Z</CreateDate>
//     <AssumeRolePolicyDocument>(URL-encoded JSON: sagemaker.amazonaws.com may assume it)
//     </AssumeRolePolicyDocument><Description>...</Description>
//     <MaxSessionDuration>3600</MaxSessionDuration></Role></GetRoleResult>
//     <ResponseMetadata><RequestId>...</RequestId></ResponseMetadata></GetRoleResponse>
// Another role name is 404 NoSuchEntity ("The role with name X cannot be found.", IAM's text), a
// request without RoleName 400 ValidationError, any other action 400 InvalidAction, all in the
// query ErrorResponse shape.
#ifndef AMT_ORCHESTRATOR_GATEWAY_IAM_H_
#define AMT_ORCHESTRATOR_GATEWAY_IAM_H_

#include <string_view>
#include <utility>

#include "common/arn.h"
#include "orchestrator/gateway/query_service.h"

namespace amt::gateway {

inline constexpr std::string_view kIamXmlns = "https://iam.amazonaws.com/doc/2010-05-08/";

class IamHandler final : public query::ServiceHandler {
 public:
  explicit IamHandler(ArnContext arn_context)
      : ServiceHandler(kIamXmlns), arn_context_(std::move(arn_context)) {}

  std::string_view Description() const override;
  // POST / signed for service "iam", or unsigned with Action= and Version=2010-05-08.
  bool Accepts(const HttpRequest& request) const override;
  // Content type text/xml, header x-amzn-RequestId.
  HttpResponse Handle(const HttpRequest& request) const override;

 private:
  const ArnContext arn_context_;
};

}  // namespace amt::gateway

#endif  // AMT_ORCHESTRATOR_GATEWAY_IAM_H_
