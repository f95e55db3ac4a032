// The GPUs a worker gives its training jobs (docs/sagemaker-mapping.md, "GPUs"): the machine's
// NVIDIA GPUs as nvidia-smi lists them, narrowed by amt-worker --gpus and by the
// CUDA_VISIBLE_DEVICES the worker itself was started with (a Slurm job step's, or the user's),
// and an allocator that gives each training job devices of its own: a job of an InstanceType
// with K GPUs (common/instance_type.h) gets K distinct devices per host, which no other job
// holds, or which at most N jobs hold with --gpu-share N.
#ifndef AMT_WORKER_GPU_INVENTORY_H_
#define AMT_WORKER_GPU_INVENTORY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "common/command.h"
#include "common/mutex.h"

namespace amt::worker {

struct Gpu {
  int index = 0;     // nvidia-smi's (PCI bus order: CUDA_DEVICE_ORDER=PCI_BUS_ID)
  std::string uuid;  // "GPU-..."
  int64_t memory_mib = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
};

// What DetectGpus asks nvidia-smi (after the program): a CSV line per GPU, no header, no units.
inline constexpr const char* kGpuQuery[] = {"--query-gpu=index,uuid,memory.total,name",
                                            "--format=csv,noheader,nounits"};

// The lines of that query ("0, GPU-4d1c..., 81559, NVIDIA H100 80GB HBM3"), in order. An empty
// text is no GPU; InvalidArgument names a line that is not four fields with a number first and
// third.
absl::StatusOr<std::vector<Gpu>> ParseGpuQuery(std::string_view csv);

// The machine's GPUs: `nvidia_smi` (a path, or a name looked up in PATH) run with kGpuQuery.
// None when it cannot be started (no NVIDIA driver: the usual case on a machine without GPUs);
// an error when it starts and fails or prints what ParseGpuQuery refuses.
absl::StatusOr<std::vector<Gpu>> DetectGpus(CommandRunner& runner, const std::string& nvidia_smi);

// Which of `detected` the worker gives jobs: `flag` is amt-worker --gpus, "all", "none" or
// indices ("0,2"), each of a detected GPU (InvalidArgument otherwise); then only those named by
// `visible`, the worker's own CUDA_VISIBLE_DEVICES (indices or UUIDs, as CUDA reads it: up to the
// first entry it does not know), when it is set (nullptr: not set).
absl::StatusOr<std::vector<Gpu>> SelectGpus(const std::vector<Gpu>& detected, std::string_view flag,
                                            const char* visible);

// "0,2": indices for CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES.
std::string GpuIndexList(const std::vector<Gpu>& gpus);

// Hands out devices to jobs: a device is held by at most `share` jobs at once, and a job's
// devices are distinct. Thread-safe (the worker's job threads take and release).
class GpuAllocator {
 public:
  // `share` below 1 is taken as 1.
  GpuAllocator(std::vector<Gpu> gpus, int share);

  // Devices held until the lease is destroyed (on every way a job ends).
  class Lease {
   public:
    Lease(GpuAllocator* owner, std::vector<Gpu> gpus) : owner_(owner), gpus_(std::move(gpus)) {}
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    const std::vector<Gpu>& gpus() const { return gpus_; }

   private:
    GpuAllocator* owner_;
    std::vector<Gpu> gpus_;
  };

  // `count` distinct devices, the least held first (in the inventory's order on ties); null when
  // fewer than `count` devices have a free share. A count of 0 is an empty lease.
  std::unique_ptr<Lease> Take(int count) ABSL_LOCKS_EXCLUDED(mu_);
  // As Take, but while other jobs hold the devices it waits until enough are given back, or
  // until `cancelled()` holds (asked with the allocator's lock held, each time a lease ends and on
  // Wake()). Null when cancelled, or when the allocator has fewer than `count` devices at all.
  std::unique_ptr<Lease> TakeWhenFree(int count, const std::function<bool()>& cancelled)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Makes TakeWhenFree's waiters ask `cancelled` again.
  void Wake() ABSL_LOCKS_EXCLUDED(mu_);

  const std::vector<Gpu>& gpus() const { return gpus_; }
  int share() const { return share_; }
  // How many jobs hold device `index` now (tests, the page).
  int Holders(int index) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Release(const std::vector<Gpu>& gpus) ABSL_LOCKS_EXCLUDED(mu_);
  std::unique_ptr<Lease> TakeLocked(int count) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::vector<Gpu> gpus_;
  const int share_;
  mutable Mutex mu_;
  std::map<int, int> holders_ ABSL_GUARDED_BY(mu_);  // device index -> jobs holding it
  CondVar released_;                                 // a lease ended, or Wake()
};

// The GPUs a job of `instance_type` with `hosts` hosts takes from `gpus`: the type's GPUs per
// host (common/instance_type.h) times `hosts`; 0 when `gpus` is null or has no GPU (the job runs
// on CPU and takes worker slots instead, as amtd's worker_pool.h counts it).
int GpusTaken(const GpuAllocator* gpus, const std::string& instance_type, int hosts);

}  // namespace amt::worker

#endif  // AMT_WORKER_GPU_INVENTORY_H_
