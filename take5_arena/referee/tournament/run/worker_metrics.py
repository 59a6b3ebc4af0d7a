"""A Dask worker's own metrics: its tables, games and Docker engine, on Dask's /metrics page.

`referee serve --metrics` counts what the store records, which is every game wherever it was
played; what it cannot see is which worker is playing, stalled or sitting on a dead engine. Each
Dask worker already serves Prometheus metrics of its own (``http://WORKER:DASHBOARD_PORT/metrics``,
by prometheus_client's default registry: tasks, memory, latency); :func:`install` adds this
process's tables to that page, so a worker is watched where Prometheus already scrapes it, with no
port or server of ours. The figures are those of this process since it started (a restarted worker
starts again from 0, which Prometheus' ``rate`` and ``increase`` take as a counter reset):

=====================================================  ============================================
``take5_worker_tables_total``                          tables run to their end
``take5_worker_tables_in_flight``                      tables being played now
``take5_worker_games_total``                           games that ended with a record
``take5_worker_infra_failures_total{kind}``            games not played, nobody's fault (faults.md)
``take5_worker_engine_up``                             1 if the worker's Docker engine answers now
``take5_worker_container_start_seconds`` (summary)     bot containers' start, creation to socket
=====================================================  ============================================

The referee's ``take5-sweep`` plugin installs it on every worker it reaches, and so does a worker
started with ``--preload take5_arena.referee.tournament.run.workers`` (workers.py).
``take5_worker_engine_up`` asks the engine at each scrape (a new connection, 2 s at most), so it
says what is true when Prometheus looks, not what the last table found.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    Metric,
    SummaryMetricFamily,
)
from prometheus_client.registry import REGISTRY, Collector

from ...sandbox.engine import engine_answers
from .launchers import docker_launchers
from .table import tables_tally

ENGINE_TIMEOUT = 2.0
"""Seconds a scrape waits for the engine before it reports ``take5_worker_engine_up 0``."""

_installed = False
_lock = threading.Lock()


class WorkerCollector(Collector):
    """Reads this process's tally (table.py) and launchers at each scrape."""

    def collect(self) -> Iterator[Metric]:
        tally = tables_tally()
        yield CounterMetricFamily(
            "take5_worker_tables", "Tables this worker ran to their end.", value=tally.tables
        )
        yield GaugeMetricFamily(
            "take5_worker_tables_in_flight",
            "Tables this worker is playing now.",
            value=tally.in_flight,
        )
        yield CounterMetricFamily(
            "take5_worker_games", "Games this worker played to a record.", value=tally.games
        )
        infra = CounterMetricFamily(
            "take5_worker_infra_failures",
            "Games this worker could not play, by kind (nobody's fault).",
            labels=["kind"],
        )
        for kind, count in sorted(tally.infra.items()):
            infra.add_metric([kind], count)
        yield infra
        yield GaugeMetricFamily(
            "take5_worker_engine_up",
            "1 if this worker's Docker engine answers now.",
            value=1.0 if engine_answers(timeout=ENGINE_TIMEOUT) else 0.0,
        )
        starts = [launcher.start_seconds for launcher in docker_launchers()]
        yield SummaryMetricFamily(
            "take5_worker_container_start_seconds",
            "Bot containers this worker started: from creation to the bot's socket.",
            count_value=sum(s.count for s in starts),
            sum_value=sum(s.total for s in starts),
        )


def install() -> bool:
    """Add this process's tables to prometheus_client's default registry (what a Dask worker's
    /metrics serves); True if this call added them, False if they already were."""
    global _installed
    with _lock:
        if _installed:
            return False
        REGISTRY.register(WorkerCollector())
        _installed = True
        return True


__all__ = ["ENGINE_TIMEOUT", "WorkerCollector", "install"]
