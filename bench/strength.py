"""Strength of the example bots: win rate, mean penalty and time per decision (not a timed test).

Two experiments, 4-player standard games (threshold 66; `--variant professional` for the other),
played in-process with the engine (`take5.play_game`), each bot called directly with the engine's
views:

1. each example bot against 3 random bots (example_bots/random), the bot's seat rotating; with
   `--against heuristic montecarlo ...`, also against 3 copies of each of those;
2. a round robin among all example bots: every 4 of them at one table, seats permuted game by game
   (with exactly 4 example bots, every game seats all of them).

A win is a first place; a shared first place counts 1/k among k players (a two-way tie: a half). The
95% interval is mean +- 1.96 standard errors of these per-game win scores. Games are played in
batches until every bot's interval is within +-`--halfwidth` (default 3 points) or `--max-games` is
reached, with at least `--min-games`; the stopping point is printed. (Stopping on the interval's
width biases the estimate negligibly once a few hundred games are in.)

Time per decision is measured for each pick_card / choose_row / draft_card call, on the clock (mean,
99th percentile, maximum) and in CPU time of the calling thread (mean, maximum). For a bot that
says how many rollouts its last decision played (`last_rollouts`: the search bots), the mean per
card decision is printed too. A search bot thinks
for a budget (`--budget`, default its own: at most 100 ms). By default (`--clock cpu`) it counts
that budget in CPU time, so its strength here does not depend on what else the machine runs: that is
the strength it has in the arena, where a bot owns its CPU and CPU time is wall time. With `--clock
wall` it counts the clock as it does by default in the arena: on a busy machine it then does fewer
rollouts and plays weaker (the load average is printed). With `--time-limit S` every call also
carries a referee deadline of S seconds (`Bot.time_left()`), always kept on the clock.

Reference: the best published open-source bot wins 82% of 4-player games against 3 random bots with
a mean final score of 27.5; the target for our best bot is at least 90% at <= 100 ms per decision.

Run: python bench/strength.py            (the full run: about 10-25 minutes on 2 free cores)
     python bench/strength.py --quick    (a minute or two: wide intervals)
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sdk"))

from take5 import Settings, Variant, play_game
from take5.bot import CallContext
from take5.harness import load_bot

EXAMPLES = ROOT / "example_bots"
PLAYERS = 4
OPPONENT = "random"


# -- playing one game (in a worker process) --------------------------------------------------


class Timed:
    """A bot as the engine's Player, timing every call and giving it a deadline like the referee."""

    def __init__(self, bot: Any, time_limit: float | None, game_id: str) -> None:
        self.bot = bot
        self.time_limit = time_limit
        self.game_id = game_id
        self.times: list[float] = []
        self.cpu_times: list[float] = []
        self.rollouts: list[int] = []

    def _ask(self, method: Any, view: Any) -> int:
        if self.time_limit is not None:
            self.bot.context = CallContext(self.game_id, self.time_limit, time.monotonic())
        start = time.perf_counter()
        cpu = time.thread_time()
        try:
            return method(view)
        finally:
            self.times.append(time.perf_counter() - start)
            self.cpu_times.append(time.thread_time() - cpu)
            if self.time_limit is not None:
                self.bot.context = None

    def pick_card(self, view: Any) -> int:
        card = self._ask(self.bot.pick_card, view)
        if hasattr(self.bot, "last_rollouts") and len(view.hand) > 1:
            self.rollouts.append(int(self.bot.last_rollouts))
        return card

    def choose_row(self, view: Any) -> int:
        return self._ask(self.bot.choose_row, view)

    def draft_card(self, view: Any) -> int:
        return self._ask(self.bot.draft_card, view)


_classes: dict[str, Any] = {}


def make_bot(name: str, seed: int, budget: float | None, clock: str | None) -> Any:
    """A fresh instance of example bot `name`, seeded where its class takes a seed."""
    if name not in _classes:
        _classes[name] = type(load_bot(EXAMPLES / name / "bot.py"))
    cls = _classes[name]
    params = inspect.signature(cls).parameters
    kwargs: dict[str, Any] = {}
    if "seed" in params:
        kwargs["seed"] = seed
    if budget is not None and "budget" in params:
        kwargs["budget"] = budget
    if clock is not None and "clock" in params:
        kwargs["clock"] = clock
    return cls(**kwargs)


@dataclass(frozen=True)
class Task:
    seats: tuple[str, ...]
    seed: int
    budget: float | None
    time_limit: float | None
    clock: str | None
    variant: str = "standard"
    focus: int | None = None
    """Only this seat is tallied (None: every seat)."""


@dataclass
class SeatResult:
    name: str
    win: float
    score: int
    times: list[float]
    cpu_times: list[float]
    rollouts: list[int] = field(default_factory=list)


