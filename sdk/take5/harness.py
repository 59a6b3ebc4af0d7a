"""Try a bot locally, in-process, in seconds: no referee, no sockets, no Docker::

    from take5 import play_against
    print(play_against(MyBot(), games=20).summary())

or from a shell: ``take5-harness path/to/bot.py --games 20``.

Each view a bot gets here has made the round trip through the protocol's messages (as it would from
the referee), and the first thing the referee would count as a fault stops the run with a
`HarnessError` saying where, because a bot author wants to see the bug, not a default move: an
illegal answer, an exception (the bot's own frames shown), or a decision over its time. Time is
the referee's (take5.clock, docs/faults.md): the same time controls, caps and clocks (CPU time of
this process while the bot thinks, or the wall clock), a decision stopped at its limit where the
platform allows (a timer signal in the main thread on Unix; elsewhere it is judged when it ends).
What the bots print, to stdout or stderr, is kept per game and seat (`HarnessResult.logs`), not
shown as it comes. Opponents are the bots bundled in `take5.bots` (random, lowest, heuristic,
search) or any bot files, so the SDK alone is enough.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._harness_seat import LOG_LIMIT as _LOG_LIMIT
from ._harness_seat import _Deadline, _Expired, _Log, _Output, _Seat
from .bot import Bot, bot_name, unique_names
from .clock import (
    DEFAULT_CLOCK,
    DEFAULT_TIMEOUT,
    START_TIMEOUT,
    START_WALL,
    WALL_FACTOR,
    ClockKind,
    TimeControl,
    TimeControlError,
)
from .convert import GameOver
from .game import Game, Phase, Player, Settings
from .loading import (
    BotLoadError,
    BotRaised,
    HarnessError,
    OutOfTime,
    bot_file,
    bot_traceback,
    calls_run,
    load_bot,
    resolve,
)
from .rules import DEFAULT_THRESHOLD, EndRule, Take5Error, Variant
from .text import inert

DEFAULT_OPPONENTS = ("random", "lowest", "heuristic")
"""The bundled bots a bot meets when no opponents are named (names of `take5.bots.BUILTIN`)."""
_FIXED = TimeControl.per_decision(DEFAULT_TIMEOUT)
LOG_LIMIT = _LOG_LIMIT
"""Characters of one seat's output kept per game (more is cut, with a note)."""


@dataclass(frozen=True)
class SeatStats:
    """One seat's totals over a harness run."""

    name: str
    """The bot's name."""
    games: int
    """Games played."""
    wins: int
    """Games in first place (shared places count)."""
    mean_place: float
    """Its mean place (1 is best)."""
    mean_points: float
    """Its mean penalty total per game."""


