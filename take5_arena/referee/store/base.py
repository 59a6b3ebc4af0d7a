"""What every part of the store shares: its errors, its clock, and the base of its repositories.

A repository owns some of the store's tables and every statement on them; all of them work on the
one connection :class:`~.store.Store` opened (so a game recorded and its schedule read are one
database, one transaction at a time). The connection stays inside the store package: callers see
repositories (``store.versions``, ``store.results``, ...), never SQL.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Protocol

from ..errors import RefereeError


class StoreError(RefereeError):
    """The store cannot do what was asked (not a tournament directory, a newer schema, ...)."""


class WithheldError(StoreError):
    """A recorded game that is not published yet: its deal has rotations still to play."""


@dataclass(frozen=True)
class Dialect:
    """What the store's two databases say differently and a statement cannot hide (the rest is one
    text for both: portable SQL, and SQLite's JSON functions defined on PostgreSQL, postgres.py)."""

    name: str
    last_result_seq: str
    """The last ``results.seq`` handed out, with none deleted since (None: never one)."""
    claim: str | None = None
    """Claim a table for this connection's referee: true when no other holds it (None: one
    referee per store, the directory's run lock, and every claim is granted)."""
    release: str | None = None
    """Give a claimed table back."""


SQLITE = Dialect("sqlite", "SELECT seq FROM sqlite_sequence WHERE name = 'results'")
#: A claim is a session-level advisory lock on the table's key (its first game's id, hashed): the
#: server lets one session hold it, a try never waits (SKIP LOCKED's semantics, held across
#: transactions), and it ends with the session: a referee killed, or cut off from the server once
#: its keepalives fail, gives its tables back without anyone's help.
POSTGRES = Dialect(
    "postgresql",
    "SELECT CAST(value AS BIGINT) FROM meta WHERE key = 'results_seq'",
    claim="SELECT pg_try_advisory_lock(?, hashtext(?))",
    release="SELECT pg_advisory_unlock(?, hashtext(?))",
)
CLAIMS = 0x636C6169  # "clai": the advisory lock class of the claims (WRITE_LOCK's is another)


class Cursor(Protocol):
    """The rows of one statement (sqlite3's cursor, or postgres.py's)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """The store's one connection as the repositories see it: sqlite3's interface (PEP 249 with
    ``?`` placeholders, rows by index or name, ``BEGIN IMMEDIATE``), on either database."""

    dialect: Dialect

    @property
    def in_transaction(self) -> bool: ...

    def execute(self, sql: str, parameters: Any = ..., /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Any, /) -> Cursor: ...

    def close(self) -> None: ...


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


_outer: set[int] = set()
"""The connections (by id) inside an outer transaction (:meth:`.Store.transaction`): the
repositories' own transactions join it instead of beginning one."""
_outer_lock = threading.Lock()


class Transaction:
    """``with Transaction(db) as db:`` - one atomic write (BEGIN IMMEDIATE ... COMMIT). Inside an
    outer transaction (``outer=True``: :meth:`.Store.transaction`) it joins that one: its writes
    commit or roll back with the outer's, never alone. Only a transaction opened as outer is
    joined, so a transaction left open by mistake still fails loudly at the next BEGIN."""

    def __init__(self, db: Connection, *, outer: bool = False):
        self._db = db
        self._outer = outer
        self._joined = False

    def __enter__(self) -> Connection:
        with _outer_lock:
            self._joined = not self._outer and id(self._db) in _outer
        if not self._joined:
            self._db.execute("BEGIN IMMEDIATE")
            if self._outer:
                with _outer_lock:
                    _outer.add(id(self._db))
        return self._db

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object
    ) -> None:
        if self._joined:
            return  # the outer transaction commits, or rolls back as the error leaves it
        try:
            if exc_type is None:
                self._db.execute("COMMIT")
            elif self._db.in_transaction:  # SQLite rolls back by itself after some errors (full)
                self._db.execute("ROLLBACK")
        finally:
            if self._outer:
                with _outer_lock:
                    _outer.discard(id(self._db))


def meta(db: Connection, key: str) -> str | None:
    """One value of the ``meta`` table (schema version, settings, notes, current schedule)."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else row[0]  # as stored (TEXT, by set_meta)


def set_meta(db: Connection, key: str, value: str) -> None:
    db.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


class Repository:
    """The tables of one concern over the store's connection (which only the store closes)."""

    def __init__(self, db: Connection):
        self._db = db
        self._dialect = db.dialect

    def _transaction(self) -> Transaction:
        return Transaction(self._db)


__all__ = [
    "CLAIMS",
    "POSTGRES",
    "SQLITE",
    "Connection",
    "Cursor",
    "Dialect",
    "Repository",
    "StoreError",
    "Transaction",
    "WithheldError",
    "meta",
    "now",
    "set_meta",
]