def play_one(task: Task) -> list[SeatResult]:
    players = [
        Timed(
            make_bot(name, task.seed * 16 + seat, task.budget, task.clock),
            task.time_limit,
            f"g{task.seed}",
        )
        for seat, name in enumerate(task.seats)
    ]
    game = play_game(
        players, Settings(players=len(players), variant=Variant(task.variant)), seed=task.seed
    )
    result = game.result()
    winners = result.winners
    return [
        SeatResult(
            name,
            1.0 / len(winners) if seat in winners else 0.0,
            game.scores[seat],
            players[seat].times,
            players[seat].cpu_times,
            players[seat].rollouts,
        )
        for seat, name in enumerate(task.seats)
        if task.focus is None or seat == task.focus
    ]


# -- statistics --------------------------------------------------------------------------------


@dataclass
class Tally:
    wins: list[float] = field(default_factory=list)
    scores: list[int] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    cpu_times: list[float] = field(default_factory=list)
    rollouts: list[int] = field(default_factory=list)

    @property
    def games(self) -> int:
        return len(self.wins)

    def rate(self) -> tuple[float, float]:
        """Mean win score and the half-width of its 95% interval."""
        n = len(self.wins)
        if n == 0:
            return 0.0, math.inf
        mean = sum(self.wins) / n
        if n < 2:
            return mean, math.inf
        var = sum((w - mean) ** 2 for w in self.wins) / (n - 1)
        # A rate of 0 or 1 so far still has some uncertainty: never report less than the rule of 3.
        return mean, max(1.96 * math.sqrt(var / n), 3.0 / n)

    def row(self, name: str) -> dict[str, Any]:
        rate, half = self.rate()
        times = sorted(self.times)
        n = len(self.scores)
        mean_score = sum(self.scores) / n if n else math.nan
        sd = (
            math.sqrt(sum((s - mean_score) ** 2 for s in self.scores) / (n - 1))
            if n > 1
            else math.nan
        )
        return {
            "bot": name,
            "games": n,
            "win_rate": rate,
            "win_halfwidth": half,
            "mean_penalty": mean_score,
            "penalty_se": sd / math.sqrt(n) if n > 1 else math.nan,
            "decisions": len(times),
            "mean_ms": 1000 * sum(times) / len(times) if times else math.nan,
            "p99_ms": 1000 * times[min(len(times) - 1, int(0.99 * len(times)))]
            if times
            else math.nan,
            "max_ms": 1000 * times[-1] if times else math.nan,
            "mean_cpu_ms": 1000 * sum(self.cpu_times) / len(self.cpu_times) if times else math.nan,
            "max_cpu_ms": 1000 * max(self.cpu_times) if times else math.nan,
            "mean_rollouts": sum(self.rollouts) / len(self.rollouts) if self.rollouts else None,
        }


def print_table(title: str, rows: list[dict[str, Any]]) -> None:
    print(f"\n{title}")
    print(
        f"  {'bot':<12} {'games':>6} {'win rate (95%)':>16} {'mean penalty':>14}"
        f"   {'ms/decision: mean':>17} {'p99':>6} {'max':>6}   {'cpu mean':>8} {'max':>6}"
        f"   {'rollouts/decision':>17}"
    )
    for r in rows:
        print(
            f"  {r['bot']:<12} {r['games']:>6} {100 * r['win_rate']:>7.1f} "
            f"+- {100 * r['win_halfwidth']:<4.1f}"
            f" {r['mean_penalty']:>8.1f} +- {r['penalty_se']:<3.1f}   {r['mean_ms']:>17.1f} "
            f"{r['p99_ms']:>6.1f} {r['max_ms']:>6.1f}   "
            f"{r['mean_cpu_ms']:>8.1f} {r['max_cpu_ms']:>6.1f}"
            + (f"   {r['mean_rollouts']:>17.0f}" if r.get("mean_rollouts") is not None else "")
        )


# -- experiments -------------------------------------------------------------------------------


def run_experiment(
    pool: ProcessPoolExecutor,
    tables: Sequence[tuple[str, ...]],
    counted: Sequence[str],
    args: argparse.Namespace,
    seed_base: int,
    focus: bool = False,
) -> dict[str, Tally]:
    """Play `tables` in turn (game i uses tables[i % len]) until every counted bot's interval is
    narrow enough; only the seats of `counted` bots are tallied (with `focus`, only seat i % 4
    of game i: the bot under test when its opponents may be copies of it)."""
    tallies = {name: Tally() for name in counted}
    batch = max(args.jobs * 4, 8)
    played = 0
    while True:
        tasks = [
            Task(
                tables[(played + i) % len(tables)],
                seed_base + played + i,
                args.budget,
                args.time_limit,
                args.clock,
                args.variant,
                (played + i) % PLAYERS if focus else None,
            )
            for i in range(batch)
        ]
        for seats in pool.map(play_one, tasks):
            for seat in seats:
                if seat.name in tallies:
                    tally = tallies[seat.name]
                    tally.wins.append(seat.win)
                    tally.scores.append(seat.score)
                    tally.times.extend(seat.times)
                    tally.cpu_times.extend(seat.cpu_times)
                    tally.rollouts.extend(seat.rollouts)
        played += batch
        widest = max(t.rate()[1] for t in tallies.values())
        if played >= args.max_games or (played >= args.min_games and widest <= args.halfwidth):
            return tallies


