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

The ladder, one bot against another (`python bench/strength.py ladder A B --players 2 4 ...`):
A and B are example bots, bench bots (bench/bots: montecarlo_baseline and planner_baseline,
frozen copies of example_bots/montecarlo and of planner 1.4), folders, bot files, or
`grpc:ADDRESS` of a bot served elsewhere. Each deal is played once per rotation (every hand goes to
every seat), A in the first `--seats` seats (default half), at each table size from 2 to 10. It
prints A's share of the wins and the mean penalty of an A seat minus a B seat, with 95% intervals
over deals (the rotations of one deal are not independent, the deals are), and the CPU time per
decision with a choice on both sides (process CPU time; not measured for a remote bot). Equal
compute: give both the same `--budget-a/--budget-b` and read the two CPU columns. `--control-a
1+0.02` gives A a time bank on its CPU clock as the referee would (`Bot.context.budget`), charges
every decision and counts decisions over their limit ("overdrawn").

`python bench/strength.py targets` plays issue 52's targets and the strength-with-time rows
(bench/ladder_targets.py) and says of each whether its interval clears the target.
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
import zlib
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sdk"))

from take5 import Settings, Variant, play_game
from take5.bot import CallContext
from take5.clock import TimeControl, TimeControlError
from take5.game import MAX_PLAYERS
from take5.harness import load_bot
from take5.rules import Take5Error

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
            return int(method(view))
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


# -- the ladder: one bot against another on duplicate deals -------------------------------------

BENCH_BOTS = ROOT / "bench" / "bots"


def bot_path(spec: str) -> Path | None:
    """The bot.py of `spec`: an example bot's name, a bench bot's name (bench/bots), a folder or a
    file; None for a gRPC address (``grpc:HOST:PORT`` or ``unix:PATH``)."""
    if spec.startswith(("grpc:", "unix:")):
        return None
    for candidate in (Path(spec), EXAMPLES / spec, BENCH_BOTS / spec):
        if candidate.is_file():
            return candidate
        if (candidate / "bot.py").is_file():
            return candidate / "bot.py"
    raise SystemExit(f"no bot {spec!r}: give an example bot, a bench bot, a folder or grpc:ADDRESS")


class Remote:
    """A bot served elsewhere, over the protocol (the referee's own client); its CPU time is its
    own machine's business, so none is counted here."""

    remote = True

    def __init__(self, address: str) -> None:
        from take5_arena.referee.match.remote import RemoteBot

        self.address = address.removeprefix("grpc:")
        self.client = RemoteBot(self.address)
        self._call(self.client.wait_ready, 10.0)
        self.context: Any = None
        self.game_id = "ladder"
        """The game id the requests carry (set by Banked for each game)."""

    def _call(self, method: Any, *args: Any) -> Any:
        """A call to the bot; what goes wrong becomes one line naming the bot (the referee's
        CallFailedError, with its fault kind, does not cross processes)."""
        try:
            return method(*args)
        except Exception as error:  # noqa: BLE001 (a bench: every failure is one line)
            raise RuntimeError(f"the bot at {self.address}: {error}") from None

    def _limit(self) -> Any:
        ctx = self.context
        if ctx is None:
            return 10.0
        return ctx.budget if ctx.budget is not None else ctx.time_limit

    def pick_card(self, view: Any) -> int:
        from take5.convert import pick_card_request

        limit = self._limit()
        wall = getattr(limit, "wall_limit", limit) + 1.0
        request = pick_card_request(view, self.game_id, limit).SerializeToString()
        future = self.client.pick_card_future(request, wall)
        return int(self._call(self.client.card_from, future, wall))

    def choose_row(self, view: Any) -> int:
        from take5.convert import choose_row_request

        limit = self._limit()
        wall = getattr(limit, "wall_limit", limit) + 1.0
        request = choose_row_request(view, self.game_id, limit).SerializeToString()
        return int(self._call(self.client.choose_row, request, wall))

    def draft_card(self, view: Any) -> int:
        return self.pick_card(view)


_remotes: dict[str, Remote] = {}


@dataclass(frozen=True)
class Side:
    """One side of a ladder match: which bot, and how it is given its time."""

    spec: str
    budget: float | None = None
    """Seconds per decision (the bot's `budget`; None: its own default)."""
    control: str | None = None
    """A time control BANK+INCREMENT (seconds, on this process's CPU clock), else None: the bot
    thinks its `budget` and the bench gives no deadline."""
    use_bank: bool = True
    options: tuple[tuple[str, Any], ...] = ()
    """More keyword arguments for the bot's constructor (``--set-a exact=plan``)."""


