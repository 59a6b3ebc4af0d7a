"""The tournament store: one SQLite database in the tournament's directory, the source of truth.

It holds the settings, the entrants and their versions, the schedules (which games, in which order),
every scheduled game with its status, every finished game with its full record and per-seat results,
the infrastructure failures and the runs of the referee. WAL mode, foreign keys on.

Every finished game is written in one transaction (:meth:`Store.record_game`: the record, the seats,
the game's status), and ``results.game_id`` is UNIQUE, so a game can never be recorded twice, and a
referee killed at any moment (SIGKILL included) leaves either the whole game or none of it.

Only the referee's main process writes (games run elsewhere and send their records back); readers
such as ``referee tournament status`` or the leaderboard may open the same file at any time.

Schema (version 3). An older store gains the new columns and tables when opened for writing
(:meth:`Store._migrate`, in the transaction that opens it), after a copy of it as it was is kept
beside it (``tournament.schema-vN.sqlite``); a newer one is refused (:func:`newer_schema`).
tests/test_upgrade.py opens the golden stores of tests/data/ (scripts/make-golden-store.sh)::

    meta(key PK, value)                         schema_version, settings (JSON), created_at
    entrants(id PK, name UNIQUE, created_at, active, author (who the organiser says the entrant is
             from: the arena account that owns it, or `referee submit --author`; NULL: unknown))
    entrant_versions(id PK, entrant_id FK, version, source_hash, image_id, bot_dir, kind,
                     submitted_at, validation JSON, artifact (sha256:... of the validated source
                     archive in DIR/artifacts/; NULL for versions submitted before version 2),
                     UNIQUE(entrant_id, version), UNIQUE(entrant_id, source_hash))
    schedules(schedule_id PK, created_at, description, settings JSON, entrants JSON, games)
    schedule_games(schedule_id FK, position, game_id FK, PK(schedule_id, position))
    games(game_id PK, table_no, rotation, deal_seed, duplicate_set, seats JSON (version ids by
          seat), settings JSON (game settings), status 'pending'|'done', attempts, last_error,
          scheduled_at, deal_season (the deal key that dealt it, NULL: a public seed), deal_id
          (the identity the key's HMAC was taken of))
    abandoned_games(game_id PK FK, season, at)   games given up when their deal key was revealed
    deal_keys(season PK, commitment, created_at, key (hex, NULL until revealed), revealed_at)
        the tournament's deal keys (docs/security.md, "Deals"). The secret key of the current
        season is not in the store but in DIR/secret/ (take5_arena/referee/store/deals.py), and
        a game dealt from a secret key keeps its seed out of the store (deal_seed 0) until it is
        recorded: the store never holds what would predict a game still to be played
    results(seq PK AUTOINCREMENT, game_id UNIQUE FK, record JSON, finished_at, seconds, run_id)
    seat_results(game_id FK, seat, version_id FK, score, place, forfeited, faults JSON,
                 PK(game_id, seat))
    infra_failures(id PK, game_id, run_id, at, kind, detail)
    runs(run_id PK, pid, host, started_at, heartbeat_at, ended_at, status, settings JSON, games,
         done)
    bot_output(game_id, seat, version_id, bytes, dropped, PK(game_id, seat))   bot output kept in
        each record's turns (`logs`), per seat: the per-bot budget's accounting
        (:meth:`Store.record_game`)
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, cast

from take5.record import GameRecord

from ..errors import RefereeError

SCHEMA_VERSION = 3
log = logging.getLogger(__name__)
DB_NAME = "tournament.sqlite"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS entrants (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    active INTEGER NOT NULL DEFAULT 1,
    author TEXT
);
CREATE TABLE IF NOT EXISTS entrant_versions (
    id INTEGER PRIMARY KEY,
    entrant_id INTEGER NOT NULL REFERENCES entrants(id),
    version INTEGER NOT NULL,
    source_hash TEXT NOT NULL,
    image_id TEXT,
    bot_dir TEXT NOT NULL,
    kind TEXT NOT NULL,
    submitted_at TEXT NOT NULL,
    validation TEXT NOT NULL DEFAULT '{}',
    artifact TEXT,
    UNIQUE (entrant_id, version),
    UNIQUE (entrant_id, source_hash)
);
CREATE TABLE IF NOT EXISTS schedules (
    schedule_id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    description TEXT NOT NULL,
    settings TEXT NOT NULL,
    entrants TEXT NOT NULL,
    games INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    game_id TEXT PRIMARY KEY,
    table_no INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    deal_seed INTEGER NOT NULL,
    duplicate_set TEXT NOT NULL,
    seats TEXT NOT NULL,
    settings TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done')),
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    scheduled_at TEXT NOT NULL,
    deal_season INTEGER,
    deal_id TEXT
);
CREATE INDEX IF NOT EXISTS games_duplicate_set ON games(duplicate_set, status);
CREATE TABLE IF NOT EXISTS abandoned_games (
    game_id TEXT PRIMARY KEY REFERENCES games(game_id),
    season INTEGER,
    at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS deal_keys (
    season INTEGER PRIMARY KEY,
    commitment TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    key TEXT,
    revealed_at TEXT
);
CREATE TABLE IF NOT EXISTS schedule_games (
    schedule_id TEXT NOT NULL REFERENCES schedules(schedule_id),
    position INTEGER NOT NULL,
    game_id TEXT NOT NULL REFERENCES games(game_id),
    PRIMARY KEY (schedule_id, position)
);
CREATE INDEX IF NOT EXISTS schedule_games_game ON schedule_games(game_id);
CREATE TABLE IF NOT EXISTS results (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id TEXT NOT NULL UNIQUE REFERENCES games(game_id),
    record TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    seconds REAL,
    run_id TEXT
);
CREATE TABLE IF NOT EXISTS seat_results (
    game_id TEXT NOT NULL REFERENCES results(game_id),
    seat INTEGER NOT NULL,
    version_id INTEGER NOT NULL REFERENCES entrant_versions(id),
    score INTEGER NOT NULL,
    place INTEGER NOT NULL,
    forfeited INTEGER NOT NULL,
    faults TEXT NOT NULL,
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX IF NOT EXISTS seat_results_version ON seat_results(version_id);
CREATE TABLE IF NOT EXISTS infra_failures (
    id INTEGER PRIMARY KEY,
    game_id TEXT NOT NULL,
    run_id TEXT,
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    pid INTEGER,
    host TEXT,
    started_at TEXT NOT NULL,
    heartbeat_at TEXT,
    ended_at TEXT,
    status TEXT NOT NULL,
    schedule_id TEXT,
    settings TEXT NOT NULL DEFAULT '{}',
    games INTEGER NOT NULL DEFAULT 0,
    done INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS bot_output (
    game_id TEXT NOT NULL REFERENCES results(game_id),
    seat INTEGER NOT NULL,
    version_id INTEGER NOT NULL REFERENCES entrant_versions(id),
    bytes INTEGER NOT NULL,
    dropped INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX IF NOT EXISTS bot_output_version ON bot_output(version_id, game_id);
"""


