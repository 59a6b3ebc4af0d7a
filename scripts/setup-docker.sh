#!/usr/bin/env bash
# Set up a local Docker engine and the bot base images for take5 arena, without any registry.
#
#   bash scripts/setup-docker.sh            # install (if missing), start dockerd, build images
#   bash scripts/setup-docker.sh --force    # rebuild every image even if it is up to date
#   bash scripts/setup-docker.sh --engine-only   # only make sure an engine answers
#
# Steps, each skipped when already done (so running it twice is cheap, ~1 s); an image is rebuilt
# when its take5.definition label is not the version of the script's recipe for it (see ensure):
#   1. apt-get install docker.io mmdebstrap        (only if one of them is missing)
#      and runsc (gVisor) when Debian has it        (TAKE5_RUNSC=0: not)
#   1b. the engine's daemon.json registers runsc: {"runtimes": {"runsc": {"path": ...,
#      "runtimeArgs": ["--host-uds=create", "--network=none", "--oci-seccomp"]}}}, merged into
#      what the file holds (host-uds: the referee reaches the bot's socket in its host folder;
#      oci-seccomp: the bot containers' seccomp profile applies inside the sandbox too)
#   2. start `dockerd --iptables=false --bridge=none` in the background when `docker info`
#      does not answer; wait until it does (TAKE5_DOCKERD_TIMEOUT seconds, default 60). An engine
#      that answers but lacks a runtime its daemon.json now registers reloads it (SIGHUP: its
#      containers keep running; runtimes are among the settings dockerd reloads). An engine that
#      answers but starts no container within TAKE5_PROBE_TIMEOUT seconds (default 60; a
#      deadlocked Docker 20.10) is killed, with its containerd, shims and containers, and started
#      again
# TAKE5_DOCKERD_ROOT=DIR: an engine of its own under DIR instead of the machine's (data, exec
# root, pid file, socket DIR/docker.sock and DIR/daemon.json; DOCKER_HOST is set to it), as
# scripts/cluster-local.sh's engines, e.g. to try a change of daemon.json without touching the
# engine others use.
#   3. take5/base:bookworm  = mmdebstrap'ed Debian bookworm with python3.11, `docker import`ed
#   4. take5/python:3.11    = base + the SDK's wheels: grpcio, protobuf, numpy at the versions and
#                             hashes of requirements/bot-python.txt (scripts/lock.sh; pip --target on
#                             the host, for the base's Python version) in /opt/take5/site on PYTHONPATH,
#                             and the SDK's compiled core (sdk/take5/_core.c, built on the host, which
#                             must run the base's Python: the host is the same Debian) in
#                             /opt/take5/site/take5 with TAKE5_CORE=compiled (take5/core.py): the
#                             referee's copy of the SDK lands beside it, and no bot needs a compiler;
#                             user `bot` (uid/gid 10001), workdir /bot
#   5. take5/node:18        = mmdebstrap'ed bookworm (essential) + Debian's nodejs, `docker import`ed
#   6. take5/static:1       = nothing but a static busybox (/bin/sh for the launcher) and the
#                             folders a bot needs: for statically linked binaries (Go, Rust, C)
# Every image carries the facts a bot build needs as labels (take5.python, take5.node, ...): the
# referee reads them and never runs a container to find out.
#
# Runs as root, non-interactive (CI: no stdin). Logs: dockerd -> $TAKE5_DOCKERD_LOG
# (default /var/log/take5-dockerd.log), mmdebstrap -> $TAKE5_SETUP_WORKDIR/mmdebstrap.log on failure.
set -euo pipefail

BASE_IMAGE="${TAKE5_BASE_IMAGE:-take5/base:bookworm}"
PY_IMAGE="${TAKE5_PYTHON_IMAGE:-take5/python:3.11}"
NODE_IMAGE="${TAKE5_NODE_IMAGE:-take5/node:18}"
STATIC_IMAGE="${TAKE5_STATIC_IMAGE:-take5/static:1}"
SUITE="${TAKE5_SUITE:-bookworm}"
DOCKERD_LOG="${TAKE5_DOCKERD_LOG:-/var/log/take5-dockerd.log}"
DOCKERD_TIMEOUT="${TAKE5_DOCKERD_TIMEOUT:-60}"
PYTHON="${PYTHON:-python3}"
RUNSC="${TAKE5_RUNSC:-1}"
DOCKERD_ROOT="${TAKE5_DOCKERD_ROOT:-}"
if [ -n "$DOCKERD_ROOT" ]; then
    DAEMON_JSON="$DOCKERD_ROOT/daemon.json"
    DOCKERD_PIDFILE="$DOCKERD_ROOT/docker.pid"
    DOCKERD_ARGS=(--config-file "$DAEMON_JSON" --data-root "$DOCKERD_ROOT/data"
                  --exec-root "$DOCKERD_ROOT/exec" --pidfile "$DOCKERD_PIDFILE"
                  -H "unix://$DOCKERD_ROOT/docker.sock")
    DOCKERD_LOG="$DOCKERD_ROOT/dockerd.log"
    export DOCKER_HOST="unix://$DOCKERD_ROOT/docker.sock"
