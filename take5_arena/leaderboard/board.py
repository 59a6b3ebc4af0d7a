"""The standings board: what the leaderboard shows, computed from the game records alone.

(`take5_arena.standings` is where a tournament's store meets this module.)

Rows by rating with their intervals, the LOS matrix in the same order, descriptive statistics and
online Elo beside them, and the one text form of an interval. This module only puts together what
:mod:`.fit`, :mod:`.intervals`, :mod:`.online` and
:mod:`.stats` compute, so that the terminal, the Markdown file, the site and the
adaptive scheduler all show the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
from scipy.special import stdtrit

from .carried import base_intervals, carry
from .fit import DEFAULT_PRIOR, Fit, fit_elo, prepare
from .intervals import (
    DEFAULT_RESAMPLES,
    LEVEL,
    MIN_DF,
    MIN_UNITS,
    PSEUDO_UNITS,
    IntervalMethod,
    Intervals,
    LosMatrix,
    los_array,
    los_matrix,
    rating_intervals,
)
from .online import DEFAULT_K, online_elo
from .results import GameResult
from .stats import BotStats, bot_stats


def ranking_with_los(
    results: Sequence[GameResult], *, prior: float = DEFAULT_PRIOR
) -> tuple[tuple[str, ...], tuple[float | None, ...]]:
    """The order of the bots by rating (best first) and the published LOS of each over the next one
    down (None between bots of different components): what an adaptive schedule settles on."""
    data = prepare(results)
    if data.n_bots == 0:
        return (), ()
    fit = fit_elo(data, prior=prior)
    iv = rating_intervals(data, fit)
    order = sorted(range(data.n_bots), key=lambda i: (-fit.elo[i], data.entrants[i]))
    if not iv.los and iv.los_next is not None:  # a pool too large for the LOS matrix
        return (
            tuple(data.entrants[i] for i in order),
            tuple(_number(iv.los_next[a]) for a in order[:-1]),
        )
    return (
        tuple(data.entrants[i] for i in order),
        tuple(iv.los[a][b] if iv.los else None for a, b in pairwise(order)),
    )


@dataclass(frozen=True)
class Row:
    """One line of the leaderboard. ``low``/``high`` are None without intervals."""

    rank: int
    entrant: str
    rating: float
    low: float | None
    high: float | None
    component: int  # ratings are comparable only between bots of the same component
    games: int
    wins: float  # a shared first place among k seats counts 1/k
    outright_wins: int
    mean_penalty: float
    mean_place: float
    faults: tuple[tuple[str, int], ...]  # (kind, count), sorted by kind
    online_elo: float
    enough_games: bool = True  # its games tell enough to rank it (leaderboard.intervals)
    rank_range: tuple[int, int] | None = None  # the places its LOS leave open (rank_ranges)
    los_next: float | None = None  # LOS over the next row down (None: last, or not comparable)

    @property
    def interval_text(self) -> str:
        return format_interval(self.low, self.high, self.enough_games)

    @property
    def rank_range_text(self) -> str:
        return format_rank_range(self.rank_range)

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "entrant": self.entrant,
            "rating": self.rating,
            "interval": None if self.low is None else [self.low, self.high],
            "enough_games": self.enough_games,
            "rank_range": None if self.rank_range is None else list(self.rank_range),
            "los_next": self.los_next,
            "component": self.component,
            "games": self.games,
            "wins": self.wins,
            "outright_wins": self.outright_wins,
            "mean_penalty": self.mean_penalty,
            "mean_place": self.mean_place,
            "faults": dict(self.faults),
            "online_elo": self.online_elo,
        }


#: How an interval reads everywhere (terminal, Markdown, site): rounded Elo, "to" between.
INTERVAL_FORMAT = "{low:.0f} to {high:.0f}"
#: Shown instead of an interval for a bot whose games do not tell enough to rank it.
NOT_ENOUGH_GAMES = "not enough games"


def format_interval(low: float | None, high: float | None, enough: bool = True) -> str:
    """The one text form of a rating interval: "1650 to 1892", "not enough games" for a bot that
    has no honest interval yet, "-" without intervals. (An older method still gives such a bot an
    interval; it is then followed by "(not enough games)".)"""
    if low is None or high is None:
        return "-" if enough else NOT_ENOUGH_GAMES
    text = INTERVAL_FORMAT.format(low=low, high=high)
    return text if enough else f"{text} ({NOT_ENOUGH_GAMES})"


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, ..."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def format_rank_range(span: tuple[int, int] | None) -> str:
    """The one text form of a rank range: "3rd-7th", "1st" once settled, "-" without one."""
    if span is None:
        return "-"
    best, worst = span
    return ordinal(best) if best == worst else f"{ordinal(best)}-{ordinal(worst)}"


def rank_ranges(
    los: LosMatrix, component: Sequence[int], enough: Sequence[bool], level: float = LEVEL
) -> tuple[tuple[int, int] | None, ...]:
    """The places within its component that the LOS leave open to each bot (rows in any order).

    A bot is no higher than 1 + the bots stronger than it with LOS >= ``level``, and no lower than
    its component's size less the bots it is stronger than with LOS >= ``level``. A bot without
    enough games has no range (None), and counts for the others as possibly above and below them.
    Read from the same LOS as the rest of the table, so a range is as sure as the claims it comes
    from (bench/coverage.py measures how often the true place falls inside it).
    """
    n = len(component)
    comp = np.asarray(component, dtype=np.int64).reshape(n)
    _, inverse, counts = np.unique(comp, return_inverse=True, return_counts=True)
    size = counts[inverse]
    # claims[i, j]: i stronger than j with LOS >= level (NaN, a None, claims nothing)
    claims = los_array(los) >= level if los else np.zeros((n, n), dtype=bool)
    above, below = claims.sum(axis=0), claims.sum(axis=1)
    return tuple(
        (1 + int(above[i]), int(size[i]) - int(below[i])) if enough[i] else None for i in range(n)
    )


def rank_ranges_from_variances(
    rating: Sequence[float],
    variance: Sequence[float],
    component: Sequence[int],
    enough: Sequence[bool],
    df: float,
    level: float = LEVEL,
) -> tuple[tuple[int, int] | None, ...]:
    """:func:`rank_ranges` of a pool too large for the LOS matrix, from each bot's variance alone.

    The standard error of a difference is at most the sum of the two standard errors (whatever
    their correlation), so "j is stronger than i with LOS >= ``level``" is claimed here only when
    ``r_j - r_i >= q (s_i + s_j)``, q the t quantile of ``level``: never a claim the plain LOS
    would not make, so a range is never narrower than the LOS's own. Counted per component with
    one sort and a binary search per bot, O(bots log bots) (10,000 bots: bench/scale.py).
    """
    n = len(rating)
    q = float(stdtrit(df, level))
    r = np.asarray(rating, dtype=np.float64)
    sd = np.sqrt(np.maximum(np.asarray(variance, dtype=np.float64), 0.0))
    comp = np.asarray(component)
    ok = np.asarray(enough, dtype=bool) & np.isfinite(sd)
    out: list[tuple[int, int] | None] = [None] * n
    for c in np.unique(comp):
        members = np.flatnonzero(comp == c)
        shown = members[ok[members]]
        low_ends = np.sort(r[shown] - q * sd[shown])  # j surely above i: r_j - q s_j >= r_i + q s_i
        high_ends = np.sort(
            r[shown] + q * sd[shown]
        )  # j surely below i: r_j + q s_j <= r_i - q s_i
        above = len(low_ends) - np.searchsorted(low_ends, r[shown] + q * sd[shown], side="left")
        below = np.searchsorted(high_ends, r[shown] - q * sd[shown], side="right")
        for i, up, down in zip(shown.tolist(), above.tolist(), below.tolist()):
            out[i] = (1 + up, len(members) - down)
    return tuple(out)


def describe_interval(method: IntervalMethod | str, resamples: int, seed: int) -> str:
    """One sentence on how the intervals were computed (the standings' ``method.interval``)."""
    method = IntervalMethod(method)
    level = f"{100 * LEVEL:g}%"
    if method is IntervalMethod.BOOTSTRAP:
        return (
            f"{level} percentile bootstrap, {resamples} resamples of whole games (whole duplicate "
            f"sets), seed {seed}"
        )
    if method is IntervalMethod.POSTERIOR:
        return (
            f"{level} normal interval of the Laplace approximation of the posterior (prior "
            "included)"
        )
    if method is IntervalMethod.SANDWICH:
        return (
            f"{level} normal interval of the cluster-robust (sandwich) covariance over whole "
            "games / duplicate sets"
        )
    if method in (IntervalMethod.DESIGN, IntervalMethod.BLENDED):
        blend = (
            f", each bot's curvature moving to the measured one as its units accumulate "
            f"(weight u/(u+{PSEUDO_UNITS:g}))"
            if method is IntervalMethod.BLENDED
            else ""
        )
        return (
            f"{level} t interval of the posterior (prior included) with the design effect "
            "measured over all whole games / duplicate sets of the tournament (Pearson, t "
            f"degrees of freedom from the units){blend}; LOS with a prior on the field's "
            f"spread, averaged over it; below {MIN_DF} degrees of freedom the design effect "
            "counts as at least 1; a bot without a result against another bot, or in a "
            "tournament with no degree of freedom, gets no interval (not enough games)"
        )
    return (
        f"{level} normal interval of the posterior (prior included) whose curvature is measured "
        f"from whole games / duplicate sets as they accumulate (weight u/(u+{PSEUDO_UNITS:g}) for "
        f"a bot in u of them); bots in fewer than {MIN_UNITS} are marked as not having enough "
        "games to rank"
    )


def describe_los(method: IntervalMethod | str) -> str:
    """One sentence on how the LOS were computed (the standings' ``method.los``)."""
    if IntervalMethod(method) in (IntervalMethod.DESIGN, IntervalMethod.BLENDED):
        return (
            "the rating difference under the interval's covariance, with a prior on the field's "
            "spread of ratings (even field or not), averaged over what the results say about "
            "that spread and the design effect"
        )
    return "normal approximation of the rating difference under the interval's covariance"


@dataclass(frozen=True)
class Standings:
    """The leaderboard: rows by rating (highest first) and LOS in the same order (``los[i][j]``)."""

    rows: tuple[Row, ...]
    los: LosMatrix
    games: int
    bootstrap: int  # resamples when the method is the bootstrap; 0: no intervals
    seed: int
    prior: float
    k: float
    interval_method: str = IntervalMethod.ROBUST.value
    #: (games, last sequence number) of the games the intervals came from, when fewer than all
    #: (take5_arena/leaderboard/carried.py); None: from every game
    intervals_as_of: tuple[int, int] | None = None

    def row(self, entrant: str) -> Row:
        for r in self.rows:
            if r.entrant == entrant:
                return r
        raise KeyError(entrant)

    def to_json_dict(self) -> dict[str, Any]:
        rating = (
            "Bradley-Terry maximum likelihood over all pairwise outcomes of all games (draw = "
            "half a point), Elo scale (400/ln 10 per logit), mean 1500 per component, prior: "
            f"{self.prior:g} drawn virtual game(s) per bot against a 1500 opponent"
        )
        online = (
            f"classic online Elo, start 1500, K={self.k:g} split K/(n-1) per pair, in played_at "
            "order (depends on the order; for familiarity only)"
        )
        los = {"entrants": [r.entrant for r in self.rows], "matrix": [list(x) for x in self.los]}
        on = bool(self.bootstrap)
        interval = describe_interval(self.interval_method, self.bootstrap, self.seed)
        if self.intervals_as_of is not None:
            interval += (
                f"; intervals and LOS as of game {self.intervals_as_of[0]:,} (the games up to "
                f"sequence number {self.intervals_as_of[1]}), each interval around its bot's "
                "rating now"
            )
        out: dict[str, Any] = {
            "games": self.games,
            "method": {
                "rating": rating,
                "interval": interval if on else None,
                "los": describe_los(self.interval_method) if self.los else None,
                "online_elo": online,
            },
            "rows": [r.to_json_dict() for r in self.rows],
            "los": los if self.los else None,
        }
        if self.intervals_as_of is not None and on:
            games, through = self.intervals_as_of
            out["intervals_as_of"] = {"games": games, "through": through}
        return out


def _number(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def compute_standings(
    results: Sequence[GameResult],
    *,
    bootstrap: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    prior: float = DEFAULT_PRIOR,
    k: float = DEFAULT_K,
    interval: IntervalMethod | str = IntervalMethod.AUTO,
    intervals_through: int | None = None,
) -> Standings:
    """Everything the leaderboard shows, from the game records alone (input order is irrelevant).

    ``interval`` chooses the method of the intervals and LOS (AUTO: what is published, see
    :func:`rating_intervals`); ``bootstrap`` is the number of resamples when that method is the
    bootstrap, and 0 turns intervals and LOS off. ``intervals_through``: the intervals of the
    games up to that sequence number (``played_at``) only, carried to the ratings of all
    (take5_arena/leaderboard/carried.py: what a large arena's publisher shows between refreshes).
    """
    data = prepare(results)
    fit = fit_elo(data, prior=prior)
    iv = None
    as_of = None
    if bootstrap and data.n_bots and intervals_through is not None:
        base_iv, base_fit, count = base_intervals(
            results, intervals_through, method=interval, resamples=bootstrap, seed=seed, prior=prior
        )
        iv = carry(base_iv, base_fit, fit)
        as_of = (count, intervals_through)
    elif bootstrap and data.n_bots:
        iv = rating_intervals(data, fit, method=interval, resamples=bootstrap, seed=seed)
    return assemble_standings(
        fit,
        data.n_games,
        bot_stats(results),
        online_elo(results, k=k),
        iv,
        bootstrap=bootstrap,
        seed=seed,
        k=k,
        interval=interval,
        intervals_as_of=as_of,
    )


def assemble_standings(
    fit: Fit,
    games: int,
    stats: Mapping[str, BotStats],
    online: Mapping[str, float],
    iv: Intervals | None,
    *,
    bootstrap: int,
    seed: int,
    k: float,
    interval: IntervalMethod | str,
    intervals_as_of: tuple[int, int] | None = None,
) -> Standings:
    """The standings from their parts (:func:`compute_standings`; take5_arena/leaderboard/
    live_board.py keeps the parts up to date game by game): rows by rating, components numbered
    down the table, intervals, LOS and rank ranges when ``iv`` is given."""
    prior = fit.prior
    n = len(fit.entrants)
    order = sorted(range(n), key=lambda i: (-fit.elo[i], fit.entrants[i]))
    # Renumber components by their best bot so labels read 0, 1, ... down the table.
    relabel: dict[int, int] = {}
    for i in order:
        relabel.setdefault(int(fit.component[i]), len(relabel))
    comps = [relabel[int(fit.component[i])] for i in order]
    enough = [True if iv is None else bool(iv.enough[i]) for i in order]
    # the LOS over the next row and the rank ranges first, so that each row is made once (a
    # dataclass copy per row and field cost most of a second at 10,000 bots)
    los: LosMatrix = ()
    nexts: list[float | None] = [None] * n
    spans: Sequence[tuple[int, int] | None] = [None] * n
    if iv is not None and iv.los and n > 1:
        at = np.asarray(order, dtype=np.intp)
        los = los_matrix(los_array(iv.los)[np.ix_(at, at)])
        nexts = [los[k][k + 1] for k in range(n - 1)] + [None]
    if iv is not None and (los or n <= 1):
        spans = rank_ranges(los, comps, enough, level=LEVEL)
    elif iv is not None and iv.variance is not None and iv.los_next is not None:
        # a pool too large for the LOS matrix: the LOS over the next bot, ranges from variances
        spans = rank_ranges_from_variances(
            [float(fit.elo[i]) for i in order],
            [float(iv.variance[i]) for i in order],
            comps,
            enough,
            iv.df,
        )
        nexts = [_number(iv.los_next[i]) for i in order]
    rows = []
    for rank, i in enumerate(order, 1):
        e = fit.entrants[i]
        s = stats[e]
        rows.append(
            Row(
                rank=rank,
                entrant=e,
                rating=float(fit.elo[i]),
                low=None if iv is None or math.isnan(iv.low[i]) else float(iv.low[i]),
                high=None if iv is None or math.isnan(iv.high[i]) else float(iv.high[i]),
                component=comps[rank - 1],
                games=s.games,
                wins=s.wins,
                outright_wins=s.outright_wins,
                mean_penalty=s.mean_penalty,
                mean_place=s.mean_place,
                faults=s.faults,
                online_elo=online[e],
                enough_games=enough[rank - 1],
                rank_range=spans[rank - 1],
                los_next=nexts[rank - 1],
            )
        )
    method = (iv.method if iv is not None else IntervalMethod(interval).resolved()).value
    return Standings(tuple(rows), los, games, bootstrap, seed, prior, k, method, intervals_as_of)
