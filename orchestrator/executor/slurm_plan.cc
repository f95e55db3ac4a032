#include "orchestrator/executor/slurm_plan.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/text.h"

namespace amt::executor {
namespace {

using auth::text::Split;

std::optional<int> Int(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<int64_t> Int64(std::string_view text) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The leading digits of `text` as a number ("3-5" -> 3, "4096M" -> 4096); nullopt when none.
std::optional<int64_t> LeadingInt(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  return digits == 0 ? std::nullopt : Int64(text.substr(0, digits));
}

// A size in MB from sbatch's "<n>[K|M|G|T]" (no suffix: MB).
int64_t Megabytes(std::string_view text) {
  const auto n = LeadingInt(text);
  if (!n.has_value()) return 0;
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  const std::string_view unit = text.substr(digits);
  if (unit.starts_with('K') || unit.starts_with('k')) return (*n + 1023) / 1024;
  if (unit.starts_with('G') || unit.starts_with('g')) return *n * 1024;
  if (unit.starts_with('T') || unit.starts_with('t')) return *n * 1024 * 1024;
  return *n;  // M, or none: sbatch's default unit
}

// GPUs in a gres list ("gpu:2", "gpu:a100:4(S:0-1),gpu:v100:2", "(null)"): each gpu entry's
// count (its last ":<n>"; 1 when it has none). Commas inside parentheses are not separators.
int GpusInGres(std::string_view gres) {
  int gpus = 0;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= gres.size(); ++i) {
    const char c = i < gres.size() ? gres[i] : ',';
    if (c == '(') ++depth;
    if (c == ')' && depth > 0) --depth;
    if (c != ',' || depth > 0) continue;
    std::string_view item = gres.substr(start, i - start);
    start = i + 1;
    if (const size_t paren = item.find('('); paren != std::string_view::npos) {
      item = item.substr(0, paren);
    }
    if (item != "gpu" && !item.starts_with("gpu:")) continue;
    const size_t colon = item.rfind(':');
    const auto count =
        colon == std::string_view::npos ? std::nullopt : Int64(item.substr(colon + 1));
    gpus += count.has_value() ? static_cast<int>(*count) : 1;
  }
  return gpus;
}

// The Key=Value fields of one line of `scontrol -o show ...`. Words without '=' (the rest of a
// value with spaces, as OS=Linux 6.1 #1 SMP) are skipped: no field read here has spaces.
std::map<std::string_view, std::string_view> Fields(std::string_view line) {
  std::map<std::string_view, std::string_view> fields;
  for (const std::string_view word : Split(line, " \t\r", /*skip_empty=*/true)) {
    const size_t eq = word.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    fields.emplace(word.substr(0, eq), word.substr(eq + 1));
  }
  return fields;
}

std::string_view Field(const std::map<std::string_view, std::string_view>& fields,
                       std::string_view key) {
  const auto it = fields.find(key);
  return it == fields.end() ? std::string_view() : it->second;
}

// A partition limit: the smaller of `value` and the field's number (UNLIMITED, or a field
// that is absent, leaves `value`).
template <typename T>
T Capped(T value, std::string_view limit) {
  const auto n = Int64(limit);
  return n.has_value() && *n < value ? static_cast<T>(*n) : value;
}

std::string Count(int64_t n, std::string_view thing) {
  return absl::StrCat(n, " ", std::string(thing), n == 1 ? "" : "s");
}

// "a", "a and b", "a, b and c".
std::string JoinAnd(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " and " : ", ";
    out += items[i];
  }
  return out;
}

}  // namespace

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

bool IsSizeReason(std::string_view reason_or_refusal) {
  // Pending reasons (squeue %r), then sbatch's refusals (slurm_strerror's texts and sbatch's
  // own "can not be satisfied" lines for memory, CPUs and disk). Not "Invalid generic resource
  // (gres) specification": that is as often a gres misspelt in --sbatch-arg.
  static constexpr std::string_view kSize[] = {
      "PartitionConfig",
      "PartitionNodeLimit",
      "BadConstraints",
      "Requested node configuration is not available",
      "Node count specification invalid",
      "More processors requested than permitted",
      "can not be satisfied",
  };
  for (const std::string_view size : kSize) {
    if (reason_or_refusal.find(size) != std::string_view::npos) return true;
  }
  return false;
}

