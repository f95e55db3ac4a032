// The job shim (amt-job-shim): the process that holds one training process and every process it
// starts, so that none outlives the job or its worker. The production launcher
// (process_launcher.h) runs it as the group leader in place of the trainer:
//
//   amt-job-shim <error fd> <parent-death signal> -- <argv of the trainer...>
//
// It makes itself a child subreaper (PR_SET_CHILD_SUBREAPER: descendants orphaned by the trainer
// are reparented to it, not to init), starts the trainer (same group, environment, folder and
// descriptors; exec errors written to <error fd> as the launcher reads them), and then:
//   - when the trainer exits, kills (SIGKILL) every descendant left, as Docker ends a container
//     with its main process, and exits as the trainer did (its exit code, or its signal);
//   - when its worker dies (the launcher set PR_SET_PDEATHSIG to <parent-death signal>; even a
//     kill -9 of amt-worker sends it), kills the trainer and every descendant, and exits;
//   - other signals (a stop's SIGTERM, sent to the whole group) are the trainer's: it lets them
//     pass.
// A trainer's grandchild (`sh -c "sleep 10; ..." &`) thus never survives its worker, so a job
// that amtd retries elsewhere never runs twice.
#ifndef AMT_WORKER_JOB_SHIM_H_
#define AMT_WORKER_JOB_SHIM_H_

namespace amt::worker {

// amt-job-shim's main. Returns only on a usage error (2); otherwise exits as its trainer did.
int RunJobShim(int argc, char** argv);

}  // namespace amt::worker

#endif  // AMT_WORKER_JOB_SHIM_H_
