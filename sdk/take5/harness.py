"""Try a bot locally, in-process, in seconds: no referee, no sockets, no Docker::

    from take5 import play_against
    print(play_against(MyBot(), games=20).summary())

or from a shell: ``take5-harness path/to/bot.py --games 20``.

Each view a bot gets here has made the round trip through the protocol's messages (as it would from
the referee), and an illegal answer stops the run with a `HarnessError` saying where, because a bot
author wants to see the bug, not a default move; an exception in the bot shows the bot's own frames
only. Opponents are the bots bundled in `take5.bots` (random, lowest, heuristic, search) or any bot
files, so the SDK alone is enough.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import inspect
import json
import operator
import os
import sys
import time
import traceback
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bot import Bot, CallContext, answer_problem, bot_name
from .convert import (
    GameOver,
    choose_row_request,
    pick_card_request,
    view_from_request,
)
from .game import Game, Phase, Player, Settings, View
from .rules import DEFAULT_THRESHOLD, EndRule, Take5Error, Variant
from .text import inert
from .v1 import bot_pb2 as pb

DEFAULT_OPPONENTS = ("random", "lowest", "heuristic")
_SDK_DIR = Path(__file__).resolve().parent
"""Frames in here are the harness's, not the bot's, and are left out of what a bot author is shown
(except the bundled bots' own code in take5/bots)."""


class HarnessError(Take5Error):
    """The bot under test did something the referee would count as a fault."""


class BotLoadError(HarnessError):
    """A bot file could not be loaded: a syntax error, an exception while importing it, no Bot
    class."""


class BotRaised(HarnessError):
    """A bot raised an exception while it was asked for a move; `traceback` shows its own frames."""

    def __init__(self, message: str, traceback: str) -> None:
        super().__init__(message)
        self.traceback = traceback

    def __str__(self) -> str:
        return f"{self.args[0]}\n{self.traceback}".rstrip()


def bot_traceback(error: BaseException) -> str:
    """The traceback of `error` from the first frame of the bot's own code on.

    The harness's frames (and importlib's, for an error while loading a bot file) are noise to a bot
    author, who wants the line of their bot that failed and the frames it called. A syntax error has
    no frames of its own: its text shows the file, line and a caret.
    """
    tb = traceback.TracebackException.from_exception(error)
    frames = list(tb.stack)
    first = next(
        (i for i, frame in enumerate(frames) if _is_bot_frame(frame.filename)), len(frames)
    )
    tb.stack = traceback.StackSummary.from_list(frames[first:])
    # Chained exceptions were raised and caught inside the bot: their frames are all its own.
    return "".join(tb.format()).rstrip() + _hint_for(error)


def _is_bot_frame(filename: str) -> bool:
    if filename.startswith("<"):  # <frozen importlib._bootstrap> and the like
        return False
    try:
        path = Path(filename).resolve()
    except (OSError, ValueError):
        return True
    return not path.is_relative_to(_SDK_DIR) or path.is_relative_to(_SDK_DIR / "bots")


def _hint_for(error: BaseException) -> str:
    """A line of advice for the mistakes newcomers make most, or ''."""
    text = str(error)
    if isinstance(error, AttributeError) and "'View' object" in text:
        return (
            f"\nhint: a View has {', '.join(_view_fields())} (help(take5.View) says what each "
            "holds)"
        )
    if isinstance(error, NotImplementedError) and "must define pick_card" in text:
        return (
            "\nhint: define `def pick_card(self, view):` in your Bot subclass; it returns a "
            "card of view.hand"
        )
    if (
        isinstance(error, TypeError)
        and "positional argument" in text
        and any(m in text for m in ("pick_card", "choose_row", "draft_card"))
    ):
        return "\nhint: each decision method takes (self, view): `def pick_card(self, view):`"
    if isinstance(error, (ModuleNotFoundError, ImportError)) and getattr(error, "name", "") in (
        "grpc",
        "google",
    ):
        return (
            "\nhint: the SDK needs grpcio and protobuf: pip install ./sdk (from a clone of "
            "take5 arena)"
        )
    return ""


def _view_fields() -> list[str]:
    """What a bot may read from a View: its fields and properties, and its methods as name()."""
    names = list(View._fields)
    for name, value in vars(View).items():
        if name.startswith("_") or name in names:
            continue
        if isinstance(value, property):
            names.append(name)
        elif callable(value):
            names.append(f"{name}()")
    return names


def calls_run(file: Path) -> bool:
    """Whether a bot file calls run(...) (or serve(...)) anywhere: the referee starts a bot as
    `python3 bot.py`, and a file that only defines a class exits at once without serving."""
    try:
        tree = ast.parse(file.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return True  # not ours to judge here: loading the file reports it
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            if name in ("run", "serve"):
                return True
    return False


def bot_file(path: str | os.PathLike[str]) -> Path:
    """The bot file a path names: the file itself, or a folder's bot.py."""
    file = Path(path)
    if file.is_dir():
        if not (file / "bot.py").is_file():
            raise BotLoadError(
                f"{path} is a folder without a bot.py: give the bot's file or put it in bot.py"
            )
        file = file / "bot.py"
    if not file.is_file():
        raise BotLoadError(f"no bot file at {path}")
    return file


def load_bot(path: str | os.PathLike[str], *args: Any, **kwargs: Any) -> Bot:
    """An instance of the Bot subclass defined in a bot file (or a folder's bot.py).

    The file is imported under a private module name, so its ``if __name__ == "__main__": run(...)``
    does not start a server. A file that defines no Bot class but imports exactly one (as the
    example bots do: ``from take5.bots import HeuristicBot``) serves that one. Extra arguments go to
    the class.
    """
    file = bot_file(path)
    name = f"take5_bot_{uuid.uuid4().hex[:12]}_{file.parent.name}".replace("-", "_").replace(
        ".", "_"
    )
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise BotLoadError(f"cannot import {file}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    folder = str(file.parent.resolve())
    sys.path.insert(0, folder)  # the bot's own helper modules
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        what = (
            "has a syntax error"
            if isinstance(error, SyntaxError)
            else f"raised {type(error).__name__} when loaded"
        )
        raise BotLoadError(f"{file} {what}:\n{bot_traceback(error)}") from error
    finally:
        if sys.path and sys.path[0] == folder:
            sys.path.pop(0)
    found = [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj) and issubclass(obj, Bot) and obj is not Bot
    ]
    classes = [c for c in found if c.__module__ == name] or found
    leaves = [c for c in classes if not any(o is not c and issubclass(o, c) for o in classes)]
    if len(leaves) != 1:
        found_names = ", ".join(c.__name__ for c in leaves) or "none"
        raise BotLoadError(
            f"{file} should define exactly one take5.Bot subclass (found: {found_names})"
            + ("; write `class MyBot(Bot):` with `from take5 import Bot`" if not leaves else "")
        )
    if args or kwargs:  # the caller's arguments: their errors are the caller's to see
        return leaves[0](*args, **kwargs)
    try:
        return leaves[0]()
    except Exception as error:
        raise BotLoadError(
            f"{leaves[0].__name__}() raised {type(error).__name__}:\n{bot_traceback(error)}"
        ) from error


def resolve(opponent: str | os.PathLike[str] | Bot | type[Bot] | Player) -> Player:
    """A player from a bundled bot's name (take5.bots), a bot file or folder, a Bot class or
    instance."""
    if isinstance(opponent, type):
        return opponent()
    if not isinstance(opponent, (str, os.PathLike)):
        return opponent
    text = os.fspath(opponent)
    if os.path.exists(text):
        return load_bot(text)
    from .bots import BUILTIN  # lazy: take5.bots imports take5, whose __init__ imports this module

    cls = BUILTIN.get(text)
    if cls is not None:
        return cls()
    raise HarnessError(
        f"unknown opponent {text!r}: give a bot file or folder, or one of the bundled bots: "
        f"{', '.join(BUILTIN)}"
    )


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
    """The longest time the bot under test took for one decision (seconds)."""
    slow_calls: int = 0
    """Decisions that took longer than the time limit (the referee would count a timeout)."""
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
        lines.append(f"  slowest decision of {self.names[0]}: {self.slowest * 1000:.1f} ms")
        if self.slow_calls:
            lines.append(f"  WARNING: {self.slow_calls} decisions took longer than the time limit")
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
            "slow_calls": self.slow_calls,
        }


class _Seat:
    """Asks one player, the way the referee would: through the protocol's messages, timed."""

    def __init__(self, player: Player, name: str, time_limit: float, wire: bool) -> None:
        self.player = player
        self.name = name
        self.time_limit = time_limit
        self.wire = wire
        self.slowest = 0.0
        self.slow_calls = 0

    def ask(self, game_id: str, view: View) -> int:
        if self.wire:
            if view.phase is Phase.CHOOSE_ROW:
                raw = choose_row_request(view, game_id, self.time_limit).SerializeToString()
                view = view_from_request(pb.ChooseRowRequest.FromString(raw))
            else:
                raw = pick_card_request(view, game_id, self.time_limit).SerializeToString()
                view = view_from_request(pb.PickCardRequest.FromString(raw))
        player = self.player
        method = {
            Phase.PLAY: player.pick_card,
            Phase.DRAFT: player.draft_card,
            Phase.CHOOSE_ROW: player.choose_row,
        }[view.phase]
        if isinstance(player, Bot):
            player.context = CallContext(game_id, self.time_limit, time.monotonic())
        where = f"{game_id}, round {view.round}, turn {view.turn}"
        what = {Phase.PLAY: "pick_card", Phase.DRAFT: "draft_card", Phase.CHOOSE_ROW: "choose_row"}[
            view.phase
        ]
        started = time.perf_counter()
        try:
            answer = method(view)
        except Exception as error:
            raise BotRaised(
                f"{self.name}: {where}: {what} raised {type(error).__name__}", bot_traceback(error)
            ) from error
        finally:
            if isinstance(player, Bot):
                player.context = None
        took = time.perf_counter() - started
        self.slowest = max(self.slowest, took)
        if took > self.time_limit:
            self.slow_calls += 1
        allowed = (
            range(len(view.rows))
            if view.phase is Phase.CHOOSE_ROW
            else view.pool
            if view.phase is Phase.DRAFT
            else view.hand
        )
        problem = answer_problem(what, answer, allowed)
        if problem is not None:
            raise HarnessError(f"{self.name}: {where}: {problem}")
        return operator.index(answer)


def play_against(
    bot: Bot | str | os.PathLike[str],
    opponents: Sequence[str | Bot | type[Bot] | Player] = DEFAULT_OPPONENTS,
    games: int = 10,
    seed: int = 0,
    *,
    variant: Variant | str = Variant.STANDARD,
    threshold: int = DEFAULT_THRESHOLD,
    end_rule: EndRule | str = EndRule.AT_OR_ABOVE,
    time_limit: float = 1.0,
    wire: bool = True,
) -> HarnessResult:
    """Play `games` games of `bot` (seat 0) against `opponents`, in-process; raise on an illegal
    answer.

    Deals are duplicated like the referee's matches: seed + i // players with every rotation, so
    luck evens out over a multiple of the player count. `time_limit` only counts slow decisions.
    """
    me = resolve(bot)
    players: list[Player] = [me] + [resolve(o) for o in opponents]
    names: list[str] = []
    for player in players:
        name = bot_name(player)
        names.append(name if name not in names else f"{name}#{names.count(name) + 1}")
    settings = Settings(
        players=len(players),
        variant=Variant(variant),
        threshold=threshold,
        end_rule=EndRule(end_rule),
    )
    seats = [_Seat(p, n, time_limit, wire) for p, n in zip(players, names)]
    n = len(players)
    all_scores: list[tuple[int, ...]] = []
    all_places: list[tuple[int, ...]] = []
    started = time.perf_counter()
    for index in range(games):
        game_id = f"harness-g{index + 1}"
        game = Game(settings, seed + index // n, rotation=index % n)
        while not game.is_over:
            if game.phase is Phase.PLAY:
                game.play([seats[s].ask(game_id, game.view(s)) for s in range(n)])
            elif game.phase is Phase.CHOOSE_ROW:
                s = game.waiting_for[0]
                game.choose_row(seats[s].ask(game_id, game.view(s)))
            else:
                s = game.drafter
                game.draft(seats[s].ask(game_id, game.view(s)))
        result = game.result()
        all_scores.append(result.scores)
        all_places.append(result.places)
        for seat, player in enumerate(players):
            hook = getattr(player, "game_over", None)
            if hook is None:
                continue
            try:
                hook(
                    GameOver(
                        game_id,
                        seat,
                        settings,
                        result.scores,
                        result.places,
                        result.forfeited,
                        game.round,
                        0,
                    )
                )
            except Exception as error:
                raise BotRaised(
                    f"{names[seat]}: {game_id}: game_over raised {type(error).__name__}",
                    bot_traceback(error),
                ) from error
    return HarnessResult(
        names=tuple(names),
        scores=tuple(all_scores),
        places=tuple(all_places),
        settings=settings,
        seconds=time.perf_counter() - started,
        slowest=seats[0].slowest,
        slow_calls=seats[0].slow_calls,
    )


def _inert(text: str) -> str:
    """Text for the terminal: control characters of bot names and messages as visible escapes."""
    return inert(text)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """take5-harness BOT [--against OPPONENT ...]: exit 0; 1 when the bot failed or cannot be
    served; 2 bad usage; 130 interrupted."""
    from .bots import BUILTIN  # lazy: take5.bots imports take5, whose __init__ imports this module

    parser = argparse.ArgumentParser(
        prog="take5-harness",
        description="Play a bot against the bundled bots (or others) in-process, in seconds.",
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
        "--time-limit", type=float, default=1.0, help="seconds per decision to warn about"
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    try:
        try:
            file = bot_file(args.bot)
            bot = load_bot(file)
            result = play_against(
                bot,
                args.against,
                games=args.games,
                seed=args.seed,
                variant=args.variant,
                threshold=args.threshold,
                time_limit=args.time_limit,
            )
        except (HarnessError, Take5Error) as error:
            print(_inert(f"take5-harness: {error}"), file=sys.stderr)
            return 1
        print(json.dumps(result.to_dict(), indent=1) if args.json else _inert(result.summary()))
        if not calls_run(file):
            cls = type(bot).__name__
            print(
                f"take5-harness: {file} never calls run(...): the referee starts a bot as "
                "`python3 bot.py`, and this one would exit at once without serving. "
                "End the file with:\n\n"
                f'    if __name__ == "__main__":\n        run({cls}())\n\n'
                "(with `from take5 import Bot, run`)",
                file=sys.stderr,
            )
            return 1
        return 0
    except KeyboardInterrupt:
        print("take5-harness: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = [
    "DEFAULT_OPPONENTS",
    "BotLoadError",
    "BotRaised",
    "HarnessError",
    "HarnessResult",
    "SeatStats",
    "bot_file",
    "bot_traceback",
    "calls_run",
    "load_bot",
    "main",
    "play_against",
    "resolve",
]
