// Provisioner: where attempts run when no connected worker has room, a source of single-use
// workers made on demand (the Slurm executor, orchestrator/executor/slurm_executor.h). When the
// orchestrator has a job to place and no worker has the slots, it asks for a worker; the worker
// is registered at once under the link Provide returns, which takes the job's StartJob (and
// StopJobs) until the real worker, started for that one attempt, connects with the same id (it
// replaces the link) and runs the job it was started with. The worker is single-use: nothing
// else is placed on it (WorkerPool), and it exits once its job's exit is acknowledged.
//
// The provisioner reports, onto the loop, what happened to a worker that ended without its job's
// exit reported (Orchestrator::OnProvisionedWorkerEnded): the submission was refused, the job was
// cancelled, its node failed, it ran out of memory.
//
// Runs on the orchestrator loop.
#ifndef AMT_ORCHESTRATOR_CORE_PROVISIONER_H_
#define AMT_ORCHESTRATOR_CORE_PROVISIONER_H_

#include <memory>
#include <string>

#include "orchestrator/core/worker_pool.h"

namespace amt::core {

class Provisioner {
 public:
  virtual ~Provisioner() = default;

  // Whether one more worker may be asked for now (a cap on workers submitted and not ended).
  virtual bool HasRoom() const = 0;

  struct Provided {
    std::string worker_id;  // unique: never given twice
    std::shared_ptr<WorkerLink> link;
  };
  // A new worker of `instances` slots: its id and its link until it connects.
  virtual Provided Provide(int instances) = 0;

  // The worker `worker_id` was provided but no job was sent to it: forgotten.
  virtual void Discard(const std::string& worker_id) = 0;
};

// How a provisioned worker ended without its job's exit reported.
struct ProvisionedEnd {
  enum class Kind {
    kRefused,      // the submission was refused (sbatch's message): the job fails
    kRetryable,    // node failure, preemption, lost: InternalServerError, RetryStrategy applies
    kOutOfMemory,  // the job ran out of memory: AlgorithmError
    kCancelled,    // cancelled: Stopped when amtd was stopping it, else a failure
    kFailed,       // the worker could not run the job: the job fails
  };
  Kind kind = Kind::kFailed;
  std::string message;
};

}  // namespace amt::core

#endif  // AMT_ORCHESTRATOR_CORE_PROVISIONER_H_