def make_side(side: Side, seed: int, clock: str) -> Any:
    path = bot_path(side.spec)
    if path is None:
        if side.spec not in _remotes:
            _remotes[side.spec] = Remote(side.spec)
        return _remotes[side.spec]
    key = str(path)
    if key not in _classes:
        _classes[key] = type(load_bot(path))
    cls = _classes[key]
    params = inspect.signature(cls).parameters
    kwargs: dict[str, Any] = {}
    if "seed" in params:
        kwargs["seed"] = seed
    if side.budget is not None and "budget" in params:
        kwargs["budget"] = side.budget
    if "clock" in params:
        kwargs["clock"] = clock
    if not side.use_bank and "use_bank" in params:
        kwargs["use_bank"] = False
    kwargs.update(side.options)
    return cls(**kwargs)


def options(pairs: Sequence[str]) -> tuple[tuple[str, Any], ...]:
    """``key=value`` pairs, each value read as JSON when it parses (numbers, true) else text."""
    out = []
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.isidentifier():
            raise SystemExit(f"--set takes key=value, not {pair!r}")
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        out.append((key, value))
    return tuple(out)


class Banked:
    """A bot as the engine's Player with a referee's time control on the CPU clock: before each
    decision the bank's increment is added and the bot is told its limit and bank
    (`Bot.context.budget`), after it the CPU time it used is charged. A decision that used more
    than its limit is an overdraw (counted; the referee would call it a timeout)."""

    def __init__(self, bot: Any, control: Any, game_id: str) -> None:
        from take5.clock import ClockKind

        self.bot = bot
        self.control = control
        self.bank = control.start() if control is not None else None
        self.cpu_clock = ClockKind.CPU
        self.game_id = game_id
        if getattr(bot, "remote", False):
            bot.game_id = game_id
        self.cpu_times: list[float] = []
        self.thinking: list[float] = []
        """CPU seconds of the decisions with a choice (more than one card, or a row)."""
        self.overdrawn = 0

    def _ask(self, method: Any, view: Any, choice: bool) -> int:
        from take5.clock import Budget

        bank = self.bank
        if bank is not None:
            limit = bank.limit_ms / 1000
            budget = Budget(
                limit,
                self.cpu_clock,
                bank=bank.available_ms / 1000,
                increment=self.control.increment,
                cap=self.control.cap,
                wall=max(10.0, 20 * limit),
            )
            self.bot.context = CallContext(self.game_id, limit, time.monotonic(), budget)
        cpu = time.process_time()
        try:
            return int(method(view))
        finally:
            used = time.process_time() - cpu
            self.cpu_times.append(used)
            if choice:
                self.thinking.append(used)
            if bank is not None:
                used_ms = round(used * 1000)
                if bank.over(used_ms):
                    self.overdrawn += 1
                bank.charge(used_ms)
                self.bot.context = None

    def pick_card(self, view: Any) -> int:
        return self._ask(self.bot.pick_card, view, len(view.hand) > 1)

    def choose_row(self, view: Any) -> int:
        return self._ask(self.bot.choose_row, view, True)

    def draft_card(self, view: Any) -> int:
        return self._ask(self.bot.draft_card, view, len(view.pool) > 1)


@dataclass(frozen=True)
class Deal:
    sides: tuple[Side, Side]
    players: int
    seats: int
    """Seats of the first side (the rest are the second's)."""
    seed: int
    clock: str
    variant: str = "standard"


@dataclass
class DealResult:
    wins: float
    """The first side's share of the wins, over every rotation of the deal."""
    penalty_diff: float
    """Mean penalty of a first-side seat minus a second-side seat, over the rotations."""
    thinking: tuple[list[float], list[float]]
    overdrawn: tuple[int, int]
    remote: tuple[bool, bool]


