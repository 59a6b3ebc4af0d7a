"""The Bradley-Terry fit: games to pairwise arrays, and the maximum-likelihood rating of each bot.

What is fitted, and why:

* **Rating** - Bradley-Terry maximum likelihood over every pairwise outcome of every game, fitted
  to all games at once (so the order in which games were played cannot change it). A game of n
  seats gives n(n-1)/2 outcomes decided by ``places``: the lower place wins, an equal place is a
  draw worth half a point to each. The logit scale is shown as Elo (400/ln 10 points per logit; a
  200-point gap means about 76 % expected score), with the mean of each comparison-graph component
  at 1500.
* **Prior** - every bot also plays ``prior`` virtual games (default 1) against a fixed 1500-rated
  opponent, all of them drawn. That keeps the likelihood strictly concave, so the fit always has
  one finite maximum - also for a bot that won (or lost) every game and for pools that split into
  groups that never met - while pulling a bot with m pairwise outcomes towards 1500 by only about
  prior/(m + prior) of its distance (0.3 % at m = 300). ``prior=0`` gives the pure
  maximum-likelihood fit; it is only allowed when that fit exists (the "scored against" graph is
  strongly connected) and without intervals.

This module owns the arrays every other rating module works on (:class:`PairData`, built once by
:func:`prepare`) and the solver; the uncertainty of a fit is :mod:`.intervals`' job.
The bootstrap's refits live here because each resample is a warm-started refit that reuses the
full fit's Cholesky factor (chord steps), i.e. the solver's internals.

Speed: the games are reduced once to arrays of pairwise observations; a fit works on the win/total
counts per distinct pair of bots (:func:`aggregate`, one ``np.bincount``) with Newton's method; a
bootstrap resample is one ``np.bincount`` of game multiplicities plus a few chord steps, never a
Python loop over games. Dense linear algebra runs on one BLAS thread (:func:`one_blas_thread`):
the matrices are small, and on a loaded host BLAS threads waiting for busy cores made one 8 x 8
inverse take 0.15 s.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from scipy import linalg, sparse
from scipy.sparse import csgraph
from scipy.sparse.linalg import LinearOperator, cg
from scipy.special import expit

from .results import GameResult

FloatArray = npt.NDArray[np.float64]
IndexArray = npt.NDArray[np.intp]

ELO_PER_LOGIT = 400.0 / math.log(10.0)
BASE_RATING = 1500.0
DEFAULT_PRIOR = 1.0
#: Above this many bots the Newton step is solved with sparse conjugate gradients instead of a dense
#: Cholesky factorisation (see :class:`_Solver`).
DENSE_MAX_BOTS = 300
#: Up to this many bots the bootstrap factorises the full-data Hessian once (dense, 32 MB at 2000)
#: and refits each resample with chord steps; above it, with warm-started Newton-CG.
CHORD_MAX_BOTS = 2000

_controller: Any = None


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the enclosed linear algebra on one BLAS thread (and restore the setting after).

    The rating matrices are at most a few hundred rows: threads cannot speed them up, and when the
    host's cores are busy (a tournament playing games) BLAS threads spin and wait for each other.
    The controller is made once (inspecting the loaded libraries costs about a millisecond); each
    use then costs some microseconds.
    """
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    with _controller.limit(limits=1, user_api="blas"):
        yield


def sum_by(index: IndexArray, weights: npt.ArrayLike | None, length: int) -> FloatArray:
    """``np.bincount`` as floats: the sum of ``weights`` (or the count) per value of ``index``."""
    return np.asarray(np.bincount(index, weights=weights, minlength=length), dtype=np.float64)


# --------------------------------------------------------------------------------------------------
# Arrays


