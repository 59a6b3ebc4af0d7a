"""The open accounts: the file made or migrated, one connection behind a lock, transactions, and
what the accounts ask of the tournament's store (which entrants play)."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from take5_arena.referee.store import URL_NAME, Store
from take5_arena.referee.store.base import Connection
from take5_arena.referee.store.postgres import PgConnection, Row
from take5_arena.service.authors.storage import (
    ACCOUNTS_NAME,
    backup_before_migration,
    connect_accounts,
    create_tables,
    move_accounts_file,
    move_old_accounts,
    set_aside,
)
from take5_arena.service.competitions import every_directory

AccountRow = sqlite3.Row | Row
"""A row of the accounts, by index or by name (the file's, or PostgreSQL's)."""


class AccountsBase:
    """The accounts' connection and its transactions, which each part of
    :class:`~take5_arena.service.authors.Accounts` uses. Thread-safe (one lock around the
    connection)."""

    def __init__(self, directory: str | os.PathLike[str], *, create: bool = False) -> None:
        self.directory = Path(directory)
        # The accounts belong to a tournament directory: its store is created (or checked) first.
        with Store(self.directory, create=create) as store:
            url = store.url
        self.lock = threading.RLock()
        self.upgrade_backup: Path | None = None
        """Where the accounts were copied before this open migrated them (None: no migration)."""
        self.db: Connection
        self.shared = url is not None
        """Whether the accounts are in the store's PostgreSQL database, which processes on other
        hosts share (each host spools and validates the uploads it received)."""
        if url is not None:  # in the store's PostgreSQL database, which every host shares
            self.path = self.directory / URL_NAME
            self.db = PgConnection(url, readonly=False)
            try:
                with self.tx() as db:
                    create_tables(db, postgres=True)
                    moved = move_accounts_file(self.directory, db)
            except BaseException:
                self.db.close()
                raise
            if moved is not None:
                set_aside(moved)
        else:
            self._open_file()
        # token id -> (stored hash, the token that matched it): a token checked once is not hashed
        # again while its row is unchanged (a new token or a revocation changes what is compared)
        self._verified: dict[str, tuple[bytes, str]] = {}
        self._failed_at: dict[str, float] = {}

    def _open_file(self) -> None:
        """The accounts' own SQLite file, made or migrated (a copy kept first) and owner-only."""
        move_old_accounts(self.directory)
        self.path = self.directory / ACCOUNTS_NAME
        self.upgrade_backup = backup_before_migration(self.path)
        fresh = not self.path.exists()
        try:
            self.db = connect_accounts(self.path)
            try:
                with self.tx() as db:
                    create_tables(db)
            except BaseException:
                self.db.close()
                raise
        except BaseException:
            if fresh:  # made by this open and never filled (a full disk): no empty file is left
                for leftover in ("", "-wal", "-shm"):
                    with suppress(OSError):  # (a read-only disk made none)
                        Path(f"{self.path}{leftover}").unlink(missing_ok=True)
            raise

    def close(self) -> None:
        with self.lock:
            self.db.close()

    @contextmanager
    def tx(self) -> Iterator[Connection]:
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def _read(self, sql: str, args: tuple[object, ...] = ()) -> list[AccountRow]:
        with self.lock:
            return self.db.execute(sql, args).fetchall()

    def _playing(self) -> set[str]:
        """The names of the entrants that play in any of the arena's competitions (the stores':
        they are their entrants); a bot in two competitions is one active bot of its author."""
        playing: set[str] = set()
        for directory in every_directory(self.directory):
            with Store(directory, readonly=True) as store:
                states = store.versions.entrant_states()
            playing |= {name for name, active in states.items() if active}
        return playing


__all__ = ["AccountRow", "AccountsBase"]
