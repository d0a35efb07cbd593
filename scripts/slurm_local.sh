#!/usr/bin/env bash
# A one-node Slurm cluster on localhost, in a scratch directory, for trying and testing the
# pilid_slurm launcher (tests/test_slurm.py) without a real cluster.
#
#   sudo apt-get install -y slurmctld slurmd slurm-client munge    # Debian/Ubuntu (slurm-wlm has them)
#   sudo scripts/slurm_local.sh -- python -m pytest -m slurm tests/test_slurm.py   # start, run, stop
#   scripts/slurm_local.sh                  # start and keep running until Ctrl-C / SIGTERM;
#                                           # then in another shell: source <dir>/env; sinfo
#
# It installs nothing. It writes its own slurm.conf, munge key, state, spool and log directories
# under the scratch directory, starts munged, slurmctld and slurmd in the foreground as its own
# children (on free ports, with their own munge socket, so that it touches neither /etc/slurm nor
# a system munged), waits until `sinfo` shows the node idle, and on exit (trap on EXIT; also
# after Ctrl-C or SIGTERM) cancels the cluster's jobs and stops exactly the daemons it started,
# by PID. Runs as root (slurmd must be root to start jobs); jobs run as the submitting user.
#
# Options:
#   --dir DIR    scratch directory (created; kept afterwards). Default: a new mktemp directory,
#                removed on exit unless --keep.
#   --keep       keep the default scratch directory (logs, slurm.conf, jobcomp.txt).
#   --cpus N     CPUs of the node (default: nproc).  --mem MB: its RealMemory (default: 90% of RAM).
#   --partition NAME   partition name (default: debug).
#   -- CMD ...   run CMD against this cluster, stop the cluster, exit with CMD's status. CMD sees
#                SLURM_CONF (this cluster's slurm.conf), PILID_SLURM_LOCAL (the scratch directory)
#                and PILID_SLURM_PARTITION; tests/test_slurm.py runs only where these are set.
#
# Slurm settings chosen for a container (no systemd, no cgroup v1/v2 delegation needed):
# ProctrackType=proctrack/linuxproc, TaskPlugin=task/affinity (a job sees only its CPUs, as with
# task/cgroup on a real cluster), SelectType=select/cons_tres with CR_Core_Memory,
# AccountingStorageType=accounting_storage/none (no slurmdbd: `sacct` does not work here; the
# final state of every job, requeues included, is written to <dir>/log/jobcomp.txt by
# JobCompType=jobcomp/filetxt and can be read with `sacct -c`), KillWait=5, OverTimeLimit=0.
# Exit status: CMD's status; 3 when Slurm or munge is not installed; 1 when the cluster fails
# to come up (the daemons' log tails are printed).
set -euo pipefail

usage() { sed -n '2,34p' "$0" | sed 's/^# \{0,1\}//'; }

DIR=""
KEEP=0
CPUS="$(nproc)"
MEM=""
PARTITION="debug"
while [ $# -gt 0 ]; do
    case "$1" in
        --dir) DIR="$2"; shift 2 ;;
        --keep) KEEP=1; shift ;;
        --cpus) CPUS="$2"; shift 2 ;;
        --mem) MEM="$2"; shift 2 ;;
        --partition) PARTITION="$2"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        --) shift; break ;;
        *) echo "slurm_local: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done

say() { echo "slurm_local: $*" >&2; }

missing=()
for tool in munged munge unmunge slurmctld slurmd sinfo sbatch squeue scontrol scancel; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
    say "not installed: ${missing[*]}; install Slurm and munge first, e.g." \
        "'apt-get install -y slurmctld slurmd slurm-client munge' (Debian/Ubuntu)"
    exit 3
fi
if [ "$(id -u)" -ne 0 ]; then
    say "must run as root (slurmd starts the jobs); try sudo"
    exit 2
fi

# -- scratch directory ---------------------------------------------------------------------
if [ -z "$DIR" ]; then
    DIR="$(mktemp -d "${TMPDIR:-/tmp}/pilid-slurm.XXXXXX")"
    [ "$KEEP" -eq 1 ] || REMOVE_DIR=1
fi
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
chmod 755 "$DIR"   # other users reach the munge socket and slurm.conf; the key is 400
mkdir -p "$DIR"/{munge,state/ctld,state/d,log,tmp,run}
chmod 755 "$DIR"/munge

