#!/usr/bin/env bash
# scripts/slurm-up.sh with WITH_ACCOUNTING=1 (MariaDB + slurmdbd) on a non-default AMT_SLURM_PORT
# (issue 32): MariaDB listens on AMT_SLURM_PORT + 3 and slurmdbd on + 2, not on fixed ports, so two
# clusters with accounting run side by side; a cluster whose ports are taken stops at once naming
# the port; and `sacct` with docs/clients.md's format shows a finished job's whole name.
#
# Usage: slurm_accounting_test.sh WORK_DIR   (as root; the clusters' files go under WORK_DIR)
set -euo pipefail
work="$1"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
first="$work/acct-a"
second="$work/acct-b"
clash="$work/acct-clash"
port_a=17117
port_b=17217

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
down() {
  for root in "$first" "$second" "$clash"; do
    AMT_SLURM_ROOT="$root" bash "$repo/scripts/slurm-down.sh" || true
  done
  rm -rf "$first" "$second" "$clash"
}
trap down EXIT
down

listening() { ss -Hltn "sport = :$1" | grep -q LISTEN; }
up() {  # ROOT PORT: a one-node cluster with accounting
  env AMT_SLURM_ROOT="$1" AMT_SLURM_PORT="$2" AMT_SLURM_NODES=1 AMT_SLURM_CPUS=1 \
    AMT_SLURM_CLEAN=1 WITH_ACCOUNTING=1 bash "$repo/scripts/slurm-up.sh"
}

up "$first" "$port_a" >/dev/null || fail "the first cluster with accounting did not start"
listening $((port_a + 3)) || fail "MariaDB is not on AMT_SLURM_PORT + 3 ($((port_a + 3)))"
listening $((port_a + 2)) || fail "slurmdbd is not on AMT_SLURM_PORT + 2 ($((port_a + 2)))"
listening 13306 && fail "something listens on 13306, the old fixed MariaDB port"

# A second cluster with accounting, beside the first.
start=$SECONDS
up "$second" "$port_b" >/dev/null || fail "a second cluster with accounting did not start"
listening $((port_b + 3)) || fail "the second MariaDB is not on $((port_b + 3))"
echo "second cluster up in $((SECONDS - start)) s"

# A third on the first one's ports: refused at once, naming slurmdbd's port.
start=$SECONDS
if out="$(up "$clash" "$port_a" 2>&1)"; then fail "a cluster on taken ports started"; fi
[ $((SECONDS - start)) -lt 20 ] || fail "the refusal took $((SECONDS - start)) s"
grep -q "port $((port_a + 2)) (slurmdbd: AMT_SLURM_PORT + 2) is already in use" <<<"$out" ||
  fail "the refusal does not name the taken port: $out"

# A job with a long name, then sacct as docs/clients.md shows it: the whole name.
export SLURM_CONF="$first/slurm.conf"
name="toy-slurm-accounting-check-$$"
job=$(sbatch --parsable -J "$name" -o /dev/null --wrap true)
# slurmdbd gets the job's record in parts: until the last, sacct shows a placeholder name.
for _ in $(seq 1 300); do
  listed=$(sacct -n -X -j "$job" --format=JobID,JobName%40,State,Elapsed)
  grep -q -- "$name *COMPLETED" <<<"$listed" && break
  sleep 0.1
done
grep -q -- "$name *COMPLETED" <<<"$listed" ||
  fail "after 30 s sacct shows job $job as: $listed"
echo "PASS: MariaDB on AMT_SLURM_PORT + 3 for two clusters, a taken port refused at once," \
  "sacct shows $name"
