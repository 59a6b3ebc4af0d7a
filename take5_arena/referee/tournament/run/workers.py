"""The ``take5-sweep`` Dask worker plugin: every worker process sweeps its own Docker engine.

A process sweeps its engine once it opens a Docker launcher (take5_arena/referee/sandbox/sweep.py),
which a Dask worker does only when its first table comes. A worker that replaced one that was
killed (its nanny or systemd starts it again) therefore left the dead worker's bot containers
running until then. With the plugin each worker sweeps as it joins and then every sweep period
(`defaults.SWEEP_PERIOD`), table or not: what a dead worker left on its engine goes when the
worker that replaces it starts, or at the next sweep of another worker of that host.
Set up, it also adds the worker's own tables, games and engine health to the /metrics page Dask
serves for the worker (worker_metrics.py).

The referee registers it when it opens a Dask executor (executors.open_executor); the scheduler
keeps it and sets it up on every worker that joins later, a restarted one included. It is
idempotent: a second referee on the same scheduler leaves the registered one in place. A scheduler
that was restarted knows no plugin until a referee connects again, so a worker can also load the
sweep itself: ``dask worker --preload take5_arena.referee.tournament.run.workers`` (`dask_setup`;
the shipped unit deploy/take5-dask-worker.service does). Imported only with Dask (the ``dask``
extra).

A worker of an older release (one without this module) must still start: the scheduler hands every
registered plugin to each worker that joins, and a worker that cannot load one, or whose set-up
raises, refuses to start. So the plugin travels by value (cloudpickle; its class is sent, not
named), and its set-up imports the sweep only when it runs, doing nothing where there is none.
"""

from __future__ import annotations

import sys
from typing import Any

import cloudpickle
import distributed

from ...sandbox import sweep
from . import worker_metrics

NAME = "take5-sweep"


class SweepPlugin(distributed.WorkerPlugin):
    """Starts the sweep of this worker process's engine at set-up; stops it at tear-down if this
    plugin started it (a launcher of the same process may have started it first). Its methods use
    no name of this module (they travel by value: the module docstring)."""

    name = "take5-sweep"
    idempotent = True

    def __init__(self) -> None:
        self.started = False

    def setup(self, worker: Any) -> None:
        try:
            from take5_arena.referee.sandbox import sweep as engine_sweep
        except ImportError:  # a worker of a release without the sweep: it plays on, unswept
            return
        # The first sweep at once: a worker that replaces a dead one cleans up after it now.
        self.started = engine_sweep.start(delay=0.0)
        try:
            from take5_arena.referee.tournament.run import worker_metrics
        except ImportError:  # a worker of a release without them: Dask's own figures only
            return
        worker_metrics.install()

    def teardown(self, worker: Any) -> None:
        if self.started:
            from take5_arena.referee.sandbox import sweep as engine_sweep

            engine_sweep.stop()
            self.started = False


cloudpickle.register_pickle_by_value(sys.modules[__name__])


def dask_setup(worker: Any) -> None:
    """The worker's preload hook (``--preload``, the module docstring): the sweep from its start,
    whichever scheduler it joins, and the worker's own tables on its /metrics page."""
    sweep.start(delay=0.0)
    worker_metrics.install()


__all__ = ["NAME", "SweepPlugin", "dask_setup"]
