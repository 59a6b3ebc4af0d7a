"""The accounts' SQLite file ``DIR/accounts.sqlite``: its tables and their migrations, the
owner-only connection, the copy made before a migration, and the move of the accounts out of the
store of an arena made before they had a file of their own. An arena whose store is in PostgreSQL
keeps the same tables in the store's database (``arena_meta`` for their ``meta``), made and
migrated by the same statements in PostgreSQL's words (:func:`in_postgres_words`), so that every
process on every host sees the same authors, tokens and revocations::

    meta(key PK, value)                                        schema_version, created_at
    arena_authors(name PK, token_id UNIQUE, salt, token_hash, created_at, revoked_at,
                  max_active_bots, max_submissions_per_hour, max_archive_bytes, max_stored_bytes,
                  token_check (schema 3; NULL: a token made before, until its first use))
    arena_bots(bot_name PK, name_key UNIQUE, author FK NULL, created_at, note, banned_at)
                                                               who owns a bot name (NULL: the house)
    arena_submissions(id PK, author, bot_name, archive_sha256, archive_path, archive_bytes,
                      received_at, status, version_id, detail, bot_output, finished_at, attempts)
                      competition (schema 5: '' the default competition)
    arena_sessions(id_hash PK, author, organiser, created_at, expires_at)      (schema 4)
                                                               the web pages' sign-ins (sessions.py)

Arenas made before the accounts moved kept these tables inside ``tournament.sqlite``; opening such
a directory moves them here first (:func:`move_old_accounts`: copied into a new file that is
renamed into place, then dropped from the store; safe to repeat after a crash at any point).
"""

from __future__ import annotations

import fcntl
import os
import re
import secrets
import sqlite3
import stat
from datetime import datetime, timezone
from pathlib import Path

from take5_arena.referee.store import DB_NAME, newer_schema, now
from take5_arena.referee.store.backup import copy_before_migration
from take5_arena.referee.store.base import Connection
from take5_arena.referee.store.health import GuardedConnection, connect, os_fault, synchronous
from take5_arena.referee.store.postgres import PgConnection
from take5_arena.service import defaults, logs
from take5_arena.service.errors import ServiceError

ACCOUNTS_NAME = "accounts.sqlite"
SCHEMA_VERSION = 5

