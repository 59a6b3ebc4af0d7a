"""Rating mathematics of the leaderboard.

What is published, and why:

* **Rating** – Bradley-Terry maximum likelihood over every pairwise outcome of every game,
  fitted to all games at once (so the order in which games were played cannot change it). A game
  of n seats gives n(n-1)/2 outcomes decided by ``places``: the lower place wins, an equal place is
  a draw worth half a point to each. The logit scale is shown as Elo (400/ln 10 points per logit;
  a 200-point gap means about 76 % expected score), with the mean of each comparison-graph
  component at 1500.
* **Prior** – every bot also plays ``prior`` virtual games (default 1) against a fixed 1500-rated
  opponent, all of them drawn. That keeps the likelihood strictly concave, so the fit always has
  one finite maximum – also for a bot that won (or lost) every game and for pools that split into
  groups that never met – while pulling a bot with m pairwise outcomes towards 1500 by only about
  prior/(m + prior) of its distance (0.3 % at m = 300). ``prior=0`` gives the pure
  maximum-likelihood fit; it is only allowed when that fit exists (the "scored against" graph is
  strongly connected) and without intervals.
* **Interval** – 95 %, from a covariance that stays honest at every size (:func:`robust_cov`,
  ``IntervalMethod.ROBUST``, what is published). With few games it is the Laplace approximation of
  the posterior (likelihood times the prior above), whose curvature includes the prior's, so a bot
  with a handful of games, or a perfect score, keeps a wide interval. As resampling units (whole
  games, or whole duplicate sets: the games of a set share a deal and are not independent)
  accumulate, the curvature is replaced by the one measured from the units (the cluster-robust
  sandwich), per bot with weight u/(u + PSEUDO_UNITS); the part still taken from the model carries
  the design effect pooled over all bots (the pairs of one game are not independent, so the
  model's own curvature alone would be too narrow). The percentile bootstrap over the same units is
  kept as an option: it collapses with two or three units (a 6-game match gave "1747 to 1747") and
  covers only from about 100 games per bot. Coverage by size and method: docs/standings-format.md
  and ``python bench/coverage.py``. A bot in fewer than ``MIN_UNITS`` units is marked as not having
  enough games to rank.
* **Likelihood of superiority** – ``LOS[i][j] = Phi((r_i - r_j) / sd(r_i - r_j))``, ``sd`` from
  the same covariance (for the bootstrap: the covariance of the resamples, smooth where counting
  resamples would jump in steps of 1/resamples and stick at exactly 0 or 1). ``None`` on the
  diagonal, between bots of different components, whose ratings are not comparable, and for a bot
  without enough games to rank.
* **Online Elo** – the familiar sequential Elo (start 1500, K=32, each of the n(n-1)/2 pairs of a
  game updated with K/(n-1) from pre-game ratings), in ``played_at`` order. Shown for familiarity
  only: it depends on the order of games and on K, which the fitted rating does not.

Speed: the games are reduced once to arrays of pairwise observations (:func:`prepare`); a fit works
on the win/total counts per distinct pair of bots (:func:`aggregate`, one ``np.bincount``) with
Newton's method; a bootstrap resample is one ``np.bincount`` of game multiplicities plus a few
chord steps warm-started from the full fit (reusing its Cholesky factor), never a Python loop over
games.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from itertools import pairwise
from typing import Literal

import numpy as np
from scipy import linalg, sparse
from scipy.sparse import csgraph
from scipy.sparse.linalg import LinearOperator, cg
from scipy.special import expit, ndtr, ndtri

from .results import GameResult  # noqa: F401 - re-exported: GameResult lived here
from .stats import bot_stats

ELO_PER_LOGIT = 400.0 / math.log(10.0)
BASE_RATING = 1500.0
DEFAULT_PRIOR = 1.0
DEFAULT_K = 32.0
#: Above this many bots the Newton step is solved with sparse conjugate gradients instead of a dense
#: Cholesky factorisation (see :class:`_Solver`).
DENSE_MAX_BOTS = 300
#: Up to this many bots the bootstrap factorises the full-data Hessian once (dense, 32 MB at 2000)
#: and refits each resample with chord steps; above it, with warm-started Newton-CG.
CHORD_MAX_BOTS = 2000
#: The coverage level of every published interval.
LEVEL = 0.95
#: Bootstrap resamples, everywhere the bootstrap is used (standings, site, status).
DEFAULT_RESAMPLES = 200
#: A bot that took part in fewer resampling units (duplicate sets, or single games) is listed as
#: not having enough games to be ranked; its (wide) interval is still shown.
MIN_UNITS = 3
#: Pseudo-units of the robust covariance: a bot's measured curvature gets weight u / (u + this).
PSEUDO_UNITS = 10.0


# --------------------------------------------------------------------------------------------------
# Arrays


@dataclass(frozen=True, eq=False)
class PairData:
    """All games reduced to arrays, built once and shared by fit, bootstrap and time series.

    Games are held in ``game_id`` order, bots in sorted id order, so that nothing downstream depends
    on the order of the input. Edges are the distinct unordered pairs of bots that met (a < b).
    """

    entrants: tuple[str, ...]
    game_ids: tuple[str, ...]
    played_at: np.ndarray  # per game
    game_unit: np.ndarray  # per game: index of its resampling unit (duplicate set or the game)
    n_units: int
    edge_a: np.ndarray  # per edge
    edge_b: np.ndarray
    obs_edge: np.ndarray  # per pairwise observation (one pair of seats in one game)
    obs_game: np.ndarray
    obs_score: np.ndarray  # points of edge_a in that observation: 1, 0.5 or 0
    seat_game: np.ndarray  # per seat
    seat_entrant: np.ndarray

    @property
    def n_bots(self) -> int:
        return len(self.entrants)

    @property
    def n_games(self) -> int:
        return len(self.game_ids)


def prepare(results: Sequence[GameResult]) -> PairData:
    """Turn game records into pairwise-observation arrays (vectorised per seat count)."""
    games = sorted(results, key=lambda g: g.game_id)
    for g, h in pairwise(games):
        if g.game_id == h.game_id:
            raise ValueError(f"duplicate game_id {g.game_id!r}")
    entrants = tuple(sorted({e for g in games for e in g.entrants}))
    index = {e: i for i, e in enumerate(entrants)}
    n = len(entrants)

    by_size: dict[int, list[int]] = {}
    for gi, g in enumerate(games):
        by_size.setdefault(len(g.entrants), []).append(gi)
    obs_game, obs_a, obs_b, obs_score, seat_game, seat_entrant = [], [], [], [], [], []
    for size, gis in by_size.items():
        gidx = np.asarray(gis, dtype=np.intp)
        ent = np.array([[index[e] for e in games[i].entrants] for i in gis], dtype=np.intp)
        plc = np.array([games[i].places for i in gis], dtype=np.int64)
        seat_game.append(np.repeat(gidx, size))
        seat_entrant.append(ent.ravel())
        for s in range(size):
            for t in range(s + 1, size):
                a, b = ent[:, s], ent[:, t]
                score = np.where(
                    plc[:, s] < plc[:, t], 1.0, np.where(plc[:, s] == plc[:, t], 0.5, 0.0)
                )
                keep = a != b  # a bot seated against itself tells nothing about its strength
                a, b, score, gk = a[keep], b[keep], score[keep], gidx[keep]
                swap = a > b
                obs_a.append(np.where(swap, b, a))
                obs_b.append(np.where(swap, a, b))
                obs_score.append(np.where(swap, 1.0 - score, score))
                obs_game.append(gk)

    def cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)

    a, b = cat(obs_a, np.int64), cat(obs_b, np.int64)
    keys, obs_edge = np.unique(a * max(n, 1) + b, return_inverse=True)
    # resampling units: a duplicate set, or a game of its own (tagged so the ids cannot collide)
    unit_of = [(1, g.game_id) if g.duplicate_set is None else (0, g.duplicate_set) for g in games]
    units = sorted(set(unit_of))
    unit_index = {u: i for i, u in enumerate(units)}
    game_unit = np.array([unit_index[u] for u in unit_of], dtype=np.intp)
    return PairData(
        entrants=entrants,
        game_ids=tuple(g.game_id for g in games),
        played_at=np.array([g.played_at for g in games], dtype=np.int64),
        game_unit=game_unit,
        n_units=len(units),
        edge_a=(keys // max(n, 1)).astype(np.intp),
        edge_b=(keys % max(n, 1)).astype(np.intp),
        obs_edge=obs_edge.ravel().astype(np.intp),
        obs_game=cat(obs_game, np.intp),
        obs_score=cat(obs_score, np.float64),
        seat_game=cat(seat_game, np.intp),
        seat_entrant=cat(seat_entrant, np.intp),
    )


def aggregate(
    data: PairData, game_weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Points of ``edge_a`` and outcomes per edge, each game counted ``game_weights`` times."""
    m = len(data.edge_a)
    if game_weights is None:
        return (
            np.bincount(data.obs_edge, weights=data.obs_score, minlength=m),
            np.bincount(data.obs_edge, minlength=m).astype(np.float64),
        )
    wt = np.asarray(game_weights, dtype=np.float64)[data.obs_game]
    return (
        np.bincount(data.obs_edge, weights=wt * data.obs_score, minlength=m),
        np.bincount(data.obs_edge, weights=wt, minlength=m),
    )