SlurmRequest RequestOf(const std::vector<std::string>& sbatch_args) {
  std::string partition;
  int64_t nodes = 1;
  std::optional<int64_t> ntasks;
  std::optional<int64_t> tasks_per_node;
  int64_t cpus_per_task = 0;
  int64_t mem = 0;
  int64_t mem_per_cpu = 0;
  int gpus = 0;
  int64_t tmp = 0;
  for (const std::string& arg : sbatch_args) {
    if (arg.starts_with("--wrap=")) continue;
    const size_t eq = arg.find('=');
    if (eq == std::string::npos) continue;
    const std::string_view key = std::string_view(arg).substr(0, eq);
    const std::string_view value = std::string_view(arg).substr(eq + 1);
    if (key == "--partition") {
      partition = std::string(value);
    } else if (key == "--nodes") {
      nodes = std::max<int64_t>(1, LeadingInt(value).value_or(1));
    } else if (key == "--ntasks") {
      ntasks = LeadingInt(value);
    } else if (key == "--ntasks-per-node") {
      tasks_per_node = LeadingInt(value);
    } else if (key == "--cpus-per-task") {
      cpus_per_task = LeadingInt(value).value_or(0);
    } else if (key == "--mem") {
      mem = Megabytes(value);
      mem_per_cpu = 0;  // sbatch takes one or the other: the last given
    } else if (key == "--mem-per-cpu") {
      mem_per_cpu = Megabytes(value);
      mem = 0;
    } else if (key == "--gres") {
      gpus = GpusInGres(value);
    } else if (key == "--tmp") {
      tmp = Megabytes(value);
    }
  }
  SlurmRequest r;
  r.partition = std::move(partition);
  r.nodes = static_cast<int>(nodes);
  const int64_t per_node = tasks_per_node.has_value()
                               ? std::max<int64_t>(1, *tasks_per_node)
                               : (std::max<int64_t>(1, ntasks.value_or(1)) + nodes - 1) / nodes;
  r.hosts = static_cast<int>(tasks_per_node.has_value() ? per_node * nodes
                                                        : std::max<int64_t>(1, ntasks.value_or(1)));
  r.cpus_per_node = static_cast<int>(cpus_per_task * per_node);
  r.memory_mb_per_node =
      mem > 0 ? mem : mem_per_cpu * std::max<int64_t>(1, cpus_per_task) * per_node;
  r.gpus_per_node = gpus;
  r.tmp_mb_per_node = tmp;
  return r;
}

absl::StatusOr<SlurmOffer> ParseOffer(std::string_view partitions, std::string_view nodes,
                                      std::string_view partition) {
  std::optional<std::map<std::string_view, std::string_view>> found;
  for (const std::string_view line : Split(partitions, "\n", /*skip_empty=*/true)) {
    auto fields = Fields(line);
    const std::string_view name = Field(fields, "PartitionName");
    if (name.empty()) continue;
    if (partition.empty() ? Field(fields, "Default") == "YES" : name == partition) {
      found = std::move(fields);
      break;
    }
  }
  if (!found.has_value()) {
    return absl::NotFoundError(partition.empty()
                                   ? std::string("Slurm has no default partition")
                                   : "Slurm has no partition " + std::string(partition));
  }
  SlurmOffer offer;
  offer.partition = std::string(Field(*found, "PartitionName"));
  int nodes_in = 0;
  for (const std::string_view line : Split(nodes, "\n", /*skip_empty=*/true)) {
    const auto fields = Fields(line);
    if (Field(fields, "NodeName").empty()) continue;
    const std::vector<std::string_view> in =
        Split(Field(fields, "Partitions"), ",", /*skip_empty=*/true);
    if (std::find(in.begin(), in.end(), offer.partition) == in.end()) continue;
    ++nodes_in;
    // CPUEfctv (22.05 on) leaves out cores kept for Slurm itself (CoreSpecCount); older ones
    // have CPUTot only.
    std::string_view cpus = Field(fields, "CPUEfctv");
    if (cpus.empty()) cpus = Field(fields, "CPUTot");
    offer.cpus_per_node = std::max(offer.cpus_per_node, static_cast<int>(Int64(cpus).value_or(0)));
    offer.memory_mb_per_node =
        std::max(offer.memory_mb_per_node, Int64(Field(fields, "RealMemory")).value_or(0));
    offer.gpus_per_node = std::max(offer.gpus_per_node, GpusInGres(Field(fields, "Gres")));
    offer.tmp_mb_per_node =
        std::max(offer.tmp_mb_per_node, Int64(Field(fields, "TmpDisk")).value_or(0));
  }
  offer.nodes = Capped(nodes_in, Field(*found, "MaxNodes"));
  offer.cpus_per_node = Capped(offer.cpus_per_node, Field(*found, "MaxCPUsPerNode"));
  offer.memory_mb_per_node = Capped(offer.memory_mb_per_node, Field(*found, "MaxMemPerNode"));
  return offer;
}

