"""Where a worker gets a bot's archive: the sources a :class:`~.spec.TableSpec` names, and the one
function that turns a digest and its source into the folder the worker plays from.

A worker plays from its cache (``TAKE5_ARTIFACT_CACHE``, take5_arena/referee/artifacts.py) when the
digest is there, and reads the source only when it is not (:func:`folder_of`); whatever it reads is
checked against the digest before anything is unpacked. Which source a table names is the referee's
choice, by executor (shipping.py). This module is the worker's half and imports nothing of the
referee's half, so a spec, its sources and the table that reads them form no loop with it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from ...artifacts import ArtifactError, is_cached, materialize

#: seconds a worker waits for an archive from the cluster before the table fails (infrastructure)
FETCH_TIMEOUT = 120.0
_fetched_lock = threading.Lock()
fetched_bytes = 0
"""Bytes of archives this process fetched from the Dask cluster (bench/tournament.py reads a
worker's)."""


@dataclass(frozen=True)
class StoredArchive:
    """The archive is a file on this host (the tournament's ``artifacts/``): threads, processes."""

    path: str

    def read(self) -> bytes:
        try:
            return Path(self.path).read_bytes()
        except OSError as error:
            raise ArtifactError(f"cannot read {self.path}: {error.strerror}") from None


@dataclass(frozen=True)
class InlineArchive:
    """The archive travels in the spec itself."""

    data: bytes = field(repr=False)

    def read(self) -> bytes:
        return self.data


@dataclass(frozen=True)
class ClusterArchive:
    """The archive was put into the Dask cluster once, published under ``dataset``."""

    dataset: str

    def read(self) -> bytes:
        try:
            import distributed

            client = distributed.get_client()
        except (ImportError, ValueError) as error:
            raise ArtifactError(
                f"not in a Dask worker, cannot fetch {self.dataset}: {error}"
            ) from None
        try:
            future = client.get_dataset(self.dataset)
        except KeyError:
            raise ArtifactError(
                "not cached on this worker, and not in the cluster (the referee took this worker "
                "to hold it, or could not send it: see its log); the table is retried"
            ) from None
        try:
            data = future.result(timeout=FETCH_TIMEOUT)
        except Exception as error:  # noqa: BLE001 - lost with a worker, timed out: infrastructure
            raise ArtifactError(
                f"cannot fetch {self.dataset} from the cluster: {type(error).__name__}: {error}"
            ) from None
        if not isinstance(data, bytes):
            raise ArtifactError(f"{self.dataset} in the cluster is not an archive")
        global fetched_bytes
        with _fetched_lock:
            fetched_bytes += len(data)
        return data


ArchiveSource = StoredArchive | InlineArchive | ClusterArchive
"""Where a worker that lacks an artifact gets its archive (see the module text)."""


def folder_of(digest: str, source: ArchiveSource | None) -> Path:
    """The folder this worker plays artifact ``digest`` from: its cache entry if it has one that
    still matches the digest, else unpacked from what ``source`` gives (checked against the
    digest first: materialize). ArtifactError if neither works."""
    if is_cached(digest):
        try:
            return materialize(digest, None)
        except ArtifactError:
            if source is None:
                raise
            # the cached folder did not match (moved aside, warned): unpack it again
    if source is None:
        raise ArtifactError(f"artifact {digest} is not cached here and its table names no source")
    return materialize(digest, source.read())


__all__ = [
    "FETCH_TIMEOUT",
    "ArchiveSource",
    "ClusterArchive",
    "InlineArchive",
    "StoredArchive",
    "fetched_bytes",
    "folder_of",
]
