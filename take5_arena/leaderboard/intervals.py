"""How uncertain a fit is: the 95% intervals, the likelihood of superiority, and who is rankable.

What is published (``IntervalMethod.DESIGN``, what ``AUTO`` stands for), and why:

* **Interval** - the rating plus or minus t standard errors, from ``phi H^-1 L H^-1``
  (:func:`design_cov`): L the pairwise likelihood's curvature, H = L + P with the prior's, and
  ``phi`` the tournament's design effect (:func:`dispersion`), Pearson's statistic over the
  resampling units (whole games, or whole duplicate sets) with its degrees of freedom for the t
  quantile. The pairs of one game share its luck, the games of a duplicate set share its hands: a
  model that counts them as independent results is too sure at tables of 10 (70-80% coverage) and
  with duplicate deals, and a bot's own few units are too few to measure that for one bot. Pooled
  over the tournament, ``phi`` is known from a few units on, so even a newcomer's one set is judged.
* **Who gets an interval** - every bot with a result against another bot, in a tournament that
  gives ``phi`` at least one degree of freedom; with fewer than :data:`MIN_DF` of them ``phi``
  counts as at least 1 (a low one measured from a few units is mostly luck). Wherever that holds
  the interval covers (bench/coverage.py: 95-100% also at 2-12 games per bot, where it is wide),
  so an interval is shown, however wide, and "not enough games" (NaN, no LOS) only where none
  exists. Hiding the bots with fewer than 16 effective results (published before) hid every bot
  of a newcomer's first dozen games at tables of 2, whose intervals covered.
* **Likelihood of superiority** - from the same covariance under a prior on the field's spread,
  averaged over what the results say about that spread and about the design effect
  (:func:`superiority`): close bots with few results are not claimed apart. ``None`` on the
  diagonal, between bots of different components (not comparable), and for a bot without enough
  games.

The older methods stay as options and as the bench's baselines: the Laplace posterior, the
cluster-robust sandwich, ``ROBUST`` (published before: the posterior moving per bot to the sandwich
as its units accumulate), ``BLENDED`` (the same with the pooled ``phi``) and the percentile
bootstrap; under them a bot in fewer than :data:`MIN_UNITS` units is marked but keeps its interval.
Coverage by method at every size the project runs: docs/maintainers/ratings-reasoning.md and
``python bench/coverage.py``.

Kept apart from the fit because a fit has one answer while its uncertainty has several candidate
methods, measured against each other by bench/coverage.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import Enum
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import linalg, sparse
from scipy.special import chdtri, expit, ndtr, ndtri, stdtr, stdtrit

from .fit import (
    ELO_PER_LOGIT,
    Fit,
    FloatArray,
    IndexArray,
    PairData,
    bootstrap_elo,
    information,
    one_blas_thread,
    sum_by,
)
from .variances import design_moments

#: The coverage level of every published interval.
LEVEL = 0.95
#: Bootstrap resamples, everywhere the bootstrap is used (standings, site, status).
DEFAULT_RESAMPLES = 200
#: A bot that took part in fewer resampling units (duplicate sets, or single games) is listed as
#: not having enough games to be ranked; its (wide) interval is still shown.
MIN_UNITS = 3
#: Design methods: with fewer degrees of freedom than this, the design effect counts as at least 1.
MIN_DF = 10
#: LOS averages over the field's spread (sd of the true ratings, Elo) on 0 and values from
#: :data:`MIN_SPREAD` up to :data:`MAX_SPREAD`, each this factor above the one before but at most
#: :data:`SPREAD_STEP` Elo (:func:`_spread_grid`).
SPREAD_RATIO = 1.1
SPREAD_STEP = 20.0
MAX_SPREAD = 800.0
MIN_SPREAD = 1.0
#: The prior probability that the bots of a field are equally strong (spread 0).
EVEN_FIELD = 0.5
#: How the rest of the prior is spread over the field's spread (:func:`_spread_grid`): "uniform"
#: in ``tau`` (published) or "log" (uniform in ``log tau``, favouring small spreads; measured
#: against it by bench/los_prior.py and not adopted, see docs/benchmarks.md).
SPREAD_PRIOR: Literal["uniform", "log"] = "uniform"
#: LOS averages over the design effect on a Gauss-Hermite rule of this many nodes
#: (:func:`_design_scales`).
DESIGN_NODES = 9
#: Grid points of less posterior weight than this are left out of LOS (the rest reweighted): at
#: 300 bots each point costs a 300 x 300 matrix product.
GRID_FLOOR = 1e-4
#: Above this many bots the published (design) intervals come without a LOS matrix: the
#: variances and the neighbours' covariances are solved for without the bots x bots inverse
#: (:mod:`.variances`) and give each bot's LOS over the next one down (:func:`neighbour_los`),
#: while the LOS's average over the field's spread needs the full covariance and its
#: eigenvectors, O(bots^3) per grid point kept (rating_intervals: 2.4 s CPU at 1,000 bots, 13 s
#: at 2,000; bench/scale.py). Rank ranges then come from the variances
#: (board.rank_ranges_from_variances).
LOS_MAX_BOTS = 1000
#: Pseudo-units of the robust covariance: a bot's measured curvature gets weight u / (u + this).
PSEUDO_UNITS = 10.0

LosMatrix = tuple[tuple[float | None, ...], ...]


def los_array(los: LosMatrix) -> FloatArray:
    """A LOS matrix as numbers, NaN for None: read by array operations, not cell by cell (a
    million cells at 1,000 bots)."""
    out: FloatArray = np.array(los, dtype=np.float64).reshape(len(los), len(los))
    return out


def los_matrix(values: FloatArray) -> LosMatrix:
    """:func:`los_array`'s numbers as a LOS matrix again (None for NaN)."""
    cells = values.astype(object)
    cells[np.isnan(values)] = None
    return tuple(tuple(row) for row in cells.tolist())


