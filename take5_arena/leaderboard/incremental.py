"""The fit kept up to date as games arrive: counts per pair of bots, and a warm-started refit.

:func:`~take5_arena.leaderboard.fit.fit_elo` starts from the games: it turns every game into its
pairwise observations (:func:`~take5_arena.leaderboard.fit.prepare`) and sums them per pair of bots
before the first Newton step. At 10,000 bots and 1,000,000 games that is 6 million observations
and 4-5 s (bench/scale.py), every time the ladder republishes after one more game. The fit itself
needs only the points and the outcomes per pair (and which bots are connected), and a new game
changes the counts of its own pairs and nothing else. :class:`LiveRatings` keeps exactly that:

* **counts per pair** - the points of the lower bot and the outcomes, in arrays indexed by pair;
  a game adds to its pairs' entries (a pair that never met before is appended);
* **the pattern of the Newton matrix** - the pairs in sorted order in compressed rows, built once,
  with the pairs met since then in a small matrix beside it, merged in when it grows past
  :data:`MERGE_SHARE` of the rest (a re-sort of all pairs, rare);
* **the components** of "played each other", merged as games join them;
* **the last fit**, the start of the next: one game moves the ratings by a little, so Newton's
  method from there takes two or three steps, and each step's conjugate-gradient solve need only be
  as exact as that step is small (an inexact Newton step: :data:`STEP_RTOL`).

The fit it gives is the full fit's (bots in sorted order, each component's mean at 1500, the same
stopping rule): equal to :func:`fit_elo` on all the games to 1e-6 Elo (tests/test_incremental.py;
bench/scale.py times both on the same games).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse
from scipy.special import expit

from .fit import (
    DEFAULT_PRIOR,
    DENSE_MAX_BOTS,
    Fit,
    FloatArray,
    IndexArray,
    PairData,
    StepSolver,
    _check_prior,
    _components,
    _fit_logits,
    _Objective,
    _Solver,
    aggregate,
    laplacian_cg,
    one_blas_thread,
    sum_by,
    to_elo,
)
from .results import GameResult

__all__ = ["FULL_STEP", "MAX_FULL_STEPS", "MERGE_SHARE", "STEP_RTOL", "TOLERANCE", "LiveRatings"]

#: Pairs met since the last sort are kept beside the sorted ones until they are this share of them.
MERGE_SHARE = 0.05
#: The conjugate-gradient solve of a warm-started Newton step stops at this residual, relative to
#: the gradient: the step's own error is then this share of a step that is itself small, and the
#: next step corrects it (the last step, below the fit's tolerance of 1e-9 logits, decides).
STEP_RTOL = 1e-6
#: Newton steps from the last fit are taken whole up to this length (logits, 17 Elo) ...
FULL_STEP = 0.1
#: ... and this many of them (then the line-searched method takes over).
MAX_FULL_STEPS = 8
#: The fit's stopping rule: a step shorter than this (logits).
TOLERANCE = 1e-9


class _GrowingSolver:
    """Solves the Newton system on the sorted pairs (compressed rows) plus the newer ones (COO).

    Edge arrays are in the live order: the first ``self.base`` pairs sorted by (a, b), the rest in
    the order they were first met.
    """

    def __init__(self, n: int, ea: IndexArray, eb: IndexArray, base: int, gauge: bool) -> None:
        self.n, self.gauge, self.base = n, gauge, base
        a, b = ea[:base], eb[:base]
        dtype = np.int32 if n < 2**31 else np.int64
        self.indptr = np.concatenate([[0], np.cumsum(np.bincount(a, minlength=n))]).astype(dtype)
        self.indices = np.asarray(b, dtype=dtype)
        self.extra(ea, eb)

    def extra(self, ea: IndexArray, eb: IndexArray) -> None:
        """Take the pairs met since the sort (all edges, in the live order)."""
        self.extra_a, self.extra_b = ea[self.base :], eb[self.base :]

    def solve(self, h: FloatArray, diag: FloatArray, g: FloatArray) -> FloatArray:
        n, shift = self.n, (1.0 / self.n if self.gauge else 0.0)
        upper = sparse.csr_matrix((h[: self.base], self.indices, self.indptr), shape=(n, n))
        # the newer pairs on their own: adding them to the sorted ones would copy all of them
        newer = sparse.csr_matrix((h[self.base :], (self.extra_a, self.extra_b)), shape=(n, n))
        return laplacian_cg(diag, shift, [upper, newer], g, STEP_RTOL)


_System = tuple[FloatArray, FloatArray, FloatArray]  # gradient, edge curvature, diagonal


def _newton(
    n: int,
    ea: IndexArray,
    eb: IndexArray,
    w: FloatArray,
    nn: FloatArray,
    prior: float,
    start: FloatArray,
    solver: StepSolver | None,
    first: _System | None = None,
) -> tuple[FloatArray, _System | None]:
    """Newton's method from a nearby fit: full steps while they stay below :data:`FULL_STEP`
    logits (the log-likelihood's value, which only a line search needs, is never computed: a pass
    over every pair saved per step), the fit's own safeguarded method from wherever a step is
    longer (a new bot, or a game that moves the ratings far). ``first``: the system of the first
    step, when the caller has it without a pass over every pair. Stops after a step below 1e-9
    logits as the fit does, or one step earlier when the steps' quadratic shrinking says the next
    one would be ten times below that. Returns the fit and the last system solved (None after
    the safeguarded method)."""
    if solver is None:
        solver = _Solver(n, ea, eb, gauge=not prior)
    x, last = start, 0.0
    for _ in range(MAX_FULL_STEPS):
        g, h, diag = first or _Objective(x, ea, eb, w, nn, prior, likelihood=False).gradient(
            ea, eb, w, nn, prior
        )
        first = None
        step = solver.solve(h, diag, g)
        size = float(np.max(np.abs(step))) if n else 0.0
        if not size <= FULL_STEP:
            break
        x = x + step
        # Newton converges quadratically: the next step is about c size^2, c measured from the
        # last two steps (0.1-0.5 here). Stop once ten times that is below the tolerance, or
        # when this step was (the fit's own rule).
        if size < TOLERANCE or (last and 10.0 * size**3 / last**2 < TOLERANCE):
            return x, (g, h, diag)
        last = size
    return _fit_logits(n, ea, eb, w, nn, prior, x, tol=TOLERANCE, solver=solver), None


class LiveRatings:
    """The Bradley-Terry fit of a growing set of games, updated game by game (see the module text).

    Bots are numbered in the order they first appear; :meth:`fit` gives them in sorted order, as
    :func:`~take5_arena.leaderboard.fit.fit_elo` does. Not thread-safe: one owner adds and fits.
    """

    def __init__(self, prior: float = DEFAULT_PRIOR) -> None:
        if prior < 0:
            raise ValueError("prior must be >= 0")
        self.prior = prior
        self._names: list[str] = []
        self._index: dict[str, int] = {}
        self._keys = np.zeros(0, dtype=np.int64)  # a * KEY + b of the sorted pairs
        self._new: dict[int, int] = {}  # key -> edge index of the pairs met since the sort
        self._ea = np.zeros(0, dtype=np.intp)
        self._eb = np.zeros(0, dtype=np.intp)
        self._w = np.zeros(0)
        self._nn = np.zeros(0)
        self._size = 0  # edges in use (the arrays grow by an eighth at a time)
        self._root = np.zeros(0, dtype=np.intp)  # component representative per bot
        self._x = np.zeros(0)  # logits of the last fit, by live index
        self._solver: _GrowingSolver | None = None
        # the last fit's curvature (per edge, per bot), and what the games since changed per edge
        # (points, outcomes): the next fit's first step without a pass over every pair
        self._curvature: tuple[FloatArray, FloatArray] | None = None
        self._touched: dict[int, list[float]] = {}
        self.games = 0

    _KEY = 1 << 31  # bots per key's half: a pair's key is a * _KEY + b

    @classmethod
    def from_pairs(
        cls, data: PairData, fit: Fit | None = None, *, prior: float = DEFAULT_PRIOR
    ) -> LiveRatings:
        """Start from all games already reduced to arrays (and their fit, if there is one: its
        prior is then the one kept)."""
        live = cls(prior if fit is None else fit.prior)
        n = data.n_bots
        live._names = list(data.entrants)
        live._index = {e: i for i, e in enumerate(data.entrants)}
        w, nn = aggregate(data)
        m = len(w)
        live._keys = data.edge_a.astype(np.int64) * cls._KEY + data.edge_b
        # room for an eighth more pairs: the first new pair does not copy every array
        room = m + m // 8 + 16
        live._ea, live._eb = np.zeros(room, dtype=np.intp), np.zeros(room, dtype=np.intp)
        live._w, live._nn = np.zeros(room), np.zeros(room)
        live._ea[:m], live._eb[:m], live._w[:m], live._nn[:m] = data.edge_a, data.edge_b, w, nn
        live._size = m
        # component labels serve as representatives: each is below n, so below any new bot's
        live._root = _components(n, data.edge_a, data.edge_b, nn)
        live._x = np.zeros(n) if fit is None else fit.logits.copy()
        live.games = data.n_games
        return live

    # ---------------------------------------------------------------------------------------------
    # Games in

    def _bot(self, name: str) -> int:
        i = self._index.get(name)
        if i is None:
            i = self._index[name] = len(self._names)
            self._names.append(name)
            self._root = np.append(self._root, i)
            self._x = np.append(self._x, 0.0)
            self._solver = self._curvature = None
        return i

    def _join(self, a: int, b: int) -> None:
        ra, rb = self._root[a], self._root[b]
        if ra != rb:
            self._root[self._root == rb] = ra

    def _edge(self, a: int, b: int) -> int:
        key = a * self._KEY + b
        at = int(np.searchsorted(self._keys, key))
        if at < len(self._keys) and self._keys[at] == key:
            return at
        found = self._new.get(key)
        if found is not None:
            return found
        if self._size == len(self._w):
            grow = max(16, self._size // 8)
            self._ea = np.concatenate([self._ea, np.zeros(grow, dtype=np.intp)])
            self._eb = np.concatenate([self._eb, np.zeros(grow, dtype=np.intp)])
            self._w = np.concatenate([self._w, np.zeros(grow)])
            self._nn = np.concatenate([self._nn, np.zeros(grow)])
        e = self._new[key] = self._size
        self._ea[e], self._eb[e] = a, b
        self._size += 1
        self._join(a, b)
        return e

    def add(self, entrants: Sequence[str], places: Sequence[int]) -> None:
        """One more game: its seats' entrants and places (lower is better, equal is a draw)."""
        if len(entrants) != len(places):
            raise ValueError("entrants and places differ in length")
        seats = [(self._bot(e), p) for e, p in zip(entrants, places)]
        for s, (i, pi) in enumerate(seats):
            for j, pj in seats[s + 1 :]:
                if i == j:
                    continue  # a bot seated against itself tells nothing (as in prepare)
                score = 1.0 if pi < pj else 0.5 if pi == pj else 0.0
                e = self._edge(min(i, j), max(i, j))
                points = score if i < j else 1.0 - score
                self._w[e] += points
                self._nn[e] += 1.0
                change = self._touched.setdefault(e, [0.0, 0.0])
                change[0] += points
                change[1] += 1.0
        self.games += 1

    def add_results(self, results: Sequence[GameResult]) -> None:
        """:meth:`add` for each game (the order does not matter to the fit)."""
        for g in results:
            self.add(g.entrants, g.places)

    def pairs(self) -> tuple[tuple[str, ...], IndexArray, IndexArray, FloatArray, FloatArray]:
        """The counts per pair of bots that met: (bot names, a, b, points of a, meetings), each
        pair once (read-only views, valid until the next :meth:`add`)."""
        m = self._size
        return tuple(self._names), self._ea[:m], self._eb[:m], self._w[:m], self._nn[:m]

    # ---------------------------------------------------------------------------------------------
    # Fit

    def _merge(self) -> None:
        """Sort all pairs again (the newer ones into the compressed rows)."""
        m = self._size
        keys = self._ea[:m].astype(np.int64) * self._KEY + self._eb[:m]
        order = np.argsort(keys, kind="stable")
        self._keys = keys[order]
        self._ea, self._eb = self._ea[:m][order], self._eb[:m][order]
        self._w, self._nn = self._w[:m][order], self._nn[:m][order]
        self._new = {}
        self._curvature = None  # its edges were in the old order

    def _first_system(self, ea: IndexArray, eb: IndexArray, nn: FloatArray) -> _System:
        """The first Newton step's system from the last fit's, without a pass over every pair.

        At the last fit the gradient was zero (to its tolerance), so the gradient now is what the
        new games' outcomes add at the same ratings; the curvature is the last one with the
        touched pairs' entries computed again. The steps after it are exact Newton steps, which
        correct what the first one's nearly-zero old gradient left out."""
        assert self._curvature is not None
        old_h, diag = self._curvature
        n, m = len(self._x), len(ea)
        h = old_h if len(old_h) == m else np.concatenate([old_h, np.zeros(m - len(old_h))])
        diag = diag.copy()
        idx = np.fromiter(self._touched, dtype=np.intp, count=len(self._touched))
        change = np.array(list(self._touched.values())).reshape(-1, 2)
        a, b = ea[idx], eb[idx]
        p = expit(self._x[a] - self._x[b])
        ge = change[:, 0] - change[:, 1] * p
        g = sum_by(a, ge, n) - sum_by(b, ge, n)
        new_h = nn[idx] * p * (1.0 - p)
        moved = new_h - h[idx]
        h[idx] = new_h
        diag += sum_by(a, moved, n) + sum_by(b, moved, n)
        return g, h, diag

    def fit(self) -> Fit:
        """The fit of every game added, warm-started from the last one; equal to ``fit_elo`` of
        all of them (bots in sorted order)."""
        n, m = len(self._names), self._size
        if len(self._new) > MERGE_SHARE * max(len(self._keys), 1):
            self._merge()
            self._solver = None
        ea, eb, w, nn = self._ea[:m], self._eb[:m], self._w[:m], self._nn[:m]
        _check_prior(self.prior, n, ea, eb, w, nn)
        gauge = not self.prior
        with one_blas_thread():
            solver = None  # a dense factorisation, made afresh (see _fit_logits)
            if n > DENSE_MAX_BOTS:
                if self._solver is None:
                    self._solver = _GrowingSolver(n, ea, eb, len(self._keys), gauge)
                self._solver.extra(ea, eb)
                solver = self._solver
            start = self._first_system(ea, eb, nn) if self._curvature is not None else None
            x, last = _newton(n, ea, eb, w, nn, self.prior, self._x, solver, start)
        self._x = x
        self._curvature = None if last is None else (last[1], last[2])
        self._touched = {}
        order = np.argsort(np.array(self._names, dtype=object), kind="stable").astype(np.intp)
        roots = self._root[order]
        _, first = np.unique(roots, return_index=True)
        label_of_root = np.empty(int(roots.max()) + 1 if n else 0, dtype=np.intp)
        label_of_root[roots[np.sort(first)]] = np.arange(len(first))
        labels = label_of_root[roots]
        xs = x[order]
        return Fit(tuple(self._names[i] for i in order), to_elo(xs, labels), xs, labels, self.prior)