class StoreError(RefereeError):
    """The store cannot do what was asked (not a tournament directory, a newer schema, ...)."""


class WithheldError(StoreError):
    """A recorded game that is not published yet: its deal has rotations still to play."""


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class EntrantVersion:
    id: int
    name: str
    version: int
    source_hash: str
    image_id: str | None
    bot_dir: str
    kind: str
    submitted_at: str
    validation: dict[str, Any]
    artifact: str | None = None
    """The digest of the validated source archive (what plays); None: submitted before archives."""
    author: str | None = None
    """Who the organiser says the entrant is from (the arena account that owns it, or
    ``referee submit --author``); None: not known. Two versions of one entrant share it."""

    @property
    def key(self) -> str:
        """The id of this version in schedules: ``name@version``."""
        return f"{self.name}@{self.version}"


@dataclass(frozen=True)
class StoredGame:
    game_id: str
    table_no: int
    rotation: int
    deal_seed: int
    duplicate_set: str
    seats: tuple[int, ...]  # entrant version ids by seat
    settings: dict[str, Any]
    status: str
    attempts: int
    last_error: str | None
    deal_season: int | None = None
    """The deal key that dealt the game (:meth:`Store.deal_seasons`); None: a public seed."""
    deal_id: str | None = None
    """What the key's HMAC was taken of (docs/record-format.md, "Deals")."""

    @property
    def sealed(self) -> bool:
        """A game dealt from a secret key and not recorded yet: its seed is not in the store
        (``deal_seed`` is 0) and comes from the key when it is played."""
        return self.deal_season is not None and self.status == "pending"


@dataclass(frozen=True)
class DealSeason:
    """One deal key of a tournament: its commitment from its start, the key once revealed."""

    season: int
    commitment: str
    created_at: str
    key: str | None = None
    """The key, 64 hex digits, once `referee tournament reveal` published it; None before."""
    revealed_at: str | None = None


@dataclass(frozen=True)
class ScheduleInfo:
    """A stored schedule (its games: :meth:`Store.schedule_games`)."""

    schedule_id: str
    created_at: str
    description: str
    games: int


@dataclass(frozen=True)
class VersionStats:
    """What an entrant version did so far: games recorded, faults committed in them."""

    games: int
    faults: int


@dataclass(frozen=True)
class Tally:
    """Counts over everything recorded up to a point (:meth:`Store.tally`): games, the faults in
    them by kind, and the infrastructure failures by kind. ``seq`` and ``infra_id`` mark the point,
    so that the next tally reads only what came after it (a metrics scrape costs what is new)."""

    seq: int = 0
    infra_id: int = 0
    games: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    infra: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class BotGame:
    """One published game of a bot, from its seat (:meth:`Store.bot_games`)."""

    game_id: str
    finished_at: str
    version_id: int
    place: int
    score: int
    faults: int
    seats: tuple[int, ...]
    """Every seat's version id, the bot's own included."""
    places: tuple[int, ...]


@dataclass(frozen=True)
class FaultedGame:
    """A recorded game in which a version committed a fault (:meth:`Store.faulted_games`)."""

    game_id: str
    seat: int
    version_id: int
    finished_at: str
    record: GameRecord


@dataclass(frozen=True)
class SeatResult:
    game_id: str
    seq: int
    duplicate_set: str
    versions: tuple[int, ...]
    scores: tuple[int, ...]
    places: tuple[int, ...]
    faults: tuple[tuple[str, ...], ...]


def newer_schema(
    path: Path | str, version: int, known: int = SCHEMA_VERSION, *, knower: str = "referee"
) -> str:
    """The one line that refuses a database made by a newer release: the store's own (this
    referee knows `SCHEMA_VERSION`) and the arena's accounts (``knower="arena"``, its own
    version)."""
    return (
        f"{path} has schema version {version}, made by a newer release; this {knower} knows "
        f"{known}: upgrade the referee (or restore the backup taken before the upgrade)"
    )


def upgrade_backup_path(path: Path, version: int, n: int = 1) -> Path:
    """Where the copy of a store of schema ``version`` is kept before it is migrated:
    ``tournament.schema-v2.sqlite`` beside ``tournament.sqlite`` (``-2``, ... if that exists)."""
    suffix = "" if n == 1 else f"-{n}"
    return path.with_name(f"{path.stem}.schema-v{version}{suffix}{path.suffix}")


