"""Authors, their tokens, which bots they own, their limits, and their submissions: the arena's
accounts, in their own SQLite file ``DIR/accounts.sqlite`` beside the tournament's store
(``DIR/tournament.sqlite``, take5_arena/referee/store/)::

    meta(key PK, value)                                        schema_version, created_at
    arena_authors(name PK, token_id UNIQUE, salt, token_hash, created_at, revoked_at,
                  max_active_bots, max_submissions_per_hour, max_archive_bytes)
    arena_bots(bot_name PK, author FK, created_at)             who owns a bot name (first to submit)
    arena_submissions(id PK, author, bot_name, archive_sha256, archive_path, archive_bytes,
                      received_at, status, version_id, detail, bot_output, finished_at)

Why a file of its own (docs/architecture.md, "Who owns which data"): the store is the tournament's
record, which is copied, published and verified (``referee verify --tournament``), while this file
holds token hashes, which never leave the server; the two are written by different owners (the
referee's store methods, this module), and nothing needs a transaction across them: a submission
becomes a version through the store's own ``add_version``, which is idempotent (the same archive
gives the same version), so a server killed between the two writes validates the submission again
at its next start and finds the version there. What this module needs of the store (which
entrants play) it asks the store's methods.

Arenas made before the accounts moved kept these tables inside ``tournament.sqlite``; opening such
a directory moves them here first (:func:`_move_old_accounts`: copied into a new file that is
renamed into place, then dropped from the store; safe to repeat after a crash at any point).

Tokens: ``t5a_<token id>_<secret>``. The token id (12 hex digits) finds the author's row; the secret
(``secrets.token_urlsafe(32)``, 256 bits) is checked against a salted PBKDF2-HMAC-SHA256 hash with
a constant-time comparison. The token is printed once, when the author is added; the database never
holds it. With 256 random bits a slow password hash buys nothing against guessing, so the iteration
count is modest (every call is authenticated); the salt and the hash keep a stolen database from
being a list of working tokens. An unknown token id costs the same hash as a wrong secret.

A submission row is written, in one transaction with the claim of the bot name, only once the whole
upload is on disk (fsync'd and renamed into place by take5_arena/service/intake.py): a row is the
arena's promise that the submission will be validated, also after a crash. Status
(:class:`SubmissionStatus`): ``received`` -> ``validating`` -> ``accepted`` | ``unchanged`` |
``refused``.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import os
import re
import secrets
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from take5_arena.referee.kinds import StrEnum
from take5_arena.referee.store import DB_NAME, Store, now
from take5_arena.service import defaults
from take5_arena.service.errors import (
    AuthenticationError,
    BadRequestError,
    LimitExceededError,
    NotFoundError,
    PermissionDeniedError,
    ServiceError,
)

ACCOUNTS_NAME = "accounts.sqlite"
SCHEMA_VERSION = 1
TOKEN_PREFIX = "t5a"
PBKDF2_ITERATIONS = 20_000
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")


class SubmissionStatus(StrEnum):
    """Where a submission is (``arena_submissions.status``)."""

    RECEIVED = "received"
    """The archive is on disk; validation has not started."""
    VALIDATING = "validating"
    ACCEPTED = "accepted"
    """A new version of the bot."""
    UNCHANGED = "unchanged"
    """The same sources as a version the bot has already."""
    REFUSED = "refused"

    @property
    def finished(self) -> bool:
        return self not in (SubmissionStatus.RECEIVED, SubmissionStatus.VALIDATING)


@dataclass(frozen=True)
class Limits:
    """Per-author limits (the defaults for a new author; `referee authors add` can change them)."""

    max_active_bots: int = defaults.MAX_ACTIVE_BOTS
    max_submissions_per_hour: int = defaults.MAX_SUBMISSIONS_PER_HOUR
    max_archive_bytes: int = defaults.MAX_ARCHIVE_BYTES


DEFAULT_LIMITS = Limits()

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


@dataclass(frozen=True)
class Author:
    name: str
    created_at: str
    revoked_at: str | None
    limits: Limits

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True)
class SubmissionRow:
    id: str
    author: str
    bot_name: str
    archive_sha256: str
    archive_path: str
    archive_bytes: int
    received_at: str
    status: SubmissionStatus
    version_id: int | None
    detail: str
    bot_output: str
    finished_at: str | None


def check_name(kind: str, name: str) -> str:
    """``name`` if it is a valid author or bot name, else BadRequestError saying what is valid."""
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise BadRequestError(
            f"{kind} name {name[:60]!r}: use 1-40 letters, digits, '-', '_' or '.', "
            "starting with a letter or digit"
        )
    return name


def _hash(secret: str, salt: bytes) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", secret.encode(), salt, PBKDF2_ITERATIONS)


def _split_token(token: str) -> tuple[str, str] | None:
    parts = token.strip().split("_", 2)
    if len(parts) != 3 or parts[0] != TOKEN_PREFIX or not re.fullmatch(r"[0-9a-f]{12}", parts[1]):
        return None
    return parts[1], parts[2]


class Accounts:
    """The arena's accounts (see the module text). Thread-safe (one lock around the connection)."""

    def __init__(self, directory: str | os.PathLike[str], *, create: bool = False) -> None:
        self.directory = Path(directory)
        # The accounts belong to a tournament directory: its store is created (or checked) first.
        Store(self.directory, create=create).close()
        _move_old_accounts(self.directory)
        self.path = self.directory / ACCOUNTS_NAME
        self.db = _connect(self.path)
        self.lock = threading.RLock()
        with self.tx() as db:
            _create(db)

    def close(self) -> None:
        with self.lock:
            self.db.close()

    def __enter__(self) -> Accounts:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def _read(self, sql: str, args: tuple[object, ...] = ()) -> list[sqlite3.Row]:
        with self.lock:
            return self.db.execute(sql, args).fetchall()

    def _playing(self) -> set[str]:
        """The names of the entrants that play (the store's: they are its entrants)."""
        with Store(self.directory, readonly=True) as store:
            return {name for name, active in store.entrant_states().items() if active}

    # -- authors and tokens --------------------------------------------------------------------

    def add_author(
        self, name: str, limits: Limits = DEFAULT_LIMITS, *, new_token: bool = False
    ) -> str:
        """Create author ``name`` (or, with ``new_token``, replace its token); return the token.

        The token is not stored: the caller shows it once.
        """
        check_name("author", name)
        token_id = secrets.token_hex(6)
        secret = secrets.token_urlsafe(32)
        salt = secrets.token_bytes(16)
        digest = _hash(secret, salt)
        with self.tx() as db:
            exists = db.execute("SELECT 1 FROM arena_authors WHERE name = ?", (name,)).fetchone()
            if exists and not new_token:
                raise BadRequestError(f"author {name!r} exists (--new-token replaces the token)")
            if exists:
                db.execute(
                    "UPDATE arena_authors SET token_id = ?, salt = ?, token_hash = ?, revoked_at "
                    "= NULL, max_active_bots = ?, max_submissions_per_hour = ?, max_archive_bytes "
                    "= ? WHERE name = ?",
                    (
                        token_id,
                        salt,
                        digest,
                        limits.max_active_bots,
                        limits.max_submissions_per_hour,
                        limits.max_archive_bytes,
                        name,
                    ),
                )
            else:
                db.execute(
                    "INSERT INTO arena_authors(name, token_id, salt, token_hash, created_at,"
                    " max_active_bots, max_submissions_per_hour, max_archive_bytes)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        name,
                        token_id,
                        salt,
                        digest,
                        now(),
                        limits.max_active_bots,
                        limits.max_submissions_per_hour,
                        limits.max_archive_bytes,
                    ),
                )
        return f"{TOKEN_PREFIX}_{token_id}_{secret}"

    def revoke(self, name: str) -> bool:
        """Make the author's token useless at once. False if there is no such author."""
        with self.tx() as db:
            return (
                db.execute(
                    "UPDATE arena_authors SET revoked_at = COALESCE(revoked_at, ?) WHERE name = ?",
                    (now(), name),
                ).rowcount
                > 0
            )

    @staticmethod
    def _author(row: sqlite3.Row) -> Author:
        return Author(
            row["name"],
            row["created_at"],
            row["revoked_at"],
            Limits(
                row["max_active_bots"], row["max_submissions_per_hour"], row["max_archive_bytes"]
            ),
        )

    def authors(self) -> list[Author]:
        return [self._author(r) for r in self._read("SELECT * FROM arena_authors ORDER BY name")]

    def author(self, name: str) -> Author:
        rows = self._read("SELECT * FROM arena_authors WHERE name = ?", (name,))
        if not rows:
            raise NotFoundError(f"no author {name!r}")
        return self._author(rows[0])

    def authenticate(self, token: str | None) -> Author:
        """The author whose token this is, or AuthError (the same work for every wrong token)."""
        if not token:
            raise AuthenticationError("no token: pass --token-file or set TAKE5_TOKEN")
        split = _split_token(token)
        row = None
        if split is not None:
            rows = self._read("SELECT * FROM arena_authors WHERE token_id = ?", (split[0],))
            row = rows[0] if rows else None
        salt = row["salt"] if row is not None else b"\0" * 16
        digest = _hash(split[1] if split else token, salt)
        if row is None or not hmac.compare_digest(digest, row["token_hash"]):
            raise AuthenticationError("the token is not valid")
        if row["revoked_at"] is not None:
            raise AuthenticationError("the token was revoked")
        return self._author(row)

    # -- bots ------------------------------------------------------------------------------------

    def owner(self, bot_name: str) -> str | None:
        rows = self._read("SELECT author FROM arena_bots WHERE bot_name = ?", (bot_name,))
        return rows[0][0] if rows else None

    def check_owner(self, author: Author, bot_name: str, *, must_exist: bool = True) -> None:
        owner = self.owner(bot_name)
        if owner is None and must_exist:
            raise NotFoundError(f"you have no bot named {bot_name!r}")
        if owner is not None and owner != author.name:
            raise PermissionDeniedError(f"the bot {bot_name!r} belongs to another author")

    def bots_of(self, author: str) -> list[str]:
        return [
            r[0]
            for r in self._read(
                "SELECT bot_name FROM arena_bots WHERE author = ? ORDER BY bot_name", (author,)
            )
        ]

    def active_bots_of(self, author: str) -> list[str]:
        """The author's bots that play (their entrant is active) or wait for validation."""
        waiting = {
            r[0]
            for r in self._read(
                "SELECT DISTINCT bot_name FROM arena_submissions WHERE author = ?"
                " AND status IN ('received', 'validating')",
                (author,),
            )
        }
        playing = self._playing()
        return [name for name in self.bots_of(author) if name in playing or name in waiting]

    # -- submissions -------------------------------------------------------------------------------

    def check_can_submit(self, author: Author, bot_name: str, archive_bytes: int = 0) -> None:
        """Ownership and the author's limits, before the upload (checked again when it is
        recorded)."""
        with self.lock:
            self._check_can_submit(self.db, author, bot_name, archive_bytes)

    def _check_can_submit(
        self, db: sqlite3.Connection, author: Author, bot_name: str, archive_bytes: int
    ) -> None:
        check_name("bot", bot_name)
        owner = db.execute(
            "SELECT author FROM arena_bots WHERE bot_name = ?", (bot_name,)
        ).fetchone()
        if owner is not None and owner[0] != author.name:
            raise PermissionDeniedError(f"the bot name {bot_name!r} belongs to another author")
        if archive_bytes > author.limits.max_archive_bytes:
            raise LimitExceededError(
                f"the archive has {archive_bytes} bytes; your limit is "
                f"{author.limits.max_archive_bytes}"
            )
        since = (datetime.now(timezone.utc) - timedelta(hours=1)).isoformat(timespec="milliseconds")
        recent = db.execute(
            "SELECT COUNT(*) FROM arena_submissions WHERE author = ? AND received_at > ?",
            (author.name, since),
        ).fetchone()[0]
        if recent >= author.limits.max_submissions_per_hour:
            raise LimitExceededError(
                f"{recent} submissions in the last hour; your limit is "
                f"{author.limits.max_submissions_per_hour} per hour"
            )
        active = set(self.active_bots_of(author.name))
        if bot_name not in active and len(active) >= author.limits.max_active_bots:
            raise LimitExceededError(
                f"you have {len(active)} active bots, your limit; withdraw one first "
                f"(`referee withdraw NAME`)"
            )

    def record_submission(
        self,
        author: Author,
        bot_name: str,
        *,
        archive_sha256: str,
        archive_path: str,
        archive_bytes: int,
    ) -> SubmissionRow:
        """Commit a fully received upload (the limits checked again, the bot name claimed)."""
        sid = f"s-{datetime.now(timezone.utc).strftime('%Y%m%d%H%M%S')}-{secrets.token_hex(4)}"
        with self.tx() as db:
            self._check_can_submit(db, author, bot_name, archive_bytes)
            db.execute(
                "INSERT OR IGNORE INTO arena_bots(bot_name, author, created_at) VALUES (?, ?, ?)",
                (bot_name, author.name, now()),
            )
            db.execute(
                "INSERT INTO arena_submissions(id, author, bot_name, archive_sha256, archive_path,"
                " archive_bytes, received_at, status) VALUES (?, ?, ?, ?, ?, ?, ?, 'received')",
                (sid, author.name, bot_name, archive_sha256, archive_path, archive_bytes, now()),
            )
        return self.submission(sid)

    @staticmethod
    def _submission(row: sqlite3.Row) -> SubmissionRow:
        fields: dict[str, Any] = {k: row[k] for k in row.keys()}  # noqa: SIM118 - a Row has no .items()
        fields["status"] = SubmissionStatus(fields["status"])
        return SubmissionRow(**fields)

    def submission(self, sid: str) -> SubmissionRow:
        rows = self._read("SELECT * FROM arena_submissions WHERE id = ?", (sid,))
        if not rows:
            raise NotFoundError(f"no submission {sid}")
        return self._submission(rows[0])

    def submissions_of(self, author: str, limit: int = 20) -> list[SubmissionRow]:
        rows = self._read(
            "SELECT * FROM arena_submissions WHERE author = ? ORDER BY received_at DESC, id DESC"
            " LIMIT ?",
            (author, limit),
        )
        return [self._submission(r) for r in rows]

    def unfinished_submissions(self) -> list[SubmissionRow]:
        """Recorded but not validated (the server stopped before): validated again at start."""
        rows = self._read(
            "SELECT * FROM arena_submissions WHERE status IN ('received', 'validating')"
            " ORDER BY received_at, id"
        )
        return [self._submission(r) for r in rows]

    def set_status(
        self,
        sid: str,
        status: SubmissionStatus,
        *,
        version_id: int | None = None,
        detail: str = "",
        bot_output: str = "",
    ) -> None:
        finished = now() if SubmissionStatus(status).finished else None
        with self.tx() as db:
            db.execute(
                "UPDATE arena_submissions SET status = ?, version_id = ?, detail = ?, bot_output "
                "= ?, finished_at = ? WHERE id = ?",
                (
                    SubmissionStatus(status).value,
                    version_id,
                    detail[: defaults.DETAIL_CHARS],
                    bot_output[-defaults.OUTPUT_TAIL :],
                    finished,
                    sid,
                ),
            )

    def last_refusal(self, bot_name: str) -> SubmissionRow | None:
        rows = self._read(
            "SELECT * FROM arena_submissions WHERE bot_name = ? AND status = 'refused'"
            " ORDER BY received_at DESC LIMIT 1",
            (bot_name,),
        )
        return self._submission(rows[0]) if rows else None

    def info(self) -> dict[str, int]:
        """Submissions per status."""
        rows = self._read("SELECT status, COUNT(*) FROM arena_submissions GROUP BY status")
        return {r[0]: r[1] for r in rows}


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(str(path), timeout=30.0, isolation_level=None, check_same_thread=False)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA foreign_keys = ON")
    db.execute("PRAGMA busy_timeout = 30000")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    return db


