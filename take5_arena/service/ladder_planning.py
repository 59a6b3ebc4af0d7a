"""The ladder's planners: which tables the arena plays next (take5_arena/service/ladder.py's
module text says how the ladder uses them). A planner sees the pool through a :class:`PoolView`
and chooses tables of keys in seat order; it stores nothing and plays nothing, so it is tested
without a store, an executor or a bot."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from take5.shuffle import SplitMix64
from take5_arena.referee.tournament.plan.schedule import author_groups

if TYPE_CHECKING:
    from take5_arena.leaderboard.results import GameResult


@dataclass(frozen=True)
class PoolView:
    """What a planner sees: the active bots (``name@version`` keys) and their games so far
    (recorded plus planned), and how to read the results for a planner that rates."""

    keys: tuple[str, ...]
    games: Mapping[str, int]
    table_size: int
    results: Callable[[], list[GameResult]] = field(default=list, repr=False, compare=False)
    authors: Mapping[str, str | None] | None = None
    """Key -> the author who owns it, when authors are kept apart (None: they are not)."""

    def kept_apart(self, a: str, b: str) -> bool:
        """Whether ``a`` and ``b`` are bots of one author that the rule keeps from one table (the
        pool has enough authors to fill one)."""
        groups = author_groups(list(self.keys), self.authors, self.table_size)
        if groups is None:
            return False
        author = dict(zip(self.keys, groups))
        return author[a] == author[b]

    def apart(self, candidates: Sequence[str], at: Sequence[str] = ()) -> list[str]:
        """A table of ``table_size`` from ``at`` and then ``candidates`` in order, skipping a
        candidate whose author is at the table already; when the pool cannot keep authors apart
        (too few of them), simply the first candidates."""
        k = self.table_size
        table = list(at)
        groups = author_groups(list(self.keys), self.authors, k)
        if groups is not None:
            author = dict(zip(self.keys, groups))
            for c in candidates:
                if len(table) == k:
                    break
                if c not in table and all(author[c] != author[m] for m in table):
                    table.append(c)
            if len(table) == k:
                return table
            table = list(at)
        for c in candidates:
            if len(table) == k:
                break
            if c not in table:
                table.append(c)
        return table


class Planner(Protocol):
    """Chooses the ladder's tables. Tables are tuples of keys in seat order."""

    def gauntlet(self, newcomer: str, pool: PoolView, rng: SplitMix64) -> list[tuple[str, ...]]:
        """The tables a new bot version plays first (possibly none), each in a seat order drawn
        from ``rng``: a bot sees its seat (``View.seat``), so a newcomer seated alike at all its
        first rated tables would tell them from its validation (seated at random)."""
        ...

    def next_table(self, pool: PoolView, rng: SplitMix64) -> tuple[str, ...]:
        """One more table, when nothing else is waiting."""
        ...


class GauntletPlanner:
    """The default planner's first part: a gauntlet of tables for each new version (with each
    other active bot), then the least-played bots' tables (take5_arena/service/ladder.py's module
    text)."""

    def __init__(self, gauntlet_tables: int = 1):
        self.gauntlet_tables = gauntlet_tables

    def gauntlet(self, newcomer: str, pool: PoolView, rng: SplitMix64) -> list[tuple[str, ...]]:
        others = sorted(k for k in pool.keys if k != newcomer)
        k = pool.table_size
        if len(others) < k - 1:
            return []
        games = dict(pool.games)
        tables: list[tuple[str, ...]] = []
        for _ in range(self.gauntlet_tables):
            for opponent in others:
                if pool.kept_apart(newcomer, opponent):
                    # the newcomer's own author's bot: they never meet when it can be helped
                    continue
                seated = [newcomer, opponent]
                rest = sorted(
                    (o for o in others if o != opponent), key=lambda o: (games.get(o, 0), o)
                )
                seats = pool.apart(rest, seated)
                for s in seats:
                    games[s] = games.get(s, 0) + 1
                tables.append(_shuffled(seats, rng))
        return tables

    def next_table(self, pool: PoolView, rng: SplitMix64) -> tuple[str, ...]:
        keys = list(pool.keys)
        shuffled = [keys[i] for i in rng.shuffled(range(len(keys)))]
        first = min(shuffled, key=lambda key: pool.games.get(key, 0))
        return _shuffled(pool.apart([key for key in shuffled if key != first], [first]), rng)


class SettlingPlanner(GauntletPlanner):
    """The gauntlet first, then each next table where the ranking is least settled: the window of
    neighbours in the current order whose likelihoods of superiority are furthest from the
    confidence (take5_arena.referee.tournament.plan.adaptive, the scheduler of ``tournament run
    --until-settled``). Bots that have not played yet, or a pool too small for a window, get the
    least-played table."""

    def next_table(self, pool: PoolView, rng: SplitMix64) -> tuple[str, ...]:
        k = pool.table_size
        by_name = {key.rsplit("@", 1)[0]: key for key in pool.keys}  # current versions go by name
        if len(by_name) < k or any(pool.games.get(key, 0) == 0 for key in pool.keys):
            return super().next_table(pool, rng)
        # lazy: numpy and scipy only once the ladder rates
        from take5_arena.leaderboard.board import ranking_with_los
        from take5_arena.referee.tournament.plan.adaptive import neediest_table

        order, los = ranking_with_los(
            [r for r in pool.results() if all(e in by_name for e in r.entrants)]
        )
        if set(order) != set(by_name):
            return super().next_table(pool, rng)
        authors = (
            None
            if pool.authors is None
            else {name: pool.authors.get(key) for name, key in by_name.items()}
        )
        window = neediest_table(order, los, table_size=k, seed=rng.next_u64(), authors=authors)
        return _shuffled([by_name[name] for name in window], rng)


def _shuffled(seats: Sequence[str], rng: SplitMix64) -> tuple[str, ...]:
    """A table's seat order: drawn, whatever order its bots were chosen in (see
    :meth:`Planner.gauntlet`)."""
    return tuple(seats[i] for i in rng.shuffled(range(len(seats))))


__all__ = ["GauntletPlanner", "Planner", "PoolView", "SettlingPlanner"]
