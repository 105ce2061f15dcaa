#!/usr/bin/env bash
# Start a real Slurm cluster on this one host, for sbatchlint's tests.
#
# Slurm 22.05 from Debian 12's packages; three slurmd daemons (n1, n2 with 8
# fake GPUs each, character devices under /run/fakegpu; n3 without GPUs)
# through Debian's multiple-slurmd support; a small SPANK plugin (fake_pyxis.c)
# so that sbatch and srun accept pyxis's --container-* options and ignore them;
# slurmdbd over MariaDB for accounting (sacct, sacctmgr), with associations
# enforced.
#
# Partitions: batch (default) and interactive over n[1-2], MaxTime UNLIMITED;
# short over n[1-2], MaxTime 30 min; cpu over n3 (no GPUs).
# Accounts: root is associated with sbatchlint (default), llm_research and (as
# Slurm adds it) root on every partition, and with teaching on the cpu
# partition only; the account other exists without root. Any other account is
# refused at submission.
#
# Run as root. Idempotent: a second run leaves running daemons alone (it
# restarts the Slurm daemons only when the generated config changed) and waits
# for the nodes to be up again. No systemd needed. A MariaDB server already
# answering on Debian's socket (/run/mysqld/mysqld.sock) is used as it is;
# otherwise one is started on Debian's data directory (/var/lib/mysql) without
# networking, and stop-cluster.sh stops it again.
#
# Generated files, logs and pid files live in the state dir
# (default /run/sbatchlint-slurm; override with SBATCHLINT_SLURM_STATE).
# Clients find the cluster through Debian's default client config path
# /etc/slurm/slurm.conf, which this script points at the state dir.
#
# Environment knobs (all optional):
#   SBATCHLINT_SLURM_STATE    state dir                   [/run/sbatchlint-slurm]
#   SBATCHLINT_SLURM_TIMEOUT  seconds to wait for nodes   [60]
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STATE="${SBATCHLINT_SLURM_STATE:-/run/sbatchlint-slurm}"
TIMEOUT="${SBATCHLINT_SLURM_TIMEOUT:-60}"
ETC_CONF=/etc/slurm/slurm.conf
FAKEGPU_DIR=/run/fakegpu
NODES=(n1 n2 n3)
MYSQL_SOCKET=/run/mysqld/mysqld.sock
DBD_PORT=6819

# A closed stdout (e.g. '| head') must not kill the script half-way.
trap '' PIPE
log() { printf 'start-cluster: %s\n' "$*" 2>/dev/null || true; }
die() { printf 'start-cluster: ERROR: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root"

mkdir -p "$STATE" "$STATE/log" "$STATE/ctld"
chmod 755 "$STATE"

# Serialise concurrent runs (two test sessions starting the cluster at once).
# The daemons are started with fd 9 closed, or they would hold the lock forever.
exec 9>"$STATE/start.lock"
flock -w 300 9 || die "another start-cluster.sh holds $STATE/start.lock"

# ---------------------------------------------------------------- packages --
need_install=0
for cmd in slurmctld slurmd slurmdbd sbatch munged gcc mariadbd mariadb-admin; do
    command -v "$cmd" >/dev/null 2>&1 || need_install=1
done
[ -f /usr/include/slurm/spank.h ] || need_install=1
# Slurm's mpi/pmix plugin dlopens the unversioned libpmix.so (libpmix-dev):
# without it 'srun --mpi=pmix', common in pyxis/NeMo scripts, is refused.
ldconfig -p 2>/dev/null | grep 'libpmix\.so ' >/dev/null || need_install=1
if [ "$need_install" -eq 1 ]; then
    log "installing Slurm, munge and MariaDB from Debian packages"
    t0=$SECONDS
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=120 update -q >/dev/null
    # slurmdbd is pinned to the installed Slurm's version: its protocol must match.
    dbd=slurmdbd
    v="$(dpkg-query -W -f '${Version}' slurmctld 2>/dev/null || true)"
    [ -n "$v" ] && dbd="slurmdbd=$v"
    apt-get -o DPkg::Lock::Timeout=120 install -y -q --no-install-recommends \
        slurmctld slurmd slurm-client munge libslurm-dev gcc libpmix-dev "$dbd" mariadb-server >/dev/null
    log "installed in $((SECONDS - t0)) s"
fi

# not_zombie PID: a killed daemon stays a zombie until PID 1 reaps it.
not_zombie() {
    local st
    st="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
    st="${st##*) }"
    case "${st%% *}" in Z|X|x|"") return 1 ;; esac
}

