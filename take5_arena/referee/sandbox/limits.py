"""What a bot container may use, and the security flags every bot container is created with.

Two things live here and nowhere else:

* `SandboxLimits`, the resources of one bot container, whose defaults (memory, CPUs, pids, tmpfs)
  are take5_arena/referee/defaults.py's, the one home of every default. (The time a bot has to
  start is the match's: defaults.START_TIMEOUT.) It is plain data, defined in
  take5_arena/referee/limits.py so that a tournament's plan holds it without importing the
  sandbox; this module re-exports it.
* `container_kwargs`: the keyword arguments for docker-py's ``containers.create`` that lock a bot
  container down. `take5_arena.referee.sandbox.containers.start_container`, the one function through
  which every container of a bot image is created, is its only production caller, and a test
  (tests/test_docker_sandbox.py) fails if any other code creates or runs a container.

What the flags mean, as ``docker run`` would spell them:

    --network none --read-only --user 10001:10001 --cap-drop ALL
    --security-opt no-new-privileges --security-opt seccomp=seccomp.json
    --init --restart no --hostname bot
    --memory M --memory-swap M (no swap) --cpus C --pids-limit P
    --ulimit nofile=N:N --ulimit core=0:0
    --tmpfs /tmp:rw,noexec,nosuid,nodev,size=16m --shm-size 16m
    --log-driver json-file --log-opt max-size=1m --log-opt max-file=1
    --mount type=bind,source=<the bot's socket folder>,target=/run/take5
    --env TAKE5_LISTEN=unix:/run/take5/bot.sock --env HOME=/tmp

and, for each path the image's config declares as a VOLUME, a size-capped ``--tmpfs`` (Docker would
otherwise give every container an anonymous volume on the host's disk, writable without bound).

Two more settings have no ``docker run`` flag; they go into the container's host config:

* the system calls: the project's own seccomp profile (``seccomp.json`` beside this module, see
  `SECCOMP_PROFILE`), an allow list that refuses io_uring, System V IPC, POSIX message queues,
  keyrings, ptrace and other calls on foreign processes, namespaces and mounts (docs/security.md);
* the masked paths (`MASKED_PATHS`: the engine's default ones, the power-capping counters newer
  engines mask too, and the container's cgroup files and POSIX message-queue folder, whose
  counters would outlive a bot process) and the read-only ones (`READONLY_PATHS`).

Networking is disabled as well as set to none (``network_disabled``, the API's ``NetworkDisabled``):
the container still gets a fresh network namespace of its own, holding only a loopback device
that is down, but the engine's network layer never sees it (no sandbox, no endpoint in the "none"
network, no ``libnetwork-setkey`` hook at its start). On Docker 20.10 that layer can deadlock when
one container starts while another's endpoint is removed as it exits (the engine then hangs every
start and every removal until it is killed; moby/moby#46661); a bot container has no part in it.
A bot talks to the referee only through its socket folder, so it loses nothing.

A warm container (take5_arena/referee/sandbox/warm.py) gets the same flags, except that its writable
places are host tmpfs mounts replaced for every game, and the fork server is its init.
"""

from __future__ import annotations

import functools
import json
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..limits import SandboxLimits
from .errors import ContainerStartError

# -- what a bot container sees ---------------------------------------------------------------------

BOT_UID = 10001
BOT_GID = 10001
CONTAINER_SOCKET_DIR = "/run/take5"
SOCKET_NAME = "bot.sock"
LISTEN_ADDRESS = f"unix:{CONTAINER_SOCKET_DIR}/{SOCKET_NAME}"

LABEL_ARENA = "take5.arena"
LABEL_RUN = "take5.run"
LABEL_GAME = "take5.game"
LABEL_OWNER = "take5.owner"
"""``host:boot-id:pid:start-time`` of the referee process that started the container."""
LABEL_SOCKET_DIR = "take5.socket_dir"

SECCOMP_PROFILE = Path(__file__).with_name("seccomp.json")
"""The system calls a bot may make (an allow list; everything else gets EPERM)."""
MASKED_PATHS = (
    # the engine's defaults (an explicit list replaces them, so they are repeated here)
    "/proc/asound",
    "/proc/acpi",
    "/proc/kcore",
    "/proc/keys",
    "/proc/latency_stats",
    "/proc/timer_list",
    "/proc/timer_stats",
    "/proc/sched_debug",
    "/proc/scsi",
    "/sys/firmware",
    # masked by newer engines: power readings, a side channel on what other code computes
    "/sys/devices/virtual/powercap",
    # the container's cgroup: CPU, memory high-water and fault counters that outlive a process
    "/sys/fs/cgroup",
    # the IPC namespace's POSIX message queues (a file system that outlives a process)
    "/dev/mqueue",
)
WARM_MASKED_PATHS = tuple(
    f"/proc/1/{task}{name}"
    for task in ("", "task/1/")
    for name in ("stat", "status", "statm", "schedstat", "sched", "oom_score")
)
"""Also masked in a warm container: the counters of its init, the fork server, which lives
through many games (CPU time, page faults, context switches, memory: a bot could read there what
an earlier game made them)."""
READONLY_PATHS = ("/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger")


