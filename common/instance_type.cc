#include "common/instance_type.h"

#include <charconv>
#include <string_view>
#include <utility>
#include <vector>

#include "common/text.h"

namespace amt {
namespace {

using auth::text::Split;

// Memory per vCPU by family prefix, longest prefix first wins (ResourcesOf). From AWS's instance
// pages: c 2 GiB, m and t 4, r 8, x 16; g4dn/g5/g6 4, g6e 8; p2 ~15, p3 ~7.6, p4 12, p5/p6
// ~10.7; trn 4. Rounded: these size Slurm requests, not bills.
constexpr std::pair<std::string_view, int> kMemoryPerVcpu[] = {
    {"g6e", 8}, {"p2", 16}, {"p3", 8}, {"p4", 12}, {"p5", 11}, {"p6", 11}, {"trn", 4},
    {"inf", 4}, {"c", 2},   {"m", 4},  {"t", 4},   {"r", 8},   {"x", 16},  {"g", 4},
};

int MemoryPerVcpu(std::string_view family) {
  size_t best = 0;
  int gib = 4;
  for (const auto& [prefix, value] : kMemoryPerVcpu) {
    if (family.starts_with(prefix) && prefix.size() > best) {
      best = prefix.size();
      gib = value;
    }
  }
  return gib;
}

// GPUs: the SageMaker Python SDK's image_uri_config/instance_gpu_info.json (v2.230.0) for g4dn,
// g5, p2, p3, p3dn, p4d, p4de and p5; g6 and g6e sized as g5 and p5e/p5en/p6 as p5 (same
// layouts; not in that file).
int GpusOf(std::string_view family, std::string_view size, int vcpus) {
  if (family == "p2") return vcpus >= 64 ? 16 : vcpus >= 32 ? 8 : 1;
  if (family == "p3") return vcpus >= 64 ? 8 : vcpus >= 32 ? 4 : 1;
  if (family.starts_with("p3dn") || family.starts_with("p4") || family.starts_with("p5") ||
      family.starts_with("p6")) {
    return 8;
  }
  if (family == "g4dn" || family.starts_with("g5") || family.starts_with("g6")) {
    if (size == "48xlarge") return 8;
    if (size == "12xlarge" || size == "24xlarge") return 4;
    return 1;
  }
  return 0;
}

std::optional<int> Int(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<InstanceResources> ResourcesOf(std::string_view instance_type) {
  const std::vector<std::string_view> parts = Split(instance_type, ".", /*skip_empty=*/false);
  if (parts.size() != 3 || parts[0] != "ml" || parts[1].empty()) return std::nullopt;
  const std::string_view family = parts[1];
  const std::string_view size = parts[2];
  int vcpus = 0;
  if (size == "medium" || size == "large") {
    vcpus = 2;
  } else if (size == "xlarge") {
    vcpus = 4;
  } else if (size.ends_with("xlarge")) {
    const auto n = Int(size.substr(0, size.size() - 6));
    if (!n.has_value() || *n <= 0) return std::nullopt;
    vcpus = 4 * *n;
  } else {
    return std::nullopt;
  }
  InstanceResources r;
  r.vcpus = vcpus;
  r.memory_gib = vcpus * MemoryPerVcpu(family);
  if (family == "t3" && size == "medium") r.memory_gib = 4;
  r.gpus = GpusOf(family, size, vcpus);
  return r;
}

}  // namespace amt