def vs_tables(name: str, opponent: str = OPPONENT) -> list[tuple[str, ...]]:
    """The bot at each seat in turn, 3 `opponent` bots elsewhere."""
    return [
        tuple(name if s == seat else opponent for s in range(PLAYERS)) for seat in range(PLAYERS)
    ]


def round_robin_tables(names: Sequence[str]) -> list[tuple[str, ...]]:
    """Every 4 of the bots (all of them with 4), each table in every seat order."""
    if len(names) < PLAYERS:
        raise SystemExit(f"a round robin needs {PLAYERS} example bots, found {list(names)}")
    groups = list(itertools.combinations(names, PLAYERS))
    orders = list(itertools.permutations(range(PLAYERS)))
    return [tuple(group[i] for i in order) for order in orders for group in groups]


def example_bots() -> list[str]:
    names = sorted(p.name for p in EXAMPLES.iterdir() if (p / "bot.py").is_file())
    # cheap bots first, so that a quick look at the table comes early
    return sorted(names, key=lambda n: (n == "montecarlo", n))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run: 48 games an experiment")
    parser.add_argument("--bots", nargs="*", help="example bots to measure (default: all)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--halfwidth", type=float, default=0.03, help="target 95%% half-width")
    parser.add_argument("--min-games", type=int, default=200)
    parser.add_argument("--max-games", type=int, default=1200)
    parser.add_argument(
        "--rr-max-games", type=int, default=400, help="--max-games of the round robin"
    )
    parser.add_argument(
        "--budget", type=float, default=None, help="seconds per decision of search bots"
    )
    parser.add_argument(
        "--time-limit", type=float, default=None, help="referee deadline per call (s)"
    )
    parser.add_argument(
        "--clock",
        choices=["cpu", "wall"],
        default="cpu",
        help="how search bots count their budget "
        "(default cpu: results independent of the machine's load)",
    )
    parser.add_argument("--variant", choices=[v.value for v in Variant], default="standard")
    parser.add_argument(
        "--against",
        nargs="+",
        default=[OPPONENT],
        metavar="BOT",
        help="opponents of the first experiment, 3 copies at a table (default: random)",
    )
    parser.add_argument("--skip", choices=["random", "roundrobin"], action="append", default=[])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args(argv)
    if args.quick:
        args.min_games = args.max_games = 48
        args.rr_max_games = 48
    names = args.bots or example_bots()
    print(
        f"strength: {PLAYERS}-player {args.variant} games, {args.jobs} worker processes, "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; "
        f"stop at +-{100 * args.halfwidth:.0f} points (games {args.min_games}..{args.max_games}); "
        f"search budgets counted in {args.clock} time"
    )
    out: dict[str, Any] = {"settings": vars(args)}
    started = time.monotonic()
    with ProcessPoolExecutor(args.jobs) as pool:
        if "random" not in args.skip:
            for against, opponent in enumerate(args.against):
                rows = []
                for index, name in enumerate(names):
                    t0 = time.monotonic()
                    tallies = run_experiment(
                        pool,
                        vs_tables(name, opponent),
                        [name],
                        args,
                        args.seed * 1_000_000 + index * 100_000 + against * 10_000_000,
                        True,
                    )
                    rows.append(tallies[name].row(name))
                    print(
                        f"  {name} vs {opponent}: {rows[-1]['games']} games in"
                        f" {time.monotonic() - t0:.0f} s",
                        flush=True,
                    )
                print_table(f"each bot against 3 {opponent} bots", rows)
                out["vs_random" if opponent == OPPONENT else f"vs_{opponent}"] = rows
        if "roundrobin" not in args.skip:
            t0 = time.monotonic()
            all_names = example_bots() if args.bots is None else names
            rr_args = argparse.Namespace(**vars(args))
            if args.rr_max_games is not None:
                rr_args.max_games = args.rr_max_games
            tallies = run_experiment(
                pool,
                round_robin_tables(all_names),
                all_names,
                rr_args,
                args.seed * 1_000_000 + 900_000,
            )
            rows = [tallies[n].row(n) for n in all_names]
            games = max(r["games"] for r in rows)
            print(f"  round robin: {games} games in {time.monotonic() - t0:.0f} s")
            print_table(
                f"round robin among {', '.join(all_names)} (win rate at a table of {PLAYERS})", rows
            )
            out["round_robin"] = rows
    print(f"\ntotal {time.monotonic() - started:.0f} s, load average now {os.getloadavg()[0]:.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