else
    DAEMON_JSON=/etc/docker/daemon.json  # dockerd's default configuration file
    DOCKERD_PIDFILE=/var/run/docker.pid
    DOCKERD_ARGS=()
fi
BOT_UID=10001
# The Python image's wheels, pinned with their hashes (scripts/lock.sh writes it).
BOT_LOCK="$(cd "$(dirname "$0")/.." && pwd)/requirements/bot-python.txt"
# The SDK's compiled core, built into the Python image (its source is part of the image's definition).
CORE_SOURCE="$(cd "$(dirname "$0")/.." && pwd)/sdk/take5/_core.c"
SITE=/opt/take5/site

FORCE=0
ENGINE_ONLY=0
for arg in "$@"; do
    case "$arg" in
        --force) FORCE=1 ;;
        --engine-only) ENGINE_ONLY=1 ;;
        -h|--help) sed -n '2,/^set -euo/{/^#/p}' "$0" | cut -c3-; exit 0 ;;
        *) echo "setup-docker: unknown argument: $arg (try --help)" >&2; exit 2 ;;
    esac
done

log() { echo "setup-docker: $*" >&2; }
die() { echo "setup-docker: ERROR: $*" >&2; exit 1; }
now() { date +%s.%N; }
T0=$(now)
elapsed() { awk -v a="$T0" -v b="$(now)" 'BEGIN{printf "%.1fs", b-a}'; }

[ "$(id -u)" = 0 ] || die "must run as root (it installs packages and starts dockerd)"

# --- 1. packages --------------------------------------------------------------------------
# Never `cmd | grep -q` here: grep -q exits at the first match, the command on the left then dies of
# SIGPIPE (141), and under pipefail the whole test reads as false (this is how runsc was never
# installed on a fresh machine). `grep PATTERN >/dev/null` reads everything.
pkg_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep 'install ok installed' >/dev/null; }
missing=()
for p in docker.io mmdebstrap; do pkg_installed "$p" || missing+=("$p"); done
if [ "${#missing[@]}" -gt 0 ]; then
    log "installing ${missing[*]} (apt-get)"
    # Recommends included (as on the project's machines: tini, mount, gpg, fakechroot ...);
    # needrestart, one of them, must only list and never restart anything here.
    export DEBIAN_FRONTEND=noninteractive NEEDRESTART_MODE=l NEEDRESTART_SUSPEND=1
    apt-get update -q </dev/null
    apt-get install -y -q "${missing[@]}" </dev/null
else
    log "docker.io and mmdebstrap already installed"
fi
command -v docker >/dev/null || die "no docker client on PATH after installing docker.io"
command -v dockerd >/dev/null || die "no dockerd on PATH after installing docker.io"
if [ "$RUNSC" = 1 ] && ! pkg_installed runsc; then
    # gVisor (`referee ... --runtime runsc`): optional, from Debian when the release has it.
    if apt-cache policy runsc 2>/dev/null | grep 'Candidate: [0-9]' >/dev/null; then
        log "installing runsc (gVisor, apt-get)"
        export DEBIAN_FRONTEND=noninteractive NEEDRESTART_MODE=l NEEDRESTART_SUSPEND=1
        apt-get install -y -q runsc </dev/null || log "runsc could not be installed: --runtime runsc is not available"
    else
        log "no runsc package in this release: --runtime runsc is not available"
    fi
fi