@dataclass(frozen=True)
class HarnessResult:
    """Totals of a harness run; the bot under test is seat 0."""

    names: tuple[str, ...]
    """Every seat's bot name, by seat."""
    scores: tuple[tuple[int, ...], ...]
    """Per game, every seat's penalty total."""
    places: tuple[tuple[int, ...], ...]
    """Per game, every seat's place (1 is best)."""
    settings: Settings
    """The settings every game was played with."""
    seconds: float
    """Wall time of the whole run."""
    slowest: float = 0.0
    """The longest time the bot under test took for one decision (seconds, on `clock`)."""
    control: TimeControl = _FIXED
    """The time control every seat played under."""
    clock: ClockKind = DEFAULT_CLOCK
    """What measured the decisions."""
    logs: tuple[tuple[str, ...], ...] = ()
    """Per game, what each seat printed (stdout and stderr), under a line naming each decision."""
    stats: tuple[SeatStats, ...] = field(init=False)
    """Totals per seat, by seat (computed from `scores` and `places`)."""

    def __post_init__(self) -> None:
        games = len(self.scores)
        stats = []
        for seat, name in enumerate(self.names):
            stats.append(
                SeatStats(
                    name=name,
                    games=games,
                    wins=sum(1 for p in self.places if p[seat] == 1),
                    mean_place=sum(p[seat] for p in self.places) / games,
                    mean_points=sum(s[seat] for s in self.scores) / games,
                )
            )
        object.__setattr__(self, "stats", tuple(stats))

    @property
    def bot(self) -> SeatStats:
        """The totals of the bot under test (seat 0)."""
        return self.stats[0]

    def summary(self) -> str:
        """The table `take5-harness` prints: each bot's wins, mean place and mean points."""
        s = self.settings
        lines = [
            f"{self.names[0]} vs {', '.join(self.names[1:])}: {len(self.scores)} games, "
            f"{s.variant.value}, game ends at {s.threshold} points ({self.seconds:.2f} s)",
            f"  {'bot':<20} {'wins':>5} {'mean place':>11} {'mean points':>12}",
        ]
        lines += [
            f"  {st.name:<20} {st.wins:>5} {st.mean_place:>11.2f} {st.mean_points:>12.1f}"
            for st in sorted(self.stats, key=lambda x: (x.mean_place, x.mean_points))
        ]
        lines.append(
            f"  slowest decision of {self.names[0]}: {self.slowest * 1000:.1f} ms "
            f"({self.control}, {self.clock.value} clock)"
        )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The run as JSON-ready data (what ``take5-harness --json`` prints)."""
        return {
            "names": list(self.names),
            "settings": self.settings.to_dict(),
            "scores": [list(s) for s in self.scores],
            "places": [list(p) for p in self.places],
            "stats": [vars(s) for s in self.stats],
            "seconds": self.seconds,
            "slowest": self.slowest,
            "time_control": str(self.control),
            "clock": self.clock.value,
        }


def time_control_of(
    time_limit: float = DEFAULT_TIMEOUT, time_control: TimeControl | str | None = None
) -> TimeControl:
    """The time control of a run: `time_control` (``"30+0.5"`` or a TimeControl), else a fixed
    `time_limit` per decision, as `referee match` reads --time-control and --timeout."""
    if time_control is None:
        return TimeControl.per_decision(time_limit)
    if isinstance(time_control, TimeControl):
        return time_control
    return TimeControl.parse(time_control)


def play_against(
    bot: Bot | str | os.PathLike[str],
    opponents: Sequence[str | Bot | type[Bot] | Player] = DEFAULT_OPPONENTS,
    games: int = 10,
    seed: int = 0,
    *,
    variant: Variant | str = Variant.STANDARD,
    threshold: int = DEFAULT_THRESHOLD,
    end_rule: EndRule | str = EndRule.AT_OR_ABOVE,
    time_limit: float = DEFAULT_TIMEOUT,
    time_control: TimeControl | str | None = None,
    clock: ClockKind | str = DEFAULT_CLOCK,
    wall_factor: float = WALL_FACTOR,
    wire: bool = True,
) -> HarnessResult:
    """Play `games` games of `bot` (seat 0) against `opponents`, in-process; raise a HarnessError
    at the first thing the referee would count as a fault (`OutOfTime` for a decision over its
    time).

    Deals are duplicated like the referee's matches: seed + i // players with every rotation, so
    luck evens out over a multiple of the player count. Time is as in `referee match`: a fixed
    `time_limit` per decision, or a `time_control` (``"30+0.5"``, or a TimeControl with a cap), on
    `clock` (CPU time of this process while a seat thinks, or the wall clock), with a wall-clock
    cap of `wall_factor` times the limit under the CPU clock. Every seat is timed.
    """
    control = time_control_of(time_limit, time_control)
    kind = ClockKind(clock)
    me = resolve(bot)
    players: list[Player] = [me] + [resolve(o) for o in opponents]
    names = unique_names([bot_name(p) for p in players])
    settings = Settings(
        players=len(players),
        variant=Variant(variant),
        threshold=threshold,
        end_rule=EndRule(end_rule),
    )
    deadline = _Deadline()
    seats = [
        _Seat(p, n, control, kind, wall_factor, wire, deadline) for p, n in zip(players, names)
    ]
    n = len(players)
    all_scores: list[tuple[int, ...]] = []
    all_places: list[tuple[int, ...]] = []
    all_logs: list[tuple[str, ...]] = []
    logs = [_Log() for _ in players]
    started = time.perf_counter()

    def ask(output: _Output, game_id: str, game: Game, seat: int) -> int:
        view = game.view(seat)
        try:
            return seats[seat].ask(game_id, view)
        except HarnessError as error:
            error.seat = seat
            raise
        finally:
            what = "draft" if view.phase is Phase.DRAFT else view.phase.value.replace("_", " ")
            logs[seat].add(f"round {view.round}, turn {view.turn} ({what})", output.take())

    try:
        with _Output() as output, deadline:
            for index in range(games):
                game_id = f"harness-g{index + 1}"
                game = Game(settings, seed + index // n, rotation=index % n)
                logs = [_Log() for _ in players]
                for each in seats:
                    each.new_game()
                _play_game(game, functools.partial(ask, output, game_id, game))
                result = game.result()
                all_scores.append(result.scores)
                all_places.append(result.places)
                for seat, player in enumerate(players):
                    try:
                        _tell_game_over(player, names[seat], game_id, seat, game)
                    finally:
                        logs[seat].add("game over", output.take())
                all_logs.append(tuple(log.text() for log in logs))
    except HarnessError as error:
        error.logs = (*all_logs, tuple(log.text() for log in logs))
        error.names = tuple(names)
        raise
    return HarnessResult(
        names=tuple(names),
        scores=tuple(all_scores),
        places=tuple(all_places),
        settings=settings,
        seconds=time.perf_counter() - started,
        slowest=seats[0].slowest,
        control=control,
        clock=kind,
        logs=tuple(all_logs),
    )


def _play_game(game: Game, ask: Callable[[int], int]) -> None:
    """Play `game` to its end, `ask(seat)` answering each decision."""
    n = game.settings.players
    while not game.is_over:
        if game.phase is Phase.PLAY:
            game.play([ask(s) for s in range(n)])
        elif game.phase is Phase.CHOOSE_ROW:
            game.choose_row(ask(game.waiting_for[0]))
        else:
            game.draft(ask(game.drafter))


def _tell_game_over(player: Player, name: str, game_id: str, seat: int, game: Game) -> None:
    """Call the player's `game_over` hook, if it has one, with the finished game's `GameOver`; an
    exception there is the bot's fault."""
    hook = getattr(player, "game_over", None)
    if hook is None:
        return
    result = game.result()
    over = GameOver(
        game_id,
        seat,
        game.settings,
        result.scores,
        result.places,
        result.forfeited,
        game.round,
        0,
    )
    try:
        hook(over)
    except Exception as error:
        raised = BotRaised(
            f"{name}: {game_id}: game_over raised {type(error).__name__}", bot_traceback(error)
        )
        raised.seat = seat
        raise raised from error


