#include "orchestrator/executor/slurm_plan.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/text.h"

namespace amt::executor {
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

std::string CommentFor(const SlurmJobTag& tag) {
  return absl::StrCat("amt-local owner=", tag.owner, " worker=", tag.worker_id,
                      " job=", tag.training_job_name, " attempt=", tag.attempt,
                      " instances=", tag.instances);
}

std::optional<SlurmJobTag> ParseComment(std::string_view comment) {
  const std::vector<std::string_view> words = Split(comment, " ", /*skip_empty=*/true);
  if (words.empty() || words[0] != "amt-local") return std::nullopt;
  SlurmJobTag tag;
  bool attempt = false;
  for (size_t i = 1; i < words.size(); ++i) {
    const auto eq = words[i].find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const std::string_view key = words[i].substr(0, eq);
    const std::string_view value = words[i].substr(eq + 1);
    if (key == "owner") {
      tag.owner = std::string(value);
    } else if (key == "worker") {
      tag.worker_id = std::string(value);
    } else if (key == "job") {
      tag.training_job_name = std::string(value);
    } else if (key == "attempt") {
      const auto n = Int(value);
      if (!n.has_value()) return std::nullopt;
      tag.attempt = *n;
      attempt = true;
    } else if (key == "instances") {
      const auto n = Int(value);
      if (!n.has_value() || *n < 1) return std::nullopt;
      tag.instances = *n;
    }
  }
  if (tag.worker_id.empty() || tag.training_job_name.empty() || !attempt) return std::nullopt;
  return tag;
}

std::string ShellQuote(std::string_view text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

absl::StatusOr<std::vector<std::string>> SbatchArguments(const SlurmOptions& options,
                                                         const amt::v1::StartJob& start,
                                                         const std::string& worker_id,
                                                         double max_runtime_seconds,
                                                         int volume_size_gb) {
  const int instances = std::max(1, start.instance_count());
  std::vector<std::string> args = options.extra_sbatch_args;
  args.push_back("--parsable");
  // amtd retries an attempt itself (RetryStrategy): a Slurm job requeued after a node failure
  // would run the same attempt again beside the retry.
  args.push_back("--no-requeue");
  args.push_back("--job-name=" + start.training_job_name());
  args.push_back("--comment=" + CommentFor({options.owner, worker_id, start.training_job_name(),
                                            start.attempt(), instances}));
  if (!options.output_dir.empty()) args.push_back("--output=" + options.output_dir + "/%j.out");
  if (!options.partition.empty()) args.push_back("--partition=" + options.partition);
  if (!options.account.empty()) args.push_back("--account=" + options.account);
  // One task per host: with one node per host, each node gives its host an instance's worth;
  // with every host on one node, each task does (so the node gives N instances' worth).
  const bool several = instances > 1;
  if (several && options.host_per_node) {
    args.push_back("--nodes=" + std::to_string(instances));
    args.push_back("--ntasks-per-node=1");
  } else {
    args.push_back("--nodes=1");
    args.push_back("--ntasks=" + std::to_string(instances));
  }
  if (options.resource_scale > 0) {
    const auto r = ResourcesOf(start.instance_type());
    if (!r.has_value()) {
      return absl::InvalidArgumentError("no resources known for instance type " +
                                        start.instance_type());
    }
    const auto scaled = [&](int value) {
      return std::max<int64_t>(
          1, static_cast<int64_t>(std::ceil(value * options.resource_scale - 1e-9)));
    };
    const int64_t cpus = scaled(r->vcpus);
    const int64_t memory_mb = scaled(r->memory_gib * 1024);
    args.push_back("--cpus-per-task=" + std::to_string(cpus));
    if (several && !options.host_per_node) {
      // Per CPU, so that each host's step gets its instance's memory (srun --exact).
      args.push_back("--mem-per-cpu=" + std::to_string((memory_mb + cpus - 1) / cpus) + "M");
    } else {
      args.push_back("--mem=" + std::to_string(memory_mb) + "M");
    }
    if (r->gpus > 0) {
      // Per node: all of one host's, or all of the hosts' on the one node.
      args.push_back("--gres=gpu:" +
                     std::to_string(r->gpus * (options.host_per_node ? 1 : instances)));
    }
  }
  if (volume_size_gb > 0 && options.volume_as_tmp)
    args.push_back("--tmp=" + std::to_string(volume_size_gb) + "G");
  if (max_runtime_seconds > 0) {
    // --time in whole minutes, rounded up, plus a minute: amtd stops the job at its limit and
    // gives it the stop grace; Slurm's limit only catches a worker that no longer listens.
    const int64_t minutes = static_cast<int64_t>(std::ceil(max_runtime_seconds / 60.0)) + 1;
    args.push_back("--time=" + std::to_string(minutes));
  }
  std::string proto;
  start.SerializeToString(&proto);
  std::string command =
      "exec " + ShellQuote(options.worker_binary) + " --one-shot " + absl::Base64Escape(proto) +
      " --orchestrator " + ShellQuote(options.orchestrator_address) + " --worker-id " +
      ShellQuote(worker_id) + " --work-dir " + ShellQuote(options.work_dir) + " --orphan-timeout " +
      std::to_string(options.worker_orphan_timeout_seconds);
  if (!options.credentials_file.empty()) {
    command += " --credentials " + ShellQuote(options.credentials_file);
  }
  if (several) {
    command += std::string(" --srun-hosts ") + (options.host_per_node ? "nodes" : "tasks") +
               " --srun " + ShellQuote(options.srun) + " --scontrol " +
               ShellQuote(options.scontrol);
  }
  args.push_back("--wrap=" + command);
  return args;
}

std::vector<SlurmJobState> ParseSqueue(std::string_view text) {
  std::vector<SlurmJobState> jobs;
  for (std::string_view line : Split(text, "\n", /*skip_empty=*/true)) {
    if (line.ends_with('\r')) line.remove_suffix(1);
    // The comment is last and may hold '|': split at the first three only.
    std::vector<std::string_view> parts;
    while (parts.size() < 3) {
      const size_t bar = line.find('|');
      if (bar == std::string_view::npos) break;
      parts.push_back(line.substr(0, bar));
      line.remove_prefix(bar + 1);
    }
    parts.push_back(line);
    if (parts.size() != 4 || parts[0].empty() || parts[1].empty()) continue;
    jobs.push_back({std::string(parts[0]), std::string(parts[1]), std::string(parts[2]),
                    std::string(parts[3])});
  }
  return jobs;
}

bool IsFinalState(std::string_view state) {
  // squeue's long names of Slurm's base job states that end a job (squeue(1), JOB STATE CODES).
  static constexpr std::string_view kFinal[] = {
      "BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE",      "FAILED",      "NODE_FAIL",
      "PREEMPTED", "TIMEOUT",   "REVOKED",   "OUT_OF_MEMORY", "SPECIAL_EXIT"};
  return std::find(std::begin(kFinal), std::end(kFinal), state) != std::end(kFinal);
}

core::ProvisionedEnd ClassifyEnd(const std::string& job_id, std::string_view state,
                                 std::string_view reason) {
  using Kind = core::ProvisionedEnd::Kind;
  core::ProvisionedEnd end;
  const std::string what =
      "Slurm job " + job_id + " ended " + std::string(state) +
      (reason.empty() || reason == "None" ? std::string() : " (" + std::string(reason) + ")");
  if (state == "OUT_OF_MEMORY") {
    end.kind = Kind::kOutOfMemory;
    end.message = what + ": the training job ran out of memory";
  } else if (state == "CANCELLED") {
    end.kind = Kind::kCancelled;
    end.message = what;
  } else if (state == "NODE_FAIL" || state == "PREEMPTED" || state == "BOOT_FAIL" ||
             state == "REVOKED" || state.empty()) {
    end.kind = Kind::kRetryable;
    end.message = state.empty() ? "Slurm job " + job_id + " is no longer known to Slurm" : what;
  } else {
    // COMPLETED, FAILED, TIMEOUT, DEADLINE without the worker's report: the worker could not
    // run or reach amtd (its log is the Slurm job's output file).
    end.kind = Kind::kFailed;
    end.message = what + " before its worker reported the training job's exit";
  }
  return end;
}

std::optional<std::string> NeverStartsReason(std::string_view reason) {
  static constexpr std::string_view kNever[] = {
      "PartitionConfig", "BadConstraints", "PartitionNodeLimit", "PartitionTimeLimit",
      "InvalidAccount",  "InvalidQOS",     "InvalidNodes"};
  for (const std::string_view never : kNever) {
    if (reason.starts_with(never)) return std::string(reason);
  }
  return std::nullopt;
}

}  // namespace amt::executor
