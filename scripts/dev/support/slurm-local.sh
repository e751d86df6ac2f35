#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for testing `fabdiag sweep`
# under srun: munged (as the munge user), slurmctld and slurmd, with their
# configuration, state and logs in DIR. Needs root and Debian's slurm-wlm
# and munge (scripts/install-deps.sh installs them).
#
#   scripts/dev/support/slurm-local.sh start DIR   # prints "export SLURM_CONF=DIR/slurm.conf"
#   scripts/dev/support/slurm-local.sh stop DIR
#
# SLURM_LOCAL_EXTRA: lines added to slurm.conf (e.g. a HealthCheckProgram
# and HealthCheckInterval, as the health gate's tests set them).
#
# The node declares 16 CPUs whatever this machine has, so a step of 8 or 16
# tasks fits on a 2-core machine (the tasks of a sweep mostly wait). Its
# topology (topology/tree, DIR/topology.conf): the node under leaf1 under
# spine1, which `scontrol show topology` prints and fabdiag topology reads.
set -euo pipefail

cmd="${1:-}"
dir="${2:-}"
if [ -z "$cmd" ] || [ -z "$dir" ]; then
    echo "usage: $0 start|stop DIR" >&2
    exit 1
fi
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
conf="$dir/slurm.conf"

stop() {
    for d in slurmd slurmctld; do
        if [ -f "$dir/$d.pid" ]; then
            kill "$(cat "$dir/$d.pid")" 2>/dev/null || true
        fi
    done
    for _ in $(seq 50); do
        alive=0
        for d in slurmd slurmctld; do
            if [ -f "$dir/$d.pid" ] && kill -0 "$(cat "$dir/$d.pid")" 2>/dev/null; then
                alive=1
            fi
        done
        [ "$alive" = 0 ] && break
        sleep 0.1
    done
    rm -f "$dir/slurmd.pid" "$dir/slurmctld.pid"
}

# munged too, when this script started it
stop_munge() {
    if [ -f "$dir/munged.ours" ] && [ -f /run/munge/munged.pid ]; then
        kill "$(cat /run/munge/munged.pid)" 2>/dev/null || true
    fi
    rm -f "$dir/munged.ours"
}

munge_up() {
    munge -n 2>/dev/null | unmunge >/dev/null 2>&1
}

# two consecutive free TCP ports (slurmctld's and slurmd's), from ss(8)
free_port() {
    local used p
    used="$(ss -Htan | awk '{print $4}' | sed 's/.*://' | sort -u)"
    for p in $(seq 6817 2 7815); do
        if ! grep -qx "$p" <<<"$used" && ! grep -qx "$((p + 1))" <<<"$used"; then
            echo "$p"
            return
        fi
    done
    echo "$0: no free port pair in 6817-7816" >&2
    exit 1
}

case "$cmd" in
stop)
    stop
    stop_munge
    exit 0
    ;;
start) ;;
*)
    echo "$0: unknown command '$cmd' (start or stop)" >&2
    exit 1
    ;;
esac

if [ "$(id -u)" -ne 0 ]; then
    echo "$0: run as root" >&2
    exit 1
fi
for b in munged slurmctld slurmd srun; do
    command -v "$b" >/dev/null || {
        echo "$0: $b is missing: run scripts/install-deps.sh" >&2
        exit 1
    }
done

if ! munge_up; then
    install -d -o munge -g munge -m 0755 /run/munge
    install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
    if [ ! -s /etc/munge/munge.key ]; then
        mungekey --create --force 2>/dev/null || dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=128 2>/dev/null
        chown munge:munge /etc/munge/munge.key
        chmod 0400 /etc/munge/munge.key
    fi
    runuser -u munge -- /usr/sbin/munged
    touch "$dir/munged.ours"
    for _ in $(seq 50); do
        munge_up && break
        sleep 0.1
    done
    munge_up || {
        echo "$0: munged did not start" >&2
        exit 1
    }
fi

stop
host="$(hostname -s)"
port="$(free_port)"
mkdir -p "$dir/state" "$dir/spool"
cat >"$conf" <<EOF
ClusterName=fabdiag
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
TopologyPlugin=topology/tree
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=$host CPUs=16 State=UNKNOWN
PartitionName=fabdiag Nodes=ALL Default=YES MaxTime=INFINITE State=UP
${SLURM_LOCAL_EXTRA:-}
EOF
cat >"$dir/topology.conf" <<TOPOLOGY
SwitchName=leaf1 Nodes=$host
SwitchName=spine1 Switches=leaf1
TOPOLOGY
export SLURM_CONF="$conf"
slurmctld -f "$conf" -i
slurmd -f "$conf"
for _ in $(seq 100); do
    if sinfo -h -o %t 2>/dev/null | grep -qx idle; then
        echo "export SLURM_CONF=$conf"
        exit 0
    fi
    sleep 0.2
done
echo "$0: the Slurm node did not become idle; see $dir/slurmctld.log and $dir/slurmd.log" >&2
sinfo >&2 || true
exit 1