_TABLES = ("arena_submissions", "arena_bots", "arena_authors")  # children first: drop order
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS arena_authors (
    name TEXT PRIMARY KEY,
    token_id TEXT NOT NULL UNIQUE,
    salt BLOB NOT NULL,
    token_hash BLOB NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT,
    max_active_bots INTEGER NOT NULL,
    max_submissions_per_hour INTEGER NOT NULL,
    max_archive_bytes INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS arena_bots (
    bot_name TEXT PRIMARY KEY,
    author TEXT NOT NULL REFERENCES arena_authors(name),
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS arena_submissions (
    id TEXT PRIMARY KEY,
    author TEXT NOT NULL REFERENCES arena_authors(name),
    bot_name TEXT NOT NULL,
    archive_sha256 TEXT NOT NULL,
    archive_path TEXT NOT NULL,
    archive_bytes INTEGER NOT NULL,
    received_at TEXT NOT NULL,
    status TEXT NOT NULL
        CHECK (status IN ('received', 'validating', 'accepted', 'unchanged', 'refused')),
    version_id INTEGER,
    detail TEXT NOT NULL DEFAULT '',
    bot_output TEXT NOT NULL DEFAULT '',
    finished_at TEXT
);
CREATE INDEX IF NOT EXISTS arena_submissions_author ON arena_submissions(author, received_at);
"""
"""Version 1 of the tables (an arena made then is moved on by :data:`MIGRATIONS`)."""

MIGRATIONS: dict[int, str] = {
    2: f"""
ALTER TABLE arena_authors
    ADD COLUMN max_stored_bytes INTEGER NOT NULL DEFAULT {defaults.MAX_STORED_BYTES};
ALTER TABLE arena_submissions ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
CREATE TABLE arena_bots_v2 (
    bot_name TEXT PRIMARY KEY,
    name_key TEXT NOT NULL UNIQUE,
    author TEXT REFERENCES arena_authors(name),
    created_at TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    banned_at TEXT
);
INSERT OR IGNORE INTO arena_bots_v2(bot_name, name_key, author, created_at)
    SELECT b.bot_name, lower(b.bot_name), b.author, b.created_at FROM arena_bots b
    WHERE EXISTS (SELECT 1 FROM arena_submissions s WHERE s.bot_name = b.bot_name
                  AND s.status IN ('accepted', 'unchanged'))
    ORDER BY b.created_at;
DROP TABLE arena_bots;
ALTER TABLE arena_bots_v2 RENAME TO arena_bots
""",
    3: """
ALTER TABLE arena_authors ADD COLUMN token_check BLOB;
ALTER TABLE arena_submissions ADD COLUMN upload_key TEXT;
CREATE UNIQUE INDEX arena_submissions_upload_key ON arena_submissions(author, upload_key)
""",
    4: """
CREATE TABLE arena_sessions (
    id_hash BLOB PRIMARY KEY,
    author TEXT NOT NULL,
    organiser INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX arena_sessions_author ON arena_sessions(author, expires_at)
""",
    5: """
ALTER TABLE arena_submissions ADD COLUMN competition TEXT NOT NULL DEFAULT ''
""",
}
"""Schema version -> the statements that make it from the one before. Version 2: names claimed only
by an accepted version (squatted names of version 1, never accepted, are released), unique by
their case-folded key, and owned by the house when ``author`` is NULL; organiser notes and bans;
the stored-bytes limit; validation attempts. Version 3: the name a client gives an upload
(``upload_key``, NULL: none given), unique per author, so that a retried upload is stored once;
and each token's salted HMAC (``token_check``, NULL until the token's first use after the upgrade:
a cheap check, so that no limit turns a call away before its secret is looked at). Version 4: the
web pages' sign-ins (``arena_sessions``, take5_arena/service/authors/sessions.py), kept with the
accounts so that every web process of the arena, on any host, knows each of them (a session's id
only as its SHA-256; ``author`` is no foreign key: the organiser signs in too). Version 5: the
competition each submission enters (``competition``, '' the default: the arena's own directory;
take5_arena/service/competitions.py), so that each competition's queue validates its own."""


def unfinished_uploads(path: Path) -> list[str]:
    """The upload files (their names in ``arena/uploads``) of the submissions still to validate, in
    the accounts file ``path``, opened read-only: what a backup of the arena must carry besides the
    databases, for the restored arena to validate them at its start."""
    db = sqlite3.connect(_uri(path, readonly=True), uri=True, timeout=30.0)
    try:
        rows = db.execute(
            "SELECT archive_path FROM arena_submissions WHERE status IN ('received', 'validating')"
            " ORDER BY received_at, id"
        ).fetchall()
    finally:
        db.close()
    return [Path(row[0]).name for row in rows]


def connect_accounts(path: Path) -> GuardedConnection:
    """The accounts' connection: the store's kind (take5_arena/referee/store/health.py), so that a
    full or read-only disk and a damaged file are one line, and a damaged file is never written;
    owner-only, whatever the umask (it holds token hashes)."""
    try:
        _owner_only(path)
    except OSError as error:  # a read-only or full disk, a folder not ours: one line, as the store
        raise os_fault(path, error) from None
    db = connect(path, readonly=False)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA foreign_keys = ON")
    db.execute("PRAGMA busy_timeout = 30000")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute(f"PRAGMA synchronous = {synchronous()}")  # FULL for an arena (serve)
    for side in ("-wal", "-shm"):  # SQLite makes them with the file's mode; older ones may differ
        _owner_only(path.with_name(path.name + side), create=False)
    return db


def _owner_only(path: Path, *, create: bool = True) -> None:
    """``path`` (made empty if missing: SQLite takes an empty file for a new database) readable by
    its owner only, whatever the umask of the process that opens it: the accounts hold the token
    hashes. One made open to others (by hand, or by an older release) is closed, with a warning.

    An existing file is never opened for reading or writing here: closing any descriptor of a file
    drops every POSIX lock this process holds on it, and SQLite's locks on the database and its
    ``-shm`` are POSIX locks, held by the arena's other connections to the same file. It is looked
    at through an O_PATH descriptor (whose close drops no lock; not a link: O_NOFOLLOW) and its mode
    set through /proc/self/fd, so the inode checked is the inode changed."""
    if create:
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
            return
        except FileExistsError:
            pass  # someone's: check its mode below
    try:
        fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        st = os.fstat(fd)
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
            raise ServiceError(f"{path} is not a regular file: refusing to use it for the accounts")
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o077:
            os.chmod(f"/proc/self/fd/{fd}", 0o600)
            logs.logger("accounts").warning(
                "%s was open to others (mode %04o): now 0600", path, mode
            )
    finally:
        os.close(fd)


def _schema_of(path: Path) -> int | None:
    """The schema version of the accounts file ``path`` (None: no file, or no tables yet)."""
    if not path.is_file():
        return None
    db = sqlite3.connect(_uri(path, readonly=True), uri=True, timeout=30.0)
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.OperationalError:  # no meta table: nothing was ever written
        return None
    finally:
        db.close()
    return None if row is None else int(row[0])


def backup_before_migration(path: Path) -> Path | None:
    """Before accounts of an older schema are migrated, copy them as the older release left them
    to ``accounts.schema-vN.sqlite`` beside them (owner-only, SQLite's online backup API), as the
    store does for itself: going back to that release means stopping serve and putting the copy
    back. Accounts of a newer schema are refused here, before anything is written."""
    version = _schema_of(path)
    if version is None or version == SCHEMA_VERSION:
        return None
    if version > SCHEMA_VERSION:
        raise ServiceError(newer_schema(path, version, SCHEMA_VERSION, knower="arena"))
    target = copy_before_migration(path, version)
    logs.logger("accounts").warning(
        "%s has schema version %d, made by an older release: migrating it to %d; the accounts "
        "as they were are in %s",
        path,
        version,
        SCHEMA_VERSION,
        target,
    )
    return target


def create_tables(
    db: Connection | sqlite3.Connection, *, migrate: bool = True, postgres: bool = False
) -> None:
    """The accounts' tables (inside the caller's transaction), moved on to the current schema
    version by :data:`MIGRATIONS` (``migrate=False``: left at version 1, for a copy of old
    tables). In the store's PostgreSQL database (``postgres``) the same statements in its words
    (:func:`in_postgres_words`)."""
    words = in_postgres_words if postgres else str
    meta = words("meta")
    for statement in SCHEMA.split(";"):
        if statement.strip():
            db.execute(words(statement))
    version = db.execute(f"SELECT value FROM {meta} WHERE key = 'schema_version'").fetchone()
    if version is None:
        db.execute(
            f"INSERT INTO {meta}(key, value) VALUES ('schema_version', '1'), ('created_at', ?)",
            (now(),),
        )
        current = 1
    else:
        current = int(version[0])
    if current > SCHEMA_VERSION:  # made newer since backup_before_migration read it
        raise ServiceError(newer_schema(ACCOUNTS_NAME, current, SCHEMA_VERSION, knower="arena"))
    if not migrate:
        return
    for target in range(current + 1, SCHEMA_VERSION + 1):
        for statement in MIGRATIONS[target].split(";"):
            if statement.strip():
                db.execute(words(statement))
        db.execute(f"UPDATE {meta} SET value = ? WHERE key = 'schema_version'", (str(target),))


def in_postgres_words(statement: str) -> str:
    """An accounts statement of :data:`SCHEMA` or :data:`MIGRATIONS` as PostgreSQL takes it, in the
    store's database (``--store postgresql://...``): their ``meta`` is ``arena_meta`` (the
    store's is ``meta``), 64-bit integers, bytes as BYTEA, and SQLite's INSERT OR IGNORE as
    ON CONFLICT DO NOTHING."""
    text = re.sub(r"\bmeta\b", "arena_meta", statement)
    text = text.replace("INTEGER", "BIGINT").replace("BLOB", "BYTEA")
    if "INSERT OR IGNORE" in text:
        text = text.replace("INSERT OR IGNORE", "INSERT").rstrip() + " ON CONFLICT DO NOTHING"
    return text


def move_accounts_file(directory: Path, db: Connection) -> Path | None:
    """Move the accounts of an arena on PostgreSQL made before they were kept in its database.

    Such an arena has them in ``DIR/accounts.sqlite``. Inside the caller's transaction on the
    database (which made the tables), the file is migrated (a copy kept first, as for any open)
    and its rows are copied in, unless the database holds authors already (another host moved its
    copy of the same file first). Then, after the commit, :func:`set_aside` renames the file to
    ``accounts.sqlite.moved-STAMP`` (owner-only): kept, but never read again. Returns the file to
    set aside (None: there is none). A crash before the commit leaves the file as it was (the
    next open moves it again); after it, the rows are in the database and the next open only sets
    the file aside."""
    path = directory / ACCOUNTS_NAME
    if not path.is_file():
        return None
    if db.execute("SELECT 1 FROM arena_authors LIMIT 1").fetchone() is not None:
        logs.logger("accounts").warning(
            "%s is not copied: the store's database holds the arena's accounts already", path
        )
        return path
    backup_before_migration(path)
    source = connect_accounts(path)
    try:
        source.execute("BEGIN IMMEDIATE")
        try:
            create_tables(source)  # migrated to this release's schema, as the database is
        except BaseException:
            source.execute("ROLLBACK")
            raise
        source.execute("COMMIT")
        for table in reversed(_TABLES):  # parents first: the foreign keys hold on every row
            columns = [r[1] for r in source.execute(f"PRAGMA table_info({table})")]
            names = ", ".join(columns)
            marks = ", ".join("?" * len(columns))
            rows = [tuple(r) for r in source.execute(f"SELECT {names} FROM {table}")]
            db.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", rows)
    finally:
        source.close()
    logs.logger("accounts").warning("%s: the accounts are now in the store's database", path)
    return path


def export_accounts(url: str, target: Path) -> bool:
    """The accounts kept in the PostgreSQL database at ``url`` copied into the new SQLite file
    ``target`` (what a backup holds; restored, they move into the new store's database at the
    first open, or stay a file), in one snapshot of the database, owner-only and self-contained.
    False, and no file, when the database holds none (a tournament, not an arena)."""
    source = PgConnection(url, readonly=True)
    try:
        if source.execute("SELECT to_regclass('arena_authors')").fetchone()[0] is None:
            return False
        source.execute("BEGIN")  # one snapshot throughout (REPEATABLE READ)
        db = connect_accounts(target)
        try:
            db.execute("BEGIN IMMEDIATE")
            create_tables(db)
            for table in reversed(_TABLES):  # parents first: the foreign keys hold on every row
                columns = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
                names = ", ".join(columns)
                rows = [tuple(r) for r in source.execute(f"SELECT {names} FROM {table}")]
                marks = ", ".join("?" * len(columns))
                db.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", rows)
            db.execute("COMMIT")
            db.execute("PRAGMA journal_mode = DELETE")  # one file, as every database of a backup
        finally:
            db.close()
        source.execute("COMMIT")
    finally:
        source.close()
    return True


def set_aside(path: Path) -> None:
    """Rename a moved accounts file (and its WAL files) out of the way, owner-only."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    for side in ("", "-wal", "-shm"):
        source = path.with_name(path.name + side)
        if source.exists():
            target = path.with_name(f"{path.name}.moved-{stamp}{side}")
            os.replace(source, target)
            os.chmod(target, 0o600)


def move_old_accounts(directory: Path) -> None:
    """Move the accounts of an arena made before they had their own file out of its store.

    Such an arena kept the tables above inside ``tournament.sqlite``. They are copied into a new
    file, which is renamed into place as ``accounts.sqlite`` once complete and durable; only then
    are they dropped from the store. A crash at any point leaves either the old layout (the next
    open copies again) or the new file with the old tables still in the store (the next open only
    drops them). One process does it at a time (a lock file beside the store).
    """
    store_path = directory / DB_NAME
    target = directory / ACCOUNTS_NAME
    if not store_path.is_file():  # a store in PostgreSQL: made after the split, it never held them
        return
    probe = sqlite3.connect(_uri(store_path, readonly=True), uri=True, timeout=30.0)
    try:
        marks = ", ".join("?" * len(_TABLES))
        sql = f"SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ({marks})"
        old = {row[0] for row in probe.execute(sql, _TABLES)}
    finally:
        probe.close()
    if not old:
        return
    lock = os.open(directory / ".accounts.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.exists():
            _copy_old_accounts(store_path, target, old)
        db = sqlite3.connect(str(store_path), timeout=30.0, isolation_level=None)
        try:
            db.execute("PRAGMA busy_timeout = 30000")
            db.execute("BEGIN IMMEDIATE")
            for table in _TABLES:
                db.execute(f"DROP TABLE IF EXISTS {table}")
            db.execute("DROP INDEX IF EXISTS arena_submissions_author")
            db.execute("COMMIT")
        finally:
            db.close()
    finally:
        os.close(lock)


def _uri(path: Path, *, readonly: bool = False) -> str:
    return path.resolve().as_uri() + ("?mode=ro" if readonly else "")


def _copy_old_accounts(store_path: Path, target: Path, tables: set[str]) -> None:
    for stale in target.parent.glob(f".{ACCOUNTS_NAME}.*.tmp"):
        stale.unlink(missing_ok=True)
    work = target.parent / f".{ACCOUNTS_NAME}.{secrets.token_hex(6)}.tmp"
    db = sqlite3.connect(_uri(work), uri=True, isolation_level=None)
    try:
        db.execute("ATTACH DATABASE ? AS old", (_uri(store_path, readonly=True),))
        db.execute("BEGIN IMMEDIATE")
        create_tables(db, migrate=False)
        for table in reversed(_TABLES):  # parents first: the foreign keys hold on every row
            if table in tables:
                columns = [r[1] for r in db.execute(f"PRAGMA main.table_info({table})")]
                names = ", ".join(columns)
                db.execute(f"INSERT INTO main.{table} ({names}) SELECT {names} FROM old.{table}")
        db.execute("COMMIT")
        db.execute("DETACH DATABASE old")
    finally:
        db.close()
    fd = os.open(work, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(work, target)
    fd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


__all__ = [
    "ACCOUNTS_NAME",
    "MIGRATIONS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "backup_before_migration",
    "connect_accounts",
    "create_tables",
    "export_accounts",
    "in_postgres_words",
    "move_accounts_file",
    "move_old_accounts",
    "set_aside",
    "unfinished_uploads",
]
