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
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"

namespace amt::worker {

// SageMaker's name of host `index` (1-based): "algo-1", ...
std::string HostName(int index);

// Hosts per job at most: the last octet of a host's address.
inline constexpr int kMaxHostsPerNetwork = 254;

// Hands out job networks (their index), lowest free first. Thread-safe.
class LoopbackNetworks {
 public:
  // A network held until the lease is destroyed.
  class Lease {
   public:
    Lease(LoopbackNetworks* owner, int index) : owner_(owner), index_(index) {}
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    int index() const { return index_; }
    // The address of host `host` (1..kMaxHostsPerNetwork) of this network.
    std::string Address(int host) const;

   private:
    LoopbackNetworks* owner_;
    int index_;
  };

  // The lowest free network; null when all 254 * 256 are taken.
  std::unique_ptr<Lease> Take() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Give(int index) ABSL_LOCKS_EXCLUDED(mu_);

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
