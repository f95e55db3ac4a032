#!/usr/bin/env bash
# Clang's thread-safety analysis (docs/style.md item 16) over the sources whose threads share
# state: every member marked ABSL_GUARDED_BY(mu_) must be touched with mu_ held, every function
# marked ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) called with it. g++ builds the project; clang-14 only
# parses these files (-fsyntax-only), so this needs the generated protobuf headers of a configured
# build.
# Usage: scripts/check-thread-safety.sh [BUILD_DIR]   (default: build, as scripts/build.sh makes)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
clangxx=$(command -v clang++-14 || command -v clang++ || true)
if [ -z "$clangxx" ]; then
  echo "check-thread-safety: clang++-14 not found (scripts/install-deps.sh installs clang-14)" >&2
  exit 1
fi
if [ ! -f "$build_dir/proto/amt/v1/worker.pb.h" ]; then
  echo "check-thread-safety: no generated headers under $build_dir/proto; build first" >&2
  exit 1
fi
# Every .cc of the code whose threads share state, in amt-worker and amtd (a folder is listed
# whole, so a new file in it is checked too):
files=(
  # amt-worker: the agent, job runners, log shippers and process readers run on their own threads.
  worker/*.cc
  # The Slurm executor's thread runs sbatch/squeue/scancel beside the loop.
  orchestrator/executor/*.cc
  # amtd's loop thread (loop.cc) and the gRPC handler threads that Call onto it: a worker
  # stream's writer thread (worker_service.cc), the change flags that the loop sets and a
  # Subscribe stream's thread waits on (sagemaker_api.cc).
  orchestrator/api/*.cc
  # The HTTP gateway's thread pool and disk pool: the sessions' shared state (request ids, open
  # event streams), the event sinks that producers call from other threads, the CA's cache of
  # issued certificates; its service folders (s3/, logs/, cloudwatch/) answer on those threads.
  orchestrator/gateway/*.cc orchestrator/gateway/*/*.cc
  # The S3 object store, called by the disk pool's threads at once (beneath.cc's atomic flag).
  orchestrator/s3/*.cc
  # amtd's assembly: starts and stops the loop, the gRPC server and the HTTP server's threads.
  orchestrator/daemon/*.cc
  # Called from every thread of both programs: the clock (thread-safe), the command runner (the
  # Slurm executor's thread, the agent's srun hosts), log lines, JSON, credentials.
  common/*.cc
)
# One clang per file, as many at once as there are CPUs; xargs exits non-zero when any failed.
jobs=$(nproc 2>/dev/null || echo 2)
failed=0
printf '%s\0' "${files[@]}" |
  xargs -0 -n 1 -P "$jobs" "$clangxx" -std=c++20 -fsyntax-only -Wthread-safety \
    -Werror=thread-safety -I. -isystem "$build_dir/proto" || failed=1
if [ "$failed" -ne 0 ]; then
  echo "check-thread-safety: FAILED (see the errors above)" >&2
  exit 1
fi
echo "thread-safety: ${#files[@]} files, clean"
