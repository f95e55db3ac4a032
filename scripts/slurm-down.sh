#!/usr/bin/env bash
# Stops what scripts/slurm-up.sh started, by pid file: SIGTERM, then SIGKILL after 10 s.
# Environment: AMT_SLURM_ROOT (default /tmp/amt-slurm), as for slurm-up.sh.
ROOT=${AMT_SLURM_ROOT:-/tmp/amt-slurm}
for f in "$ROOT"/slurmd*.pid "$ROOT"/{slurmctld,slurmdbd,mysql/mysqld,munge/munged}.pid; do
  [ -s "$f" ] || continue
  pid=$(cat "$f")
  kill "$pid" 2>/dev/null || { rm -f "$f"; continue; }
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  rm -f "$f"
done
