"""Whether a store's results follow from its records: what `referee verify --tournament` checks
besides the rules, and why `referee standings` and `publish` refuse a store (docs/security.md,
"Results").

Standings are computed from the results table (seat_results: place, score, seat, version, faults,
forfeit per seat) because reading every record for every publication would be slow; but that table
is derived data, and an edit of it would change the standings while every record still replays
clean. So every row is derived again from its record by the rule that wrote it
(:func:`~.store.seat_rows`) and compared, and the tables that say which games exist are held to each
other: a game marked played has a record, a record has a scheduled game, a schedule still lists as
many games as it was saved with, and the results' sequence numbers have no holes (results are never
deleted, so a hole is a deleted game, even one deleted from every table).

Each finding names its game. Nothing here trusts a column's type: a row of garbage is a finding,
never an exception. What this cannot see is a store rewritten consistently by someone who also
replays the games' records through the rules: that is what the published site and its records,
kept by anyone who downloaded them, are for.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from take5.audit import short
from take5.shuffle import key_commitment, keyed_seed, parse_key

from .results import SeatRow, seat_rows
from .store import Store

_COLUMNS = ("seat", "version", "score", "place", "forfeited", "faults")
#: the parts of each record the checks read (extracted by SQLite: a check costs a fraction of
#: parsing every record)
_PARTS = ("result", "faults", "seed", "rotation", "game_id", "deal")


@dataclass(frozen=True)
class Finding:
    """A way the store's tables disagree with its records."""

    game_id: str | None
    """The game it is about (None: the store as a whole, e.g. deleted games of unknown id)."""
    problem: str

    def __str__(self) -> str:
        return f"game {self.game_id}: {self.problem}" if self.game_id else self.problem


def findings(store: Store) -> Iterator[Finding]:
    """Every disagreement between the store's results, games and schedules and its records, game
    by game in the order recorded, then the store-wide ones. Raises sqlite3.DatabaseError only
    when the file is not a readable database at all."""
    tables = store.audit
    games = tables.games()
    keys = _keys(store)
    for season in keys.values():
        if season.problem:
            yield Finding(None, season.problem)
    scheduled = tables.scheduled()
    stored: dict[Any, list[tuple[Any, ...]]] = {}
    for row in tables.seat_rows():
        stored.setdefault(row[0], []).append(tuple(row[1:]))
    recorded: set[Any] = set()
    seqs: list[int] = []
    for seq, game_id, text in tables.record_parts(_PARTS):
        recorded.add(game_id)
        seqs.append(seq)
        yield from _game(game_id, text, games.get(game_id), game_id in scheduled, stored, keys)
    for game_id in sorted(stored.keys() - recorded, key=str):
        yield Finding(str(game_id), "the results table has seats of it, but it has no record")
    for game_id, (_seats, status, *_rest) in games.items():
        if status == "done" and game_id not in recorded:
            yield Finding(str(game_id), "it is marked played, but it has no record")
    yield from _holes(tables.last_seq(), seqs)
    for schedule_id, saved, listed in tables.schedule_sizes():
        if saved != listed:
            yield Finding(
                None,
                f"schedule {short(schedule_id)} was saved with {saved} games, it lists {listed}",
            )


def _game(
    game_id: Any,
    text: Any,
    game: tuple[Any, ...] | None,
    scheduled: bool,
    stored: dict[Any, list[tuple[Any, ...]]],
    keys: dict[Any, _Season],
) -> Iterator[Finding]:
    gid = str(game_id)
    if game is None:
        yield Finding(gid, "it has a record, but no such game was scheduled")
        return
    seats_text, status, deal_seed, rotation, deal_season, deal_id = game
    if not scheduled:
        yield Finding(gid, "it has a record, but no schedule lists it")
    if status != "done":
        yield Finding(gid, f"it has a record, but it is marked {short(status)}")
    try:
        record = dict(zip(_PARTS, json.loads(text)))
        seats = json.loads(seats_text)
        want = seat_rows(record, seats)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError):
        yield Finding(gid, "its record or its seats cannot be read: its results cannot be checked")
        return
    if record.get("game_id") != game_id:
        yield Finding(gid, f"its record says it is game {short(record.get('game_id'))}")
    if record.get("seed") != deal_seed or record.get("rotation") != rotation:
        yield Finding(
            gid,
            f"its record was dealt seed {short(record.get('seed'))} rotation "
            f"{short(record.get('rotation'))}, the game seed {short(deal_seed)} rotation "
            f"{short(rotation)}",
        )
    if deal_season is not None:
        yield from _deal(gid, record, deal_season, deal_id, keys.get(deal_season))
    yield from _rows(gid, want, stored.get(game_id, []))


