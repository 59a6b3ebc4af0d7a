"""A store copied row for row into another, of either backend: how a PostgreSQL store is backed up
(into a SQLite file, which every backup holds: ``referee verify --tournament BACKUP`` reads it as it
is) and restored (``referee restore BACKUP DIR --store URL``), and how a tournament moves from
SQLite to PostgreSQL or back.

The source is read in one snapshot (SQLite's read transaction; on PostgreSQL ``REPEATABLE READ``,
the snapshot pg_dump takes), while referees and web processes go on writing; the target is written
in one transaction, so a copy cut off leaves nothing. The target must be empty (new).
"""

from __future__ import annotations

import itertools
import os
import sqlite3
from pathlib import Path

from .base import Connection, StoreError, Transaction, set_meta
from .schema import DB_NAME, SCHEMA_VERSION
from .snapshot import FILE_MODE, BackupError, CopiedFile, describe_copy, integrity_check
from .store import URL_NAME, Store

#: Every table, parents before the tables whose foreign keys name them.
TABLES = (
    "meta",
    "entrants",
    "entrant_versions",
    "deal_keys",
    "schedules",
    "games",
    "abandoned_games",
    "schedule_games",
    "results",
    "seat_results",
    "bot_output",
    "infra_failures",
    "runs",
)
#: Tables whose ids the database hands out (PostgreSQL: an identity to move past the copied ids).
IDENTITIES = ("entrants", "entrant_versions", "infra_failures")
#: meta keys of one backend's own making (PostgreSQL's counter of results.seq)
_OWN_KEYS = ("results_seq", "schema_version")
_BATCH = 500


def copy_store(source: Store, target: Store) -> int:
    """Every row of ``source`` into the empty store ``target``; how many results were copied."""
    src, dst = source._db, target._db
    if dst.execute("SELECT 1 FROM entrants UNION ALL SELECT 1 FROM games").fetchone():
        raise StoreError(f"{target.url or target.path} is not empty: copy into a new store")
    last_seq = source.audit.last_seq()
    src.execute("BEGIN")  # one snapshot of the source throughout
    try:
        with Transaction(dst) as db:
            db.execute("DELETE FROM meta WHERE key <> 'schema_version'")
            for table in TABLES:
                _copy_table(src, db, table)
            set_meta(db, "schema_version", str(SCHEMA_VERSION))
            copied = db.execute("SELECT COUNT(*), MAX(seq) FROM results").fetchone()
            last = max(int(copied[1] or 0), last_seq if isinstance(last_seq, int) else 0)
            _carry_counters(db, last)
    finally:
        src.execute("ROLLBACK")
    return int(copied[0])


def _copy_table(src: Connection, dst: Connection, table: str) -> None:
    rows = iter(src.execute(f"SELECT * FROM {table}"))
    first = next(rows, None)
    if first is None:
        return
    columns = list(first.keys())
    sql = f"INSERT INTO {table}({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})" + (
        " ON CONFLICT DO NOTHING" if table == "meta" else ""
    )
    batches = itertools.chain([first], rows)
    while batch := list(itertools.islice(batches, _BATCH)):
        dst.executemany(sql, [tuple(r) for r in batch if table != "meta" or r[0] not in _OWN_KEYS])


def _carry_counters(db: Connection, last_seq: int) -> None:
    """The target hands out ids and sequence numbers after the copied ones, and keeps the last
    result's number the source handed out (verify reads a missing last result as deleted)."""
    if db.dialect.name == "postgresql":
        set_meta(db, "results_seq", str(last_seq))
        for table in IDENTITIES:
            db.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
                f" (SELECT COALESCE(MAX(id), 0) + 1 FROM {table}), false)"
            )
    elif last_seq:
        db.execute(
            "INSERT INTO sqlite_sequence(name, seq) SELECT 'results', ? WHERE NOT EXISTS"
            " (SELECT 1 FROM sqlite_sequence WHERE name = 'results')",
            (last_seq,),
        )
        db.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = 'results'", (last_seq,))


def export_sqlite(directory: Path, target: Path) -> CopiedFile:
    """The store of ``directory`` (PostgreSQL) as the new SQLite file ``target``: one snapshot,
    a single self-contained file (rollback journal), checked, fsync'd, owner-only, as
    :func:`~.snapshot.online_copy` makes a SQLite store's. ``target.name`` is the manifest's
    path; ``target.parent`` must not hold a store yet."""
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    os.close(fd)
    with Store(directory, readonly=True) as source, Store(target.parent, create=True) as copy:
        copy_store(source, copy)
    db = sqlite3.connect(str(target), isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode = DELETE")
        problem = integrity_check(db)
    finally:
        db.close()
    if problem:
        raise BackupError(f"{target}: the copy fails SQLite's integrity check: {problem}")
    os.chmod(target, FILE_MODE)
    return describe_copy(target, target.name)


def import_sqlite(directory: Path, url: str) -> int:
    """Move the store of ``directory`` (its ``tournament.sqlite``, as a backup holds it) into the
    new PostgreSQL database ``url``: copied, then the file removed and ``directory/store.url``
    written, so the directory reads the database from then on. How many results were copied."""
    staging = directory / ".sqlite-import"
    staging.mkdir(mode=0o700)
    source_path = directory / DB_NAME
    os.rename(source_path, staging / source_path.name)
    try:
        with Store(staging, readonly=True) as source, Store(directory, create=True, url=url) as t:
            copied = copy_store(source, t)
    except BaseException:
        (directory / URL_NAME).unlink(missing_ok=True)
        os.rename(staging / source_path.name, source_path)
        staging.rmdir()
        raise
    (staging / source_path.name).unlink()
    staging.rmdir()
    return copied


__all__ = ["IDENTITIES", "TABLES", "copy_store", "export_sqlite", "import_sqlite"]
