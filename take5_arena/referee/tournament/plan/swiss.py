"""Swiss pairing for tables of k: each round seats entrants of like standing together, never twice
the same pair while that can be avoided, and anyone can pair it again from the published results.

A Swiss is played round by round; each round is a pure function (:func:`pair_round`) of the
entrants, the settings (table size, seed, whether a smaller last table is allowed), the round's
number, the points so far (:func:`standings`, from the recorded results and the byes) and the
tables already played. No clock, no I/O, no global random state: the same inputs give the same
round on every machine, so :func:`rederive` recomputes every round of a Swiss from its games
alone (grouped by round, as they are published) and a verifier compares.

A round:

1. **standing**: entrants by points (most first), ties broken by a hash of the seed and the entrant
   (not the id's spelling, which an author chooses);
2. **byes**: when ``n`` is not a multiple of ``k``, the ``n mod k`` left over sit out (one left over
   when a smaller last table is allowed: a table needs two). Byes go to the entrants with the fewest
   byes so far, the lowest standing first, so no one has two byes before everyone has had one. A
   bye scores what an average seat scores (:data:`bye_points`), so sitting out neither helps nor
   hurts on average;
3. **tables**: a depth-first search in standing order (each table opened by the best entrant not
   seated yet, filled with the next ones down). First it looks for tables without any repeated
   meeting, and the first it finds is the one closest to the standing order (lexicographically);
   when there is none, a branch and bound (the seats of fewest repeats tried first) minimises the
   meetings repeated (a pair that met ``m`` times before costs ``m``). Both are exact within
   :data:`SEARCH_NODES` nodes (every small field); beyond, the best found is improved by swaps
   between tables while a swap removes repeats (large late rounds may still repeat a meeting that
   a longer search would have avoided). With authors, two entrants of one author at a table
   cost :data:`~.schedule.CLASH_COST` repeats each, so they meet only when every pairing seats
   some (a field with fewer authors than seats);
4. **seats and deals**: seats are shuffled by a generator seeded with the seed and the table's
   number; every table of the round plays the **same deal** (the round's: the deal source asked
   for table ``round`` with no seats, so the deal identity names the round), in every rotation
   with duplicate deals on. Tables are numbered on across rounds, so game ids never repeat.

Scoring for the standings: each game gives an entrant one point per opponent placed below it and
half a point per opponent tied with it (a table of k hands out ``k (k - 1) / 2`` points a game, the
same whatever the scores).
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from take5.shuffle import SplitMix64

from .adaptive import PlayedGame
from .schedule import (
    CLASH_COST,
    DealSource,
    ScheduledGame,
    ScheduleError,
    Seating,
    author_groups,
    games_of_table,
    public_deals,
)

#: Nodes the pairing search visits at most per round (a few tenths of a second): beyond it the
#: best pairing found so far is played.
SEARCH_NODES = 200_000


@dataclass(frozen=True)
class SwissSettings:
    """What a Swiss is paired by (besides the entrants and the results)."""

    table_size: int
    seed: int = 0
    duplicate: bool = True
    short_table: bool = False
    """Whether the last table may have fewer than ``table_size`` seats (at least 2) instead of
    byes."""
    context: Any = None
    """The game settings, part of every game id."""
    deals: DealSource | None = field(default=None, compare=False, repr=False)
    """Where the rounds' deals come from (None: the public seed)."""
    authors: Mapping[str, str | None] | None = field(default=None, compare=False)
    """Entrant -> author: two entrants of one author share a table only when every pairing
    has to seat some (schedule.py's rule for the round robin)."""


@dataclass(frozen=True)
class SwissRound:
    """One round: its tables (numbered on from the earlier rounds'), who sat out, its games."""

    number: int
    tables: tuple[Seating, ...]
    byes: tuple[str, ...]
    games: tuple[ScheduledGame, ...] = field(repr=False)
    repeats: int = 0
    """Meetings this round repeats (0 unless every pairing had to repeat some)."""


def _hash_int(*parts: Any) -> int:
    text = json.dumps(parts, separators=(",", ":"), sort_keys=True)
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def bye_points(settings: SwissSettings) -> float:
    """What a bye scores: an average seat's points of a table of k (``(k - 1) / 2`` a game)."""
    k = settings.table_size
    return (k if settings.duplicate else 1) * (k - 1) / 2


def check(entrants: Sequence[str], settings: SwissSettings) -> None:
    k = settings.table_size
    if len(set(entrants)) != len(entrants):
        raise ScheduleError("entrant ids must be distinct")
    if not isinstance(k, int) or not 2 <= k <= 10:
        raise ScheduleError(f"tables seat 2 to 10 players, not {k!r}")
    if len(entrants) < k:
        raise ScheduleError(f"{len(entrants)} entrants cannot fill a table of {k}")


