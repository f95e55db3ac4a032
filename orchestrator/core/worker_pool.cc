#include "orchestrator/core/worker_pool.h"

#include <algorithm>

namespace amt::core {

void WorkerPool::Connect(const std::string& id, int slots, std::shared_ptr<WorkerLink> link,
                         bool single_use, std::string instance, WorkerGpus gpus) {
  auto& worker = workers_[id];
  DropParked(worker.link.get());  // a replaced connection's
  worker.gpus = {std::max(0, gpus.count), std::max(1, gpus.share)};
  worker.gpus_busy = 0;
  worker.single_use = single_use;
  worker.instance = std::move(instance);
  worker.slots = std::max(1, slots);
  worker.link = std::move(link);
  worker.jobs.clear();
  worker.busy = 0;
  worker.applied_seq = 0;
  worker.acked_seq = 0;
}

void WorkerPool::Applied(const std::string& id, const WorkerLink* link, uint64_t seq) {
  auto it = workers_.find(id);
  if (it == workers_.end() || it->second.link.get() != link) return;
  it->second.applied_seq = std::max(it->second.applied_seq, seq);
}

void WorkerPool::AckApplied() {
  for (auto& [id, worker] : workers_) {
    if (worker.applied_seq <= worker.acked_seq) continue;
    v1::OrchestratorMessage ack;
    ack.mutable_ack()->set_seq(worker.applied_seq);
    worker.link->Send(ack);
    worker.acked_seq = worker.applied_seq;
  }
}

std::optional<std::set<std::string>> WorkerPool::Disconnect(const std::string& id,
                                                            const WorkerLink* link) {
  auto it = workers_.find(id);
  if (it == workers_.end() || it->second.link.get() != link) return std::nullopt;
  std::set<std::string> jobs;
  for (const auto& [key, taken] : it->second.jobs) jobs.insert(key);
  DropParked(link);
  workers_.erase(it);
  return jobs;
}

std::optional<std::string> WorkerPool::FreeWorker(WorkerNeed need) const {
  const int most_gpus = need.gpus > 0 ? MaxGpus() : 0;
  const std::string* best = nullptr;
  int best_free = 0;
  for (const auto& [id, worker] : workers_) {
    if (worker.single_use) continue;
    int free = 0;
    if (most_gpus == 0) {
      free = worker.slots - worker.busy;
      if (free < std::max(1, need.instances)) continue;
    } else if (need.gpus > most_gpus) {
      free = worker.gpus.count;  // none can ever: the biggest says so
    } else {
      free = worker.gpus.count * worker.gpus.share - worker.gpus_busy;
      if (worker.gpus.count < need.gpus || free < need.gpus) continue;
    }
    if (best == nullptr || free > best_free) {
      best = &id;
      best_free = free;
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

int WorkerPool::MaxSlots() const {
  int most = 0;
  for (const auto& [id, worker] : workers_) {
    if (!worker.single_use) most = std::max(most, worker.slots);
  }
  return most;
}

int WorkerPool::MaxGpus() const {
  int most = 0;
  for (const auto& [id, worker] : workers_) {
    if (!worker.single_use) most = std::max(most, worker.gpus.count);
  }
  return most;
}

bool WorkerPool::Fits(WorkerNeed need) const {
  if (need.gpus > 0 && MaxGpus() > 0) return true;  // FreeWorker finds it one, or the biggest
  return std::max(1, need.instances) <= MaxSlots();
}

bool WorkerPool::Idle(const std::string& id) const {
  const auto it = workers_.find(id);
  return it != workers_.end() && it->second.jobs.empty();
}

const WorkerLink* WorkerPool::LinkOf(const std::string& id) const {
  const auto it = workers_.find(id);
  return it == workers_.end() ? nullptr : it->second.link.get();
}

void WorkerPool::Assign(const std::string& id, const std::string& key, WorkerNeed need) {
  auto it = workers_.find(id);
  if (it == workers_.end()) return;
  Worker& worker = it->second;
  Taken taken;
  if (TakesGpus(worker, need)) {
    taken.gpus = need.gpus;
  } else {
    taken.slots = std::max(1, need.instances);
  }
  auto [job, inserted] = worker.jobs.emplace(key, taken);
  if (!inserted) {
    worker.busy -= job->second.slots;
    worker.gpus_busy -= job->second.gpus;
    job->second = taken;
  }
  worker.busy += taken.slots;
  worker.gpus_busy += taken.gpus;
}

void WorkerPool::Release(const std::string& id, const std::string& key) {
  auto it = workers_.find(id);
  if (it == workers_.end()) return;
  auto job = it->second.jobs.find(key);
  if (job == it->second.jobs.end()) return;
  it->second.busy -= job->second.slots;
  it->second.gpus_busy -= job->second.gpus;
  it->second.jobs.erase(job);
}

std::string WorkerPool::InstanceOf(const std::string& id) const {
  const auto it = workers_.find(id);
  return it == workers_.end() ? "" : it->second.instance;
}

bool WorkerPool::Runs(const std::string& id, const std::string& key) const {
  auto it = workers_.find(id);
  return it != workers_.end() && it->second.jobs.count(key) > 0;
}

void WorkerPool::Drop(const std::string& id, const WorkerLink* link) {
  auto it = workers_.find(id);
  if (it != workers_.end() && it->second.link.get() == link) it->second.link->Drop();
}

bool WorkerPool::Send(const std::string& id, const v1::OrchestratorMessage& message, bool durable) {
  auto it = workers_.find(id);
  if (it == workers_.end()) return false;
  Pending pending{it->second.link, message, !durable};
  if (holding_) {
    held_.push_back(std::move(pending));
  } else {
    Deliver(std::move(pending));
  }
  return true;
}

void WorkerPool::ExpectLogs(const std::string& id, const std::string& training_job_name,
                            const metrics::MetricParser& parser) {
  auto it = workers_.find(id);
  if (it != workers_.end()) it->second.link->ExpectLogs(training_job_name, parser);
}

void WorkerPool::EndHold(bool durable) {
  holding_ = false;
  auto held = std::move(held_);
  held_.clear();
  for (auto& pending : held) {
    pending.park = pending.park || (!durable && pending.message.has_start());
    Deliver(std::move(pending));
  }
}

void WorkerPool::ReleaseSameMachine() {
  std::vector<Pending> remote;
  for (auto& pending : held_) {
    if (pending.link->SameMachine()) {
      Deliver(std::move(pending));
    } else {
      remote.push_back(std::move(pending));
    }
  }
  held_ = std::move(remote);
}

void WorkerPool::Deliver(Pending pending) {
  const bool behind = std::any_of(parked_.begin(), parked_.end(), [&](const Pending& parked) {
    return parked.link == pending.link;
  });
  if (pending.park || behind) {
    parked_.push_back(std::move(pending));
  } else {
    pending.link->Send(pending.message);
  }
}

void WorkerPool::DropParked(const WorkerLink* link) {
  // What waited for the store goes nowhere now: a job whose StartJob never left is launched
  // again when its worker reconnects without it (Orchestrator::OnWorkerConnected).
  if (link == nullptr) return;
  std::erase_if(parked_, [&](const Pending& parked) { return parked.link.get() == link; });
}

void WorkerPool::Unpark() {
  auto parked = std::move(parked_);
  parked_.clear();
  for (const auto& pending : parked) pending.link->Send(pending.message);
}

}  // namespace amt::core
