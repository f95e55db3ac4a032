// The hosts of a multi-instance training job on one machine: SageMaker gives InstanceCount N
// hosts named algo-1..algo-N that reach each other by those names; here they are N processes on
// this machine. Each running multi-instance job gets a network of its own among the loopback
// addresses (127.0.0.0/8 is all local on Linux): host k of the job's network i has the address
// 127.(1 + i / 256).(i % 256).k, so two hosts (of one job or of two) can listen on the same port,
// as on separate instances, and nothing of a job's is on 127.0.0.1. The names resolve through a
// private /etc/hosts per process (LaunchSpec.hosts_file, root only); without root the addresses
// are still given in AMT_HOST_ADDRESSES (worker/README.md).
#ifndef AMT_WORKER_HOST_NETWORK_H_
#define AMT_WORKER_HOST_NETWORK_H_

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"

namespace amt::worker {

// SageMaker's name of host `index` (1-based): "algo-1", ...
std::string HostName(int index);

// Hosts per job at most: the last octet of a host's address.
inline constexpr int kMaxHostsPerNetwork = 254;

// Hands out job networks (their index), lowest free first. Thread-safe.
//
// With a lock folder, a network is also claimed machine-wide: an exclusive flock(2) on
// <lock_dir>/network-<index>.lock, held while the lease lives, so workers of one machine (two
// amtds' workers, or the one-shot workers Slurm starts side by side on a node) never give two
// running jobs the same addresses. A lock the kernel drops with its process (a killed worker)
// frees the network.
class LoopbackNetworks {
 public:
  // `lock_dir` empty: networks are unique within this process only.
  explicit LoopbackNetworks(std::string lock_dir = "") : lock_dir_(std::move(lock_dir)) {}
  // A network held until the lease is destroyed.
  class Lease {
   public:
    Lease(LoopbackNetworks* owner, int index, int lock_fd = -1)
        : owner_(owner), index_(index), lock_fd_(lock_fd) {}
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    int index() const { return index_; }
    // The address of host `host` (1..kMaxHostsPerNetwork) of this network.
    std::string Address(int host) const;

   private:
    LoopbackNetworks* owner_;
    int index_;
    int lock_fd_;  // the machine-wide claim, -1 without a lock folder
  };

  // The lowest free network; null when all 254 * 256 are taken (or claimed elsewhere).
  std::unique_ptr<Lease> Take() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Give(int index) ABSL_LOCKS_EXCLUDED(mu_);

  // The machine-wide claim of `index`: the locked file's descriptor, or -1 when another
  // process holds it. Without a lock folder, 0 (nothing to hold).
  int Claim(int index) const;

  const std::string lock_dir_;
  Mutex mu_;
  std::set<int> taken_ ABSL_GUARDED_BY(mu_);
};

// The /etc/hosts a host of the job sees: `base` (the machine's own /etc/hosts, so localhost and
// the rest still resolve), then one line per host, "<address> <name>", and a comment saying who
// wrote them. `names` and `addresses` are parallel.
std::string HostsFileText(const std::string& base, const std::vector<std::string>& names,
                          const std::vector<std::string>& addresses);

}  // namespace amt::worker

#endif  // AMT_WORKER_HOST_NETWORK_H_