def standings(
    entrants: Sequence[str],
    played: Sequence[PlayedGame],
    rounds: Sequence[SwissRound],
    settings: SwissSettings,
) -> dict[str, float]:
    """Points per entrant: from each game (module text) and :func:`bye_points` per bye. Games of
    anyone not an entrant are ignored whole (they are not this Swiss's)."""
    points = dict.fromkeys(entrants, 0.0)
    for g in played:
        if not all(e in points for e in g.entrants):
            continue
        for e, p in zip(g.entrants, g.places):
            points[e] += sum(1.0 if p < q else 0.5 if p == q else 0.0 for q in g.places) - 0.5
    for r in rounds:
        for e in r.byes:
            if e in points:
                points[e] += bye_points(settings)
    return points


def standing_order(
    entrants: Sequence[str], points: Mapping[str, float], settings: SwissSettings
) -> list[str]:
    """Best first: most points, ties by a seeded hash of the entrant."""
    return sorted(
        entrants, key=lambda e: (-points.get(e, 0.0), _hash_int("swiss-tie", settings.seed, e), e)
    )


def _byes(order: list[str], count: int, byes_so_far: Mapping[str, int]) -> list[str]:
    """``count`` entrants to sit out: the fewest byes first, then the lowest standing."""
    rank = {e: i for i, e in enumerate(order)}
    return sorted(order, key=lambda e: (byes_so_far.get(e, 0), -rank[e]))[:count]


def _sizes(n: int, settings: SwissSettings) -> tuple[list[int], int]:
    """The round's table sizes and its number of byes."""
    k = settings.table_size
    full, left = divmod(n, k)
    if settings.short_table and left >= 2:
        return [k] * full + [left], 0
    return [k] * full, left


def _search(
    players: list[str], sizes: list[int], met: Mapping[frozenset[str], int]
) -> list[list[str]]:
    """The tables of ``sizes`` (in order) over ``players`` (best first) with the fewest repeated
    meetings (module text): first a search for tables without any repeat, whose first leaf is the
    one closest to the standing order; failing that, branch and bound with the cheapest seat
    first."""
    cost = [[met.get(frozenset((a, b)), 0) for b in players] for a in players]
    rows = _dfs(cost, sizes, strict=True)
    if rows is None:
        rows = _dfs(cost, sizes, strict=False)
        assert rows is not None
        _swap_down(cost, rows)
    return [[players[i] for i in row] for row in rows]


def _swap_down(cost: list[list[int]], rows: list[list[int]]) -> None:
    """Swap two entrants of two tables while that removes repeated meetings, the swap removing the
    most first, then the one of entrants closest in standing (``rows`` changes in place). Only
    needed when the search ran out of nodes (a large field): within them its answer is the
    fewest already, and no swap improves it."""

    def at(row: list[int], leaving: int, coming: int) -> int:
        return sum(cost[coming][m] - cost[leaving][m] for m in row if m != leaving)

    while True:
        best: tuple[int, int, int, int, int, int] | None = None
        for a, ra in enumerate(rows):
            for b in range(a + 1, len(rows)):
                rb = rows[b]
                for x in ra:
                    for y in rb:
                        gain = -(at(ra, x, y) + at(rb, y, x))
                        if gain > 0:
                            cand = (-gain, abs(x - y), a, b, x, y)
                            if best is None or cand < best:
                                best = cand
        if best is None:
            return
        _, _, a, b, x, y = best
        rows[a][rows[a].index(x)] = y
        rows[b][rows[b].index(y)] = x


def _dfs(cost: list[list[int]], sizes: list[int], *, strict: bool) -> list[list[int]] | None:
    """Depth-first search over the tables (each opened by the best entrant not seated, filled in
    standing order): ``strict``, the first without a repeat (None if there is none within
    :data:`SEARCH_NODES` nodes); else the fewest repeats found within them, seats of fewer repeats
    tried first."""
    n = len(cost)
    seated = [False] * n
    tables: list[list[int]] = [[] for _ in sizes]
    best: list[list[int]] | None = None
    best_cost = -1
    nodes = 0

    def go(t: int, start: int, acc: int) -> bool:
        """True: stop (a pairing without repeats, or out of budget)."""
        nonlocal best, best_cost, nodes
        nodes += 1
        if nodes > SEARCH_NODES and (strict or best is not None):
            return True  # (the cheapest-first search always reaches its first leaf)
        if best is not None and acc >= best_cost:
            return False
        if t == len(sizes):
            best, best_cost = [list(x) for x in tables], acc
            return acc == 0
        table = tables[t]
        if len(table) == sizes[t]:
            return go(t + 1, 0, acc)
        if not table:  # a table opens with the best entrant not seated yet
            i = seated.index(False)
            seated[i] = True
            table.append(i)
            stop = go(t, i + 1, acc)
            table.pop()
            seated[i] = False
            return stop
        need = sizes[t] - len(table)
        free = [i for i in range(start, n) if not seated[i]]
        options = [(sum(cost[i][m] for m in table), j, i) for j, i in enumerate(free)]
        if strict:
            options = [o for o in options if o[0] == 0]
        else:
            options.sort()
        for extra, j, i in options:
            if len(free) - j < need:  # too few entrants after i to fill the table
                continue
            seated[i] = True
            table.append(i)
            stop = go(t, i + 1, acc + extra)
            table.pop()
            seated[i] = False
            if stop:
                return True
        return False

    go(0, 0, 0)
    return best