def centred(cov: FloatArray, component: IndexArray) -> FloatArray:
    """A covariance of logits as one of the published ratings: Elo, each bot's deviation from its
    component's mean (``C V C^T`` with C the centring matrix, in O(n^2) rather than two products).
    """
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


@dataclass(frozen=True)
class Dispersion:
    """How much more the units' results vary than the model's independent pairs say (``phi``), and
    the degrees of freedom of that estimate (``df``).

    ``phi`` is Pearson's statistic over the units: each unit's score vector s_u (restricted to the
    bots it seated) weighed against the model's own curvature L_u of that unit, ``s_u^T L_u^+ s_u``,
    summed over units and divided by ``df = sum_u (m_u - 1) - sum_c (n_c - 1)`` (m_u bots in unit
    u; n_c bots in component c, whose fitted ratings use up that many directions). Under the model
    (independent pairs) phi is 1; the pairs of one game share its luck and so phi is above 1 (about
    (k + 1) / 3 for k seats of even strength); the games of a duplicate set cancel the luck of the
    hands and phi can fall below 1. It is pooled over the whole tournament, so a unit of a newcomer
    is measured by every unit of the field.
    """

    phi: float
    df: int


def dispersion(data: PairData, fit: Fit) -> Dispersion:
    """The design effect of the tournament (:class:`Dispersion`), from the units' Pearson
    statistic."""
    n = data.n_bots
    if n < 2 or len(data.obs_edge) == 0:
        return Dispersion(1.0, 0)
    p_edge = expit(fit.logits[data.edge_a] - fit.logits[data.edge_b])
    p = p_edge[data.obs_edge]
    resid = data.obs_score - p
    weight = p * (1.0 - p)
    unit = data.game_unit[data.obs_game]
    a, b = data.edge_a[data.obs_edge], data.edge_b[data.obs_edge]
    keys = np.unique(np.concatenate([unit * n + a, unit * n + b]))
    key_unit = keys // n
    first = np.searchsorted(key_unit, key_unit, side="left")
    local = np.arange(len(keys)) - first  # index of a bot within its unit
    size = np.bincount(key_unit, minlength=data.n_units)  # bots per unit
    la = local[np.searchsorted(keys, unit * n + a)]
    lb = local[np.searchsorted(keys, unit * n + b)]
    pearson = 0.0
    for m in np.unique(size[size > 1]):
        m = int(m)
        units_m = np.flatnonzero(size == m)
        row = np.full(data.n_units, -1, dtype=np.intp)
        row[units_m] = np.arange(len(units_m))
        pick = row[unit] >= 0
        r, ia, ib, w, e = row[unit][pick], la[pick], lb[pick], weight[pick], resid[pick]
        lap = np.zeros((len(units_m), m, m))
        np.add.at(lap, (r, ia, ia), w)
        np.add.at(lap, (r, ib, ib), w)
        np.add.at(lap, (r, ia, ib), -w)
        np.add.at(lap, (r, ib, ia), -w)
        score = np.zeros((len(units_m), m))
        np.add.at(score, (r, ia), e)
        np.add.at(score, (r, ib), -e)
        # s^T L^+ s: s sums to zero within the unit, so adding 1 1^T / m (the gauge) changes nothing
        solved = np.linalg.solve(lap + 1.0 / m, score[:, :, None])[:, :, 0]
        pearson += float(np.sum(score * solved))
    components = int(fit.component.max()) + 1
    df = int(np.sum(np.maximum(size - 1, 0))) - (n - components)
    if df <= 0:
        return Dispersion(1.0, max(df, 0))
    return Dispersion(pearson / df, df)


