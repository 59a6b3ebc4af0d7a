"""What every part of the store shares: its errors, its clock, and the base of its repositories.

A repository owns some of the store's tables and every statement on them; all of them work on the
one connection :class:`~.store.Store` opened (so a game recorded and its schedule read are one
database, one transaction at a time). The connection stays inside the store package: callers see
repositories (``store.versions``, ``store.results``, ...), never SQL.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone

from ..errors import RefereeError


class StoreError(RefereeError):
    """The store cannot do what was asked (not a tournament directory, a newer schema, ...)."""


class WithheldError(StoreError):
    """A recorded game that is not published yet: its deal has rotations still to play."""


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class Transaction:
    """``with Transaction(db) as db:`` - one atomic write (BEGIN IMMEDIATE ... COMMIT)."""

    def __init__(self, db: sqlite3.Connection):
        self._db = db

    def __enter__(self) -> sqlite3.Connection:
        self._db.execute("BEGIN IMMEDIATE")
        return self._db

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object
    ) -> None:
        if exc_type is None:
            self._db.execute("COMMIT")
        elif self._db.in_transaction:  # SQLite rolls back by itself after some errors (full)
            self._db.execute("ROLLBACK")


def meta(db: sqlite3.Connection, key: str) -> str | None:
    """One value of the ``meta`` table (schema version, settings, notes, current schedule)."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else row[0]  # as stored (TEXT, by set_meta)


def set_meta(db: sqlite3.Connection, key: str, value: str) -> None:
    db.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


class Repository:
    """The tables of one concern over the store's connection (which only the store closes)."""

    def __init__(self, db: sqlite3.Connection):
        self._db = db

    def _transaction(self) -> Transaction:
        return Transaction(self._db)


__all__ = [
    "Repository",
    "StoreError",
    "Transaction",
    "WithheldError",
    "meta",
    "now",
    "set_meta",
]