def pair_round(
    entrants: Sequence[str],
    settings: SwissSettings,
    number: int,
    points: Mapping[str, float],
    earlier: Sequence[SwissRound],
) -> SwissRound:
    """Round ``number`` (1 first) after the rounds ``earlier``, with ``points`` so far (see the
    module text; :func:`next_round` computes the points from the games)."""
    check(entrants, settings)
    order = standing_order(entrants, points, settings)
    sizes, bye_count = _sizes(len(order), settings)
    byes_so_far: dict[str, int] = {}
    met: dict[frozenset[str], int] = {}
    for r in earlier:
        for e in r.byes:
            byes_so_far[e] = byes_so_far.get(e, 0) + 1
        for t in r.tables:
            for i, a in enumerate(t.seats):
                for b in t.seats[i + 1 :]:
                    key = frozenset((a, b))
                    met[key] = met.get(key, 0) + 1
    byes = _byes(order, bye_count, byes_so_far)
    players = [e for e in order if e not in set(byes)]
    groups = author_groups(sorted(entrants), settings.authors, settings.table_size)
    weight = dict(met)  # what the search avoids: repeats, and far more an author's two entrants
    if groups is not None:
        author = dict(zip(sorted(entrants), groups))
        for i, a in enumerate(players):
            for b in players[i + 1 :]:
                if author[a] == author[b]:
                    key = frozenset((a, b))
                    weight[key] = weight.get(key, 0) + CLASH_COST
    rows = _search(players, sizes, weight)
    repeats = sum(met.get(frozenset(p), 0) for row in rows for p in itertools.combinations(row, 2))
    first = sum(len(r.tables) for r in earlier)
    deal = (settings.deals or public_deals(settings.seed))(number, ())
    tables, games = [], []
    for i, row in enumerate(rows):
        index = first + i
        rng = SplitMix64(_hash_int("swiss-seats", settings.seed, index))
        seats = tuple(rng.shuffled(sorted(row)))
        tables.append(Seating(index, seats, deal.seed))
        games.extend(
            games_of_table(
                index, seats, deal, len(seats) if settings.duplicate else 1, settings.context
            )
        )
    rank = {e: i for i, e in enumerate(order)}
    return SwissRound(
        number, tuple(tables), tuple(sorted(byes, key=rank.__getitem__)), tuple(games), repeats
    )


def next_round(
    entrants: Sequence[str],
    settings: SwissSettings,
    earlier: Sequence[SwissRound],
    played: Sequence[PlayedGame],
) -> SwissRound:
    """The round after ``earlier``, its standing from ``played``: the games of those rounds, and
    only those (the run loop picks them by the game ids it stored; a verifier by the rounds the
    results are published under, so it needs no deal key)."""
    points = standings(entrants, played, earlier, settings)
    return pair_round(entrants, settings, len(earlier) + 1, points, earlier)


def rederive(
    entrants: Sequence[str], settings: SwissSettings, results: Sequence[Sequence[PlayedGame]]
) -> list[SwissRound]:
    """Every round of a Swiss paired again from its results alone (``results[r]``: the games of
    round ``r + 1``): round r from the games of the rounds before it. A verifier compares these
    tables and byes with the published ones, and each round's games with its tables; with secret
    deals the game ids and seeds differ until the key is passed in ``settings.deals``, the tables
    and byes do not."""
    out: list[SwissRound] = []
    for r in range(len(results)):
        out.append(next_round(entrants, settings, out, [g for rs in results[:r] for g in rs]))
    return out


__all__ = [
    "SEARCH_NODES",
    "SwissRound",
    "SwissSettings",
    "bye_points",
    "check",
    "next_round",
    "pair_round",
    "rederive",
    "standing_order",
    "standings",
]
