// StsHandler: AWS STS's GetCallerIdentity over the AWS query protocol (query_protocol.h), so that
// boto3's `sts.get_caller_identity()`, `aws sts get-caller-identity`, the SageMaker Python SDK's
// get_execution_role() and any client pointed at amtd learn who they are. (The SDK's own STS
// client uses an explicit regional endpoint, so it comes here only through amtd's proxy, or with
// AWS_ENDPOINT_URL_STS.)
//
// A request is `POST /` with a form body `Action=GetCallerIdentity&Version=2011-06-15`, recognised
// by its SigV4 credential scope (service "sts") or, unsigned, by Action= and Version=2011-06-15 in
// the body. The reply is STS's for a caller with an assumed role:
//   <GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
//     <GetCallerIdentityResult>
//     <Arn>arn:aws:sts::<account>:assumed-role/<execution role>/<role session></Arn>
//     <UserId><role id>:<role session></UserId><Account><account></Account>
//     </GetCallerIdentityResult>
//     <ResponseMetadata><RequestId>...</RequestId></ResponseMetadata>
//   </GetCallerIdentityResponse>
// amtd has no users: every caller has assumed amtd's execution role (ArnContext, --execution-role),
// whatever key it signed with; IAM's GetRole (iam.h) knows that role. Any other action
// (AssumeRole, GetSessionToken, ...) is 400 InvalidAction in the query ErrorResponse shape.
#ifndef AMT_ORCHESTRATOR_GATEWAY_STS_H_
#define AMT_ORCHESTRATOR_GATEWAY_STS_H_

#include <string_view>
#include <utility>

#include "common/arn.h"
#include "orchestrator/gateway/query_service.h"

namespace amt::gateway {

inline constexpr std::string_view kStsXmlns = "https://sts.amazonaws.com/doc/2011-06-15/";

class StsHandler final : public query::ServiceHandler {
 public:
  explicit StsHandler(ArnContext arn_context)
      : ServiceHandler(kStsXmlns), arn_context_(std::move(arn_context)) {}

  std::string_view Description() const override;
  // POST / signed for service "sts", or unsigned with Action= and Version=2011-06-15.
  bool Accepts(const HttpRequest& request) const override;
  // Content type text/xml, header x-amzn-RequestId. 400 InvalidAction for another action (or
  // none), 400 InvalidParameterValue for a body that is not a form.
  HttpResponse Handle(const HttpRequest& request) const override;

 private:
  const ArnContext arn_context_;
};

}  // namespace amt::gateway

#endif  // AMT_ORCHESTRATOR_GATEWAY_STS_H_
