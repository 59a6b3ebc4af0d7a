"""The tournament schedule: which entrants sit at which table, with which deal, in which seat.

A pure function of the entrants, the settings and the seed (:func:`make_schedule`): no clock, no
I/O, no global random state; the same inputs give the same schedule on every machine and Python
version (the randomness is the project's own SplitMix64, ``take5.shuffle``, and deal seeds are
hashes).

Round robin for tables of ``k`` (``n`` entrants, ``C = C(n, k)`` possible tables, ``T`` tables
asked):

* **complete** - when ``T >= C / 2``, every k-subset plays, ``round(T / C)`` times (at least once):
  exact balance of games per entrant and of meetings per pair.
* **balanced** - otherwise a schedule of ``T`` tables in which every entrant sits at the same number
  of tables (within one) and every pair of entrants shares a table equally often (within one):

  1. *rounds*: seats are handed out round by round, each round a fresh seeded permutation of all
     entrants, so after any number of tables the table counts differ by at most one;
  2. *greedy*: each seat goes to the entrant of the current round who has met the table so far the
     least (ties in the round's random order);
  3. *repair*: a local search swaps entrants between tables (which keeps every entrant's table
     count) while the sum of squared pair counts falls - for a fixed total that sum is smallest
     exactly when all pair counts are within one - choosing the best swap for a random pair outside
     the bounds (min-conflicts), until every pair count is ``floor`` or ``ceil`` of the mean. If
     that fails within its budget (a few small pools have no such schedule at all, e.g. 5 entrants
     at 2 tables of 4; near-designs such as 50 entrants at 200 tables of 4, where almost every pair
     must meet exactly once, are hard), the complete round robin is used when it is at most
     ``FALLBACK_FACTOR`` times larger, else the closest schedule found (``pair_spread`` 2).

* **duplicate deals** (on by default): each table's seeded deal is played ``k`` times with rotations
  ``0..k-1`` (``Game(rotation=r)``: deal position p goes to seat ``(p + r) mod k``), so every
  entrant at the table plays every hand of the deal. The ``k`` games form one duplicate set. Without
  duplicates each table is one game with rotation 0.

Seat order at a table is shuffled too (seat 0 is not always the same kind of entrant). Game ids hash
what defines the game (entrants by seat, deal seed, rotation, game settings), so that the same game
is recognised across re-runs and schedule changes (a new entrant) never mistake one game for
another.

**Deals** come from a :data:`DealSource`: a table's number and seats give its :class:`Deal`. A
tournament with a public seed uses :func:`public_deals` (the seed hashed with the table number, as
every schedule before secret deals did, so that their schedules stay the same); one with a secret
key uses take5_arena/referee/tournament/plan/deals.py, whose seeds are an HMAC of the table's deal
identity (:func:`deal_identity`) under the key. The scheduler itself never sees a key.

**Authors** (``authors``: entrant -> author): two entrants of one author never share a table when
the pool has enough authors to fill one (at least ``k``). The complete round robin keeps only the
k-subsets without two of one author; the balanced one gives no seat to an entrant whose author is
at the table already (from outside the round if nobody of the round fits: those entrants then sit
at fewer tables, the price of the rule) and its repair never makes such a table. Without authors,
or with every entrant its own author, the schedule is exactly the one it was before authors
existed.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from take5.shuffle import SplitMix64

from ..errors import TournamentError

#: The largest complete round robin (tables) the scheduler will enumerate.
MAX_COMPLETE_TABLES = 2_000_000
#: When no balanced schedule is found (a few small, dense pools have none), the complete round
#: robin is used instead if it has at most this many times the tables asked; otherwise the closest
#: schedule found (pair counts then spread by two somewhere; :attr:`Schedule.pair_spread` says so).
FALLBACK_FACTOR = 4
#: Swaps the repair may evaluate per attempt (bounds the time of hopeless cases to a few seconds;
#: 100,000 left 9 of 20 seeds of 18 entrants at tables of 4, 22 tables, spread by two).
REPAIR_EVALS = 400_000
#: Default number of tables when ``games`` is not given and a complete round robin would be larger.
DEFAULT_TABLES_PER_ENTRANT = 10


class ScheduleError(TournamentError, ValueError):
    """The entrants and settings admit no schedule (too few entrants, a bad table size, ...)."""


@dataclass(frozen=True)
class Seating:
    """A table of the schedule: its entrants by seat and the seed of its deal (take5.sim.Table,
    a different thing, is the cards on a table)."""

    index: int
    seats: tuple[str, ...]
    deal_seed: int


@dataclass(frozen=True)
class Deal:
    """A table's deal: its seed, and for a deal from a secret key, the key's season and the deal
    identity the seed is the HMAC of (docs/record-format.md, "Deals")."""

    seed: int
    season: int | None = None
    identity: str | None = None


DealSource = Callable[[int, Sequence[str]], Deal]
"""A table's deal from its number and its entrants by seat."""


