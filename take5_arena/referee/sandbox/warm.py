"""Warm bot containers: a container started ahead, whose fork server starts its bot in a fork.

A warm container runs the fork server (forkserver.py) as its init, with the SDK, gRPC and protobuf
already imported; when its game comes it forks the bot's process, so the bot's start costs
milliseconds of CPU instead of an interpreter's imports (docs/benchmarks.md measures both). That
speed is all it is for. The launcher starts it ahead of the game, off the critical path, and
removes it after the game: **a container serves one game** (or, with ``bot_memory="deals"``, one
process's deals) and its fork server forks one bot process, so whatever that game left in the
container's namespaces (network counters and tables, IPC, the pid counter, mounts) goes with them.
docs/security.md gives the argument: it rests on that construction, not on checking places.

How the writable places are made: each (`limits.writable_places`: the socket folder, /tmp,
/dev/shm, one per declared VOLUME) is a host folder under the run's socket root, bound read-only
into the container with propagation from the host (the root is a shared mount, see
`sockets.share_root`). The referee mounts a tmpfs on each host folder once the container exists,
and the container sees it on top. The referee reaches the bot's socket and output on the host
side, as with a fresh container.

Only for the runc runtime and a referee running as root (it mounts the writable places, reads
the container's cgroup and sets its pid counter, `NS_LAST_PID`); the launcher starts the image's
own command otherwise (gVisor's sandbox keeps the bot's processes and files in its own kernel, out
of the host's sight).
"""

from __future__ import annotations

import logging
import os
import queue
import shutil
import socket
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
    SOCKET_NAME,
    SandboxLimits,
    writable_places,
)

if TYPE_CHECKING:
    import docker

log = logging.getLogger("take5.referee")

PYTHON = "/usr/bin/python3"
"""The interpreter of the arena's Python image, which runs the fork server."""
NS_LAST_PID = 100
"""The pid counter of a warm container before its bot process is forked: the fork server's own
start uses a number of pids that varies with timing (the threads of its imports), and the bot
would see it in its pid; set, every bot process gets the same pids."""
CTL_TIMEOUT = 10.0
"""Seconds the fork server has to answer a request (it answers in milliseconds)."""


class ForkServerError(SandboxError):
    """A warm container's fork server failed or did not answer: the host's failure, not the bot's
    (its code had not run yet)."""


def enabled(limits: SandboxLimits) -> str | None:
    """Why warm containers cannot be used here (None: they can)."""
    if limits.runtime not in (None, "runc"):
        return f"the {limits.runtime} runtime keeps a bot's processes out of the host's sight"
    if os.geteuid() != 0:
        return "the referee is not root (it mounts the writable places and reads the cgroup)"
    if not sockets.can_mount_tmpfs():
        return "the referee may not mount a tmpfs"
    if shutil.which("nsenter") is None:
        return "no nsenter (util-linux) to set the pid counter"
    return None


class WarmContainer:
    """One warm container of a bot image; see the module docstring.

    Not thread-safe: the launcher uses each from one thread at a time (`spawn`, `close`);
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
        """Wait statuses the fork server reported, by pid: a bot that ends at once (a file that
        never calls run) is reported before `spawn` knows its pid."""
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
                except ForkServerError as error:
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
            self._set_pid_counter(zpid)
        except BaseException:
            self.close()
            raise

    def _mount_all(self) -> None:
        """A fresh tmpfs on every writable place, before the fork server listens on one."""
        for target, path in self.places.items():
            if target == "/run/take5":
                options = (
                    f"size={self.limits.socket_dir_size or '256k'},nr_inodes=64,mode=0700,"
                    f"uid={BOT_UID},gid={BOT_GID}"
                )
            else:
                options = f"size={self.limits.tmpfs},nr_inodes=16384,mode=1777"
            if not sockets.mount_tmpfs(path, options, source="take5-warm"):
                raise ContainerStartError(f"cannot mount a tmpfs on {path}")

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
                    self._replies.put(text)
        except (OSError, ValueError):
            pass
        self._replies.put("error the fork server's connection ended")
        self._exited.set()

    def _expect(self, word: str, timeout: float = CTL_TIMEOUT) -> str:
        try:
            reply = self._replies.get(timeout=timeout)
        except queue.Empty:
            raise ForkServerError(f"the fork server did not answer within {timeout:g} s") from None
        if not reply.startswith(word):
            raise ForkServerError(f"the fork server answered {reply[:200]!r}")
        return reply

    def _request(self, command: str, word: str) -> str:
        try:
            self._ctl.send(command.encode())
        except OSError as error:
            raise ForkServerError(f"the fork server's connection is gone ({error})") from None
        return self._expect(word)

    def _set_pid_counter(self, pid: int) -> None:
        """Set the pid counter of the container's pid namespace (`NS_LAST_PID`), with the host's
        own programs (the container's mount namespace is never entered)."""
        script = f"echo {NS_LAST_PID} > /proc/sys/kernel/ns_last_pid"
        try:
            done = subprocess.run(
                ["nsenter", "--target", str(pid), "--pid", "--", "/bin/sh", "-c", script],
                capture_output=True,
                text=True,
                timeout=CTL_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise ForkServerError(f"setting the pid counter: {error}") from None
        if done.returncode != 0:
            raise ForkServerError(f"setting the pid counter: {done.stderr.strip()[-300:]}")

    # -- games ----------------------------------------------------------------------------------

    @property
    def socket_path(self) -> Path:
        return self.run_dir / SOCKET_NAME

    def spawn(self) -> int:
        """Start the container's bot process (once: the fork server forks one); its pid in the
        container."""
        self._exited.clear()
        self.exit_status = None
        self._oom_base = cgroups.oom_kills(self.cgroup) or 0
        self.spawned_at = time.monotonic()
        pid = int(self._request("spawn", "spawned").split()[1])
        with self._exits_lock:
            self.bot_pid = pid
            status = self._exits.get(pid)
            if status is not None:  # it ended before its pid was known here
                self.exit_status = status
                self._exited.set()
        return pid

    @property
    def alive(self) -> bool:
        """Whether the bot process still runs."""
        return self.bot_pid is not None and not self._exited.is_set()

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of the container for memory since the spawn."""
        return (cgroups.oom_kills(self.cgroup) or 0) > self._oom_base

    def cpu_seconds(self) -> float:
        """CPU seconds of the whole container so far (`cgroups.cpu_seconds`)."""
        return cgroups.cpu_seconds(self.cgroup) or 0.0

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
    "CTL_TIMEOUT",
    "NS_LAST_PID",
    "PYTHON",
    "ForkServerError",
    "WarmContainer",
    "enabled",
]
