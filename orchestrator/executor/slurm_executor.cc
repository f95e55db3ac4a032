#include "orchestrator/executor/slurm_executor.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/text.h"

namespace amt::executor {
namespace {

std::string Trimmed(std::string_view text) { return std::string(auth::text::Strip(text)); }

// What a failed command said, for a message: its stderr, else its stdout, else its exit code.
std::string Said(const CommandResult& result) {
  std::string said = Trimmed(result.err);
  if (said.empty()) said = Trimmed(result.out);
  if (said.empty()) said = "exit code " + std::to_string(result.exit_code);
  for (char& c : said) {
    if (c == '\n') c = ' ';  // one line, for a FailureReason
  }
  return said;
}

}  // namespace

// The link a provided worker has until its one-shot worker connects: a StartJob submits it, a
// StopJob cancels it, Acks are for nobody. Runs on the loop; the executor outlives it in use.
class SlurmExecutor::PendingLink final : public core::WorkerLink {
 public:
  PendingLink(SlurmExecutor* executor, std::string worker_id)
      : executor_(executor), worker_id_(std::move(worker_id)) {}
  void Send(const amt::v1::OrchestratorMessage& message) override {
    if (message.has_start()) executor_->Submit(worker_id_, message.start());
    if (message.has_stop()) executor_->Cancel(worker_id_);
  }
  void Drop() override {}
  bool Provisional() const override { return true; }