def _inert(text: str) -> str:
    """Text for the terminal: control characters of bot names and messages as visible escapes."""
    return inert(text)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, not {text}")
    return value


def _time_control(text: str) -> str:
    try:
        return TimeControl.parse(text).spec
    except TimeControlError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _load(file: Path, clock: ClockKind) -> Bot:
    """The bot of `file`, loaded within the referee's start allowance (START_TIMEOUT on the clock,
    within START_WALL of wall-clock time under the CPU clock)."""
    cpu = clock is ClockKind.CPU
    deadline = _Deadline()
    wall0, cpu0 = time.perf_counter(), time.process_time()
    bot: Bot | None = None
    try:
        with (
            deadline,
            deadline.call(START_TIMEOUT if cpu else None, START_WALL if cpu else START_TIMEOUT),
        ):
            bot = load_bot(file)
    except _Expired:
        pass
    wall, used = time.perf_counter() - wall0, time.process_time() - cpu0
    if deadline.fired == "limit" or (cpu and used > START_TIMEOUT):
        raise OutOfTime(
            f"{file}: timeout: loading the bot used more than {START_TIMEOUT:g} s of CPU time "
            "(cpu clock): the referee's start allowance (--start-timeout)"
        )
    if deadline.fired == "wall" or wall > (START_WALL if cpu else START_TIMEOUT):
        what = f"{START_WALL:g} s wall-clock cap" if cpu else f"{START_TIMEOUT:g} s (wall clock)"
        raise OutOfTime(
            f"{file}: timeout: loading the bot took more than the start allowance's {what}"
        )
    assert bot is not None
    return bot


