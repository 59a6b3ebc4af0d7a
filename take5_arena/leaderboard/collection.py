"""The games to rate and publish, held so that memory does not grow with the records.

A :class:`Games` keeps what the standings need - one :class:`GameResult` per rated game, a few
hundred bytes each - and the order of every game that has a record, but never the records
themselves: :meth:`Games.read_records` streams them from their source (a tournament store, or files)
one at a time, starting at any position. ``referee standings`` therefore reads results only, and
``referee publish`` holds one record (or one replay bundle) at a time.

Games that cannot be rated are not dropped silently: each one is in :attr:`Games.unrated` with the
reason (a game cut off before its end), and the CLI and the site report them.

:func:`scan_record_files` builds a :class:`Games` from record files and folders: a first pass reads
and verifies each file and keeps its summary (result, ordering key, deal); publishing reads the
files again, one at a time.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from take5.record import MalformedRecord, iter_records, load_record, verify_record

from .results import GameResult, natural_key, result_from_record, seat_entrant

RecordReader = Callable[[int], Iterator[tuple[str, dict[str, Any]]]]


@dataclass
class Unrated:
    """A game with a record that is not rated, and why (shown on the site and by the CLI)."""

    entrants: tuple[str, ...]
    reason: str


@dataclass
class Games:
    """Results of the rated games, the publishing order of every recorded game, and a reader."""

    title: str
    results: list[GameResult]
    #: every game with a record, in publishing order (rated and unrated)
    order: list[str] = field(default_factory=list)
    #: ``read_records(k)`` yields (game id, record) for ``order[k:]``, in that order
    read_records: RecordReader | None = None
    problems: list[str] = field(default_factory=list)  # records left out, and why
    unrated: dict[str, Unrated] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)  # game id -> "table 3, game 2"
    settings: dict[str, Any] = field(default_factory=dict)  # shown on the front page
    #: the deal keys' seasons, ``{"season", "commitment", "key"}`` (key: None until revealed),
    #: published in standings.json (docs/security.md, "Deals"); empty for public seeds
    deals: list[dict[str, Any]] = field(default_factory=list)
    #: (game id, author) of each game that seated two or more bots of that author at its table
    #: (the pool had too few authors to keep them apart): said in the standings
    shared_tables: list[tuple[str, str]] = field(default_factory=list)
    #: bot -> its author as the organiser knows it (the seats' ``owner``; a tournament's from its
    #: store): shown beside the bot in `referee standings` and the arena's standings
    owners: dict[str, str] = field(default_factory=dict)
    #: competitions.json (the Swisses' and knockouts' definitions and stages, so that anyone
    #: pairs them again from the site: take5_arena/referee/tournament/published.py); None: none
    competitions: dict[str, Any] | None = None
    #: a store's entrant labels (version id, label), sorted: what relabels its games when a new
    #: version comes (the publisher's high-water mark holds while they stay: LiveStandings.catch_up)
    entrant_labels: tuple[tuple[int, str], ...] | None = None

    def records(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every record in publishing order, one at a time."""
        if self.read_records is None:
            return iter(())
        return self.read_records(0)


def incomplete_reason(record: Mapping[str, Any]) -> str:
    rounds = record.get("rounds") or []
    where = f" in round {len(rounds)}" if rounds else ""
    return f"incomplete: the game was cut off{where} before its end"


@dataclass
class _Summary:
    gid: str
    path: Path
    key: tuple[Any, ...]
    deal: str
    result: GameResult | None
    entrants: tuple[str, ...]
    complete: bool
    reason: str
    owners: tuple[str | None, ...] = ()


def _deal_key(record: dict[str, Any], entrants: Iterable[str]) -> str:
    return json.dumps(
        [record.get("seed"), record.get("settings"), sorted(entrants)], sort_keys=True
    )


def _order_key(record: Mapping[str, Any], gid: str) -> tuple[Any, ...]:
    at = record.get("played_at")
    when = (
        at is None,
        at if isinstance(at, (int, float)) else 0,
        str(record.get("started_at") or ""),
    )
    return (*when, natural_key(gid))


