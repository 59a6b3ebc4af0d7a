"""The store's schema: its tables, its version, and how an older store is brought up to it.

Schema (version 4). An older store gains the new columns and tables when opened for writing
(:func:`migrate`, in the transaction that opens it), after a copy of it as it was is kept
beside it (``tournament.schema-vN.sqlite``); a newer one is refused (:func:`newer_schema`).
tests/test_upgrade.py opens the golden stores of tests/data/ (scripts/make-golden-store.sh)::

    meta(key PK, value)                         schema_version, settings (JSON), created_at
    entrants(id PK, name UNIQUE, created_at, active, author (who the organiser says the entrant is
             from: the arena account that owns it, or `referee submit --author`; NULL: unknown))
    entrant_versions(id PK, entrant_id FK, version, source_hash, image_id, bot_dir, kind,
                     submitted_at, validation JSON, artifact (sha256:... of the validated source
                     archive in DIR/artifacts/; NULL for versions submitted before version 2),
                     author (who submitted this version: the arena account, or `referee submit
                     --author`; a version keeps it when the entrant changes hands; schema 4,
                     filled from the entrant's for older versions; NULL: unknown),
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
        (:meth:`.Results.record_game`)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .base import Connection, meta, set_meta

SCHEMA_VERSION = 4
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
    author TEXT,
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


def schema_version(db: Connection) -> int | None:
    """The schema version the file holds (None: a new file, no tables yet)."""
    try:
        version = meta(db, "schema_version")
    except sqlite3.OperationalError:  # no meta table: nothing was ever written
        return None
    return None if version is None else int(version)


def shim_older_schema(db: Connection) -> None:
    """An older store opened read-only cannot be migrated: what later versions added is made
    to appear empty in this connection alone (TEMP views and tables shadow the file's), so that
    every query reads it as a store of this version would be read."""
    version = int(meta(db, "schema_version") or SCHEMA_VERSION)
    if version >= SCHEMA_VERSION:
        return
    shims = []
    if version < 4:  # a version's author, as the migration would give it
        artifact = ", NULL AS artifact" if version < 2 else ""
        author = _VERSION_AUTHOR.format(db="main.", v="v") if version >= 3 else "NULL"
        shims.append(
            f"CREATE TEMP VIEW entrant_versions AS SELECT v.*{artifact}, {author} AS author"
            " FROM main.entrant_versions v"
        )
    if version < 2:
        shims += [
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
        db.execute(statement)


def create_tables(db: Connection) -> None:
    """Create what is missing of :data:`SCHEMA` (inside the opening transaction)."""
    for statement in SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)


def migrate(db: Connection, version: int) -> None:
    """Bring an older store up to :data:`SCHEMA_VERSION` (inside the opening transaction; new
    tables were created by SCHEMA already)."""
    if version < 2:
        _add_column(db, "entrant_versions", "artifact", "TEXT")
    if version < 3:  # authors, and games dealt from a deal key (their table: SCHEMA)
        _add_column(db, "entrants", "author", "TEXT")
        _add_column(db, "games", "deal_season", "INTEGER")
        _add_column(db, "games", "deal_id", "TEXT")
    if version < 4:  # each version's author: the one its records name, else its entrant's
        _add_column(db, "entrant_versions", "author", "TEXT")
        author = _VERSION_AUTHOR.format(db="", v="entrant_versions")
        db.execute(f"UPDATE entrant_versions SET author = {author} WHERE author IS NULL")
    set_meta(db, "schema_version", str(SCHEMA_VERSION))


_VERSION_AUTHOR = (
    "COALESCE((SELECT json_extract(s.value, '$.owner') FROM {db}seat_results sr"
    " JOIN {db}results r ON r.game_id = sr.game_id,"
    " json_each(CASE WHEN json_valid(r.record) THEN r.record ELSE '{{}}' END, '$.seats') s"
    " WHERE sr.version_id = {v}.id AND s.key = sr.seat"
    " AND json_extract(s.value, '$.owner') IS NOT NULL ORDER BY r.seq DESC LIMIT 1),"
    " (SELECT e.author FROM {db}entrants e WHERE e.id = {v}.entrant_id))"
)
"""A version's author in a store from before schema 4 (SQL; ``db``: the schema's prefix, ``v``:
the version row's table): the ``owner`` its newest record names (who the arena or the organiser
said submitted it when it played), else its entrant's author, so that every record the store
holds stays true to the author it is held to (`referee verify --tournament`)."""


def _add_column(db: Connection, table: str, column: str, kind: str) -> None:
    """One migration step, on either database (PostgreSQL: its types, postgres.py's SCHEMA)."""
    if db.dialect.name == "postgresql":
        kind = {"INTEGER": "BIGINT", "REAL": "DOUBLE PRECISION"}.get(kind, kind)
        db.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} {kind}")
        return
    columns = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
    if column not in columns:
        db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")


__all__ = [
    "DB_NAME",
    "SCHEMA",
    "SCHEMA_VERSION",
    "create_tables",
    "migrate",
    "newer_schema",
    "schema_version",
    "shim_older_schema",
]