# --- 1b. the engine's runtimes (daemon settings, not images: no definition label) -----------
# register_runtimes: merge the runsc runtime into daemon.json; prints "changed" if it wrote it.
register_runtimes() {
    local runsc
    runsc=$(command -v runsc || true)
    [ "$RUNSC" = 1 ] && [ -n "$runsc" ] || return 0
    mkdir -p "$(dirname "$DAEMON_JSON")"
    "$PYTHON" - "$DAEMON_JSON" "$runsc" <<'PY'
import json, os, sys
path, runsc = sys.argv[1], sys.argv[2]
try:
    with open(path) as fh:
        config = json.load(fh)
except FileNotFoundError:
    config = {}
want = {"path": runsc, "runtimeArgs": ["--host-uds=create", "--network=none", "--oci-seccomp"]}
if config.get("runtimes", {}).get("runsc") != want:
    config.setdefault("runtimes", {})["runsc"] = want
    with open(path + ".tmp", "w") as fh:
        json.dump(config, fh, indent=2)
        fh.write("\n")
    os.replace(path + ".tmp", path)
    print("changed")
PY
}
runtimes_changed=$(register_runtimes)
[ -z "$runtimes_changed" ] || log "registered runsc (gVisor) in $DAEMON_JSON"

# --- 2. engine ----------------------------------------------------------------------------
engine_answers() { timeout 10 docker info >/dev/null 2>&1; }

