"""Adaptive scheduling: play where the ranking is least settled, stop when it is settled.

A fixed round robin spends most of its games where the order is already clear (the best bot against
the worst) and too few where two bots are close. This scheduler instead works in batches:

1. a first batch from the balanced round robin (schedule.py), ``initial_tables`` tables per
   entrant, so every bot has a rating and the comparison graph is connected;
2. then, after each batch, it asks a ranking function (passed in: the referee does not compute
   ratings itself) for the current order and the likelihood of superiority (LOS) of each bot over
   the next one down. A pair of neighbours is *settled* when that LOS is at least ``confidence``.
   If every pair is settled, or the game budget is spent, it stops; otherwise it schedules the next
   batch: each table is the window of k neighbours in the current order with the largest total
   "need" (confidence minus LOS, over the open pairs inside it), the need of a chosen window's pairs
   halving so that the batch spreads over the open pairs in proportion to how open they are.

In gauntlet mode only the pairs of one bot (the one above it and the one below it) count, and
every table seats that bot with the k - 1 pool bots around its current place.

Tables are whole duplicate sets (the deal replayed once per rotation) when duplicate deals are on,
which also balances the seats; seats are shuffled by a seeded generator; deals come from the
settings' deal source (schedule.py: a public seed, or a secret key's HMAC). With authors, a window
skips a neighbour whose author is at the table already and takes the next one down instead, and
the first batch is the scheduler's, which keeps authors apart too. Everything is a pure
function of the entrants, the settings, the seed and the results so far (:func:`decide`): no clock,
no I/O, no global random state; table indices continue across batches, so deal seeds and game ids
(schedule.py) never repeat. The run loop (settle.py) records every batch before playing it, so a
run killed at any point resumes by finishing the recorded batches and then asks :func:`decide`
again with the same results: the same tables follow.

The ranking function is what makes it statistics-aware; the app layer passes the leaderboard's (its
LOS is honest with few games: see take5_arena/leaderboard/intervals.py and
docs/standings-format.md). Stopping on a LOS looked at after every batch is optional stopping: the
chance that some pair stops in the wrong order is larger than 1 - confidence per pair;
bench/ranking.py measures how often the order found is the true one.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from take5.shuffle import SplitMix64

from ... import defaults
from ..errors import TournamentError
from .schedule import (
    DealSource,
    ScheduledGame,
    ScheduleError,
    Seating,
    author_groups,
    games_of_table,
    make_schedule,
    public_deals,
)

DEFAULT_CONFIDENCE = defaults.SETTLE_CONFIDENCE
DEFAULT_INITIAL_TABLES = defaults.SETTLE_INITIAL_TABLES
DEFAULT_BUDGET_PER_ENTRANT = defaults.SETTLE_BUDGET_PER_ENTRANT


class SettleError(TournamentError, ValueError):
    """The settings admit no adaptive schedule (too few entrants, unknown gauntlet bot, ...)."""


@dataclass(frozen=True)
class PlayedGame:
    """What the scheduler needs of a finished game: entrants by seat (ids as in ``entrants``) and
    their places (1 is best)."""

    game_id: str
    entrants: tuple[str, ...]
    places: tuple[int, ...]
    duplicate_set: str | None = None


@dataclass(frozen=True)
class Ranking:
    """The current order (best first) and ``los_next[i]``: the probability that ``order[i]`` is
    stronger than ``order[i + 1]`` (None when nothing can be said, e.g. they never met)."""

    order: tuple[str, ...]
    los_next: tuple[float | None, ...]


RankFn = Callable[[Sequence[PlayedGame]], Ranking]


@dataclass(frozen=True)
class SettleSettings:
    table_size: int
    duplicate: bool = True
    seed: int = 0
    confidence: float = DEFAULT_CONFIDENCE
    budget: int | None = None  # games of this run; None: DEFAULT_BUDGET_PER_ENTRANT per entrant
    batch_tables: int | None = None  # tables per batch; None: ceil(entrants / table size), >= 2
    initial_tables: int = DEFAULT_INITIAL_TABLES
    gauntlet: str | None = None  # settle only this entrant's place
    context: Any = None  # the game settings, part of every game id
    deals: DealSource | None = field(default=None, compare=False, repr=False)
    """Where deals come from (None: the public seed); not part of :meth:`key`."""
    authors: Mapping[str, str | None] | None = field(default=None, compare=False)
    """Entrant -> author: an author's entrants never share a table when the pool allows it."""

    @property
    def games_per_table(self) -> int:
        return self.table_size if self.duplicate else 1

    def key(self, entrants: Sequence[str]) -> str:
        """What identifies a run: the same key, the same tables for the same results. Confidence
        and budget are left out: they decide when to stop, not what is played."""
        text = json.dumps(
            [
                "settle",
                sorted(entrants),
                self.table_size,
                self.duplicate,
                self.seed,
                self.batch_tables,
                self.initial_tables,
                self.gauntlet,
                self.context,
            ],
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()


@dataclass(frozen=True)
class PairState:
    """Two neighbours in the current order and whether their order is settled."""

    upper: str
    lower: str
    los: float | None
    settled: bool

    def text(self) -> str:
        los = "?" if self.los is None else f"{100 * self.los:.0f}%"
        return f"{self.upper} > {self.lower} ({los})"


@dataclass(frozen=True)
class Decision:
    """What to do next: stop (``reason`` "settled" or "budget"), or play ``games`` (whole
    tables)."""

    stop: bool
    reason: str
    order: tuple[str, ...]
    pairs: tuple[PairState, ...]  # the pairs that count (all neighbours, or the gauntlet bot's)
    tables: tuple[Seating, ...]
    games: tuple[ScheduledGame, ...]

    @property
    def open_pairs(self) -> tuple[PairState, ...]:
        return tuple(p for p in self.pairs if not p.settled)


def _hash_int(*parts: Any) -> int:
    text = json.dumps(parts, separators=(",", ":"), sort_keys=True)
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def default_budget(n_entrants: int) -> int:
    return DEFAULT_BUDGET_PER_ENTRANT * n_entrants


def batch_size(n_entrants: int, settings: SettleSettings) -> int:
    if settings.batch_tables is not None:
        return max(1, settings.batch_tables)
    return max(2, math.ceil(n_entrants / settings.table_size))


def check(entrants: Sequence[str], settings: SettleSettings) -> None:
    k = settings.table_size
    if len(set(entrants)) != len(entrants):
        raise SettleError("entrant ids must be distinct")
    if not 2 <= k <= 10:
        raise SettleError(f"tables seat 2 to 10 players, not {k}")
    if len(entrants) < k:
        raise SettleError(f"{len(entrants)} entrants cannot fill a table of {k}")
    if not 0.5 < settings.confidence < 1:
        raise SettleError("confidence must be between 0.5 and 1")
    if settings.gauntlet is not None and settings.gauntlet not in entrants:
        raise SettleError(f"gauntlet bot {settings.gauntlet!r} is not an entrant")
    if settings.budget is not None and settings.budget < 1:
        raise SettleError("the budget must be at least one game")


def full_ranking(entrants: Sequence[str], ranking: Ranking) -> tuple[list[str], list[float | None]]:
    """The ranking extended to every entrant: those it does not know (no games yet) go last, in id
    order, with nothing known about their pairs."""
    known = [e for e in ranking.order if e in set(entrants)]
    los: list[float | None] = []
    for i in range(len(known) - 1):
        j = ranking.order.index(known[i])
        adjacent = j + 1 < len(ranking.order) and ranking.order[j + 1] == known[i + 1]
        los.append(ranking.los_next[j] if adjacent else None)
    rest = sorted(set(entrants) - set(known))
    if known and rest:
        los.append(None)
    los += [None] * max(0, len(rest) - 1)
    return known + rest, los


def _pairs(order: list[str], los: list[float | None], settings: SettleSettings) -> list[PairState]:
    out = []
    for i in range(len(order) - 1):
        if settings.gauntlet is not None and settings.gauntlet not in (order[i], order[i + 1]):
            continue
        v = los[i]
        out.append(PairState(order[i], order[i + 1], v, v is not None and v >= settings.confidence))
    return out


def _table(
    index: int, members: Sequence[str], settings: SettleSettings
) -> tuple[Seating, list[ScheduledGame]]:
    """One table (seats shuffled by a generator seeded with the seed and the index) and its
    games."""
    rng = SplitMix64(_hash_int("settle-seats", settings.seed, index))
    seats = tuple(rng.shuffled(sorted(members)))
    deal = (settings.deals or public_deals(settings.seed))(index, seats)
    games = games_of_table(
        index, seats, deal, settings.table_size if settings.duplicate else 1, settings.context
    )
    return Seating(index, seats, deal.seed), games


def _first_batch(
    entrants: Sequence[str], order: list[str], settings: SettleSettings
) -> list[tuple[str, ...]]:
    k, n = settings.table_size, len(entrants)
    if settings.gauntlet is None:
        try:
            sched = make_schedule(
                entrants,
                table_size=k,
                games=math.ceil(n * settings.initial_tables / k),
                seed=settings.seed,
                duplicate=False,
                authors=settings.authors,
            )
        except ScheduleError as error:
            raise SettleError(str(error)) from None
        return [t.seats for t in sched.tables]
    # gauntlet: the new bot against pool bots spread over the whole current order
    pool = [e for e in order if e != settings.gauntlet]
    m = max(1, settings.initial_tables)
    rows = []
    for t in range(m):
        picks = {pool[((j * m + t) * len(pool)) // ((k - 1) * m)] for j in range(k - 1)}
        rows.append(_apart((settings.gauntlet, *sorted(picks)), pool, settings))
    return rows


def _apart(
    members: Sequence[str], candidates: Sequence[str], settings: SettleSettings
) -> tuple[str, ...]:
    """``members``, with each one whose author is at the table already replaced by the first of
    ``candidates`` (in order) that fits, when the pool allows it."""
    groups = author_groups(sorted(set(candidates) | set(members)), settings.authors, len(members))
    if groups is None:
        return tuple(members)
    author = dict(zip(sorted(set(candidates) | set(members)), groups))
    kept: list[str] = []
    for e in members:
        if all(author[e] != author[m] for m in kept):
            kept.append(e)
    for e in candidates:
        if len(kept) == len(members):
            break
        if e not in kept and all(author[e] != author[m] for m in kept):
            kept.append(e)
    return tuple(kept) if len(kept) == len(members) else tuple(members)


def _windows(
    order: list[str], need: list[float], settings: SettleSettings, count: int
) -> list[tuple[str, ...]]:
    """``count`` windows of k neighbours, each time the one with the most need (see module text)."""
    k, n = settings.table_size, len(order)
    need = list(need)
    starts = list(range(n - k + 1))
    if settings.gauntlet is not None:
        p = order.index(settings.gauntlet)
        starts = [s for s in starts if s <= p < s + k]
    rng = SplitMix64(_hash_int("settle-windows", settings.seed, order, [round(x, 9) for x in need]))
    tiebreak = {s: rng.next_u64() for s in starts}
    spans = {s: _span(order, s, settings) for s in starts}
    if settings.gauntlet is not None:  # a window that skipped the gauntlet bot is no window
        starts = [s for s in starts if settings.gauntlet in spans[s][0]] or starts
        spans = {
            s: spans[s] if settings.gauntlet in spans[s][0] else _plain(order, s, k) for s in starts
        }
    rows = []
    for _ in range(count):
        best = max(
            starts,
            key=lambda s: (round(sum(need[spans[s][1] : spans[s][2] - 1]), 12), tiebreak[s]),
        )
        members, lo, hi = spans[best]
        rows.append(members)
        for i in range(lo, hi - 1):
            need[i] *= 0.5
    return rows


def _plain(order: Sequence[str], start: int, k: int) -> tuple[tuple[str, ...], int, int]:
    return tuple(order[start : start + k]), start, start + k


def _span(
    order: Sequence[str], start: int, settings: SettleSettings
) -> tuple[tuple[str, ...], int, int]:
    """The window of ``table_size`` neighbours from ``start`` down, skipping (with authors) a
    neighbour whose author is at the table already, and the part of ``order`` it spans. Without
    authors (or when the pool cannot keep them apart) it is ``order[start:start + k]``."""
    k = settings.table_size
    groups = author_groups(list(order), settings.authors, k)
    if groups is None:
        return _plain(order, start, k)
    members: list[int] = []
    i = start
    while len(members) < k and i < len(order):
        if all(groups[i] != groups[m] for m in members):
            members.append(i)
        i += 1
    j = start - 1
    while len(members) < k and j >= 0:  # the bottom of the order: fill from above the window
        if all(groups[j] != groups[m] for m in members):
            members.insert(0, j)
        j -= 1
    if len(members) < k:
        return _plain(order, start, k)
    return tuple(order[m] for m in members), min(members), max(members) + 1


def neediest_table(
    order: Sequence[str],
    los_next: Sequence[float | None],
    *,
    table_size: int,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
    authors: Mapping[str, str | None] | None = None,
) -> tuple[str, ...]:
    """The one table of ``table_size`` neighbours (in ``order``, best first) whose order is least
    settled: what a continuously running ladder plays next, by the same rule as :func:`decide`
    (``authors``: entrant -> author, kept apart)."""
    order = list(order)
    settings = SettleSettings(
        table_size=table_size, seed=seed, confidence=confidence, authors=authors
    )
    need = [
        0.0 if (v is not None and v >= confidence) else confidence - (v if v is not None else 0.5)
        for v in los_next
    ]
    return _windows(order, need, settings, 1)[0]


def decide(
    entrants: Sequence[str],
    played: Sequence[PlayedGame],
    settings: SettleSettings,
    rank: RankFn,
    *,
    tables_so_far: int = 0,
    games_so_far: int = 0,
) -> Decision:
    """The next batch, or the decision to stop.

    ``played``: the finished games the ranking is to be computed from (those of earlier batches,
    and any earlier games among these entrants); ``tables_so_far`` / ``games_so_far``: tables and
    games this run scheduled before (the first batch when both are 0).
    """
    check(entrants, settings)
    n = len(entrants)
    known = {e for g in played for e in g.entrants}
    ranking = rank(played) if known else Ranking((), ())
    order, los = full_ranking(entrants, ranking)
    pairs = _pairs(order, los, settings)
    budget = settings.budget if settings.budget is not None else default_budget(n)
    first = tables_so_far == 0
    if not first and all(p.settled for p in pairs):
        return Decision(True, "settled", tuple(order), tuple(pairs), (), ())
    left = budget - games_so_far
    if left < settings.games_per_table:
        return Decision(True, "budget", tuple(order), tuple(pairs), (), ())
    if first:
        rows = _first_batch(entrants, order, settings)
    else:
        need = [
            0.0
            if (v is not None and v >= settings.confidence)
            else settings.confidence - (v if v is not None else 0.5)
            for v in los
        ]
        if settings.gauntlet is not None:
            p = order.index(settings.gauntlet)
            need = [x if i in (p - 1, p) else 0.0 for i, x in enumerate(need)]
        rows = _windows(order, need, settings, batch_size(n, settings))
    rows = rows[: max(1, left // settings.games_per_table)]
    tables, games = [], []
    for i, members in enumerate(rows):
        t, gs = _table(tables_so_far + i, members, settings)
        tables.append(t)
        games.extend(gs)
    return Decision(False, "", tuple(order), tuple(pairs), tuple(tables), tuple(games))


__all__ = [
    "DEFAULT_BUDGET_PER_ENTRANT",
    "DEFAULT_CONFIDENCE",
    "DEFAULT_INITIAL_TABLES",
    "Decision",
    "PairState",
    "PlayedGame",
    "RankFn",
    "Ranking",
    "SettleError",
    "SettleSettings",
    "batch_size",
    "check",
    "decide",
    "default_budget",
    "full_ranking",
    "neediest_table",
]
