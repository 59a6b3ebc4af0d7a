"""Intervals on a slower cadence than the ratings: the intervals of the games up to a sequence
number, carried to the ratings of every game.

A new game moves the ratings by a little and is fitted in well under a second at 10,000 bots
(:mod:`.incremental`), but its intervals need every game again (the design effect is measured over
all of them) and, above 1,000 bots, a factorisation and thousands of solves: 14 s at 10,000 bots
on a ladder (docs/benchmarks.md, "Ratings at scale"). An interval's width changes with the share
of new games (as one over the square root of the games), so intervals computed some games ago are
still the right size. :func:`carry` keeps each bot's interval as offsets from its rating then,
placed around its rating now; a bot that had no game then has none yet (not enough games); the
LOS are those of then, and a bot's LOS over the next one down is kept only where that is still the
same bot.

It is a deterministic function of the games and one number, the last sequence number
(``played_at``) of the games the intervals came from, which the standings publish
(``intervals_as_of``) and the site's manifest records, so that ``referee verify --site`` computes
the same table (:func:`~take5_arena.leaderboard.board.compute_standings` with
``intervals_through``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .fit import DEFAULT_PRIOR, Fit, fit_elo, prepare
from .intervals import (
    IntervalMethod,
    Intervals,
    LosMatrix,
    los_array,
    los_matrix,
    rating_intervals,
)
from .results import GameResult

__all__ = ["base_intervals", "carry"]


def base_intervals(
    results: Sequence[GameResult],
    through: int,
    *,
    method: IntervalMethod | str = IntervalMethod.AUTO,
    resamples: int,
    seed: int,
    prior: float = DEFAULT_PRIOR,
) -> tuple[Intervals, Fit, int]:
    """The intervals of the games with ``played_at <= through``, the fit they are of, and how
    many games that is."""
    base = [g for g in results if g.played_at <= through]
    data = prepare(base)
    fit = fit_elo(data, prior=prior)
    iv = rating_intervals(data, fit, method=method, resamples=resamples, seed=seed)
    return iv, fit, len(base)


def _order(fit: Fit) -> np.ndarray:
    """Bots by rating, best first (ties by index: the table's order, entrants being sorted)."""
    return np.lexsort((np.arange(len(fit.elo)), -fit.elo))


def carry(iv: Intervals, base: Fit, fit: Fit) -> Intervals:
    """The intervals ``iv`` of the fit ``base`` placed around the ratings of ``fit`` (a fit of
    more games, its own bots and order): see the module text."""
    at = {e: i for i, e in enumerate(base.entrants)}
    idx = np.array([at.get(e, -1) for e in fit.entrants], dtype=np.intp)
    known = idx >= 0
    src = np.where(known, idx, 0)
    low = np.where(known, fit.elo - (base.elo - iv.low)[src], np.nan)
    high = np.where(known, fit.elo + (iv.high - base.elo)[src], np.nan)
    enough = known & iv.enough[src]
    los: LosMatrix = ()
    if iv.los:
        values = los_array(iv.los)[np.ix_(src, src)]
        shown = known[:, None] & known[None, :] & (fit.component[:, None] == fit.component)
        np.fill_diagonal(shown, False)
        los = los_matrix(np.where(shown, values, np.nan))
    variance = los_next = None
    if iv.variance is not None and iv.los_next is not None:
        variance = np.where(known, iv.variance[src], np.nan)
        base_order = _order(base)
        below = np.full(len(base.entrants), -1, dtype=np.intp)  # the next bot down, then
        below[base_order[:-1]] = base_order[1:]
        order = _order(fit)
        los_next = np.full(len(fit.entrants), np.nan)
        a, b = order[:-1], order[1:]
        same = known[a] & known[b] & (below[src[a]] == src[b])
        los_next[a] = np.where(same, iv.los_next[src[a]], np.nan)
    info = None if iv.information is None else np.where(known, iv.information[src], 0.0)
    return Intervals(
        iv.method,
        low,
        high,
        np.zeros((0, 0)),
        los,
        enough,
        iv.resamples,
        iv.df,
        iv.phi,
        info,
        variance,
        los_next,
    )
