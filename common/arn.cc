#include "common/arn.h"

#include <cstdint>

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

std::string ExecutionRoleArn(const ArnContext& ctx) {
  return "arn:aws:iam::" + ctx.account + ":role/" + ctx.execution_role;
}

std::string ExecutionRoleId(const ArnContext& ctx) {
  // FNV-1a over the ARN, 85 bits (two rounds with different offsets), in base32.
  const std::string arn = ExecutionRoleArn(ctx);
  auto fnv = [&arn](uint64_t hash) {
    for (const unsigned char c : arn) hash = (hash ^ c) * 1099511628211ULL;
    return hash;
  };
  const uint64_t high = fnv(14695981039346656037ULL);
  const uint64_t low = fnv(high ^ 0x9e3779b97f4a7c15ULL);
  constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  std::string id = "AROA";
  for (int i = 0; i < 17; ++i) {
    const uint64_t word = i < 12 ? high >> (5 * i) : low >> (5 * (i - 12));
    id += kAlphabet[word & 31];
  }
  return id;
}

bool IsRoleName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view("+=,.@_-").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

}  // namespace amt