PIDS=()      # daemons we started, in start order
NAMES=()
CHILD=""     # the command run with --
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [ -n "$CHILD" ] && kill -0 "$CHILD" 2>/dev/null; then
        kill -TERM "$CHILD" 2>/dev/null || true
        wait "$CHILD" 2>/dev/null || true
    fi
    if [ ${#PIDS[@]} -ge 2 ] && kill -0 "${PIDS[1]}" 2>/dev/null; then
        # cancel the jobs of this cluster (they run under slurmstepd, not under this script)
        # and wait for their step daemons to go: their sockets are in our spool directory
        if [ -n "$(squeue -h -p "$PARTITION" -o %i 2>/dev/null)" ]; then
            scancel -p "$PARTITION" 2>/dev/null || true
            for _ in $(seq 60); do
                compgen -G "$DIR/state/d/*_*.*" >/dev/null || break
                sleep 0.5
            done
        fi
    fi
    local i
    for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do   # slurmd, slurmctld, munged
        local pid="${PIDS[$i]}"
        kill -0 "$pid" 2>/dev/null || continue
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
        if kill -0 "$pid" 2>/dev/null; then
            say "${NAMES[$i]} (pid $pid) ignored SIGTERM; killing it"
            kill -KILL "$pid" 2>/dev/null || true
        fi
        wait "$pid" 2>/dev/null || true
    done
    [ ${#PIDS[@]} -eq 0 ] || say "stopped ${NAMES[*]} (pids ${PIDS[*]})"
    if [ "${REMOVE_DIR:-0}" -eq 1 ]; then rm -rf "$DIR"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start() {  # start NAME CMD...: a daemon in the foreground, as a child of this script
    local name="$1"; shift
    "$@" >>"$DIR/log/$name.out" 2>&1 &
    PIDS+=("$!")
    NAMES+=("$name")
}

fail() {
    say "$1"
    for log in "$DIR"/log/*; do
        [ -s "$log" ] || continue
        echo "---- $log (last lines)" >&2
        tail -n 15 "$log" >&2
    done
    exit 1
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() {  # a port nobody listens on, from $1 up
    local port="$1"
    while ! port_free "$port"; do port=$((port + 1)); done
    echo "$port"
}
CTLD_PORT="$(free_port 16817)"
SLURMD_PORT="$(free_port $((CTLD_PORT + 1)))"

if [ -z "$MEM" ]; then
    MEM="$(awk '/^MemTotal:/ {printf "%d", $2 / 1024 * 0.9}' /proc/meminfo)"
fi
HOST="$(hostname -s)"

# -- munge ---------------------------------------------------------------------------------
KEY="$DIR/munge/munge.key"
SOCKET="$DIR/munge/munge.socket"
dd if=/dev/urandom of="$KEY" bs=1024 count=1 status=none
chmod 400 "$KEY"
start munged munged --foreground --force --key-file="$KEY" --socket="$SOCKET" \
    --pid-file="$DIR/munge/munged.pid" --seed-file="$DIR/munge/munged.seed" \
    --log-file="$DIR/log/munged.log"
for _ in $(seq 50); do [ -S "$SOCKET" ] && break; sleep 0.1; done
munge -n -S "$SOCKET" | unmunge -S "$SOCKET" >/dev/null 2>&1 || fail "munged did not start"

# -- slurm ---------------------------------------------------------------------------------
export SLURM_CONF="$DIR/slurm.conf"
cat >"$SLURM_CONF" <<EOF
# written by scripts/slurm_local.sh: a one-node cluster on localhost
ClusterName=pilid-local
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCKET,cred_expire=10
StateSaveLocation=$DIR/state/ctld
SlurmdSpoolDir=$DIR/state/d
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
TmpFS=$DIR/tmp
PlugStackConfig=$DIR/plugstack.conf
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2,bf_interval=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/log/jobcomp.txt
ReturnToService=2
SlurmdTimeout=300
InactiveLimit=0
MinJobAge=600
KillWait=5
DefMemPerCPU=1024
OverTimeLimit=0
Waittime=0
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=$PARTITION Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
: >"$DIR/plugstack.conf"   # none of the system's SPANK plugins

start slurmctld slurmctld -D -i
for _ in $(seq 100); do scontrol ping >/dev/null 2>&1 && break; sleep 0.2; done
scontrol ping >/dev/null 2>&1 || fail "slurmctld did not answer"
start slurmd slurmd -D -N localhost

state=""
for _ in $(seq 120); do
    state="$(sinfo -h -n localhost -o %T 2>/dev/null || true)"
    [ "$state" = "idle" ] && break
    kill -0 "${PIDS[2]}" 2>/dev/null || fail "slurmd exited"
    sleep 0.5
done
[ "$state" = "idle" ] || fail "node localhost is '${state:-unknown}', not idle, after 60 s"

# what tests/test_slurm.py looks for: this cluster's directory (jobcomp.txt, logs) and partition
export PILID_SLURM_LOCAL="$DIR" PILID_SLURM_PARTITION="$PARTITION"
printf 'export SLURM_CONF=%s PILID_SLURM_LOCAL=%s PILID_SLURM_PARTITION=%s\n' \
    "$SLURM_CONF" "$DIR" "$PARTITION" >"$DIR/env"
say "ready: partition $PARTITION, node localhost ($CPUS CPUs, $MEM MB), slurmctld :$CTLD_PORT," \
    "slurmd :$SLURMD_PORT, pids ${PIDS[*]}; 'source $DIR/env' to use it"
sinfo >&2

if [ $# -gt 0 ]; then
    "$@" &
    CHILD=$!
    set +e
    wait "$CHILD"
    rc=$?
    set -e
    CHILD=""
    exit "$rc"
fi
say "running until Ctrl-C or SIGTERM"
while true; do
    for i in "${!PIDS[@]}"; do
        kill -0 "${PIDS[$i]}" 2>/dev/null || fail "${NAMES[$i]} exited"
    done
    sleep 2 &
    wait $! || true
done
