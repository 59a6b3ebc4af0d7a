"""The strongest bot's targets (issue 52) and its strength with time, as ladders of
bench/strength.py: `python bench/strength.py targets [--deals N] [--only baseline|time]`.

Targets, each against bench/bots/planner_baseline (a frozen planner 1.4) on duplicate deals with
full rotation, both sides given the same budget per decision counted in CPU time, at the default
budget (90 ms) and at 10 ms:

- at least 60% of the wins head to head (2 players) and with 2 seats of 4;
- the fair share plus 10 points with half the seats (rounded down) at 3, 5, 6 and 10 players
  (fair shares 33%, 40%, 50%, 50%).

Strength with time: the bot at 90 ms against itself at 10 ms, and at 300 ms against itself at
90 ms, at 2 and 4 players (half the seats each): above 50%.

A row is "met" when its whole 95% interval is above its target, "short by X" when its mean is under
it (by X points) and "not shown" when the mean clears it but the interval does not. The CPU column
gives each side's mean CPU milliseconds per decision (with a choice) and A's over B's: the targets
ask for equal compute, within 10% ("equal CPU" yes or no).

Equal CPU by construction (`--match-cpu`, the default for the rows against the baseline): a bot that
stops its search before its budget (the baseline does, once a leader is 4 standard errors ahead:
6.3 ms a decision at a 10 ms budget head to head) spends less than it is given, so the same budget
on both sides is not the same compute. Before each such row a calibration of `--calibrate` deals
(other deals than the row's, not counted) measures both sides' CPU per decision, and A's budget is
scaled by B's CPU over A's (twice, the second time from the scaled budget); the row is then played
with A at that budget and its own CPU ratio printed. `--no-match-cpu` gives both the same budget.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from strength import Side, options, play_row

CALIBRATE_SEED = 7_000
"""Added to `--seed` for the calibration deals, so that they are never the row's."""

DEFAULT, SHORT, LONG = 0.09, 0.01, 0.3
"""The budgets of the targets and of the rows with time (seconds per decision)."""
SHARE_TARGETS: tuple[tuple[int, int, float], ...] = (
    (2, 1, 0.60),
    (4, 2, 0.60),
    (3, 1, 1 / 3 + 0.10),
    (5, 2, 2 / 5 + 0.10),
    (6, 3, 3 / 6 + 0.10),
    (10, 5, 5 / 10 + 0.10),
)
"""(players, seats of the bot, the win share its interval must clear) against the baseline."""
TIME_PLAYERS = (2, 4)
"""Table sizes of the rows with time (the bot in half the seats)."""
EQUAL_CPU = 0.10
"""How far apart the two sides' CPU per decision may be for a row to count as equal compute."""


def verdict(share: float, half: float, target: float) -> str:
    """Whether a win share's 95% interval clears `target`."""
    if share - half > target:
        return "met"
    if share < target:
        return f"short by {100 * (target - share):.1f}"
    return "not shown"


