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

import json
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from take5_arena.errors import ArenaError
from take5_arena.leaderboard.board import Standings, compute_standings
from take5_arena.leaderboard.collection import Games, scan_record_files
from take5_arena.leaderboard.results import GameResult, result_from_record
from take5_arena.leaderboard.site_build import decode_bundle
from take5_arena.referee import defaults
from take5_arena.referee.store import DB_NAME, Store, StoreError, has_store
from take5_arena.referee.store.integrity import findings
from take5_arena.referee.tournament.pairings import PairingCheck, check_competitions
from take5_arena.referee.tournament.plan.adaptive import PlayedGame
from take5_arena.referee.tournament.published import (
    FILE,
    PublishedError,
    from_document,
    seat_keys,
    store_document,
)
from take5_arena.referee.tournament.status import entrant_labels


class SourceError(ArenaError):
    """The games cannot be read (missing directory, no games, ...): a message for the user."""


class UnverifiedStoreError(SourceError):
    """The store's results table does not follow from its records (edited, or games deleted):
    its standings are not published (take5_arena/referee/store/integrity.py)."""


__all__ = [
    "Games",
    "SiteCompetitions",
    "SourceError",
    "UnverifiedStoreError",
    "check_site_competitions",
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
        # one state of the store for the checks and the loads: a game recorded between two
        # reads would otherwise look deleted or half-written (Store.snapshot)
        with store.snapshot():
            found = [str(f) for f in findings(store)]
            if found:
                more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
                raise UnverifiedStoreError(
                    f"{folder}: the results table does not follow from the records, so its "
                    f"standings are not published: {found[0]}{more}; `referee verify "
                    f"--tournament {folder}` lists every finding"
                )
            # the labels and the results of one snapshot: a version added between them would
            # relabel the results (LiveStandings.catch_up compares every game again)
            labelled = entrant_labels(store)
            # a deal with rotations still to play stays unpublished (docs/security.md, "Deals")
            results = results_from_store(store, published_only=True)
            places = store.records.game_places()
            settings = store.settings.get()
            shared = store.records.shared_tables()
            versions = {v.id: v for v in store.versions.all()}
            owners = {
                label: str(versions[vid].author)
                for vid, label in labelled.items()
                if versions[vid].author
            }
            competitions = store_document(store)
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
        competitions=competitions,
        entrant_labels=tuple(sorted(labelled.items())),
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


@dataclass
class SiteCompetitions:
    """A published site's Swisses and knockouts paired again from its records alone."""

    checks: list[PairingCheck] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Findings beside the pairings: an unreadable competitions.json, a game listed with other
    seats than its record's, a listed game of a finished stage the site does not hold."""
    published: bool = False
    """The site has a competitions.json."""

    @property
    def failures(self) -> int:
        return len(self.problems) + sum(1 for c in self.checks if c.problem is not None)


def check_site_competitions(site: str | Path) -> SiteCompetitions:
    """Every Swiss and knockout of a published site's competitions.json paired again, stage by
    stage, from the site's own records (each checked against its manifest hash by
    ``check_site``): a pairing, a seat or a result edited after the fact is a finding
    (docs/verifiers/checking.md)."""
    site = Path(site)
    out = SiteCompetitions()
    try:
        text = (site / FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return out
    except OSError as error:
        out.problems.append(f"cannot read {FILE}: {error}")
        return out
    out.published = True
    try:
        found = from_document(json.loads(text))
    except PublishedError as error:
        out.problems.append(str(error))
        return out
    except ValueError as error:  # not JSON
        out.problems.append(f"{FILE}: {error}")
        return out
    listed = {g.game_id: (sid, g) for c in found for sid, games in c.stages for g in games}
    records = _site_records(site, set(listed))
    recorded: dict[str, PlayedGame] = {}
    for gid, record in records.items():
        sid, game = listed[gid]
        seats = seat_keys(record)
        if seats != game.seats:
            out.problems.append(
                f"{FILE}: game {gid} of {sid} lists seats {list(game.seats)}, "
                f"its record {list(seats or [])}"
            )
            continue
        try:
            places = result_from_record(record, game_id=gid).places
        except (KeyError, TypeError, ValueError):
            continue  # an incomplete game: no result to pair by
        recorded[gid] = PlayedGame(gid, seats, tuple(places))
    for comp in found:
        for sid, games in comp.stages[:-1]:  # the last stage may be under way
            missing = [g.game_id for g in games if g.game_id not in records]
            if missing:
                out.problems.append(f"{FILE}: game {missing[0]} of {sid} is not on the site")
    out.checks = check_competitions(found, recorded)
    return out


def _site_records(site: Path, wanted: set[str]) -> dict[str, dict[str, Any]]:
    """The records the site holds of the ``wanted`` games, read from the replay bundles its
    manifest names for them (only those bundles)."""
    bundles: set[str] = set()
    try:
        with (site / "manifest.jsonl").open(encoding="utf-8") as f:
            for line in f:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue  # check_site reports it
                if isinstance(entry, dict) and entry.get("game") in wanted:
                    replay = entry.get("replay")
                    if (
                        isinstance(replay, str)
                        and replay.startswith("replays/")
                        and ".." not in replay
                    ):
                        bundles.add(replay)
    except OSError:
        return {}
    found: dict[str, dict[str, Any]] = {}
    for rel in sorted(bundles):
        try:
            games = decode_bundle((site / rel).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # check_site reports it
        for g in games:
            gid, record = g.get("id"), g.get("record")
            if gid in wanted and isinstance(record, dict):
                found[str(gid)] = record
    return found