def public_deals(seed: int) -> DealSource:
    """Deals from a public seed: :func:`deal_seed` of the seed and the table number."""
    return lambda table, seats: Deal(deal_seed(seed, table))


def deal_identity(namespace: str, table: int, seats: Sequence[str], context: Any) -> str:
    """What names a deal under a tournament's key: where it was scheduled (``namespace``: a fixed
    schedule, an until-settled run, the arena's ladder), the table's number there, its entrants by
    seat and its game settings, as compact JSON with sorted keys."""
    return json.dumps(
        ["take5-deal", namespace, table, list(seats), context],
        separators=(",", ":"),
        sort_keys=True,
        ensure_ascii=False,
    )


@dataclass(frozen=True)
class ScheduledGame:
    """One game of the schedule. ``duplicate_set`` is shared by the games of one deal."""

    game_id: str
    table: int
    rotation: int
    seats: tuple[str, ...]
    deal_seed: int
    duplicate_set: str
    deal_season: int | None = None
    deal_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "table": self.table,
            "rotation": self.rotation,
            "seats": list(self.seats),
            "deal_seed": self.deal_seed,
            "duplicate_set": self.duplicate_set,
            "deal_season": self.deal_season,
            "deal_id": self.deal_id,
        }


def games_of_table(
    index: int, seats: tuple[str, ...], deal: Deal, rotations: int, context: Any
) -> list[ScheduledGame]:
    """The games of one table: its deal in ``rotations`` rotations (one duplicate set)."""
    ids = [game_id(seats, deal.seed, r, context) for r in range(rotations)]
    return [
        ScheduledGame(gid, index, r, seats, deal.seed, ids[0], deal.season, deal.identity)
        for r, gid in enumerate(ids)
    ]


def author_groups(
    entrants: Sequence[str], authors: Mapping[str, str | None] | None, table_size: int
) -> list[int] | None:
    """Each entrant's author as a number (an entrant without an author is its own), or None when
    the rule cannot or need not apply: every entrant its own author, or fewer authors than seats
    at a table (then every table would break it; the standings say so)."""
    if not authors:
        return None
    names: dict[str, int] = {}
    groups = []
    for e in entrants:
        author = authors.get(e)
        key = f"a:{author}" if author else f"e:{e}"
        groups.append(names.setdefault(key, len(names)))
    if len(names) == len(entrants) or len(names) < table_size:
        return None
    return groups


def same_author(seats: Sequence[str], authors: Mapping[str, str | None] | None) -> list[str]:
    """The authors with more than one entrant at a table of these seats."""
    if not authors:
        return []
    seen: dict[str, int] = {}
    for e in seats:
        a = authors.get(e)
        if a:
            seen[a] = seen.get(a, 0) + 1
    return sorted(a for a, n in seen.items() if n > 1)