def design_cov(data: PairData, fit: Fit, phi: float) -> FloatArray:
    """The sampling covariance of the fit with the tournament's design effect (Elo, centred):
    ``phi H^-1 L H^-1``, L the likelihood's curvature and H = L + P the posterior's (quasi-
    likelihood, the prior counted as what it is, a fixed penalty: it moves the fit, its curvature
    does not vary). Without the prior in the middle a weak field is not given the prior's width:
    the posterior's own covariance H^-1 covers 99-100% at 5 games per bot, where the truth lies much
    closer to 1500 than the prior (sd 350 Elo) allows for."""
    lik, prior = information(data, fit)
    hinv = _inverse(lik + np.diag(prior))
    cov = phi * (hinv @ lik @ hinv)
    return centred(cov, fit.component)


def blended_cov(
    data: PairData, fit: Fit, phi: float, pseudo_units: float = PSEUDO_UNITS
) -> FloatArray:
    """:func:`design_cov` with each bot's curvature moving to the measured one (the sandwich's) as
    its units accumulate, weight u / (u + pseudo_units) (Elo, centred)."""
    lik, prior = information(data, fit)
    hinv = _inverse(lik + np.diag(prior))
    j = _meat(data, fit)
    units = units_per_bot(data).astype(np.float64)
    d = np.sqrt(units / (units + pseudo_units))
    e = np.sqrt(1.0 - d * d)
    meat = d[:, None] * j * d[None, :] + phi * e[:, None] * lik * e[None, :] + np.diag(prior)
    return centred(hinv @ meat @ hinv, fit.component)


def effective_results(data: PairData, phi: float) -> FloatArray:
    """What each bot's games tell, as a number of independent pairwise results: its pairwise
    results against other bots divided by the design effect ``phi``, counted as at least 1.

    Counted from the schedule, not from the fitted probabilities, so that whether a bot is shown
    does not depend on how lucky its results were (a rule on the fitted information would hide
    exactly the bots whose luck was extreme, and the intervals left would cover too often). For
    the same reason ``phi`` counts as at least 1 here: duplicate deals can make the true design
    effect a little smaller, but a measured one below 1 in a small tournament is mostly luck, and
    showing the bots of exactly those tournaments covered 38% (8 bots, 5 games of 4 each, real
    games: bench/coverage.py). The bench reports it; a bot with none gets no interval.
    """
    n = data.n_bots
    count = sum_by(data.edge_a[data.obs_edge], None, n) + sum_by(
        data.edge_b[data.obs_edge], None, n
    )
    out: FloatArray = count / max(phi, 1.0)
    return out


