"""The lease a referee holds on the tables it sent to a Dask cluster.

A table runs on a worker in a thread that Dask cannot stop: when its referee dies (SIGKILL, its
host gone) or loses the cluster, the scheduler forgets the table, but the worker plays it on to its
end, its bot containers with it, for a result nobody will collect; the new referee plays the same
games again meanwhile. So the referee renews a lease on the scheduler (a metadata key named after
its Dask client, a counter it bumps every :data:`~take5_arena.referee.defaults.LEASE_RENEW_SECONDS`)
and every table it sends names that lease; the worker reads it once a second while the table plays,
and when the counter has not moved for :data:`~take5_arena.referee.defaults.LEASE_SECONDS` of the
worker's own clock (no clocks compared across hosts), it stops the table's bots and ends the table
as an ``executor`` failure (nobody's fault, and collected by nobody). A scheduler that cannot be
read counts as a lease not renewed: a referee that lost its scheduler plays the tables it cut off
again when the scheduler answers (executors.py).

Imported only with Dask (the ``dask`` extra).
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from ... import defaults

_log = logging.getLogger(__name__)
KEY = "take5-lease"


class LeaseKeeper:
    """The referee's half: renews the lease of ``client`` in a thread until :meth:`close`."""

    def __init__(self, client: Any, every: float = defaults.LEASE_RENEW_SECONDS) -> None:
        self.client = client
        self.name = str(client.id)
        self.every = every
        self.count = 0
        self._stop = threading.Event()
        self.renew()  # before the first table is sent
        self._thread = threading.Thread(target=self._run, name="take5-lease", daemon=True)
        self._thread.start()

    def renew(self) -> None:
        self.count += 1
        try:
            self.client.set_metadata([KEY, self.name], self.count)
        except Exception as error:  # noqa: BLE001 - a scheduler lost: the tables will lapse
            _log.debug("lease %s not renewed: %s", self.name, error)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.renew()

    def close(self) -> None:
        """Stop renewing (the tables still out lapse); the key is removed if the scheduler
        answers."""
        self._stop.set()
        self._thread.join(10)
        with contextlib.suppress(Exception):
            self.client.set_metadata([KEY, self.name], None)


class LeaseWatch:
    """The worker's half: reads lease ``name`` on this worker's scheduler every ``poll`` seconds
    in a thread; once it lapses, :attr:`lapsed` is set and ``on_lapse`` callbacks run (once)."""

    def __init__(
        self,
        worker: Any,
        name: str,
        *,
        lapse: float = defaults.LEASE_SECONDS,
        poll: float = 1.0,
    ) -> None:
        self.worker = worker
        self.name = name
        self.lapse = lapse
        self.poll = poll
        self.lapsed = threading.Event()
        self._callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._seen: object = None
        self._since = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="take5-lease-watch", daemon=True)
        self._thread.start()

    def _read(self) -> object:
        from distributed.utils import sync

        return sync(
            self.worker.loop,
            self.worker.scheduler.get_metadata,
            keys=[KEY, self.name],
            default=None,
            callback_timeout=max(1.0, self.poll),
        )

    def check(self) -> bool:
        """Read the lease once; whether it has lapsed."""
        try:
            value = self._read()
        except Exception:  # noqa: BLE001 - the scheduler cannot be read: not renewed
            value = None
        now = time.monotonic()
        if value is not None and value != self._seen:
            self._seen, self._since = value, now
        return now - self._since > self.lapse

    def _run(self) -> None:
        while not self._stop.wait(self.poll):
            if self.check():
                self._lapse()
                return

    def _lapse(self) -> None:
        with self._lock:
            self.lapsed.set()
            callbacks, self._callbacks = self._callbacks, []
        _log.warning(
            "the referee's lease %s lapsed (not renewed for %.0f s): stopping its table",
            self.name,
            self.lapse,
        )
        for callback in callbacks:
            try:
                callback()
            except Exception as error:  # noqa: BLE001 - the others still run
                _log.warning("stopping a lapsed table: %s: %s", type(error).__name__, error)

    def on_lapse(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run ``callback`` when the lease lapses (at once if it has); returns its removal."""
        with self._lock:
            if not self.lapsed.is_set():
                self._callbacks.append(callback)

                def remove() -> None:
                    with self._lock, contextlib.suppress(ValueError):
                        self._callbacks.remove(callback)

                return remove
        callback()
        return lambda: None

    def close(self) -> None:
        self._stop.set()


def watch(name: str | None) -> LeaseWatch | None:
    """A :class:`LeaseWatch` of lease ``name`` when this runs in a Dask worker's task, else None."""
    if not name:
        return None
    distributed = sys.modules.get("distributed")
    if distributed is None:
        return None
    try:
        worker = distributed.get_worker()
    except ValueError:  # not inside a worker's task
        return None
    return LeaseWatch(worker, name)


__all__ = ["KEY", "LeaseKeeper", "LeaseWatch", "watch"]