def _file_name(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", label)[:60] or "bot"


def _write_logs(folder: Path, names: Sequence[str], logs: Sequence[Sequence[str]]) -> int:
    """Each game's output of each seat that wrote any: FOLDER/harness-gN-SEAT-NAME.log."""
    folder.mkdir(parents=True, exist_ok=True)
    written = 0
    for game, per_seat in enumerate(logs, 1):
        for seat, text in enumerate(per_seat):
            if text:
                label = names[seat] if seat < len(names) else "bot"
                name = f"harness-g{game}-{seat}-{_file_name(label)}.log"
                (folder / name).write_text(inert(text), encoding="utf-8")
                written += 1
    return written


def _output_note(
    names: Sequence[str], logs: Sequence[Sequence[str]], folder: Path | None, written: int
) -> str | None:
    """One line about what the bots printed (kept, not shown), or None when they printed
    nothing."""
    counts = [0] * len(names)
    for per_seat in logs:
        for seat, text in enumerate(per_seat):
            counts[seat] += sum(1 for line in text.splitlines() if not line.startswith("--- "))
    said = [f"{names[s]} {c:,} line{'s' * (c != 1)}" for s, c in enumerate(counts) if c]
    if not said:
        return None
    where = (
        f"in {written} file{'s' * (written != 1)} in {folder}"
        if folder is not None
        else "kept per game: --logs DIR writes them, --quiet says nothing of them"
    )
    return f"take5-harness: the bots printed {', '.join(said)} ({where})"


def _last_lines(text: str, count: int = 8) -> list[str]:
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("--- ")]
    return lines[-count:]


def main(argv: Sequence[str] | None = None) -> int:
    """take5-harness BOT [--against OPPONENT ...]: exit 0; 1 when a bot faulted (an illegal
    answer, an exception, a decision over its time) or cannot be served; 2 bad usage; 130
    interrupted."""
    parser = _parser()
    args = parser.parse_args(argv)
    control = _control(parser, args)
    clock = ClockKind(args.clock)
    try:
        try:
            file = bot_file(args.bot)
            bot = _load(file, clock)
            result = play_against(
                bot,
                args.against,
                games=args.games,
                seed=args.seed,
                variant=args.variant,
                threshold=args.threshold,
                time_control=control,
                clock=clock,
                wall_factor=args.wall_factor,
            )
        except (HarnessError, Take5Error) as error:
            _report_fault(error, args.logs, args.quiet)
            return 1
        print(json.dumps(result.to_dict(), indent=1) if args.json else _inert(result.summary()))
        written = _write_logs(args.logs, result.names, result.logs) if args.logs else 0
        note = _output_note(result.names, result.logs, args.logs, written)
        if note is not None and not args.quiet:
            print(_inert(note), file=sys.stderr)
        if not calls_run(file):
            _never_runs(file, type(bot).__name__)
            return 1
        return 0
    except KeyboardInterrupt:
        print("take5-harness: interrupted", file=sys.stderr)
        return 130


