"""Nothing of a run outlives it: the exit watcher, the orphan sweep and the reaper process.

* `ExitWatcher` follows the engine's event stream for one run (Engine API ``/events``, filtered by
  the run's label): the exit code and the OOM kill of every container as they happen, so that the
  referee knows why a bot ended without inspecting it.
* Every container carries ``take5.owner=host:boot-id:pid:start-time``, naming the referee process
  that started it. `remove_orphans` (called by each new launcher) removes the containers and socket
  folders of referee processes that are gone (a crash, a reboot).
* sweep.py runs `remove_orphans` again every 20 s in each process that plays Docker games, so that
  a process whose reaper died with it (a whole service killed at once) is cleaned up too.
* `start_reaper` starts a small process in its own session that waits for end-of-file on a pipe
  only the referee holds. At a clean close the referee writes "done"; when the referee dies in any
  way (SIGKILL included) the kernel closes the pipe and the reaper removes the run's containers
  and socket folders at once. It imports docker-py only then, so it costs almost nothing meanwhile.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import defaults
from . import containers, sockets
from .limits import LABEL_OWNER, LABEL_RUN

if TYPE_CHECKING:
    import docker

log = logging.getLogger("take5.referee")


# -- owners ----------------------------------------------------------------------------------------


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()[:8]
    except OSError:
        return "-"


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (the state first, the start time
    20th); None when it cannot be read (no such process, or one hidden from this process)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def _start_time(pid: int) -> str:
    """The kernel's start time of a process (clock ticks since boot), "" when it does not exist."""
    fields = _stat(pid)
    return fields[19] if fields else ""


def _threads(pid: int) -> int:
    """Threads of process `pid` still listed (a main thread that ended alone shows as a zombie
    while the others run on)."""
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def _exists(pid: int) -> bool:
    """Whether a process `pid` exists, asked of the kernel rather than of /proc."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's
    return True


def owner_label(pid: int | None = None) -> str:
    """The take5.owner label naming process `pid` (default: this one)."""
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}:{_boot_id()}:{pid}:{_start_time(pid) or '?'}"


def owner_alive(owner: str) -> bool:
    """Whether the referee process named by a take5.owner label may still run (unknown: True)."""
    parts = owner.split(":")
    if len(parts) != 4 or not parts[2].isdigit():
        return True
    host, boot, pid, started = parts
    if host != socket.gethostname():
        return True  # another machine's referee using the same engine: not ours to judge
    if boot != _boot_id():
        return False  # started before this machine's last boot
    fields = _stat(int(pid))
    if fields is None:
        # Gone, or hidden from this process's /proc (another user's process under hidepid= or
        # systemd's ProtectProc=invisible): the kernel tells which; a hidden one cannot be told
        # from a newer process with the same pid, so it counts as alive.
        return _exists(int(pid))
    if fields[0] in ("Z", "X") and _threads(int(pid)) <= 1:
        return False  # it has ended; only its parent has not collected its exit status yet
    return fields[19] == started


# -- orphans ---------------------------------------------------------------------------------------


def remove_orphans(client: docker.DockerClient, *, labels: Sequence[str] = ()) -> int:
    """Remove the containers and socket folders of runs whose referee process is gone; how many
    containers. Only containers with a take5.owner label are judged; with `labels` (``KEY=VALUE``
    filters) only those that also carry these, and only their runs' socket folders."""
    dead: set[str] = set()
    doomed: list[str] = []
    for summary in containers.list_containers(client, labels=[LABEL_OWNER, *labels]):
        found = summary.get("Labels") or {}
        if not owner_alive(found.get(LABEL_OWNER, "")):
            doomed.append(summary["Id"])
            dead.add(found.get(LABEL_RUN, ""))
    removed = sum(1 for cid in doomed if containers.remove(client, cid))
    for run in sorted(dead):
        if run:
            sockets.sweep_socket_root(sockets.SOCKET_BASE / f"t5-{run}")
    if not labels:
        _sweep_dead_roots()
    if removed:
        log.warning(
            "removed %d container(s) left over by earlier referee runs (%s)",
            removed,
            ", ".join(sorted(dead)),
        )
    return removed


def _sweep_dead_roots() -> int:
    """Socket roots (``/tmp/t5-RUN``) whose owner file names a referee process that is gone."""
    swept = 0
    for owner_file in sockets.SOCKET_BASE.glob(f"t5-*/{sockets.OWNER_FILE}"):
        try:
            owner = owner_file.read_text().strip()
        except OSError:
            continue
        if not owner_alive(owner):
            sockets.sweep_socket_root(owner_file.parent)
            swept += 1
    return swept


# -- exits, as they happen -------------------------------------------------------------------------


OOM_GRACE = 2.0
"""Seconds `ExitLog.await_oom` waits for the engine's word that a container killed by SIGKILL
was OOM-killed. The kernel notifies the runtime of an OOM kill and the bot's exit by two separate
paths, so under load Docker can report the ``die`` before the ``oom`` (and Docker 20.10 then never
sets ``State.OOMKilled``), while the container's cgroup, whose ``oom_kill`` count says it for
sure, is already removed when ``die`` comes. Only a SIGKILL exit waits: an OOM kill is one."""

