#!/usr/bin/env bash
# A local Dask cluster of take5 workers, each with its OWN Docker engine, to try scale-out on one
# machine exactly as it runs across hosts (no shared image store, no shared bot folders).
#
#   bash scripts/cluster-local.sh start [--workers N] [--threads T] [--port P] [--root DIR]
#   bash scripts/cluster-local.sh status [--root DIR]
#   bash scripts/cluster-local.sh stop [--root DIR]
#
# start:
#   1. for each worker i (default 2): a dockerd with its own --data-root, --exec-root, pid file and
#      socket ROOT/engine-i/docker.sock (--iptables=false --bridge=none, like scripts/setup-docker.sh);
#      the bot base images are copied into it from this machine's main engine (`docker save | load`:
#      on a real worker host, run scripts/setup-docker.sh there instead);
#   2. a Dask scheduler on 127.0.0.1:P (default 8786);
#   3. for each worker i: `dask worker` (T threads, default 2: tables played at once) with
#      DOCKER_HOST=unix://ROOT/engine-i/docker.sock and its own artifact cache
#      TAKE5_ARTIFACT_CACHE=ROOT/worker-i/artifacts, and --preload of the sweep plugin (the bot
#      containers a dead worker left on its engine are removed as its successor starts, then every
#      20 s). Bots are not copied anywhere beforehand: the referee puts each validated archive into
#      the cluster once when a worker lacks it, and each engine builds a bot's image the first time
#      it needs it.
#   The scheduler and each worker run under a supervisor, as the deploy units run under systemd: one
#   that ends (a Dask worker ends itself when its scheduler is gone for long enough: a scheduler
#   restart, a network cut) is started again 2 s later and rejoins. Their pid files hold the
#   supervisors' pids.
#   start again: restarts whatever is not running (a killed supervisor, a stopped engine).
# Then: referee tournament run --tournament T --executor dask:tcp://127.0.0.1:P
#
# Needs root, scripts/setup-docker.sh run once (docker.io, the base images) and the project installed
# with the docker and dask extras (pip install -e ./sdk -e ".[docker,dask]"). Everything listens on
# loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."

CMD="${1:-}"
[ $# -gt 0 ] && shift
WORKERS=2
THREADS=2
PORT=8786
ROOT="${TAKE5_CLUSTER_ROOT:-/var/tmp/take5-cluster}"
IMAGES="${TAKE5_CLUSTER_IMAGES:-take5/base:bookworm take5/python:3.11 take5/node:18 take5/static:1}"
while [ $# -gt 0 ]; do
    case "$1" in
        --workers) WORKERS="$2"; shift 2 ;;
        --threads) THREADS="$2"; shift 2 ;;
        --port) PORT="$2"; shift 2 ;;
        --root) ROOT="$2"; shift 2 ;;
        -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
        *) echo "cluster-local: unknown argument: $1 (try --help)" >&2; exit 2 ;;
    esac
done

log() { echo "cluster-local: $*" >&2; }
die() { echo "cluster-local: ERROR: $*" >&2; exit 1; }
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
pid_of() { cat "$1" 2>/dev/null || true; }

engine_sock() { echo "$ROOT/engine-$1/docker.sock"; }

# supervise PIDFILE LOG COMMAND...: COMMAND in the background, started again 2 s after it ends, until
# the supervisor (whose pid goes to PIDFILE) gets SIGTERM: it then stops COMMAND and ends.
supervise() {
    local pidfile=$1 logfile=$2; shift 2
    nohup bash -c '
        child=
        trap '"'"'[ -n "$child" ] && kill "$child" 2>/dev/null; wait; exit 0'"'"' TERM
        while :; do
            "$@" &
            child=$!
            code=0
            wait "$child" || code=$?
            echo "cluster-local: $(date -u +%FT%TZ) $1 ended (exit $code): starting it again in 2 s"
            sleep 2 &
            wait $!
        done' supervise "$@" >>"$logfile" 2>&1 </dev/null &
    echo $! >"$pidfile"
}

start_engine() {
    local i=$1 dir="$ROOT/engine-$1"
    mkdir -p "$dir/data" "$dir/exec"
    if alive "$(pid_of "$dir/docker.pid")"; then
        log "engine $i already running"
        return
    fi
    rm -f "$dir/docker.pid" "$dir/docker.sock"
    nohup dockerd --iptables=false --bridge=none --data-root "$dir/data" --exec-root "$dir/exec" \
        --pidfile "$dir/docker.pid" -H "unix://$dir/docker.sock" >>"$dir/dockerd.log" 2>&1 </dev/null &
    local deadline=$(( $(date +%s) + 60 ))
    until DOCKER_HOST="unix://$dir/docker.sock" timeout 10 docker info >/dev/null 2>&1; do
        [ "$(date +%s)" -lt "$deadline" ] || { tail -n 20 "$dir/dockerd.log" >&2; die "engine $i did not answer"; }
        sleep 0.3
    done
    log "engine $i answers on $dir/docker.sock"
}

