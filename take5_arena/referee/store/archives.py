"""The bots' archives, wherever a referee runs: ``store.archives``.

Each version plays from its archive, content-addressed by its SHA-256 (take5_arena/referee/
artifacts.py), which the process that validated it writes to its ``DIR/artifacts/``. On one host
that folder is the whole story. On several hosts (a PostgreSQL store, docs/operators/
several-hosts.md) the archive is also written into the store's database, in the same step, so that
every referee, on any host, gets it from there the first time it needs it: no shared file system,
no copying ``artifacts/`` between hosts.

What is fetched is trusted no more than what travels to a worker: its SHA-256 must be the digest
it is asked by (the version's, which the store recorded when the archive was validated), or it is
refused (:class:`~take5_arena.referee.artifacts.ArtifactError`, which the table's referee reports
as an infrastructure failure: the game is not played, never rated) and not written anywhere. A
local file that no longer matches its digest is fetched again the same way. A digest the store
could not give (no copy, or a changed one) is not asked again at once: the ladder looks for its
tables every second, and each look would read the whole archive out of the database to refuse it
again. It is asked again after REFETCH_FIRST seconds, then twice as long each time it is refused,
up to REFETCH_LONGEST; a good copy (another host shared it, the bot was submitted again) ends
the wait at the next ask after it.

Not the tournament's record: a table outside schema.py (``archive_blobs``, made by the first
process that writes one, like ``live_games``), which backups do not copy as a table (a backup
holds each archive as a file, read through here) and a restore into PostgreSQL fills again
(:meth:`Archives.share`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from pathlib import Path

from ..artifacts import Artifact, ArtifactError, ArtifactStore, digest_of
from .base import Connection, Repository, now

_TABLE = (
    "CREATE TABLE IF NOT EXISTS archive_blobs ("
    " digest TEXT PRIMARY KEY,"
    " data BYTEA NOT NULL,"
    " bytes BIGINT NOT NULL,"
    " stored_at TEXT NOT NULL)"
)


REFETCH_FIRST = 2.0
"""Seconds before a digest the store could not give is asked of it again (then doubling)."""
REFETCH_LONGEST = 300.0
"""The longest wait between two asks of the store for one digest."""


class Archives(Repository):
    """``store.archives``: each archive as a file of this host's ``artifacts/`` and, on a shared
    store, a row of the database (the module text)."""

    def __init__(self, db: Connection, folder: Path) -> None:
        super().__init__(db)
        self.files = ArtifactStore(folder)
        self._refused: dict[str, tuple[float, float, str]] = {}
        """Digest -> (when the store may be asked again, the wait that led there, the refusal)."""
        self._refused_lock = threading.Lock()

    @property
    def shared(self) -> bool:
        """Whether other hosts may play from this store (PostgreSQL): archives are kept in it."""
        return self._dialect.name == "postgresql"

    def put(self, artifact: Artifact) -> Path:
        """Keep a validated archive: its file here, and on a shared store its row (written once:
        the same digest is the same archive). The file's path."""
        path = self.files.put(artifact)
        if self.shared:
            self._store([artifact])
        return path

    def get(self, digest: str) -> Artifact:
        """The archive of ``digest``, checked against it: this host's file, else (a shared store)
        the store's copy, kept here from then on. ArtifactError when neither is there or
        intact."""
        try:
            return self.files.get(digest)
        except ArtifactError as error:
            if not self.shared:
                raise
            local = error
        with self._refused_lock:
            held = self._refused.get(digest)
        if held is not None and time.monotonic() < held[0]:
            raise ArtifactError(held[2])  # asked again too soon: the last refusal (module text)
        try:
            artifact = self._fetched(digest, local)
        except ArtifactError as error:
            wait = REFETCH_FIRST if held is None else min(REFETCH_LONGEST, 2 * held[1])
            with self._refused_lock:
                self._refused[digest] = (time.monotonic() + wait, wait, str(error))
            raise
        with self._refused_lock:
            self._refused.pop(digest, None)
        self.files.path(digest).unlink(missing_ok=True)  # a damaged local copy: replaced
        self.files.put(artifact)
        return artifact

    def _fetched(self, digest: str, local: ArtifactError) -> Artifact:
        """The store's copy of ``digest``, checked; ArtifactError when it has none or it does not
        match."""
        data = self._fetch(digest)
        if data is None:
            raise ArtifactError(f"{local}; the store has no copy of it either") from None
        if digest_of(data) != digest:
            raise ArtifactError(
                f"the store's copy of artifact {digest} does not match its digest: refused "
                "(the archive was changed in the database); submit the bot again"
            )
        return Artifact(digest, data)

    def path(self, digest: str) -> Path:
        """This host's file of ``digest``, intact (fetched from the store first if need be)."""
        self.get(digest)
        return self.files.path(digest)

    def share(self, digests: Iterable[str]) -> int:
        """Those of ``digests`` that this host has (intact) and the shared store lacks, written
        into it (an arena restored into PostgreSQL; one whose archives were validated before
        they were kept in the store); how many. Nothing on a store of one host."""
        if not self.shared:
            return 0
        missing = set(digests) - self._stored()
        found: list[Artifact] = []
        for digest in sorted(missing):
            try:
                found.append(self.files.get(digest))
            except ArtifactError:
                continue  # another host may have it; who plays it fetches it
        if found:
            self._store(found)
        return len(found)

    def _store(self, artifacts: list[Artifact]) -> None:
        with self._transaction() as db:  # the write lock: two processes never make it at once
            db.execute(_TABLE)
            db.executemany(
                "INSERT INTO archive_blobs(digest, data, bytes, stored_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (digest) DO NOTHING",
                [(a.digest, a.data, a.size, now()) for a in artifacts],
            )

    def _exists(self) -> bool:
        return self._db.execute("SELECT to_regclass('archive_blobs')").fetchone()[0] is not None

    def _stored(self) -> set[str]:
        if not self._exists():
            return set()
        return {r[0] for r in self._db.execute("SELECT digest FROM archive_blobs")}

    def _fetch(self, digest: str) -> bytes | None:
        if not self._exists():
            return None
        row = self._db.execute(
            "SELECT data FROM archive_blobs WHERE digest = ?", (digest,)
        ).fetchone()
        return None if row is None else bytes(row[0])


__all__ = ["REFETCH_FIRST", "REFETCH_LONGEST", "Archives"]
