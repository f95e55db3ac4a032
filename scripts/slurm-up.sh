#!/usr/bin/env bash
# Starts a one-machine Slurm 22.05 cluster (Debian 12's slurm-wlm) as root, without systemd:
# munged, slurmctld and slurmd, each with its state, sockets, logs and pid file under $ROOT, and
# prints the `export SLURM_CONF=...` line that points sbatch, squeue and amtd at it. Stop it with
# scripts/slurm-down.sh. The recipe, and why each setting is there: ../shared/spec/slurm-local.md
# (no cgroups: proctrack/linuxproc + task/none; scheduler delays off; the munge socket's folder
# world-executable).
#
# Environment:
#   AMT_SLURM_ROOT   where everything goes (default /tmp/amt-slurm)
#   AMT_SLURM_CPUS   CPUs the node offers (default: this machine's); more than the machine has is
#                    allowed (SlurmdParameters=config_overrides), so a 2-core machine can run 4
#                    one-CPU jobs at once, as the tests and docs/clients.md's walkthrough do
#   AMT_SLURM_NODES  nodes (default 1). More than one: that many slurmd processes on this machine,
#                    nodes amt-n1..amt-nN at addresses 127.0.0.1..127.0.0.N, each offering
#                    AMT_SLURM_CPUS; a multi-node job then really runs on N slurmds (all on this
#                    machine's processors and file system)
#   AMT_SLURM_PORT   slurmctld's port (default 16817); slurmd's is one more, slurmdbd's two more,
#                    MariaDB's (WITH_ACCOUNTING=1) three more, node k's (several nodes) 3 + k
#                    more: another value runs a second cluster beside one on the defaults (say,
#                    the tests'). Every port is on 127.0.0.1; slurmdbd's and MariaDB's are
#                    checked first, and a taken one stops the script at once, naming it
#   AMT_SLURM_CLEAN  1: slurmctld starts without the jobs of an earlier run (slurmctld -c)
#   WITH_ACCOUNTING  1: also MariaDB + slurmdbd, so `sacct` shows finished jobs (196 MB more to
#                    install, 2.7 s more to start)
set -euo pipefail
ROOT=${AMT_SLURM_ROOT:-/tmp/amt-slurm}
WITH_ACCOUNTING=${WITH_ACCOUNTING:-0}
HOST=$(hostname -s)
REAL_CPUS=$(nproc)
CPUS=${AMT_SLURM_CPUS:-$REAL_CPUS}
NODES=${AMT_SLURM_NODES:-1}
PORT=${AMT_SLURM_PORT:-16817}
DBD_PORT=$((PORT + 2))
DB_PORT=$((PORT + 3))  # node k's ports start at PORT + 4
MEM_MB=$(( $(awk '/MemTotal/{print $2}' /proc/meminfo) / 1024 - 1024 ))
TMP_MB=$(df -m --output=avail /tmp | tail -1 | tr -d ' ')  # what sbatch --tmp is checked against

if [ "$(id -u)" -ne 0 ]; then
  echo "slurm-up: run as root (the daemons run as root here; see ../shared/spec/slurm-local.md)" >&2
  exit 1
fi
need=()
pkgs=(slurm-wlm munge)
[ "$WITH_ACCOUNTING" = 1 ] && pkgs+=(slurmdbd mariadb-server)
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "slurm-up: installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 ||
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }
fi

mkdir -p "$ROOT"/{munge,munge-key,state,spool,log,out}
chmod 0755 "$ROOT/munge"      # munged: the socket's folder must be o+x
chmod 0700 "$ROOT/munge-key"  # the key's folder private
# wait_for COMMAND [PID [LOG]]: until COMMAND succeeds, 30 s at most; with PID, only while that
# process lives (a daemon that could not start is said at once, with the end of its LOG).
wait_for() {
  local i
  for i in $(seq 1 300); do
    eval "$1" >/dev/null 2>&1 && return 0
    if [ -n "${2:-}" ] && ! kill -0 "$2" 2>/dev/null; then
      echo "slurm-up: process $2 exited before this succeeded: $1${3:+ (the end of $3:)}" >&2
      [ -n "${3:-}" ] && tail -n 5 "$3" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "slurm-up: timed out waiting for: $1 (logs in $ROOT/log)" >&2
  return 1
}
# Whether something (another cluster's daemon, say) already listens on 127.0.0.1:PORT.
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
running() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# 1. munge, with a key, socket, pid file and log of its own (not /etc/munge or /run/munge).
KEY="$ROOT/munge-key/munge.key"
SOCK="$ROOT/munge/munge.socket.2"
if [ ! -s "$KEY" ]; then
  dd if=/dev/urandom of="$KEY" bs=1024 count=1 status=none
  chmod 0400 "$KEY"
fi
if ! { [ -s "$ROOT/munge/munged.pid" ] && kill -0 "$(cat "$ROOT/munge/munged.pid")" 2>/dev/null; }; then
  munged --key-file="$KEY" --socket="$SOCK" --pid-file="$ROOT/munge/munged.pid" \
    --log-file="$ROOT/log/munged.log" --seed-file="$ROOT/munge-key/munged.seed"
fi
wait_for "munge -n -S '$SOCK' | unmunge -S '$SOCK'"

