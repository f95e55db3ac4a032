// WorkerPool: the connected workers (amt-worker agents), their slots and the training jobs each
// runs, and placement: a new attempt goes to the worker with the most free slots. A job takes one
// slot per instance (InstanceCount), all on one worker. State only, no I/O beyond handing
// messages to a worker's link. Runs on the orchestrator loop.
#ifndef AMT_ORCHESTRATOR_CORE_WORKER_POOL_H_
#define AMT_ORCHESTRATOR_CORE_WORKER_POOL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "amt/v1/worker.pb.h"
#include "orchestrator/metrics/metric_parser.h"

namespace amt::core {

// The orchestrator's side of one connected worker. Send must not block (implementations queue).
class WorkerLink {
 public:
  virtual ~WorkerLink() = default;
  virtual void Send(const v1::OrchestratorMessage& message) = 0;
  // Ends the connection from amtd's side: the worker sees its stream break, reconnects and
  // replays, in order, every report it has no Ack for. Must not block; a no-op once closed.
  virtual void Drop() = 0;
  // The compiled MetricDefinitions of a job this link's worker is about to run, handed over on
  // the loop before the job's StartJob, so that the thread that reads the worker's reports can
  // parse the job's log lines without a round trip to the loop. Must not block; may be ignored.
  virtual void ExpectLogs(const std::string& training_job_name,
                          const metrics::MetricParser& parser) {}
  // Whether this is a stand-in registered before its worker connects (a provisioner's link,
  // provisioner.h): the worker's own Hello takes its place. A connection's link is not.
  virtual bool Provisional() const { return false; }
  // Whether the worker shares amtd's machine (its connection is a unix socket): a power loss
  // that undoes a commit not yet synced also ends every job it runs, so a launch may reach it
  // before the commit is synced (WorkerPool::ReleaseSameMachine).
  virtual bool SameMachine() const { return false; }
};

// What an attempt takes of the worker that runs it (all its instances run on one worker): a slot
// per instance; or, for an InstanceType with GPUs (common/instance_type.h) on a worker that has
// GPUs, that many GPUs (per instance, times the instances) and no slot, so GPU jobs do not wait
// behind CPU jobs for slots they would not use. A worker's GPU count times its --gpu-share is
// how many such GPUs it gives at once. On workers that all have no GPU, a GPU type runs on CPU
// and takes slots. (From an int: that many instances, no GPU.)
struct WorkerNeed {
  WorkerNeed(int instances = 1, int gpus = 0)  // NOLINT(google-explicit-constructor)
      : instances(instances), gpus(gpus) {}
  int instances;
  int gpus;
};

// A worker's GPUs (WorkerHello.gpus and gpu_share).
struct WorkerGpus {
  int count = 0;
  int share = 1;
};

class WorkerPool {
 public:
  // Registers `id` with `slots` (at least 1) over `link`, replacing an earlier connection of the
  // same id; the jobs it runs are then only those Assign()ed again. A `single_use` worker (a
  // one-shot worker started for one attempt: provisioner.h) is never offered by FreeWorker nor
  // counted by MaxSlots: it runs only the job it was made for.
  // `instance` is the worker process's WorkerHello.instance_id (empty for a provisional link or
  // an older worker).
  void Connect(const std::string& id, int slots, std::shared_ptr<WorkerLink> link,
               bool single_use = false, std::string instance = "", WorkerGpus gpus = {});
  // Removes `id` when `link` is its current connection and returns the keys of the jobs it ran;
  // nullopt (nothing changed) for a late disconnect of a replaced connection or an unknown id.
  std::optional<std::set<std::string>> Disconnect(const std::string& id, const WorkerLink* link);