@dataclass(frozen=True)
class Schedule:
    entrants: tuple[str, ...]
    table_size: int
    mode: str  # "complete" or "balanced"
    cycles: int  # complete mode: how many times every k-subset plays (0 in balanced mode)
    requested_tables: int
    duplicate: bool
    seed: int
    tables: tuple[Seating, ...]
    games: tuple[ScheduledGame, ...] = field(repr=False)

    @property
    def games_per_table(self) -> int:
        return self.table_size if self.duplicate else 1

    def table_counts(self) -> dict[str, int]:
        """Tables per entrant."""
        counts = dict.fromkeys(self.entrants, 0)
        for t in self.tables:
            for e in t.seats:
                counts[e] += 1
        return counts

    def game_counts(self) -> dict[str, int]:
        """Games per entrant."""
        return {e: c * self.games_per_table for e, c in self.table_counts().items()}

    def pair_counts(self) -> dict[tuple[str, str], int]:
        """Tables shared, per unordered pair of entrants (every pair, also those that never
        meet)."""
        counts = {(a, b): 0 for i, a in enumerate(self.entrants) for b in self.entrants[i + 1 :]}
        order = {e: i for i, e in enumerate(self.entrants)}
        for t in self.tables:
            seats = sorted(t.seats, key=order.__getitem__)
            for i, a in enumerate(seats):
                for b in seats[i + 1 :]:
                    counts[(a, b)] += 1
        return counts

    @property
    def pair_spread(self) -> int:
        """Largest minus smallest number of tables shared by two entrants (1 or 0 when balanced)."""
        return spread(self.pair_counts().values()) if len(self.entrants) > 1 else 0

    @property
    def table_spread(self) -> int:
        return spread(self.table_counts().values())

    def describe(self) -> str:
        n, k = len(self.entrants), self.table_size
        if self.mode == "complete":
            how = (
                f"complete round robin: every {k}-subset of the {n} entrants plays "
                f"{self.cycles} time{'s' * (self.cycles != 1)}"
            )
        else:
            how = (
                f"balanced round robin of {len(self.tables)} of the {math.comb(n, k)} possible "
                "tables (tables per entrant and meetings per pair equal within one)"
            )
        dup = f", {k} games per deal (duplicate deals)" if self.duplicate else ", one game per deal"
        return f"{how}: {len(self.tables)} tables{dup}, {len(self.games)} games"


# ------------------------------------------------------------------------------------------------
# Randomness and ids


def _hash_int(*parts: Any) -> int:
    text = json.dumps(parts, separators=(",", ":"), sort_keys=True)
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def deal_seed(seed: int, table: int) -> int:
    """The seed of table ``table``'s deal: a 63-bit hash of the tournament seed and the index."""
    return _hash_int("deal", seed, table) >> 1


def game_id(seats: Sequence[str], seed: int, rotation: int, context: Any = None) -> str:
    """A content id: the same entrants by seat, deal, rotation and game settings give the same
    id."""
    text = json.dumps([list(seats), seed, rotation, context], separators=(",", ":"), sort_keys=True)
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


# ------------------------------------------------------------------------------------------------
# The schedule


def default_tables(n: int, k: int) -> int:
    """Tables when none are asked: a complete round robin if it has at most 1,000 tables, else
    enough for every entrant to sit at ``DEFAULT_TABLES_PER_ENTRANT`` tables."""
    c = math.comb(n, k)
    return c if c <= 1000 else math.ceil(DEFAULT_TABLES_PER_ENTRANT * n / k)


def tables_for_games(games: int, k: int, duplicate: bool) -> int:
    """Tables needed for ``games`` games (whole duplicate sets, rounded up)."""
    return max(1, math.ceil(games / (k if duplicate else 1)))


