#include "worker/host_network.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace amt::worker {
namespace {

// 127.1.0.0 up to 127.254.255.0: 127.0.0.0/16 (localhost, 127.0.1.1 of Debian's hostname) and
// 127.255.255.255 stay out.
constexpr int kMaxNetworks = 254 * 256;

}  // namespace

std::string HostName(int index) { return "algo-" + std::to_string(index); }

LoopbackNetworks::Lease::~Lease() {
  if (lock_fd_ > 0) ::close(lock_fd_);  // releases the flock
  owner_->Give(index_);
}

std::string LoopbackNetworks::Lease::Address(int host) const {
  return "127." + std::to_string(1 + index_ / 256) + "." + std::to_string(index_ % 256) + "." +
         std::to_string(host);
}

std::unique_ptr<LoopbackNetworks::Lease> LoopbackNetworks::Take() {
  MutexLock lock(&mu_);
  for (int index = 0; index < kMaxNetworks; ++index) {
    if (taken_.count(index) > 0) continue;
    const int fd = Claim(index);
    if (fd < 0) continue;  // another process's job has it
    taken_.insert(index);
    return std::make_unique<Lease>(this, index, fd);
  }
  return nullptr;
}

int LoopbackNetworks::Claim(int index) const {
  if (lock_dir_.empty()) return 0;
  const std::string path = lock_dir_ + "/network-" + std::to_string(index) + ".lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return 0;  // an unusable folder: unique within this process, as without one
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
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
