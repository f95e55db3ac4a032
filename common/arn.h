// ARNs and names of SageMaker resources as amt-local makes them.
#ifndef AMT_COMMON_ARN_H_
#define AMT_COMMON_ARN_H_

#include <string>
#include <string_view>

namespace amt {

// Where amtd pretends to run: ARNs carry these. Defaults match a typical local setup; amtd takes
// --region / --account (or AWS_REGION) to change them.
struct ArnContext {
  std::string region = "us-east-1";
  std::string account = "000000000000";
  // The role every caller has assumed (amtd has no users): STS's GetCallerIdentity answers
  // arn:aws:sts::<account>:assumed-role/<role>/<role session>, IAM's GetRole knows this role, so
  // the SageMaker Python SDK's get_execution_role() finds it. amtd's --execution-role.
  std::string execution_role = "AmtLocalExecutionRole";
  std::string role_session = "amt-local";
};

// arn:aws:iam::<account>:role/<execution_role>
std::string ExecutionRoleArn(const ArnContext& ctx);
// The role's unique id as IAM writes them ("AROA" and 17 characters of [A-Z2-7]), a function of
// its ARN: the same role has the same id in every run.
std::string ExecutionRoleId(const ArnContext& ctx);
// Whether `name` can be an IAM role name: 1-64 of [A-Za-z0-9+=,.@_-].
bool IsRoleName(std::string_view name);

// arn:aws:sagemaker:<region>:<account>:hyper-parameter-tuning-job/<name> (the name's case kept,
// as in real ARNs).
std::string TuningJobArn(const ArnContext& ctx, std::string_view name);
// arn:aws:sagemaker:<region>:<account>:training-job/<name>
std::string TrainingJobArn(const ArnContext& ctx, std::string_view name);

}  // namespace amt

#endif  // AMT_COMMON_ARN_H_