class Store:
    """A tournament's database. ``Store(dir)`` opens (and with ``create=True`` creates) it."""

    def __init__(
        self, directory: str | os.PathLike[str], *, create: bool = False, readonly: bool = False
    ):
        self.directory = Path(directory)
        self.path = self.directory / DB_NAME
        if not self.path.exists():
            if not create:
                raise StoreError(
                    f"{self.directory} is not a tournament directory (no {DB_NAME}); "
                    "`referee submit BOT_DIR --name NAME --tournament DIR` creates one"
                )
            self.directory.mkdir(parents=True, exist_ok=True)
        uri = f"file:{self.path}?mode=ro" if readonly else str(self.path)
        self.db = sqlite3.connect(
            uri, uri=readonly, timeout=30.0, isolation_level=None, check_same_thread=False
        )
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA foreign_keys = ON")
        self.db.execute("PRAGMA busy_timeout = 30000")
        found = self._schema_version()
        if found is not None and found > SCHEMA_VERSION:
            self.db.close()
            raise StoreError(newer_schema(self.path, found))
        self.upgrade_backup: Path | None = None
        """Where the store was copied before this open migrated it (None: no migration)."""
        if readonly:
            self._shim_older_schema()
        if not readonly:
            if found is not None and found < SCHEMA_VERSION:
                self.upgrade_backup = self._backup_before_migration(found)
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute(
                "PRAGMA synchronous = NORMAL"
            )  # WAL: durable at checkpoints, never torn
            with self.transaction():
                for statement in SCHEMA.split(";"):
                    if statement.strip():
                        self.db.execute(statement)
                version = self._meta("schema_version")
                if version is None:
                    self._set_meta("schema_version", str(SCHEMA_VERSION))
                    self._set_meta("created_at", now())
                elif int(version) > SCHEMA_VERSION:  # made newer since it was first read
                    raise StoreError(newer_schema(self.path, int(version)))
                elif int(version) < SCHEMA_VERSION:
                    self._migrate(int(version))

    def _schema_version(self) -> int | None:
        """The schema version the file holds (None: a new file, no tables yet)."""
        try:
            version = self._meta("schema_version")
        except sqlite3.OperationalError:  # no meta table: nothing was ever written
            return None
        return None if version is None else int(version)

    def _backup_before_migration(self, version: int) -> Path:
        """Copy the store, as the older release left it, to ``tournament.schema-vN.sqlite``
        beside it (owner-only, SQLite's online backup API) before migrating it: going back to
        that release means stopping the referee and putting this copy back in place."""
        from .backup import copy_before_migration  # (backup.py imports this module)

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

    def _shim_older_schema(self) -> None:
        """An older store opened read-only cannot be migrated: what later versions added is made
        to appear empty in this connection alone (TEMP views and tables shadow the file's), so that
        every query reads it as a store of this version would be read."""
        version = int(self._meta("schema_version") or SCHEMA_VERSION)
        if version >= SCHEMA_VERSION:
            return
        shims = []
        if version < 2:
            shims += [
                "CREATE TEMP VIEW entrant_versions AS SELECT *, NULL AS artifact"
                " FROM main.entrant_versions",
                "CREATE TEMP TABLE bot_output (game_id TEXT, seat INTEGER, version_id INTEGER,"
                " bytes INTEGER, dropped INTEGER)",
            ]
        if version < 3:
            shims += [
                "CREATE TEMP VIEW entrants AS SELECT *, NULL AS author FROM main.entrants",
                "CREATE TEMP VIEW games AS SELECT *, NULL AS deal_season, NULL AS deal_id"
                " FROM main.games",
                "CREATE TEMP TABLE abandoned_games (game_id TEXT, season INTEGER, at TEXT)",
                "CREATE TEMP TABLE deal_keys (season INTEGER, commitment TEXT, created_at TEXT,"
                " key TEXT, revealed_at TEXT)",
            ]
        for statement in shims:
            self.db.execute(statement)

    def _migrate(self, version: int) -> None:
        """Bring an older store up to :data:`SCHEMA_VERSION` (inside the opening transaction; new
        tables were created by SCHEMA already)."""
        if version < 2:
            self._add_column("entrant_versions", "artifact", "TEXT")
        if version < 3:  # authors, and games dealt from a deal key (their table: SCHEMA)
            self._add_column("entrants", "author", "TEXT")
            self._add_column("games", "deal_season", "INTEGER")
            self._add_column("games", "deal_id", "TEXT")
        self._set_meta("schema_version", str(SCHEMA_VERSION))

    def _add_column(self, table: str, column: str, kind: str) -> None:
        columns = {r[1] for r in self.db.execute(f"PRAGMA table_info({table})")}
        if column not in columns:
            self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")

    # -- plumbing ------------------------------------------------------------------------------

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    class _Tx:
        def __init__(self, db: sqlite3.Connection):
            self.db = db

        def __enter__(self) -> sqlite3.Connection:
            self.db.execute("BEGIN IMMEDIATE")
            return self.db

        def __exit__(
            self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object
        ) -> None:
            if exc_type is None:
                self.db.execute("COMMIT")
            else:
                self.db.execute("ROLLBACK")

    def transaction(self) -> _Tx:
        """``with store.transaction():`` - one atomic write (BEGIN IMMEDIATE ... COMMIT)."""
        return Store._Tx(self.db)

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def _set_meta(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def set_note(self, key: str, text: str | None) -> None:
        """A line a long-running part leaves for ``referee tournament status`` (None: cleared),
        e.g. the arena's ladder saying why it plays no table."""
        with self.transaction() as db:
            if text is None:
                db.execute("DELETE FROM meta WHERE key = ?", (f"note.{key}",))
            else:
                self._set_meta(f"note.{key}", text)

    def note(self, key: str) -> str | None:
        return self._meta(f"note.{key}")

    # -- settings ------------------------------------------------------------------------------

    def settings(self) -> dict[str, Any]:
        value = self._meta("settings")
        return json.loads(value) if value else {}

    def set_settings(self, settings: Mapping[str, Any]) -> None:
        with self.transaction():
            self._set_meta("settings", json.dumps(dict(settings), sort_keys=True))

    # -- deal keys -----------------------------------------------------------------------------

    def deal_seasons(self) -> list[DealSeason]:
        """The tournament's deal keys, oldest first (none: its deals come from a public seed).
        The last one whose key is not revealed deals the games scheduled now."""
        rows = self.db.execute("SELECT * FROM deal_keys ORDER BY season").fetchall()
        return [
            DealSeason(r["season"], r["commitment"], r["created_at"], r["key"], r["revealed_at"])
            for r in rows
        ]

    def begin_deal_season(self, season: int, commitment: str) -> str:
        """Commit to the key of deal season ``season`` (take5_arena/referee/store/deals.py makes
        the key and calls this once the key is safely on disk); the commitment the store holds
        for it afterwards (another process's, if it committed first)."""
        with self.transaction() as db:
            db.execute(
                "INSERT OR IGNORE INTO deal_keys(season, commitment, created_at) VALUES (?, ?, ?)",
                (season, commitment, now()),
            )
            row = db.execute(
                "SELECT commitment FROM deal_keys WHERE season = ?", (season,)
            ).fetchone()
        return str(row[0]) if row else ""

    def reveal_deal_season(self, season: int, key: str) -> None:
        """Publish the key of ``season`` (its games can then be checked by anyone)."""
        with self.transaction() as db:
            db.execute(
                "UPDATE deal_keys SET key = ?, revealed_at = ? WHERE season = ? AND key IS NULL",
                (key, now(), season),
            )

    def pending_in_season(self, season: int) -> list[str]:
        """The games dealt from season ``season``'s key that are not recorded yet."""
        rows = self.db.execute(
            "SELECT game_id FROM games WHERE deal_season = ? AND status = 'pending'"
            " AND game_id NOT IN (SELECT game_id FROM abandoned_games) ORDER BY game_id",
            (season,),
        )
        return [r[0] for r in rows]

    def abandon_pending(self, season: int) -> int:
        """Give up the games of ``season`` not recorded yet (before its key is revealed, which
        would make them predictable): they stay in their schedules, marked abandoned, and are never
        played; how many were abandoned."""
        with self.transaction() as db:
            return db.execute(
                "INSERT OR IGNORE INTO abandoned_games(game_id, season, at)"
                " SELECT game_id, deal_season, ? FROM games"
                " WHERE deal_season = ? AND status = 'pending'",
                (now(), season),
            ).rowcount

    # -- entrants ------------------------------------------------------------------------------

    def add_version(
        self,
        name: str,
        *,
        source_hash: str,
        bot_dir: str,
        kind: str,
        image_id: str | None = None,
        validation: Mapping[str, Any] | None = None,
        artifact: str | None = None,
        author: str | None = None,
    ) -> tuple[EntrantVersion, bool]:
        """Record a new version of entrant ``name`` (creating the entrant). Returns the version and
        whether it is new: the same source as an earlier version of this entrant gives that version
        (its image id updated). ``author``, when given, becomes the entrant's author."""
        with self.transaction() as db:
            row = db.execute("SELECT id FROM entrants WHERE name = ?", (name,)).fetchone()
            if row is None:
                entrant_id = db.execute(
                    "INSERT INTO entrants(name, created_at, author) VALUES (?, ?, ?)",
                    (name, now(), author),
                ).lastrowid
            else:
                entrant_id = row[0]
                db.execute(
                    "UPDATE entrants SET active = 1, author = COALESCE(?, author) WHERE id = ?",
                    (author, entrant_id),
                )
            old = db.execute(
                "SELECT id FROM entrant_versions WHERE entrant_id = ? AND source_hash = ?",
                (entrant_id, source_hash),
            ).fetchone()
            if old is not None:
                db.execute(
                    "UPDATE entrant_versions SET image_id = ?, validation = ?, bot_dir = ?,"
                    " artifact = COALESCE(?, artifact) WHERE id = ?",
                    (image_id, json.dumps(dict(validation or {})), bot_dir, artifact, old[0]),
                )
                created, version_id = False, old[0]
            else:
                number = db.execute(
                    "SELECT COALESCE(MAX(version), 0) + 1 FROM entrant_versions WHERE entrant_id "
                    "= ?",
                    (entrant_id,),
                ).fetchone()[0]
                version_id = db.execute(
                    "INSERT INTO entrant_versions(entrant_id, version, source_hash, image_id, "
                    "bot_dir, kind, submitted_at, validation, artifact) VALUES (?, ?, ?, ?, ?, ?, "
                    "?, ?, ?)",
                    (
                        entrant_id,
                        number,
                        source_hash,
                        image_id,
                        bot_dir,
                        kind,
                        now(),
                        json.dumps(dict(validation or {})),
                        artifact,
                    ),
                ).lastrowid
                created = True
        return self.version(version_id), created

    _VERSION_SQL = (
        "SELECT v.*, e.name, e.author FROM entrant_versions v"
        " JOIN entrants e ON e.id = v.entrant_id"
    )

    @staticmethod
    def _version(row: sqlite3.Row) -> EntrantVersion:
        return EntrantVersion(
            id=row["id"],
            name=row["name"],
            version=row["version"],
            source_hash=row["source_hash"],
            image_id=row["image_id"],
            bot_dir=row["bot_dir"],
            kind=row["kind"],
            submitted_at=row["submitted_at"],
            validation=json.loads(row["validation"] or "{}"),
            artifact=row["artifact"],
            author=row["author"],
        )

    def version(self, version_id: int) -> EntrantVersion:
        row = self.db.execute(f"{self._VERSION_SQL} WHERE v.id = ?", (version_id,)).fetchone()
        if row is None:
            raise StoreError(f"no entrant version {version_id}")
        return self._version(row)

    def versions(self) -> list[EntrantVersion]:
        """Every version of every entrant, by name and version."""
        rows = self.db.execute(f"{self._VERSION_SQL} ORDER BY e.name, v.version").fetchall()
        return [self._version(r) for r in rows]

    def current_versions(self) -> list[EntrantVersion]:
        """The latest version of every active entrant, by name: the ones a new schedule uses."""
        rows = self.db.execute(
            f"{self._VERSION_SQL} WHERE e.active = 1 AND v.version = "
            "(SELECT MAX(version) FROM entrant_versions w WHERE w.entrant_id = v.entrant_id) "
            "ORDER BY e.name"
        ).fetchall()
        return [self._version(r) for r in rows]

    def withdraw(self, name: str) -> bool:
        """Leave entrant ``name`` out of future schedules (its games stay recorded); whether it was
        active until now."""
        with self.transaction() as db:
            sql = "UPDATE entrants SET active = 0 WHERE name = ? AND active = 1"
            return db.execute(sql, (name,)).rowcount > 0

    def set_authors(self, authors: Mapping[str, str]) -> int:
        """Give entrants (by name) their authors where the store does not know them yet (an
        arena made before entrants had authors: its accounts know them); how many it set."""
        with self.transaction() as db:
            return sum(
                db.execute(
                    "UPDATE entrants SET author = ? WHERE name = ? AND author IS NULL", (a, n)
                ).rowcount
                for n, a in sorted(authors.items())
            )

    def entrant_states(self) -> dict[str, bool]:
        """Every entrant's name and whether it is active (plays in new schedules)."""
        rows = self.db.execute("SELECT name, active FROM entrants ORDER BY name")
        return {name: bool(active) for name, active in rows}

    def version_stats(self) -> dict[int, VersionStats]:
        """Games recorded and faults committed, per entrant version id (versions without a
        recorded game are left out)."""
        rows = self.db.execute(
            "SELECT version_id, COUNT(*), COALESCE(SUM(json_array_length(faults)), 0)"
            " FROM seat_results GROUP BY version_id"
        )
        return {version_id: VersionStats(games, faults) for version_id, games, faults in rows}

    def finished_at(self, game_ids: Sequence[str]) -> dict[str, str]:
        """When each of these recorded games finished (games not recorded are left out)."""
        found: dict[str, str] = {}
        for start in range(0, len(game_ids), 500):  # SQLite's bound on parameters
            chunk = list(game_ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = self.db.execute(
                f"SELECT game_id, finished_at FROM results WHERE game_id IN ({marks})", chunk
            )
            found.update((gid, finished) for gid, finished in rows)
        return found

    def bot_games(self, version_ids: Sequence[int], limit: int) -> list[BotGame]:
        """The newest ``limit`` published games (:meth:`unfinished_deals`) of these versions,
        newest first, each with its date, the version's place, score and faults, and every seat's
        version and place (its opponents)."""
        if not version_ids:
            return []
        marks = ",".join("?" * len(version_ids))
        rows = self.db.execute(
            "SELECT sr.game_id, r.finished_at, sr.version_id, sr.place, sr.score,"
            " json_array_length(sr.faults) FROM seat_results sr"
            " JOIN results r ON r.game_id = sr.game_id JOIN games g ON g.game_id = sr.game_id"
            f" WHERE sr.version_id IN ({marks}) AND g.duplicate_set NOT IN ({self._UNFINISHED})"
            " ORDER BY r.seq DESC LIMIT ?",
            (*version_ids, limit),
        ).fetchall()
        ids = [row[0] for row in rows]
        seats: dict[str, list[tuple[int, int]]] = {}
        for start in range(0, len(ids), 500):  # SQLite's bound on parameters
            chunk = ids[start : start + 500]
            for gid, vid, place in self.db.execute(
                "SELECT game_id, version_id, place FROM seat_results"
                f" WHERE game_id IN ({','.join('?' * len(chunk))}) ORDER BY game_id, seat",
                chunk,
            ):
                seats.setdefault(gid, []).append((vid, place))
        return [
            BotGame(
                gid,
                finished,
                vid,
                place,
                score,
                faults,
                tuple(v for v, _ in seats.get(gid, [])),
                tuple(p for _, p in seats.get(gid, [])),
            )
            for gid, finished, vid, place, score, faults in rows
        ]

    def faulted_games(self, version_ids: Sequence[int], limit: int) -> list[FaultedGame]:
        """The newest ``limit`` published games (:meth:`unfinished_deals`) in which one of these
        versions committed a fault, newest first, with their records."""
        if not version_ids:
            return []
        marks = ",".join("?" * len(version_ids))
        rows = self.db.execute(
            "SELECT sr.game_id, sr.seat, sr.version_id, r.finished_at, r.record"
            " FROM seat_results sr JOIN results r ON r.game_id = sr.game_id"
            " JOIN games g ON g.game_id = sr.game_id"
            f" WHERE sr.version_id IN ({marks}) AND sr.faults != '[]'"
            f" AND g.duplicate_set NOT IN ({self._UNFINISHED})"
            " ORDER BY r.seq DESC LIMIT ?",
            (*version_ids, limit),
        )
        return [
            FaultedGame(gid, seat, vid, finished, _record(text))
            for gid, seat, vid, finished, text in rows
        ]

    # -- schedules and games -------------------------------------------------------------------

    def save_schedule(
        self,
        schedule_id: str,
        games: Sequence[Mapping[str, Any]],
        *,
        description: str,
        settings: Mapping[str, Any],
        entrants: Sequence[str],
    ) -> bool:
        """Store a schedule and its games (``game_id, table, rotation, deal_seed, duplicate_set,
        seats`` (version ids), ``settings``, and for a game dealt from a deal key ``deal_season``
        and ``deal_id``: its seed is then kept out of the store until the game is recorded). Games
        already known (same id) are kept as they are. Returns whether the schedule is new."""
        with self.transaction() as db:
            if db.execute(
                "SELECT 1 FROM schedules WHERE schedule_id = ?", (schedule_id,)
            ).fetchone():
                self._set_meta("current_schedule", schedule_id)
                return False
            db.execute(
                "INSERT INTO schedules(schedule_id, created_at, description, settings, entrants, "
                "games) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    schedule_id,
                    now(),
                    description,
                    json.dumps(dict(settings), sort_keys=True),
                    json.dumps(list(entrants)),
                    len(games),
                ),
            )
            stamp = now()
            db.executemany(
                "INSERT OR IGNORE INTO games(game_id, table_no, rotation, deal_seed, duplicate_set,"
                " seats, settings, scheduled_at, deal_season, deal_id)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        g["game_id"],
                        g["table"],
                        g["rotation"],
                        0 if g.get("deal_season") is not None else g["deal_seed"],  # sealed
                        g["duplicate_set"],
                        json.dumps(list(g["seats"])),
                        json.dumps(dict(g["settings"]), sort_keys=True),
                        stamp,
                        g.get("deal_season"),
                        g.get("deal_id"),
                    )
                    for g in games
                ],
            )
            db.executemany(
                "INSERT INTO schedule_games(schedule_id, position, game_id) VALUES (?, ?, ?)",
                [(schedule_id, i, g["game_id"]) for i, g in enumerate(games)],
            )
            self._set_meta("current_schedule", schedule_id)
        return True

    def schedules(self, prefix: str = "") -> list[ScheduleInfo]:
        """The schedules whose id starts with ``prefix`` (all: ""), by id."""
        rows = self.db.execute(
            "SELECT schedule_id, created_at, description, games FROM schedules"
            " WHERE substr(schedule_id, 1, ?) = ? ORDER BY schedule_id",
            (len(prefix), prefix),
        )
        return [ScheduleInfo(*row) for row in rows]

    def scheduled_seats(self, prefix: str) -> dict[int, int]:
        """Games scheduled per entrant version id (recorded or not), over the schedules whose id
        starts with ``prefix``."""
        counts: dict[int, int] = {}
        rows = self.db.execute(
            "SELECT g.seats FROM games g JOIN schedule_games s ON s.game_id = g.game_id"
            " WHERE substr(s.schedule_id, 1, ?) = ?",
            (len(prefix), prefix),
        )
        for (seats,) in rows:
            for version_id in json.loads(seats):
                counts[version_id] = counts.get(version_id, 0) + 1
        return counts

    def current_schedule(self) -> dict[str, Any] | None:
        sid = self._meta("current_schedule")
        if sid is None:
            return None
        row = self.db.execute("SELECT * FROM schedules WHERE schedule_id = ?", (sid,)).fetchone()
        return (
            None
            if row is None
            else {
                "schedule_id": row["schedule_id"],
                "created_at": row["created_at"],
                "description": row["description"],
                "settings": json.loads(row["settings"]),
                "entrants": json.loads(row["entrants"]),
                "games": row["games"],
            }
        )

    @staticmethod
    def _game(row: sqlite3.Row) -> StoredGame:
        return StoredGame(
            game_id=row["game_id"],
            table_no=row["table_no"],
            rotation=row["rotation"],
            deal_seed=row["deal_seed"],
            duplicate_set=row["duplicate_set"],
            seats=tuple(json.loads(row["seats"])),
            settings=json.loads(row["settings"]),
            status=row["status"],
            attempts=row["attempts"],
            last_error=row["last_error"],
            deal_season=row["deal_season"],
            deal_id=row["deal_id"],
        )

    def schedule_games(self, schedule_id: str, *, pending_only: bool = False) -> list[StoredGame]:
        """The games of a schedule in schedule order (only those not yet recorded, if asked)."""
        sql = (
            "SELECT g.* FROM schedule_games s JOIN games g ON g.game_id = s.game_id "
            "WHERE s.schedule_id = ?"
            + (
                " AND g.status = 'pending'"
                " AND g.game_id NOT IN (SELECT game_id FROM abandoned_games)"
                if pending_only
                else ""
            )
            + " ORDER BY s.position"
        )
        return [self._game(r) for r in self.db.execute(sql, (schedule_id,))]

    def game(self, game_id: str) -> StoredGame:
        row = self.db.execute("SELECT * FROM games WHERE game_id = ?", (game_id,)).fetchone()
        if row is None:
            raise StoreError(f"no game {game_id}")
        return self._game(row)

    def progress(self, schedule_id: str) -> dict[str, int]:
        row = self.db.execute(
            "SELECT COUNT(*) AS total, COALESCE(SUM(g.status = 'done'), 0) AS done, "
            "COALESCE(SUM(g.attempts), 0) AS attempts "
            "FROM schedule_games s JOIN games g ON g.game_id = s.game_id WHERE s.schedule_id = ?"
            " AND (g.status = 'done' OR g.game_id NOT IN (SELECT game_id FROM abandoned_games))",
            (schedule_id,),
        ).fetchone()
        failures = self.db.execute(
            "SELECT COUNT(*) FROM infra_failures f JOIN schedule_games s ON s.game_id = f.game_id "
            "WHERE s.schedule_id = ?",
            (schedule_id,),
        ).fetchone()[0]
        return {"total": row["total"], "done": row["done"], "infra_failures": failures}

    # -- results -------------------------------------------------------------------------------

    def record_game(
        self,
        game_id: str,
        record: Mapping[str, Any],
        *,
        run_id: str | None = None,
        seconds: float | None = None,
        output_budget: int | None = None,
    ) -> bool:
        """Store a finished game: its record, one row per seat, status 'done', in one transaction.
        Returns False (and changes nothing) if the game was already recorded.

        ``output_budget``: bytes of its own output (the turns' ``logs``) each entrant version may
        keep across the tournament's records; past it, that bot's output is dropped from its oldest
        records first (the games themselves stay whole: `logs` is optional in a record)."""
        game = self.game(game_id)
        if len(record["result"]["scores"]) != len(game.seats):
            raise StoreError(
                f"game {game_id}: the record has {len(record['result']['scores'])} seats, "
                f"the schedule {len(game.seats)}"
            )
        try:
            with self.transaction() as db:
                db.execute(
                    "INSERT INTO results(game_id, record, finished_at, seconds, run_id) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (game_id, json.dumps(record, separators=(",", ":")), now(), seconds, run_id),
                )
                db.executemany(
                    "INSERT INTO seat_results(game_id, seat, version_id, score, place, forfeited, "
                    "faults) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(game_id, *row) for row in seat_rows(record, game.seats)],
                )
                db.execute(
                    "UPDATE games SET status = 'done', attempts = attempts + 1,"
                    " deal_seed = CASE WHEN deal_season IS NULL THEN deal_seed ELSE ? END"
                    " WHERE game_id = ?",
                    (record.get("seed", game.deal_seed), game_id),
                )
                used = output_bytes(record, len(game.seats))
                db.executemany(
                    "INSERT INTO bot_output(game_id, seat, version_id, bytes) VALUES (?, ?, ?, ?)",
                    [(game_id, seat, game.seats[seat], n) for seat, n in enumerate(used) if n],
                )
                if output_budget is not None:
                    for version_id in {game.seats[seat] for seat, n in enumerate(used) if n}:
                        self._keep_output_within(db, version_id, output_budget)
        except sqlite3.IntegrityError:
            if self.db.execute("SELECT 1 FROM results WHERE game_id = ?", (game_id,)).fetchone():
                return False
            raise
        return True

    @staticmethod
    def _keep_output_within(db: sqlite3.Connection, version_id: int, budget: int) -> None:
        """Drop ``version_id``'s output from its oldest records until what is kept fits
        ``budget``."""
        total = db.execute(
            "SELECT COALESCE(SUM(bytes), 0) FROM bot_output WHERE version_id = ? AND dropped = 0",
            (version_id,),
        ).fetchone()[0]
        if total <= budget:
            return
        rows = db.execute(
            "SELECT o.game_id, o.seat, o.bytes, r.record FROM bot_output o JOIN results r ON "
            "r.game_id = o.game_id WHERE o.version_id = ? AND o.dropped = 0 ORDER BY r.seq",
            (version_id,),
        )
        for game_id, seat, size, text in rows.fetchall():
            if total <= budget:
                break
            record = json.loads(text)
            drop_output(record, seat)
            db.execute(
                "UPDATE results SET record = ? WHERE game_id = ?",
                (json.dumps(record, separators=(",", ":")), game_id),
            )
            db.execute(
                "UPDATE bot_output SET dropped = 1 WHERE game_id = ? AND seat = ?", (game_id, seat)
            )
            total -= size

    def output_usage(self) -> dict[int, dict[str, int]]:
        """Per entrant version id: bytes of output kept, games whose output is kept, games whose
        output was dropped to stay within the budget."""
        rows = self.db.execute(
            "SELECT version_id, COALESCE(SUM(CASE WHEN dropped = 0 THEN bytes END), 0),"
            " SUM(dropped = 0), SUM(dropped = 1) FROM bot_output GROUP BY version_id"
        ).fetchall()
        return {r[0]: {"kept_bytes": r[1], "kept_games": r[2], "dropped_games": r[3]} for r in rows}

    def record_infra_failure(
        self, game_id: str, kind: str, detail: str, *, run_id: str | None = None
    ) -> None:
        """Note that a game could not be played for a reason that is nobody's fault; it stays
        pending."""
        with self.transaction() as db:
            db.execute(
                "INSERT INTO infra_failures(game_id, run_id, at, kind, detail) VALUES (?, ?, ?, "
                "?, ?)",
                (game_id, run_id, now(), kind, detail[-4000:]),
            )
            db.execute(
                "UPDATE games SET attempts = attempts + 1, last_error = ? WHERE game_id = ?",
                (f"{kind}: {detail}"[:2000], game_id),
            )

    def infra_failures(self, schedule_id: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT f.* FROM infra_failures f"
        args: tuple[object, ...] = ()
        if schedule_id is not None:
            sql += " WHERE f.game_id IN (SELECT game_id FROM schedule_games WHERE schedule_id = ?)"
            args = (schedule_id,)
        return [dict(r) for r in self.db.execute(sql + " ORDER BY f.id", args)]

    def tally(self, since: Tally | None = None) -> Tally:
        """``since`` (or nothing) with what was recorded after it added: one read transaction."""
        since = since or Tally()
        faults, infra = dict(since.faults), dict(since.infra)
        db = self.db
        db.execute("BEGIN")  # deferred: a read transaction, also on a read-only store
        try:
            seq, games = db.execute(
                "SELECT COALESCE(MAX(seq), ?), COUNT(*) FROM results WHERE seq > ?",
                (since.seq, since.seq),
            ).fetchone()
            for kind, n in db.execute(
                "SELECT j.value, COUNT(*) FROM results r JOIN seat_results s ON s.game_id = "
                "r.game_id, json_each(s.faults) j WHERE r.seq > ? AND r.seq <= ? GROUP BY j.value",
                (since.seq, seq),
            ):
                faults[str(kind)] = faults.get(str(kind), 0) + n
            infra_id = since.infra_id
            for row_id, kind in db.execute(
                "SELECT id, kind FROM infra_failures WHERE id > ? ORDER BY id", (since.infra_id,)
            ):
                infra[kind] = infra.get(kind, 0) + 1
                infra_id = row_id
        finally:
            db.execute("COMMIT")
        return Tally(seq, infra_id, since.games + games, faults, infra)

    #: the duplicate sets with a game still to play (given up games aside)
    _UNFINISHED = (
        "SELECT DISTINCT duplicate_set FROM games WHERE status = 'pending'"
        " AND game_id NOT IN (SELECT game_id FROM abandoned_games)"
    )

    def unfinished_deals(self) -> set[str]:
        """The duplicate sets (deals) with a game still to play. Their recorded games are not
        published yet (standings, the site, the arena's record calls): a deal becomes public only
        once every rotation of it has been played, so that nobody reads a deal that is still to
        come (docs/security.md, "Deals")."""
        return {row[0] for row in self.db.execute(self._UNFINISHED)}

    def shared_tables(self) -> list[tuple[str, str]]:
        """(game id, author) of every published game (:meth:`unfinished_deals`) in which two or
        more seats belonged to that author, by the seats' ``owner`` in the records: the tables
        that had to break the rule that keeps an author's entrants apart (docs/security.md)."""
        rows = self.db.execute(
            "SELECT r.game_id, json_extract(s.value, '$.owner') AS owner FROM results r"
            " JOIN games g ON g.game_id = r.game_id, json_each(CASE WHEN json_valid(r.record)"
            " THEN r.record ELSE '{}' END, '$.seats') s"
            f" WHERE g.duplicate_set NOT IN ({self._UNFINISHED})"
            " GROUP BY r.game_id, owner HAVING owner IS NOT NULL AND COUNT(*) > 1"
            " ORDER BY r.seq, owner"
        )
        return [(str(gid), str(owner)) for gid, owner in rows]

    def record(self, game_id: str, *, published_only: bool = False) -> GameRecord:
        """A recorded game's record (``published_only``: refused while its deal is unfinished)."""
        row = self.db.execute(
            "SELECT r.record, g.duplicate_set FROM results r"
            " LEFT JOIN games g ON g.game_id = r.game_id WHERE r.game_id = ?",
            (game_id,),
        ).fetchone()
        if row is None:
            raise StoreError(f"game {game_id} is not recorded")
        if published_only and row[1] in self.unfinished_deals():
            raise WithheldError(
                f"game {game_id} is not published yet: its deal has rotations still to play"
            )
        return _record(row[0])

    def records(
        self,
        schedule_id: str | None = None,
        *,
        after: int | None = None,
        published_only: bool = False,
    ) -> Iterator[tuple[str, GameRecord]]:
        """Every recorded game in the order recorded, one at a time (a cursor, never all at once);
        with ``after``, only those recorded after the game of sequence number ``after``; with
        ``published_only``, not those whose deal is unfinished (:meth:`unfinished_deals`)."""
        sql = "SELECT r.game_id, r.record, g.duplicate_set FROM results r"
        sql += " LEFT JOIN games g ON g.game_id = r.game_id"
        args: tuple[object, ...] = ()
        if schedule_id is not None:
            sql += " JOIN schedule_games s ON s.game_id = r.game_id WHERE s.schedule_id = ?"
            args = (schedule_id,)
        if after is not None:
            sql += (" AND" if schedule_id is not None else " WHERE") + " r.seq > ?"
            args += (after,)
        hidden = self.unfinished_deals() if published_only else set()
        for row in self.db.execute(sql + " ORDER BY r.seq", args):
            if row[2] not in hidden:
                yield row[0], _record(row[1])

    def game_places(self) -> dict[str, tuple[int, int]]:
        """Game id -> (table number, rotation) of every recorded game: readable game labels
        ("table 12, game 3") without reading a record."""
        sql = (
            "SELECT g.game_id, g.table_no, g.rotation FROM results r JOIN games g ON g.game_id "
            "= r.game_id"
        )
        return {row[0]: (row[1], row[2]) for row in self.db.execute(sql)}

    def recorded_count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM results").fetchone()[0])

    def seat_results(
        self, schedule_id: str | None = None, *, published_only: bool = False
    ) -> list[SeatResult]:
        """Every recorded game as per-seat tuples, in the order recorded (for ratings); with
        ``published_only``, not those whose deal is unfinished (:meth:`unfinished_deals`). A row
        that does not hold what the store writes is a StoreError naming it."""
        sql = (
            "SELECT r.seq, r.game_id, g.duplicate_set, sr.seat, sr.version_id, sr.score, sr.place, "
            "sr.faults FROM results r JOIN games g ON g.game_id = r.game_id "
            "JOIN seat_results sr ON sr.game_id = r.game_id"
        )
        args: tuple[object, ...] = ()
        if schedule_id is not None:
            sql += " WHERE r.game_id IN (SELECT game_id FROM schedule_games WHERE schedule_id = ?)"
            args = (schedule_id,)
        games: dict[str, dict[str, Any]] = {}
        hidden = self.unfinished_deals() if published_only else set()
        for row in self.db.execute(sql + " ORDER BY r.seq, sr.seat", args):
            if row["duplicate_set"] in hidden:
                continue
            g = games.setdefault(
                row["game_id"],
                {
                    "seq": row["seq"],
                    "dup": row["duplicate_set"],
                    "v": [],
                    "s": [],
                    "p": [],
                    "f": [],
                },
            )
            g["v"].append(row["version_id"])
            g["s"].append(row["score"])
            g["p"].append(row["place"])
            g["f"].append(_fault_kinds(row["game_id"], row["seat"], row["faults"]))
        return [
            SeatResult(
                gid, g["seq"], g["dup"], tuple(g["v"]), tuple(g["s"]), tuple(g["p"]), tuple(g["f"])
            )
            for gid, g in games.items()
        ]

    # -- runs ----------------------------------------------------------------------------------

    def begin_run(
        self, run_id: str, *, schedule_id: str, settings: Mapping[str, Any], games: int
    ) -> None:
        with self.transaction() as db:
            db.execute(
                "INSERT INTO runs(run_id, pid, host, started_at, heartbeat_at, status, schedule_id,"
                " settings, games) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?)",
                (
                    run_id,
                    os.getpid(),
                    socket.gethostname(),
                    now(),
                    now(),
                    schedule_id,
                    json.dumps(dict(settings), sort_keys=True),
                    games,
                ),
            )

    def heartbeat(self, run_id: str, done: int) -> None:
        with self.transaction() as db:
            db.execute(
                "UPDATE runs SET heartbeat_at = ?, done = ? WHERE run_id = ?", (now(), done, run_id)
            )

    def end_run(self, run_id: str, status: str, done: int) -> None:
        with self.transaction() as db:
            db.execute(
                "UPDATE runs SET ended_at = ?, status = ?, done = ?, heartbeat_at = ? WHERE "
                "run_id = ?",
                (now(), status, done, now(), run_id),
            )

    def runs(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self.db.execute("SELECT * FROM runs ORDER BY started_at")]

    def last_run(self) -> dict[str, Any] | None:
        row = self.db.execute("SELECT * FROM runs ORDER BY started_at DESC LIMIT 1").fetchone()
        return None if row is None else dict(row)


SeatRow = tuple[int, int, int, int, int, str]
"""A seat_results row without its game id: seat, version id, score, place, forfeited (0 or 1), the
fault kinds (a JSON list)."""


def seat_rows(record: Mapping[str, Any], seats: Sequence[int]) -> list[SeatRow]:
    """The seat_results rows of a game from its record and its seats' version ids: the one rule by
    which the results table follows from the records (:meth:`Store.record_game` writes these rows,
    and take5_arena/referee/store/integrity.py checks a store's rows against them)."""
    result = record["result"]
    forfeited = set(result.get("forfeited", ()))
    faults = record.get("faults") or [[] for _ in seats]
    return [
        (
            seat,
            version_id,
            result["scores"][seat],
            result["places"][seat],
            int(seat in forfeited),
            json.dumps([f["kind"] for f in faults[seat]]),
        )
        for seat, version_id in enumerate(seats)
    ]


def _fault_kinds(game_id: str, seat: int, text: Any) -> tuple[str, ...]:
    """The fault kinds of a seat_results row (a JSON list of strings), or a StoreError."""
    if text == "[]":
        return ()
    try:
        kinds = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        kinds = None
    if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
        raise StoreError(
            f"game {game_id}, seat {seat}: the results table's faults are not a list of fault "
            f"kinds ({str(text)[:40]!r}); `referee verify --tournament` checks the store"
        )
    return tuple(kinds)


def _record(text: str) -> GameRecord:
    """A record as the store wrote it (by :meth:`Store.record_game`, from the referee's own
    games)."""
    return cast(GameRecord, json.loads(text))


def output_bytes(record: Mapping[str, Any], seats: int) -> list[int]:
    """Bytes (UTF-8) of each seat's own output kept in ``record``'s turns."""
    used = [0] * seats
    for rnd in record.get("rounds", []):
        for turn in rnd.get("turns", []):
            for seat, text in turn.get("logs", ()):
                if isinstance(seat, int) and 0 <= seat < seats:
                    used[seat] += len(str(text).encode())
    return used


def drop_output(record: dict[str, Any], seat: int) -> None:
    """Remove seat ``seat``'s output from ``record``'s turns (in place)."""
    for rnd in record.get("rounds", []):
        for turn in rnd.get("turns", []):
            if "logs" in turn:
                kept = [entry for entry in turn["logs"] if entry[0] != seat]
                if kept:
                    turn["logs"] = kept
                else:
                    del turn["logs"]


def pid_alive(pid: int | None, host: str | None) -> bool | None:
    """Whether process ``pid`` on ``host`` still runs (None: another host, cannot tell)."""
    if pid is None:
        return False
    if host and host != socket.gethostname():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (killed, not yet reaped by its parent) is not running.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def seconds_since(stamp: str | None) -> float | None:
    if not stamp:
        return None
    return time.time() - datetime.fromisoformat(stamp).timestamp()
