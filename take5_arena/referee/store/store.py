"""The tournament store: one SQLite database in the tournament's directory, the source of truth
(or one PostgreSQL database, which ``DIR/store.url`` names: an arena of several hosts,
postgres.py and docs/operators/several-hosts.md).

It holds the settings, the entrants and their versions, the schedules (which games, in which order),
every scheduled game with its status, every finished game with its full record and per-seat results,
the infrastructure failures and the runs of the referee. WAL mode, foreign keys on.

:class:`Store` opens the file (creating it, or migrating an older one: take5_arena/referee/store/
schema.py), and hands out one repository per concern, each owning its tables and every statement
on them, all over the store's one connection, which stays private::

    store.settings    the tournament's settings and notes (meta)          settings.py
    store.deal_keys   deal keys, abandoned games                          deal_keys.py
    store.versions    entrants and their versions                         versions.py
    store.schedules   schedules and their games                           schedules.py
    store.records     the records, and which are published yet            records.py
    store.results     recording a game: results, seats, output budgets,   results.py
                      infrastructure failures; the results read back
    store.runs        the referee's runs and heartbeats                   runs.py
    store.audit       every table's raw rows, for verify (reads only)     audit.py
    store.live        games in progress, for other processes' pages       live.py
                      (PostgreSQL only: not the record)
    store.archives    the bots' archives: this host's artifacts/ and, on  archives.py
                      PostgreSQL, the database (every host gets them)

Every finished game is written in one transaction (:meth:`.Results.record_game`: the record, the
seats, the game's status), and ``results.game_id`` is UNIQUE, so a game can never be recorded
twice, and a referee killed at any moment (SIGKILL included) leaves either the whole game or none
of it.

Only the referee's main process writes (games run elsewhere and send their records back); readers
such as ``referee tournament status`` or the leaderboard may open the same file at any time.

"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

from ..artifacts import FOLDER
from .archives import Archives
from .audit import Audit
from .base import Connection, StoreError, Transaction, meta, now, set_meta
from .deal_keys import DealKeys
from .health import check, connect, synchronous
from .live import Live
from .postgres import PgConnection, is_url, redacted
from .postgres import create_tables as create_postgres_tables
from .records import Records
from .results import Results
from .runs import Runs
from .schedules import Schedules
from .schema import (
    DB_NAME,
    SCHEMA_VERSION,
    create_tables,
    migrate,
    newer_schema,
    schema_version,
    shim_older_schema,
)
from .settings import Settings
from .snapshot import copy_before_migration
from .versions import Versions

log = logging.getLogger(__name__)

URL_NAME = "store.url"
"""The file of a tournament directory whose store is on a PostgreSQL server: its URL, one line,
readable by its owner only (it may hold a password); then, for a store in a schema of its own
(another competition of an arena: take5_arena/service/competitions.py), a line ``schema NAME``."""
_SCHEMA_LINE = "schema "


def has_store(directory: Path) -> bool:
    """Whether ``directory`` is a tournament directory: its SQLite file, or its PostgreSQL URL."""
    return (directory / DB_NAME).is_file() or (directory / URL_NAME).is_file()


def read_pointer(directory: Path) -> tuple[str, str | None] | None:
    """What ``directory/store.url`` says: the database's URL and the store's schema (None: the
    database's default); None without the file."""
    pointer = directory / URL_NAME
    try:
        lines = pointer.read_text().split("\n")
    except FileNotFoundError:
        return None
    except OSError as error:
        raise StoreError(f"{pointer} cannot be read: {error.strerror}") from error
    url, *rest = [line.strip() for line in lines if line.strip()] or [""]
    schema = None
    for line in rest:
        if not line.startswith(_SCHEMA_LINE) or not line[len(_SCHEMA_LINE) :].strip():
            raise StoreError(f"{pointer}: {line[:60]!r} is no line `schema NAME`")
        schema = line[len(_SCHEMA_LINE) :].strip()
    return (url, schema) if url else None


def write_pointer(directory: Path, url: str, schema: str | None, *, replace: bool = False) -> None:
    """Write ``directory/store.url`` (owner-only), naming ``url`` and ``schema``: a new file, or
    with ``replace`` one that replaces the old whole (a reader sees the old or the new)."""
    text = url + "\n" + ("" if schema is None else f"{_SCHEMA_LINE}{schema}\n")
    target = directory / URL_NAME
    path = target.with_name(f".{URL_NAME}.{os.getpid()}") if replace else target
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    if replace:
        os.replace(path, target)


def store_location(
    directory: Path, url: str | None = None, *, create: bool = False, schema: str | None = None
) -> tuple[str, str | None] | None:
    """The PostgreSQL URL and schema of the store of ``directory`` (None: SQLite): ``url`` and
    ``schema`` when given (with ``create``, written into ``directory/store.url``), else what that
    file says (``url`` alone, the URL it names: its schema)."""
    kept = read_pointer(directory)
    if url is None:
        return kept
    if not is_url(url):
        raise StoreError(f"--store {url!r} is not a URL postgresql://... (a path: --tournament)")
    # the same database names it (its schema: the one kept)
    if kept is not None and (kept[0] != url or (schema is not None and kept[1] != schema)):
        where = redacted(kept[0]) + ("" if kept[1] is None else f", schema {kept[1]}")
        raise StoreError(f"{directory} keeps its store elsewhere ({where})")
    if (directory / DB_NAME).exists():
        raise StoreError(f"{directory} already keeps its store in {DB_NAME}")
    if kept is not None:
        return kept
    if not create:
        raise StoreError(f"{directory} is not a tournament directory (no {URL_NAME})")
    directory.mkdir(parents=True, exist_ok=True)
    write_pointer(directory, url, schema)
    return url, schema


def store_url(directory: Path, url: str | None = None, *, create: bool = False) -> str | None:
    """The PostgreSQL URL of the store of ``directory`` (None: SQLite): ``url`` when given (with
    ``create``, written into ``directory/store.url``), else what that file holds."""
    location = store_location(directory, url, create=create)
    return None if location is None else location[0]


class Store:
    """A tournament's database. ``Store(dir)`` opens (and with ``create=True`` creates) it: the
    SQLite file ``dir/tournament.sqlite``, or the PostgreSQL database named by ``dir/store.url``
    (written when the store is created with ``url=``: `referee submit --store postgresql://...`),
    in the schema it names (``schema=`` when created: another competition of an arena)."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        create: bool = False,
        readonly: bool = False,
        url: str | None = None,
        schema: str | None = None,
    ):
        self.directory = Path(directory)
        self.path = self.directory / DB_NAME
        self.upgrade_backup: Path | None = None
        """Where the store was copied before this open migrated it (None: no migration)."""
        location = store_location(self.directory, url, create=create, schema=schema)
        self.url = None if location is None else location[0]
        """The PostgreSQL database the store is in (None: the SQLite file :attr:`path`)."""
        self.schema = None if location is None else location[1]
        """The schema of that database the store is in (None: its default, ``public``)."""
        if self.url is not None:
            self.path = self.directory / URL_NAME
            self._db: Connection = self._open_postgres(self.url, readonly=readonly)
            self._repositories()
            return
        if not self.path.exists():
            if not create:
                raise StoreError(
                    f"{self.directory} is not a tournament directory (no {DB_NAME}); "
                    "`referee submit BOT_DIR --name NAME --tournament DIR` creates one"
                )
            self.directory.mkdir(parents=True, exist_ok=True)
        # health.py: the host's faults (a full or read-only disk, a damaged file) in one line
        db = connect(self.path, readonly=readonly)
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("PRAGMA busy_timeout = 30000")
        self._db = db
        self._repositories()
        found = schema_version(self._db)
        if found is not None and found > SCHEMA_VERSION:
            self._db.close()
            raise StoreError(newer_schema(self.path, found))
        if readonly:
            shim_older_schema(self._db)
        if not readonly:
            if found is not None and found < SCHEMA_VERSION:
                self.upgrade_backup = self._backup_before_migration(found)
            db.execute("PRAGMA journal_mode = WAL")
            # WAL: NORMAL durable at checkpoints and never torn, FULL at every commit (serve)
            db.execute(f"PRAGMA synchronous = {synchronous()}")
            self._create_or_migrate(create_tables)

    def _repositories(self) -> None:
        #: the repositories, one per concern, each owning its tables (the module's docstring)
        self.settings = Settings(self._db)
        self.deal_keys = DealKeys(self._db)
        self.versions = Versions(self._db)
        self.schedules = Schedules(self._db)
        self.records = Records(self._db)
        self.runs = Runs(self._db)
        self.results = Results(self._db, self.schedules, self.records)
        self.audit = Audit(self._db)
        self.live = Live(self._db)
        self.archives = Archives(self._db, self.directory / FOLDER)

    def _create_or_migrate(self, create: Callable[[Connection], None]) -> None:
        """In one write transaction: create what is missing, stamp a new store, migrate an older
        one (schema.py), refuse one made newer since it was first read."""
        with Transaction(self._db) as db:
            create(db)
            version = meta(db, "schema_version")
            if version is None:
                set_meta(db, "schema_version", str(SCHEMA_VERSION))
                set_meta(db, "created_at", now())
            elif int(version) > SCHEMA_VERSION:  # made newer since it was first read
                raise StoreError(newer_schema(self.path, int(version)))
            elif int(version) < SCHEMA_VERSION:
                migrate(db, int(version))

    def _open_postgres(self, url: str, *, readonly: bool) -> Connection:
        """The store's database on a PostgreSQL server (postgres.py); its tables made or
        migrated when opened for writing (under the store's write lock: several referees may
        open it at once)."""
        db = PgConnection(url, readonly=readonly, schema=self.schema)
        where = redacted(url) + ("" if self.schema is None else f" (schema {self.schema})")
        try:
            found = schema_version(db)
            if found is not None and found > SCHEMA_VERSION:
                raise StoreError(newer_schema(where, found))
            if found is None and readonly:
                raise StoreError(
                    f"{where} holds no tournament store yet: open it for writing "
                    "(`referee submit ... --store URL`) to make one"
                )
            if not readonly and found != SCHEMA_VERSION:
                self._db = db
                self._create_or_migrate(create_postgres_tables)
        except BaseException:
            db.close()
            raise
        return db

    def _backup_before_migration(self, version: int) -> Path:
        """Copy the store, as the older release left it, to ``tournament.schema-vN.sqlite``
        beside it (owner-only, SQLite's online backup API) before migrating it: going back to
        that release means stopping the referee and putting this copy back in place."""
        target = copy_before_migration(self.path, version)
        log.warning(
            "%s has schema version %d, made by an older release: migrating it to %d; the store "
            "as it was is in %s",
            self.path,
            version,
            SCHEMA_VERSION,
            target,
        )
        return target

    # -- plumbing ------------------------------------------------------------------------------

    def check(self) -> None:
        """Check the whole file now (SQLite's quick_check): a damaged store raises
        StoreDamagedError and is marked so that nothing writes into it again (health.py). Opening
        checks a store before its first write; this is the operator's look at any moment
        (`referee tournament status`). A PostgreSQL server checks its own pages (and says so in
        its log): here, that it answers."""
        if isinstance(self._db, sqlite3.Connection):
            check(self._db, self.path)
        else:
            self._db.execute("SELECT COUNT(*) FROM meta").fetchone()

    def transaction(self) -> contextlib.AbstractContextManager[object]:
        """``with store.transaction():`` the repositories' writes inside commit together or not at
        all (each joins this one transaction, on either database): a version entered with the
        games that rate it (take5_arena/referee/tournament/submission.py), never one without the
        other, however the process ends."""
        return Transaction(self._db, outer=True)

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """``with store.snapshot():`` every read inside sees the store as it was at the first one
        (SQLite: a deferred read transaction; PostgreSQL: REPEATABLE READ), whatever other
        processes write meanwhile; writers are never blocked. For reads that must agree with each
        other: the integrity checks compare several tables, and a game recorded between two of
        their reads looked like a deleted or half-written one (a live arena's publications were
        refused about one time in 25 while its ladder played). Not for writes: a repository's
        write inside fails, as a transaction inside a transaction does."""
        self._db.execute("BEGIN")
        try:
            yield
        finally:
            if self._db.in_transaction:
                self._db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