# An engine that answers but starts no container is restarted. Docker 20.10's network layer can
# deadlock (moby/moby#46661, fixed after the 20.10.24 Debian ships): every start and removal then
# hangs until dockerd is killed. Bot containers keep out of that layer
# (take5_arena/referee/sandbox/limits.py); image builds and other users' containers do not. The
# probe runs a no-op in the smallest project image there is; a fresh machine has none yet, and its
# engine is new.
EXEC_ROOT="${DOCKERD_ROOT:+$DOCKERD_ROOT/exec}"
EXEC_ROOT="${EXEC_ROOT:-/var/run/docker}"
PROBE_TIMEOUT="${TAKE5_PROBE_TIMEOUT:-60}"
engine_starts_nothing() {
    local image
    for image in "$STATIC_IMAGE" "$BASE_IMAGE"; do
        docker image inspect "$image" >/dev/null 2>&1 || continue
        timeout -k 5 "$PROBE_TIMEOUT" docker run --rm --network none --entrypoint /bin/sh "$image" -c : >/dev/null 2>&1 && return 1
        return 0
    done
    return 1
}
# kill_engine PID: dockerd (SIGTERM, then SIGKILL after 15 s), its containerd, shims, runtimes and
# hooks (they all name the exec root).
kill_engine() {
    if [ -n "$1" ]; then
        kill "$1" 2>/dev/null || true
        for _ in $(seq 1 75); do kill -0 "$1" 2>/dev/null || break; sleep 0.2; done
        kill -9 "$1" 2>/dev/null || true
    fi
    pkill -9 -f -- "$EXEC_ROOT/" 2>/dev/null || true
    pkill -9 -f -- "libnetwork-setkey -exec-root=$EXEC_ROOT " 2>/dev/null || true
}
stop_wedged_engine() {
    local p ids id f
    p=$(cat "$DOCKERD_PIDFILE" 2>/dev/null || true)
    ids=$(timeout 10 docker ps -q --no-trunc 2>/dev/null || true)
    log "WARNING: the engine answers but started no container in ${PROBE_TIMEOUT}s (Docker 20.10's network deadlock?): restarting it; its containers are killed"
    kill_engine "$p"
    # A killed shim leaves its container's processes running: kill them through their cgroups.
    for id in $ids; do
        for f in /sys/fs/cgroup/docker/"$id"/cgroup.procs /sys/fs/cgroup/*/docker/"$id"/cgroup.procs \
                /sys/fs/cgroup/system.slice/docker-"$id".scope/cgroup.procs; do
            [ -r "$f" ] && xargs -r kill -9 <"$f" 2>/dev/null || true
        done
    done
    sleep 1
}
if engine_answers && engine_starts_nothing; then
    stop_wedged_engine
fi

if engine_answers; then
    log "docker engine already answers"
    if command -v runsc >/dev/null && [ "$RUNSC" = 1 ] \
            && ! docker info --format '{{json .Runtimes}}' 2>/dev/null | grep '"runsc"' >/dev/null; then
        # The file registers runsc but the running engine has not read it: reload its settings
        # (SIGHUP; runtimes are reloadable, containers keep running; no restart).
        p=$(cat "$DOCKERD_PIDFILE" 2>/dev/null || true)
        if [ -n "$p" ] && [ "$(cat "/proc/$p/comm" 2>/dev/null)" = dockerd ]; then
            log "reloading dockerd (pid $p) for the runsc runtime (SIGHUP)"
            kill -HUP "$p"
            for _ in $(seq 1 50); do
                docker info --format '{{json .Runtimes}}' 2>/dev/null | grep '"runsc"' >/dev/null && break
                sleep 0.1
            done
        fi
        docker info --format '{{json .Runtimes}}' 2>/dev/null | grep '"runsc"' >/dev/null \
            || log "WARNING: the engine does not know runsc (started with another daemon.json?): restart it to use --runtime runsc"
    fi
else
    # pid_alive PID: a running process, not a zombie (a dockerd killed with -9 can stay a zombie
    # for a while, and dockerd refuses to start while its pid file names an existing /proc entry).
    pid_alive() {
        [ -n "$1" ] && [ -r "/proc/$1/status" ] \
            && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
    }
    start_dockerd() {
        local f p
        for f in "$DOCKERD_PIDFILE" /var/run/docker/containerd/containerd.pid; do
            p=$(cat "$f" 2>/dev/null || true)
            if [ -e "$f" ] && ! pid_alive "$p"; then
                log "removing stale $f (pid ${p:-none} is gone)"
                rm -f "$f"
            fi
        done
        mkdir -p "$(dirname "$DOCKERD_LOG")"
        log "starting dockerd --iptables=false --bridge=none (log: $DOCKERD_LOG)"
        # nohup + no stdin: dockerd outlives this script and its terminal; as an asynchronous
        # command of a non-interactive shell it also ignores the script's Ctrl-C. (No setsid: it
        # may fork, and then $! would not be dockerd.)
        nohup dockerd --iptables=false --bridge=none "${DOCKERD_ARGS[@]}" >>"$DOCKERD_LOG" 2>&1 </dev/null &
        dockerd_pid=$!
        starts=$((starts + 1))
    }
    # The engine DOCKER_HOST names (if any) did not answer: wait for the one started here, not
    # for that one (a stale DOCKER_HOST would make a healthy start look like a 60 s hang).
    [ -n "$DOCKERD_ROOT" ] || export DOCKER_HOST=unix:///var/run/docker.sock
    starts=0
    dockerd_pid=""
    p=$(cat "$DOCKERD_PIDFILE" 2>/dev/null || true)
    if pid_alive "$p" && [ "$(cat "/proc/$p/comm" 2>/dev/null)" = dockerd ]; then
        log "dockerd (pid $p) is running but does not answer yet; waiting for it"
        dockerd_pid=$p
    else
        start_dockerd
    fi
    deadline=$(( $(date +%s) + DOCKERD_TIMEOUT ))
    until engine_answers; do
        if ! pid_alive "$dockerd_pid"; then
            # The dockerd we waited for was stopping, or ours lost a race with a dying one.
            if [ "$starts" -lt 3 ] && [ "$(date +%s)" -lt "$deadline" ]; then
                sleep 1
                start_dockerd
                continue
            fi
            tail -n 30 "$DOCKERD_LOG" >&2 || true
            die "dockerd exited before answering (last lines of $DOCKERD_LOG above)"
        fi
        if [ "$(date +%s)" -ge "$deadline" ]; then
            if [ "$starts" = 0 ]; then
                # A dockerd started before this script that never answers is hung, not starting.
                log "WARNING: dockerd (pid $dockerd_pid) did not answer in ${DOCKERD_TIMEOUT}s: killing it and starting it again"
                kill_engine "$dockerd_pid"
                start_dockerd
                deadline=$(( $(date +%s) + DOCKERD_TIMEOUT ))
                continue
            fi
            tail -n 30 "$DOCKERD_LOG" >&2 || true
            die "dockerd did not answer on ${DOCKER_HOST#unix://} within ${DOCKERD_TIMEOUT}s (see $DOCKERD_LOG)"
        fi
        sleep 0.3
    done
    log "docker engine answers after $(elapsed)"
fi

if [ "$ENGINE_ONLY" = 1 ]; then
    log "done (--engine-only) in $(elapsed)"
    exit 0
fi

image_exists() { docker image inspect "$1" >/dev/null 2>&1; }

WORK=$(mktemp -d "${TAKE5_SETUP_WORKDIR:-/var/tmp}/take5-setup.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# Each image is built by one function below. Its definition version is a hash of that function's
# text and of the settings it reads (for an image built FROM another, of that image's version too),
# kept in the image's take5.definition label. An image whose label is not what this script would
# build now is rebuilt: a machine that kept an image made by an older script cannot go on using it,
# and no test can pass because of what an old engine happens to hold.
definition() {  # definition FUNCTION [EXTRA...]: the version of what FUNCTION builds
    { declare -f "$1"; shift; printf '%s\n' "$SUITE" "$BOT_UID" "$SITE" "$@"; } | sha256sum | cut -c1-16
}
label_of() { docker image inspect -f "{{index .Config.Labels \"$2\"}}" "$1" 2>/dev/null || true; }
# ensure IMAGE FUNCTION VERSION: build IMAGE with FUNCTION unless it exists at that version.
ensure() {
    local image=$1 build=$2 version=$3 have
    have=$(label_of "$image" take5.definition)
    if [ "$FORCE" = 0 ] && [ "$have" = "$version" ]; then
        log "$image is up to date (definition $version; --force rebuilds it)"
        return 0
    fi
    if [ "$FORCE" = 0 ] && image_exists "$image"; then
        log "rebuilding $image: it was built from definition ${have:-(none)}, this script's is $version"
    fi
    "$build" "$image" "$version"
}

# --- 3. base image ------------------------------------------------------------------------
build_base() {  # IMAGE VERSION
    log "building $1 with mmdebstrap ($SUITE, no registry)"
    # Leave out docs, man pages and translations: they only make the image bigger.
    # Downloads from Debian's mirror (15-90 s here, depending on the mirror); one retry.
    local attempt=1 basepy
    until mmdebstrap --variant=apt --include=python3-minimal,libpython3.11-stdlib \
            --dpkgopt='path-exclude=/usr/share/man/*' \
            --dpkgopt='path-exclude=/usr/share/doc/*' \
            --dpkgopt='path-include=/usr/share/doc/*/copyright' \
            --dpkgopt='path-exclude=/usr/share/info/*' \
            --dpkgopt='path-exclude=/usr/share/locale/*' \
            "$SUITE" "$WORK/base.tar" >"$WORK/mmdebstrap.log" 2>&1 </dev/null; do
        tail -n 40 "$WORK/mmdebstrap.log" >&2 || true
        [ "$attempt" -lt 2 ] || die "mmdebstrap failed twice (last lines above)"
        log "mmdebstrap failed (attempt $attempt, last lines above); retrying in 5 s"
        attempt=$((attempt + 1))
        rm -f "$WORK/base.tar"
        sleep 5
    done
    # The Python version, from the file system's dpkg status (no container runs to ask it).
    tar -xOf "$WORK/base.tar" ./var/lib/dpkg/status >"$WORK/base-status" 2>/dev/null || true
    basepy=$(awk '/^Package: python3-minimal$/{p=1} p&&/^Version:/{print $2; exit}' "$WORK/base-status" \
        | sed 's/^[0-9]*://' | cut -d. -f1,2)
    [ -n "$basepy" ] || die "cannot find the python3 version in the $1 file system"
    docker import \
        --change 'CMD ["/bin/bash"]' \
        --change "LABEL take5.image=base take5.suite=$SUITE take5.python=$basepy take5.definition=$2" \
        "$WORK/base.tar" "$1" >/dev/null
    rm -f "$WORK/base.tar"
    log "$1 built ($(elapsed))"
}

# --- 4. python runtime image --------------------------------------------------------------
build_python() {  # IMAGE VERSION
    # The wheels must match the base's Python: its take5.python label.
    local pyver abi
    pyver=$(label_of "$BASE_IMAGE" take5.python)
    [ -n "$pyver" ] || die "$BASE_IMAGE has no take5.python label (rebuild it: --force)"
    abi="cp${pyver/./}"
    [ -r "$BOT_LOCK" ] || die "no $BOT_LOCK (scripts/lock.sh makes it)"
    # The lock is made for one Python (its header says which): another base would need a new lock.
    grep -F "Python $pyver on Linux" "$BOT_LOCK" >/dev/null \
        || die "$BOT_LOCK is locked for another Python than the base's $pyver (see scripts/lock.sh)"
    log "installing the locked grpcio protobuf numpy wheels for Python $pyver on the host (pip --target)"
    rm -rf "$WORK/ctx"
    mkdir -p "$WORK/ctx/site"
    if ! "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-cache-dir \
            --target "$WORK/ctx/site" --only-binary=:all: \
            --python-version "$pyver" --implementation cp --abi "$abi" --abi abi3 --abi none \
            --platform manylinux_2_36_x86_64 --platform manylinux_2_28_x86_64 \
            --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
            --platform any --no-deps --require-hashes -r "$BOT_LOCK" \
            >"$WORK/pip.log" 2>&1 </dev/null; then
        tail -n 40 "$WORK/pip.log" >&2 || true
        die "pip install --target grpcio protobuf numpy failed (last lines above)"
    fi
    # The compiled core: an extension module is built for one Python, so the host's must be the
    # base's (both are Debian's python3 of the same suite); the setuptools build of the SDK itself.
    local hostpy core
    hostpy=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    [ "$hostpy" = "$pyver" ] \
        || die "$PYTHON is Python $hostpy: the compiled core must be built by the base's Python $pyver (PYTHON=python$pyver)"
    log "building the SDK's compiled core for Python $pyver on the host"
    if ! (cd "$(dirname "$CORE_SOURCE")/.." && "$PYTHON" setup.py --quiet build_ext \
            --build-lib "$WORK/core/lib" --build-temp "$WORK/core/tmp") >"$WORK/core.log" 2>&1 </dev/null; then
        tail -n 40 "$WORK/core.log" >&2 || true
        die "building the compiled core failed (last lines above)"
    fi
    core=$(find "$WORK/core/lib/take5" -maxdepth 1 -name '_core.*.so' -print -quit 2>/dev/null || true)
    if [ -z "$core" ]; then
        tail -n 40 "$WORK/core.log" >&2 || true
        die "no compiled core was built (a C compiler and Python $pyver's headers are needed on the host)"
    fi
    mkdir -p "$WORK/ctx/site/take5"
    cp "$core" "$WORK/ctx/site/take5/"
    # OPENBLAS_NUM_THREADS=1: numpy's BLAS would start a thread per host CPU when imported, and a
    # bot's container has a --pids limit (and one CPU).
    cat >"$WORK/ctx/Dockerfile" <<EOF
FROM $BASE_IMAGE
COPY site $SITE
ENV PYTHONPATH=$SITE PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 OPENBLAS_NUM_THREADS=1 TAKE5_CORE=compiled
RUN groupadd -g $BOT_UID bot \\
 && useradd -u $BOT_UID -g $BOT_UID -M -d /bot -s /usr/sbin/nologin bot \\
 && mkdir -p /bot /run/take5 \\
 && python3 -m compileall -q -j0 $SITE /usr/lib/python$pyver >/dev/null \\
 && python3 -c 'import grpc, google.protobuf, numpy; print("grpc", grpc.__version__, "protobuf", google.protobuf.__version__, "numpy", numpy.__version__)' \\
 && python3 -c 'import glob, importlib.util as u; s = u.spec_from_file_location("take5._core", glob.glob("$SITE/take5/_core.*.so")[0]); m = u.module_from_spec(s); s.loader.exec_module(m); print("take5._core", m.VERSION)'
WORKDIR /bot
USER $BOT_UID:$BOT_UID
CMD ["python3", "/bot/bot.py"]
LABEL take5.image=python take5.python=$pyver take5.site=$SITE take5.runtime=grpcio,protobuf,numpy take5.definition=$2
EOF
    log "building $1"
    if ! docker build --network none --rm --force-rm -t "$1" "$WORK/ctx" \
            >"$WORK/build.log" 2>&1 </dev/null; then
        tail -n 40 "$WORK/build.log" >&2 || true
        die "docker build of $1 failed (last lines above)"
    fi
    grep -E '^(grpc|take5._core) ' "$WORK/build.log" | sed 's/^/setup-docker:   /' >&2 || true
    log "$1 built ($(elapsed))"
}

# --- 5. node runtime image ----------------------------------------------------------------
build_node() {  # IMAGE VERSION
    log "building $1 with mmdebstrap ($SUITE + nodejs, no registry)"
    local attempt=1 nodever
    until mmdebstrap --variant=essential --include=nodejs \
            --dpkgopt='path-exclude=/usr/share/man/*' \
            --dpkgopt='path-exclude=/usr/share/doc/*' \
            --dpkgopt='path-include=/usr/share/doc/*/copyright' \
            --dpkgopt='path-exclude=/usr/share/info/*' \
            --dpkgopt='path-exclude=/usr/share/locale/*' \
            --customize-hook='mkdir -p "$1/bot" "$1/run/take5"' \
            "$SUITE" "$WORK/node.tar" >"$WORK/mmdebstrap-node.log" 2>&1 </dev/null; do
        tail -n 40 "$WORK/mmdebstrap-node.log" >&2 || true
        [ "$attempt" -lt 2 ] || die "mmdebstrap (nodejs) failed twice (last lines above)"
        attempt=$((attempt + 1))
        rm -f "$WORK/node.tar"
        sleep 5
    done
    # The node version, from the image's own dpkg status (no container runs to ask it).
    tar -xOf "$WORK/node.tar" ./var/lib/dpkg/status >"$WORK/node-status" 2>/dev/null || true
    nodever=$(awk '/^Package: nodejs$/{p=1} p&&/^Version:/{print $2; exit}' "$WORK/node-status" \
        | sed 's/^[0-9]*://; s/[-~+].*//')
    [ -n "$nodever" ] || die "cannot find the nodejs version in the $1 file system"
    docker import \
        --change 'CMD ["node", "/bot/bot.js"]' \
        --change 'WORKDIR /bot' \
        --change "USER $BOT_UID:$BOT_UID" \
        --change 'ENV HOME=/tmp NODE_ENV=production' \
        --change "LABEL take5.image=node take5.suite=$SUITE take5.node=$nodever take5.shell=/bin/sh take5.definition=$2" \
        "$WORK/node.tar" "$1" >/dev/null
    rm -f "$WORK/node.tar"
    log "$1 built with node $nodever ($(elapsed))"
}

