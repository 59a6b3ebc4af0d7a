"""Coverage of the 95% rating intervals, and how often a confident LOS is wrong, by tournament size.

Synthetic tournaments (bench/synthetic.py): 8 bots with planted strengths 50 Elo apart, tables of 4,
every bot at the same number of tables; hand luck shared by the seats of a game and, with duplicate
deals, by the games of a set. For each size (games per bot) and with / without duplicate deals it
plays ``--reps`` independent tournaments and, for each interval method, counts how often the 95%
interval of a bot contains its target rating (the fit's limit under the model, see
``synthetic.target_elo``), and among the pairs whose LOS is at least 95%, how often the order is
wrong (an honest LOS: at most about 5%).

Methods (take5_arena/leaderboard/ratings.py):

* bootstrap - percentile bootstrap over resampling units (games, or duplicate sets), the resamples
  of ``DEFAULT_RESAMPLES``;
* posterior - Laplace approximation of the posterior (prior: the virtual drawn game), normal;
* sandwich  - cluster-robust covariance over the same units, normal;
* robust    - what the standings publish (``IntervalMethod.AUTO``): the posterior, its curvature
  measured from the units as they accumulate; "not enough" counts the bots marked as not having
  enough games (their interval is still shown and is included in the coverage).

Run: python bench/coverage.py [--reps 100] [--quick]   (about 10 minutes on 2 free cores)
The table it prints is the one in docs/standings-format.md.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import synthetic

from take5_arena.leaderboard.ratings import (
    DEFAULT_RESAMPLES,
    IntervalMethod,
    fit_elo,
    los_from_cov,
    prepare,
    rating_intervals,
)

BOTS = 8
SEATS = 4
GAP = 50.0  # Elo between neighbours
SIZES = (2, 5, 20, 100, 500)
METHODS = (
    IntervalMethod.BOOTSTRAP,
    IntervalMethod.POSTERIOR,
    IntervalMethod.SANDWICH,
    IntervalMethod.ROBUST,
)


def tables_for(size: int, duplicate: bool) -> int:
    """Tables giving about ``size`` games per bot (duplicate: at least one whole set per bot)."""
    per_table = SEATS if duplicate else 1
    return max(BOTS // SEATS, math.ceil(BOTS * size / (SEATS * per_table)))


def run(size: int, duplicate: bool, reps: int, seed: int) -> dict:
    strength = (np.arange(BOTS) - (BOTS - 1) / 2) * GAP / synthetic.ELO_PER_LOGIT
    target = synthetic.target_elo(strength)
    names = [f"b{i:03d}" for i in range(BOTS)]
    rng = np.random.default_rng([seed, size, int(duplicate)])
    hits = {m: 0 for m in METHODS}
    claims = {m: 0 for m in METHODS}
    wrong = {m: 0 for m in METHODS}
    pairs = {m: 0 for m in METHODS}
    not_enough = total = games = 0
    for rep in range(reps):
        tables = synthetic.random_tables(BOTS, tables_for(size, duplicate), SEATS, rng)
        seats, places, table_of = synthetic.play(strength, tables, rng, duplicate=duplicate)
        res = synthetic.results(seats, places, table_of if duplicate else None, names)
        data = prepare(res)
        fit = fit_elo(data)
        idx = np.array([names.index(e) for e in data.entrants])
        truth = target[idx]
        games += len(res)
        for m in METHODS:
            iv = rating_intervals(data, fit, method=m, seed=rep)
            hits[m] += int(np.sum((iv.low <= truth) & (truth <= iv.high)))
            # the covariance's own LOS; the standings publish none for a bot marked "not enough"
            raw = los_from_cov(fit, iv.cov)
            los = np.array([[np.nan if v is None else v for v in row] for row in raw])
            sure = los >= 0.95
            claims[m] += int(sure.sum())
            wrong[m] += int(np.sum(sure & (truth[:, None] < truth[None, :])))
            pairs[m] += len(idx) * (len(idx) - 1) // 2
            if m is IntervalMethod.ROBUST:
                not_enough += int(np.sum(~iv.enough))
        total += len(idx)
    return {
        "games_per_bot": games * SEATS / (reps * BOTS),
        "coverage": {m: hits[m] / total for m in METHODS},
        "los_wrong": {m: wrong[m] / pairs[m] for m in METHODS},
        "wrong_of_claims": {m: (wrong[m] / claims[m] if claims[m] else math.nan) for m in METHODS},
        "not_enough": not_enough / total,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="40 repetitions")
    args = ap.parse_args()
    reps = 40 if args.quick else args.reps
    started = time.perf_counter()
    print(
        f"{BOTS} bots {GAP:g} Elo apart, tables of {SEATS}, hand luck {synthetic.DEFAULT_LUCK} "
        f"logits; {reps} tournaments per cell; bootstrap {DEFAULT_RESAMPLES} resamples\n"
    )
    head = " | ".join(m.value for m in METHODS)
    print(f"| games/bot | deals | coverage: {head} | pairs ordered wrong at LOS>=95%: {head} | not enough |")
    print("|---" * (3 + 2 * len(METHODS)) + "|")
    for duplicate in (False, True):
        for size in SIZES:
            r = run(size, duplicate, reps, args.seed)
            cov = " | ".join(f"{100 * r['coverage'][m]:.1f}%" for m in METHODS)
            wr = " | ".join(
                "-" if math.isnan(r["los_wrong"][m]) else f"{100 * r['los_wrong'][m]:.1f}%"
                for m in METHODS
            )
            print(
                f"| {r['games_per_bot']:.0f} | {'duplicate' if duplicate else 'single'} | {cov} | "
                f"{wr} | {100 * r['not_enough']:.0f}% |",
                flush=True,
            )
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