SIGKILL_EXIT = 128 + signal.SIGKILL
"""The exit code the engine reports for a container whose process was killed by SIGKILL."""


class ExitLog:
    """What the engine said of each container's end: its exit code and its OOM kill (fed by
    `record`, one event at a time; `ExitWatcher` feeds it from the engine's stream)."""

    def __init__(self) -> None:
        self.codes: dict[str, int] = {}
        self.oom: set[str] = set()
        self._oom_seen = threading.Condition()

    def record(self, event: dict[str, Any]) -> None:
        """Keep what one event of the stream says: a container's exit code or its OOM kill."""
        cid = event.get("id") or (event.get("Actor") or {}).get("ID", "")
        action = event.get("Action") or event.get("status", "")
        if action == "oom":
            with self._oom_seen:
                self.oom.add(cid)
                self._oom_seen.notify_all()
        elif action == "die":
            code = str(((event.get("Actor") or {}).get("Attributes") or {}).get("exitCode", ""))
            self.codes[cid] = int(code) if code.lstrip("-").isdigit() else -1

    def exit_code(self, container_id: str) -> int | None:
        return self.codes.get(container_id)

    def await_oom(self, container_id: str, code: int | None, probe: Callable[[], bool]) -> bool:
        """Whether the container that ended with `code` was OOM-killed: its ``oom`` event, or
        `probe` (an inspection, the cgroup's count), asked every quarter second. A SIGKILL exit
        waits up to OOM_GRACE for either, since the word can come after the exit; any other exit
        is answered at once."""
        deadline = time.monotonic() + (OOM_GRACE if code == SIGKILL_EXIT else 0.0)
        while True:
            if container_id in self.oom or probe():
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            with self._oom_seen:
                self._oom_seen.wait_for(lambda: container_id in self.oom, min(left, 0.25))


class ExitWatcher(ExitLog):
    """Follows the engine's events for one run: the exit code and OOM kill of each container.

    Uses a connection of its own (a stream holds it for the run's lifetime). If the stream ends
    before `close`, `healthy` turns False and callers fall back to inspecting containers."""

    def __init__(self, run_id: str) -> None:
        # docker-py only once a run starts: the reaper process imports this module too
        from . import engine

        super().__init__()
        self.closing = False
        self.healthy = True
        self._client = engine.connect()
        self._stream = self._client.events(
            since=int(time.time()) - 1,
            decode=True,
            filters={
                "type": "container",
                "label": f"{LABEL_RUN}={run_id}",
                "event": ["die", "oom"],
            },
        )
        self.thread = threading.Thread(target=self._run, name=f"take5-events-{run_id}", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            for event in self._stream:
                self.record(event)
        except Exception:  # noqa: BLE001, S110 - a closed or broken stream ends the same way
            pass
        if not self.closing:
            self.healthy = False
            log.warning("the Docker event stream ended; bot exits are now found by inspection")

    def close(self) -> None:
        self.closing = True
        with contextlib.suppress(Exception):  # closing a broken stream
            self._stream.close()
        self.thread.join(2)
        self._client.close()


# -- the reaper process ----------------------------------------------------------------------------


def start_reaper(run_id: str, socket_root: Path) -> subprocess.Popen[bytes] | None:
    """The reaper of a run (see the module docstring); None, with a warning, if it cannot start."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(defaults.REPO_ROOT), env.get("PYTHONPATH", "")) if p
    )
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "take5_arena.referee.sandbox.reaper", run_id, str(socket_root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # neither a Ctrl-C in the terminal nor a group kill reach it
            env=env,
            cwd=str(defaults.REPO_ROOT),
        )
    except OSError as error:
        log.warning(
            "no reaper for the bot containers (%s): a killed referee leaves them until its next "
            "start",
            error,
        )
        return None


def stop_reaper(reaper: subprocess.Popen[bytes] | None) -> None:
    """Tell the reaper the run ended cleanly, and wait for it."""
    if reaper is None or reaper.stdin is None:
        return
    try:
        reaper.stdin.write(b"done")
        reaper.stdin.close()
    except OSError:
        pass
    try:
        reaper.wait(5)
    except subprocess.TimeoutExpired:
        pass


def reap(run_id: str, socket_root: str) -> int:
    """The reaper's body: wait for the referee to end; if it did not say "done", clean up after
    it."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    data = sys.stdin.buffer.read()
    if data.strip() == b"done":
        return 0
    from . import engine  # docker-py only now that the referee died (the module text says why)

    # The referee died. A create it had in flight may still make a container: look again.
    for pause in (0.0, 1.0, 2.0, 4.0):
        time.sleep(pause)
        with contextlib.suppress(Exception):  # keep trying; nothing to report to
            containers.remove_run(engine.client(), run_id)
    sockets.sweep_socket_root(Path(socket_root))
    return 0


def _main(argv: Sequence[str]) -> int:
    if len(argv) == 2:
        return reap(argv[0], argv[1])
    print("usage: python -m take5_arena.referee.sandbox.reaper RUN_ID SOCKET_ROOT", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))


__all__ = [
    "OOM_GRACE",
    "SIGKILL_EXIT",
    "ExitLog",
    "ExitWatcher",
    "owner_alive",
    "owner_label",
    "reap",
    "remove_orphans",
    "start_reaper",
    "stop_reaper",
]