# pid_alive PIDFILE COMM: the pid in PIDFILE is running and is COMM.
pid_alive() {
    local pid
    [ -s "$1" ] || return 1
    pid="$(tr -dc '0-9' 2>/dev/null <"$1")" || return 1
    [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] || return 1
    not_zombie "$pid"
}

# stop_pidfile PIDFILE COMM: TERM, wait, KILL; then drop the pid file.
stop_pidfile() {
    local pid i
    if pid_alive "$1" "$2"; then
        pid="$(tr -dc '0-9' 2>/dev/null <"$1")" || return 1
        kill -TERM "$pid" 2>/dev/null || true
        for i in $(seq 1 50); do
            pid_alive "$1" "$2" || break
            sleep 0.2
        done
        if pid_alive "$1" "$2"; then kill -KILL "$pid" 2>/dev/null || true; fi
    fi
    rm -f "$1"
}

# ------------------------------------------------------------ SPANK plugin --
so="$STATE/fake_pyxis.so"
src_sum="$(sha256sum "$HERE/fake_pyxis.c" | cut -d' ' -f1)"
if [ ! -f "$so" ] || [ "$(cat "$STATE/fake_pyxis.sha256" 2>/dev/null)" != "$src_sum" ]; then
    log "compiling fake_pyxis.so"
    gcc -shared -fPIC -O2 -Wall -Werror -o "$so.tmp" "$HERE/fake_pyxis.c"
    mv -f "$so.tmp" "$so"
    echo "$src_sum" >"$STATE/fake_pyxis.sha256"
fi

# --------------------------------------------------------------- fake GPUs --
mkdir -p "$FAKEGPU_DIR"
for i in 0 1 2 3 4 5 6 7; do
    dev="$FAKEGPU_DIR/nvidia$i"
    if [ ! -c "$dev" ]; then
        rm -f "$dev"
        mknod -m 666 "$dev" c 195 "$i" || die "mknod $dev failed (fake GPUs need character devices)"
    fi
done

# -------------------------------------------------------------- /etc/hosts --
for n in "${NODES[@]}"; do
    if ! grep -Eq "^[[:space:]]*127\.0\.0\.1([[:space:]].*)?[[:space:]]$n([[:space:]]|\$)" /etc/hosts; then
        echo "127.0.0.1 $n" >>/etc/hosts
        log "added '127.0.0.1 $n' to /etc/hosts"
    fi
done

# ------------------------------------------------------------------ config --
ctld_host="$(hostname -s)"
changed=0
# write_if_changed FILE: replace FILE by stdin when the content differs.
write_if_changed() {
    local tmp="$1.new"
    cat >"$tmp"
    if [ -f "$1" ] && cmp -s "$tmp" "$1"; then
        rm -f "$tmp"
    else
        mv -f "$tmp" "$1"
        changed=1
    fi
}

write_if_changed "$STATE/slurm.conf" <<EOF
# Generated by tests/slurm/start-cluster.sh; edit the script, not this file.
ClusterName=sbatchlint
SlurmctldHost=${ctld_host}(127.0.0.1)
SlurmctldPort=6817
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/slurmd-%n
# Per-node scratch: both nodes share this host's /tmp, and PMIx would put
# both nodes' client dirs at the same path there (srun --mpi=pmix fails).
TmpFS=$STATE/tmp-%n
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd-%n.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$STATE/plugstack.conf

# What works without cgroups or systemd (measured on Slurm 22.05.8).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
GresTypes=gpu
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
EnforcePartLimits=ALL
KillWait=5
# Finished jobs stay visible to 'scontrol show job' for 2 minutes; after that
# the job completion log below still has their final state.
MinJobAge=120
ReturnToService=2
InactiveLimit=0
SchedulerType=sched/backfill

# Accounting through slurmdbd (sacct, sacctmgr), as on a real cluster: jobs
# need an association (a known user and account, for the partition), and the
# batch script and environment are stored with the job (sacct --batch-script).
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBD_PORT
AccountingStorageEnforce=associations
AccountingStoreFlags=job_script,job_env
# Memory use is sampled for sacct (MaxRSS). Nothing enforces --mem: memory is
# no consumable resource (CR_Core) and there are no cgroups, so this cluster
# cannot produce OUT_OF_MEMORY.
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=10
# Also the plain-text job completion log.
JobCompType=jobcomp/filetxt
JobCompLoc=$STATE/jobcomp.log

