"""Games needed to settle a ranking: adaptive scheduling against a fixed round robin, in one run.

Planted fields of 8 and 32 bots (bench/synthetic.py: planted strengths, hand luck, duplicate deals
on, tables of 4), gaps between neighbours drawn from 50-150 Elo (seeded; ``--gaps`` for others). For
each field and repetition three runs play synthetic games until the stop rule of ``referee
tournament run --until-settled`` holds (every neighbour pair's published LOS at least 95%) or the
budget is spent:

* adaptive    - the scheduler of take5_arena/referee/tournament/plan/adaptive.py with the
                leaderboard's ranking function: the exact code path of the command, with the
                synthetic model in place of the bots;
* fixed+stop  - a fixed balanced round robin (every bot at the same number of tables), the same
                batches and the same stop rule: the gain here is the scheduler's choice of tables
                (it looks after every batch until the games grow by 5% a batch, then every 5%:
                its count can be up to 5% high, so its ratio to adaptive up to 5% too high);
* fixed       - the fixed round robin without looking: the games after which the fitted order is
                the true one in at least as many repetitions as the adaptive runs got right
                (searched on a grid, 40 repetitions per point), i.e. the games a fixed schedule
                needs for the same correctness - if one knew in advance how many to play, which a
                tournament does not.

The budget is the command's default (``take5_arena.referee.defaults.SETTLE_BUDGET_PER_ENTRANT``
games per entrant, ``--budget-per-bot`` to try another). It prints games used (mean and median over
repetitions), how often the run settled within the budget, how often the final order is the true one
and how often it settled in a wrong order, each as a rate with its 95% (Wilson) interval over the
repetitions, and the ratio fixed / adaptive. Where a fixed schedule does not settle within the
budget, the ratio is a lower bound ("at least"). Target: adaptive needs at most half the games.

Run: python bench/ranking.py [--reps 40] [--quick]   (about 20 minutes on one core)
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sdk"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import synthetic
from scipy.stats import binomtest

from take5_arena.leaderboard.board import ranking_with_los
from take5_arena.leaderboard.fit import ELO_PER_LOGIT
from take5_arena.leaderboard.results import GameResult
from take5_arena.referee.tournament.plan.adaptive import (
    PlayedGame,
    Ranking,
    SettleSettings,
    decide,
    default_budget,
)

SEATS = 4
CONFIDENCE = 0.95
#: Repetitions per size when measuring how often a fixed schedule finds the true order (cheap: one
#: fit per repetition, so more of them than of the runs that look after every batch).
FIXED_REPS = 40


def planted(n: int, seed: int, low: float = 50.0, high: float = 150.0) -> np.ndarray:
    gaps = np.random.default_rng(seed).uniform(low, high, n - 1)
    elo = -np.concatenate([[0.0], np.cumsum(gaps)])
    return (elo - float(elo.mean())) / ELO_PER_LOGIT  # logits, best first (bot 0)


class Field:
    """Synthetic play of tables of named bots, and the leaderboard's ranking of what was played."""

    def __init__(self, strength: np.ndarray, rng: np.random.Generator) -> None:
        self.strength = strength
        self.names = [f"b{i:03d}" for i in range(len(strength))]
        self.index = {e: i for i, e in enumerate(self.names)}
        self.rng = rng
        self.results: list[GameResult] = []

    def play(self, tables: list[tuple[str, ...]]) -> list[PlayedGame]:
        rows = np.array([[self.index[e] for e in t] for t in tables], dtype=np.intp)
        seats, places, table_of = synthetic.play(self.strength, rows, self.rng, duplicate=True)
        new = synthetic.results(
            seats, places, table_of + len(self.results), self.names, start=len(self.results) * 10
        )
        self.results += new
        return [PlayedGame(g.game_id, g.entrants, g.places, g.duplicate_set) for g in new]

    def rank(self, played: object = None) -> Ranking:
        order, los = ranking_with_los(self.results)
        return Ranking(order, los)

    def correct(self) -> bool:
        return list(self.rank().order) == self.names


def rate(hits: int, n: int) -> str:
    """``hits`` of ``n`` as a percentage with its 95% Wilson interval."""
    ci = binomtest(hits, n).proportion_ci(0.95, method="wilson")
    return f"{100 * hits / n:.0f}% ({hits}/{n}; 95% CI {100 * ci.low:.0f}-{100 * ci.high:.0f}%)"


def run_adaptive(strength: np.ndarray, seed: int, budget: int) -> tuple[int, bool, bool]:
    """Games played, whether the final order is the true one, whether it settled."""
    field = Field(strength, np.random.default_rng([seed, 1]))
    settings = SettleSettings(
        SEATS, duplicate=True, seed=seed, confidence=CONFIDENCE, budget=budget
    )
    played: list[PlayedGame] = []
    tables = games = 0
    while True:
        d = decide(
            field.names, played, settings, field.rank, tables_so_far=tables, games_so_far=games
        )
        if d.stop:
            return games, field.correct(), d.reason == "settled"
        played += field.play([t.seats for t in d.tables])
        tables += len(d.tables)
        games += len(d.games)


