"""How uncertain a fit is: the 95% intervals, the likelihood of superiority, and who is rankable.

* **Interval** - 95 %, from a covariance that stays honest at every size (:func:`robust_cov`,
  ``IntervalMethod.ROBUST``, what is published). With few games it is the Laplace approximation of
  the posterior (likelihood times the prior of :mod:`leaderboard.fit`), whose curvature includes the
  prior's, so a bot with a handful of games, or a perfect score, keeps a wide interval. As
  resampling units (whole games, or whole duplicate sets: the games of a set share a deal and are
  not independent) accumulate, the curvature is replaced by the one measured from the units (the
  cluster-robust sandwich), per bot with weight u/(u + PSEUDO_UNITS); the part still taken from the
  model carries the design effect pooled over all bots. The percentile bootstrap over the same
  units is kept as an option. Coverage by size and method: docs/standings-format.md and
  ``python bench/coverage.py``. A bot in fewer than ``MIN_UNITS`` units is marked as not having
  enough games to rank.
* **Likelihood of superiority** - ``LOS[i][j] = Phi((r_i - r_j) / sd(r_i - r_j))``, ``sd`` from
  the same covariance (for the bootstrap: the covariance of the resamples, smooth where counting
  resamples would jump in steps of 1/resamples). ``None`` on the diagonal, between bots of
  different components, whose ratings are not comparable, and for a bot without enough games.

Kept apart from the fit because a fit has one answer while its uncertainty has several candidate
methods, measured against each other by bench/coverage.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np
import numpy.typing as npt
from scipy import linalg, sparse
from scipy.special import expit, ndtr, ndtri

from .fit import (
    ELO_PER_LOGIT,
    FloatArray,
    Fit,
    IndexArray,
    PairData,
    bootstrap_elo,
    information,
    one_blas_thread,
)

#: The coverage level of every published interval.
LEVEL = 0.95
#: Bootstrap resamples, everywhere the bootstrap is used (standings, site, status).
DEFAULT_RESAMPLES = 200
#: A bot that took part in fewer resampling units (duplicate sets, or single games) is listed as
#: not having enough games to be ranked; its (wide) interval is still shown.
MIN_UNITS = 3
#: Pseudo-units of the robust covariance: a bot's measured curvature gets weight u / (u + this).
PSEUDO_UNITS = 10.0

LosMatrix = tuple[tuple[float | None, ...], ...]


def centred(cov: FloatArray, component: IndexArray) -> FloatArray:
    """A covariance of logits as one of the published ratings: Elo, each bot's deviation from its
    component's mean (``C V C^T`` with C the centring matrix, in O(n^2) rather than two products)."""
    k = int(component.max()) + 1 if len(component) else 0
    count = np.bincount(component, minlength=k).astype(np.float64)

    def minus_component_means(m: FloatArray) -> FloatArray:  # (I - S) m, S the averaging matrix
        sums = np.zeros((k, m.shape[1]))
        np.add.at(sums, component, m)
        return m - (sums / count[:, None])[component]

    left = minus_component_means(cov)
    out: FloatArray = ELO_PER_LOGIT**2 * minus_component_means(left.T).T
    return out


def _inverse(matrix: FloatArray) -> FloatArray:
    return np.asarray(linalg.inv(matrix, check_finite=False), dtype=np.float64)


def posterior_cov(data: PairData, fit: Fit) -> FloatArray:
    """Covariance (Elo, centred per component) of the Laplace approximation of the posterior.

    The posterior is the pairwise likelihood times the prior (the virtual drawn games); its
    curvature at the fit includes the prior's, so a bot with few games or a perfect score keeps a
    wide distribution instead of the point a resampling of two or three units produces.
    """
    lik, prior = information(data, fit)
    cov = _inverse(lik + np.diag(prior))
    return centred(cov, fit.component)


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


def _meat(data: PairData, fit: Fit) -> FloatArray:
    """The sum over units of the outer product of their scores, times u/(u-1)."""
    g = unit_scores(data, fit)
    u = data.n_units
    return np.asarray((g.T @ g).toarray(), dtype=np.float64) * (u / (u - 1) if u > 1 else 1.0)