namespace {

struct Excess {
  bool nodes = false;
  bool per_node = false;  // CPUs or memory
  bool gpus = false;
  bool tmp = false;
  bool any() const { return nodes || per_node || gpus || tmp; }
};

Excess ExcessOf(const SlurmRequest& asked, const SlurmOffer& offer) {
  Excess e;
  e.nodes = asked.nodes > offer.nodes;
  e.per_node = asked.cpus_per_node > offer.cpus_per_node ||
               asked.memory_mb_per_node > offer.memory_mb_per_node;
  e.gpus = asked.gpus_per_node > offer.gpus_per_node;
  e.tmp = asked.tmp_mb_per_node > offer.tmp_mb_per_node;
  return e;
}

}  // namespace

bool Exceeds(const SlurmRequest& asked, const SlurmOffer& offer) {
  return ExcessOf(asked, offer).any();
}

std::string TooBigMessage(std::string_view what, const SlurmRequest& asked,
                          const absl::StatusOr<SlurmOffer>& offer, const SlurmOptions& options) {
  std::vector<std::string> each;
  if (asked.cpus_per_node > 0) each.push_back(Count(asked.cpus_per_node, "CPU"));
  if (asked.memory_mb_per_node > 0) {
    each.push_back(absl::StrCat(asked.memory_mb_per_node, " MB of memory"));
  }
  if (asked.gpus_per_node > 0) each.push_back(Count(asked.gpus_per_node, "GPU"));
  if (asked.tmp_mb_per_node > 0) {
    each.push_back(absl::StrCat(asked.tmp_mb_per_node, " MB of temporary disk"));
  }
  std::string message =
      absl::StrCat(std::string(what), ". The training job asks for ", Count(asked.nodes, "node"));
  if (!each.empty()) {
    absl::StrAppend(&message, " with ", JoinAnd(each), asked.nodes > 1 ? " each" : "");
  }
  Excess excess;
  if (offer.ok()) {
    std::vector<std::string> has = {Count(offer->cpus_per_node, "CPU"),
                                    absl::StrCat(offer->memory_mb_per_node, " MB of memory")};
    if (asked.gpus_per_node > 0) has.push_back(Count(offer->gpus_per_node, "GPU"));
    if (asked.tmp_mb_per_node > 0) {
      has.push_back(absl::StrCat(offer->tmp_mb_per_node, " MB of temporary disk"));
    }
    absl::StrAppend(&message, "; partition ", offer->partition, " has ",
                    Count(offer->nodes, "node"), " with at most ", JoinAnd(has), " per node.");
    excess = ExcessOf(asked, *offer);
  } else {
    absl::StrAppend(&message, "; what the partition has could not be read (",
                    offer.status().message(), ").");
  }
  const std::string scale = absl::StrCat(options.resource_scale);
  if (!excess.any()) {
    absl::StrAppend(&message,
                    " Ask for less: a smaller InstanceType or InstanceCount, amtd "
                    "--slurm-resource-scale below ",
                    scale, ", or --slurm-hosts one-node.");
    return message;
  }
  if (excess.nodes) {
    absl::StrAppend(&message, " Ask for fewer nodes: a smaller InstanceCount");
    if (options.host_per_node && asked.hosts > 1) {
      absl::StrAppend(&message, ", or amtd --slurm-hosts one-node to run the ", asked.hosts,
                      " hosts as tasks on one node");
    }
    absl::StrAppend(&message, ".");
  }
  if (excess.per_node) {
    absl::StrAppend(&message,
                    " Ask for less per node: a smaller InstanceType, or amtd "
                    "--slurm-resource-scale below ",
                    scale, " (it multiplies the instance type's vCPUs and memory)");
    if (!options.host_per_node && asked.hosts > 1) {
      absl::StrAppend(&message, ", or a smaller InstanceCount or --slurm-hosts nodes (the ",
                      asked.hosts, " hosts on one node need ", asked.hosts, " instances' worth)");
    }
    absl::StrAppend(&message, ".");
  }
  if (excess.gpus) {
    absl::StrAppend(&message,
                    " Ask for fewer GPUs: an InstanceType with fewer, or a partition with GPU "
                    "nodes (--slurm-partition).");
  }
  if (excess.tmp) {
    absl::StrAppend(&message,
                    " Ask for less disk: a smaller VolumeSizeInGB, or amtd --slurm-no-tmp.");
  }
  return message;
}

}  // namespace amt::executor
