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
};

// arn:aws:sagemaker:<region>:<account>:hyper-parameter-tuning-job/<name> (the name's case kept,
// as in real ARNs).
std::string TuningJobArn(const ArnContext& ctx, std::string_view name);
// arn:aws:sagemaker:<region>:<account>:training-job/<name>
std::string TrainingJobArn(const ArnContext& ctx, std::string_view name);

}  // namespace amt

#endif  // AMT_COMMON_ARN_H_
