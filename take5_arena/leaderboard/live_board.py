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
ratings equal to 1e-6 Elo, everything else exactly (tests/test_incremental.py).

With ``bootstrap`` (intervals on) the intervals are a separate, slower computation from every game
(14 s at 10,000 bots on a ladder: docs/benchmarks.md, "Ratings at scale"), made again only when
due: while it is fast (:data:`FAST_REFRESH_SECONDS`) at every call, so that a small arena's
standings are exactly ``compute_standings(games, bootstrap=...)``; otherwise once the games have
grown by :data:`REFRESH_SHARE` since the last time, or a game older than those arrived. In between,
the last intervals are carried to the ratings now (take5_arena/leaderboard/carried.py) and the
standings say as of which game. Each refresh is also the slow full recompute of the fit: it is
compared with the live one (:attr:`LiveStandings.last_check`) and replaces it.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from .board import Standings, assemble_standings
from .carried import carry
from .fit import BASE_RATING, DEFAULT_PRIOR, Fit, fit_elo, prepare
from .incremental import LiveRatings
from .intervals import IntervalMethod, Intervals, rating_intervals
from .online import (
    DEFAULT_K,
    TimePoint,
    _online_update,
    online_elo,
    over_time_cuts,
    over_time_step,
    ratings_over_time,
)
from .publish import DocumentParts, crosstable, crosstable_of_pairs
from .results import GameResult
from .stats import StatsCounter

__all__ = ["FAST_REFRESH_SECONDS", "REFRESH_SHARE", "Check", "LiveStandings"]

#: The intervals are computed again at every call while that took less than this (CPU seconds of
#: the calling thread) ...
FAST_REFRESH_SECONDS = 0.5
#: ... else once the games have grown by this share since the last time (an interval's width moves
#: by about half of it).
REFRESH_SHARE = 0.01


def _point(games: int, played_at: int, fit: Fit) -> TimePoint:
    """A point of the ratings over time: ``fit``, of the first ``games`` games."""
    return TimePoint(games, played_at, tuple(zip(fit.entrants, fit.elo.tolist())))


@dataclass(frozen=True)
class Check:
    """The last full recompute of the fit against the live one."""

    games: int
    difference: float  # the largest difference of a rating, Elo
    seconds: float  # CPU seconds of the refresh (the arrays, the full fit, the intervals)


