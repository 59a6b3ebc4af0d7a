"""Pools above LOS_MAX_BOTS: the LOS over the next bot from the sparse covariance, rank ranges from
the variances (checked against the dense matrices on pools small enough for both)."""

from __future__ import annotations

import random
from itertools import pairwise

import numpy as np
import pytest
from scipy.special import stdtrit

from take5_arena.leaderboard import intervals as I
from take5_arena.leaderboard.board import (
    compute_standings,
    rank_ranges,
    rank_ranges_from_variances,
    ranking_with_los,
)
from take5_arena.leaderboard.fit import fit_elo, prepare
from take5_arena.leaderboard.markdown import standings_markdown
from take5_arena.leaderboard.results import GameResult


def ladder(bots: int, games: int, seed: int) -> list[GameResult]:
    rng = random.Random(seed)
    strength = [rng.gauss(0.0, 1.0) for _ in range(bots)]
    out = []
    for k in range(games):
        base = rng.randrange(bots)
        seats = rng.sample([(base + d) % bots for d in range(8)], 4)
        perf = [strength[b] + rng.gauss(0.0, 1.0) for b in seats]
        places = tuple(1 + sum(q > p for q in perf) for p in perf)
        names = tuple(f"b{b:03d}" for b in seats)
        out.append(GameResult(f"g{k:05d}", names, (0, 0, 0, 0), places))
    return out


@pytest.fixture
def pool() -> list[GameResult]:
    return ladder(60, 900, 1) + [GameResult("z0", ("lone", "b000"), (0, 0), (1, 2))]


def test_los_next_equals_the_dense_covariance(monkeypatch, pool):
    data = prepare(pool)
    fit = fit_elo(data)
    dense = I.rating_intervals(data, fit)
    cov = I.design_cov(data, fit, dense.phi)
    plain = I.los_from_cov(fit, cov, dense.df)
    monkeypatch.setattr(I, "LOS_MAX_BOTS", 10)
    big = I.rating_intervals(data, fit)
    assert big.los == () and big.los_next is not None and big.variance is not None
    assert np.allclose(big.low, dense.low, equal_nan=True)
    assert np.allclose(big.variance, np.diag(cov))
    order = np.lexsort((np.arange(data.n_bots), -fit.elo))
    for a, b in pairwise(order):
        want = plain[a][b]
        if want is None or not (big.enough[a] and big.enough[b]):
            assert np.isnan(big.los_next[a])
        else:
            assert abs(big.los_next[a] - want) < 1e-9
    assert np.isnan(big.los_next[order[-1]])


def test_rank_ranges_from_variances_are_the_bound_and_never_narrower(pool):
    data = prepare(pool)
    fit = fit_elo(data)
    iv = I.rating_intervals(data, fit)
    cov = I.design_cov(data, fit, iv.phi)
    var = np.diag(cov)
    comp, enough = fit.component.tolist(), iv.enough.tolist()
    got = rank_ranges_from_variances(fit.elo.tolist(), var.tolist(), comp, enough, iv.df)
    # the same bound, counted pair by pair
    q = stdtrit(iv.df, 0.95)
    sd = np.sqrt(var)
    n = data.n_bots
    for i in range(n):
        if not enough[i]:
            assert got[i] is None
            continue
        peers = [j for j in range(n) if comp[j] == comp[i] and enough[j] and j != i]
        above = sum(fit.elo[j] - fit.elo[i] >= q * (sd[i] + sd[j]) for j in peers)
        below = sum(fit.elo[i] - fit.elo[j] >= q * (sd[i] + sd[j]) for j in peers)
        assert got[i] == (1 + above, comp.count(comp[i]) - below)
    # never narrower than the ranges of the plain LOS on the full covariance
    plain = rank_ranges(I.los_from_cov(fit, cov, iv.df), comp, enough)
    for mine, full in zip(got, plain):
        assert (mine is None) == (full is None)
        if mine is not None and full is not None:
            assert mine[0] <= full[0] and mine[1] >= full[1]
    assert any(r is not None and r[1] - r[0] < 59 for r in got)  # they do say something


def test_standings_of_a_large_pool_show_los_next_and_ranges(monkeypatch, pool):
    monkeypatch.setattr(I, "LOS_MAX_BOTS", 10)
    st = compute_standings(pool)
    assert st.los == ()
    assert all(r.rank_range is not None for r in st.rows if r.enough_games)
    assert sum(r.los_next is not None for r in st.rows) >= len(st.rows) - 3
    assert st.rows[-1].los_next is None
    doc = st.to_json_dict()
    assert doc["rows"][0]["los_next"] == st.rows[0].los_next
    order, nxt = ranking_with_los(pool)
    assert list(order) == [r.entrant for r in st.rows]
    assert list(nxt) == [r.los_next for r in st.rows[:-1]]
    text = standings_markdown(st)
    assert f"{100 * st.rows[0].los_next:.0f}%" in text


def test_small_pools_give_los_next_from_the_matrix(pool):
    st = compute_standings(pool[:200])
    assert st.los
    for k, r in enumerate(st.rows[:-1]):
        assert r.los_next == st.los[k][k + 1]
