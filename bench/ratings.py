"""Benchmark of the rating fit and bootstrap (leaderboard/fit.py).

Synthetic 4-player games (100,000 of them) among 10, 100 and 1,000 bots with planted strengths
(finishing order drawn from a Plackett-Luce model, so pairwise outcomes follow the planted logits).
For each pool size it prints:

* prepare   – GameResult objects to arrays (once per standings computation),
* aggregate – one np.bincount aggregation to win/total per pair: the baseline the others are
              measured against (a fit or a resample can hardly be cheaper than one aggregation),
* fit       – aggregation plus Newton fit, and its ratio to the baseline,
* bootstrap – total and per resample, and per-resample / baseline,
* the error of the fit against the planted ratings,
* for 100 bots, compute_standings end to end.

For 10 bots it also times a naive pure-Python pipeline (dict aggregation in a loop over games, then
Hunter's MM iterations) on the same games, and prints the speed-up and the agreement.

``--threads`` times instead what until-settled calls after every batch, ``ranking_with_los`` (fit,
design effect, intervals, LOS) on 8 and 32 bots, with the linear algebra on one BLAS thread (as
published) against the library's default threading, on an idle host and on a host loaded by as
many busy processes as it has cores: wall time and the process's CPU time (spinning BLAS threads
show in both), median of the calls.

Run: python bench/ratings.py  (about a minute on 2 cores); python bench/ratings.py --threads
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable
from typing import TypeVar

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from take5_arena.leaderboard.board import compute_standings
from take5_arena.leaderboard.fit import (
    DEFAULT_PRIOR,
    ELO_PER_LOGIT,
    aggregate,
    bootstrap_elo,
    fit_elo,
    prepare,
)
from take5_arena.leaderboard.results import GameResult

GAMES = 100_000
SEATS = 4
RESAMPLES = {10: 200, 100: 200, 1000: 200}

R = TypeVar("R")


def synthetic(n_bots: int, n_games: int, seed: int) -> tuple[list[GameResult], np.ndarray]:
    """Planted logits ~ N(0, 1); per game 4 distinct bots; places from perf = logit + Gumbel."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0.0, 1.0, n_bots)
    seats = rng.integers(0, n_bots, (n_games, SEATS))
    while True:
        s = np.sort(seats, axis=1)
        bad = np.any(s[:, 1:] == s[:, :-1], axis=1)
        if not bad.any():
            break
        seats[bad] = rng.integers(0, n_bots, (int(bad.sum()), SEATS))
    perf = strength[seats] + rng.gumbel(size=seats.shape)
    penalty = np.clip(np.round(40 - 6 * perf), 0, None).astype(int)  # occasional ties
    places = 1 + (penalty[:, None, :] < penalty[:, :, None]).sum(axis=2)
    names = [f"bot{i:04d}" for i in range(n_bots)]
    results = [
        GameResult(
            f"g{g:06d}",
            tuple(names[i] for i in seats[g]),
            tuple(penalty[g].tolist()),
            tuple(places[g].tolist()),
            played_at=g,
        )
        for g in range(n_games)
    ]
    return results, strength


def naive_python(results: list[GameResult], prior: float, tol: float = 1e-10) -> dict[str, float]:
    """Pure-Python baseline: aggregate pairs in a dict, then Hunter's MM (prior: virtual draws)."""
    wins: dict[str, float] = {}
    games: dict[tuple[str, str], float] = {}
    for g in results:
        n = len(g.entrants)
        for i in range(n):
            for j in range(i + 1, n):
                a, b = g.entrants[i], g.entrants[j]
                s = 1.0 if g.places[i] < g.places[j] else 0.5 if g.places[i] == g.places[j] else 0.0
                wins[a] = wins.get(a, 0.0) + s
                wins[b] = wins.get(b, 0.0) + 1.0 - s
                key = (a, b) if a < b else (b, a)
                games[key] = games.get(key, 0.0) + 1.0
    gamma = dict.fromkeys(wins, 1.0)
    for _ in range(100_000):
        denom = {e: prior / (gamma[e] + 1.0) for e in gamma}
        for (a, b), n_ab in games.items():
            d = n_ab / (gamma[a] + gamma[b])
            denom[a] += d
            denom[b] += d
        new = {e: (wins[e] + prior / 2) / denom[e] for e in gamma}
        change = max(abs(math.log(new[e] / gamma[e])) for e in gamma)
        gamma = new
        if change < tol:
            break
    logs = {e: math.log(v) for e, v in gamma.items()}
    mean = sum(logs.values()) / len(logs)
    return {e: 1500.0 + ELO_PER_LOGIT * (v - mean) for e, v in logs.items()}


def timed(
    fn: Callable[..., R], *args: object, repeat: int = 1, **kwargs: object
) -> tuple[R, float]:
    best = math.inf
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn(*args, **kwargs)
        best = min(best, time.perf_counter() - t)
    return out, best