def sandwich_cov(data: PairData, fit: Fit) -> FloatArray:
    """Cluster-robust (sandwich) covariance, clusters = resampling units, Elo, centred.

    ``H^-1 (u/(u-1) J + P) H^-1`` with H minus the posterior Hessian, J the sum over units of the
    outer product of their scores (so correlation between the pairs of one game, and between the
    games of a duplicate set, is measured, not assumed) and P the prior's curvature.
    """
    lik, prior = information(data, fit)
    hinv = _inverse(lik + np.diag(prior))
    cov = hinv @ (_meat(data, fit) + np.diag(prior)) @ hinv
    return centred(cov, fit.component)


def robust_cov(data: PairData, fit: Fit, pseudo_units: float | None = None) -> FloatArray:
    """Posterior covariance whose curvature is the sandwich's, shrunk towards the model's when a bot
    has few resampling units (Elo, centred).

    ``H^-1 (D^1/2 J D^1/2 + (I-D)^1/2 L (I-D)^1/2 + P) H^-1``, L the likelihood's own curvature, J
    the measured one (the sum of the units' score outer products, times u/(u-1)), P the prior's,
    ``D = diag(u_i / (u_i + m))`` with u_i the units bot i took part in and m
    :data:`PSEUDO_UNITS`. L is scaled by the design effect tr(J) / tr(L) pooled over all bots and
    all U units, shrunk towards 1 as ``(U kappa + m) / (U + m)`` and never below 1.
    """
    m = PSEUDO_UNITS if pseudo_units is None else pseudo_units
    lik, prior = information(data, fit)
    hinv = _inverse(lik + np.diag(prior))
    j = _meat(data, fit)
    u = data.n_units
    units = units_per_bot(data).astype(np.float64)
    d = np.sqrt(units / (units + m))
    e = np.sqrt(1.0 - d * d)
    t_lik = float(np.trace(lik))
    kappa = float(np.trace(j)) / t_lik if t_lik > 0 else 1.0
    kappa = max(1.0, (u * kappa + m) / (u + m))
    meat = d[:, None] * j * d[None, :] + kappa * e[:, None] * lik * e[None, :] + np.diag(prior)
    cov = hinv @ meat @ hinv
    return centred(cov, fit.component)


def units_per_bot(data: PairData) -> IndexArray:
    """How many resampling units (duplicate sets, or single games) each bot took part in."""
    pairs = np.unique(data.game_unit[data.seat_game] * max(data.n_bots, 1) + data.seat_entrant)
    return np.bincount(pairs % max(data.n_bots, 1), minlength=data.n_bots).astype(np.intp)


def los_from_cov(fit: Fit, cov: FloatArray) -> LosMatrix:
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


def los_matrix(fit: Fit, samples: FloatArray) -> LosMatrix:
    """Likelihood of superiority from the normal approximation of the bootstrap covariance."""
    if len(fit.elo) == 0 or len(samples) < 2:
        return ()
    return los_from_cov(fit, np.atleast_2d(np.cov(samples, rowvar=False)))


class IntervalMethod(str, Enum):
    """How the uncertainty of the ratings is computed (see the module text and the coverage table in
    docs/standings-format.md)."""

    AUTO = "auto"  # what the standings publish
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
    low: FloatArray
    high: FloatArray
    cov: FloatArray
    los: LosMatrix
    enough: npt.NDArray[np.bool_]
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

    ``resamples`` and ``seed`` matter only for the bootstrap. Bots in fewer than :data:`MIN_UNITS`
    resampling units are marked as not having enough games to rank (``enough``).
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
    with one_blas_thread():
        if method is IntervalMethod.POSTERIOR:
            cov = posterior_cov(data, fit)
        elif method is IntervalMethod.SANDWICH:
            cov = sandwich_cov(data, fit)
        else:
            cov = robust_cov(data, fit)
    half = ndtri(0.5 + LEVEL / 2.0) * np.sqrt(np.maximum(np.diag(cov), 0.0))
    return Intervals(method, fit.elo - half, fit.elo + half, cov, _claims(fit, cov, enough), enough, 0)


def _claims(fit: Fit, cov: FloatArray, enough: npt.NDArray[np.bool_]) -> LosMatrix:
    """LOS, None wherever a bot has not played enough to be ranked."""
    los = los_from_cov(fit, cov)
    return tuple(
        tuple(v if enough[i] and enough[j] else None for j, v in enumerate(row))
        for i, row in enumerate(los)
    )
