"""The standings kept up to date game by game: ratings, ranks, statistics and online Elo.

:func:`~take5_arena.leaderboard.board.compute_standings` starts from every game each time: at
10,000 bots and a million games it rebuilds 6 million pairwise observations, fits from them, and
counts every bot's statistics and online Elo again in Python, many seconds for one new game.
:class:`LiveStandings` keeps what each part needs instead: the fit's counts per pair of bots
(:class:`~take5_arena.leaderboard.incremental.LiveRatings`), the statistics' counts
(:class:`~take5_arena.leaderboard.stats.StatsCounter`) and the online Elo of the games so far. A
game played after the last one updates all three; one that arrives out of time order makes the
online Elo be replayed once, at the next :meth:`LiveStandings.standings` (it depends on the order).

The rows it gives are :func:`compute_standings`' with ``bootstrap=0`` (no intervals, no LOS): the
ratings equal to 1e-6 Elo, everything else exactly (tests/test_incremental.py). The intervals are
a separate, slower computation (seconds at 10,000 bots: docs/benchmarks.md, "Ratings at scale").
"""

from __future__ import annotations

from collections.abc import Sequence

from .board import Standings, assemble_standings
from .fit import BASE_RATING, DEFAULT_PRIOR, prepare
from .incremental import LiveRatings
from .intervals import IntervalMethod
from .online import DEFAULT_K, _online_update, online_elo
from .results import GameResult
from .stats import StatsCounter

__all__ = ["LiveStandings"]


class LiveStandings:
    """The standings without intervals of a growing set of games (see the module text).

    Keeps the games given (the online Elo is replayed from them when a game arrives out of
    order). Not thread-safe: one owner adds and reads.
    """

    def __init__(
        self,
        results: Sequence[GameResult] = (),
        *,
        prior: float = DEFAULT_PRIOR,
        k: float = DEFAULT_K,
    ) -> None:
        self.k = k
        self._results = list(results)
        self._ratings = (
            LiveRatings.from_pairs(prepare(self._results), prior=prior)
            if self._results
            else LiveRatings(prior)
        )
        if self._results:
            self._ratings.fit()  # the cold fit now: the first game's is then warm-started
        self._stats = StatsCounter()
        for g in self._results:
            self._stats.add(g)
        self._online = online_elo(self._results, k=k)
        self._last = max(((g.played_at, g.game_id) for g in self._results), default=None)
        self._online_stale = False

    def add(self, g: GameResult) -> None:
        """One more game (any order; the ratings and statistics do not depend on it)."""
        self._results.append(g)
        self._ratings.add(g.entrants, g.places)
        self._stats.add(g)
        key = (g.played_at, g.game_id)
        if self._last is None or key > self._last:
            _online_update(self._online, g, self.k, BASE_RATING)
            self._last = key
        else:
            self._online_stale = True

    def standings(self) -> Standings:
        """The standings of every game added: ``compute_standings(games, bootstrap=0)``."""
        if self._online_stale:
            self._online = online_elo(self._results, k=self.k)
            self._online_stale = False
        return assemble_standings(
            self._ratings.fit(),
            len(self._results),
            self._stats.stats(),
            self._online,
            None,
            bootstrap=0,
            seed=0,
            k=self.k,
            interval=IntervalMethod.AUTO,
        )
