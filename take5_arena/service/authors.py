"""Authors, their tokens, which bots they own, their limits, and their submissions: the arena's
accounts, in their own SQLite file ``DIR/accounts.sqlite`` beside the tournament's store
(``DIR/tournament.sqlite``, take5_arena/referee/store/)::

    meta(key PK, value)                                        schema_version, created_at
    arena_authors(name PK, token_id UNIQUE, salt, token_hash, created_at, revoked_at,
                  max_active_bots, max_submissions_per_hour, max_archive_bytes, max_stored_bytes,
                  token_check (schema 3; NULL: a token made before, until its first use))
    arena_bots(bot_name PK, name_key UNIQUE, author FK NULL, created_at, note, banned_at)
                                                               who owns a bot name (NULL: the house)
    arena_submissions(id PK, author, bot_name, archive_sha256, archive_path, archive_bytes,
                      received_at, status, version_id, detail, bot_output, finished_at, attempts)

Names (take5_arena/referee/names.py): one rule, ASCII only, unique by their case-folded key. A name
is claimed (a row in ``arena_bots``) only when a version of it is accepted, so a refused upload
claims nothing; a name that the tournament's store already has as an entrant and that no author
claimed is the organiser's (a "house" bot, entered with ``referee submit -t``): no author can
submit to it or withdraw it. The organiser's own commands (take5_arena/service/organiser.py) can
withdraw or ban any bot, with a note its author reads.

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
(``secrets.token_urlsafe(32)``, 256 bits) is checked against a salted HMAC-SHA256 of it
(``token_check``) with a constant-time comparison. The token is printed once, when the author is
added; the database never holds it. With 256 random bits a slow password hash buys nothing against
guessing, and a cheap check is what lets every secret be checked: no limit has to turn a call away
before its secret is looked at, so nobody's wrong guesses can get its owner's correct token refused,
and guesses from any number of addresses cost one HMAC each. The salt and the HMAC keep a stolen
database from being a list of working tokens. Tokens made before ``token_check`` (schema 3) have
only a salted PBKDF2-HMAC-SHA256 hash: checked that way (at most once a second per token id after a
wrong secret) until their first use stores their check. An unknown token id is refused without a
hash: the id finds the row, the secret is what guards it.

A submission row is written only once the whole upload is on disk (fsync'd and renamed into place
by take5_arena/service/intake.py): a row is the arena's promise that the submission will be
validated, also after a crash. Status (:class:`SubmissionStatus`):
``received`` -> ``validating`` -> ``accepted`` | ``unchanged`` | ``refused``; a validation that
failed for the arena's own reasons goes back to ``received`` with its ``attempts`` counted and a
detail that says it waits to be tried again (take5_arena/service/submissions.py).
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import os
import re
import secrets
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from take5_arena.referee.kinds import StrEnum
from take5_arena.referee.names import look_alike, name_key, name_problem
from take5_arena.referee.store import DB_NAME, Store, newer_schema, now
from take5_arena.referee.store.backup import copy_before_migration
from take5_arena.referee.store.health import connect, os_fault, synchronous
from take5_arena.service import defaults, logs
from take5_arena.service.errors import (
    AuthenticationError,
    BadRequestError,
    LimitExceededError,
    NotFoundError,
    PermissionDeniedError,
    ServiceError,
)

ACCOUNTS_NAME = "accounts.sqlite"
SCHEMA_VERSION = 3
TOKEN_PREFIX = "t5a"
PBKDF2_ITERATIONS = 20_000
HOUSE = "(house)"
"""The owner shown for the organiser's bots (no author can have this name)."""


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
    max_stored_bytes: int = defaults.MAX_STORED_BYTES
    """Archive bytes the arena keeps for the author: accepted versions and uploads waiting."""


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
}
"""Schema version -> the statements that make it from the one before. Version 2: names claimed only
by an accepted version (squatted names of version 1, never accepted, are released), unique by
their case-folded key, and owned by the house when ``author`` is NULL; organiser notes and bans;
the stored-bytes limit; validation attempts. Version 3: the name a client gives an upload
(``upload_key``, NULL: none given), unique per author, so that a retried upload is stored once;
and each token's salted HMAC (``token_check``, NULL until the token's first use after the upgrade:
a cheap check, so that no limit turns a call away before its secret is looked at)."""


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
    attempts: int = 0
    upload_key: str | None = None
    """The name the client gave the upload (the same on each retry of it); None: none given."""