@dataclass(frozen=True)
class _Base:
    """The last intervals: of the fit of the games up to ``through`` (``count`` of them)."""

    iv: Intervals
    fit: Fit
    count: int
    through: int


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
        bootstrap: int = 0,
        seed: int = 0,
        interval: IntervalMethod | str = IntervalMethod.AUTO,
        labels: Hashable | None = None,
    ) -> None:
        self.k = k
        self.bootstrap, self.seed, self.interval = bootstrap, seed, IntervalMethod(interval)
        self.last_check: Check | None = None
        self._base: _Base | None = None
        self._late = False  # a game older than the last intervals' arrived since
        self._cost = 0.0  # CPU seconds of the last refresh
        self._results = list(results)
        self._by_id = {g.game_id: g for g in self._results}
        self._ratings = (
            LiveRatings.from_pairs(prepare(self._results), prior=prior)
            if self._results
            else LiveRatings(prior)
        )
        self._fitted: Fit | None = None  # the fit of every game added (None: not made since)
        if self._results:
            self._fit()  # the cold fit now: the first game's is then warm-started
        self._stats = StatsCounter()
        for g in self._results:
            self._stats.add(g)
        self._online = online_elo(self._results, k=k)
        self._last = max(((g.played_at, g.game_id) for g in self._results), default=None)
        self._online_stale = False
        # the ratings over time (the site's chart) by number of games: fitted as the games pass
        # each point (see over_time_cuts), None until first asked for or after a late game
        self._points: dict[int, TimePoint] | None = None
        self._labels = labels  # the entrants' labels of these games (see catch_up)

    def _fit(self) -> Fit:
        """The fit of every game added, made once after the last game (the standings and the
        document's ratings over time read the same one)."""
        if self._fitted is None:
            self._fitted = self._ratings.fit()
        return self._fitted

    def add(self, g: GameResult) -> None:
        """One more game (any order; the ratings and statistics do not depend on it)."""
        self._fitted = None
        self._results.append(g)
        self._by_id[g.game_id] = g
        if self._base is not None and g.played_at <= self._base.through:
            self._late = True
        self._ratings.add(g.entrants, g.places)
        self._stats.add(g)
        key = (g.played_at, g.game_id)
        if self._last is None or key > self._last:
            _online_update(self._online, g, self.k, BASE_RATING)
            self._last = key
            count = len(self._results)
            if self._points is not None and count % over_time_step(count) == 0:
                # a point of the ratings over time, now and from now on
                self._points[count] = _point(count, g.played_at, self._fit())
        else:
            self._online_stale = True
            self._points = None  # every point after it changes: fitted again when asked for

    def catch_up(self, results: Sequence[GameResult], *, labels: Hashable | None = None) -> bool:
        """Add the games of ``results`` (all games now) not added yet. False, and nothing added,
        when a game added before is not among them as it was (an entrant relabelled by a new
        version, a game removed): then only new standings from all of them are right.

        ``labels``: the entrants' labels read with ``results`` (a store's version -> label). While
        they are those of the last call and the games added so far were in time order, ``results``
        in time order (a store's sequence numbers) start with those games, unchanged, if its game
        at that place is the last one added: a store only appends results, and a new version
        relabels games only by changing the labels. Only the games after that high-water mark are
        read then, not every game compared (1 s at a million games)."""
        known = len(self._results)
        if (
            labels is not None
            and labels == self._labels
            and not self._online_stale
            and 0 < known <= len(results)
            and results[known - 1] == self._results[-1]
        ):
            for g in results[known:]:
                self.add(g)
            return True
        new: list[GameResult] = []
        matched = 0
        for g in results:
            old = self._by_id.get(g.game_id)
            if old is None:
                new.append(g)
            elif old != g:
                return False
            else:
                matched += 1
        if matched != len(self._by_id):
            return False
        for g in new:
            self.add(g)
        self._labels = labels
        return True

    def document_parts(self, entrants: Sequence[str]) -> DocumentParts:
        """standings.json's crosstable (of ``entrants``, the standings' rows in order) and ratings
        over time, from what is kept: the counts per pair and the points fitted as the games
        passed them (the first time, and after a late game, from every game); equal to
        :func:`~.publish.document_parts` of every game (the ratings to the fit's tolerance)."""
        if not self._results:
            return DocumentParts(crosstable(self._results, entrants), ())
        names, a, b, points, meetings = self._ratings.pairs()
        table = crosstable_of_pairs(entrants, names, a, b, points, meetings)
        total = len(self._results)
        cuts = over_time_cuts(total)
        if (
            self._points is None
            or self._online_stale
            or any(c not in self._points for c in cuts[:-1])
        ):
            self._points = {
                p.games: p
                for p in ratings_over_time(self._results, method="fit", prior=self._ratings.prior)
            }
        assert self._last is not None
        # the last point, every game now, is the ratings now (on the grid, it stays one)
        self._points[total] = _point(total, self._last[0], self._fit())
        self._points = {c: self._points[c] for c in cuts}
        return DocumentParts(table, tuple(self._points[c] for c in cuts))

    @property
    def games(self) -> int:
        return len(self._results)

    def _refresh_due(self) -> bool:
        base = self._base
        if base is None or self._late or self._cost < FAST_REFRESH_SECONDS:
            return True
        return len(self._results) - base.count >= REFRESH_SHARE * base.count

    def _refresh(self) -> None:
        """The intervals of every game, from the full fit, which is checked against the live one
        and replaces it."""
        start = time.thread_time()
        data = prepare(self._results)
        full = fit_elo(data, prior=self._ratings.prior)
        live = self._fit()
        diff = float(np.max(np.abs(live.elo - full.elo))) if len(full.elo) else 0.0
        self._ratings = LiveRatings.from_pairs(data, full)
        self._fitted = None  # refitted from the full fit: the next game's fit is then warm
        iv = rating_intervals(
            data, full, method=self.interval, resamples=self.bootstrap, seed=self.seed
        )
        through = max(g.played_at for g in self._results)
        self._base = _Base(iv, full, len(self._results), through)
        self._late = False
        self._cost = time.thread_time() - start
        self.last_check = Check(len(self._results), diff, self._cost)

    def standings(self) -> Standings:
        """The standings of every game added: ``compute_standings(games, bootstrap=0)``; with
        ``bootstrap``, the intervals of every game or of the games up to the last refresh
        (``Standings.intervals_as_of``, see the module text)."""
        if self._online_stale:
            self._online = online_elo(self._results, k=self.k)
            self._online_stale = False
        iv, as_of = None, None
        if self.bootstrap and self._results:
            if self._refresh_due():
                self._refresh()
            assert self._base is not None
            base = self._base
            fit = self._fit()
            if base.count == len(self._results):
                iv = base.iv  # of every game (the same bots in the same order)
            else:
                iv, as_of = carry(base.iv, base.fit, fit), (base.count, base.through)
        else:
            fit = self._fit()
        return assemble_standings(
            fit,
            len(self._results),
            self._stats.stats(),
            self._online,
            iv,
            bootstrap=self.bootstrap,
            seed=self.seed,
            k=self.k,
            interval=self.interval,
            intervals_as_of=as_of,
        )
