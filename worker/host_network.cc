#include "worker/host_network.h"

namespace amt::worker {
namespace {

// 127.1.0.0 up to 127.254.255.0: 127.0.0.0/16 (localhost, 127.0.1.1 of Debian's hostname) and
// 127.255.255.255 stay out.
constexpr int kMaxNetworks = 254 * 256;

}  // namespace

std::string HostName(int index) { return "algo-" + std::to_string(index); }

LoopbackNetworks::Lease::~Lease() { owner_->Give(index_); }

std::string LoopbackNetworks::Lease::Address(int host) const {
  return "127." + std::to_string(1 + index_ / 256) + "." + std::to_string(index_ % 256) + "." +
         std::to_string(host);
}

std::unique_ptr<LoopbackNetworks::Lease> LoopbackNetworks::Take() {
  MutexLock lock(&mu_);
  int index = 0;
  // taken_ is sorted: the first gap is the lowest free index.
  for (int taken : taken_) {
    if (taken != index) break;
    ++index;
  }
  if (index >= kMaxNetworks) return nullptr;
  taken_.insert(index);
  return std::make_unique<Lease>(this, index);
}

void LoopbackNetworks::Give(int index) {
  MutexLock lock(&mu_);
  taken_.erase(index);
}

std::string HostsFileText(const std::string& base, const std::vector<std::string>& names,
                          const std::vector<std::string>& addresses) {
  std::string text = base;
  if (!text.empty() && text.back() != '\n') text += '\n';
  text += "# The hosts of this training job (amt-worker).\n";
  for (size_t i = 0; i < names.size() && i < addresses.size(); ++i) {
    text += addresses[i] + " " + names[i] + "\n";
  }
  return text;
}

}  // namespace amt::worker