def run_fixed(strength: np.ndarray, seed: int, budget: int, batch: int) -> tuple[int, bool, bool]:
    field = Field(strength, np.random.default_rng([seed, 2]))
    n = len(strength)
    rows = synthetic.random_tables(
        n, math.ceil(budget / SEATS), SEATS, np.random.default_rng([seed, 3])
    )
    first = math.ceil(n * 2 / SEATS)  # the same first batch size as the adaptive run
    done = 0
    check = 0  # look after every batch, or once 5% more games are in, whichever is later
    while done < len(rows):
        step = first if done == 0 else batch
        field.play([tuple(field.names[i] for i in r) for r in rows[done : done + step]])
        done += step
        if len(field.results) < check and done < len(rows):
            continue
        check = int(len(field.results) * 1.05)
        _, los = ranking_with_los(field.results)
        if all(v is not None and v >= CONFIDENCE for v in los):
            return len(field.results), field.correct(), True
    return len(field.results), field.correct(), False


def fixed_correct_rate(strength: np.ndarray, games: int, reps: int, seed: int) -> float:
    n = len(strength)
    ok = 0
    for rep in range(reps):
        field = Field(strength, np.random.default_rng([seed, rep, 4]))
        rows = synthetic.random_tables(
            n, max(1, games // SEATS), SEATS, np.random.default_rng([seed, rep, 5])
        )
        field.play([tuple(field.names[i] for i in r) for r in rows])
        ok += field.correct()
    return ok / reps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--quick", action="store_true", help="8 bots only, 8 repetitions")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--budget-per-bot",
        type=int,
        default=0,
        help="games per bot (default: the command's, SETTLE_BUDGET_PER_ENTRANT)",
    )
    ap.add_argument("--gaps", default="50,150", help="Elo between neighbours: LOW,HIGH (uniform)")
    ap.add_argument("--fields", default="", help="field sizes, comma-separated (default 8,32)")
    args = ap.parse_args()
    low, high = (float(x) for x in args.gaps.split(","))
    reps = 8 if args.quick else args.reps
    fields = (
        tuple(int(x) for x in args.fields.split(","))
        if args.fields
        else ((8,) if args.quick else (8, 32))
    )
    print(
        f"tables of {SEATS}, duplicate deals, hand luck {synthetic.DEFAULT_LUCK} logits, stop at "
        f"LOS >= {CONFIDENCE:.0%} for every neighbour pair; {reps} repetitions per field\n"
    )
    for n in fields:
        started = time.perf_counter()
        strength = planted(n, args.seed + n, low, high)
        gaps = -np.diff(strength) * ELO_PER_LOGIT
        budget = args.budget_per_bot * n if args.budget_per_bot else default_budget(n)
        batch = max(2, math.ceil(n / SEATS))
        ad = [run_adaptive(strength, args.seed * 1000 + r, budget) for r in range(reps)]
        fx = [run_fixed(strength, args.seed * 1000 + r, budget, batch) for r in range(reps)]
        ad_games = np.array([g for g, _, _ in ad])
        fx_games = np.array([g for g, _, _ in fx])
        ad_ok = np.mean([c for _, c, _ in ad])
        ad_settled = np.array([s for _, _, s in ad])
        fx_settled = np.array([s for _, _, s in fx])
        ad_wrong = int(sum(1 for _, c, s in ad if s and not c))
        print(
            f"{n} bots, gaps {gaps.min():.0f}-{gaps.max():.0f} Elo (mean {gaps.mean():.0f}), "
            f"budget {budget} games ({budget // n} per bot)"
        )
        print(
            f"  adaptive     games mean {ad_games.mean():7.0f}  median {np.median(ad_games):7.0f}  "
            f"settled {rate(int(ad_settled.sum()), reps)}"
        )
        print(
            f"               true order {rate(int(sum(c for _, c, _ in ad)), reps)}; "
            f"settled in a wrong order {rate(ad_wrong, reps)}"
        )
        bound = "" if fx_settled.all() else "at least "
        print(
            f"  fixed+stop   games mean {fx_games.mean():7.0f}  median {np.median(fx_games):7.0f}  "
            f"settled {rate(int(fx_settled.sum()), reps)}; true order "
            f"{rate(int(sum(c for _, c, _ in fx)), reps)}"
        )
        print(
            f"               = {bound}{fx_games.mean() / ad_games.mean():.2f} x adaptive"
            + (" (runs that did not settle count the budget)" if bound else "")
        )
        grid = sorted(
            {int(ad_games.mean() * f) // SEATS * SEATS for f in (0.5, 1, 1.5, 2, 3, 4, 6)}
        )
        needed = None
        for games in grid:
            share = fixed_correct_rate(strength, games, max(reps, FIXED_REPS), args.seed)
            print(f"  fixed        {games:7d} games: true order {share:5.0%}")
            if share >= ad_ok:
                needed = games
                break
        if needed is None:
            print(f"  fixed        needs more than {grid[-1]} games for {ad_ok:.0%} correct")
        else:
            print(
                f"  fixed needs {needed} games for the adaptive correctness ({ad_ok:.0%}) = "
                f"{needed / ad_games.mean():.2f} x adaptive"
            )
        print(f"  ({time.perf_counter() - started:.0f} s)\n", flush=True)


if __name__ == "__main__":
    main()