# --------------------------------------------------------------------------------------------------
# Maximum-likelihood fit


class _Objective:
    """Bradley-Terry log-likelihood (plus prior) at one point, with what Newton's method needs."""

    __slots__ = ("ll", "p", "x")

    def __init__(
        self,
        x: np.ndarray,
        ea: np.ndarray,
        eb: np.ndarray,
        w: np.ndarray,
        nn: np.ndarray,
        prior: float,
    ) -> None:
        d = x[ea] - x[eb]
        e = np.exp(-np.abs(d))  # one exp per edge gives both sigma(d) and log sigma(d)
        self.x = x
        self.p = np.where(d >= 0, 1.0, e) / (1.0 + e)
        log_sig = -np.log1p(e) - np.maximum(-d, 0.0)
        # w log s(d) + (nn - w) log s(-d), using log s(-d) = log s(d) - d
        self.ll = float(np.dot(nn, log_sig) - np.dot(nn - w, d))
        if prior:
            self.ll -= 0.5 * prior * float(np.sum(np.logaddexp(0.0, -x) + np.logaddexp(0.0, x)))

    def gradient(
        self,
        ea: np.ndarray,
        eb: np.ndarray,
        w: np.ndarray,
        nn: np.ndarray,
        prior: float,
        want_hessian: bool = True,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = len(self.x)
        ge = w - nn * self.p
        g = np.bincount(ea, weights=ge, minlength=n) - np.bincount(eb, weights=ge, minlength=n)
        h: np.ndarray = np.zeros(0)
        diag: np.ndarray = np.zeros(0)
        if want_hessian:
            h = nn * self.p * (1.0 - self.p)
            diag = np.bincount(ea, weights=h, minlength=n) + np.bincount(eb, weights=h, minlength=n)
        if prior:
            px = expit(self.x)
            g += prior * (0.5 - px)
            if want_hessian:
                diag = diag + prior * px * (1.0 - px)
        return g, h, diag


def _dense_matrix(
    n: int, ea: np.ndarray, eb: np.ndarray, h: np.ndarray, diag: np.ndarray, gauge: bool
) -> np.ndarray:
    A = np.zeros((n, n))
    A[ea, eb] = -h
    A[eb, ea] = -h
    A[np.diag_indices(n)] = diag
    if gauge:
        A += 1.0 / n
    return A


class _Solver:
    """Solves A step = g, A = minus the Hessian (a weighted graph Laplacian plus the prior diagonal).

    Small pools use a dense Cholesky factorisation; larger ones conjugate gradients on a sparse
    matrix whose pattern (the pairs that met) is built once and refilled for every Newton step –
    cheaper than a dense factorisation already at a few hundred bots, and immune to BLAS threads
    fighting over busy cores. Without a prior A is singular along the all-ones vector (only
    differences are identified); since g sums to zero, adding 1 1^T / n picks the zero-mean step.
    """

    def __init__(self, n: int, ea: np.ndarray, eb: np.ndarray, gauge: bool) -> None:
        self.n, self.ea, self.eb, self.gauge = n, ea, eb, gauge
        self.dense = n <= DENSE_MAX_BOTS
        if not self.dense:
            diag = np.arange(n)
            rows, cols = np.concatenate([ea, eb, diag]), np.concatenate([eb, ea, diag])
            slots = np.arange(1, len(rows) + 1, dtype=np.float64)
            self.pattern = sparse.csr_matrix((slots, (rows, cols)), shape=(n, n))
            self.order = self.pattern.data.astype(np.intp) - 1

    def solve(self, h: np.ndarray, diag: np.ndarray, g: np.ndarray) -> np.ndarray:
        n, shift = self.n, (1.0 / self.n if self.gauge else 0.0)
        if self.dense:
            A = _dense_matrix(n, self.ea, self.eb, h, diag, self.gauge)
            return linalg.cho_solve(linalg.cho_factor(A, check_finite=False), g, check_finite=False)
        A = self.pattern.copy()
        A.data = np.concatenate([-h, -h, diag])[self.order]
        op = LinearOperator((n, n), matvec=lambda v: A @ v + shift * v.sum(), dtype=np.float64)
        precond = LinearOperator((n, n), matvec=lambda v: v / (diag + shift), dtype=np.float64)
        step, _ = cg(op, g, rtol=1e-11, atol=0.0, maxiter=10 * n, M=precond)
        return step


def _fit_logits(
    n: int,
    ea: np.ndarray,
    eb: np.ndarray,
    w: np.ndarray,
    nn: np.ndarray,
    prior: float,
    start: np.ndarray | None = None,
    tol: float = 1e-9,
    max_iter: int = 100,
    chord: tuple | None = None,
    solver: _Solver | None = None,
) -> np.ndarray:
    """Maximise the (concave) Bradley-Terry log-likelihood.

    Newton's method with backtracking. With ``chord`` (a Cholesky factor of minus the Hessian of a
    nearby problem, e.g. the full data for a bootstrap resample) it first tries the chord method:
    steps with that fixed matrix, costing one pass over the edges and two triangular solves each
    instead of a new factorisation; if those do not converge quickly it falls back to Newton.
    """
    x = np.zeros(n) if start is None else np.array(start, dtype=np.float64)
    if n == 0:
        return x
    if chord is not None:
        y, last = x, 1.0  # no chord step may move a bot by more than 1 logit (174 Elo)
        for _ in range(40):
            ge = w - nn * expit(y[ea] - y[eb])
            g = np.bincount(ea, weights=ge, minlength=n) - np.bincount(eb, weights=ge, minlength=n)
            if prior:
                g += prior * (0.5 - expit(y))
            step = linalg.cho_solve(chord, g, check_finite=False)
            size = float(np.max(np.abs(step)))
            if not size < last:  # too long, not shrinking fast, or nan: Newton from the start
                break
            y = y + step
            if size < tol:
                return y
            last = 0.8 * size
    solver = solver or _Solver(n, ea, eb, gauge=not prior)
    obj = _Objective(x, ea, eb, w, nn, prior)
    for _ in range(max_iter):
        g, h, diag = obj.gradient(ea, eb, w, nn, prior)
        step = solver.solve(h, diag, g)
        t = 1.0
        while True:
            new = _Objective(obj.x + t * step, ea, eb, w, nn, prior)
            if new.ll >= obj.ll - 1e-12 * (1.0 + abs(obj.ll)) or t < 1e-8:
                break
            t *= 0.5
        obj = new
        if float(np.max(np.abs(t * step))) < tol:
            break
    return obj.x


def _components(n: int, ea: np.ndarray, eb: np.ndarray, nn: np.ndarray) -> np.ndarray:
    """Component label per bot of the graph "played each other" (labels in order of first bot)."""
    met = nn > 0
    graph = sparse.coo_matrix((np.ones(int(met.sum())), (ea[met], eb[met])), shape=(n, n))
    _, labels = csgraph.connected_components(graph, directed=False)
    return labels


def _to_elo(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Logits to Elo with each component's mean at 1500 (components are not comparable)."""
    if len(x) == 0:
        return x
    k = int(labels.max()) + 1
    means = np.bincount(labels, weights=x, minlength=k) / np.bincount(labels, minlength=k)
    return BASE_RATING + ELO_PER_LOGIT * (x - means[labels])


def _check_prior(
    prior: float, n: int, ea: np.ndarray, eb: np.ndarray, w: np.ndarray, nn: np.ndarray
) -> None:
    if prior < 0:
        raise ValueError("prior must be >= 0")
    if prior == 0 and n > 1:
        # The pure MLE exists iff every group of bots scored at least once against the rest
        # (Zermelo / Ford): the directed graph "i scored against j" is strongly connected.
        fwd, bwd = w > 0, (nn - w) > 0
        rows = np.concatenate([ea[fwd], eb[bwd]])
        cols = np.concatenate([eb[fwd], ea[bwd]])
        graph = sparse.coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
        if csgraph.connected_components(graph, directed=True, connection="strong")[0] != 1:
            raise ValueError(
                "prior=0: no finite maximum-likelihood fit (a bot or group won or lost every "
                "game against the rest, or the pool is disconnected); use prior > 0"
            )


@dataclass(frozen=True, eq=False)
class Fit:
    """A fitted rating per bot of ``PairData.entrants`` (same order)."""

    entrants: tuple[str, ...]
    elo: np.ndarray
    logits: np.ndarray  # uncentred, usable as a warm start
    component: np.ndarray  # comparison-graph component per bot
    prior: float

    def as_dict(self) -> dict[str, float]:
        return {e: float(r) for e, r in zip(self.entrants, self.elo)}


def fit_elo(
    data: PairData,
    *,
    prior: float = DEFAULT_PRIOR,
    game_weights: np.ndarray | None = None,
    start: np.ndarray | None = None,
) -> Fit:
    """Maximum-likelihood Bradley-Terry fit on the Elo scale, games weighted by ``game_weights``."""
    w, nn = aggregate(data, game_weights)
    n, ea, eb = data.n_bots, data.edge_a, data.edge_b
    _check_prior(prior, n, ea, eb, w, nn)
    x = _fit_logits(n, ea, eb, w, nn, prior, start)
    labels = _components(n, ea, eb, nn)
    return Fit(data.entrants, _to_elo(x, labels), x, labels, prior)


def fit_ratings(results: Sequence[GameResult], *, prior: float = DEFAULT_PRIOR) -> dict[str, float]:
    """Fitted Elo per entrant, without intervals."""
    return fit_elo(prepare(results), prior=prior).as_dict()


def bootstrap_elo(data: PairData, fit: Fit, *, resamples: int = 200, seed: int = 0) -> np.ndarray:
    """Refit on resamples of whole units (games or duplicate sets): shape (resamples, bots).

    Deterministic for a given seed. Each resample is centred on the full fit's components so it is
    directly comparable with ``fit.elo``.
    """
    if fit.prior == 0 and resamples:
        raise ValueError("bootstrap needs prior > 0 (a resample may have no finite pure-MLE fit)")
    rng = np.random.default_rng(seed)
    n, ea, eb = data.n_bots, data.edge_a, data.edge_b
    out = np.empty((resamples, n))
    chord, solver = None, _Solver(n, ea, eb, gauge=False)
    if resamples and 0 < n <= CHORD_MAX_BOTS:
        w, nn = aggregate(data)
        _, h, diag = _Objective(fit.logits, ea, eb, w, nn, fit.prior).gradient(
            ea, eb, w, nn, fit.prior
        )
        chord = linalg.cho_factor(_dense_matrix(n, ea, eb, h, diag, False), check_finite=False)
    u = data.n_units
    for r in range(resamples):
        mult = np.bincount(rng.integers(0, u, size=u), minlength=u)[data.game_unit]
        w, nn = aggregate(data, mult)
        # Steps below 1e-6 logits (4e-5 Elo) are far below the bootstrap's own noise.
        x = _fit_logits(n, ea, eb, w, nn, fit.prior, fit.logits, 1e-6, chord=chord, solver=solver)
        out[r] = _to_elo(x, fit.component)
    return out


def _centred(cov: np.ndarray, component: np.ndarray) -> np.ndarray:
    """A covariance of logits as one of the published ratings: Elo, each bot's deviation from its
    component's mean (``C V C^T`` with C the centring matrix, in O(n^2) rather than two products)."""
    k = int(component.max()) + 1 if len(component) else 0
    count = np.bincount(component, minlength=k).astype(np.float64)

    def minus_component_means(m: np.ndarray) -> np.ndarray:  # (I - S) m, S the averaging matrix
        sums = np.zeros((k, m.shape[1]))
        np.add.at(sums, component, m)
        return m - (sums / count[:, None])[component]

    left = minus_component_means(cov)
    return ELO_PER_LOGIT**2 * minus_component_means(left.T).T


def _hessian(data: PairData, fit: Fit) -> tuple[np.ndarray, np.ndarray]:
    """Minus the Hessian of the log-likelihood at the fit: (likelihood part, prior diagonal)."""
    n, ea, eb = data.n_bots, data.edge_a, data.edge_b
    w, nn = aggregate(data)
    _, h, diag = _Objective(fit.logits, ea, eb, w, nn, 0.0).gradient(ea, eb, w, nn, 0.0)
    px = expit(fit.logits)
    return _dense_matrix(n, ea, eb, h, diag, False), fit.prior * px * (1.0 - px)


def posterior_cov(data: PairData, fit: Fit) -> np.ndarray:
    """Covariance (Elo, centred per component) of the Laplace approximation of the posterior.

    The posterior is the pairwise likelihood times the prior (the virtual drawn games); its
    curvature at the fit includes the prior's, so a bot with few games or a perfect score keeps a
    wide distribution instead of the point a resampling of two or three units produces.
    """
    lik, prior = _hessian(data, fit)
    cov = linalg.inv(lik + np.diag(prior))
    return _centred(cov, fit.component)


def unit_scores(data: PairData, fit: Fit) -> sparse.csr_matrix:
    """Score (gradient of the log-likelihood) contributed by each resampling unit: units x bots."""
    n = data.n_bots
    d = fit.logits[data.edge_a] - fit.logits[data.edge_b]
    resid = data.obs_score - expit(d)[data.obs_edge]
    unit = data.game_unit[data.obs_game]
    rows = np.concatenate([unit, unit])
    cols = np.concatenate([data.edge_a[data.obs_edge], data.edge_b[data.obs_edge]])
    return sparse.csr_matrix(
        (np.concatenate([resid, -resid]), (rows, cols)), shape=(data.n_units, n)
    )


def sandwich_cov(data: PairData, fit: Fit) -> np.ndarray:
    """Cluster-robust (sandwich) covariance, clusters = resampling units, Elo, centred.

    ``H^-1 (u/(u-1) J + P) H^-1`` with H minus the posterior Hessian, J the sum over units of the
    outer product of their scores (so correlation between the pairs of one game, and between the
    games of a duplicate set, is measured, not assumed) and P the prior's curvature.
    """
    lik, prior = _hessian(data, fit)
    hinv = linalg.inv(lik + np.diag(prior))
    g = unit_scores(data, fit)
    u = data.n_units
    j = (g.T @ g).toarray() * (u / (u - 1) if u > 1 else 1.0)
    cov = hinv @ (j + np.diag(prior)) @ hinv
    return _centred(cov, fit.component)


def robust_cov(data: PairData, fit: Fit, pseudo_units: float | None = None) -> np.ndarray:
    """Posterior covariance whose curvature is the sandwich's, shrunk towards the model's when a bot
    has few resampling units (Elo, centred).

    ``H^-1 (D^1/2 J D^1/2 + (I-D)^1/2 L (I-D)^1/2 + P) H^-1``, L the likelihood's own curvature, J
    the measured one (the sum of the units' score outer products, times u/(u-1)), P the prior's,
    ``D = diag(u_i / (u_i + m))`` with u_i the units bot i took part in and m
    :data:`PSEUDO_UNITS`. With few units J is mostly noise (and zero for a bot that won every
    game), and this is the Laplace posterior; with many it is the cluster-robust sandwich, which
    measures how much the pairs of one game, or the games of a duplicate set, really tell. L is
    scaled by the design effect tr(J) / tr(L) pooled over all bots and all U units (stable long
    before one bot's J is), shrunk towards 1 as ``(U kappa + m) / (U + m)`` and never below 1.
    """
    m = PSEUDO_UNITS if pseudo_units is None else pseudo_units
    lik, prior = _hessian(data, fit)
    hinv = linalg.inv(lik + np.diag(prior))
    g = unit_scores(data, fit)
    u = data.n_units
    j = (g.T @ g).toarray() * (u / (u - 1) if u > 1 else 1.0)
    units = units_per_bot(data).astype(np.float64)
    d = np.sqrt(units / (units + m))
    e = np.sqrt(1.0 - d * d)
    # design effect pooled over all bots and units (stable long before any one bot's J is), itself
    # shrunk towards 1 while units are few, and never below 1 for the model part
    t_lik = float(np.trace(lik))
    kappa = float(np.trace(j)) / t_lik if t_lik > 0 else 1.0
    kappa = max(1.0, (u * kappa + m) / (u + m))
    meat = d[:, None] * j * d[None, :] + kappa * e[:, None] * lik * e[None, :] + np.diag(prior)
    cov = hinv @ meat @ hinv
    return _centred(cov, fit.component)


def units_per_bot(data: PairData) -> np.ndarray:
    """How many resampling units (duplicate sets, or single games) each bot took part in."""
    pairs = np.unique(data.game_unit[data.seat_game] * max(data.n_bots, 1) + data.seat_entrant)
    return np.bincount(pairs % max(data.n_bots, 1), minlength=data.n_bots)


def los_matrix(fit: Fit, samples: np.ndarray) -> tuple[tuple[float | None, ...], ...]:
    """Likelihood of superiority from the normal approximation of the bootstrap covariance."""
    if len(fit.elo) == 0 or len(samples) < 2:
        return ()
    return los_from_cov(fit, np.atleast_2d(np.cov(samples, rowvar=False)))


def los_from_cov(fit: Fit, cov: np.ndarray) -> tuple[tuple[float | None, ...], ...]:
    """``LOS[i][j] = Phi((r_i - r_j) / sd(r_i - r_j))`` for a covariance of the ratings (Elo)."""
    n = len(fit.elo)
    if n == 0:
        return ()
    var = np.diag(cov)
    sd = np.sqrt(np.maximum(var[:, None] + var[None, :] - 2.0 * cov, 0.0))
    diff = fit.elo[:, None] - fit.elo[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        los = np.where(
            sd > 1e-9,
            ndtr(diff / np.where(sd > 1e-9, sd, 1.0)),
            np.where(diff > 0, 1.0, np.where(diff < 0, 0.0, 0.5)),
        )
    same = fit.component[:, None] == fit.component[None, :]
    return tuple(
        tuple(float(los[i, j]) if i != j and same[i, j] else None for j in range(n))
        for i in range(n)
    )


class IntervalMethod(str, Enum):
    """How the uncertainty of the ratings is computed (see the module text and the coverage table in
    docs/standings-format.md)."""

    AUTO = "auto"  # what the standings publish: chosen by the number of units (see rating_intervals)
    BOOTSTRAP = "bootstrap"
    POSTERIOR = "posterior"
    SANDWICH = "sandwich"
    ROBUST = "robust"  # the posterior, its curvature measured from the data as units accumulate

    def resolved(self) -> IntervalMethod:
        """The method AUTO stands for."""
        return IntervalMethod.ROBUST if self is IntervalMethod.AUTO else self


@dataclass(frozen=True, eq=False)
class Intervals:
    """Interval per bot (Elo, ``PairData.entrants`` order), the covariance the LOS come from, the LOS
    matrix, and whether each bot has played enough to be ranked (:data:`MIN_UNITS`)."""

    method: IntervalMethod  # the method used (never AUTO)
    low: np.ndarray
    high: np.ndarray
    cov: np.ndarray
    los: tuple[tuple[float | None, ...], ...]
    enough: np.ndarray
    resamples: int  # bootstrap resamples (0 for the other methods)


def rating_intervals(
    data: PairData,
    fit: Fit,
    *,
    method: IntervalMethod | str = IntervalMethod.AUTO,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Intervals:
    """The :data:`LEVEL` intervals and LOS of a fit.

    ``AUTO`` is :attr:`IntervalMethod.ROBUST`, the only method whose coverage stays within 90-97%
    at every size measured (bench/coverage.py); ``resamples`` and ``seed`` matter only for the
    bootstrap. Bots in fewer than :data:`MIN_UNITS` resampling units are marked as not having
    enough games to rank (``enough``); their interval is still the honest, wide one.
    """
    method = IntervalMethod(method).resolved()
    n = data.n_bots
    units = units_per_bot(data)
    enough = units >= MIN_UNITS
    if fit.prior == 0:
        raise ValueError("intervals need prior > 0 (without it a bot may have no finite rating)")
    if method is IntervalMethod.BOOTSTRAP:
        if not resamples:
            raise ValueError("bootstrap intervals need resamples > 0")
        samples = bootstrap_elo(data, fit, resamples=resamples, seed=seed)
        tail = 50.0 * (1.0 - LEVEL)
        low, high = np.percentile(samples, [tail, 100.0 - tail], axis=0)
        cov = np.atleast_2d(np.cov(samples, rowvar=False)) if resamples > 1 else np.zeros((n, n))
        return Intervals(method, low, high, cov, _claims(fit, cov, enough), enough, resamples)
    if method is IntervalMethod.POSTERIOR:
        cov = posterior_cov(data, fit)
    elif method is IntervalMethod.SANDWICH:
        cov = sandwich_cov(data, fit)
    else:
        cov = robust_cov(data, fit)
    half = ndtri(0.5 + LEVEL / 2.0) * np.sqrt(np.maximum(np.diag(cov), 0.0))
    return Intervals(method, fit.elo - half, fit.elo + half, cov, _claims(fit, cov, enough), enough, 0)


def _claims(fit: Fit, cov: np.ndarray, enough: np.ndarray) -> tuple[tuple[float | None, ...], ...]:
    """LOS, None wherever a bot has not played enough to be ranked: with one or two resampling
    units no method can tell luck of the deal from strength, so no order is claimed."""
    los = los_from_cov(fit, cov)
    return tuple(
        tuple(v if enough[i] and enough[j] else None for j, v in enumerate(row))
        for i, row in enumerate(los)
    )


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
    return (
        tuple(data.entrants[i] for i in order),
        tuple(iv.los[a][b] if iv.los else None for a, b in pairwise(order)),
    )


# --------------------------------------------------------------------------------------------------
# Online Elo and ratings over time


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

    def to_json_dict(self) -> dict:
        return {"games": self.games, "played_at": self.played_at, "ratings": dict(self.ratings)}


def ratings_over_time(
    results: Sequence[GameResult],
    *,
    every: int | None = None,
    method: Literal["fit", "online"] = "fit",
    prior: float = DEFAULT_PRIOR,
    k: float = DEFAULT_K,
) -> tuple[TimePoint, ...]:
    """Ratings after every ``every`` games (default: about 50 points) and after the last game.

    ``method="fit"`` refits the maximum-likelihood model on each prefix (warm-started, one
    aggregation per point); ``"online"`` samples the classic online Elo trajectory.
    """
    ordered = _time_order(results)
    total = len(ordered)
    if total == 0:
        return ()
    every = every or max(1, math.ceil(total / 50))
    cuts = list(range(every, total, every)) + [total]
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
    x = None
    for cut in cuts:
        weights = np.zeros(data.n_games)
        weights[rank[:cut]] = 1.0
        f = fit_elo(data, prior=prior, game_weights=weights, start=x)
        x = f.logits
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


# --------------------------------------------------------------------------------------------------
# Standings


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
    enough_games: bool = True  # took part in at least MIN_UNITS resampling units

    @property
    def interval_text(self) -> str:
        return format_interval(self.low, self.high, self.enough_games)

    def to_json_dict(self) -> dict:
        return {
            "rank": self.rank,
            "entrant": self.entrant,
            "rating": self.rating,
            "interval": None if self.low is None else [self.low, self.high],
            "enough_games": self.enough_games,
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
#: Shown after the interval of a bot without enough games to be ranked.
NOT_ENOUGH_GAMES = "not enough games"


def format_interval(low: float | None, high: float | None, enough: bool = True) -> str:
    """The one text form of a rating interval ("-" without intervals)."""
    if low is None or high is None:
        return "-"
    text = INTERVAL_FORMAT.format(low=low, high=high)
    return text if enough else f"{text} ({NOT_ENOUGH_GAMES})"


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
        return f"{level} normal interval of the Laplace approximation of the posterior (prior included)"
    if method is IntervalMethod.SANDWICH:
        return f"{level} normal interval of the cluster-robust (sandwich) covariance over whole games / duplicate sets"
    return (
        f"{level} normal interval of the posterior (prior included) whose curvature is measured from "
        f"whole games / duplicate sets as they accumulate (weight u/(u+{PSEUDO_UNITS:g}) for a bot "
        f"in u of them); bots in fewer than {MIN_UNITS} are marked as not having enough games to rank"
    )


@dataclass(frozen=True)
class Standings:
    """The leaderboard: rows by rating (highest first) and LOS in the same order (``los[i][j]``)."""

    rows: tuple[Row, ...]
    los: tuple[tuple[float | None, ...], ...]
    games: int
    bootstrap: int  # resamples when the method is the bootstrap; 0: no intervals
    seed: int
    prior: float
    k: float
    interval_method: str = IntervalMethod.ROBUST.value

    def row(self, entrant: str) -> Row:
        for r in self.rows:
            if r.entrant == entrant:
                return r
        raise KeyError(entrant)

    def to_json_dict(self) -> dict:
        rating = (
            "Bradley-Terry maximum likelihood over all pairwise outcomes of all games "
            "(draw = half a point), Elo scale (400/ln 10 per logit), mean 1500 per component, prior: "
            f"{self.prior:g} drawn virtual game(s) per bot against a 1500 opponent"
        )
        online = (
            f"classic online Elo, start 1500, K={self.k:g} split K/(n-1) per pair, in played_at "
            "order (depends on the order; for familiarity only)"
        )
        los = {"entrants": [r.entrant for r in self.rows], "matrix": [list(x) for x in self.los]}
        on = bool(self.bootstrap)
        return {
            "games": self.games,
            "method": {
                "rating": rating,
                "interval": describe_interval(self.interval_method, self.bootstrap, self.seed)
                if on
                else None,
                "los": "normal approximation of the rating difference under the interval's "
                "covariance"
                if self.los
                else None,
                "online_elo": online,
            },
            "rows": [r.to_json_dict() for r in self.rows],
            "los": los if self.los else None,
        }


def compute_standings(
    results: Sequence[GameResult],
    *,
    bootstrap: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    prior: float = DEFAULT_PRIOR,
    k: float = DEFAULT_K,
    interval: IntervalMethod | str = IntervalMethod.AUTO,
) -> Standings:
    """Everything the leaderboard shows, from the game records alone (input order is irrelevant).

    ``interval`` chooses the method of the intervals and LOS (AUTO: what is published, see
    :func:`rating_intervals`); ``bootstrap`` is the number of resamples when that method is the
    bootstrap, and 0 turns intervals and LOS off.
    """
    data = prepare(results)
    fit = fit_elo(data, prior=prior)
    iv = None
    if bootstrap and data.n_bots:
        iv = rating_intervals(data, fit, method=interval, resamples=bootstrap, seed=seed)
    stats = bot_stats(results)
    online = online_elo(results, k=k)
    order = sorted(range(data.n_bots), key=lambda i: (-fit.elo[i], data.entrants[i]))
    # Renumber components by their best bot so labels read 0, 1, ... down the table.
    relabel: dict[int, int] = {}
    for i in order:
        relabel.setdefault(int(fit.component[i]), len(relabel))
    rows = []
    for rank, i in enumerate(order, 1):
        e = data.entrants[i]
        s = stats[e]
        rows.append(
            Row(
                rank=rank,
                entrant=e,
                rating=float(fit.elo[i]),
                low=None if iv is None else float(iv.low[i]),
                high=None if iv is None else float(iv.high[i]),
                component=relabel[int(fit.component[i])],
                games=s.games,
                wins=s.wins,
                outright_wins=s.outright_wins,
                mean_penalty=s.mean_penalty,
                mean_place=s.mean_place,
                faults=s.faults,
                online_elo=online[e],
                enough_games=True if iv is None else bool(iv.enough[i]),
            )
        )
    los: tuple[tuple[float | None, ...], ...] = ()
    if iv is not None and iv.los and data.n_bots > 1:
        los = tuple(tuple(iv.los[i][j] for j in order) for i in order)
    method = (iv.method if iv is not None else IntervalMethod(interval).resolved()).value
    return Standings(tuple(rows), los, data.n_games, bootstrap, seed, prior, k, method)
