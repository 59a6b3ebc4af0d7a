"""Warm bot containers: a container started ahead, whose fork server starts its bot in a fork.

A warm container runs the fork server (forkserver.py) as its init, with the SDK, gRPC and protobuf
already imported; when its game comes it forks a bot process that has never seen a game, so the
bot's start costs milliseconds of CPU instead of an interpreter's imports. The launcher starts it
ahead of the game, off the critical path, and removes it after the game: **a container serves one
game** (or, with ``bot_memory="deals"``, one process's deals), so whatever that game left in the
kernel state of the container's namespaces (network counters and tables, IPC, the pid counter,
mounts) goes with them. docs/security.md gives the argument; it does not rest on a list of places
checked.

`WarmContainer.reset` and `WarmContainer.check` are what reusing a container for another game
would take (kill every other process, a fresh tmpfs on every writable place, the pid counter
reset, then a check from the host of a list of known places); they are not part of the launcher
and stay only so that bench/sandbox.py can measure what one container per game costs against
that reuse. The list cannot be shown complete: a UDP ``sendto`` to an address with no route
changes none of its places and one counter of /proc/net/snmp (issue 45).

How the writable places are made: each (`limits.writable_places`: the socket folder, /tmp,
/dev/shm, one per declared VOLUME) is a host folder under the run's socket root, bound read-only
into the container with propagation from the host (the root is a shared mount, see
`sockets.share_root`). The referee mounts a tmpfs on the host folder and the container sees it on
top. The referee reaches the bot's socket and output on the host side, as with a fresh container.

Only for the runc runtime and a referee running as root (it mounts the writable places, reads the
container's cgroup and sets its pid counter, so that every bot process gets the same pids); the
launcher starts the image's own command otherwise (gVisor's sandbox keeps the bot's processes and
files in its own kernel, out of the host's sight).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import queue
import re
import shutil
import socket
import stat
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from . import cgroups, containers, sockets
from .errors import ContainerStartError, SandboxError
from .images import SITE_DIR, WHEELS_DIR
from .limits import (
    BOT_GID,
    BOT_UID,
    FORKSERVER_PATH,
    MASKED_PATHS,
    SOCKET_NAME,
    WARM_MASKED_PATHS,
    SandboxLimits,
    writable_places,
)

if TYPE_CHECKING:
    import docker

log = logging.getLogger("take5.referee")

NS_LAST_PID = 100
"""The pid counter of a warm container before each game: every bot process gets the same pids."""
PYTHON = "/usr/bin/python3"
"""The interpreter of the arena's Python image, which runs the fork server."""
CTL_TIMEOUT = 10.0
"""Seconds the fork server has to answer a request (it answers in milliseconds)."""
BUSY_WAIT = 1.0
"""Seconds a spawn is retried while the fork server still sees the last game's dying processes."""
SYSTEM_RW = ("/proc", "/dev", "/dev/pts", "/etc/hosts", "/etc/hostname", "/etc/resolv.conf")
"""Writable mounts of every container that the bot cannot write to (root-owned, not group- or
world-writable: checked) or that hold nothing that outlives a process (/proc, /dev/pts)."""
_PER_PROCESS = ("/proc", "/dev/pts")
_MASKED = frozenset(MASKED_PATHS) | frozenset(WARM_MASKED_PATHS)
_NET_TABLES = ("tcp", "tcp6", "udp", "udp6", "udplite", "udplite6", "raw", "raw6")


class UncleanError(SandboxError):
    """A warm container could not be proved clean; it is discarded."""


def enabled(limits: SandboxLimits) -> str | None:
    """Why warm containers cannot be used here (None: they can)."""
    if limits.runtime not in (None, "runc"):
        return f"the {limits.runtime} runtime keeps a bot's processes out of the host's sight"
    if os.geteuid() != 0:
        return "the referee is not root (it mounts the writable places and reads /proc)"
    if not sockets.can_mount_tmpfs():
        return "the referee may not mount a tmpfs"
    if shutil.which("nsenter") is None:
        return "no nsenter (util-linux) to set the pid counter"
    return None


