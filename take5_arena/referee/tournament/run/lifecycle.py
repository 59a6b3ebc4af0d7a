"""The life of one tournament run, written once for each format of ``referee tournament run``
(round_robin.py, settle.py, swiss.py): the run lock (one referee per tournament), the settings
saved, the run's row in the store from `TournamentRun.begin` to its end, Ctrl-C (or SIGTERM) ending
it as interrupted rather than as an error, and the Docker launchers closed when the run played in
this process. What each format plays between begin and end is its own.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

from ...kinds import RunStatus, SandboxKind
from ...store import Store
from ...store.health import os_fault
from ..errors import TournamentError
from ..plan.settings import TournamentSettings
from .executors import ExecutorInfo
from .launchers import close_launchers


@contextlib.contextmanager
def run_lock(directory: str | os.PathLike[str]) -> Iterator[None]:
    """One referee per tournament: an exclusive lock on DIR/run.lock (released by the kernel when
    the holder dies, SIGKILL included)."""
    path = Path(directory) / "run.lock"
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:  # a read-only or full disk: one line (exit code 4)
        raise os_fault(path, error) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = os.pread(fd, 64, 0).decode(errors="replace").strip()
            raise TournamentError(
                f"another referee is running this tournament (pid {other or '?'})"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)


def run_lock_holder(directory: str | os.PathLike[str]) -> str | None:
    """The pid a running referee wrote in DIR/run.lock ('?' if none) while it holds the lock, or
    None when no referee runs the tournament. Asked with a shared lock taken and dropped at once
    (nothing is created or written): a referee starting in that instant is told another runs."""
    path = Path(directory) / "run.lock"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None  # never run, or not ours to read: nobody holds it that we can tell
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


class TournamentRun:
    """One run of a tournament, as `tournament_run` yields it: `begin` puts it in the store, and
    its `status` (FAILED until the format sets its own) is what the store says at its end."""

    def __init__(self, store: Store, settings: TournamentSettings) -> None:
        self.store = store
        self.settings = settings
        self.id: str | None = None
        """The run's id in the store, once begun."""
        self.status = RunStatus.FAILED
        self.interrupted = False
        """Whether Ctrl-C (or SIGTERM) ended the run."""
        self._done: Callable[[], int] = lambda: 0

    def begin(self, schedule_id: str, games: int, done: Callable[[], int]) -> str:
        """The run begins in the store, for ``games`` games of ``schedule_id``; ``done()`` says
        the games done at its end. Returns the run's id."""
        self.id = f"run-{secrets.token_hex(4)}"
        self.store.runs.begin(
            self.id, schedule_id=schedule_id, settings=self.settings.to_json(), games=games
        )
        self._done = done
        return self.id


@contextlib.contextmanager
def tournament_run(
    directory: str | os.PathLike[str],
    store: Store,
    settings: TournamentSettings,
    info: ExecutorInfo,
) -> Iterator[TournamentRun]:
    """Hold the run lock and save `settings`, then yield the run. Once it has begun, a
    KeyboardInterrupt ends it as interrupted (and is not raised further: the caller reports what
    was played), any other exception as failed; either way the store records its end, and the
    Docker launchers of an in-process run are closed."""
    with run_lock(directory):
        store.settings.set(settings.to_json())
        run = TournamentRun(store, settings)
        try:
            yield run
        except KeyboardInterrupt:
            if run.id is None:
                raise
            run.interrupted = True
            run.status = RunStatus.INTERRUPTED
        finally:
            if run.id is not None:
                store.runs.end(run.id, run.status, run._done())
                if settings.sandbox == SandboxKind.DOCKER and info.in_process:
                    close_launchers()


__all__ = ["TournamentRun", "run_lock", "run_lock_holder", "tournament_run"]
