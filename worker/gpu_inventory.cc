#include "worker/gpu_inventory.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "common/instance_type.h"
#include "common/text.h"

namespace amt::worker {
namespace {

using auth::text::Split;
using auth::text::Strip;

template <typename T>
std::optional<T> Number(std::string_view text) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// The detected GPU that `entry` of CUDA_VISIBLE_DEVICES names: an index, or a UUID or a prefix
// of one ("GPU-4d1c"), as CUDA takes them.
const Gpu* Named(const std::vector<Gpu>& gpus, std::string_view entry) {
  if (const auto index = Number<int>(entry)) {
    for (const Gpu& gpu : gpus) {
      if (gpu.index == *index) return &gpu;
    }
    return nullptr;
  }
  const Gpu* found = nullptr;
  for (const Gpu& gpu : gpus) {
    if (!gpu.uuid.starts_with(entry)) continue;
    if (found != nullptr) return nullptr;  // ambiguous: CUDA refuses it too
    found = &gpu;
  }
  return found;
}

}  // namespace

absl::StatusOr<std::vector<Gpu>> ParseGpuQuery(std::string_view csv) {
  std::vector<Gpu> gpus;
  for (std::string_view line : Split(csv, "\n", /*skip_empty=*/true)) {
    line = Strip(line);
    if (line.empty()) continue;
    const std::vector<std::string_view> fields = Split(line, ",", /*skip_empty=*/false);
    const auto index = fields.size() == 4 ? Number<int>(Strip(fields[0])) : std::nullopt;
    const auto memory = fields.size() == 4 ? Number<int64_t>(Strip(fields[2])) : std::nullopt;
    if (!index.has_value() || !memory.has_value() || Strip(fields[1]).empty()) {
      return absl::InvalidArgumentError(
          "nvidia-smi printed a line that is not \"index, uuid, memory.total, name\": " +
          std::string(line));
    }
    gpus.push_back(
        Gpu{*index, std::string(Strip(fields[1])), *memory, std::string(Strip(fields[3]))});
  }
  return gpus;
}

absl::StatusOr<std::vector<Gpu>> DetectGpus(CommandRunner& runner, const std::string& nvidia_smi) {
  std::vector<std::string> argv = {nvidia_smi};
  argv.insert(argv.end(), std::begin(kGpuQuery), std::end(kGpuQuery));
  const absl::StatusOr<CommandResult> ran = runner.Run(argv);
  if (!ran.ok()) {
    if (absl::IsNotFound(ran.status())) return std::vector<Gpu>();  // no NVIDIA driver here
    return ran.status();
  }
  if (ran->exit_code != 0) {
    std::string said(Strip(ran->err.empty() ? ran->out : ran->err));
    if (said.size() > 300) said = said.substr(0, 300) + "...";
    return absl::FailedPreconditionError(nvidia_smi + " exited with " +
                                         std::to_string(ran->exit_code) + ": " + said);
  }
  return ParseGpuQuery(ran->out);
}

absl::StatusOr<std::vector<Gpu>> SelectGpus(const std::vector<Gpu>& detected, std::string_view flag,
                                            const char* visible) {
  std::vector<Gpu> chosen;
  if (flag == "all") {
    chosen = detected;
  } else if (flag != "none") {
    std::set<int> seen;
    for (std::string_view entry : Split(flag, ",", /*skip_empty=*/false)) {
      const auto index = Number<int>(Strip(entry));
      const Gpu* gpu = index.has_value() ? Named(detected, Strip(entry)) : nullptr;
      if (gpu == nullptr) {
        return absl::InvalidArgumentError(
            "--gpus is all, none or GPU indices such as 0,2; '" + std::string(entry) +
            "' is not the index of a GPU of this machine (nvidia-smi lists " +
            std::to_string(detected.size()) + ")");
      }
      if (seen.insert(gpu->index).second) chosen.push_back(*gpu);
    }
  }
  if (visible == nullptr) return chosen;
  // CUDA_VISIBLE_DEVICES: the devices it names, up to the first it does not know.
  std::set<int> allowed;
  for (std::string_view entry : Split(visible, ",", /*skip_empty=*/false)) {
    const Gpu* gpu = Named(detected, Strip(entry));
    if (gpu == nullptr) break;
    allowed.insert(gpu->index);
  }
  std::erase_if(chosen, [&](const Gpu& gpu) { return allowed.count(gpu.index) == 0; });
  return chosen;
}

std::string GpuIndexList(const std::vector<Gpu>& gpus) {
  std::string list;
  for (const Gpu& gpu : gpus) {
    if (!list.empty()) list += ",";
    list += std::to_string(gpu.index);
  }
  return list;
}

GpuAllocator::GpuAllocator(std::vector<Gpu> gpus, int share)
    : gpus_(std::move(gpus)), share_(std::max(1, share)) {}

GpuAllocator::Lease::~Lease() {
  if (owner_ != nullptr) owner_->Release(gpus_);
}

std::unique_ptr<GpuAllocator::Lease> GpuAllocator::Take(int count) {
  MutexLock lock(&mu_);
  return TakeLocked(count);
}

std::unique_ptr<GpuAllocator::Lease> GpuAllocator::TakeWhenFree(
    int count, const std::function<bool()>& cancelled) {
  MutexLock lock(&mu_);
  if (count > static_cast<int>(gpus_.size())) return nullptr;
  while (true) {
    if (auto lease = TakeLocked(count)) return lease;
    if (cancelled()) return nullptr;
    released_.Wait(&mu_);
  }
}

void GpuAllocator::Wake() {
  MutexLock lock(&mu_);
  released_.SignalAll();
}

std::unique_ptr<GpuAllocator::Lease> GpuAllocator::TakeLocked(int count) {
  // (holders, device) of the devices with a free share.
  std::vector<std::pair<int, const Gpu*>> open;
  for (const Gpu& gpu : gpus_) {
    const auto it = holders_.find(gpu.index);
    const int held = it == holders_.end() ? 0 : it->second;
    if (held < share_) open.emplace_back(held, &gpu);
  }
  if (static_cast<int>(open.size()) < count) return nullptr;
  // The least held first; stable: in inventory order among equals.
  std::stable_sort(open.begin(), open.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Gpu> taken;
  for (int i = 0; i < count; ++i) {
    ++holders_[open[i].second->index];
    taken.push_back(*open[i].second);
  }
  std::sort(taken.begin(), taken.end(),
            [](const Gpu& a, const Gpu& b) { return a.index < b.index; });
  return std::make_unique<Lease>(this, std::move(taken));
}

int GpuAllocator::Holders(int index) const {
  MutexLock lock(&mu_);
  const auto it = holders_.find(index);
  return it == holders_.end() ? 0 : it->second;
}

void GpuAllocator::Release(const std::vector<Gpu>& gpus) {
  MutexLock lock(&mu_);
  for (const Gpu& gpu : gpus) {
    if (--holders_[gpu.index] <= 0) holders_.erase(gpu.index);
  }
  released_.SignalAll();
}

int GpusTaken(const GpuAllocator* gpus, const std::string& instance_type, int hosts) {
  if (gpus == nullptr || gpus->gpus().empty()) return 0;
  const auto resources = ResourcesOf(instance_type);
  return resources.has_value() ? resources->gpus * std::max(1, hosts) : 0;
}

}  // namespace amt::worker