@dataclasses.dataclass(frozen=True)
class _Zygote:
    """What the fork server is, once started: every check compares against this."""

    pid: int
    start_time: str
    sched: tuple[str, ...]
    """nice, priority, rt_priority and policy (/proc/PID/stat)."""
    allowed: tuple[str, ...]
    """Cpus_allowed_list and Mems_allowed_list."""
    limits: str
    fds: tuple[tuple[str, str], ...]
    loopback: tuple[str, ...]


def _stat_fields(pid: int) -> list[str]:
    text = Path(f"/proc/{pid}/stat").read_text()
    return ["", "", *text.rsplit(")", 1)[1].split()]  # numbered from 1, as in proc(5)


def _status(pid: int) -> dict[str, str]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        out[key] = value.strip()
    return out


def _fds(pid: int) -> tuple[tuple[str, str], ...]:
    folder = Path(f"/proc/{pid}/fd")
    return tuple(sorted((n.name, os.readlink(n)) for n in folder.iterdir()))


def _loopback(pid: int) -> tuple[str, ...]:
    for line in Path(f"/proc/{pid}/net/dev").read_text().splitlines():
        name, _, counters = line.partition(":")
        if name.strip() == "lo":
            return tuple(counters.split())
    return ()


def _snapshot(pid: int) -> _Zygote:
    fields = _stat_fields(pid)
    status = _status(pid)
    return _Zygote(
        pid=pid,
        start_time=fields[22],
        sched=(fields[18], fields[19], fields[40], fields[41]),
        allowed=(status.get("Cpus_allowed_list", ""), status.get("Mems_allowed_list", "")),
        limits=Path(f"/proc/{pid}/limits").read_text(),
        fds=_fds(pid),
        loopback=_loopback(pid),
    )


def _shared_writable(maps_line: str) -> bool:
    """Whether a line of /proc/PID/maps is a writable shared mapping (``rw-s``)."""
    perms = maps_line.split(maxsplit=2)[1:2]
    return bool(perms) and perms[0][1] == "w" and perms[0][3] == "s"


def _is_null(path: str) -> bool:
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)