def play_deal(deal: Deal) -> DealResult:
    """The deal played once per rotation (each seat's hand goes to every seat in turn), the first
    `deal.seats` seats the first side's."""
    from take5.clock import TimeControl

    n = deal.players
    wins = diff = 0.0
    thinking: tuple[list[float], list[float]] = ([], [])
    overdrawn = [0, 0]
    remote = [False, False]
    for rotation in range(n):
        seats = []
        for seat in range(n):
            index = 0 if seat < deal.seats else 1
            side = deal.sides[index]
            bot = make_side(side, deal.seed * 64 + rotation * 8 + seat, deal.clock)
            remote[index] = bool(getattr(bot, "remote", False))
            control = TimeControl.parse(side.control) if side.control else None
            seats.append((index, Banked(bot, control, f"d{deal.seed}r{rotation}")))
        try:
            game = play_game(
                [p for _, p in seats],
                Settings(players=n, variant=Variant(deal.variant)),
                seed=deal.seed,
                rotation=rotation,
            )
        except Take5Error as error:  # an illegal answer: as text (not every error pickles)
            names = ", ".join(f"seat {s}: {deal.sides[i].spec}" for s, (i, _) in enumerate(seats))
            raise RuntimeError(f"{error} ({names})") from None
        winners = game.result().winners
        wins += sum(1.0 / len(winners) for s in winners if seats[s][0] == 0)
        pen = ([], [])  # type: tuple[list[int], list[int]]
        for seat, (index, player) in enumerate(seats):
            pen[index].append(game.scores[seat])
            thinking[index].extend(player.thinking)
            overdrawn[index] += player.overdrawn
        diff += sum(pen[0]) / len(pen[0]) - sum(pen[1]) / len(pen[1])
    return DealResult(
        wins / n, diff / n, thinking, (overdrawn[0], overdrawn[1]), (remote[0], remote[1])
    )


def interval(values: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% interval (normal, over independent deals)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, math.inf
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, 1.96 * math.sqrt(var / n)


def play_row(
    pool: Any,
    sides: tuple[Side, Side],
    n: int,
    k: int,
    deals: int,
    seed: int,
    clock: str,
    variant: str,
) -> dict[str, Any]:
    """One row of a ladder: `deals` deals at a table of `n`, A in `k` seats, every rotation; A's
    win share and the penalty difference with their 95% half-widths, the CPU ms per decision and
    the overdraws of each side."""
    started = time.monotonic()
    tasks = [
        Deal(sides, n, k, seed * 1_000_000 + n * 10_000 + i, clock, variant) for i in range(deals)
    ]
    try:
        results = list(pool.map(play_deal, tasks))
    except RuntimeError as error:  # an illegal answer, or a remote bot's fault
        raise SystemExit(f"ladder: {error}") from None
    wins, whalf = interval([r.wins for r in results])
    pdiff, phalf = interval([r.penalty_diff for r in results])
    cpu = []
    for index in (0, 1):
        times = [t for r in results for t in r.thinking[index]]
        remote = any(r.remote[index] for r in results)
        cpu.append(math.nan if remote or not times else 1000 * sum(times) / len(times))
    return {
        "deals": len(results),
        "win_share": wins,
        "win_halfwidth": whalf,
        "penalty_diff": pdiff,
        "penalty_halfwidth": phalf,
        "cpu_ms_a": cpu[0],
        "cpu_ms_b": cpu[1],
        "overdrawn": [sum(r.overdrawn[i] for r in results) for i in (0, 1)],
        "seconds": time.monotonic() - started,
    }


def ladder(argv: Sequence[str]) -> None:
    """`python bench/strength.py ladder A B ...`: A against B on duplicate deals (see --help)."""
    parser = argparse.ArgumentParser(
        prog="strength.py ladder",
        description="Bot A against bot B on duplicate deals with full rotation: every deal is "
        "played once per seat rotation, A in the first --seats seats. Reports A's share of the "
        "wins and the penalty difference per seat (A minus B), with 95%% intervals over deals, "
        "and the CPU time per decision of both sides (decisions with a choice).",
    )
    parser.add_argument("a", help="bot A: an example bot, a bench bot, a folder, or grpc:ADDRESS")
    parser.add_argument("b", help="bot B (the opponent), the same forms")
    parser.add_argument("--players", type=int, nargs="+", default=[4], help="2 to 10 (several ok)")
    parser.add_argument("--seats", type=int, help="seats of A (default: half, rounded down)")
    parser.add_argument("--deals", type=int, default=100, help="deals per table size")
    parser.add_argument("--budget-a", type=float, help="A's seconds per decision")
    parser.add_argument("--budget-b", type=float, help="B's seconds per decision")
    parser.add_argument("--control-a", help="A's time control BANK+INCREMENT (CPU s), e.g. 1+0.02")
    parser.add_argument("--control-b", help="B's time control")
    parser.add_argument("--no-bank-a", action="store_true", help="A thinks its budget, no bank")
    parser.add_argument("--no-bank-b", action="store_true", help="B thinks its budget, no bank")
    parser.add_argument("--set-a", nargs="*", default=[], metavar="K=V", help="A's options")
    parser.add_argument("--set-b", nargs="*", default=[], metavar="K=V", help="B's options")
    parser.add_argument("--clock", choices=["cpu", "wall"], default="cpu")
    parser.add_argument("--variant", choices=[v.value for v in Variant], default="standard")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="append the results here, one JSON object a line")
    args = parser.parse_args(argv)
    sides = (
        Side(args.a, args.budget_a, args.control_a, not args.no_bank_a, options(args.set_a)),
        Side(args.b, args.budget_b, args.control_b, not args.no_bank_b, options(args.set_b)),
    )
    for control in (args.control_a, args.control_b):
        if control:
            try:
                TimeControl.parse(control)
            except TimeControlError as error:
                raise SystemExit(f"ladder: {error}") from None
    for n in args.players:
        if not 2 <= n <= MAX_PLAYERS[Variant(args.variant)]:
            raise SystemExit(f"--players must be from 2 to 10 (6 professional), not {n}")
    print(
        f"ladder: {args.a} against {args.b}, {args.deals} deals per table size, every rotation; "
        f"{args.jobs} workers, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; "
        f"budgets on the {args.clock} clock",
        flush=True,
    )
    header = (
        f"  {'players':>7} {'A seats':>7} {'deals':>5} {'games':>5}  {'A win share (95%)':>18}"
        f"  {'penalty A-B (95%)':>18}  {'CPU ms/decision A / B':>22}  {'overdrawn A/B':>13}"
    )
    print(header)
    with ProcessPoolExecutor(args.jobs) as pool:
        for n in args.players:
            k = args.seats if args.seats is not None else n // 2
            if not 1 <= k < n:
                raise SystemExit(f"--seats must be from 1 to {n - 1} at {n} players")
            row = play_row(pool, sides, n, k, args.deals, args.seed, args.clock, args.variant)
            deals, cpu, over = row["deals"], (row["cpu_ms_a"], row["cpu_ms_b"]), row["overdrawn"]
            print(
                f"  {n:>7} {k:>7} {deals:>5} {deals * n:>5}  "
                f"{100 * row['win_share']:>8.1f} +- {100 * row['win_halfwidth']:<5.1f}%  "
                f"{row['penalty_diff']:>+9.2f} +- {row['penalty_halfwidth']:<5.2f}  "
                f"{cpu[0]:>10.1f} / {cpu[1]:<9.1f}  {over[0]:>6} / {over[1]:<4}"
                f"  (fair share {100 * k / n:.0f}%, {row['seconds']:.0f} s)",
                flush=True,
            )
            if args.json:
                sided = {"a": sides[0].__dict__, "b": sides[1].__dict__, "players": n, "seats": k}
                with open(args.json, "a") as out:
                    out.write(json.dumps(sided | row | {"load": os.getloadavg()[0]}) + "\n")