@functools.cache
def seccomp_profile(runtime: str | None = None) -> str:
    """The seccomp profile as the engine takes it (the JSON text, compact), for `runtime`.

    For gVisor (``runsc``, which enforces it inside its sandbox with ``--oci-seccomp``) clone3 is
    allowed: its seccomp ignores a rule's own errno, so the ENOSYS that makes the C library fall
    back to clone would be EPERM, and no thread could start; a namespace made there is one of
    gVisor's own kernel, not the host's."""
    profile = json.loads(SECCOMP_PROFILE.read_text())
    if runtime == "runsc":
        for rule in profile["syscalls"]:
            if rule["names"] == ["clone3"]:
                rule.pop("errnoRet")
                rule["action"] = "SCMP_ACT_ALLOW"
                rule["comment"] = "gVisor: its own kernel (see limits.seccomp_profile)"
    return json.dumps(profile, separators=(",", ":"))


GVISOR_PIDS = 128
"""Added to the pids limit under gVisor: its sandbox's own threads (the sentry, the gofer, a stub
per bot thread) are counted in the container's cgroup too (a bot serving gRPC there uses 44)."""
MAX_VOLUMES = 8
"""An image declaring more VOLUMEs than this is refused (each becomes a tmpfs)."""
_FORBIDDEN_VOLUME_ROOTS = ("/proc", "/sys", "/dev", CONTAINER_SOCKET_DIR)


def size_bytes(text: str) -> int:
    """Bytes of a Docker size (``256m`` -> 268435456)."""
    m = re.fullmatch(r"(\d+)([bkmg]?)", text.strip().lower())
    if not m:
        raise ValueError(f"not a size: {text!r}")
    return int(m.group(1)) * {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2)]


def volume_tmpfs(volumes: Iterable[str], limits: SandboxLimits) -> dict[str, str]:
    """A size-capped tmpfs for each VOLUME an image declares; refuses paths no tmpfs may cover.

    Raises ContainerStartError for a relative or odd path, one under /proc, /sys, /dev or the socket
    folder, the root itself, or more than MAX_VOLUMES of them."""
    paths = sorted(set(volumes))
    if len(paths) > MAX_VOLUMES:
        raise ContainerStartError(
            f"the image declares {len(paths)} VOLUMEs (at most {MAX_VOLUMES})"
        )
    out: dict[str, str] = {}
    for path in paths:
        norm = posixpath.normpath(path) if path.startswith("/") else ""
        bad = (
            not norm
            or norm == "/"
            or not path.isprintable()
            or "," in path
            or ":" in path
            or any(norm == root or norm.startswith(root + "/") for root in _FORBIDDEN_VOLUME_ROOTS)
        )
        if bad:
            raise ContainerStartError(
                f"the image declares VOLUME {path!r}, which the sandbox refuses"
            )
        if norm in ("/tmp", "/dev/shm"):
            continue  # a tmpfs already
        out[norm] = f"rw,noexec,nosuid,nodev,size={limits.tmpfs}"
    return out


FORKSERVER = Path(__file__).with_name("forkserver.py")
"""The fork server of warm containers: the referee's own file, mounted read-only."""
FORKSERVER_PATH = "/opt/take5/forkserver.py"


def writable_places(volumes: Iterable[str], limits: SandboxLimits) -> dict[str, str]:
    """Every place a bot may write in a warm container, by path in the container: its name (the
    host folder the referee mounts a tmpfs on, see warm.py).

    The socket folder, /tmp, /dev/shm and a folder for each declared VOLUME (`volume_tmpfs`):
    nothing else in a bot container is writable by the bot."""
    places = {CONTAINER_SOCKET_DIR: "run", "/tmp": "tmp", "/dev/shm": "shm"}
    for index, path in enumerate(volume_tmpfs(volumes, limits)):
        places[path] = f"v{index}"
    return places