def scan_record_files(paths: Iterable[str | Path], *, verify: bool = True) -> Games:
    """Games from record files and folders (``*.json``, recursively); see the module text.

    A record without a ``game_id`` is known by its file name. With ``verify`` (the default) a record
    that fails `referee verify` is left out and reported in ``problems``. Games are ordered by the
    records' ``played_at`` (when present), then ``started_at``, then game id (numbers in it compared
    as numbers); games that share a deal (seed, settings and entrants, as the rotations of a
    duplicate deal) form one duplicate set, unless a record names its ``duplicate_set`` itself.
    """
    summaries: dict[str, _Summary] = {}
    problems: list[str] = []
    settings_seen: dict[str, dict[str, Any]] = {}
    for path in iter_records([Path(p) for p in paths]):
        try:
            record = load_record(path)
            divergence = verify_record(record) if verify else None
            gid = str(record.get("game_id") or path.stem)
            entrants = tuple(seat_entrant(s) for s in record["seats"])
            complete = bool(record.get("complete", False))
            result = result_from_record(record, game_id=gid) if complete else None
        except MalformedRecord as error:
            problems.append(f"{path}: {error}")
            continue
        except (KeyError, TypeError, ValueError) as error:
            problems.append(f"{path}: malformed record ({type(error).__name__}: {error})")
            continue
        if divergence is not None:
            problems.append(f"{path}: invalid record: {divergence}")
            continue
        if gid in summaries:
            problems.append(f"{path}: game id {gid!r} seen before; left out")
            continue
        if isinstance(record.get("settings"), dict):
            settings_seen.setdefault(
                json.dumps(record["settings"], sort_keys=True), record["settings"]
            )
        summaries[gid] = _Summary(
            gid,
            path,
            _order_key(record, gid),
            _deal_key(record, entrants),
            result,
            entrants,
            complete,
            "" if complete else incomplete_reason(record),
            tuple(_owner(s) for s in record["seats"]),
        )
    order = sorted(summaries, key=lambda g: summaries[g].key)
    owners = {  # the newest game's word for each bot
        e: o for gid in order for e, o in zip(summaries[gid].entrants, summaries[gid].owners) if o
    }
    deals: dict[str, int] = defaultdict(int)
    for s in summaries.values():
        if s.complete:
            deals[s.deal] += 1
    results: list[GameResult] = []
    unrated: dict[str, Unrated] = {}
    for gid in order:
        s = summaries[gid]
        if s.result is None:
            unrated[gid] = Unrated(s.entrants, s.reason)
            continue
        dup = s.result.duplicate_set or (f"deal {s.deal}" if deals[s.deal] > 1 else None)
        results.append(
            GameResult(
                game_id=gid,
                entrants=s.result.entrants,
                penalties=s.result.penalties,
                places=s.result.places,
                duplicate_set=dup,
                faults=s.result.faults,
                played_at=len(results),
            )
        )
    paths_in_order = [summaries[g].path for g in order]

    def read_records(start: int) -> Iterator[tuple[str, dict[str, Any]]]:
        for gid, path in zip(order[start:], paths_in_order[start:]):
            yield gid, load_record(path)

    settings = next(iter(settings_seen.values())) if len(settings_seen) == 1 else {}
    return Games(
        "take5 arena standings",
        results,
        order,
        read_records,
        problems,
        unrated,
        settings=dict(settings),
        owners=owners,
    )


def _owner(seat: Any) -> str | None:
    owner = seat.get("owner") if isinstance(seat, Mapping) else None
    return owner if isinstance(owner, str) and owner else None


def games_from_records(
    records: Mapping[str, Mapping[str, Any]], results: list[GameResult]
) -> Games:
    """Games over records held in memory (tests, small publications): ``results`` as given."""
    rated = {g.game_id for g in results}
    order_of = {g.game_id: g.played_at for g in results}
    order = sorted(
        records,
        key=lambda gid: (gid not in rated, order_of.get(gid, 0), _order_key(records[gid], gid)),
    )
    unrated = {
        gid: Unrated(
            tuple(seat_entrant(s) for s in records[gid]["seats"]),
            incomplete_reason(records[gid]) if not records[gid].get("complete") else "not rated",
        )
        for gid in order
        if gid not in rated
    }

    def read_records(start: int) -> Iterator[tuple[str, dict[str, Any]]]:
        for gid in order[start:]:
            yield gid, dict(records[gid])

    return Games("take5 arena standings", list(results), order, read_records, unrated=unrated)
