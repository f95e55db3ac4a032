#include "common/arn.h"

#include <gtest/gtest.h>

namespace amt {
namespace {

TEST(Arn, KeepsNameCase) {
  ArnContext ctx{"eu-west-1", "123456789012"};
  EXPECT_EQ(TuningJobArn(ctx, "C7n-Test-4"),
            "arn:aws:sagemaker:eu-west-1:123456789012:hyper-parameter-tuning-job/C7n-Test-4");
  EXPECT_EQ(TrainingJobArn(ctx, "job-001"),
            "arn:aws:sagemaker:eu-west-1:123456789012:training-job/job-001");
}

}  // namespace
}  // namespace amt
