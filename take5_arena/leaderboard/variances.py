"""The published intervals of many bots without the full inverse: each bot's variance and the
covariance of each pair of neighbours in the table, by solves against a block of columns at a time.

:func:`~take5_arena.leaderboard.intervals.design_cov` forms ``H^-1`` (bots x bots) and two products
with it: 32 MB and about a second at 2,000 bots, 800 MB per matrix and most of a minute at 10,000.
The table needs less: the interval of each bot is its variance, and a bot's LOS over the next one
down needs the covariance of that pair. Both come from the columns ``y_i = H^-1 c_i`` with ``c_i``
the centring of bot i (``e_i`` less its component's mean), since the centred design covariance is
``phi C H^-1 L H^-1 C`` and ``L = H - P``:

    cov(i, j) = phi (c_i^T y_j - y_i^T P y_j)

``H^-1 e_i`` comes from one factorisation of H (a dense Cholesky for a small or densely played
pool, a sparse LU of the weighted Laplacian otherwise, whose fill follows who played whom) and is
solved for :data:`BLOCK` columns at a time, in table order with one column of overlap, so that
each neighbour pair meets in one block and memory stays at ``bots x BLOCK`` besides the factor.
``H^-1 1_c`` for all components is one more solve (H is block-diagonal by component).

Equal to the dense matrices to rounding (tests/test_ratings.py); bench/scale.py times both.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import linalg, sparse
from scipy.sparse.linalg import splu

from .fit import ELO_PER_LOGIT, Fit, FloatArray, IndexArray, PairData, curvature, one_blas_thread

__all__ = ["BLOCK", "DENSE_FACTOR_MAX_BOTS", "DENSE_FILL", "design_moments"]

#: Columns solved at a time: bots x BLOCK doubles in memory (20 MB at 10,000 bots).
BLOCK = 256
#: Up to this many bots, or when more than :data:`DENSE_FILL` of all pairs of bots met, H is
#: factorised dense: a sparse factor of a densely played pool fills in and only adds overhead.
DENSE_FACTOR_MAX_BOTS = 1000
DENSE_FILL = 0.1

_Solve = Callable[[FloatArray], FloatArray]


def _factorise(n: int, ea: IndexArray, eb: IndexArray, h: FloatArray, diag: FloatArray) -> _Solve:
    """A function solving ``H X = B`` for H the Laplacian with edge weights ``h`` plus ``diag``."""
    if n <= DENSE_FACTOR_MAX_BOTS or 2 * len(ea) > DENSE_FILL * n * n:
        a = np.zeros((n, n))
        a[ea, eb] = -h
        a[eb, ea] = -h
        a[np.diag_indices(n)] = diag
        factor = linalg.cho_factor(a, check_finite=False)
        del a

        def dense(b: FloatArray) -> FloatArray:
            return np.asarray(linalg.cho_solve(factor, b, check_finite=False), dtype=np.float64)

        return dense
    idx = np.arange(n)
    matrix = sparse.csc_matrix(
        (
            np.concatenate([-h, -h, diag]),
            (np.concatenate([ea, eb, idx]), np.concatenate([eb, ea, idx])),
        ),
        shape=(n, n),
    )
    lu = splu(matrix, permc_spec="MMD_AT_PLUS_A", options={"SymmetricMode": True})

    def sparse_solve(b: FloatArray) -> FloatArray:
        return np.asarray(lu.solve(np.asfortranarray(b)), dtype=np.float64)

    return sparse_solve


def design_moments(
    data: PairData, fit: Fit, phi: float, order: IndexArray
) -> tuple[FloatArray, FloatArray]:
    """The design covariance's variance of each bot (Elo^2, centred per component, bots in
    ``PairData.entrants`` order) and the covariance of each neighbour pair ``(order[k],
    order[k+1])`` (NaN for a pair of different components): the diagonal and the neighbour entries
    of ``design_cov(data, fit, phi)``, without forming it."""
    n = data.n_bots
    var = np.zeros(n)
    near = np.full(max(n - 1, 0), np.nan)
    if n == 0:
        return var, near
    h, lik_diag, prior = curvature(data, fit)
    comp = fit.component
    count = np.bincount(comp).astype(np.float64)
    scale = phi * ELO_PER_LOGIT**2
    with one_blas_thread():
        solve = _factorise(n, data.edge_a, data.edge_b, h, lik_diag + prior)
        zsum = solve((1.0 / count[comp])[:, None])[:, 0]  # sum over components of H^-1 1_c / n_c
        for lo in range(0, n, BLOCK):
            cols = order[lo : min(n, lo + BLOCK + 1)]  # one column of overlap with the next block
            rhs = np.zeros((n, len(cols)))
            rhs[cols, np.arange(len(cols))] = 1.0
            y = solve(rhs)
            y -= zsum[:, None] * (comp[:, None] == comp[cols][None, :])  # y_i = H^-1 c_i
            # c_i^T y_j = y_j[i] - (sum of y_j) / n_c: y_j lives on j's component
            mean = y.sum(axis=0) / count[comp[cols]]
            own = y[cols, np.arange(len(cols))] - mean
            var[cols] = scale * (own - np.einsum("ij,ij->j", y, prior[:, None] * y))
            nxt = np.arange(len(cols) - 1)
            cross = y[cols[:-1], nxt + 1] - mean[nxt + 1]  # c_i^T y_j, i = cols[k], j = cols[k+1]
            cov = scale * (cross - np.einsum("ij,ij->j", y[:, :-1], prior[:, None] * y[:, 1:]))
            same = comp[cols[:-1]] == comp[cols[1:]]
            near[lo : lo + len(nxt)] = np.where(same, cov, np.nan)
    return var, near
