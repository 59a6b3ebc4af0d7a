"""How a table's bots reach the worker that plays it: each archive once per worker, not per table.

A :class:`~.spec.TableSpec` names its seats' artifacts by digest and says, for each, where a worker
that lacks it gets the archive (:data:`~.archives.ArchiveSource`); it never carries the archive
itself. A worker plays from its cache (``TAKE5_ARTIFACT_CACHE``, take5_arena/referee/artifacts.py)
when the digest is there, and reads the source only when it is not (archives.py, the worker's half;
this module is the referee's).

Why: archives are small for Python bots (kilobytes) but not for every language. A static Go binary
with gRPC is about 10 MB and a Node bot with its ``node_modules`` about 9 MB, so when every table
carried its seats' archives a Go and a Node bot sent 19 MB with every table (58 MB for a 12-game
round robin, and Dask warned of the graph's size), although each worker needs each version once.

The sources, by executor (:func:`shipping_for` picks the :class:`Shipping`):

* threads and processes (``local``, ``process``): :class:`StoredArchive`, the file in the
  tournament's ``artifacts/`` folder on this host, read by the worker when its cache lacks it.
  Nothing is copied per table (a process pool used to receive every archive through its pipe).
* Dask: :class:`ClusterShipping` asks the workers it has not asked yet whether their caches hold
  the digest (an ``is_cached`` check, a few bytes each), and only if one lacks it puts the archive
  into the cluster once (``scatter`` to one worker that lacks it, published as a dataset under a
  name of this referee's): the spec carries that name (:class:`ClusterArchive`), and a worker
  without the digest fetches it from the cluster (worker to worker, not from the referee) when it
  plays. A worker that answered yes is not sent it again. A worker that turns out to lack it after
  all (its cache was pruned, it joined after the question) reports an ``artifact`` infrastructure
  failure: the driver forgets what it said (:meth:`Shipping.forget`) and the retry asks again and
  ships. The datasets are dropped when no waiting table needs them (:meth:`Shipping.retain`) and
  when the executor closes.
* :class:`InlineShipping`: every spec carries its archives' bytes (:class:`InlineArchive`), as every
  table did before; bench/tournament.py's baseline, and a spec that needs nothing from anywhere.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import logging
import secrets
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ...artifacts import ArtifactError, digest_of, is_cached
from .archives import ArchiveSource, ClusterArchive, InlineArchive
from .spec import TableSpec

_log = logging.getLogger(__name__)


def _read_verified(digest: str, source: ArchiveSource) -> bytes | None:
    """The archive of ``digest`` as this referee holds it, or None (missing or corrupt: the table
    then fails on the worker as an ``artifact`` infrastructure failure, said there)."""
    try:
        data = source.read()
    except ArtifactError as error:
        _log.warning("artifact %s: %s", digest, error)
        return None
    if digest_of(data) != digest:
        _log.warning("artifact %s: the referee's copy does not match its digest", digest)
        return None
    return data


class Shipping:
    """How the archives of submitted tables reach the workers: as the specs name them (threads and
    processes read the tournament's files on this host)."""

    scattered_bytes = 0
    """Bytes of archives this referee put into the cluster."""

    def ship(self, spec: TableSpec) -> TableSpec:
        """``spec`` as it is to be submitted (its sources made reachable from the workers)."""
        return spec

    def retain(self, digests: Iterable[str]) -> None:
        """Only ``digests`` are still needed by tables to come: let go of the others."""

    def forget(self, worker: str) -> None:
        """``worker`` lacked an archive it was thought to hold: ask it again next time."""

    def close(self) -> None:
        """Let go of everything put into the cluster."""


class InlineShipping(Shipping):
    """Every spec carries its archives' bytes (the baseline; see the module text)."""

    def ship(self, spec: TableSpec) -> TableSpec:
        sources: dict[str, ArchiveSource] = {}
        for digest, source in spec.sources.items():
            data = _read_verified(digest, source)
            sources[digest] = source if data is None else InlineArchive(data)
        return dataclasses.replace(spec, sources=sources)


def _has_cached(digest: str) -> bool:
    """On a worker: whether its cache holds ``digest`` (the question asked before shipping)."""
    return is_cached(digest)


@dataclass
class _Shipped:
    future: Any
    dataset: str


class ClusterShipping(Shipping):
    """Each archive into a Dask cluster once at most, only if a worker lacks it (module text)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.cached: dict[str, set[str]] = {}
        """digest -> the workers that said their cache holds it"""
        self.shipped: dict[str, _Shipped] = {}
        self.lock = threading.Lock()
        self.token = secrets.token_hex(6)
        """In the names of its datasets: another referee on the same scheduler has its own."""

    def _workers(self) -> set[str]:
        try:  # every worker (scheduler_info() lists only 5 in some releases)
            return set(self.client.nthreads())
        except Exception:  # noqa: BLE001 - the scheduler cannot tell: ask nobody, ship
            return set()

    def _dataset(self, digest: str) -> str:
        return f"take5-archive-{digest.partition(':')[2][:24]}-{self.token}"

    def ship(self, spec: TableSpec) -> TableSpec:
        """Also names this client's lease (lease.py), which the worker holds the table to."""
        sources: dict[str, ArchiveSource] = {}
        with self.lock:
            for digest, source in spec.sources.items():
                sources[digest] = self._ship_one(digest, source)
        return dataclasses.replace(spec, sources=sources, lease=str(self.client.id))

    def _ship_one(self, digest: str, source: ArchiveSource) -> ArchiveSource:
        name = self._dataset(digest)
        shipped = self.shipped.get(digest)
        if shipped is not None and shipped.future.status == "finished":
            return ClusterArchive(shipped.dataset)
        if shipped is not None:  # lost with the worker that held it: put it in again
            self._drop(digest)
        workers = self._workers()
        known = self.cached.setdefault(digest, set())
        known &= workers  # a worker gone is no longer asked about
        unknown = sorted(workers - known)
        lacking: list[str] = []
        if unknown:
            try:
                answers = self.client.run(_has_cached, digest, workers=unknown, on_error="return")
            except Exception:  # noqa: BLE001 - cannot ask: treat them as lacking it
                answers = {}
            for worker in unknown:
                if answers.get(worker) is True:
                    known.add(worker)
                else:
                    lacking.append(worker)
        if workers and not lacking:
            return ClusterArchive(name)  # every worker holds it: nothing to send
        data = _read_verified(digest, source)
        if data is None:
            return ClusterArchive(name)
        try:
            future = self.client.scatter(
                {name: data}, workers=lacking[:1] or None, broadcast=False, hash=False
            )[name]
            self.client.publish_dataset(future, name=name, override=True)
        except Exception as error:  # noqa: BLE001 - the worker fails the table (artifact): retried
            _log.warning("artifact %s: cannot put it into the cluster: %s", digest, error)
            return ClusterArchive(name)
        self.shipped[digest] = _Shipped(future, name)
        self.scattered_bytes += len(data)
        return ClusterArchive(name)

    def _drop(self, digest: str) -> None:
        shipped = self.shipped.pop(digest, None)
        if shipped is None:
            return
        with contextlib.suppress(Exception):  # gone already (the scheduler restarted)
            self.client.unpublish_dataset(shipped.dataset)
        with contextlib.suppress(Exception):  # the client is closing
            shipped.future.release()

    def retain(self, digests: Iterable[str]) -> None:
        keep = set(digests)
        with self.lock:
            for digest in [d for d in self.shipped if d not in keep]:
                self._drop(digest)

    def forget(self, worker: str) -> None:
        with self.lock:
            for known in self.cached.values():
                known.discard(worker)

    def close(self) -> None:
        self.retain(())


_shipping_lock = threading.Lock()
_by_client: dict[str, ClusterShipping] = {}


def _client_of(executor: concurrent.futures.Executor) -> Any:
    return getattr(executor, "_client", None)  # distributed's ClientExecutor


def shipping_for(executor: concurrent.futures.Executor) -> Shipping:
    """The shipping for tables sent to ``executor`` (one per Dask client, shared by its drivers,
    so that what the workers said is remembered for the executor's life; threads and processes
    have no client and read the tournament's files)."""
    client = _client_of(executor)
    if client is None:
        return Shipping()
    with _shipping_lock:
        shipping = _by_client.get(client.id)
        if shipping is None:
            shipping = _by_client[client.id] = ClusterShipping(client)
        return shipping


def close_shipping(client: Any) -> None:
    """Drop what was put into the cluster through ``client`` (open_executor, before it closes)."""
    with _shipping_lock:
        shipping = _by_client.pop(getattr(client, "id", ""), None)
    if shipping is not None:
        shipping.close()


__all__ = [
    "ClusterShipping",
    "InlineShipping",
    "Shipping",
    "close_shipping",
    "shipping_for",
]
