"""The LOS under each prior on the field's spread, on the same tournaments (issue 53).

LOS (leaderboard/intervals.py ``superiority``) averages over the field's spread under a prior:
half on a field of equals and the rest "uniform" in the spread (published) or "log" (uniform in its
logarithm, which favours small spreads). The intervals do not depend on it; the LOS claims, and the
rank ranges they imply, do. Each cell (bench/coverage.py's, Plackett-Luce with hand luck) plays
``--reps`` tournaments and judges every prior on each of them; per cell and prior it prints the
claims at >= 95%, the share of them that is wrong with its Monte Carlo error (the delta method over
tournaments, as bench/coverage.py), the tournaments with a wrong claim, the mean claimed LOS, and
the share of rank ranges holding the true place. The first prior is the baseline, measured in the
same run on the same tournaments; each prior's share of wrong claims less the baseline's comes
with its paired Monte Carlo error.

Cells: ``--cells`` names presets (``bad``: 100 bots within 50 Elo at duplicate tables of 10, 100
games each, the cell whose claims were 5.6% wrong; ``fine``: cells that were within 5%) or gives
cells as ``seats:deals:bots:games:spread`` (deals ``s`` or ``d``), comma-separated.

Run: python bench/los_prior.py --cells bad --reps 1000 --seed 11
     python bench/los_prior.py --cells fine --reps 100
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from unittest import mock

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sdk"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import synthetic
from coverage import NEW, Cell, Rep, Tally, fmt, ratio, tally, targets, tournament

from take5_arena.leaderboard import intervals
from take5_arena.leaderboard.fit import fit_elo, prepare

PRESETS = {
    "bad": ["10:d:100:100:50"],
    "fine": [
        "10:s:100:20:350",  # a wide field at tables of 10
        "4:s:32:20:350",  # tables of 4
        "2:s:32:20:350",  # tables of 2
        "2:s:8:100:350",
        "2:s:8:20:50",  # 8 bots in narrow fields
        "4:d:8:12:25",
        "4:s:8:100:50",
        "10:s:100:12:50",
    ],
}


def parse(spec: str) -> Cell:
    seats, deals, bots, games, spread = spec.split(":")
    return Cell("pl", int(seats), deals == "d", int(bots), int(games), spread=float(spread))


def play_once(cell: Cell, priors: list[str], rng: np.random.Generator) -> None:
    bots, played = tournament(cell, rng)
    seats, places, table_of, power, clones = played
    names = [f"b{i:03d}" for i in range(len(power))]
    results = synthetic.results(seats, places, table_of if cell.duplicate else None, names)
    data = prepare(results)
    fit = fit_elo(data)
    rep = Rep(
        idx=np.array([int(e[1:]) for e in data.entrants]),
        elo=fit.elo,
        component=fit.component,
        score=np.zeros(0),
        count=np.zeros(0),
        games=len(results) * cell.seats,
        clones=clones,
        measured=bots,
    )
    for prior in priors:
        with mock.patch.object(intervals, "SPREAD_PRIOR", prior):
            iv = intervals.rating_intervals(data, fit, method=NEW)
        los = np.array([[np.nan if v is None else v for v in row] for row in iv.los])
        rep.methods[prior] = (iv.low, iv.high, iv.enough, los, iv.information)
    cell.reps.append(rep)


def paired(t: Tally, base: Tally) -> tuple[float, float]:
    """The difference of two priors' shares of wrong claims at >= 95% on the same tournaments, and
    its Monte Carlo error: the delta method on the per-tournament difference of their influences,
    so the luck the tournaments share cancels."""
    parts = []
    for x in (t, base):
        c = np.sum([x.claims[b] for b in x.claims], axis=0)
        w = np.sum([x.wrong[b] for b in x.wrong], axis=0)
        if c.sum() == 0:
            return math.nan, math.nan
        share = w.sum() / c.sum()
        parts.append((share, (w - share * c) / c.sum()))
    k = len(parts[0][1])
    diff = parts[0][1] - parts[1][1]
    return parts[0][0] - parts[1][0], math.sqrt(k / max(k - 1, 1) * float(np.sum(diff**2)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", default="bad,fine", help="presets or seats:deals:bots:games:spread")
    ap.add_argument("--priors", default="uniform,log", help="the first is the baseline")
    ap.add_argument("--reps", type=int, default=100, help="tournaments per cell")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    specs = [s for name in args.cells.split(",") for s in PRESETS.get(name, [name])]
    priors = args.priors.split(",")
    print(
        "| cell (seats, deals, bots, games/bot, spread) | reps | coverage | prior "
        "| claims >= 95% | wrong (± MC error) | tournaments with a wrong claim | mean claimed "
        "| wrong - baseline's (± paired MC error) | rank range holds | CPU s |"
    )
    print("|---" * 11 + "|")
    for spec in specs:
        cell = parse(spec)
        rng = np.random.default_rng(cell.seed(args.seed))
        t0 = time.process_time()
        for rep in range(args.reps):
            play_once(cell, priors, rng)
            if (rep + 1) % 100 == 0 and rep + 1 < args.reps:  # a run cut short keeps its figures
                targets([cell])
                print(f"  {spec}: {rep + 1} tournaments", file=sys.stderr)
                first = tally(cell, priors[0])
                for prior in priors:
                    t = tally(cell, prior)
                    wrong, err, claims = t.wrong_share()
                    bad, k = t.tournaments_wrong()
                    print(
                        f"    {prior}: {claims} claims, {fmt(wrong, err)} wrong, {bad}/{k}, "
                        f"less the baseline's {fmt(*paired(t, first))}",
                        file=sys.stderr,
                        flush=True,
                    )
        cpu = time.process_time() - t0
        targets([cell])
        base = tally(cell, priors[0])
        for prior in priors:
            t = tally(cell, prior)
            cov, cov_err = t.coverage()
            wrong, err, claims = t.wrong_share()
            bad, k = t.tournaments_wrong()
            claimed = sum(sum(t.claimed[b]) for b in t.claimed)
            mean = f"{100 * claimed / claims:.1f}%" if claims else "-"
            print(
                f"| {spec} | {k} | {fmt(cov, cov_err)} | {prior} | {claims} | "
                f"{fmt(wrong, err)} | {bad}/{k} | {mean} | {fmt(*paired(t, base))} | "
                f"{fmt(*ratio(t.placed, t.ranked))} | "
                f"{cpu:.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