def _create(db: sqlite3.Connection) -> None:
    """The accounts' tables (inside the caller's transaction), and their schema version."""
    for statement in SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
    version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if version is None:
        db.execute(
            "INSERT INTO meta(key, value) VALUES ('schema_version', ?), ('created_at', ?)",
            (str(SCHEMA_VERSION), now()),
        )
    elif int(version[0]) > SCHEMA_VERSION:
        raise ServiceError(
            f"the accounts have schema version {version[0]}; this arena knows {SCHEMA_VERSION}"
        )


def _move_old_accounts(directory: Path) -> None:
    """Move the accounts of an arena made before they had their own file out of its store.

    Such an arena kept the tables above inside ``tournament.sqlite``. They are copied into a new
    file, which is renamed into place as ``accounts.sqlite`` once complete and durable; only then
    are they dropped from the store. A crash at any point leaves either the old layout (the next
    open copies again) or the new file with the old tables still in the store (the next open only
    drops them). One process does it at a time (a lock file beside the store).
    """
    store_path = directory / DB_NAME
    target = directory / ACCOUNTS_NAME
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
        _create(db)
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
    "DEFAULT_LIMITS",
    "NAME_RE",
    "PBKDF2_ITERATIONS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "TOKEN_PREFIX",
    "Accounts",
    "Author",
    "Limits",
    "SubmissionRow",
    "SubmissionStatus",
    "check_name",
]
