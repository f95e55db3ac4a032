// JobRunner's stages for what a job runs in and on (job_runner.h): its container (whether the
// engine runs its image, the container's mounts, limits and network, its script-mode code) and
// its GPUs. The rest of the job thread's stages are in job_runner.cc.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "common/instance_type.h"
#include "common/status_macros.h"
#include "worker/container_launcher.h"
#include "worker/job_code.h"
#include "worker/job_runner.h"

namespace amt::worker {
namespace fs = std::filesystem;

absl::StatusOr<bool> JobRunner::RunsInContainer() {
  const std::string& image = job_.container().image();
  if (image.empty()) return false;
  if (options_.containers.valid()) engine_ = options_.containers.get();
  std::string engine_says;
  if (engine_ != nullptr) {
    const absl::StatusOr<bool> has = engine_->HasImage(image);
    if (has.ok() && *has) {
      container_launcher_ =
          NewContainerLauncher(*engine_, launcher_, options_.container.client_environment);
      return true;
    }
    engine_says = has.ok() ? engine_->name() +
                                 " has no image of that name (pull "
                                 "it, or build and tag it: " +
                                 engine_->cli() + " tag <image> " + image + ")"
                           : std::string(has.status().message());
    if (!has.ok()) Diagnose(engine_says);
  } else {
    engine_says =
        "this worker has no container engine (amt-worker --container-runtime: neither Docker's "
        "daemon nor Podman answered)";
  }
  if (job_.command_size() > 0) return false;
  return absl::NotFoundError(
      "Cannot run the training image '" + image +
      "': it is neither an entry of the image map, nor an executable file, nor a SageMaker "
      "framework image (scikit-learn, XGBoost, PyTorch, TensorFlow, Hugging Face, MXNet) that "
      "amt-local runs in script mode, nor an image of a container engine: " +
      engine_says +
      ". Add it to the image map (amtd --image-map FILE) or give the path of a local "
      "executable.");
}

ContainerSpec JobRunner::ContainerFor(size_t index, const JobDir& dir) const {
  const amt::v1::ContainerJob& job = job_.container();
  ContainerSpec c;
  c.image = job.image();
  c.name = "amt-" + job_.training_job_name() + "-" + std::to_string(job_.attempt()) + "-" +
           HostName(static_cast<int>(index) + 1);
  if (job.entrypoint_size() > 0) c.entrypoint = job.entrypoint(0);
  c.mounts = dir.container_mounts();
  if (!job.code_path().empty()) {
    // PutContainerCode's copy: the toolkit in the image runs it from there.
    c.mounts.push_back({(dir.paths().root / "code").string(), "/opt/ml/code", false});
  }
  c.labels[kWorkDirLabel] = options_.container.work_dir;
  c.labels["amt-local.training-job"] = job_.training_job_name();
  c.network = job.network_isolation() ? "none" : options_.container.network;
  if (index < host_gpus_.size()) c.gpus = host_gpus_[index];
  if (!job_network_.empty()) {
    // Several hosts: each on the job's network, found there by its name.
    c.network = job_network_;
    c.hostname = HostName(static_cast<int>(index) + 1);
  }
  const double scale = options_.container.resource_scale;
  if (const auto r = ResourcesOf(job_.instance_type()); r.has_value() && scale > 0) {
    c.cpus = std::min<double>(r->vcpus * scale, std::max(1, options_.container.machine_cpus));
    c.memory_bytes = static_cast<int64_t>(r->memory_gib * scale * (int64_t{1} << 30));
  }
  return c;
}

absl::Status JobRunner::TakeGpus(int hosts) {
  // Hosts on other machines (srun's job steps) get their GPUs from Slurm (--gres).
  if (options_.gpus == nullptr || (hosts > 1 && options_.host_addresses)) {
    return absl::OkStatus();
  }
  host_gpus_.assign(static_cast<size_t>(hosts), {});
  const auto resources = ResourcesOf(job_.instance_type());
  const int per_host = resources.has_value() ? resources->gpus : 0;
  if (per_host == 0) return absl::OkStatus();
  const std::string asks = job_.instance_type() + " has " + std::to_string(per_host) + " GPU" +
                           (per_host == 1 ? "" : "s") + " per instance";
  const int machine = static_cast<int>(options_.gpus->gpus().size());
  if (machine == 0) {
    gpu_notes_.push_back("amt-worker: " + asks +
                         "; this worker has no GPU (amt-worker --gpus, nvidia-smi), so the job "
                         "runs on CPU: SM_NUM_GPUS=0");
    return absl::OkStatus();
  }
  const int wanted = per_host * hosts;
  if (wanted > machine) {
    return absl::ResourceExhaustedError(
        "The training job asks for " + std::to_string(wanted) + " GPUs (" + asks + ", " +
        std::to_string(hosts) + " instance" + (hosts == 1 ? "" : "s") +
        " on this worker) and this worker has " + std::to_string(machine) +
        " (amt-worker --gpus): choose an InstanceType with fewer GPUs");
  }
  // amtd sends a GPU job only when the worker has that many GPUs free, by its count; with
  // --gpu-share, fewer distinct devices may have a free share than that count says: the job waits.
  gpu_lease_ = options_.gpus->TakeWhenFree(wanted, [this] { return gpu_wait_cancelled_.load(); });
  if (gpu_lease_ == nullptr) {
    return absl::CancelledError("stopped while waiting for " + std::to_string(wanted) + " GPUs");
  }
  const std::vector<Gpu>& held = gpu_lease_->gpus();
  for (int h = 0; h < hosts; ++h) {
    std::string said;
    for (int k = 0; k < per_host; ++k) {
      const Gpu& gpu = held[static_cast<size_t>(h * per_host + k)];
      host_gpus_[static_cast<size_t>(h)].push_back(gpu.index);
      said += std::string(said.empty() ? "" : ", ") + std::to_string(gpu.index) + " (" + gpu.name +
              ", " + gpu.uuid + ")";
    }
    gpu_summary_.push_back((hosts > 1 ? HostName(h + 1) + ": " : std::string()) + "GPU " + said);
    gpu_notes_.push_back(
        "amt-worker: " + (hosts > 1 ? HostName(h + 1) + " runs" : "runs") + " on GPU " + said +
        (options_.gpus->share() > 1
             ? " shared by up to " + std::to_string(options_.gpus->share()) + " jobs (--gpu-share)"
             : ""));
  }
  return absl::OkStatus();
}

absl::Status JobRunner::PutContainerCode(const std::vector<JobDir>& dirs) const {
  const amt::v1::ContainerJob& job = job_.container();
  if (!in_container_ || job.code_path().empty()) return absl::OkStatus();
  for (const JobDir& dir : dirs) {
    const fs::path& root = dir.paths().root;
    // FetchJobCode leaves nothing half-written: a full disk is not left full.
    RETURN_IF_ERROR(
        FetchJobCode(job.code_path(), job.code_uri(), root / "code", root,
                     CodeUnpackLimits(static_cast<uint64_t>(std::max(0, job_.volume_size_gb()))))
            .status());
  }
  return absl::OkStatus();
}

absl::Status JobRunner::CreateJobNetwork() {
  const std::string name = "amt-" + job_.training_job_name() + "-" + std::to_string(job_.attempt());
  // A network of that name that a killed worker left.
  (void)engine_->RemoveNetwork(name);
  RETURN_IF_ERROR(engine_->CreateNetwork(name, job_.container().network_isolation(),
                                         options_.container.work_dir));
  job_network_ = name;
  // On SageMaker a job's hosts always resolve each other's names, and SageMaker's training
  // toolkit waits until they do: on a network without DNS the job would hang, so it fails now,
  // saying what to install. When the engine cannot tell, the job runs.
  if (absl::StatusOr<bool> resolves = engine_->NetworkResolvesNames(name);
      resolves.ok() && !*resolves) {
    RemoveJobNetwork();
    return absl::FailedPreconditionError(
        engine_->name() + "'s network " + name +
        " has no DNS, so the job's hosts could not find each other as algo-1, algo-2, ...: "
        "Podman gives its networks DNS on its netavark network stack with aardvark-dns, not on "
        "CNI (Debian: apt-get install netavark aardvark-dns, and network_backend = \"netavark\" "
        "in containers.conf)");
  }
  return absl::OkStatus();
}

void JobRunner::RemoveJobNetwork() {
  if (job_network_.empty()) return;
  if (absl::Status removed = engine_->RemoveNetwork(job_network_); !removed.ok()) {
    Diagnose(std::string(removed.message()));
  }
  job_network_.clear();
}

}  // namespace amt::worker
