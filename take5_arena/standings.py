"""Where the games to rate and publish come from: a tournament directory, or game record files.

Both give a :class:`~take5_arena.leaderboard.collection.Games`: the rated results, a title, and a
reader that streams the records for replays one at a time. The rating and publishing code never
reads files itself. A store's standings come from its results table, once that table has been
checked against the records (take5_arena/referee/store/integrity.py: a store that fails is refused
with :class:`UnverifiedStoreError`); the records' replay through the rules is `referee verify`'s.
This module sits in the app layer because it is where the referee's store meets the leaderboard's
results: the referee and the leaderboard never import each other.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, cast

from take5_arena.errors import ArenaError
from take5_arena.leaderboard.board import Standings, compute_standings
from take5_arena.leaderboard.collection import Games, scan_record_files
from take5_arena.leaderboard.results import GameResult
from take5_arena.referee import defaults
from take5_arena.referee.store import DB_NAME, Store, StoreError, has_store
from take5_arena.referee.store.integrity import findings
from take5_arena.referee.tournament.status import entrant_labels


class SourceError(ArenaError):
    """The games cannot be read (missing directory, no games, ...): a message for the user."""


class UnverifiedStoreError(SourceError):
    """The store's results table does not follow from its records (edited, or games deleted):
    its standings are not published (take5_arena/referee/store/integrity.py)."""


__all__ = [
    "Games",
    "SourceError",
    "UnverifiedStoreError",
    "load_record_files",
    "load_tournament",
    "results_from_store",
    "store_standings",
]


def load_record_files(paths: Iterable[str | Path], *, verify: bool = True) -> Games:
    """Records from files and folders (``*.json``, recursively). A record without a ``game_id``
    is known by its file name. Incomplete records are replayable but not rated (and reported); with
    ``verify`` (the default) a record that fails `referee verify` is left out and reported."""
    return scan_record_files(paths, verify=verify)


def load_tournament(directory: str | Path) -> Games:
    """A tournament directory: every recorded game of its store (take5_arena/referee/store/), rated
    per entrant as ``referee tournament status`` does (an entrant's latest version under its name,
    older versions as ``name@vN``). A directory without a store but with game record files (for
    example the ``--records`` folder of ``referee match``) is read as those records."""
    folder = Path(directory)
    if not folder.is_dir():
        raise SourceError(f"no tournament directory {folder}")
    if has_store(folder):
        return _from_store(folder)
    games = load_record_files([folder])
    if not games.order and not games.problems:
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
        found = [str(f) for f in findings(store)]
        if found:
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            raise UnverifiedStoreError(
                f"{folder}: the results table does not follow from the records, so its standings "
                f"are not published: {found[0]}{more}; `referee verify --tournament {folder}` "
                "lists every finding"
            )
        # a deal with rotations still to play stays unpublished (docs/security.md, "Deals")
        results = results_from_store(store, published_only=True)
        places = store.records.game_places()
        settings = store.settings.get()
        shared = store.records.shared_tables()
        versions = {v.id: v for v in store.versions.all()}
        owners = {
            label: str(versions[vid].author)
            for vid, label in entrant_labels(store).items()
            if versions[vid].author
        }
        deals = [
            {"season": s.season, "commitment": s.commitment, "key": s.key}
            for s in store.deal_keys.seasons()
        ]
    except StoreError as error:  # a row the checks above let through, e.g. an unknown version
        raise SourceError(f"{folder}: {error}") from None
    except sqlite3.Error as error:
        raise SourceError(f"cannot read the tournament store in {folder}: {error}") from None
    finally:
        store.close()
    results.sort(key=lambda g: g.played_at)
    order = [g.game_id for g in results]
    seqs = [g.played_at for g in results]  # the store's sequence numbers
    rated = set(order)

    def read_records(start: int) -> Iterator[tuple[str, dict[str, Any]]]:
        """The records of ``order[start:]``, one at a time, from a store opened for this read."""
        reader = Store(folder, readonly=True)
        try:
            after = seqs[start - 1] if start > 0 else None
            for game_id, record in reader.records.all(after=after, published_only=True):
                if game_id not in rated:  # a deal finished since the results were read
                    continue
                # the leaderboard reads records as plain JSON (it also reads files nobody vouches
                # for)
                yield game_id, cast(dict[str, Any], record)
        finally:
            reader.close()

    labels = {gid: f"table {t + 1}, game {r + 1}" for gid, (t, r) in places.items()}
    return Games(
        f"{folder.resolve().name} standings",
        results,
        order,
        read_records,
        labels=labels,
        settings=settings,
        deals=deals,
        shared_tables=shared,
        owners=owners,
    )


def results_from_store(
    store: Store, schedule_id: str | None = None, *, published_only: bool = False
) -> list[GameResult]:
    """The recorded games of a tournament as results, in the order recorded (``published_only``:
    not those of a deal with rotations still to play). Entrants are labelled as in every standings
    of a tournament: an entrant's latest version by its name, older versions as ``name@vN``
    (take5_arena.referee.tournament.status.entrant_labels)."""
    labels = entrant_labels(store)
    rows = store.results.seat_results(schedule_id, published_only=published_only)
    for r in rows:
        unknown = [v for v in r.versions if v not in labels]
        if unknown:
            raise StoreError(f"game {r.game_id}: no entrant has version id {unknown[0]!r}")
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
        for r in rows
    ]


def store_standings(
    store: Store, *, bootstrap: int = defaults.BOOTSTRAP, seed: int = defaults.BOOTSTRAP_SEED
) -> Standings | None:
    """The standings over every recorded game of a tournament (None without games)."""
    results = results_from_store(store)
    if not results:
        return None
    return compute_standings(results, bootstrap=bootstrap, seed=seed)