@dataclass(frozen=True, eq=False)
class PairData:
    """All games reduced to arrays, built once and shared by fit, intervals and time series.

    Games are held in ``game_id`` order, bots in sorted id order, so that nothing downstream depends
    on the order of the input. Edges are the distinct unordered pairs of bots that met (a < b).
    """

    entrants: tuple[str, ...]
    game_ids: tuple[str, ...]
    played_at: npt.NDArray[np.int64]  # per game
    game_unit: IndexArray  # per game: index of its resampling unit (duplicate set or the game)
    n_units: int
    edge_a: IndexArray  # per edge
    edge_b: IndexArray
    obs_edge: IndexArray  # per pairwise observation (one pair of seats in one game)
    obs_game: IndexArray
    obs_score: FloatArray  # points of edge_a in that observation: 1, 0.5 or 0
    seat_game: IndexArray  # per seat
    seat_entrant: IndexArray

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
    by_size: dict[int, list[int]] = {}
    for gi, g in enumerate(games):
        by_size.setdefault(len(g.entrants), []).append(gi)
    tables = [
        (
            np.asarray(gis, dtype=np.intp),
            np.array([[index[e] for e in games[i].entrants] for i in gis], dtype=np.intp),
            np.array([games[i].places for i in gis], dtype=np.int64),
        )
        for gis in by_size.values()
    ]
    # resampling units: a duplicate set, or a game of its own (tagged so the ids cannot collide)
    unit_of = [(1, g.game_id) if g.duplicate_set is None else (0, g.duplicate_set) for g in games]
    units = sorted(set(unit_of))
    unit_index = {u: i for i, u in enumerate(units)}
    return prepare_tables(
        entrants,
        tuple(g.game_id for g in games),
        np.array([g.played_at for g in games], dtype=np.int64),
        np.array([unit_index[u] for u in unit_of], dtype=np.intp),
        tables,
    )