# Three nodes on this host (Debian's slurmd supports several per host: slurmd -N).
# CPUs and memory are declared, not detected (config_overrides).
NodeName=n[1-2] NodeHostname=localhost NodeAddr=127.0.0.1 Port=[17001-17002] CPUs=16 Sockets=1 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=2000000 Gres=gpu:8 State=UNKNOWN
NodeName=n3 NodeHostname=localhost NodeAddr=127.0.0.1 Port=17003 CPUs=16 Sockets=1 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=2000000 State=UNKNOWN
PartitionName=batch Nodes=n[1-2] Default=YES MaxTime=INFINITE State=UP
PartitionName=interactive Nodes=n[1-2] Default=NO MaxTime=INFINITE State=UP
PartitionName=short Nodes=n[1-2] Default=NO MaxTime=00:30:00 DefaultTime=00:10:00 State=UP
PartitionName=cpu Nodes=n3 Default=NO MaxTime=INFINITE State=UP
EOF

# slurmdbd's own config: it holds no password (MariaDB lets root in through its
# socket), but slurmdbd refuses a config others can read.
dbd_before=$changed
changed=0
write_if_changed "$STATE/slurmdbd.conf" <<EOF
# Generated by tests/slurm/start-cluster.sh; edit the script, not this file.
AuthType=auth/munge
DbdHost=localhost
DbdPort=$DBD_PORT
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=root
StorageLoc=slurm_acct_db
LogFile=$STATE/log/slurmdbd.log
PidFile=$STATE/slurmdbd.pid
DebugLevel=info
EOF
chmod 600 "$STATE/slurmdbd.conf"
dbd_changed=$changed
changed=$dbd_before

write_if_changed "$STATE/gres.conf" <<EOF
# Generated by tests/slurm/start-cluster.sh. Fake GPUs: gres/gpu needs a
# character device per GPU; nothing opens them.
AutoDetect=off
NodeName=n[1-2] Name=gpu File=$FAKEGPU_DIR/nvidia[0-7]
EOF

write_if_changed "$STATE/plugstack.conf" <<EOF
# Generated by tests/slurm/start-cluster.sh.
required $so
EOF

# Clients (sbatch, srun, sinfo, ...) read Debian's default path. gres.conf is
# looked up next to the slurm.conf a program was given, so link it too;
# slurmdbd reads only /etc/slurm/slurmdbd.conf.
mkdir -p /etc/slurm
for f in slurm.conf gres.conf slurmdbd.conf; do
    target="/etc/slurm/$f"
    if [ -L "$target" ] && [ "$(readlink "$target")" = "$STATE/$f" ]; then
        continue
    fi
    if [ -e "$target" ] && [ ! -L "$target" ]; then
        mv -f "$target" "$target.before-sbatchlint"
        log "kept the previous $target as $target.before-sbatchlint"
    fi
    ln -sfn "$STATE/$f" "$target"
done

# ------------------------------------------------------------------- munge --
if [ ! -s /etc/munge/munge.key ]; then
    log "creating /etc/munge/munge.key"
    mkdir -p /etc/munge
    if command -v mungekey >/dev/null 2>&1; then
        mungekey --create --keyfile=/etc/munge/munge.key --force
    else
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
    fi
    chown munge:munge /etc/munge/munge.key /etc/munge
    chmod 400 /etc/munge/munge.key
    chmod 700 /etc/munge
fi

munge_ok() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }
if ! munge_ok; then
    rm -f "$STATE/munged.pid"
    install -d -o munge -g munge -m 755 /run/munge
    install -d -o munge -g munge -m 700 /var/log/munge
    install -d -o munge -g munge -m 711 /var/lib/munge
    log "starting munged"
    runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/munged.pid \
        </dev/null >>"$STATE/log/daemons.out" 2>&1 9>&- \
        || die "munged failed to start (see $STATE/log/daemons.out, /var/log/munge/munged.log)"
    for i in $(seq 1 50); do munge_ok && break; sleep 0.1; done
    munge_ok || die "munged did not come up (see /var/log/munge/munged.log)"
    cp /run/munge/munged.pid "$STATE/munged.pid"
fi