def threads_bench(calls: int = 40) -> None:
    """Single-threaded linear algebra against the default, idle and loaded (see the module text)."""
    import contextlib
    import multiprocessing
    import statistics
    from unittest import mock

    from threadpoolctl import threadpool_info

    from take5_arena.leaderboard import fit as fit_module
    from take5_arena.leaderboard import intervals as intervals_module
    from take5_arena.leaderboard.board import ranking_with_los

    blas = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    print(f"BLAS thread pools: {blas} threads by default; {os.cpu_count()} cpu(s)")
    cases = []
    for n in (8, 32):
        rng = np.random.default_rng(n)
        strength = rng.normal(0.0, 0.5, n)
        results = []
        for g in range(n * 25):
            who = rng.choice(n, size=SEATS, replace=False)
            perf = strength[who] + rng.gumbel(size=SEATS)
            places = tuple(int(p) for p in 1 + np.argsort(np.argsort(-perf)))
            results.append(
                GameResult(
                    f"g{g:06d}",
                    tuple(f"b{i:03d}" for i in who),
                    places,
                    places,
                    duplicate_set=None,
                    played_at=g,
                )
            )
        cases.append((n, results))

    def measure(results: list[GameResult]) -> tuple[float, float]:
        walls, cpus = [], []
        for _ in range(calls):
            w, c = time.perf_counter(), time.process_time()
            ranking_with_los(results)
            walls.append(time.perf_counter() - w)
            cpus.append(time.process_time() - c)
        return statistics.median(walls), statistics.median(cpus)

    for load in (0, os.cpu_count() or 1):
        burners = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(load)]
        for p in burners:
            p.start()
        try:
            for n, results in cases:
                ranking_with_los(results)  # warm up
                one = measure(results)
                with (
                    mock.patch.object(fit_module, "one_blas_thread", contextlib.nullcontext),
                    mock.patch.object(intervals_module, "one_blas_thread", contextlib.nullcontext),
                ):
                    default = measure(results)
                print(
                    f"  {'loaded' if load else 'idle':6} ({load} busy processes), {n:2} bots, "
                    f"{len(results)} games: one BLAS thread {1e3 * one[0]:7.1f} ms wall "
                    f"{1e3 * one[1]:7.1f} ms CPU; default threads {1e3 * default[0]:7.1f} ms wall "
                    f"{1e3 * default[1]:7.1f} ms CPU = {default[0] / one[0]:.1f} x wall"
                )
        finally:
            for p in burners:
                p.terminate()
                p.join()


def _burn() -> None:
    while True:
        pass


def main() -> None:
    if "--threads" in sys.argv[1:]:
        threads_bench()
        return
    print(
        f"{GAMES:,} games of {SEATS} players ({SEATS * (SEATS - 1) // 2} pairs each); "
        f"numpy {np.__version__}, {os.cpu_count()} cpu(s)"
    )
    total = time.perf_counter()
    for n_bots in (10, 100, 1000):
        results, strength = synthetic(n_bots, GAMES, seed=n_bots)
        data, t_prep = timed(prepare, results)
        _, t_agg = timed(aggregate, data, np.ones(data.n_games), repeat=5)
        fit, t_fit = timed(fit_elo, data, repeat=3)
        b = RESAMPLES[n_bots]
        _, t_boot = timed(bootstrap_elo, data, fit, resamples=b, seed=1)
        planted = 1500 + ELO_PER_LOGIT * (strength - strength.mean())
        err = np.abs(fit.elo - planted)
        pairs, outcomes = len(data.edge_a), len(data.obs_edge)
        print(f"\n{n_bots:>5} bots: {pairs:,} distinct pairs, {outcomes:,} pair outcomes")
        print(f"  prepare   {t_prep * 1e3:9.1f} ms  (Python objects -> arrays)")
        print(f"  aggregate {t_agg * 1e3:9.1f} ms  (baseline: one weighted bincount)")
        print(f"  fit       {t_fit * 1e3:9.1f} ms  = {t_fit / t_agg:5.1f} x baseline")
        print(
            f"  bootstrap {t_boot:9.2f} s   for {b} resamples, {t_boot / b * 1e3:.1f} ms each "
            f"= {t_boot / b / t_agg:5.1f} x baseline"
        )
        print(f"  fit vs planted: mean |error| {err.mean():.1f} Elo, max {err.max():.1f} Elo")
        if n_bots == 100:
            _, t_all = timed(compute_standings, results, bootstrap=b, seed=1, interval="bootstrap")
            print(
                f"  compute_standings end to end ({b} resamples, stats, online Elo): {t_all:.2f} s"
            )
        if n_bots == 10:
            naive, t_naive = timed(naive_python, results, DEFAULT_PRIOR)
            diff = max(abs(naive[e] - r) for e, r in fit.as_dict().items())
            ours = t_prep + t_fit
            print(f"  naive pure-Python dict aggregation + Hunter MM: {t_naive * 1e3:.0f} ms")
            print(
                f"    vs ours, prepare + fit: {ours * 1e3:.0f} ms = {t_naive / ours:.1f} x faster; "
                f"max difference {diff:.1e} Elo"
            )
            print(
                f"    a naive bootstrap ({b} x naive, not run) would take ~{b * t_naive:.0f} s "
                f"= {b * t_naive / t_boot:.0f} x ours"
            )
    print(f"\ntotal {time.perf_counter() - total:.0f} s (including generating the games)")


if __name__ == "__main__":
    main()