def prepare_tables(
    entrants: tuple[str, ...],
    game_ids: tuple[str, ...],
    played_at: npt.NDArray[np.int64],
    game_unit: IndexArray,
    tables: Sequence[tuple[IndexArray, IndexArray, npt.NDArray[np.int64]]],
) -> PairData:
    """:func:`prepare` from arrays: ``tables`` holds per seat count (game indices, games x seats
    entrant indices, games x seats places). Games and entrants must already be in their sorted
    order, ``game_unit`` numbered from 0 (bench/scale.py builds a million games this way)."""
    n = len(entrants)
    obs_game: list[IndexArray] = []
    obs_a: list[IndexArray] = []
    obs_b: list[IndexArray] = []
    obs_score: list[FloatArray] = []
    seat_game: list[IndexArray] = []
    seat_entrant: list[IndexArray] = []
    for gidx, ent, plc in tables:
        size = ent.shape[1]
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

    def ints(parts: list[IndexArray]) -> IndexArray:
        return np.concatenate(parts).astype(np.intp) if parts else np.zeros(0, dtype=np.intp)

    a_all, b_all = ints(obs_a), ints(obs_b)
    keys, obs_edge = np.unique(a_all * max(n, 1) + b_all, return_inverse=True)
    return PairData(
        entrants=entrants,
        game_ids=game_ids,
        played_at=played_at,
        game_unit=game_unit,
        n_units=int(game_unit.max()) + 1 if len(game_unit) else 0,
        edge_a=(keys // max(n, 1)).astype(np.intp),
        edge_b=(keys % max(n, 1)).astype(np.intp),
        obs_edge=obs_edge.ravel().astype(np.intp),
        obs_game=ints(obs_game),
        obs_score=np.concatenate(obs_score).astype(np.float64) if obs_score else np.zeros(0),
        seat_game=ints(seat_game),
        seat_entrant=ints(seat_entrant),
    )


def aggregate(
    data: PairData, game_weights: npt.ArrayLike | None = None
) -> tuple[FloatArray, FloatArray]:
    """Points of ``edge_a`` and outcomes per edge, each game counted ``game_weights`` times."""
    m = len(data.edge_a)
    if game_weights is None:
        return sum_by(data.obs_edge, data.obs_score, m), sum_by(data.obs_edge, None, m)
    wt = np.asarray(game_weights, dtype=np.float64)[data.obs_game]
    return sum_by(data.obs_edge, wt * data.obs_score, m), sum_by(data.obs_edge, wt, m)


# --------------------------------------------------------------------------------------------------
# Maximum-likelihood fit


class _Objective:
    """Bradley-Terry log-likelihood (plus prior) at one point, with what Newton's method needs."""

    __slots__ = ("ll", "p", "x")

    def __init__(
        self,
        x: FloatArray,
        ea: IndexArray,
        eb: IndexArray,
        w: FloatArray,
        nn: FloatArray,
        prior: float,
        likelihood: bool = True,
    ) -> None:
        d = x[ea] - x[eb]
        e = np.exp(-np.abs(d))  # one exp per edge gives both sigma(d) and log sigma(d)
        self.x = x
        self.p: FloatArray = np.where(d >= 0, 1.0, e) / (1.0 + e)
        self.ll = math.nan
        if not likelihood:  # the gradient alone (a step that needs no line search)
            return
        log_sig = -np.log1p(e) - np.maximum(-d, 0.0)
        # w log s(d) + (nn - w) log s(-d), using log s(-d) = log s(d) - d
        self.ll = float(np.dot(nn, log_sig) - np.dot(nn - w, d))
        if prior:
            self.ll -= 0.5 * prior * float(np.sum(np.logaddexp(0.0, -x) + np.logaddexp(0.0, x)))

    def gradient(
        self,
        ea: IndexArray,
        eb: IndexArray,
        w: FloatArray,
        nn: FloatArray,
        prior: float,
        want_hessian: bool = True,
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        n = len(self.x)
        ge = w - nn * self.p
        g = sum_by(ea, ge, n) - sum_by(eb, ge, n)
        h: FloatArray = np.zeros(0)
        diag: FloatArray = np.zeros(0)
        if want_hessian:
            h = nn * self.p * (1.0 - self.p)
            diag = sum_by(ea, h, n) + sum_by(eb, h, n)
        if prior:
            px = expit(self.x)
            g += prior * (0.5 - px)
            if want_hessian:
                diag = diag + prior * px * (1.0 - px)
        return g, h, diag


def _dense_matrix(
    n: int, ea: IndexArray, eb: IndexArray, h: FloatArray, diag: FloatArray, gauge: bool
) -> FloatArray:
    A = np.zeros((n, n))
    A[ea, eb] = -h
    A[eb, ea] = -h
    A[np.diag_indices(n)] = diag
    if gauge:
        A += 1.0 / n
    return A


class StepSolver(Protocol):
    """What Newton's method asks of a solver: the step from the curvature and the gradient."""

    def solve(self, h: FloatArray, diag: FloatArray, g: FloatArray) -> FloatArray: ...


class _Solver:
    """Solves A step = g, A = minus the Hessian (a weighted graph Laplacian plus the prior
    diagonal).

    Small pools use a dense Cholesky factorisation; larger ones conjugate gradients on a sparse
    matrix whose pattern (the pairs that met) is built once and refilled for every Newton step -
    cheaper than a dense factorisation already at a few hundred bots. Without a prior A is singular
    along the all-ones vector (only differences are identified); since g sums to zero, adding
    1 1^T / n picks the zero-mean step.
    """

    def __init__(self, n: int, ea: IndexArray, eb: IndexArray, gauge: bool) -> None:
        self.n, self.ea, self.eb, self.gauge = n, ea, eb, gauge
        self.dense = n <= DENSE_MAX_BOTS
        if not self.dense:
            # The edges come sorted by (a, b) (PairData's order), so the upper triangle in CSR
            # form takes the edge weights as its data in edge order: nothing is permuted or
            # copied per Newton step, and A v = diag v - U v - U^T v.
            if len(ea) and not (np.all(ea[1:] >= ea[:-1])):
                order = np.lexsort((eb, ea))
                self.ea, self.eb = ea[order], eb[order]
                self.perm: IndexArray | None = order
            else:
                self.perm = None
            self.indptr = np.concatenate([[0], np.cumsum(np.bincount(self.ea, minlength=n))])
            self.indices = np.asarray(self.eb, dtype=np.int32 if n < 2**31 else np.int64)
            self.indptr = self.indptr.astype(self.indices.dtype)

    def upper(self, h: FloatArray) -> sparse.csr_matrix:
        """The upper triangle of the off-diagonal curvature, edge weights ``h`` (edge order)."""
        data = h if self.perm is None else h[self.perm]
        return sparse.csr_matrix((data, self.indices, self.indptr), shape=(self.n, self.n))

    def solve(self, h: FloatArray, diag: FloatArray, g: FloatArray) -> FloatArray:
        n, shift = self.n, (1.0 / self.n if self.gauge else 0.0)
        if self.dense:
            A = _dense_matrix(n, self.ea, self.eb, h, diag, self.gauge)
            factor = linalg.cho_factor(A, check_finite=False)
            return np.asarray(linalg.cho_solve(factor, g, check_finite=False), dtype=np.float64)
        return laplacian_cg(diag, shift, [self.upper(h)], g, 1e-11)


def laplacian_cg(
    diag: FloatArray, shift: float, uppers: Sequence[sparse.csr_matrix], g: FloatArray, rtol: float
) -> FloatArray:
    """Solve ``A step = g`` by Jacobi-preconditioned conjugate gradients, A = ``diag`` less the
    off-diagonal curvature (the sum of ``uppers``, each an upper triangle, and its transpose) plus
    ``shift`` times the all-ones matrix (the gauge without a prior)."""
    n = len(diag)
    pairs = [(u, u.T) for u in uppers if u.nnz]  # U.T: a CSC view, its product as fast as U's

    def matvec(v: FloatArray) -> FloatArray:
        v = np.ravel(v)
        out = diag * v + shift * v.sum()
        for u, ut in pairs:
            out -= u @ v + ut @ v
        return np.asarray(out, dtype=np.float64)

    def precondition(v: FloatArray) -> FloatArray:
        return np.ravel(v) / (diag + shift)

    op = LinearOperator((n, n), matvec=matvec, dtype=np.float64)
    precond = LinearOperator((n, n), matvec=precondition, dtype=np.float64)
    step, _ = cg(op, g, rtol=rtol, atol=0.0, maxiter=10 * n, M=precond)
    return np.asarray(step, dtype=np.float64)


def _fit_logits(
    n: int,
    ea: IndexArray,
    eb: IndexArray,
    w: FloatArray,
    nn: FloatArray,
    prior: float,
    start: FloatArray | None = None,
    tol: float = 1e-9,
    max_iter: int = 100,
    chord: Any = None,
    solver: StepSolver | None = None,
) -> FloatArray:
    """Maximise the (concave) Bradley-Terry log-likelihood.

    Newton's method with backtracking. With ``chord`` (a Cholesky factor of minus the Hessian of a
    nearby problem, e.g. the full data for a bootstrap resample) it first tries the chord method:
    steps with that fixed matrix, costing one pass over the edges and two triangular solves each
    instead of a new factorisation; if those do not converge quickly it falls back to Newton.
    """
    x: FloatArray = np.zeros(n) if start is None else np.array(start, dtype=np.float64)
    if n == 0:
        return x
    if chord is not None:
        y, last = x, 1.0  # no chord step may move a bot by more than 1 logit (174 Elo)
        for _ in range(40):
            ge = w - nn * expit(y[ea] - y[eb])
            g = sum_by(ea, ge, n) - sum_by(eb, ge, n)
            if prior:
                g += prior * (0.5 - expit(y))
            step = np.asarray(linalg.cho_solve(chord, g, check_finite=False), dtype=np.float64)
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


def _components(n: int, ea: IndexArray, eb: IndexArray, nn: FloatArray) -> IndexArray:
    """Component label per bot of the graph "played each other" (labels in order of first bot)."""
    met = nn > 0
    graph = sparse.coo_matrix((np.ones(int(met.sum())), (ea[met], eb[met])), shape=(n, n))
    _, labels = csgraph.connected_components(graph, directed=False)
    return np.asarray(labels, dtype=np.intp)


def to_elo(x: FloatArray, labels: IndexArray) -> FloatArray:
    """Logits to Elo with each component's mean at 1500 (components are not comparable)."""
    if len(x) == 0:
        return x
    k = int(labels.max()) + 1
    means = np.bincount(labels, weights=x, minlength=k) / np.bincount(labels, minlength=k)
    return BASE_RATING + ELO_PER_LOGIT * (x - means[labels])


def _check_prior(
    prior: float, n: int, ea: IndexArray, eb: IndexArray, w: FloatArray, nn: FloatArray
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
    elo: FloatArray
    logits: FloatArray  # uncentred, usable as a warm start
    component: IndexArray  # comparison-graph component per bot
    prior: float

    def as_dict(self) -> dict[str, float]:
        return {e: float(r) for e, r in zip(self.entrants, self.elo)}


def fit_elo(
    data: PairData,
    *,
    prior: float = DEFAULT_PRIOR,
    game_weights: npt.ArrayLike | None = None,
    start: FloatArray | None = None,
) -> Fit:
    """Maximum-likelihood Bradley-Terry fit on the Elo scale, games weighted by ``game_weights``."""
    w, nn = aggregate(data, game_weights)
    n, ea, eb = data.n_bots, data.edge_a, data.edge_b
    _check_prior(prior, n, ea, eb, w, nn)
    with one_blas_thread():
        x = _fit_logits(n, ea, eb, w, nn, prior, start)
    labels = _components(n, ea, eb, nn)
    return Fit(data.entrants, to_elo(x, labels), x, labels, prior)


def fit_ratings(results: Sequence[GameResult], *, prior: float = DEFAULT_PRIOR) -> dict[str, float]:
    """Fitted Elo per entrant, without intervals."""
    return fit_elo(prepare(results), prior=prior).as_dict()


def curvature(data: PairData, fit: Fit) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Minus the Hessian of the log-likelihood at the fit, in logits, as its sparse parts: (each
    edge's weight, the likelihood's diagonal, the prior's diagonal). The likelihood's part is the
    weighted Laplacian ``diag - sum_edges h (e_a e_b^T + e_b e_a^T)``."""
    ea, eb = data.edge_a, data.edge_b
    w, nn = aggregate(data)
    _, h, diag = _Objective(fit.logits, ea, eb, w, nn, 0.0).gradient(ea, eb, w, nn, 0.0)
    px = expit(fit.logits)
    return h, diag, fit.prior * px * (1.0 - px)


def information(data: PairData, fit: Fit) -> tuple[FloatArray, FloatArray]:
    """Minus the Hessian of the log-likelihood at the fit, in logits: (the likelihood's part, a
    dense bots x bots matrix; the prior's diagonal)."""
    h, diag, prior = curvature(data, fit)
    return _dense_matrix(data.n_bots, data.edge_a, data.edge_b, h, diag, False), prior


def bootstrap_elo(data: PairData, fit: Fit, *, resamples: int = 200, seed: int = 0) -> FloatArray:
    """Refit on resamples of whole units (games or duplicate sets): shape (resamples, bots).

    Deterministic for a given seed. Each resample is centred on the full fit's components so it is
    directly comparable with ``fit.elo``.
    """
    if fit.prior == 0 and resamples:
        raise ValueError("bootstrap needs prior > 0 (a resample may have no finite pure-MLE fit)")
    rng = np.random.default_rng(seed)
    n, ea, eb = data.n_bots, data.edge_a, data.edge_b
    out = np.empty((resamples, n))
    with one_blas_thread():
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
            x = _fit_logits(
                n, ea, eb, w, nn, fit.prior, fit.logits, 1e-6, chord=chord, solver=solver
            )
            out[r] = to_elo(x, fit.component)
    return out
