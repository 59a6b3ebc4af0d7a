"""Game results: what the leaderboard rates, and the one path from a game record to a result.

:class:`GameResult` is one finished game as the rating, statistics and publishing code see it.
:func:`result_from_record` / :func:`results_from_records` are the conversion from game records
(docs/record-format.md) to results. A tournament's store keeps the same three fields per seat
(score, place, fault kinds) that it took from each record when the game was recorded; the app layer
(take5_arena/standings.py, ``results_from_store``) builds results from those rows directly, so that
standings of a 100,000-game tournament need not parse every record.

Who won is :func:`take5.outcome.win_shares` (a first place shared by k seats is 1/k of a win).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GameResult:
    """One finished game as the rating code sees it (one entry per seat in every tuple)."""

    game_id: str
    entrants: tuple[str, ...]  # entrant id per seat
    penalties: tuple[int, ...]  # final penalty points per seat (lower is better)
    places: tuple[int, ...]  # 1-based place per seat, ties share a place; a forfeit is last
    duplicate_set: str | None = None  # games sharing a deal share this id; resampled as a whole
    # per seat, the kinds of faults ("timeout", "crash", "illegal-card", ...); may be ()
    faults: tuple[tuple[str, ...], ...] = ()
    played_at: int = 0  # ordering key for ratings over time (game sequence number)

    def __post_init__(self) -> None:
        n = len(self.entrants)
        if len(self.penalties) != n or len(self.places) != n:
            raise ValueError(
                f"game {self.game_id}: entrants, penalties and places differ in length"
            )
        if self.faults and len(self.faults) != n:
            raise ValueError(f"game {self.game_id}: faults must be empty or one tuple per seat")
        if any(p < 1 for p in self.places):
            raise ValueError(f"game {self.game_id}: places are 1-based")


def seat_entrant(seat: Mapping[str, Any]) -> str:
    """The entrant a record's seat belongs to: its ``entrant`` id when present, else its name."""
    who = seat.get("entrant") or seat.get("name")
    if not isinstance(who, str) or not who:
        raise ValueError(f"a seat without a name: {seat!r}")
    return who


def result_from_record(
    record: Mapping[str, Any],
    *,
    game_id: str | None = None,
    played_at: int = 0,
    duplicate_set: str | None = None,
) -> GameResult:
    """The rating code's view of one complete game record."""
    gid = game_id or record.get("game_id")
    if not gid:
        raise ValueError("a record without a game_id needs one given")
    if not record.get("complete", False):
        raise ValueError(f"game {gid}: incomplete records are not rated")
    result = record["result"]
    faults = record.get("faults") or []
    return GameResult(
        game_id=str(gid),
        entrants=tuple(seat_entrant(s) for s in record["seats"]),
        penalties=tuple(int(x) for x in result["scores"]),
        places=tuple(int(x) for x in result["places"]),
        duplicate_set=duplicate_set or record.get("duplicate_set"),
        faults=tuple(tuple(str(f.get("kind", "?")) for f in seat) for seat in faults)
        if faults
        else (),
        played_at=played_at,
    )


def natural_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key with digit runs as numbers: g2 before g10."""
    return tuple(
        (0, int(part), part) if part.isdigit() else (1, 0, part)
        for part in re.split(r"(\d+)", text)
        if part
    )


def _deal_key(record: Mapping[str, Any]) -> str:
    entrants = sorted(seat_entrant(s) for s in record["seats"])
    return json.dumps([record.get("seed"), record.get("settings"), entrants], sort_keys=True)


def results_from_records(records: Mapping[str, Mapping[str, Any]]) -> list[GameResult]:
    """Results of the complete records, keyed by game id.

    ``played_at`` numbers the games in the order of the records' ``played_at`` (when present), then
    ``started_at``, then game id (numbers in it compared as numbers). Games that share a deal - the
    same seed, settings and entrants, as the rotations of a duplicate deal - form one duplicate set
    (so the bootstrap resamples them together), unless a record names its ``duplicate_set`` itself.
    """
    complete = {gid: r for gid, r in records.items() if r.get("complete", False)}

    def order(gid: str) -> tuple[Any, ...]:
        r = complete[gid]
        at = r.get("played_at")
        when = (
            at is None,
            at if isinstance(at, (int, float)) else 0,
            str(r.get("started_at") or ""),
        )
        return (*when, natural_key(gid))

    deals: dict[str, int] = defaultdict(int)
    for r in complete.values():
        deals[_deal_key(r)] += 1
    out = []
    for seq, gid in enumerate(sorted(complete, key=order)):
        r = complete[gid]
        key = _deal_key(r)
        dup = f"deal {key}" if deals[key] > 1 else None
        out.append(result_from_record(r, game_id=gid, played_at=seq, duplicate_set=dup))
    return out
