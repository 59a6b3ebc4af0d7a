"""The engine's sweep: every process that plays Docker games cleans its engine every 20 s.

A run's reaper process (reaper.py) removes its containers the moment its referee dies, and each new
launcher removes what dead referees left (`reaper.remove_orphans`). Neither covers a reaper that
died with its referee (a service whose every process was killed at once, a host's namespace torn
down), nor the containers a launcher could not remove because its engine was away: on a Dask
worker these ran on until the next table came to that host. So each process that plays Docker
games (one that opens a `DockerLauncher`, and every Dask worker through the ``take5-sweep`` plugin,
take5_arena/referee/tournament/run/workers.py) runs one daemon thread that calls `sweep` every
`defaults.SWEEP_PERIOD` seconds on its engine (``DOCKER_HOST`` or the local socket). `start` is
idempotent and made once per process (a forked child starts its own), `stop` ends it and waits.

What one sweep removes, judged by the labels every bot container carries (``take5.owner`` names the
process that started it: host, boot, pid, and the pid's start time, so that a reused pid is told
apart; ``take5.run`` its run):

* every container, running or not, whose owner is a process of this host that is gone: ended
  (a zombie too), replaced by another process with the same pid, or from an earlier boot; and the
  socket folders of their runs (`reaper.remove_orphans`);
* the stopped containers (exited, dead, created and never started) of this process's own runs that
  are closed: what `DockerLauncher.close` could not remove while the engine was down or
  restarting (a restart stops every container), once the engine answers again.

What it never touches: containers of a process that is alive, in runs that are open (a live
launcher reads a bot's exit code and output after the container stopped); containers whose owner
is on another host (an engine shared by several hosts is swept by none of them for the others:
the sweep is same-host only); containers without the labels (not the arena's).
"""

from __future__ import annotations

import atexit
import dataclasses
import logging
import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import defaults
from . import containers, engine
from .limits import LABEL_OWNER, LABEL_RUN
from .reaper import owner_label, remove_orphans

if TYPE_CHECKING:
    import docker

log = logging.getLogger("take5.referee")

STOPPED = frozenset({"exited", "dead", "created"})
"""Engine states of a container that runs no process (``State`` in the engine's list)."""


@dataclasses.dataclass(frozen=True)
class Swept:
    """What one sweep removed."""

    dead_owners: int = 0
    """Containers of processes that are gone."""
    closed_runs: int = 0
    """Stopped containers of this process's closed runs."""


_runs: set[str] = set()
_runs_lock = threading.Lock()


def open_run(run_id: str) -> None:
    """Mark a run of this process open: its containers are its launcher's to remove."""
    with _runs_lock:
        _runs.add(run_id)


def close_run(run_id: str) -> None:
    """Mark a run of this process closed: what it left stopped is the sweep's."""
    with _runs_lock:
        _runs.discard(run_id)


def sweep(client: docker.DockerClient, *, labels: Sequence[str] = ()) -> Swept:
    """One sweep of the engine behind `client` (the module docstring says what it removes).

    `labels` (``KEY=VALUE`` filters) narrows it to the containers that carry them all."""
    dead = remove_orphans(client, labels=labels)
    mine = containers.list_containers(client, labels=[f"{LABEL_OWNER}={owner_label()}", *labels])
    # The open runs after the list: a run is opened before its first container is made, so every
    # run of the list that is still open is among them.
    with _runs_lock:
        open_runs = set(_runs)
    leftovers = [
        summary
        for summary in mine
        if str(summary.get("State", "")) in STOPPED
        and (summary.get("Labels") or {}).get(LABEL_RUN, "") not in open_runs
    ]
    closed = sum(1 for summary in leftovers if containers.remove(client, summary["Id"]))
    if closed:
        runs = sorted({(s.get("Labels") or {}).get(LABEL_RUN, "") for s in leftovers})
        log.warning("removed %d stopped container(s) of closed runs (%s)", closed, ", ".join(runs))
    return Swept(dead_owners=dead, closed_runs=closed)


class _Sweeper:
    """The thread behind `start`: a sweep every `period` seconds until stopped."""

    def __init__(self, period: float, delay: float) -> None:
        self.period = period
        self.delay = delay
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="take5-sweep", daemon=True)

    def _run(self) -> None:
        wait = self.delay
        while not self.stopping.wait(wait):
            try:
                sweep(engine.client())
            except Exception as error:  # noqa: BLE001 - no engine now: the next period tries again
                log.debug("sweeping the Docker engine: %s: %s", type(error).__name__, error)
            wait = self.period


_sweeper: _Sweeper | None = None
_sweeper_pid = 0
_lock = threading.Lock()


def start(period: float = defaults.SWEEP_PERIOD, *, delay: float | None = None) -> bool:
    """Start this process's sweeper unless it runs; True when this call started it.

    The first sweep comes `delay` seconds after (default: one period, for a launcher, which has
    just removed the leftovers itself with `reaper.remove_orphans`)."""
    global _sweeper, _sweeper_pid
    with _lock:
        if (
            _sweeper is not None
            and _sweeper_pid == os.getpid()
            and _sweeper.thread.is_alive()
            and not _sweeper.stopping.is_set()
        ):
            return False
        _sweeper = _Sweeper(period, period if delay is None else delay)
        _sweeper_pid = os.getpid()
        _sweeper.thread.start()
    atexit.register(stop)
    return True


def running() -> bool:
    """Whether this process's sweeper runs."""
    with _lock:
        return _sweeper is not None and _sweeper_pid == os.getpid() and _sweeper.thread.is_alive()


def stop(timeout: float = 5.0) -> None:
    """Stop this process's sweeper (a sweep under way ends first, up to `timeout` seconds)."""
    global _sweeper
    with _lock:
        sweeper, _sweeper = (_sweeper, None) if _sweeper_pid == os.getpid() else (None, None)
    atexit.unregister(stop)
    if sweeper is not None:
        sweeper.stopping.set()
        if sweeper.thread is not threading.current_thread():
            sweeper.thread.join(timeout)


__all__ = [
    "STOPPED",
    "Swept",
    "close_run",
    "open_run",
    "running",
    "start",
    "stop",
    "sweep",
]