def make_schedule(
    entrants: Iterable[str],
    *,
    table_size: int,
    games: int | None = None,
    seed: int = 0,
    duplicate: bool = True,
    context: Any = None,
    deals: DealSource | None = None,
    authors: Mapping[str, str | None] | None = None,
) -> Schedule:
    """The schedule for ``entrants`` (distinct ids; their order does not matter).

    ``games`` is the number of games wanted (None: see :func:`default_tables`); it becomes
    ``ceil(games / k)`` tables with duplicate deals, ``games`` tables without, and a complete round
    robin rounds that to whole cycles. ``context`` (for example the game settings) goes into the
    game ids only. ``seed`` seeds the seating, and the deals too unless ``deals`` gives them (module
    text); ``authors`` keeps an author's entrants apart (module text).
    """
    given = list(entrants)
    keys = tuple(sorted(set(given)))
    if len(keys) != len(given):
        raise ScheduleError("entrant ids must be distinct")
    n, k = len(keys), table_size
    if not isinstance(k, int) or not 2 <= k <= 10:
        raise ScheduleError(f"tables seat 2 to 10 players, not {k!r}")
    if n < k:
        raise ScheduleError(f"{n} entrant{'s' * (n != 1)} cannot fill a table of {k}")
    if games is not None and games < 1:
        raise ScheduleError(f"games must be at least 1, not {games}")
    requested = tables_for_games(games, k, duplicate) if games is not None else default_tables(n, k)
    rng = SplitMix64(_hash_int("schedule", seed, n, k))
    order = rng.shuffled(range(n))  # entrant index -> position in the schedule's own order
    by_key = author_groups(keys, authors, k)
    # authors by the schedule's own entrant numbers (i: the entrant keys[order[i]])
    group = None if by_key is None else [by_key[order[i]] for i in range(n)]
    subsets = _allowed_subsets(n, k, group)
    c = math.comb(n, k) if subsets is None else len(subsets)
    deals = deals or public_deals(seed)

    mode, cycles = "complete", 0
    rows: Sequence[Sequence[int]] | None = None
    if 2 * requested < c:
        rows, ok = _balanced(n, k, requested, rng, group=group)
        if ok or c > FALLBACK_FACTOR * requested:
            mode = "balanced"
        else:
            rows = None
    if rows is None:
        cycles = max(1, round(requested / c))
        rows = _complete(n, k, cycles, subsets)
    tables: list[Seating] = []
    out_games: list[ScheduledGame] = []
    for index, row in enumerate(rows):
        seats = tuple(keys[order[i]] for i in rng.shuffled(row))
        deal = deals(index, seats)
        tables.append(Seating(index, seats, deal.seed))
        out_games.extend(games_of_table(index, seats, deal, k if duplicate else 1, context))
    return Schedule(
        keys, k, mode, cycles, requested, duplicate, seed, tuple(tables), tuple(out_games)
    )


def counting_allows(n: int, k: int, tables: int) -> bool:
    """The counting condition without which no schedule of ``tables`` tables is balanced within one:
    an entrant at ``c`` tables has ``c (k - 1)`` seats beside it, which must lie between
    ``lo (n - 1)`` and ``hi (n - 1)`` for pair counts between ``lo`` and ``hi``, and the pairs that
    meet ``hi`` times must form a graph with the degrees this implies."""
    lo, hi = _bounds(n, k, tables)
    q, r = divmod(tables * k, n)
    present = (q,) if r == 0 else (q, q + 1)
    if not all(lo * (n - 1) <= c * (k - 1) <= hi * (n - 1) for c in present):
        return False
    if lo == hi:
        return True
    # The pairs meeting hi times form a simple graph in which an entrant at c tables has degree
    # c (k - 1) - lo (n - 1): that degree sequence must be graphical (Erdos-Gallai).
    degrees = sorted(
        [(q + 1) * (k - 1) - lo * (n - 1)] * r + [q * (k - 1) - lo * (n - 1)] * (n - r),
        reverse=True,
    )
    return _graphical(degrees)


def _graphical(d: list[int]) -> bool:
    """Erdos-Gallai: whether a degree sequence (sorted, largest first) is that of a simple graph.
    Vectorised: for each k, sum(min(d_j, k) for j >= k) from prefix sums and a binary search."""
    if sum(d) % 2:
        return False
    deg = np.asarray(d, dtype=np.int64)
    n = len(deg)
    ks = np.arange(1, n + 1)
    prefix = np.cumsum(deg)
    at_least = n - np.searchsorted(deg[::-1], ks, side="left")  # how many d_j >= k
    upto = np.maximum(at_least, ks)  # the tail's entries >= k are d[k:upto]
    tail_min = ks * (upto - ks) + (prefix[-1] - prefix[upto - 1])
    return bool(np.all(prefix <= ks * (ks - 1) + tail_min))