  // The worker with the most free slots, at least `need.instances` of them (the first by id on
  // ties); for a need of GPUs (when a worker has any), the one with the most GPUs free among
  // those with at least `need.gpus` GPUs, or, when no worker has that many GPUs at all, the one
  // with the most (its worker fails the job, saying what it has). nullopt when none will do now.
  std::optional<std::string> FreeWorker(WorkerNeed need = 1) const;
  // The most slots any connected worker has (0 with none).
  int MaxSlots() const;
  // Whether a connected worker could take `need` once the jobs it runs end: a job that cannot
  // waits for a bigger worker without holding up the jobs behind it.
  bool Fits(WorkerNeed need) const;
  // Counts job `key` against `id`'s slots or GPUs (WorkerNeed). No-op for an unknown worker.
  void Assign(const std::string& id, const std::string& key, WorkerNeed need = 1);
  // Frees the slot job `key` held on `id`, if any.
  void Release(const std::string& id, const std::string& key);
  // Whether `id` is connected and runs no job.
  bool Idle(const std::string& id) const;
  // `id`'s current connection; nullptr when not connected.
  const WorkerLink* LinkOf(const std::string& id) const;
  // The instance id `id` connected with; empty when unknown or not connected.
  std::string InstanceOf(const std::string& id) const;
  // Whether `id` is connected and runs job `key`.
  bool Runs(const std::string& id, const std::string& key) const;
  // Notes that the report numbered `seq` from `id`'s current connection `link` was applied; a
  // report from a replaced connection is not acknowledged (the worker replays it).
  void Applied(const std::string& id, const WorkerLink* link, uint64_t seq);
  // Sends every worker an Ack for the reports applied since its last Ack. Call when what they
  // changed is saved.
  void AckApplied();
  // Drops `id`'s connection when `link` is still it (WorkerLink::Drop); else nothing.
  void Drop(const std::string& id, const WorkerLink* link);
  // Hands `message` to `id`'s link; false when `id` is not connected. While held, the message
  // waits here (for the link `id` has now) until Release. `durable` false: a StartJob whose
  // launch could not be written; it is parked (below) instead of sent. A message to a link that
  // has parked messages is parked behind them, so a link's messages keep their order (a StopJob
  // never overtakes its StartJob).
  bool Send(const std::string& id, const v1::OrchestratorMessage& message, bool durable = true);
  // WorkerLink::ExpectLogs on `id`'s link; a no-op when `id` is not connected.
  void ExpectLogs(const std::string& id, const std::string& training_job_name,
                  const metrics::MetricParser& parser);
  // Holds every Send from now until Release or Park (for the group commit: nothing goes out
  // before the state it follows from is durable). Release hands the held messages to their links
  // in order. Park is for a group whose commit failed: its StartJobs are parked, and with each
  // the messages after it to its link; the others go out.
  void Hold() { holding_ = true; }
  // The commit is written but not yet synced: the held messages to links on amtd's machine
  // (WorkerLink::SameMachine) go out now, in order; the others stay held for Release or Park.
  void ReleaseSameMachine();
  void Release() { EndHold(/*durable=*/true); }
  void Park() { EndHold(/*durable=*/false); }
  // What was written is durable now (the store recovered): the parked messages go out, in order.
  // One rule for every launch: its StartJob leaves amtd only once its record is durable.
  void Unpark();
  // Messages parked now (for tests and logs).
  size_t parked() const { return parked_.size(); }

 private:
  struct Taken {
    int slots = 0;
    int gpus = 0;
  };
  struct Worker {
    int slots = 0;
    WorkerGpus gpus;
    std::shared_ptr<WorkerLink> link;
    // Keys (lower-cased names) of the training jobs it runs -> what each takes.
    std::map<std::string, Taken> jobs;
    int busy = 0;              // the sum of `jobs`' slots
    int gpus_busy = 0;         // the sum of `jobs`' GPUs
    bool single_use = false;   // runs only the job it was made for
    std::string instance;      // WorkerHello.instance_id
    uint64_t applied_seq = 0;  // highest report seq applied over `link`
    uint64_t acked_seq = 0;    // highest seq acknowledged over `link`
  };
  // Whether `need` takes GPUs of `worker` (rather than slots).
  static bool TakesGpus(const Worker& worker, WorkerNeed need) {
    return need.gpus > 0 && worker.gpus.count > 0;
  }
  // The most GPUs any (reusable) worker has.
  int MaxGpus() const;

  // A message waiting for its link: `park` when it must not go out before the store recovers.
  struct Pending {
    std::shared_ptr<WorkerLink> link;
    v1::OrchestratorMessage message;
    bool park = false;
  };
  void EndHold(bool durable);
  // Sends `pending`, or parks it when it must wait or its link has parked messages.
  void Deliver(Pending pending);
  // Forgets the messages parked for `link` (a connection that ended or was replaced).
  void DropParked(const WorkerLink* link);

  std::map<std::string, Worker> workers_;
  bool holding_ = false;
  std::vector<Pending> held_;
  std::vector<Pending> parked_;  // in the order sent
};

}  // namespace amt::core

#endif  // AMT_ORCHESTRATOR_CORE_WORKER_POOL_H_