def experiment_seed(seed: int, name: str, opponent: str) -> int:
    """The first deal's seed of `name` against 3 `opponent` bots: --seed and the two names alone,
    never their places in --bots or --against, so that an experiment plays the same deals
    whichever others run with it. Experiments are 100,000 seeds apart (the games of one are
    fewer), each in a slot of its names' CRC-32."""
    slot = zlib.crc32(f"{name} vs {opponent}".encode()) % 9_000
    return seed * 1_000_000_000 + slot * 100_000


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run: 48 games an experiment")
    parser.add_argument("--bots", nargs="*", help="example bots to measure (default: all)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--halfwidth", type=float, default=0.03, help="target 95%% half-width")
    parser.add_argument("--min-games", type=int, default=200)
    parser.add_argument("--max-games", type=int, default=1200)
    parser.add_argument("--rr-max-games", type=int, default=400, help="the round robin's")
    parser.add_argument("--budget", type=float, help="seconds per decision of search bots")
    parser.add_argument("--time-limit", type=float, help="referee deadline per call (s)")
    # How search bots count their budget (cpu: results independent of the machine's load).
    parser.add_argument("--clock", choices=["cpu", "wall"], default="cpu")
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
            for opponent in args.against:
                rows = []
                for name in names:
                    t0 = time.monotonic()
                    tallies = run_experiment(
                        pool,
                        vs_tables(name, opponent),
                        [name],
                        args,
                        experiment_seed(args.seed, name, opponent),
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
    if sys.argv[1:2] == ["ladder"]:
        ladder(sys.argv[2:])
    elif sys.argv[1:2] == ["targets"]:
        from ladder_targets import targets

        targets(sys.argv[2:])
    else:
        main()