# 2. Accounting (optional): MariaDB on 127.0.0.1:PORT + 3 and slurmdbd on PORT + 2. Either port
# taken (a second cluster with the same AMT_SLURM_PORT) would otherwise surface as a 30 s wait.
ACCT="AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none"
if [ "$WITH_ACCOUNTING" = 1 ]; then
  DB="$ROOT/mysql"
  mkdir -p "$DB"
  if ! running "$ROOT/slurmdbd.pid" && port_taken "$DBD_PORT"; then
    echo "slurm-up: port $DBD_PORT (slurmdbd: AMT_SLURM_PORT + 2) is already in use on" \
      "127.0.0.1; another cluster? Give this one another AMT_SLURM_PORT" >&2
    exit 1
  fi
  if ! running "$DB/mysqld.pid"; then
    if port_taken "$DB_PORT"; then
      echo "slurm-up: port $DB_PORT (MariaDB for slurmdbd: AMT_SLURM_PORT + 3) is already in use" \
        "on 127.0.0.1; another cluster? Give this one another AMT_SLURM_PORT" >&2
      exit 1
    fi
    if [ ! -d "$DB/data/mysql" ]; then
      mariadb-install-db --user=root --datadir="$DB/data" --auth-root-authentication-method=socket \
        --skip-test-db >"$ROOT/log/mariadb-install.log" 2>&1
    fi
    mariadbd --user=root --datadir="$DB/data" --socket="$DB/mysqld.sock" \
      --pid-file="$DB/mysqld.pid" --port="$DB_PORT" --bind-address=127.0.0.1 \
      --log-error="$ROOT/log/mariadb.err" --innodb-buffer-pool-size=128M \
      --innodb-lock-wait-timeout=900 >/dev/null 2>&1 &
    wait_for "mariadb -S '$DB/mysqld.sock' -u root -e 'select 1'" $! "$ROOT/log/mariadb.err"
  fi
  mariadb -S "$DB/mysqld.sock" -u root -e "
    CREATE DATABASE IF NOT EXISTS slurm_acct_db;
    CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurmpw';
    GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"
  cat >"$ROOT/slurmdbd.conf" <<CONF
AuthType=auth/munge
AuthInfo=socket=$SOCK
DbdHost=$HOST
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
PidFile=$ROOT/slurmdbd.pid
LogFile=$ROOT/log/slurmdbd.log
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=slurmpw
StorageLoc=slurm_acct_db
CONF
  chmod 0600 "$ROOT/slurmdbd.conf"  # slurmdbd refuses a readable one
  # DBD traffic ignores AuthInfo: AccountingStoragePass names the munge socket instead.
  ACCT="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
AccountingStoragePass=$SOCK
JobAcctGatherType=jobacct_gather/linux"
fi

OVERRIDES=""
if [ "$CPUS" -gt "$REAL_CPUS" ]; then
  OVERRIDES="SlurmdParameters=config_overrides"  # trust the CPUs below over the hardware
fi

# 3. slurm.conf (slurmdbd reads slurmdbd.conf from the folder of SLURM_CONF). Several nodes: one
# slurmd each (slurmd -N), its own port, address, spool folder, pid file and log (%n: its name).
NODE_SUFFIX=""
NODE_LINES="NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM_MB TmpDisk=$TMP_MB State=UNKNOWN"
if [ "$NODES" -gt 1 ]; then
  NODE_SUFFIX="-%n"
  NODE_LINES=""
  for k in $(seq 1 "$NODES"); do
    NODE_LINES+="NodeName=amt-n$k NodeHostname=$HOST NodeAddr=127.0.0.$k Port=$((PORT + 3 + k)) CPUs=$CPUS RealMemory=$MEM_MB TmpDisk=$TMP_MB State=UNKNOWN"$'\n'
    mkdir -p "$ROOT/spool-amt-n$k"
  done
fi

cat >"$ROOT/slurm.conf" <<CONF
ClusterName=amtlocal
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCK
StateSaveLocation=$ROOT/state
SlurmdSpoolDir=$ROOT/spool$NODE_SUFFIX
SlurmctldPidFile=$ROOT/slurmctld.pid
SlurmdPidFile=$ROOT/slurmd$NODE_SUFFIX.pid
SlurmctldLogFile=$ROOT/log/slurmctld.log
SlurmdLogFile=$ROOT/log/slurmd$NODE_SUFFIX.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
$ACCT
$OVERRIDES
MailProg=/bin/true
JobCompType=jobcomp/filetxt
JobCompLoc=$ROOT/log/jobcomp.txt
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0,bf_interval=1
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=300
$NODE_LINES
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$ROOT/slurm.conf"

# 4. The daemons: each daemonizes and writes its pid file.
if [ "$WITH_ACCOUNTING" = 1 ]; then
  running "$ROOT/slurmdbd.pid" || slurmdbd
  wait_for "sacctmgr -n list cluster"
  sacctmgr -n list cluster format=cluster | grep -qw amtlocal ||
    sacctmgr -i add cluster amtlocal >/dev/null
fi
if [ "${AMT_SLURM_CLEAN:-0}" = 1 ]; then
  slurmctld -c -f "$SLURM_CONF"
else
  slurmctld -f "$SLURM_CONF"
fi
if [ "$NODES" -gt 1 ]; then
  for k in $(seq 1 "$NODES"); do slurmd -N "amt-n$k" -f "$SLURM_CONF"; done
else
  slurmd -f "$SLURM_CONF"
fi
wait_for "[ \$(sinfo -h -N -o %t | grep -cE '^(idle|mix|alloc)') -ge $NODES ]"
echo "export SLURM_CONF=$SLURM_CONF"