def balanceable_tables(n: int, k: int, tables: int) -> int | None:
    """The smallest number of tables from ``tables`` up (at most 1.5 times as many) that the
    counting condition allows, or None."""
    for t in range(tables, tables + max(2, tables // 2) + 1):
        if counting_allows(n, k, t):
            return t
    return None


def _clash(group: list[int] | None, c: int, table: Sequence[int]) -> bool:
    """Whether entrant ``c`` has an author at ``table`` already."""
    return group is not None and any(group[c] == group[m] for m in table)


def _allowed_subsets(n: int, k: int, group: list[int] | None) -> list[tuple[int, ...]] | None:
    """The k-subsets without two entrants of one author (None: every subset, no rule)."""
    if group is None:
        return None
    if math.comb(n, k) > MAX_COMPLETE_TABLES:
        return None  # too many to list: the balanced schedule keeps authors apart by itself
    allowed = [s for s in itertools.combinations(range(n), k) if len({group[i] for i in s}) == k]
    return allowed or None


def _complete(
    n: int, k: int, cycles: int, subsets: list[tuple[int, ...]] | None = None
) -> list[tuple[int, ...]]:
    if (len(subsets) if subsets is not None else math.comb(n, k)) * cycles > MAX_COMPLETE_TABLES:
        raise ScheduleError(f"a complete round robin of {n} entrants at tables of {k} is too large")
    if subsets is None:
        subsets = list(itertools.combinations(range(n), k))
    return [s for _ in range(cycles) for s in subsets]


def _balanced(
    n: int,
    k: int,
    tables: int,
    rng: SplitMix64,
    attempts: int = 6,
    *,
    group: list[int] | None = None,
) -> tuple[list[list[int]], bool]:
    """At least ``tables`` tables of ``k`` out of ``n`` and whether their pair counts are within one
    (else the attempt that came closest). Each attempt takes the next table count from ``tables`` up
    that the counting condition allows, so a failed search tries a slightly larger schedule (with
    authors the condition does not hold as stated: each attempt takes one table more)."""
    best, best_bad = None, None
    t = tables - 1
    for _ in range(attempts):
        nxt = balanceable_tables(n, k, t + 1) if group is None else t + 1
        if nxt is None or 2 * nxt >= math.comb(n, k):
            break
        t = nxt
        rows, bad = _balanced_once(n, k, t, rng, group)
        if bad == 0:
            return rows, True
        if best_bad is None or bad < best_bad:
            best, best_bad = rows, bad
    if best is None:
        rows, bad = _balanced_once(n, k, tables, rng, group)
        return rows, bad == 0
    return best, False


def _cheapest(pool: list[int], table: list[int], pairs: np.ndarray, group: list[int] | None) -> int:
    """The position in ``pool`` of the entrant who has met ``table`` least (not one at it, nor
    one of an author at it while someone else may sit there)."""
    cand = np.fromiter(pool, dtype=np.int64, count=len(pool))
    cost = pairs[table][:, cand].sum(axis=0)
    cost[np.isin(cand, table)] = 1 << 40
    if group is not None:
        cost[[_clash(group, int(c), table) for c in cand]] += 1 << 30
    return int(np.argmin(cost))


def _balanced_once(
    n: int, k: int, t_count: int, rng: SplitMix64, group: list[int] | None = None
) -> tuple[list[list[int]], int]:
    pairs = np.zeros((n, n), dtype=np.int64)
    met: list[set[int]] = [set() for _ in range(n)]  # who has met whom (the sparse fast path)
    sparse = True  # no pair has met twice yet: the first fresh candidate of the round is optimal
    rows: list[list[int]] = []
    pool: list[int] = []
    for _ in range(t_count):
        table: list[int] = []
        for _seat in range(k):
            if not pool:
                pool = rng.shuffled(range(n))
            if not table:
                table.append(pool.pop(0))
                continue
            pick = -1
            if sparse:
                for j, c in enumerate(pool[:64]):
                    if (
                        c not in table
                        and not any(c in met[m] for m in table)
                        and not _clash(group, c, table)
                    ):
                        pick = j
                        break
            if pick < 0:
                pick = _cheapest(pool, table, pairs, group)
                if _clash(group, pool[pick], table):
                    # nobody left of this round may sit here: the seat goes to the next round
                    pool.extend(rng.shuffled(range(n)))
                    pick = _cheapest(pool, table, pairs, group)
            table.append(pool.pop(pick))
        for a in table:
            for b in table:
                if a != b:
                    if sparse and b in met[a]:
                        sparse = False
                    met[a].add(b)
                    pairs[a, b] += 1
        rows.append(table)
    return rows, _repair(n, k, rows, pairs, rng, group)


def _bounds(n: int, k: int, t_count: int, npairs: int | None = None) -> tuple[int, int]:
    total = t_count * k * (k - 1) // 2
    npairs = npairs or n * (n - 1) // 2
    lo = total // npairs
    hi = lo if total % npairs == 0 else lo + 1
    return lo, hi


#: What a table with two entrants of one author costs the repair, against one meeting too many.
CLASH_COST = 1000


class _Repair:
    """The state of one `_repair`: the tables (``rows``, changed in place), every pair's count of
    shared tables (plain lists: fast single-element access), each entrant's tables, and the pairs
    outside their bounds."""

    def __init__(
        self, n: int, k: int, rows: list[list[int]], pairs: np.ndarray, group: list[int] | None
    ) -> None:
        self.rows = rows
        self.group = group
        allowed = (
            None
            if group is None
            else sum(1 for a in range(n) for b in range(a + 1, n) if group[a] != group[b])
        )
        self.lo, self.hi = _bounds(n, k, len(rows), allowed)
        iu = np.triu_indices(n, 1)
        self.P = P = [list(map(int, r)) for r in pairs]
        self.where: list[set[int]] = [set() for _ in range(n)]  # tables of each entrant
        for t, row in enumerate(rows):
            for e in row:
                self.where[e].add(t)
        arr = pairs[iu]
        idx = np.nonzero((arr > self.hi) | (arr < self.lo))[0]
        bad = {(int(iu[0][i]), int(iu[1][i])) for i in idx}
        if group is not None:
            bad = {(a, b) for a, b in bad if not self.same(a, b)} | {
                (int(a), int(b)) for a, b in zip(*iu) if self.same(int(a), int(b)) and P[a][b] > 0
            }
        self.bad = bad

    def same(self, a: int, b: int) -> bool:
        """Whether two entrants are one author's (who should never meet)."""
        return self.group is not None and self.group[a] == self.group[b]

    def touch(self, a: int, b: int) -> None:
        """Pair (a, b) is in `bad` exactly when its count is outside its bounds."""
        count, group = self.P[a][b], self.group
        key = (a, b) if a < b else (b, a)
        if (
            (count == 0)
            if group is not None and group[a] == group[b]
            else (self.lo <= count <= self.hi)
        ):
            self.bad.discard(key)
        else:
            self.bad.add(key)

    def moves(self, a: int, b: int, rng: SplitMix64) -> list[tuple[int, int, int, int]]:
        """The swaps (entrant, its table, entrant, its table) that would fix pair (a, b)."""
        rows, where = self.rows, self.where
        t_count = len(rows)
        if self.P[a][b] > self.hi or self.same(a, b):
            # Move a (or b) away from a table they share.
            shared = sorted(where[a] & where[b])
            x = shared[rng.below(len(shared))]
            if rng.below(2):
                a, b = b, a
            if t_count <= 400:
                return [(a, x, c, y) for y in range(t_count) if y != x for c in rows[y]]
            # a sample of the tables is plenty when there are many
            ys = {rng.below(t_count) for _ in range(400)} - {x}
            return [(a, x, c, y) for y in sorted(ys) for c in rows[y]]
        # Bring b to a table of a: swap b (at y) with someone at a table x of a.
        return [
            (u, x, b, y)
            for x in where[a]
            if b not in rows[x]
            for u in rows[x]
            if u != a
            for y in where[b]
        ]

    def best(
        self, moves: list[tuple[int, int, int, int]], tabu: dict[tuple[int, int], int], step: int
    ) -> list[tuple[int, int, int, int]]:
        """The moves not tabu whose change in cost is least (even when above 0)."""
        best: list[tuple[int, int, int, int]] = []
        best_d = None
        delta = self.swap_delta
        for m in moves:
            if tabu.get((m[0], m[3]), 0) > step or tabu.get((m[2], m[1]), 0) > step:
                continue
            d = delta(*m)
            if d is None:
                continue
            if best_d is None or d < best_d:
                best, best_d = [m], d
            elif d == best_d:
                best.append(m)
        return best

    def swap_delta(self, a: int, x: int, c: int, y: int) -> int | None:
        """The change in cost of swapping a (at x) with c (at y); None if either is at both."""
        tx, ty = self.rows[x], self.rows[y]
        if c in tx or a in ty:
            return None
        common = set(tx) & set(ty)
        d = 0
        pa, pc = self.P[a], self.P[c]
        grouped = self.group is not None
        same = self.same
        for u in tx:
            if u != a and u not in common:
                d += pc[u] - pa[u] + 1
                if grouped:
                    d += CLASH_COST * (same(c, u) - same(a, u))
        for v in ty:
            if v != c and v not in common:
                d += pa[v] - pc[v] + 1
                if grouped:
                    d += CLASH_COST * (same(a, v) - same(c, v))
        return d

    def swap(self, a: int, x: int, c: int, y: int) -> None:
        """Swap a (at table x) with c (at table y), keeping the counts and the bad pairs."""
        P, where, touch = self.P, self.where, self.touch
        tx, ty = self.rows[x], self.rows[y]
        for u in tx:
            if u != a:
                P[a][u] -= 1
                P[u][a] -= 1
                P[c][u] += 1
                P[u][c] += 1
                touch(a, u)
                touch(c, u)
        for v in ty:
            if v != c:
                P[c][v] -= 1
                P[v][c] -= 1
                P[a][v] += 1
                P[v][a] += 1
                touch(c, v)
                touch(a, v)
        tx[tx.index(a)] = c
        ty[ty.index(c)] = a
        where[a].discard(x)
        where[a].add(y)
        where[c].discard(y)
        where[c].add(x)


def _repair(
    n: int,
    k: int,
    rows: list[list[int]],
    pairs: np.ndarray,
    rng: SplitMix64,
    group: list[int] | None = None,
) -> int:
    """Swap entrants between tables until all pair counts are within one; returns the number of
    pairs still outside (0 on success). Tabu search: for a random pair outside the bounds, the best
    swap that moves one of them away from a shared table (too many meetings) or brings them
    together (too few), even when it makes things worse, but never straight back. With authors
    (``group``), two entrants of one author should meet 0 times (bounds over the other pairs), and
    a swap that seats them together costs :data:`CLASH_COST`."""
    state = _Repair(n, k, rows, pairs, group)
    evals = 0
    step = 0
    tabu: dict[tuple[int, int], int] = {}  # (entrant, table) -> step until which it may not return
    while evals < REPAIR_EVALS:
        step += 1
        if not state.bad:
            return 0
        listed = sorted(state.bad)
        a, b = listed[rng.below(len(listed))]
        moves = state.moves(a, b, rng)
        evals += len(moves) + 1
        best = state.best(moves, tabu, step)
        if best:  # the best move even when it makes things worse (tabu search)
            a, x, c, y = best[rng.below(len(best))]
            state.swap(a, x, c, y)
            tabu[(a, x)] = tabu[(c, y)] = step + 5 + rng.below(10)
    return len(state.bad)


def spread(values: Iterable[int]) -> int:
    vals = list(values)
    return max(vals) - min(vals) if vals else 0
