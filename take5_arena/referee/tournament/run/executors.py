"""Where tournament games run: any ``concurrent.futures.Executor``.

``--executor`` values (:func:`open_executor`):

``auto`` (default)
    ``local`` threads. (Kept as a name so that a future default can differ per sandbox.)
``local``
    a thread pool in the referee. Each game's bots are separate processes or containers anyway, so
    the referee's threads mostly wait on gRPC calls; threads also let finished games reach the store
    one by one while a table's duplicate set is still playing.
``process``
    a process pool (``ProcessPoolExecutor``), for a referee whose own work becomes the bottleneck.
``dask:tcp://HOST:8786``
    an existing Dask distributed scheduler: ``distributed.Client(address).get_executor()``. A worker
    needs this project installed (with the ``dask`` extra) and, for the docker sandbox, its own
    Docker engine with the base images (scripts/setup-docker.sh). Nothing else is shared: each bot
    archive is put into the cluster once, only if a worker's cache lacks it; a worker unpacks it
    into its cache (``TAKE5_ARTIFACT_CACHE``) and its engine builds each bot's image once
    (artifacts.py, tournament/run/shipping.py). Workers send records back; the store stays with
    the referee. A worker lost with its table (killed, its host gone) is the scheduler's to notice:
    dask runs the table again on another worker, and a game is recorded once whatever happens (the
    store's unique game ids). A table whose referee is gone (killed, or cut off from the cluster)
    stops within seconds: the referee renews a lease the worker checks (lease.py). Each worker
    sweeps its engine (the ``take5-sweep`` plugin, workers.py): a dead worker's bot containers
    go within a sweep period.
``dask:local``
    a ``distributed.LocalCluster`` on this machine, loopback only (tests, trying it out).

Work is submitted as a picklable spec to a top-level function
(``take5_arena.referee.tournament.run.table.run_table``), so the same tournament code runs on every
executor.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import multiprocessing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ....errors import require_extra
from ... import defaults
from ..errors import TournamentError
from .shipping import close_shipping

log = logging.getLogger("take5.referee")


class ExecutorError(TournamentError, ValueError):
    """A bad --executor value (exit 2), or the executor cannot be reached
    (:class:`ExecutorUnreachableError`, exit 4)."""


class ExecutorUnreachableError(ExecutorError):
    """The Dask scheduler does not answer, or was lost and did not come back: the host's failure,
    not the command line's, so exit 4 as for a store or an arena that cannot be reached
    (docs/organisers/command-line.md)."""

    exit_code = 4


@dataclass(frozen=True)
class ExecutorInfo:
    kind: str  # "local", "process", "dask"
    address: str = ""
    in_process: bool = True  # whether submitted functions run in this process (callbacks work)

    def describe(self) -> str:
        return {"local": "local threads", "process": "local processes"}.get(
            self.kind, f"dask {self.address}"
        )


def resolve_auto(spec: str, *, sandbox: str, concurrency: int) -> str:
    """What ``auto`` means for these settings (see the module text)."""
    if (spec or "auto").strip() != "auto":
        return spec
    return "local"


def parse_executor(spec: str) -> ExecutorInfo:
    spec = (spec or "local").strip()
    if spec in ("local", "thread", "threads"):
        return ExecutorInfo("local")
    if spec in ("process", "processes"):
        return ExecutorInfo("process", in_process=False)
    if spec.startswith("dask:"):
        address = spec[len("dask:") :]
        if not address:
            raise ExecutorError(
                "dask: needs a scheduler address (dask:tcp://host:8786) or dask:local"
            )
        return ExecutorInfo("dask", address, in_process=False)
    raise ExecutorError(
        f"unknown executor {spec!r}: use auto, local, process, dask:tcp://HOST:PORT or dask:local"
    )


def avoiding(
    executor: concurrent.futures.Executor, info: ExecutorInfo, avoid: set[str]
) -> dict[str, Any]:
    """Keyword arguments for ``executor.submit`` that steer work away from the workers in ``avoid``
    (Dask worker addresses, e.g. a worker whose Docker engine stopped answering): the others are
    preferred, and used alone if any is left; with none left, or another executor, ``{}``."""
    if info.kind != "dask" or not avoid:
        return {}
    client = getattr(executor, "_client", None)  # distributed's ClientExecutor
    if client is None:
        return {}
    try:
        # nthreads() names every worker; scheduler_info()["workers"] lists only the first few
        # in some distributed releases (its summary for the dashboard).
        healthy = [w for w in client.nthreads() if w not in avoid]
    except Exception:  # noqa: BLE001 - the scheduler cannot tell: no preference
        return {}
    return {"workers": healthy, "allow_other_workers": True} if healthy else {}


def scheduler_state(executor: concurrent.futures.Executor, info: ExecutorInfo) -> str | None:
    """Where a Dask executor's link to its scheduler is: ``running``, ``connecting`` (lost, and
    trying again for up to :data:`defaults.SCHEDULER_GRACE` seconds) or ``closed`` (given up);
    None for the other executors."""
    if info.kind != "dask":
        return None
    client = getattr(executor, "_client", None)  # distributed's ClientExecutor
    status = getattr(client, "status", None)
    return None if status is None else str(status)


def _register_sweep(client: Any) -> None:
    """The ``take5-sweep`` plugin on the cluster's workers (workers.py): each sweeps its
    engine. A cluster that refuses it (workers of an older release) still plays, unswept."""
    from .workers import SweepPlugin

    try:
        client.register_plugin(SweepPlugin())
    except Exception as error:  # noqa: BLE001 - the games do not depend on it
        log.warning(
            "the dask workers will not sweep their engines (%s: %s)", type(error).__name__, error
        )


def local_cluster(workers: int) -> Any:
    """The ``dask:local`` executor's cluster: ``workers`` worker processes of one thread each on
    this machine, loopback only, no dashboard, quiet logs (the benchmarks start theirs with this
    too, so that they measure the cluster a user gets). Needs the ``dask`` extra."""
    require_extra("dask")
    import distributed

    return distributed.LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=40,
    )


@contextlib.contextmanager
def open_executor(
    spec: str | ExecutorInfo, workers: int
) -> Iterator[tuple[concurrent.futures.Executor, ExecutorInfo]]:
    """The executor named by ``spec`` with room for ``workers`` games at once; closed on exit
    (pending work cancelled; a local cluster shut down)."""
    info = spec if isinstance(spec, ExecutorInfo) else parse_executor(spec)
    workers = max(1, workers)
    if info.kind == "local":
        pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="take5-table")
        try:
            yield pool, info
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        return
    if info.kind == "process":
        # spawn, not fork: the referee may hold threads and open connections.
        ppool = concurrent.futures.ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("spawn")
        )
        try:
            yield ppool, info
        finally:
            ppool.shutdown(wait=False, cancel_futures=True)
        return
    require_extra("dask")  # an optional dependency: imported only when asked for
    import distributed

    cluster = None
    try:
        if info.address == "local":
            cluster = local_cluster(workers)
            client = distributed.Client(cluster, set_as_default=False)  # type: ignore[no-untyped-call]
        else:
            client = distributed.Client(info.address, timeout=10, set_as_default=False)  # type: ignore[no-untyped-call]
            # The first connection fails fast (10 s: a wrong address is told at once), but a
            # connection lost later is tried again for the grace period: the client's reconnect
            # loop gives up after its ``timeout``, which has no public setter once connected.
            client._timeout = defaults.SCHEDULER_GRACE
    except (OSError, TimeoutError) as error:
        if cluster is not None:
            cluster.close()
        raise ExecutorUnreachableError(
            f"cannot reach the dask scheduler {info.address}: {error}"
        ) from error
    from .lease import LeaseKeeper

    lease = LeaseKeeper(client)  # its name is the client's id, which ClusterShipping puts in specs
    try:
        _register_sweep(client)
        # Each submission is retried by us (infrastructure failures), never by dask behind our back;
        # pure=False: the same spec submitted again (a retry) must run again.
        yield client.get_executor(pure=False, retries=0), info  # type: ignore[no-untyped-call]
    finally:
        lease.close()
        close_shipping(client)  # the archives this referee put into the cluster
        client.close()  # type: ignore[no-untyped-call]
        if cluster is not None:
            cluster.close()