@dataclass(frozen=True)
class _Season:
    commitment: Any
    key: bytes | None
    """The revealed key (None: still secret, or what the store holds is no key)."""
    problem: str | None = None


def _keys(store: Store) -> dict[Any, _Season]:
    """The store's deal seasons; a revealed key must be the one committed to."""
    seasons: dict[Any, _Season] = {}
    for season in store.deal_keys.seasons():
        key, problem = None, None
        if season.key is not None:
            try:
                key = parse_key(season.key)
            except ValueError as error:
                problem = f"the revealed key of deal season {short(season.season)}: {error}"
            else:
                if key_commitment(key) != season.commitment:
                    key = None
                    problem = (
                        f"the revealed key of deal season {short(season.season)} is not the key "
                        "its commitment was published for"
                    )
        seasons[season.season] = _Season(season.commitment, key, problem)
    return seasons


def _deal(
    gid: str, record: Any, season: Any, deal_id: Any, keys: _Season | None
) -> Iterator[Finding]:
    """A game dealt from a secret key: its record says so, names the committed key and the deal's
    identity, and once the key is revealed its seed is that key's HMAC of the identity."""
    deal = record.get("deal")
    if keys is None:
        yield Finding(gid, f"it was dealt from deal season {short(season)}, which the store lacks")
        return
    if (
        not isinstance(deal, dict)
        or deal.get("season") != season
        or deal.get("id") != deal_id
        or deal.get("commitment") != keys.commitment
    ):
        yield Finding(
            gid,
            "its record does not name the deal it was scheduled with (season, identity and "
            "commitment of its deal key)",
        )
        return
    if (
        keys.key is not None
        and isinstance(deal_id, str)
        and record.get("seed") != keyed_seed(keys.key, deal_id)
    ):
        yield Finding(
            gid, "its seed is not the one its revealed deal key gives (a deal chosen by hand)"
        )


def _rows(gid: str, want: list[SeatRow], have: list[tuple[Any, ...]]) -> Iterator[Finding]:
    """The differences between the seat rows the record gives and those the table holds."""
    if len(have) != len(want):
        yield Finding(
            gid, f"the results table has {len(have)} seats, its record and schedule {len(want)}"
        )
    by_seat = {row[0]: row for row in have}
    for expected in want:
        row = by_seat.get(expected[0])
        if row is None:
            continue
        truths: list[Any] = [*expected[:-1], json.loads(expected[-1])]  # faults as a list
        values: list[Any] = [*row[:-1], _kinds(row[-1])]
        for name, value, truth in zip(_COLUMNS, values, truths):
            if value != truth or type(value) is not type(truth):
                yield Finding(
                    gid,
                    f"seat {expected[0]}: the results table says {name} {short(value)}, "
                    f"its record {short(truth)}",
                )


@dataclass(frozen=True)
class DealCounts:
    """Where the recorded games' deals came from, for what verify can say of their seeds."""

    public: int
    """Dealt from a public seed: reproducible, and predictable by anyone (bots included)."""
    checked: int
    """Dealt from a key that has been revealed: every seed checked against it."""
    sealed: int
    """Dealt from a key still secret: checkable once `referee tournament reveal` publishes it."""


def deal_counts(store: Store) -> DealCounts:
    """How many recorded games were dealt from a public seed, a revealed key, a secret key."""
    counts = {"public": 0, "checked": 0, "sealed": 0}
    for season, revealed, n in store.audit.deal_sources():
        counts["public" if season is None else "checked" if revealed else "sealed"] += n
    return DealCounts(**counts)


def _kinds(text: Any) -> Any:
    """A faults column as the list it should hold (the text itself if it holds no JSON)."""
    try:
        return json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return text


def _holes(last_seq: Any, seqs: list[int]) -> Iterator[Finding]:
    """Deleted results: holes in the sequence numbers, or fewer than the store ever handed out."""
    last = max([*seqs, last_seq if isinstance(last_seq, int) else 0])
    have = set(seqs)
    missing = [n for n in range(1, last + 1) if n not in have]
    if missing:
        shown = ", ".join(str(n) for n in missing[:10]) + (" ..." if len(missing) > 10 else "")
        yield Finding(
            None,
            f"{len(missing)} recorded games are missing (deleted from the store): numbers {shown}",
        )


__all__ = ["DealCounts", "Finding", "deal_counts", "findings"]