 private:
  SlurmExecutor* const executor_;
  const std::string worker_id_;
};

absl::StatusOr<std::unique_ptr<SlurmExecutor>> SlurmExecutor::Start(SlurmOptions options,
                                                                    CommandRunner& runner,
                                                                    SlurmExecutorHooks hooks) {
  const auto probe = runner.Run({options.squeue, "-h", "-o", "%i"});
  if (!probe.ok()) {
    return absl::FailedPreconditionError(
        "--executor slurm: cannot run " + options.squeue + " (" +
        std::string(probe.status().message()) +
        "); install Slurm's client commands (Debian: slurm-client) or give --slurm-bin-dir");
  }
  if (probe->exit_code != 0) {
    return absl::FailedPreconditionError(
        "--executor slurm: Slurm does not answer: " + options.squeue + " says: " + Said(*probe) +
        " (is slurmctld running, and SLURM_CONF set?)");
  }
  return std::unique_ptr<SlurmExecutor>(
      new SlurmExecutor(std::move(options), runner, std::move(hooks)));
}

SlurmExecutor::SlurmExecutor(SlurmOptions options, CommandRunner& runner, SlurmExecutorHooks hooks)
    : options_(std::move(options)), runner_(runner), hooks_(std::move(hooks)) {
  const auto now = std::chrono::system_clock::now().time_since_epoch().count();
  char prefix[32];
  std::snprintf(prefix, sizeof(prefix), "slurm-%08x",
                static_cast<unsigned>((static_cast<uint64_t>(now) >> 10) ^
                                      (static_cast<uint64_t>(getpid()) << 20)));
  id_prefix_ = prefix;
  thread_ = std::thread([this] { Loop(); });
}

SlurmExecutor::~SlurmExecutor() {
  {
    MutexLock lock(&mu_);
    exit_ = true;
    wake_.SignalAll();
  }
  thread_.join();
}

void SlurmExecutor::Log(const std::string& message) const {
  if (hooks_.log) hooks_.log(message);
}

absl::StatusOr<std::vector<SlurmExecutor::Recovered>> SlurmExecutor::Recover() {
  const auto listed = runner_.Run({options_.squeue, "-h", "-t", "all", "-o", kSqueueFormat});
  if (!listed.ok()) return listed.status();
  if (listed->exit_code != 0) {
    return absl::UnavailableError(options_.squeue + " says: " + Said(*listed));
  }
  std::vector<Recovered> recovered;
  MutexLock lock(&mu_);
  for (const SlurmJobState& job : ParseSqueue(listed->out)) {
    const auto tag = ParseComment(job.comment);
    if (!tag.has_value() || tag->owner != options_.owner) continue;
    if (tracked_.count(tag->worker_id) > 0) continue;
    Tracked& t = tracked_[tag->worker_id];
    t.link = std::make_shared<PendingLink>(this, tag->worker_id);
    t.slurm_id = job.job_id;
    t.training_job_name = tag->training_job_name;
    t.attempt = tag->attempt;
    t.submitted = true;
    if (IsFinalState(job.state)) continue;  // the first poll reports it
    Recovered r;
    r.hello.set_worker_id(tag->worker_id);
    r.hello.set_slots(tag->instances);
    r.hello.set_host("slurm");
    r.hello.set_one_shot(true);
    auto* ref = r.hello.add_running();
    ref->set_training_job_name(tag->training_job_name);
    ref->set_attempt(tag->attempt);
    r.link = t.link;
    recovered.push_back(std::move(r));
  }
  if (!tracked_.empty()) wake_.SignalAll();
  return recovered;
}

bool SlurmExecutor::HasRoom() const {
  MutexLock lock(&mu_);
  return static_cast<int>(tracked_.size()) < options_.max_jobs;
}

core::Provisioner::Provided SlurmExecutor::Provide(int /*instances*/) {
  MutexLock lock(&mu_);
  Provided provided;
  provided.worker_id = id_prefix_ + "-" + std::to_string(++next_id_);
  auto link = std::make_shared<PendingLink>(this, provided.worker_id);
  tracked_[provided.worker_id].link = link;
  provided.link = std::move(link);
  return provided;
}

void SlurmExecutor::Discard(const std::string& worker_id) {
  MutexLock lock(&mu_);
  const auto it = tracked_.find(worker_id);
  if (it != tracked_.end() && !it->second.submitted) tracked_.erase(it);
}

int SlurmExecutor::Outstanding() const {
  MutexLock lock(&mu_);
  return static_cast<int>(tracked_.size());
}

void SlurmExecutor::Submit(const std::string& worker_id, const amt::v1::StartJob& start) {
  MutexLock lock(&mu_);
  const auto it = tracked_.find(worker_id);
  if (it == tracked_.end() || it->second.submitted) return;  // one job per worker
  it->second.submitted = true;
  it->second.training_job_name = start.training_job_name();
  it->second.attempt = start.attempt();
  work_.push_back([this, worker_id, start] { RunSubmit(worker_id, start); });
  wake_.SignalAll();
}

void SlurmExecutor::Cancel(const std::string& worker_id) {
  MutexLock lock(&mu_);
  const auto it = tracked_.find(worker_id);
  if (it == tracked_.end()) return;
  if (it->second.slurm_id.empty()) {
    it->second.cancel = true;  // scancel as soon as sbatch has answered
    return;
  }
  const std::string slurm_id = it->second.slurm_id;
  work_.push_back([this, slurm_id] { RunCancel(slurm_id); });
  wake_.SignalAll();
}

absl::StatusOr<SlurmOffer> SlurmExecutor::ReadOffer(const std::string& partition) const {
  // Every partition, not just the one named: with none named, the default is the one marked
  // Default=YES. Every node: each line names the partitions it is in.
  const auto partitions = runner_.Run({options_.scontrol, "-o", "show", "partition"});
  if (!partitions.ok()) return partitions.status();
  if (partitions->exit_code != 0) {
    return absl::UnavailableError("scontrol show partition says: " + Said(*partitions));
  }
  const auto nodes = runner_.Run({options_.scontrol, "-o", "show", "node"});
  if (!nodes.ok()) return nodes.status();
  if (nodes->exit_code != 0) {
    return absl::UnavailableError("scontrol show node says: " + Said(*nodes));
  }
  return ParseOffer(partitions->out, nodes->out, partition);
}

void SlurmExecutor::RunSubmit(const std::string& worker_id, const amt::v1::StartJob& start) {
  core::ProvisionedEnd refused;
  refused.kind = core::ProvisionedEnd::Kind::kRefused;
  const auto args = SbatchArguments(options_, start, worker_id, start.max_runtime_seconds(),
                                    start.volume_size_gb());
  std::optional<SlurmRequest> request;
  std::string slurm_id;
  if (!args.ok()) {
    refused.message = std::string(args.status().message());
  } else {
    request = RequestOf(*args);
    std::vector<std::string> argv = {options_.sbatch};
    argv.insert(argv.end(), args->begin(), args->end());
    const auto result = runner_.Run(argv);
    if (!result.ok()) {
      refused.message = std::string(result.status().message());
    } else if (result->exit_code != 0) {
      refused.message = Said(*result);
      // A GPU type on a cluster that has no GPUs (no GresTypes) is refused as an invalid gres.
      if (IsSizeReason(refused.message) ||
          (request->gpus_per_node > 0 &&
           refused.message.find("Invalid generic resource") != std::string::npos)) {
        // Too big for the partition: say by how much, and what to turn down.
        Log("sbatch refused " + start.training_job_name() + ": " + refused.message);
        refused.message = TooBigMessage("Slurm refused the job: " + refused.message, *request,
                                        ReadOffer(request->partition), options_);
        MutexLock lock(&mu_);
        EndLocked(worker_id, refused);
        return;
      }
    } else {
      // --parsable: "<id>" or "<id>;<cluster>".
      slurm_id = Trimmed(result->out);
      if (const auto semicolon = slurm_id.find(';'); semicolon != std::string::npos) {
        slurm_id.resize(semicolon);
      }
      if (slurm_id.empty()) refused.message = "sbatch printed no job id";
    }
  }
  MutexLock lock(&mu_);
  const auto it = tracked_.find(worker_id);
  if (it == tracked_.end()) return;
  if (slurm_id.empty()) {
    Log("sbatch refused " + start.training_job_name() + ": " + refused.message);
    refused.message = "Slurm refused the job: " + refused.message;
    EndLocked(worker_id, refused);
    return;
  }
  it->second.slurm_id = slurm_id;
  it->second.request = std::move(request);
  if (it->second.cancel) work_.push_back([this, slurm_id] { RunCancel(slurm_id); });
}

void SlurmExecutor::RunCancel(const std::string& slurm_id) {
  const auto result = runner_.Run({options_.scancel, slurm_id});
  if (!result.ok() || result->exit_code != 0) {
    Log("scancel " + slurm_id +
        " failed: " + (result.ok() ? Said(*result) : std::string(result.status().message())));
  }
}

void SlurmExecutor::Poll() {
  if (!AnySubmitted()) return;
  const std::optional<std::map<std::string, SlurmJobState>> by_id = ListJobs();
  if (!by_id.has_value()) return;
  std::vector<TooBig> too_big;
  std::vector<Never> never_starts;
  ReviewJobs(*by_id, &too_big, &never_starts);
  CheckSizes(too_big, &never_starts);
  if (never_starts.empty()) return;
  EndNeverStarting(never_starts);
}

bool SlurmExecutor::AnySubmitted() const {
  MutexLock lock(&mu_);
  bool any = false;
  for (const auto& [id, t] : tracked_) any = any || !t.slurm_id.empty();
  return any;
}

std::optional<std::map<std::string, SlurmJobState>> SlurmExecutor::ListJobs() const {
  const auto listed = runner_.Run({options_.squeue, "-h", "-t", "all", "-o", kSqueueFormat});
  if (!listed.ok() || listed->exit_code != 0) {
    Log("squeue failed: " + (listed.ok() ? Said(*listed) : std::string(listed.status().message())));
    return std::nullopt;
  }
  std::map<std::string, SlurmJobState> by_id;
  for (SlurmJobState& job : ParseSqueue(listed->out)) by_id[job.job_id] = std::move(job);
  return by_id;
}

void SlurmExecutor::ReviewJobs(const std::map<std::string, SlurmJobState>& by_id,
                               std::vector<TooBig>* too_big, std::vector<Never>* never_starts) {
  MutexLock lock(&mu_);
  std::vector<std::pair<std::string, core::ProvisionedEnd>> ends;
  for (auto& [worker_id, t] : tracked_) {
    if (t.slurm_id.empty()) continue;
    const auto found = by_id.find(t.slurm_id);
    if (found == by_id.end()) {
      // Forgotten by slurmctld (past MinJobAge) or never listed: lost after two polls.
      if (++missing_[t.slurm_id] < 2) continue;
      ends.push_back({worker_id, ClassifyEnd(t.slurm_id, "", "")});
      continue;
    }
    missing_.erase(t.slurm_id);
    const SlurmJobState& job = found->second;
    if (job.state == "PENDING") {
      if (const auto never = NeverStartsReason(job.reason); never.has_value()) {
        if (t.request.has_value() && IsSizeReason(*never)) {
          too_big->push_back({worker_id, t.slurm_id, *never, *t.request, true});
          continue;
        }
        never_starts->push_back({worker_id,
                                 t.slurm_id,
                                 {core::ProvisionedEnd::Kind::kRefused,
                                  "Slurm job " + t.slurm_id + " can never start (" + *never +
                                      "): the request exceeds what the partition offers"}});
      } else if (job.reason == "Resources" && t.request.has_value() && !t.fit_checked) {
        // Slurm queues some requests no node can meet as if they only waited for room (a
        // GPU count above every node's, with EnforcePartLimits off): check once.
        t.fit_checked = true;
        too_big->push_back({worker_id, t.slurm_id, job.reason, *t.request, false});
      }
      continue;
    }
    if (!IsFinalState(job.state)) continue;
    ends.push_back({worker_id, ClassifyEnd(t.slurm_id, job.state, job.reason)});
  }
  for (const auto& [worker_id, end] : ends) EndLocked(worker_id, end);
}

void SlurmExecutor::CheckSizes(const std::vector<TooBig>& too_big,
                               std::vector<Never>* never_starts) const {
  // One read of the partition serves every job that needs it (jobs of one amtd share one).
  std::map<std::string, absl::StatusOr<SlurmOffer>> offers;
  for (const TooBig& job : too_big) {
    auto offer = offers.find(job.request.partition);
    if (offer == offers.end()) {
      offer = offers.emplace(job.request.partition, ReadOffer(job.request.partition)).first;
    }
    if (!job.never && !(offer->second.ok() && Exceeds(job.request, *offer->second))) continue;
    never_starts->push_back(
        {job.worker_id, job.slurm_id,
         core::ProvisionedEnd{
             core::ProvisionedEnd::Kind::kRefused,
             TooBigMessage("Slurm job " + job.slurm_id + " can never start (" + job.reason + ")",
                           job.request, offer->second, options_)}});
  }
}

void SlurmExecutor::EndNeverStarting(const std::vector<Never>& never_starts) {
  for (const Never& job : never_starts) RunCancel(job.slurm_id);
  MutexLock lock(&mu_);
  for (const Never& job : never_starts) {
    // Only if still the same Slurm job of the same worker (worker ids are never reused).
    const auto it = tracked_.find(job.worker_id);
    if (it == tracked_.end() || it->second.slurm_id != job.slurm_id) continue;
    EndLocked(job.worker_id, job.end);
  }
}

void SlurmExecutor::EndLocked(const std::string& worker_id, const core::ProvisionedEnd& end) {
  const auto it = tracked_.find(worker_id);
  if (it == tracked_.end()) return;
  missing_.erase(it->second.slurm_id);
  // The link stays alive in the task: the orchestrator compares it with the worker's current
  // connection.
  std::shared_ptr<core::WorkerLink> link = it->second.link;
  const std::string job = it->second.training_job_name;
  const int attempt = it->second.attempt;
  tracked_.erase(it);
  if (hooks_.post && hooks_.ended) {
    hooks_.post([hooks = hooks_, worker_id, link, job, attempt, end] {
      hooks.ended(worker_id, link.get(), job, attempt, end);
    });
  }
}

void SlurmExecutor::Loop() {
  const auto interval =
      std::chrono::microseconds(static_cast<int64_t>(std::max(0.01, options_.poll_seconds) * 1e6));
  auto next_poll = std::chrono::steady_clock::now();
  while (true) {
    std::deque<std::function<void()>> work;
    {
      MutexLock lock(&mu_);
      if (exit_) return;
      if (work_.empty()) {
        const auto wait = next_poll - std::chrono::steady_clock::now();
        if (wait > std::chrono::steady_clock::duration::zero()) {
          wake_.AwaitFor(&mu_, wait, [this] {
            mu_.AssertHeld();
            return exit_ || !work_.empty();
          });
        }
        if (exit_) return;
      }
      work.swap(work_);
    }
    for (auto& task : work) task();
    if (std::chrono::steady_clock::now() >= next_poll) {
      Poll();
      next_poll = std::chrono::steady_clock::now() + interval;
    }
  }
}

}  // namespace amt::executor