def _parser() -> argparse.ArgumentParser:
    """take5-harness's options."""
    from .bots import BUILTIN  # lazy: take5.bots imports take5, whose __init__ imports this module

    parser = argparse.ArgumentParser(
        prog="take5-harness",
        description="Play a bot against the bundled bots (or others) in-process, in seconds. "
        "It stops at the first thing `referee match` would count as a fault, with the "
        "same time limits and clocks.",
    )
    parser.add_argument("bot", help="the bot under test: a bot.py file or a folder holding one")
    parser.add_argument(
        "--against",
        nargs="+",
        default=list(DEFAULT_OPPONENTS),
        metavar="OPPONENT",
        help=f"bundled bots ({', '.join(BUILTIN)}) or bot files/folders; default: "
        f"{' '.join(DEFAULT_OPPONENTS)}",
    )
    parser.add_argument("--games", type=_positive, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--variant", choices=[v.value for v in Variant], default=Variant.STANDARD.value
    )
    parser.add_argument("--threshold", type=_positive, default=DEFAULT_THRESHOLD)
    parser.add_argument(
        "--timeout",
        "--time-limit",
        dest="timeout",
        type=_seconds,
        default=None,
        help=f"seconds a bot has for each decision (default {DEFAULT_TIMEOUT:g}, as `referee "
        "match`)",
    )
    parser.add_argument(
        "--time-control",
        type=_time_control,
        default=None,
        metavar="BANK+INC",
        help="a bank per game and an increment per decision, in seconds (30+0.5); instead of "
        "--timeout",
    )
    parser.add_argument(
        "--time-cap",
        type=_seconds,
        default=None,
        help="with --time-control: the most seconds one decision may take",
    )
    parser.add_argument(
        "--clock",
        choices=[k.value for k in ClockKind],
        default=DEFAULT_CLOCK.value,
        help="what measures a decision: CPU time of the harness's process while the bot thinks "
        "(default), or the wall clock",
    )
    parser.add_argument(
        "--wall-factor",
        type=_seconds,
        default=WALL_FACTOR,
        help=f"CPU clock: a decision may last this many times its limit on the wall clock "
        f"(default {WALL_FACTOR})",
    )
    parser.add_argument(
        "--logs",
        type=Path,
        default=None,
        metavar="DIR",
        help="write what each bot printed, one file per game and seat, into DIR",
    )
    parser.add_argument("--quiet", action="store_true", help="say nothing of what the bots printed")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


def _control(parser: argparse.ArgumentParser, args: argparse.Namespace) -> TimeControl:
    """The time control the options name (a usage error, exit 2, for a contradiction)."""
    if args.timeout is not None and args.time_control is not None:
        parser.error("give --timeout (per decision) or --time-control (a bank), not both")
    if args.time_cap is not None and args.time_control is None:
        parser.error("--time-cap caps the decisions of a --time-control: give one")
    try:
        if args.time_control is not None:
            return TimeControl.parse(args.time_control, cap=args.time_cap)
        return TimeControl.per_decision(args.timeout or DEFAULT_TIMEOUT)
    except TimeControlError as error:
        parser.error(str(error))


def _report_fault(error: Take5Error, logs_dir: Path | None, quiet: bool) -> None:
    """Say what went wrong, write the bots' output so far under --logs, and show the last lines
    the seat at fault printed (unless --quiet)."""
    print(_inert(f"take5-harness: {error}"), file=sys.stderr)
    logs = getattr(error, "logs", ())
    seat = getattr(error, "seat", None)
    if logs and logs_dir is not None:
        _write_logs(logs_dir, getattr(error, "names", ()), logs)
    if logs and seat is not None and not quiet:
        tail = _last_lines(logs[-1][seat])
        if tail:
            print("take5-harness: its last output in that game:", file=sys.stderr)
            for line in tail:
                print(f"  | {inert(line)}", file=sys.stderr)


def _never_runs(file: Path, cls: str) -> None:
    """The referee starts a bot as `python3 bot.py`: say how to end a file that would not serve."""
    print(
        f"take5-harness: {file} never calls run(...): the referee starts a bot as "
        "`python3 bot.py`, and this one would exit at once without serving. "
        "End the file with:\n\n"
        f'    if __name__ == "__main__":\n        run({cls}())\n\n'
        "(with `from take5 import Bot, run`)",
        file=sys.stderr,
    )


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = [
    "DEFAULT_OPPONENTS",
    "LOG_LIMIT",
    "BotLoadError",
    "BotRaised",
    "HarnessError",
    "HarnessResult",
    "OutOfTime",
    "SeatStats",
    "bot_file",
    "bot_traceback",
    "calls_run",
    "load_bot",
    "main",
    "play_against",
    "resolve",
    "time_control_of",
]