# ----------------------------------------------------------------- MariaDB --
# slurmdbd connects as root through the socket (no password anywhere).
db_ok() { mariadb-admin --socket="$MYSQL_SOCKET" --connect-timeout=2 ping >/dev/null 2>&1; }
if ! db_ok; then
    if [ ! -d /var/lib/mysql/mysql ]; then
        log "creating the MariaDB data directory"
        mariadb-install-db --user=mysql --datadir=/var/lib/mysql --skip-test-db \
            >>"$STATE/log/mariadb.log" 2>&1 || die "mariadb-install-db failed; see $STATE/log/mariadb.log"
    fi
    install -d -o mysql -g mysql -m 755 /run/mysqld
    log "starting mariadbd"
    # Small and without fsync on commit: test data, rebuilt by slurmdbd when lost.
    rm -f "$STATE/mariadbd.pid"
    setsid mariadbd --user=mysql --datadir=/var/lib/mysql --socket="$MYSQL_SOCKET" \
        --pid-file=/run/mysqld/mysqld.pid --skip-networking --skip-log-bin \
        --innodb-buffer-pool-size=64M --innodb-flush-log-at-trx-commit=0 --innodb-lock-wait-timeout=900 \
        </dev/null >>"$STATE/log/mariadb.log" 2>&1 9>&- &
    db_child=$!
    db_deadline=$((SECONDS + TIMEOUT))
    until db_ok; do
        if [ $SECONDS -ge $db_deadline ] || ! kill -0 "$db_child" 2>/dev/null; then
            tail -n 20 "$STATE/log/mariadb.log" >&2 || true
            die "mariadbd is not answering on $MYSQL_SOCKET; log: $STATE/log/mariadb.log"
        fi
        sleep 0.2
    done
    cp /run/mysqld/mysqld.pid "$STATE/mariadbd.pid"
fi

# ---------------------------------------------------------------- slurmdbd --
dbd_pid="$STATE/slurmdbd.pid"
dbd_ok() { sacctmgr -n show cluster format=cluster >/dev/null 2>&1; }
if [ "$dbd_changed" -eq 1 ]; then
    pid_alive "$dbd_pid" slurmdbd && log "slurmdbd.conf changed: restarting slurmdbd"
    stop_pidfile "$dbd_pid" slurmdbd
fi
if ! pid_alive "$dbd_pid" slurmdbd; then
    log "starting slurmdbd"
    slurmdbd </dev/null >>"$STATE/log/daemons.out" 2>&1 9>&- \
        || die "slurmdbd failed to start; see $STATE/log/slurmdbd.log"
fi
# The first start creates the database's tables: allow it some time.
dbd_deadline=$((SECONDS + 2 * TIMEOUT))
until dbd_ok; do
    if [ $SECONDS -ge $dbd_deadline ] || ! pid_alive "$dbd_pid" slurmdbd; then
        tail -n 20 "$STATE/log/slurmdbd.log" >&2 || true
        die "slurmdbd is not answering; log: $STATE/log/slurmdbd.log"
    fi
    sleep 0.5
done

# ------------------------------------------------------------ associations --
# The cluster, its accounts, and root's associations (see the top of this
# file). Only what is missing is added, so a second run changes nothing.
assoc_want="sbatchlint||
sbatchlint|root|
llm_research||
llm_research|root|
other||
teaching||
teaching|root|cpu"
assoc_have() {
    sacctmgr -nP show assoc where cluster=sbatchlint format=account,user,partition 2>/dev/null \
        | grep -v '^root|' | sort
}
if [ "$(assoc_have)" != "$(sort <<<"$assoc_want")" ]; then
    log "adding the cluster, accounts and associations to slurmdbd"
    if [ -z "$(sacctmgr -nP show cluster where cluster=sbatchlint format=cluster 2>/dev/null)" ]; then
        sacctmgr -i add cluster sbatchlint >/dev/null
    fi
    for account in sbatchlint llm_research other teaching; do
        if [ -z "$(sacctmgr -nP show account where name=$account format=account 2>/dev/null)" ]; then
            sacctmgr -i add account "$account" Cluster=sbatchlint Description="sbatchlint tests" Organization=sbatchlint >/dev/null
        fi
    done
    have="$(assoc_have)"
    grep -qx 'sbatchlint|root|' <<<"$have" \
        || sacctmgr -i add user root Cluster=sbatchlint Account=sbatchlint DefaultAccount=sbatchlint >/dev/null
    grep -qx 'llm_research|root|' <<<"$have" \
        || sacctmgr -i add user root Cluster=sbatchlint Account=llm_research >/dev/null
    grep -qx 'teaching|root|cpu' <<<"$have" \
        || sacctmgr -i add user root Cluster=sbatchlint Account=teaching Partition=cpu >/dev/null
    [ "$(assoc_have)" = "$(sort <<<"$assoc_want")" ] \
        || die "the associations are not as expected: $(assoc_have | tr '\n' ' ')"