def superiority(
    fit: Fit,
    cov: FloatArray,
    df: float,
    shown: npt.NDArray[np.bool_],
    shape: FloatArray | None = None,
) -> LosMatrix:
    """LOS under a hierarchical prior: the ratings of each component drawn from a normal of unknown
    spread ``tau``, and LOS averaged over what the results say about ``tau`` and about the design
    effect.

    ``r_hat ~ N(r, s V)`` (V ``cov``: for the design method phi times the posterior's, which counts
    the fit's pull towards 1500 as error) and ``r ~ N(mu, tau^2)`` give, for one ``tau`` and one
    scale ``s`` of the covariance, the posterior mean ``mu + T (T + sV)^-1 (r_hat - mu)`` and
    covariance ``T - T (T + sV)^-1 T`` (T = tau^2 I), and a normal LOS from those. A flat prior
    claims orders the field does not have (of LOS claims at 95-99% between bots with under 20 games,
    12% wrong at tables of 10). One ``tau`` measured from the field (the variance of the fitted
    ratings less their errors', published before) is itself a guess from n ratings: with few bots or
    a narrow field it came out too large about half the time, and LOS claimed orders that did not
    exist (8 bots within 25 Elo at tables of 4, duplicate deals, 12 games each: 31% of its claims at
    >= 95% wrong; ``bench/coverage.py --narrow``). So both are integrated out on a grid: ``tau`` on
    values up to :data:`MAX_SPREAD` Elo, 10% apart where they are small (:func:`_spread_grid`),
    with prior weight :data:`EVEN_FIELD` on 0 (a field of equals) and the rest uniform; ``s`` on a
    Gauss-Hermite rule of :data:`DESIGN_NODES` values of the design effect given its Pearson
    statistic (scaled inverse chi-square with ``df`` degrees of freedom, :func:`_design_scales`: a
    tournament of few units may have measured it low by luck, and the spread of the field then
    looks real). Each pair is
    weighted by the marginal likelihood of the shown bots' fitted ratings, ``N(0, tau^2 C + sV)``
    with V of ``shape``'s directions, ``cov``'s without it (:func:`_grid_weights`; C the centring
    matrix). A field as
    alike as its errors keeps its weight near ``tau = 0``, where every LOS is near 50%; a field
    spread far beyond its errors puts it all near one ``tau``, and LOS is the plain one. Only bots
    in ``shown`` weigh the grid.
    """
    n = len(fit.elo)
    if n == 0:
        return ()
    comp = fit.component
    los = np.full((n, n), np.nan)
    for c in np.unique(comp):
        members = np.flatnonzero(comp == c)
        if len(members) < 2:
            continue
        los[np.ix_(members, members)] = _component_los(
            fit.elo[members],
            cov[np.ix_(members, members)],
            df,
            shown[members],
            (cov if shape is None else shape)[np.ix_(members, members)],
        )
    same = comp[:, None] == comp[None, :]
    return tuple(
        tuple(float(los[i, j]) if i != j and same[i, j] else None for j in range(n))
        for i in range(n)
    )


