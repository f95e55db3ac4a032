#include "common/arn.h"

namespace amt {

// Debian's Abseil has its own absl::string_view (not std::string_view), so plain string
// concatenation is used here rather than absl::StrCat.
std::string TuningJobArn(const ArnContext& ctx, std::string_view name) {
  return "arn:aws:sagemaker:" + ctx.region + ":" + ctx.account + ":hyper-parameter-tuning-job/" +
         std::string(name);
}

std::string TrainingJobArn(const ArnContext& ctx, std::string_view name) {
  return "arn:aws:sagemaker:" + ctx.region + ":" + ctx.account + ":training-job/" +
         std::string(name);
}

}  // namespace amt
