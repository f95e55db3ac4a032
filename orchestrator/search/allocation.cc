#include "orchestrator/search/allocation.h"

#include <algorithm>

#include "orchestrator/search/random.h"

namespace amt::search {
namespace {

// Mixed into the tuning job's seed so the deal is unrelated to the trials a Random strategy with
// that seed draws.
constexpr uint64_t kAllocationSalt = 0x616c6c6f63617465;  // "allocate"

uint64_t DealSeed(uint64_t seed, int64_t index) { return TrialSeed(seed ^ kAllocationSalt, index); }

// Among the definitions with trials left after `dealt`, the one `allocation` gives trial `index`.
std::optional<int> Deal(Allocation allocation, const std::vector<std::optional<int64_t>>& capacity,
                        const std::vector<int64_t>& dealt, uint64_t seed, int64_t index) {
  std::vector<int> open;
  for (size_t d = 0; d < capacity.size(); ++d) {
    if (!capacity[d].has_value() || dealt[d] < *capacity[d]) open.push_back(static_cast<int>(d));
  }
  if (open.empty()) return std::nullopt;
  if (allocation == Allocation::kRandom) {
    return open[DealSeed(seed, index) % open.size()];
  }
  return *std::min_element(open.begin(), open.end(),
                           [&](int a, int b) { return dealt[a] < dealt[b]; });
}

}  // namespace

absl::StatusOr<Allocation> ParseAllocation(std::string_view name) {
  if (name == "round-robin") return Allocation::kRoundRobin;
  if (name == "random") return Allocation::kRandom;
  return absl::InvalidArgumentError("unknown multi-algorithm allocation '" + std::string(name) +
                                    "'; expected round-robin or random");
}

std::string AllocationName(Allocation allocation) {
  return allocation == Allocation::kRandom ? "random" : "round-robin";
}

std::optional<int> DefinitionOfTrial(Allocation allocation,
                                     const std::vector<std::optional<int64_t>>& capacity,
                                     uint64_t seed, int64_t index) {
  if (index < 0 || capacity.empty()) return std::nullopt;
  const int n = static_cast<int>(capacity.size());
  const bool unbounded =
      std::all_of(capacity.begin(), capacity.end(), [](const auto& c) { return !c.has_value(); });
  if (unbounded) {  // nothing runs out: no need to replay the earlier deals
    return allocation == Allocation::kRandom ? static_cast<int>(DealSeed(seed, index) % n)
                                             : static_cast<int>(index % n);
  }
  // A bounded definition (Grid: at most 750 trials in all) may run out: replay the deals.
  std::vector<int64_t> dealt(capacity.size(), 0);
  for (int64_t i = 0; i < index; ++i) {
    const std::optional<int> d = Deal(allocation, capacity, dealt, seed, i);
    if (!d.has_value()) return std::nullopt;
    ++dealt[*d];
  }
  return Deal(allocation, capacity, dealt, seed, index);
}

int64_t TrialsOfDefinition(Allocation allocation, int definitions, uint64_t seed, int definition,
                           int64_t total) {
  if (definition < 0 || definition >= definitions || total <= 0) return 0;
  if (allocation == Allocation::kRoundRobin) {  // definitions 0, 1, ..., n-1, 0, 1, ...
    return total / definitions + (definition < total % definitions ? 1 : 0);
  }
  int64_t dealt = 0;
  for (int64_t i = 0; i < total; ++i) {
    if (static_cast<int>(DealSeed(seed, i) % definitions) == definition) ++dealt;
  }
  return dealt;
}

}  // namespace amt::search