def container_kwargs(
    *,
    name: str,
    limits: SandboxLimits,
    socket_dir: str | None,
    labels: Mapping[str, str],
    env: Mapping[str, str] | None = None,
    entrypoint: Sequence[str] | None = None,
    command: Sequence[str] | None = None,
    volumes: Iterable[str] = (),
    warm_root: str | None = None,
) -> dict[str, Any]:
    """The keyword arguments of ``containers.create`` for one bot container (pure), plus
    ``masked_paths`` and ``readonly_paths``, which docker-py has no argument for:
    `containers.start_container` puts them into the host config itself.

    `socket_dir`: the host folder mounted at /run/take5 (None: no mount, for a container that only
    runs a command to completion). `entrypoint`/`command` replace the image's own (None: keep them).
    `volumes`: the paths the image declares as VOLUMEs (see `volume_tmpfs`).

    `warm_root`: a warm container (take5_arena/referee/sandbox/warm.py). Each writable place
    (`writable_places`) is then the host folder ``warm_root/NAME`` mounted read-only, with bind
    propagation from the host, so that the fresh tmpfs the referee mounts there for every game
    appears in the container; the fork server (`FORKSERVER`) is mounted read-only and is the
    container's init, in place of the engine's. `socket_dir` is then ignored."""
    # Imported here: the defaults above are read by every command, which need not load docker-py.
    from docker.types import LogConfig, Mount, Ulimit

    tmpfs = {"/tmp": f"rw,noexec,nosuid,nodev,size={limits.tmpfs}", **volume_tmpfs(volumes, limits)}
    mounts = (
        []
        if socket_dir is None
        else [Mount(target=CONTAINER_SOCKET_DIR, source=socket_dir, type="bind", read_only=False)]
    )
    if warm_root is not None:
        tmpfs = {}
        mounts = [
            Mount(
                target=target,
                source=f"{warm_root}/{name}",
                type="bind",
                read_only=True,
                propagation="rslave",
            )
            for target, name in writable_places(volumes, limits).items()
        ]
        mounts.append(
            Mount(target=FORKSERVER_PATH, source=str(FORKSERVER), type="bind", read_only=True)
        )
    environment = {"TAKE5_LISTEN": LISTEN_ADDRESS, "HOME": "/tmp", **(env or {})}
    kwargs: dict[str, Any] = {
        "name": name,
        "detach": True,
        "network_mode": "none",
        "network_disabled": True,
        "read_only": True,
        "user": f"{BOT_UID}:{BOT_GID}",
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges", f"seccomp={seccomp_profile(limits.runtime)}"],
        "masked_paths": list(MASKED_PATHS) + list(WARM_MASKED_PATHS if warm_root else ()),
        "readonly_paths": list(READONLY_PATHS),
        "mem_limit": limits.memory,
        "memswap_limit": limits.memory,
        "nano_cpus": round(limits.cpus * 1e9),
        "pids_limit": limits.pids + (GVISOR_PIDS if limits.runtime == "runsc" else 0),
        "ulimits": [
            Ulimit(name="nofile", soft=limits.nofile, hard=limits.nofile),
            Ulimit(name="core", soft=0, hard=0),
            # Under gVisor the pids cgroup counts its own threads too: the bot's processes and
            # threads are bounded inside its sandbox instead (with runc, RLIMIT_NPROC would count
            # every process of uid 10001 on the host, other bots' included).
            *(
                [Ulimit(name="nproc", soft=limits.pids, hard=limits.pids)]
                if limits.runtime == "runsc"
                else []
            ),
        ],
        "tmpfs": tmpfs,
        "shm_size": limits.tmpfs,
        "restart_policy": {"Name": "no"},
        "init": warm_root is None,
        "hostname": "bot",
        "log_config": LogConfig(
            type="json-file", config={"max-size": limits.log_max_size, "max-file": "1"}
        ),
        "environment": environment,
        "labels": {LABEL_ARENA: "1", **labels},
        "mounts": mounts,
    }
    if limits.runtime is not None:
        kwargs["runtime"] = limits.runtime
    if entrypoint is not None:
        kwargs["entrypoint"] = list(entrypoint)
    if command is not None:
        kwargs["command"] = list(command)
    return kwargs


__all__ = [
    "BOT_GID",
    "BOT_UID",
    "CONTAINER_SOCKET_DIR",
    "FORKSERVER",
    "FORKSERVER_PATH",
    "GVISOR_PIDS",
    "LABEL_ARENA",
    "LABEL_GAME",
    "LABEL_OWNER",
    "LABEL_RUN",
    "LABEL_SOCKET_DIR",
    "LISTEN_ADDRESS",
    "MASKED_PATHS",
    "MAX_VOLUMES",
    "READONLY_PATHS",
    "SECCOMP_PROFILE",
    "SOCKET_NAME",
    "WARM_MASKED_PATHS",
    "SandboxLimits",
    "container_kwargs",
    "seccomp_profile",
    "size_bytes",
    "volume_tmpfs",
    "writable_places",
]