fi

# ------------------------------------------------------------ slurm daemons --
ctld_pid="$STATE/slurmctld.pid"
if [ "$changed" -eq 1 ]; then
    if pid_alive "$ctld_pid" slurmctld || pid_alive "$STATE/slurmd-n1.pid" slurmd \
        || pid_alive "$STATE/slurmd-n2.pid" slurmd; then
        log "config changed: restarting the Slurm daemons"
    fi
    for n in "${NODES[@]}"; do stop_pidfile "$STATE/slurmd-$n.pid" slurmd; done
    stop_pidfile "$ctld_pid" slurmctld
fi

if ! pid_alive "$ctld_pid" slurmctld; then
    log "starting slurmctld"
    slurmctld -f "$STATE/slurm.conf" </dev/null >>"$STATE/log/daemons.out" 2>&1 9>&- \
        || die "slurmctld failed to start; see $STATE/log/slurmctld.log"
fi
deadline=$((SECONDS + TIMEOUT))
until scontrol ping 2>/dev/null | grep -q 'is UP'; do
    if [ $SECONDS -ge $deadline ] || ! pid_alive "$ctld_pid" slurmctld; then
        tail -n 20 "$STATE/log/slurmctld.log" >&2 || true
        die "slurmctld is not answering; log: $STATE/log/slurmctld.log"
    fi
    sleep 0.2
done

for n in "${NODES[@]}"; do
    if ! pid_alive "$STATE/slurmd-$n.pid" slurmd; then
        log "starting slurmd -N $n"
        mkdir -p "$STATE/slurmd-$n" "$STATE/tmp-$n"
        chmod 1777 "$STATE/tmp-$n"
        slurmd -f "$STATE/slurm.conf" -N "$n" </dev/null >>"$STATE/log/daemons.out" 2>&1 9>&- \
            || die "slurmd -N $n failed to start; see $STATE/log/slurmd-$n.log"
    fi
done

# ----------------------------------------------------------- wait for nodes --
# A node counts as up when it answers and is neither down nor drained.
# Jobs of other users may keep it allocated (alloc/mix), which is fine.
declare -A last_resume=()
while :; do
    states="$(sinfo -h -N -o '%N %t' 2>/dev/null | sort -u || true)"
    up=0
    for n in "${NODES[@]}"; do
        st="$(awk -v n="$n" '$1 == n {print $2}' <<<"$states" | head -n1)"
        case "$st" in
            idle|alloc|mix|comp) up=$((up + 1)) ;;
            down*|drain*|drng*|fail*) # e.g. left down by an earlier crash; its daemon is alive
                if [ $((SECONDS - ${last_resume[$n]:--100})) -ge 5 ] && pid_alive "$STATE/slurmd-$n.pid" slurmd; then
                    scontrol update NodeName="$n" State=RESUME >/dev/null 2>&1 || true
                    last_resume[$n]=$SECONDS
                fi ;;
        esac
    done
    [ "$up" -eq "${#NODES[@]}" ] && break
    if [ $SECONDS -ge $deadline ]; then
        {
            echo "node states:"; echo "${states:-<sinfo gave nothing>}"
            for n in "${NODES[@]}"; do
                echo "--- $STATE/log/slurmd-$n.log (tail)"
                tail -n 10 "$STATE/log/slurmd-$n.log" 2>/dev/null || true
            done
        } >&2
        die "nodes ${NODES[*]} not up after ${TIMEOUT}s"
    fi
    sleep 0.25
done

# The plugin must make sbatch accept pyxis options.
if ! out="$(cd "$STATE" && sbatch --test-only --container-image=x --wrap=true 2>&1)"; then
    die "sbatch rejects --container-image: the fake pyxis plugin is not loaded: $out"
fi

log "cluster up: $(sinfo -h -N -o '%N=%t' | sort -u | tr '\n' ' ')"
log "config: $STATE/slurm.conf (linked from $ETC_CONF), logs: $STATE/log/, job completion log: $STATE/jobcomp.log"
log "stop with: $HERE/stop-cluster.sh"
