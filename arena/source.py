"""Where the games to rate and publish come from: a tournament directory, or game record files.

Both give a :class:`Games`: the rated results, the records for replays, and a title. The rating and
publishing code never reads files itself. This module sits in the app layer because it is where
the referee's store meets the leaderboard's results: the referee and the leaderboard never import
each other.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from take5.record import MalformedRecord, iter_records, load_record, verify_record

from leaderboard.ratings import Standings, compute_standings
from leaderboard.results import GameResult, results_from_records
from referee import defaults
from referee.store import DB_NAME, Store, StoreError
from referee.tournament.status import entrant_labels

from .errors import ArenaError


class SourceError(ArenaError):
    """The games cannot be read (missing directory, no games, ...): a message for the user."""


@dataclass
class Games:
    title: str
    results: list[GameResult]
    records: dict[str, dict[str, Any]]
    problems: list[str] = field(default_factory=list)  # records left out, and why


def load_record_files(paths: Iterable[str | Path], *, verify: bool = True) -> Games:
    """Records from files and folders (``*.json``, recursively). A record without a ``game_id``
    is known by its file name. Incomplete records are replayable but not rated; with ``verify``
    (the default) a record that fails `referee verify` is left out and reported."""
    records: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    for path in iter_records([Path(p) for p in paths]):
        try:
            record = load_record(path)
            divergence = verify_record(record) if verify else None
        except MalformedRecord as error:
            problems.append(f"{path}: {error}")
            continue
        if divergence is not None:
            problems.append(f"{path}: invalid record: {divergence}")
            continue
        gid = str(record.get("game_id") or path.stem)
        if gid in records:
            problems.append(f"{path}: game id {gid!r} seen before; left out")
            continue
        records[gid] = record
    return Games("take5 arena standings", results_from_records(records), records, problems)


def load_tournament(directory: str | Path) -> Games:
    """A tournament directory: every recorded game of its store (referee/store/), rated per
    entrant as ``referee tournament status`` does (an entrant's latest version under its name,
    older versions as ``name@vN``). A directory without a store but with game record files (for
    example the ``--records`` folder of ``referee match``) is read as those records."""
    folder = Path(directory)
    if not folder.is_dir():
        raise SourceError(f"no tournament directory {folder}")
    if (folder / DB_NAME).exists():
        return _from_store(folder)
    games = load_record_files([folder])
    if not games.records and not games.problems:
        raise SourceError(
            f"{folder} is not a tournament directory (no {DB_NAME}) and holds no game records"
        )
    games.title = f"{folder.resolve().name} standings"
    return games


def _from_store(folder: Path) -> Games:
    try:
        store = Store(folder, readonly=True)
    except StoreError as error:
        raise SourceError(str(error)) from None
    except sqlite3.Error as error:  # not a database, unreadable, ...
        raise SourceError(f"cannot read the tournament store in {folder}: {error}") from None
    try:
        results = results_from_store(store)
        records = dict(store.records())
    except sqlite3.Error as error:
        raise SourceError(f"cannot read the tournament store in {folder}: {error}") from None
    finally:
        store.close()
    return Games(f"{folder.resolve().name} standings", results, records)


def results_from_store(store: Store, schedule_id: str | None = None) -> list[GameResult]:
    """The recorded games of a tournament as results, in the order recorded. Entrants are labelled
    as in every standings of a tournament: an entrant's latest version by its name, older versions
    as ``name@vN`` (referee.tournament.status.entrant_labels)."""
    labels = entrant_labels(store)
    return [
        GameResult(
            game_id=r.game_id,
            entrants=tuple(labels[v] for v in r.versions),
            penalties=r.scores,
            places=r.places,
            duplicate_set=r.duplicate_set,
            faults=r.faults,
            played_at=r.seq,
        )
        for r in store.seat_results(schedule_id)
    ]


def store_standings(store: Store, *, bootstrap: int = defaults.BOOTSTRAP,
                    seed: int = defaults.BOOTSTRAP_SEED) -> Standings | None:
    """The standings over every recorded game of a tournament (None without games)."""
    results = results_from_store(store)
    if not results:
        return None
    return compute_standings(results, bootstrap=bootstrap, seed=seed)
