"""Games needed to settle a ranking: adaptive scheduling against a fixed round robin, in one run.

Planted fields of 8 and 32 bots (bench/synthetic.py: planted strengths, hand luck, duplicate deals
on, tables of 4), gaps between neighbours drawn from 50-150 Elo (seeded). For each field and
repetition three runs play synthetic games until the stop rule of ``referee tournament run
--until-settled`` holds (every neighbour pair's published LOS at least 95%) or the budget is spent:

* adaptive    - the scheduler of take5_arena/referee/tournament/adaptive.py with the leaderboard's ranking function: the
                exact code path of the command, with the synthetic model in place of the bots;
* fixed+stop  - a fixed balanced round robin (every bot at the same number of tables), the same
                batches and the same stop rule: the gain here is the scheduler's choice of tables;
* fixed       - the fixed round robin without looking: the games after which the fitted order is the
                true one in at least as many repetitions as the adaptive runs got right (searched on
                a grid, 40 repetitions per point), i.e. the games a fixed schedule needs for the same
                correctness - if one knew in advance how many to play, which a tournament does not.

It prints games used (mean and median over repetitions), the share of repetitions whose final order
is the true one, and the ratio fixed / adaptive. Target: adaptive needs at most half the games.

Run: python bench/ranking.py [--reps 20] [--quick]   (several minutes on 2 cores)
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

from take5_arena.leaderboard.ratings import GameResult, ranking_with_los
from take5_arena.referee.tournament.adaptive import PlayedGame, Ranking, SettleSettings, decide

SEATS = 4
CONFIDENCE = 0.95
#: Repetitions per size when measuring how often a fixed schedule finds the true order (cheap: one
#: fit per repetition, so more of them than of the runs that look after every batch).
FIXED_REPS = 40


def planted(n: int, seed: int) -> np.ndarray:
    gaps = np.random.default_rng(seed).uniform(50, 150, n - 1)
    elo = -np.concatenate([[0.0], np.cumsum(gaps)])
    return (elo - elo.mean()) / synthetic.ELO_PER_LOGIT  # logits, best first (bot 0)


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


def run_adaptive(strength: np.ndarray, seed: int, budget: int) -> tuple[int, bool]:
    field = Field(strength, np.random.default_rng([seed, 1]))
    settings = SettleSettings(SEATS, duplicate=True, seed=seed, confidence=CONFIDENCE, budget=budget)
    played: list[PlayedGame] = []
    tables = games = 0
    while True:
        d = decide(field.names, played, settings, field.rank, tables_so_far=tables, games_so_far=games)
        if d.stop:
            return games, field.correct()
        played += field.play([t.seats for t in d.tables])
        tables += len(d.tables)
        games += len(d.games)


def run_fixed(strength: np.ndarray, seed: int, budget: int, batch: int) -> tuple[int, bool]:
    field = Field(strength, np.random.default_rng([seed, 2]))
    n = len(strength)
    rows = synthetic.random_tables(n, math.ceil(budget / SEATS), SEATS, np.random.default_rng([seed, 3]))
    first = math.ceil(n * 2 / SEATS)  # the same first batch size as the adaptive run
    done = 0
    while done < len(rows):
        step = first if done == 0 else batch
        field.play([tuple(field.names[i] for i in r) for r in rows[done:done + step]])
        done += step
        _, los = ranking_with_los(field.results)
        if all(v is not None and v >= CONFIDENCE for v in los):
            break
    return len(field.results), field.correct()


def fixed_correct_rate(strength: np.ndarray, games: int, reps: int, seed: int) -> float:
    n = len(strength)
    ok = 0
    for rep in range(reps):
        field = Field(strength, np.random.default_rng([seed, rep, 4]))
        rows = synthetic.random_tables(n, max(1, games // SEATS), SEATS, np.random.default_rng([seed, rep, 5]))
        field.play([tuple(field.names[i] for i in r) for r in rows])
        ok += field.correct()
    return ok / reps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="8 bots only, 8 repetitions")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    reps = 8 if args.quick else args.reps
    fields = (8,) if args.quick else (8, 32)
    print(
        f"tables of {SEATS}, duplicate deals, hand luck {synthetic.DEFAULT_LUCK} logits, stop at "
        f"LOS >= {CONFIDENCE:.0%} for every neighbour pair; {reps} repetitions per field\n"
    )
    for n in fields:
        started = time.perf_counter()
        strength = planted(n, args.seed + n)
        gaps = -np.diff(strength) * synthetic.ELO_PER_LOGIT
        budget = 400 * n
        batch = max(2, math.ceil(n / SEATS))
        ad = [run_adaptive(strength, args.seed * 1000 + r, budget) for r in range(reps)]
        fx = [run_fixed(strength, args.seed * 1000 + r, budget, batch) for r in range(reps)]
        ad_games = np.array([g for g, _ in ad])
        fx_games = np.array([g for g, _ in fx])
        ad_ok = np.mean([c for _, c in ad])
        fx_ok = np.mean([c for _, c in fx])
        print(f"{n} bots, gaps {gaps.min():.0f}-{gaps.max():.0f} Elo (mean {gaps.mean():.0f}), budget {budget} games")
        print(f"  adaptive     games mean {ad_games.mean():7.0f}  median {np.median(ad_games):7.0f}  "
              f"true order {ad_ok:5.0%}  hit budget {np.mean(ad_games >= budget - SEATS):4.0%}")
        print(f"  fixed+stop   games mean {fx_games.mean():7.0f}  median {np.median(fx_games):7.0f}  "
              f"true order {fx_ok:5.0%}  hit budget {np.mean(fx_games >= budget - SEATS):4.0%}  "
              f"= {fx_games.mean() / ad_games.mean():.2f} x adaptive")
        grid = sorted({int(ad_games.mean() * f) // SEATS * SEATS for f in (0.5, 1, 1.5, 2, 3, 4, 6)})
        needed = None
        for games in grid:
            rate = fixed_correct_rate(strength, games, max(reps, FIXED_REPS), args.seed)
            print(f"  fixed        {games:7d} games: true order {rate:5.0%}")
            if rate >= ad_ok:
                needed = games
                break
        if needed is None:
            print(f"  fixed        needs more than {grid[-1]} games for {ad_ok:.0%} correct")
        else:
            print(f"  fixed needs {needed} games for the adaptive correctness ({ad_ok:.0%}) = "
                  f"{needed / ad_games.mean():.2f} x adaptive")
        print(f"  ({time.perf_counter() - started:.0f} s)\n", flush=True)


if __name__ == "__main__":
    main()