copy_images() {
    local i=$1 image
    for image in $IMAGES; do
        docker image inspect "$image" >/dev/null 2>&1 || { log "no $image on the main engine: skipped"; continue; }
        if DOCKER_HOST="unix://$(engine_sock "$i")" docker image inspect "$image" >/dev/null 2>&1; then
            continue
        fi
        docker save "$image" | DOCKER_HOST="unix://$(engine_sock "$i")" docker load >/dev/null
        log "engine $i: loaded $image"
    done
}

start() {
    [ "$(id -u)" = 0 ] || die "must run as root (it starts Docker engines)"
    command -v dask >/dev/null || die "no 'dask' command: pip install -e ./sdk -e \".[docker,dask]\""
    timeout 10 docker info >/dev/null 2>&1 || die "the main Docker engine does not answer: run scripts/setup-docker.sh"
    mkdir -p "$ROOT"
    local i
    for i in $(seq 1 "$WORKERS"); do start_engine "$i"; copy_images "$i"; done
    if ! alive "$(pid_of "$ROOT/scheduler.pid")"; then
        supervise "$ROOT/scheduler.pid" "$ROOT/scheduler.log" \
            dask scheduler --host 127.0.0.1 --port "$PORT" --dashboard-address 127.0.0.1:0
    fi
    for i in $(seq 1 "$WORKERS"); do
        local dir="$ROOT/worker-$i"
        mkdir -p "$dir/artifacts"
        alive "$(pid_of "$dir/worker.pid")" && continue
        DOCKER_HOST="unix://$(engine_sock "$i")" TAKE5_ARTIFACT_CACHE="$dir/artifacts" \
            supervise "$dir/worker.pid" "$dir/worker.log" \
            dask worker "tcp://127.0.0.1:$PORT" --host 127.0.0.1 --name "take5-worker-$i" \
            --nworkers 1 --nthreads "$THREADS" --local-directory "$dir" --no-dashboard \
            --preload take5_arena.referee.tournament.run.workers
    done
    timeout 120 python3 -c "import sys; from distributed import Client
c = Client(sys.argv[1], timeout=60); c.wait_for_workers(int(sys.argv[2]), timeout=100); c.close()" \
        "tcp://127.0.0.1:$PORT" "$WORKERS" || die "the workers did not all connect (logs in $ROOT)"
    log "scheduler tcp://127.0.0.1:$PORT, $WORKERS workers connected (logs in $ROOT)"
    echo "tcp://127.0.0.1:$PORT"
}

stop() {
    local f
    for f in "$ROOT"/worker-*/worker.pid "$ROOT/scheduler.pid"; do
        [ -f "$f" ] || continue
        alive "$(pid_of "$f")" && kill "$(pid_of "$f")" 2>/dev/null || true
        rm -f "$f"
    done
    for f in "$ROOT"/engine-*/docker.pid; do
        [ -f "$f" ] || continue
        local pid; pid=$(pid_of "$f")
        if alive "$pid"; then
            # Bounded: an engine that hangs (a deadlocked Docker 20.10 answers no call) must not
            # hang the stop. Its containers are then killed with it, below.
            local dir; dir=$(dirname "$f")
            DOCKER_HOST="unix://$dir/docker.sock" timeout 20 docker ps -aq --filter label=take5.arena=1 \
                | xargs -r env DOCKER_HOST="unix://$dir/docker.sock" timeout 60 docker rm -f >/dev/null 2>&1 || true
            kill "$pid" 2>/dev/null || true
            for _ in $(seq 1 75); do alive "$pid" || break; sleep 0.2; done
            if alive "$pid"; then
                log "engine $dir did not stop in 15 s: killed, with its containerd and shims"
                kill -9 "$pid" 2>/dev/null || true
                pkill -9 -f -- "$dir/exec" 2>/dev/null || true
            fi
        fi
    done
    log "stopped (engine data kept in $ROOT; rm -rf it to start afresh)"
}

status() {
    local f
    for f in "$ROOT"/engine-*/docker.pid "$ROOT/scheduler.pid" "$ROOT"/worker-*/worker.pid; do
        [ -f "$f" ] || continue
        if alive "$(pid_of "$f")"; then echo "running  $f"; else echo "stopped  $f"; fi
    done
}

case "$CMD" in
    start) start ;;
    stop) stop ;;
    status) status ;;
    *) sed -n '2,33p' "$0"; exit 2 ;;
esac