def _spread_grid(
    kind: Literal["uniform", "log"] | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Values of the field's spread ``tau`` (Elo) and their prior weights: :data:`EVEN_FIELD` on 0,
    the rest uniform in ``tau`` up to :data:`MAX_SPREAD` (``kind``, by default
    :data:`SPREAD_PRIOR`: or in ``log tau`` from :data:`MIN_SPREAD`), on values from
    :data:`MIN_SPREAD` spaced by the factor :data:`SPREAD_RATIO`, at most :data:`SPREAD_STEP` apart
    (each weighed by the width of ``tau``, or of ``log tau``, it stands for).

    LOS depends on ``tau`` through the shrinkage ``tau^2 / (tau^2 + error^2)``, which a constant
    ratio of ``tau`` moves by at most half its logarithm wherever the errors are: evenly spaced
    values 20 Elo apart (published before) had none between a field of equals and one of 20 Elo,
    and in a field whose spread lies between, and is measured (100 bots within 50 Elo at duplicate
    tables of 10, 100 games each: 12 Elo, errors of 19), LOS put it at 0 or 20 and claimed from the
    tournaments that chose 20 (bench/coverage.py --narrow)."""
    spread = [MIN_SPREAD]
    while spread[-1] < MAX_SPREAD:
        spread.append(min(spread[-1] * SPREAD_RATIO, spread[-1] + SPREAD_STEP, MAX_SPREAD))
    taus = np.array([0.0, *spread])
    if (SPREAD_PRIOR if kind is None else kind) == "log":
        edges = np.concatenate([[MIN_SPREAD], np.sqrt(taus[1:-1] * taus[2:]), [MAX_SPREAD]])
        width = np.diff(np.log(edges))
    else:
        edges = np.concatenate([[0.0], 0.5 * (taus[1:-1] + taus[2:]), [MAX_SPREAD]])
        width = np.diff(edges)
    prior = np.concatenate([[EVEN_FIELD], (1.0 - EVEN_FIELD) * width / width.sum()])
    return taus, prior


def _design_scales(df: float) -> tuple[FloatArray, FloatArray]:
    """Values of (true design effect) / (measured one), ``df / chi2_df``, and their prior weights:
    a Gauss-Hermite rule of :data:`DESIGN_NODES` nodes in the value's normal score (``(1, 1)`` when
    ``df`` is infinite).

    The rule reaches the tails (about 3.2 standard scores at 9 nodes) where equal slices of
    probability stop at their midpoints (1.47 scores at 7 slices): a tournament whose design effect
    came out low by luck is explained by a large value, and a rule that could not reach it put the
    spread on the field instead. With 7 slices, 1 of 313 tournaments of 8 equal bots at duplicate
    tables of 6 (22 games each) claimed 12 orders at >= 95%, none with this rule or with 101 slices
    (``bench/coverage.py --narrow``)."""
    if math.isinf(df):
        return np.ones(1), np.ones(1)
    nodes, weights = np.polynomial.hermite_e.hermegauss(DESIGN_NODES)
    # chdtri: the upper-tail quantile, so df / chdtri grows with the probability
    scales: FloatArray = df / chdtri(df, ndtr(nodes))
    return scales, weights / weights.sum()


def _component_los(
    elo: FloatArray, cov: FloatArray, df: float, shown: npt.NDArray[np.bool_], shape: FloatArray
) -> FloatArray:
    """:func:`superiority` within one component (ratings and covariance centred on it)."""
    m = len(elo)
    basis = _contrasts(m)  # m x (m-1), orthonormal, orthogonal to the ones vector
    v = basis.T @ cov @ basis
    lam, q = np.linalg.eigh(0.5 * (v + v.T))
    lam = np.maximum(lam, 0.0)
    u = basis @ q  # the ratings' directions, in which V is diagonal
    z = q.T @ (basis.T @ (elo - elo.mean()))
    taus, tau_prior = _spread_grid()
    scales, scale_prior = _design_scales(df)
    joint = tau_prior[:, None] * scale_prior[None, :]
    weights = _grid_weights(elo, cov, shape, shown, taus, scales, joint)
    keep = np.argwhere(weights >= GRID_FLOOR)  # the grid points that carry weight
    t2 = taus[keep[:, 0]] ** 2
    sv = scales[keep[:, 1], None] * lam[None, :]  # points x directions
    total = t2[:, None] + sv
    shrink = np.where(total > 0, t2[:, None] / np.where(total > 0, total, 1.0), 0.0)
    w = weights[keep[:, 0], keep[:, 1]]
    w = w / w.sum()
    out = np.zeros((m, m))
    block = max(1, 2_000_000 // (m * m))  # grid points per batch: about 16 MB of m x m arrays
    for lo in range(0, len(keep), block):
        part = slice(lo, lo + block)
        mean = (shrink[part] * z[None, :]) @ u.T  # points x bots
        post = (u[None, :, :] * (shrink[part] * sv[part])[:, None, :]) @ u.T  # T - T(T+sV)^-1 T
        var = np.diagonal(post, axis1=1, axis2=2)
        sd = np.sqrt(np.maximum(var[:, :, None] + var[:, None, :] - 2.0 * post, 0.0))
        d = mean[:, :, None] - mean[:, None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            cdf = ndtr(d / np.where(sd > 1e-9, sd, 1.0))
        sure = np.where(d > 1e-9, 1.0, np.where(d < -1e-9, 0.0, 0.5))
        out += np.tensordot(w[part], np.where(sd > 1e-9, cdf, sure), axes=1)
    return out


def _grid_weights(
    elo: FloatArray,
    cov: FloatArray,
    shape: FloatArray,
    shown: npt.NDArray[np.bool_],
    taus: FloatArray,
    scales: FloatArray,
    joint: FloatArray,
) -> FloatArray:
    """Posterior weight of each (field spread, design scale) pair given the shown bots' fitted
    ratings (shape: taus x scales, ``joint`` their prior weights): ``r_hat ~ N(0, tau^2 C + sV)``
    in the centred subspace, V with
    the directions of ``shape`` (the errors' covariance in a field of equals) sized to the trace of
    ``cov``.

    Not V = ``cov`` itself: the bots far from the middle of a wide field win or lose most of their
    pairs, which tell least, so the fit's own covariance is largest exactly along the field's
    spread; weighing each direction by it explained that spread as error and put the weight near
    ``tau = 0`` (32 bots evenly over 350 Elo, tables of 2, 20 games each: the largest LOS 0.52-0.82,
    no claim at >= 95% where the plain LOS made hundreds, 1-2% wrong; issue 53). The shape at even
    ratings keeps what the schedule says (who played how often) and nothing of the fitted ratings;
    the per-direction weighing still tells a design effect measured low from a spread field."""
    sel = np.flatnonzero(shown)
    if len(sel) < 2:  # nothing measures the spread: the prior alone
        out: FloatArray = joint
        return out
    basis = _contrasts(len(sel))
    v0 = basis.T @ shape[np.ix_(sel, sel)] @ basis
    lam, q = np.linalg.eigh(0.5 * (v0 + v0.T))
    lam = np.maximum(lam, 0.0)
    # the shape's directions, at the errors' total size
    size = float(np.trace(basis.T @ cov[np.ix_(sel, sel)] @ basis))
    lam = lam * (size / lam.sum() if lam.sum() > 0 else 0.0)
    z2 = (q.T @ (basis.T @ (elo[sel] - elo[sel].mean()))) ** 2
    total = taus[:, None, None] ** 2 + scales[None, :, None] * lam[None, None, :] + 1e-9
    loglik = -0.5 * np.sum(np.log(total) + z2 / total, axis=2)
    w = joint * np.exp(loglik - loglik.max())
    out = w / w.sum()
    return out


def _contrasts(m: int) -> FloatArray:
    """An orthonormal basis (m x (m-1)) of the vectors that sum to zero (Helmert's)."""
    out = np.zeros((m, m - 1))
    for j in range(1, m):
        out[:j, j - 1] = 1.0 / math.sqrt(j * (j + 1))
        out[j, j - 1] = -j / math.sqrt(j * (j + 1))
    return out


def units_per_bot(data: PairData) -> IndexArray:
    """How many resampling units (duplicate sets, or single games) each bot took part in."""
    pairs = np.unique(data.game_unit[data.seat_game] * max(data.n_bots, 1) + data.seat_entrant)
    return np.bincount(pairs % max(data.n_bots, 1), minlength=data.n_bots).astype(np.intp)


def los_from_cov(fit: Fit, cov: FloatArray, df: float = math.inf) -> LosMatrix:
    """``LOS[i][j] = F((r_i - r_j) / sd(r_i - r_j))`` for a covariance of the ratings (Elo), F the
    normal distribution function, or Student's t with ``df`` degrees of freedom when the covariance
    carries an estimated design effect."""
    n = len(fit.elo)
    if n == 0:
        return ()
    var = np.diag(cov)
    sd = np.sqrt(np.maximum(var[:, None] + var[None, :] - 2.0 * cov, 0.0))
    diff = fit.elo[:, None] - fit.elo[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        z = diff / np.where(sd > 1e-9, sd, 1.0)
        cdf = ndtr(z) if math.isinf(df) else stdtr(df, z)
        los = np.where(sd > 1e-9, cdf, np.where(diff > 0, 1.0, np.where(diff < 0, 0.0, 0.5)))
    same = fit.component[:, None] == fit.component[None, :]
    return tuple(
        tuple(float(los[i, j]) if i != j and same[i, j] else None for j in range(n))
        for i in range(n)
    )


def neighbour_los(
    elo: FloatArray,
    var: FloatArray,
    near: FloatArray,
    order: IndexArray,
    enough: npt.NDArray[np.bool_],
    df: float,
) -> FloatArray:
    """The LOS of each bot over the next one down the table, from the variances and the
    neighbours' covariances alone (:func:`~take5_arena.leaderboard.variances.design_moments`):
    Student's t of the difference over its standard error, as :func:`los_from_cov` (bots in
    ``elo``'s order; ``near[k]`` the covariance of ``order[k]`` and ``order[k + 1]``).

    This is the plain LOS, not :func:`superiority`'s average over the field's spread: that needs
    the whole covariance (O(bots^3) per grid point). In a field of thousands of bots the spread is
    measured closely and is wide against each bot's error, where the two agree (bench/scale.py
    measures the difference at 1,000 bots, where both run)."""
    n = len(elo)
    out = np.full(n, np.nan)
    if n < 2:
        return out
    a, b = order[:-1], order[1:]
    diff = elo[a] - elo[b]
    sd = np.sqrt(np.maximum(var[a] + var[b] - 2.0 * near, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = diff / np.where(sd > 1e-9, sd, 1.0)
        los = np.where(sd > 1e-9, stdtr(df, z), np.where(diff > 0, 1.0, 0.5))
    ok = enough[a] & enough[b] & np.isfinite(near)
    out[a] = np.where(ok, los, np.nan)
    return out


class IntervalMethod(str, Enum):
    """How the uncertainty of the ratings is computed (see the module text and the coverage table in
    docs/standings-format.md)."""

    AUTO = "auto"  # what the standings publish
    BOOTSTRAP = "bootstrap"
    POSTERIOR = "posterior"
    SANDWICH = "sandwich"
    ROBUST = "robust"  # the posterior, its curvature measured from the data as units accumulate
    DESIGN = "design"  # the posterior with the tournament's design effect, t quantiles
    BLENDED = "blended"  # DESIGN, moving to the sandwich per bot as its units accumulate

    def resolved(self) -> IntervalMethod:
        """The method AUTO stands for."""
        return IntervalMethod.DESIGN if self is IntervalMethod.AUTO else self


@dataclass(frozen=True, eq=False)
class Intervals:
    """Interval per bot (Elo, ``PairData.entrants`` order), the intervals' covariance, the
    LOS matrix, and whether each bot has played enough to be ranked. ``low`` and ``high`` are NaN
    where no honest interval exists (a bot without enough games under the design methods). Above
    :data:`LOS_MAX_BOTS` bots the design method gives no covariance matrix (0 x 0) and no LOS
    matrix, but each bot's variance and LOS over the next bot down (:func:`neighbour_los`)."""

    method: IntervalMethod  # the method used (never AUTO)
    low: FloatArray
    high: FloatArray
    cov: FloatArray  # the intervals' (design: the LOS use phi times the posterior's)
    los: LosMatrix
    enough: npt.NDArray[np.bool_]
    resamples: int  # bootstrap resamples (0 for the other methods)
    df: float = math.inf  # degrees of freedom of the t quantiles (inf: normal)
    phi: float = 1.0  # the design effect (1 for the methods that do not estimate it)
    information: FloatArray | None = None  # effective results per bot (design methods)
    #: Above LOS_MAX_BOTS (design): each bot's variance (Elo^2) and its LOS over the bot ranked
    #: next below it (NaN for the last, across components, or without enough games).
    variance: FloatArray | None = None
    los_next: FloatArray | None = None


def rating_intervals(
    data: PairData,
    fit: Fit,
    *,
    method: IntervalMethod | str = IntervalMethod.AUTO,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Intervals:
    """The :data:`LEVEL` intervals and LOS of a fit.

    ``resamples`` and ``seed`` matter only for the bootstrap. Under the design methods a bot gets
    an interval and LOS when it has a result against another bot and the tournament gives the
    design effect a degree of freedom (see the module text); other bots get NaN and no LOS.
    Under the older methods a bot in fewer than :data:`MIN_UNITS` units is marked, its interval
    still given.
    """
    method = IntervalMethod(method).resolved()
    n = data.n_bots
    if fit.prior == 0:
        raise ValueError("intervals need prior > 0 (without it a bot may have no finite rating)")
    if method is IntervalMethod.BOOTSTRAP:
        enough = units_per_bot(data) >= MIN_UNITS
        if not resamples:
            raise ValueError("bootstrap intervals need resamples > 0")
        samples = bootstrap_elo(data, fit, resamples=resamples, seed=seed)
        tail = 50.0 * (1.0 - LEVEL)
        low, high = np.percentile(samples, [tail, 100.0 - tail], axis=0)
        cov = np.atleast_2d(np.cov(samples, rowvar=False)) if resamples > 1 else np.zeros((n, n))
        return Intervals(method, low, high, cov, _claims(fit, cov, enough), enough, resamples)
    with one_blas_thread():
        if method in (IntervalMethod.DESIGN, IntervalMethod.BLENDED):
            disp = dispersion(data, fit)
            info = effective_results(data, disp.phi)
            enough = (info > 0) & (disp.df >= 1)
            # a design effect measured low from few units is mostly luck: count it as at least 1
            phi = disp.phi if disp.df >= MIN_DF else max(disp.phi, 1.0)
            df = float(max(disp.df, 1))
            t = stdtrit(df, 0.5 + LEVEL / 2.0)
            if method is IntervalMethod.DESIGN and n > LOS_MAX_BOTS:
                # no LOS matrix: the variances and the neighbours' covariances, without the
                # bots x bots inverse, and the LOS of each bot over the next one down
                order = np.lexsort((np.arange(n), -fit.elo))
                var, near = design_moments(data, fit, phi, order)
                half = t * np.sqrt(np.maximum(var, 0.0))
                low = np.where(enough, fit.elo - half, np.nan)
                high = np.where(enough, fit.elo + half, np.nan)
                nxt = neighbour_los(fit.elo, var, near, order, enough, df)
                return Intervals(
                    method, low, high, np.zeros((0, 0)), (), enough, 0, df, phi, info, var, nxt
                )
            if method is IntervalMethod.DESIGN:
                cov = design_cov(data, fit, phi)
            else:
                cov = blended_cov(data, fit, phi)
            half = t * np.sqrt(np.maximum(np.diag(cov), 0.0))
            low = np.where(enough, fit.elo - half, np.nan)
            high = np.where(enough, fit.elo + half, np.nan)
            # LOS treats a fitted rating as the true one plus an error, and the fit's pull towards
            # 1500 is part of that error: the posterior's covariance, not the sampling one (with
            # the sampling one, LOS claimed orders at 5 games per bot, 8-16% of them wrong)
            shape = None
            if method is IntervalMethod.DESIGN:
                cov_los = phi * posterior_cov(data, fit)
                even = replace(fit, logits=np.zeros_like(fit.logits))
                shape = posterior_cov(data, even)  # the errors' shape in a field of equals
            else:
                cov_los = cov
            los = _shown_only(superiority(fit, cov_los, df, enough, shape), enough)
            return Intervals(method, low, high, cov, los, enough, 0, df, phi, info)
        enough = units_per_bot(data) >= MIN_UNITS
        if method is IntervalMethod.POSTERIOR:
            cov = posterior_cov(data, fit)
        elif method is IntervalMethod.SANDWICH:
            cov = sandwich_cov(data, fit)
        else:
            cov = robust_cov(data, fit)
    half = ndtri(0.5 + LEVEL / 2.0) * np.sqrt(np.maximum(np.diag(cov), 0.0))
    return Intervals(
        method, fit.elo - half, fit.elo + half, cov, _claims(fit, cov, enough), enough, 0
    )


def _shown_only(los: LosMatrix, enough: npt.NDArray[np.bool_]) -> LosMatrix:
    return tuple(
        tuple(v if enough[i] and enough[j] else None for j, v in enumerate(row))
        for i, row in enumerate(los)
    )


def _claims(
    fit: Fit, cov: FloatArray, enough: npt.NDArray[np.bool_], df: float = math.inf
) -> LosMatrix:
    """LOS, None wherever a bot has not played enough to be ranked."""
    los = los_from_cov(fit, cov, df)
    return tuple(
        tuple(v if enough[i] and enough[j] else None for j, v in enumerate(row))
        for i, row in enumerate(los)
    )
