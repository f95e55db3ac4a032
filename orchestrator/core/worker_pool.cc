#include "orchestrator/core/worker_pool.h"

#include <algorithm>

namespace amt::core {

void WorkerPool::Connect(const std::string& id, int slots, std::shared_ptr<WorkerLink> link) {
  auto& worker = workers_[id];
  worker.slots = std::max(1, slots);
  worker.link = std::move(link);
  worker.jobs.clear();
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
  std::set<std::string> jobs = std::move(it->second.jobs);
  workers_.erase(it);
  return jobs;
}

std::optional<std::string> WorkerPool::FreeWorker() const {
  const std::string* best = nullptr;
  int best_free = 0;
  for (const auto& [id, worker] : workers_) {
    const int free = worker.slots - static_cast<int>(worker.jobs.size());
    if (free > best_free) {
      best = &id;
      best_free = free;
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

void WorkerPool::Assign(const std::string& id, const std::string& key) {
  if (auto it = workers_.find(id); it != workers_.end()) it->second.jobs.insert(key);
}

void WorkerPool::Release(const std::string& id, const std::string& key) {
  if (auto it = workers_.find(id); it != workers_.end()) it->second.jobs.erase(key);
}

bool WorkerPool::Runs(const std::string& id, const std::string& key) const {
  auto it = workers_.find(id);
  return it != workers_.end() && it->second.jobs.count(key) > 0;
}

void WorkerPool::Drop(const std::string& id, const WorkerLink* link) {
  auto it = workers_.find(id);
  if (it != workers_.end() && it->second.link.get() == link) it->second.link->Drop();
}

bool WorkerPool::Send(const std::string& id, const v1::OrchestratorMessage& message) {
  auto it = workers_.find(id);
  if (it == workers_.end()) return false;
  it->second.link->Send(message);
  return true;
}

}  // namespace amt::core