def _unescape(field: str) -> str:
    """A path as /proc/PID/mountinfo writes it (octal escapes: space, tab, newline, backslash)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _mounts(pid: int) -> dict[str, tuple[str, str]]:
    """The top mount at each mount point of the process's namespace: (mount options, fs type)."""
    top: dict[str, tuple[str, str]] = {}
    for line in Path(f"/proc/{pid}/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields = left.split()
        top[_unescape(fields[4])] = (fields[5], right.split()[0] if right else "")
    return top


class WarmContainer:
    """One warm container of a bot image; see the module docstring.

    Not thread-safe: the launcher uses each from one thread at a time (`spawn`, `reset`, `close`);
    the exit of the bot process is reported by the fork server and recorded by a reader thread."""

    def __init__(
        self,
        client: docker.DockerClient,
        image: str,
        *,
        limits: SandboxLimits,
        run_id: str,
        root: Path,
        volumes: Sequence[str] = (),
        labels: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        abandon: threading.Event | None = None,
    ) -> None:
        self.client = client
        self.abandon = abandon or threading.Event()
        """Set when nobody waits for this container any more: its start stops waiting then."""
        self.limits = limits
        self.root = root
        self.places = {
            target: root / name for target, name in writable_places(volumes, limits).items()
        }
        self.run_dir = root / "run"
        self.started = time.monotonic()
        self.spawned_at = 0.0
        self.bot_pid: int | None = None
        self.exit_status: int | None = None
        """The bot process's wait status once it ended (os.waitpid's), else None."""
        self._exited = threading.Event()
        self._exits: dict[int, int] = {}
        """Wait statuses the fork server reported since its last ``spawned`` reply, by pid: a bot
        that ends at once (a file that never calls run) is reported before `spawn` knows its pid."""
        self._exits_lock = threading.Lock()
        self._replies: queue.Queue[str] = queue.Queue()
        self._closed = False
        self._oom_base = 0
        root.mkdir(mode=0o755)
        for path in self.places.values():
            path.mkdir(mode=0o755)
        self.container = containers.start_container(
            client,
            image,
            limits=limits,
            run_id=run_id,
            socket_dir=None,
            labels={**(labels or {}), "take5.warm": "1"},
            env=env,
            entrypoint=[PYTHON, "-I", "-S", FORKSERVER_PATH],
            command=["--site", SITE_DIR, "--path", WHEELS_DIR],
            warm_root=str(root),
        )
        try:
            self._mount_all()
            self._ctl = self._connect()
            self._reader = threading.Thread(
                target=self._read, name=f"take5-warm-{self.container.name}", daemon=True
            )
            self._reader.start()
            while not self.abandon.is_set():  # sent at once after the connection: no wall here
                try:
                    self._expect("ready", timeout=0.5)
                    break
                except UncleanError as error:
                    if "did not answer" not in str(error):
                        raise
            else:
                raise ContainerStartError("the fork server's start was abandoned")
            zpid = int(
                (client.api.inspect_container(self.container.id).get("State") or {}).get("Pid") or 0
            )
            paths = cgroups.CgroupPaths.of_process(zpid) if zpid else None
            if paths is None:
                raise ContainerStartError("cannot find the warm container's cgroup")
            self.cgroup = paths
            self.zygote = _snapshot(zpid)
            self._reset_pid_counter()  # the fork server's start used a varying number of pids
        except BaseException:
            self.close()
            raise

    # -- the fork server's connection ----------------------------------------------------------

    def _connect(self) -> socket.socket:
        """The fork server's connection, once it listens (after its imports: seconds on a loaded
        host). No wall clock of its own: the game's start allowance (``--start-timeout``,
        ``--start-wall``) bounds the wait of whoever wants the bot (`DockerBot.ready`), which sets
        `abandon` when it gives up; the container's end ends it too."""
        path = self.run_dir / "ctl.sock"
        while True:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                sock.connect(str(path))
                return sock
            except OSError:
                sock.close()
                st = containers.status(self.client, self.container.id)
                if st is not None and not st.running:
                    tail = containers.logs_tail(self.client, self.container.id, lines=20)
                    raise ContainerStartError(
                        f"the fork server ended (exit code {st.exit_code}): {tail.strip()[-500:]}"
                    ) from None
                if self.abandon.is_set():
                    raise ContainerStartError("the fork server's start was abandoned") from None
                time.sleep(0.01)

    def _read(self) -> None:
        try:
            while True:
                message = self._ctl.recv(4096)
                if not message:
                    break
                text = message.decode(errors="replace")
                if text.startswith("exit "):
                    _, pid, status = text.split()
                    with self._exits_lock:
                        self._exits[int(pid)] = int(status)
                        if int(pid) == self.bot_pid:
                            self.exit_status = int(status)
                            self._exited.set()
                else:
                    if text.startswith("spawned"):  # what was reported before is another bot's
                        with self._exits_lock:
                            self._exits.clear()
                    self._replies.put(text)
        except (OSError, ValueError):
            pass
        self._replies.put("error the fork server's connection ended")
        self._exited.set()

    def _expect(self, word: str, timeout: float = CTL_TIMEOUT) -> str:
        try:
            reply = self._replies.get(timeout=timeout)
        except queue.Empty:
            raise UncleanError(f"the fork server did not answer within {timeout:g} s") from None
        if not reply.startswith(word):
            raise UncleanError(f"the fork server answered {reply[:200]!r}")
        return reply

    def _request(self, command: str, word: str) -> str:
        try:
            self._ctl.send(command.encode())
        except OSError as error:
            raise UncleanError(f"the fork server's connection is gone ({error})") from None
        return self._expect(word)

    # -- games ----------------------------------------------------------------------------------

    @property
    def socket_path(self) -> Path:
        return self.run_dir / SOCKET_NAME

    def spawn(self) -> int:
        """Start a fresh bot process; its pid in the container."""
        self._exited.clear()
        self.exit_status = None
        self._oom_base = cgroups.oom_kills(self.cgroup) or 0
        deadline = time.monotonic() + BUSY_WAIT
        while True:
            self.spawned_at = time.monotonic()
            try:
                pid = int(self._request("spawn", "spawned").split()[1])
                break
            except UncleanError as error:
                # Killed processes leave the cgroup (what `_wait_alone` waits for) a moment before
                # the kernel reaps them, and the fork server sees them in /proc until then.
                if "error busy" not in str(error) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.005)
        with self._exits_lock:
            self.bot_pid = pid
            status = self._exits.get(pid)
            if status is not None:  # it ended before its pid was known here
                self.exit_status = status
                self._exited.set()
        return pid

    @property
    def alive(self) -> bool:
        """Whether the bot process spawned last still runs."""
        return self.bot_pid is not None and not self._exited.is_set()

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of the container for memory since the spawn."""
        return (cgroups.oom_kills(self.cgroup) or 0) > self._oom_base

    def cpu_seconds(self) -> float:
        """CPU seconds of the whole container so far (`cgroups.cpu_seconds`)."""
        return cgroups.cpu_seconds(self.cgroup) or 0.0

    def reset(self) -> None:
        """Make the container as it was before its first game, then check it (`check`): what
        reuse would take, measured by bench/sandbox.py; the launcher never calls it.

        Raises UncleanError with every problem found: the container must then be discarded."""
        self._request("kill", "killed")
        self.bot_pid = None
        self._wait_alone()
        self._mount_all()
        ipc = self._reset_pid_counter()
        problems = self.check(ipc)
        if problems:
            raise UncleanError("; ".join(problems))

    def _wait_alone(self, timeout: float = CTL_TIMEOUT) -> None:
        """Wait until the fork server is the only process in the container's cgroup."""
        deadline = time.monotonic() + timeout
        pause = 0.001
        while cgroups.procs(self.cgroup) != [self.zygote.pid]:
            if time.monotonic() >= deadline:
                raise UncleanError(f"processes still running {timeout:g} s after SIGKILL")
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def _mount_all(self) -> None:
        """A fresh tmpfs on every writable place (the old one, if any, detached first)."""
        for target, path in self.places.items():
            if os.path.ismount(path):
                sockets.detach(path)
            if target == "/run/take5":
                options = (
                    f"size={self.limits.socket_dir_size or '256k'},nr_inodes=64,mode=0700,"
                    f"uid={BOT_UID},gid={BOT_GID}"
                )
            else:
                options = f"size={self.limits.tmpfs},nr_inodes=16384,mode=1777"
            if not sockets.mount_tmpfs(path, options, source="take5-warm"):
                raise UncleanError(f"cannot mount a tmpfs on {path}")

    def _reset_pid_counter(self) -> str:
        """In the container's pid and IPC namespaces, with the host's own programs (its mount
        namespace is never entered): list System V IPC objects, then set the pid counter."""
        script = (
            'for f in shm sem msg; do while read -r line; do echo "$line"; done '
            f"< /proc/sysvipc/$f; done; echo {NS_LAST_PID} > /proc/sys/kernel/ns_last_pid"
        )
        try:
            done = subprocess.run(
                [
                    "nsenter",
                    "--target",
                    str(self.zygote.pid),
                    "--pid",
                    "--ipc",
                    "--",
                    "/bin/sh",
                    "-c",
                    script,
                ],
                capture_output=True,
                text=True,
                timeout=CTL_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise UncleanError(f"resetting the pid counter: {error}") from None
        if done.returncode != 0:
            raise UncleanError(f"resetting the pid counter: {done.stderr.strip()[-300:]}")
        return done.stdout

    def check(self, ipc: str = "") -> list[str]:
        """Every way something of an earlier game could be left, checked from the host; the
        problems found (an empty list: clean). `ipc`: the System V IPC listing of the reset."""
        z = self.zygote
        problems: list[str] = []
        try:
            procs = cgroups.procs(self.cgroup)
            threads = cgroups.procs(self.cgroup, threads=True)
            if procs != [z.pid] or threads != [z.pid]:
                problems.append(f"processes left: {procs} (threads {threads})")
            now = _snapshot(z.pid)
            status = _status(z.pid)
            if now.start_time != z.start_time:
                problems.append("the fork server is not the one that started")
            if status.get("State", "")[:1] not in ("S", "R"):
                problems.append(f"the fork server is {status.get('State')}")
            problems.extend(
                f"the fork server has signals pending ({key})"
                for key in ("SigPnd", "ShdPnd")
                if int(status.get(key, "0"), 16)
            )
            problems.extend(
                f"the fork server's {what} changed"
                for what, before, after in (
                    ("scheduling", z.sched, now.sched),
                    ("CPU or memory affinity", z.allowed, now.allowed),
                    ("resource limits", z.limits, now.limits),
                    ("file descriptors", z.fds, now.fds),
                    ("loopback counters", z.loopback, now.loopback),
                )
                if before != after
            )
            maps = Path(f"/proc/{z.pid}/maps").read_text().splitlines()
            if any(_shared_writable(line) for line in maps):
                problems.append("the fork server has a writable shared mapping")
            problems += self._check_mounts()
            problems += self._check_network(now)
        except (OSError, ValueError, IndexError) as error:
            problems.append(f"cannot read the container's state: {error}")
        if any(line.split()[:1] and line.split()[0].isdigit() for line in ipc.splitlines()):
            problems.append("System V IPC objects exist")
        return problems

    def _check_mounts(self) -> list[str]:
        pid = self.zygote.pid
        problems = []
        mounts = _mounts(pid)
        for point, path in self.places.items():
            try:
                inside = os.stat(f"/proc/{pid}/root{point}")
                outside = os.stat(path)
            except OSError as error:
                problems.append(f"{point}: {error}")
                continue
            if inside.st_dev != outside.st_dev or not os.path.ismount(path):
                problems.append(f"{point} is not the fresh tmpfs")
            elif any(os.scandir(path)):
                problems.append(f"{point} is not empty")
        for point, (options, fstype) in mounts.items():
            if "rw" not in options.split(","):
                continue
            if point in self.places:
                continue
            if point in _MASKED and _is_null(f"/proc/{pid}/root{point}"):
                continue  # a masked file: the null device bound over it
            if point not in SYSTEM_RW:
                problems.append(
                    f"a writable mount the referee does not replace: {point} ({fstype})"
                )
                continue
            if point in _PER_PROCESS:
                continue
            try:
                st = os.stat(f"/proc/{pid}/root{point}", follow_symlinks=False)
            except OSError as error:
                problems.append(f"{point}: {error}")
                continue
            if st.st_uid != 0 or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                problems.append(f"{point} is writable by the bot")
        problems.extend(
            f"{point} is not masked"
            for point in ("/dev/mqueue", "/sys/fs/cgroup")
            if "ro" not in mounts.get(point, ("",))[0].split(",")
        )
        problems.extend(
            f"{point} is not masked"
            for point in WARM_MASKED_PATHS
            if not _is_null(f"/proc/{pid}/root{point}")
        )
        return problems

    def _check_network(self, now: _Zygote) -> list[str]:
        pid = self.zygote.pid
        problems = []
        for table in _NET_TABLES:
            try:
                lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()
            except FileNotFoundError:
                continue
            if len(lines) > 1:
                problems.append(f"sockets left in /proc/net/{table}")
        own = {link[len("socket:[") : -1] for _, link in now.fds if link.startswith("socket:[")}
        for line in Path(f"/proc/{pid}/net/unix").read_text().splitlines()[1:]:
            fields = line.split()
            if len(fields) >= 7 and fields[6] not in own:
                problems.append("unix sockets left")
                break
        return problems

    # -- the end ----------------------------------------------------------------------------------

    def close(self) -> None:
        """Remove the container and unmount its writable places; idempotent."""
        if self._closed:
            return
        self._closed = True
        ctl = getattr(self, "_ctl", None)
        if ctl is not None:
            try:
                ctl.close()
            except OSError:
                pass
        try:
            containers.remove(self.client, self.container.id)
        finally:
            for path in self.places.values():
                sockets.detach(path)
            shutil.rmtree(self.root, ignore_errors=True)


__all__ = [
    "BUSY_WAIT",
    "CTL_TIMEOUT",
    "NS_LAST_PID",
    "PYTHON",
    "SYSTEM_RW",
    "UncleanError",
    "WarmContainer",
    "enabled",
]
