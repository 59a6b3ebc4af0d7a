"""Ratings as games arrive: classic online Elo, and the ratings over time of the site's chart.

* **Online Elo** - the familiar sequential Elo (start 1500, K=32, each of the n(n-1)/2 pairs of a
  game updated with K/(n-1) from pre-game ratings), in ``played_at`` order. Shown for familiarity
  only: it depends on the order of games and on K, which the fitted rating
  (:mod:`.fit`) does not.
* **Ratings over time** - the fit (or the online Elo) after the first games in time order.

Kept apart from the fit because both depend on the order of the games, which nothing else in the
rating code may.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .fit import BASE_RATING, DEFAULT_PRIOR, fit_elo, prepare
from .results import GameResult

DEFAULT_K = 32.0


def _time_order(results: Sequence[GameResult]) -> list[GameResult]:
    return sorted(results, key=lambda g: (g.played_at, g.game_id))


def _online_update(ratings: dict[str, float], g: GameResult, k: float, initial: float) -> None:
    n = len(g.entrants)
    if n < 2:
        return
    before = [ratings.get(e, initial) for e in g.entrants]
    delta = [0.0] * n
    step = k / (n - 1)
    for i in range(n):
        for j in range(i + 1, n):
            expected = 1.0 / (1.0 + 10.0 ** ((before[j] - before[i]) / 400.0))
            pi, pj = g.places[i], g.places[j]
            score = 1.0 if pi < pj else 0.5 if pi == pj else 0.0
            delta[i] += step * (score - expected)
            delta[j] -= step * (score - expected)
    for e, r0 in zip(g.entrants, before):
        ratings.setdefault(e, r0)
    for e, d in zip(g.entrants, delta):
        ratings[e] += d


def online_elo(
    results: Sequence[GameResult], *, k: float = DEFAULT_K, initial: float = BASE_RATING
) -> dict[str, float]:
    """Classic online Elo in (played_at, game_id) order: K/(n-1) per pair, from pre-game ratings."""
    ratings: dict[str, float] = {}
    for g in _time_order(results):
        _online_update(ratings, g, k, initial)
    return dict(sorted(ratings.items()))


@dataclass(frozen=True)
class TimePoint:
    """Ratings of the bots seen so far, after the first ``games`` games in time order."""

    games: int
    played_at: int
    ratings: tuple[tuple[str, float], ...]  # sorted by entrant

    def to_json_dict(self) -> dict[str, Any]:
        return {"games": self.games, "played_at": self.played_at, "ratings": dict(self.ratings)}


#: The ratings over time have at most this many points (and more than half as many).
OVER_TIME_POINTS = 50


def over_time_step(total: int) -> int:
    """The ratings over time of ``total`` games are taken after every this many games and after
    the last: the smallest power of two that gives at most :data:`OVER_TIME_POINTS` points. A
    power of two, so that the points of fewer games are among those of more as the games grow: a
    publisher fits each point once as the games pass it (take5_arena/leaderboard/live_board.py),
    not 50 refits at each publication."""
    step = 1
    while step * OVER_TIME_POINTS < total:
        step *= 2
    return step


def over_time_cuts(total: int) -> list[int]:
    """After how many games the ratings over time of ``total`` games are taken
    (:func:`over_time_step`)."""
    step = over_time_step(total)
    return [*range(step, total, step), total]


def ratings_over_time(
    results: Sequence[GameResult],
    *,
    every: int | None = None,
    method: Literal["fit", "online"] = "fit",
    prior: float = DEFAULT_PRIOR,
    k: float = DEFAULT_K,
) -> tuple[TimePoint, ...]:
    """Ratings after every ``every`` games (default: :func:`over_time_cuts`, 26 to 50 points) and
    after the last game.

    ``method="fit"`` refits the maximum-likelihood model on each prefix (from zero: warm-started
    from the point before, a fit did not converge on a ladder of thousands of bots; one
    aggregation per point); ``"online"`` samples the classic online Elo trajectory.
    """
    ordered = _time_order(results)
    total = len(ordered)
    if total == 0:
        return ()
    cuts = list(range(every, total, every)) + [total] if every else over_time_cuts(total)
    points: list[TimePoint] = []
    if method == "online":
        ratings: dict[str, float] = {}
        done = 0
        for cut in cuts:
            for g in ordered[done:cut]:
                _online_update(ratings, g, k, BASE_RATING)
            done = cut
            points.append(
                TimePoint(cut, ordered[cut - 1].played_at, tuple(sorted(ratings.items())))
            )
        return tuple(points)
    if method != "fit":
        raise ValueError(f"unknown method {method!r}")
    data = prepare(results)
    rank = np.lexsort((np.arange(data.n_games), data.played_at))  # same order as `ordered`
    for cut in cuts:
        weights = np.zeros(data.n_games)
        weights[rank[:cut]] = 1.0
        f = fit_elo(data, prior=prior, game_weights=weights)
        seen = (
            np.bincount(data.seat_entrant, weights=weights[data.seat_game], minlength=data.n_bots)
            > 0
        )
        points.append(
            TimePoint(
                cut,
                ordered[cut - 1].played_at,
                tuple((e, float(r)) for e, r, s in zip(f.entrants, f.elo, seen) if s),
            )
        )
    return tuple(points)