def targets(argv: Sequence[str]) -> None:
    """`python bench/strength.py targets ...` (see the module text and --help)."""
    parser = argparse.ArgumentParser(
        prog="strength.py targets",
        description="The planner's targets against its frozen baseline and its strength with "
        "time, each row a ladder on duplicate deals with full rotation.",
    )
    parser.add_argument("--bot", default="planner", help="the bot measured (default planner)")
    parser.add_argument("--baseline", default="planner_baseline")
    parser.add_argument("--deals", type=int, default=100, help="deals per row")
    parser.add_argument("--players", type=int, nargs="+", help="only these table sizes")
    parser.add_argument("--budgets", type=float, nargs="+", default=[DEFAULT, SHORT])
    parser.add_argument("--only", choices=["baseline", "time"], help="one of the two tables")
    parser.add_argument("--set", nargs="*", default=[], metavar="K=V", help="the bot's options")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="append the rows here, one JSON object a line")
    parser.add_argument(
        "--match-cpu",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="against the baseline, scale the bot's budget to the baseline's measured CPU",
    )
    parser.add_argument("--calibrate", type=int, default=6, help="deals of each calibration")
    args = parser.parse_args(argv)
    knobs = options(args.set)
    rows: list[tuple[str, int, int, float, Side, Side]] = []
    if args.only != "time":
        for budget in args.budgets:
            for n, k, target in SHARE_TARGETS:
                a = Side(args.bot, budget, options=knobs)
                rows.append((f"vs {args.baseline}", n, k, target, a, Side(args.baseline, budget)))
    if args.only != "baseline":
        for longer, shorter in ((DEFAULT, SHORT), (LONG, DEFAULT)):
            for n in TIME_PLAYERS:
                a, b = Side(args.bot, longer, options=knobs), Side(args.bot, shorter, options=knobs)
                rows.append(("with time", n, n // 2, 0.5, a, b))
    if args.players:
        rows = [row for row in rows if row[1] in args.players]
    print(
        f"targets: {args.bot}, {args.deals} deals a row, every rotation, budgets in CPU time; "
        f"{args.jobs} workers, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs",
        flush=True,
    )
    print(
        f"  {'row':<22} {'players':>7} {'seats':>5} {'games':>5}  {'win share (95%)':>16}"
        f"  {'target':>6}  {'verdict':<14} {'CPU ms A / B (ratio)':>24}  {'equal CPU':>9}"
    )
    with ProcessPoolExecutor(args.jobs) as pool:
        for label, n, k, target, a, b in rows:
            if args.match_cpu and label != "with time":
                a = match_cpu(pool, (a, b), n, k, args.calibrate, args.seed + CALIBRATE_SEED)
            row = play_row(pool, (a, b), n, k, args.deals, args.seed, "cpu", "standard")
            share, half = row["win_share"], row["win_halfwidth"]
            cpu_a, cpu_b = row["cpu_ms_a"], row["cpu_ms_b"]
            ratio = cpu_a / cpu_b if cpu_b else float("nan")
            name = f"{label} {1000 * (a.budget or 0):.1f}/{1000 * (b.budget or 0):.0f} ms"
            print(
                f"  {name:<22} {n:>7} {k:>5} {row['deals'] * n:>5}  "
                f"{100 * share:>6.1f} +- {100 * half:<5.1f}%  {100 * target:>5.1f}%  "
                f"{verdict(share, half, target):<14} {cpu_a:>7.1f} / {cpu_b:<6.1f} ({ratio:.2f})"
                f"  {'yes' if abs(ratio - 1) <= EQUAL_CPU else 'no':>9}"
                f"  ({row['seconds']:.0f} s)",
                flush=True,
            )
            if args.json:
                record: dict[str, Any] = {"row": label, "players": n, "seats": k}
                record |= {"target": target, "a": a.__dict__, "b": b.__dict__, **row}
                record["time"] = time.time()
                with open(args.json, "a") as out:
                    out.write(json.dumps(record) + "\n")


def match_cpu(pool: Any, sides: tuple[Side, Side], n: int, k: int, deals: int, seed: int) -> Side:
    """Side A with its budget scaled so that its CPU per decision matches B's: `deals` deals
    (seeded apart from the row's) played twice, each time A's budget times B's CPU over A's."""
    a, b = sides
    for attempt in range(2):
        row = play_row(pool, (a, b), n, k, deals, seed + attempt, "cpu", "standard")
        cpu_a, cpu_b = row["cpu_ms_a"], row["cpu_ms_b"]
        if not cpu_a or not cpu_b or a.budget is None:
            return a
        budget = a.budget * cpu_b / cpu_a
        print(
            f"  (calibration at {n} players: {cpu_a:.1f} / {cpu_b:.1f} ms with A at "
            f"{1000 * a.budget:.1f} ms, now {1000 * budget:.1f} ms)",
            flush=True,
        )
        a = Side(a.spec, budget, a.control, a.use_bank, a.options)
    return a
