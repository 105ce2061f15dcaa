#!/usr/bin/env bash
# Stop what tests/slurm/start-cluster.sh started, by the pid files in its state
# dir: the slurmd daemons, slurmctld, slurmdbd, and munged and mariadbd if (and
# only if) start-cluster.sh started them. Jobs still queued or running are
# cancelled first. Config, logs, the database and the /etc/slurm links stay,
# so the next start is quick.
set -euo pipefail

STATE="${SBATCHLINT_SLURM_STATE:-/run/sbatchlint-slurm}"

log() { printf 'stop-cluster: %s\n' "$*"; }

[ "$(id -u)" -eq 0 ] || { echo "stop-cluster: must run as root" >&2; exit 1; }
[ -d "$STATE" ] || { log "no state dir $STATE: nothing to stop"; exit 0; }

pid_of() {
    local pid st
    [ -s "$1" ] || return 1
    pid="$(tr -dc '0-9' 2>/dev/null <"$1")" || return 1
    [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] || return 1
    # a killed daemon stays a zombie until PID 1 reaps it: that is stopped
    st="$(cat "/proc/$pid/stat" 2>/dev/null)" || return 1
    st="${st##*) }"
    case "${st%% *}" in Z|X|x|"") return 1 ;; esac
    echo "$pid"
}

stop_pidfile() {
    local pid i
    if pid="$(pid_of "$1" "$2")"; then
        log "stopping $3 (pid $pid)"
        kill -TERM "$pid" 2>/dev/null || true
        for i in $(seq 1 50); do
            pid_of "$1" "$2" >/dev/null || break
            sleep 0.2
        done
        if pid_of "$1" "$2" >/dev/null; then
            log "$3 still alive after 10 s: SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    rm -f "$1"
}

# Cancel jobs while slurmctld and slurmd can still clean them up.
if pid_of "$STATE/slurmctld.pid" slurmctld >/dev/null && command -v squeue >/dev/null; then
    jobs="$(squeue -h -o '%i' 2>/dev/null || true)"
    if [ -n "$jobs" ]; then
        log "cancelling jobs: $(echo $jobs)"
        # shellcheck disable=SC2086
        scancel $jobs 2>/dev/null || true
        for i in $(seq 1 40); do
            [ -z "$(squeue -h -o '%i' 2>/dev/null || true)" ] && break
            sleep 0.25
        done
    fi
fi

for n in n1 n2 n3; do
    stop_pidfile "$STATE/slurmd-$n.pid" slurmd "slurmd -N $n"
done
stop_pidfile "$STATE/slurmctld.pid" slurmctld slurmctld
stop_pidfile "$STATE/slurmdbd.pid" slurmdbd slurmdbd
# mariadbd.pid exists in the state dir only when start-cluster.sh started mariadbd.
stop_pidfile "$STATE/mariadbd.pid" mariadbd mariadbd
# munged.pid exists in the state dir only when start-cluster.sh started munged.
stop_pidfile "$STATE/munged.pid" munged munged
log "stopped"