@dataclass(frozen=True)
class BotClaim:
    """Who holds a bot name, and what the organiser said about it."""

    bot_name: str
    author: str | None
    """None: the organiser's (a house bot)."""
    created_at: str
    note: str = ""
    """The organiser's reason for a withdrawal or a ban (the author reads it)."""
    banned_at: str | None = None

    @property
    def owner(self) -> str:
        return self.author or HOUSE


def check_name(kind: str, name: str) -> str:
    """``name`` if it is a valid author or bot name (take5_arena/referee/names.py), else
    BadRequestError saying what is valid."""
    problem = name_problem(kind, name)
    if problem is not None:
        raise BadRequestError(problem)
    return name


def _hash(secret: str, salt: bytes) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", secret.encode(), salt, PBKDF2_ITERATIONS)


def _check(secret: str, salt: bytes) -> bytes:
    """A token's check: enough for a 256-bit random secret, and cheap (module text)."""
    return hmac.new(salt, secret.encode(), hashlib.sha256).digest()


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
        self.upgrade_backup: Path | None = _backup_before_migration(self.path)
        """Where the accounts were copied before this open migrated them (None: no migration)."""
        fresh = not self.path.exists()
        self.lock = threading.RLock()
        try:
            self.db = _connect(self.path)
            try:
                with self.tx() as db:
                    _create(db)
            except BaseException:
                self.db.close()
                raise
        except BaseException:
            if fresh:  # made by this open and never filled (a full disk): no empty file is left
                for leftover in ("", "-wal", "-shm"):
                    with suppress(OSError):  # (a read-only disk made none)
                        Path(f"{self.path}{leftover}").unlink(missing_ok=True)
            raise
        # token id -> (stored hash, the token that matched it): a token checked once is not hashed
        # again while its row is unchanged (a new token or a revocation changes what is compared)
        self._verified: dict[str, tuple[bytes, str]] = {}
        self._failed_at: dict[str, float] = {}

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
            return {name for name, active in store.versions.entrant_states().items() if active}

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
        check = _check(secret, salt)
        with self.tx() as db:
            exists = db.execute("SELECT 1 FROM arena_authors WHERE name = ?", (name,)).fetchone()
            if exists and not new_token:
                raise BadRequestError(f"author {name!r} exists (--new-token replaces the token)")
            if exists:
                db.execute(
                    "UPDATE arena_authors SET token_id = ?, salt = ?, token_hash = ?,"
                    " token_check = ?,"
                    " revoked_at = NULL, max_active_bots = ?, max_submissions_per_hour = ?,"
                    " max_archive_bytes = ?,"
                    " max_stored_bytes = ? WHERE name = ?",
                    (
                        token_id,
                        salt,
                        digest,
                        check,
                        limits.max_active_bots,
                        limits.max_submissions_per_hour,
                        limits.max_archive_bytes,
                        limits.max_stored_bytes,
                        name,
                    ),
                )
            else:
                db.execute(
                    "INSERT INTO arena_authors(name, token_id, salt, token_hash, token_check,"
                    " created_at, max_active_bots, max_submissions_per_hour, max_archive_bytes,"
                    " max_stored_bytes)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        name,
                        token_id,
                        salt,
                        digest,
                        check,
                        now(),
                        limits.max_active_bots,
                        limits.max_submissions_per_hour,
                        limits.max_archive_bytes,
                        limits.max_stored_bytes,
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
                row["max_active_bots"],
                row["max_submissions_per_hour"],
                row["max_archive_bytes"],
                row["max_stored_bytes"],
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
        """The author whose token this is, or AuthenticationError.

        Every secret is checked, cheaply (one HMAC against the row's ``token_check``), so a
        correct token is never refused for someone else's wrong ones; a malformed token or an
        unknown token id is refused without even that. A token made before its row had a check
        goes the old way until its first use stores it: a token already verified against its
        row's unchanged hash is not hashed again, and after a wrong secret the same token id is
        not hashed again for :data:`defaults.AUTH_RETRY_SECONDS`.
        """
        if not token:
            raise AuthenticationError("no token: pass --token-file or set TAKE5_TOKEN")
        split = _split_token(token)
        if split is None:
            raise AuthenticationError("the token is not valid")
        token_id, secret = split
        rows = self._read("SELECT * FROM arena_authors WHERE token_id = ?", (token_id,))
        if not rows:
            raise AuthenticationError("the token is not valid")
        row = rows[0]
        if row["token_check"] is not None:
            if not hmac.compare_digest(_check(secret, row["salt"]), row["token_check"]):
                raise AuthenticationError("the token is not valid")
            if row["revoked_at"] is not None:
                raise AuthenticationError("the token was revoked")
            return self._author(row)
        known = self._verified.get(token_id)
        if (
            known is None
            or known[0] != row["token_hash"]
            or not hmac.compare_digest(known[1], token)
        ):
            failed = self._failed_at.get(token_id)
            if failed is not None and time.monotonic() - failed < defaults.AUTH_RETRY_SECONDS:
                raise AuthenticationError("the token is not valid")
            if not hmac.compare_digest(_hash(secret, row["salt"]), row["token_hash"]):
                self._failed_at[token_id] = time.monotonic()
                raise AuthenticationError("the token is not valid")
            self._failed_at.pop(token_id, None)
            self._verified[token_id] = (row["token_hash"], token)
            with self.tx() as db:  # from now on, checked the cheap way
                db.execute(
                    "UPDATE arena_authors SET token_check = ? WHERE token_id = ? AND salt = ?"
                    " AND token_hash = ?",
                    (_check(secret, row["salt"]), token_id, row["salt"], row["token_hash"]),
                )
        if row["revoked_at"] is not None:
            raise AuthenticationError("the token was revoked")
        return self._author(row)

    # -- bots ------------------------------------------------------------------------------------

    @staticmethod
    def _claim(row: sqlite3.Row) -> BotClaim:
        return BotClaim(
            row["bot_name"], row["author"], row["created_at"], row["note"], row["banned_at"]
        )

    def claim_of(self, bot_name: str) -> BotClaim | None:
        """Who holds ``bot_name`` or a name that differs from it only in case; a name the store
        has as an entrant and no author claimed is the house's."""
        rows = self._read("SELECT * FROM arena_bots WHERE name_key = ?", (name_key(bot_name),))
        if rows:
            return self._claim(rows[0])
        house = self._house_name(bot_name)
        return BotClaim(house, None, "") if house is not None else None

    def _check_unlike(self, bot_name: str) -> None:
        """PermissionDeniedError if a new name looks like a name held already, by anyone
        (take5_arena/referee/names.py, :func:`look_alike`): ``alicebot.`` beside ``alicebot``."""
        form = look_alike(bot_name)
        with Store(self.directory, readonly=True) as store:
            held = [*store.versions.entrant_states()]
        held += [r[0] for r in self._read("SELECT bot_name FROM arena_bots")]
        for name in held:
            if name_key(name) != name_key(bot_name) and look_alike(name) == form:
                raise PermissionDeniedError(
                    f"the bot name {bot_name!r} looks like {name!r}, which is taken: choose another"
                )

    def _house_name(self, bot_name: str) -> str | None:
        """The store's entrant whose name has ``bot_name``'s key, if any."""
        key = name_key(bot_name)
        with Store(self.directory, readonly=True) as store:
            return next((n for n in store.versions.entrant_states() if name_key(n) == key), None)

    def owner(self, bot_name: str) -> str | None:
        """The author who holds ``bot_name`` (:data:`HOUSE` for the organiser's), or None."""
        claim = self.claim_of(bot_name)
        return claim.owner if claim is not None else None

    def check_owner(self, author: Author, bot_name: str, *, must_exist: bool = True) -> BotClaim:
        """The author's claim on ``bot_name``; PermissionDeniedError if someone else holds it."""
        claim = self.claim_of(bot_name)
        if claim is None:
            if must_exist:
                raise NotFoundError(f"you have no bot named {bot_name!r}")
            return BotClaim(bot_name, author.name, "")
        if claim.author != author.name:
            whose = "the organiser" if claim.author is None else "another author"
            raise PermissionDeniedError(f"the bot name {claim.bot_name!r} belongs to {whose}")
        if claim.bot_name != bot_name and must_exist:
            raise NotFoundError(f"you have no bot named {bot_name!r} (you have {claim.bot_name!r})")
        return claim

    def claims(self) -> list[BotClaim]:
        """Every claimed bot name, by name (the house's noted ones included)."""
        return [self._claim(r) for r in self._read("SELECT * FROM arena_bots ORDER BY bot_name")]

    def bots_of(self, author: str) -> list[str]:
        return [
            r[0]
            for r in self._read(
                "SELECT bot_name FROM arena_bots WHERE author = ? ORDER BY bot_name", (author,)
            )
        ]

    def claims_of(self, author: str) -> list[BotClaim]:
        return [
            self._claim(r)
            for r in self._read(
                "SELECT * FROM arena_bots WHERE author = ? ORDER BY bot_name", (author,)
            )
        ]

    def claim(self, author: str, bot_name: str) -> None:
        """Claim ``bot_name`` for ``author`` (a version of it was accepted). PermissionDeniedError
        if another author, or the house, holds it or a name equal to it but for case."""
        with self.tx() as db:
            row = db.execute(
                "SELECT author, bot_name FROM arena_bots WHERE name_key = ?", (name_key(bot_name),)
            ).fetchone()
            if row is not None:
                if row[0] != author or row[1] != bot_name:
                    raise PermissionDeniedError(f"the bot name {row[1]!r} is taken")
                return
            house = self._house_name(bot_name)
            if house is not None and house != bot_name:
                raise PermissionDeniedError(f"the bot name {house!r} is taken")
            self._check_unlike(bot_name)
            db.execute(
                "INSERT INTO arena_bots(bot_name, name_key, author, created_at)"
                " VALUES (?, ?, ?, ?)",
                (bot_name, name_key(bot_name), author, now()),
            )

    def set_note(self, bot_name: str, note: str, *, ban: bool | None = None) -> None:
        """The organiser's note on a bot (why it was withdrawn), and whether it is banned (None:
        unchanged). A house bot gets a row of its own (author NULL) to hold it."""
        claim = self.claim_of(bot_name)
        if claim is None:
            raise NotFoundError(f"no bot named {bot_name!r}")
        with self.tx() as db:
            db.execute(
                "INSERT OR IGNORE INTO arena_bots(bot_name, name_key, author, created_at)"
                " VALUES (?, ?, NULL, ?)",
                (claim.bot_name, name_key(claim.bot_name), now()),
            )
            db.execute(
                "UPDATE arena_bots SET note = ? WHERE bot_name = ?",
                (note[: defaults.DETAIL_CHARS], claim.bot_name),
            )
            if ban is not None:
                db.execute(
                    "UPDATE arena_bots SET banned_at = ? WHERE bot_name = ?",
                    (now() if ban else None, claim.bot_name),
                )

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
        return sorted({n for n in self.bots_of(author) if n in playing} | waiting)

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
        claim = self.claim_of(bot_name)
        if claim is not None and claim.author != author.name:
            whose = "the organiser" if claim.author is None else "another author"
            raise PermissionDeniedError(f"the bot name {claim.bot_name!r} belongs to {whose}")
        if claim is not None and claim.bot_name != bot_name:
            raise BadRequestError(
                f"you have this bot as {claim.bot_name!r}: names differ only in case are one name"
            )
        if claim is not None and claim.banned_at is not None:
            raise PermissionDeniedError(
                f"the organiser banned {bot_name!r}: {claim.note or 'no reason given'}"
            )
        if claim is None:
            self._check_unlike(bot_name)
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
        waiting, stored = db.execute(
            "SELECT COALESCE(SUM(status IN ('received', 'validating')), 0),"
            " COALESCE(SUM(CASE WHEN status IN ('received', 'validating', 'accepted')"
            " THEN archive_bytes ELSE 0 END), 0) FROM arena_submissions WHERE author = ?",
            (author.name,),
        ).fetchone()
        if waiting >= defaults.MAX_WAITING_PER_AUTHOR:
            raise LimitExceededError(
                f"you have {waiting} submissions waiting to be validated; wait for their outcome"
            )
        if stored + archive_bytes > author.limits.max_stored_bytes:
            raise LimitExceededError(
                f"the arena keeps {stored} bytes of your bots; with {archive_bytes} more it would "
                f"pass your limit of {author.limits.max_stored_bytes}"
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
        upload_key: str | None = None,
    ) -> SubmissionRow:
        """Commit a fully received upload (the limits checked again). The name is not claimed:
        that happens when a version of it is accepted (:meth:`claim`). An ``upload_key`` this
        author used before: the submission it named, and nothing is recorded (:meth:`uploaded`)."""
        sid = f"s-{datetime.now(timezone.utc).strftime('%Y%m%d%H%M%S')}-{secrets.token_hex(4)}"
        with self.tx() as db:
            # in the writing transaction: two uploads of one key at once record one of them
            first = self.uploaded(author, upload_key, bot_name, archive_sha256)
            if first is not None:
                return first
            self._check_can_submit(db, author, bot_name, archive_bytes)
            db.execute(
                "INSERT INTO arena_submissions(id, author, bot_name, archive_sha256, archive_path,"
                " archive_bytes, received_at, status, upload_key)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, 'received', ?)",
                (
                    sid,
                    author.name,
                    bot_name,
                    archive_sha256,
                    archive_path,
                    archive_bytes,
                    now(),
                    upload_key,
                ),
            )
        return self.submission(sid)

    def uploaded(
        self, author: Author, upload_key: str | None, bot_name: str, archive_sha256: str
    ) -> SubmissionRow | None:
        """The submission ``author`` recorded under ``upload_key`` (None: none, or no key): a
        retried upload gets the first one's answer. A key that named another bot or archive is a
        BadRequestError: a client names each upload once."""
        if not upload_key:
            return None
        rows = self._read(
            "SELECT * FROM arena_submissions WHERE author = ? AND upload_key = ?",
            (author.name, upload_key),
        )
        if not rows:
            return None
        row = self._submission(rows[0])
        if row.bot_name != bot_name or row.archive_sha256 != archive_sha256:
            raise BadRequestError(
                "this upload key named another upload (another bot or archive): give each upload "
                "a key of its own"
            )
        return row

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

    def judged_with_archives(self) -> list[SubmissionRow]:
        """Judged submissions whose upload is still on disk (left by an older arena): removed."""
        rows = self._read(
            "SELECT * FROM arena_submissions WHERE status IN ('accepted', 'unchanged', 'refused')"
            " AND archive_path != ''"
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
        attempt: bool = False,
    ) -> None:
        """Set a submission's status; ``attempt``: one more validation attempt failed for the
        arena's own reasons (counted; the submission waits to be tried again)."""
        finished = now() if SubmissionStatus(status).finished else None
        with self.tx() as db:
            db.execute(
                "UPDATE arena_submissions SET status = ?, version_id = ?, detail = ?,"
                " bot_output = ?, finished_at = ?, attempts = attempts + ? WHERE id = ?",
                (
                    SubmissionStatus(status).value,
                    version_id,
                    detail[: defaults.DETAIL_CHARS],
                    bot_output[-defaults.OUTPUT_TAIL :],
                    finished,
                    int(attempt),
                    sid,
                ),
            )

    def forget_archive(self, sid: str) -> None:
        """The upload of a judged submission is gone from disk (its bytes no longer count)."""
        with self.tx() as db:
            db.execute(
                "UPDATE arena_submissions SET archive_path = '' WHERE id = ?",
                (sid,),
            )

    def last_refusal(self, bot_name: str, author: str) -> SubmissionRow | None:
        """The author's last refused submission of ``bot_name`` (a name need not be held to have
        been refused)."""
        rows = self._read(
            "SELECT * FROM arena_submissions WHERE bot_name = ? AND author = ?"
            " AND status = 'refused' ORDER BY received_at DESC LIMIT 1",
            (bot_name, author),
        )
        return self._submission(rows[0]) if rows else None

    def info(self) -> dict[str, int]:
        """Submissions per status."""
        rows = self._read("SELECT status, COUNT(*) FROM arena_submissions GROUP BY status")
        return {r[0]: r[1] for r in rows}


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


def _connect(path: Path) -> sqlite3.Connection:
    """The accounts' connection: the store's kind (take5_arena/referee/store/health.py), so that a
    full or read-only disk and a damaged file are one line, and a damaged file is never written;
    owner-only, whatever the umask (it holds token hashes)."""
    try:
        _owner_only(path)
    except OSError as error:  # a read-only or full disk, a folder not ours: one line, as the store
        raise os_fault(path, error) from None
    db: sqlite3.Connection = connect(path, readonly=False)
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


def _backup_before_migration(path: Path) -> Path | None:
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


def _create(db: sqlite3.Connection, *, migrate: bool = True) -> None:
    """The accounts' tables (inside the caller's transaction), moved on to the current schema
    version by :data:`MIGRATIONS` (``migrate=False``: left at version 1, for a copy of old
    tables)."""
    for statement in SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
    version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if version is None:
        db.execute(
            "INSERT INTO meta(key, value) VALUES ('schema_version', '1'), ('created_at', ?)",
            (now(),),
        )
        current = 1
    else:
        current = int(version[0])
    if current > SCHEMA_VERSION:  # made newer since _backup_before_migration read it
        raise ServiceError(newer_schema(ACCOUNTS_NAME, current, SCHEMA_VERSION, knower="arena"))
    if not migrate:
        return
    for target in range(current + 1, SCHEMA_VERSION + 1):
        for statement in MIGRATIONS[target].split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute(
            "UPDATE meta SET value = ? WHERE key = 'schema_version'",
            (str(target),),
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
        _create(db, migrate=False)
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
    "HOUSE",
    "MIGRATIONS",
    "PBKDF2_ITERATIONS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "TOKEN_PREFIX",
    "Accounts",
    "Author",
    "BotClaim",
    "Limits",
    "SubmissionRow",
    "SubmissionStatus",
    "check_name",
    "unfinished_uploads",
]