# --- 6. static-binary image ----------------------------------------------------------------
build_static() {  # IMAGE VERSION
    log "building $1 (static busybox from Debian, no registry)"
    rm -rf "$WORK/static" "$WORK/static-deb"
    mkdir -p "$WORK/static-deb" "$WORK/static/bin" "$WORK/static/bot" "$WORK/static/run/take5" \
        "$WORK/static/tmp" "$WORK/static/etc"
    # apt-get download fetches the .deb without installing it on this host.
    (cd "$WORK/static-deb" && apt-get download -q busybox-static >/dev/null 2>&1 </dev/null) \
        || { apt-get update -q </dev/null >/dev/null && (cd "$WORK/static-deb" && apt-get download -q busybox-static </dev/null); } \
        || die "apt-get download busybox-static failed"
    dpkg-deb -x "$WORK"/static-deb/busybox-static_*.deb "$WORK/static-deb/x"
    cp "$WORK/static-deb/x/bin/busybox" "$WORK/static/bin/busybox"
    ln -s busybox "$WORK/static/bin/sh"
    chmod 1777 "$WORK/static/tmp"
    printf 'root:x:0:0:root:/root:/bin/sh\nbot:x:%s:%s:bot:/bot:/bin/sh\n' "$BOT_UID" "$BOT_UID" >"$WORK/static/etc/passwd"
    printf 'root:x:0:\nbot:x:%s:\n' "$BOT_UID" >"$WORK/static/etc/group"
    tar --numeric-owner --owner=0 --group=0 -C "$WORK/static" -cf "$WORK/static.tar" .
    docker import \
        --change 'CMD ["/bot/run"]' \
        --change 'WORKDIR /bot' \
        --change "USER $BOT_UID:$BOT_UID" \
        --change 'ENV HOME=/tmp PATH=/bot:/bin' \
        --change "LABEL take5.image=static take5.shell=/bin/sh take5.definition=$2" \
        "$WORK/static.tar" "$1" >/dev/null
    rm -rf "$WORK/static" "$WORK/static-deb" "$WORK/static.tar"
    log "$1 built ($(elapsed))"
}

base_version=$(definition build_base)
ensure "$BASE_IMAGE" build_base "$base_version"
# The python image is built FROM the base: a new base means a new python image.
ensure "$PY_IMAGE" build_python \
    "$(definition build_python "$BASE_IMAGE" "$base_version" "$(sha256sum <"$BOT_LOCK")" \
        "$(sha256sum <"$CORE_SOURCE")")"
ensure "$NODE_IMAGE" build_node "$(definition build_node)"
ensure "$STATIC_IMAGE" build_static "$(definition build_static)"

log "ready in $(elapsed): $(docker version --format 'engine {{.Server.Version}}' 2>/dev/null || echo engine ?), images $BASE_IMAGE $PY_IMAGE $NODE_IMAGE $STATIC_IMAGE"
