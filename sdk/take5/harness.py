"""Try a bot locally, in-process, in seconds: no referee, no sockets, no Docker.

    from take5 import play_against
    print(play_against(MyBot(), games=20).summary())

or from a shell: ``take5-harness path/to/bot.py --games 20``.

Each view a bot gets here has made the round trip through the protocol's messages (as it would from the
referee), and an illegal answer stops the run with a `HarnessError` saying where, because a bot author
wants to see the bug, not a default move. Opponents are the example bots (random, lowest, heuristic)
or any bot files.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import operator
import os
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bot import Bot, CallContext, bot_name
from .convert import (
    GameOver,
    choose_row_request,
    pick_card_request,
    view_from_request,
)
from .game import Game, Phase, Player, RandomPlayer, Settings, View
from .rules import DEFAULT_THRESHOLD, EndRule, Take5Error, Variant
from .v1 import bot_pb2 as pb

DEFAULT_OPPONENTS = ("random", "lowest", "heuristic")
EXAMPLES_ENV = "TAKE5_EXAMPLE_BOTS"


class HarnessError(Take5Error):
    """The bot under test did something the referee would count as a fault."""


def examples_dir() -> Path | None:
    """The example_bots folder: $TAKE5_EXAMPLE_BOTS, else next to the SDK in a source checkout."""
    env = os.environ.get(EXAMPLES_ENV)
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent.parent.parent / "example_bots"
    return here if here.is_dir() else None


def load_bot(path: str | os.PathLike[str], *args: Any, **kwargs: Any) -> Bot:
    """An instance of the Bot subclass defined in a bot file (or a folder's bot.py).

    The file is imported under a private module name, so its ``if __name__ == "__main__": run(...)``
    does not start a server. Extra arguments go to the class.
    """
    file = Path(path)
    if file.is_dir():
        file = file / "bot.py"
    if not file.is_file():
        raise HarnessError(f"no bot file at {path}")
    name = f"take5_bot_{uuid.uuid4().hex[:12]}_{file.parent.name}".replace("-", "_").replace(".", "_")
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise HarnessError(f"cannot import {file}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    folder = str(file.parent.resolve())
    sys.path.insert(0, folder)  # the bot's own helper modules
    try:
        spec.loader.exec_module(module)
    finally:
        if sys.path and sys.path[0] == folder:
            sys.path.pop(0)
    classes = [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj) and issubclass(obj, Bot) and obj is not Bot and obj.__module__ == name
    ]
    leaves = [c for c in classes if not any(o is not c and issubclass(o, c) for o in classes)]
    if len(leaves) != 1:
        found = ", ".join(c.__name__ for c in leaves) or "none"
        raise HarnessError(f"{file} should define exactly one take5.Bot subclass (found: {found})")
    return leaves[0](*args, **kwargs)


def resolve(opponent: str | Bot | type[Bot] | Player) -> Player:
    """A player from an example bot's name, a bot file or folder, a Bot class or an instance."""
    if isinstance(opponent, type):
        return opponent()
    if not isinstance(opponent, (str, os.PathLike)):
        return opponent
    text = os.fspath(opponent)
    if os.path.exists(text):
        return load_bot(text)
    folder = examples_dir()
    if folder is not None and (folder / text / "bot.py").is_file():
        return load_bot(folder / text / "bot.py")
    if text == "random":
        return RandomPlayer()
    known = sorted(p.name for p in folder.iterdir() if (p / "bot.py").is_file()) if folder else []
    raise HarnessError(
        f"unknown opponent {text!r}: give a bot file or folder"
        + (f", or one of the example bots: {', '.join(known)}" if known else f" (or set {EXAMPLES_ENV})")
    )


@dataclass(frozen=True)
class SeatStats:
    name: str
    games: int
    wins: int
    mean_place: float
    mean_points: float


@dataclass(frozen=True)
class HarnessResult:
    """Totals of a harness run; the bot under test is seat 0."""

    names: tuple[str, ...]
    scores: tuple[tuple[int, ...], ...]
    """Per game, every seat's penalty total."""
    places: tuple[tuple[int, ...], ...]
    settings: Settings
    seconds: float
    slowest: float = 0.0
    """The longest time the bot under test took for one decision (seconds)."""
    slow_calls: int = 0
    """Decisions that took longer than the time limit (the referee would count a timeout)."""
    stats: tuple[SeatStats, ...] = field(init=False)

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
        return self.stats[0]

    def summary(self) -> str:
        s = self.settings
        lines = [
            f"{self.names[0]} vs {', '.join(self.names[1:])}: {len(self.scores)} games, "
            f"{s.variant.value}, game ends at {s.threshold} points ({self.seconds:.2f} s)",
            f"  {'bot':<20} {'wins':>5} {'mean place':>11} {'mean points':>12}",
        ]
        for st in sorted(self.stats, key=lambda x: (x.mean_place, x.mean_points)):
            lines.append(f"  {st.name:<20} {st.wins:>5} {st.mean_place:>11.2f} {st.mean_points:>12.1f}")
        lines.append(f"  slowest decision of {self.names[0]}: {self.slowest * 1000:.1f} ms")
        if self.slow_calls:
            lines.append(f"  WARNING: {self.slow_calls} decisions took longer than the time limit")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
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
        started = time.perf_counter()
        try:
            answer = method(view)
        finally:
            if isinstance(player, Bot):
                player.context = None
        took = time.perf_counter() - started
        self.slowest = max(self.slowest, took)
        if took > self.time_limit:
            self.slow_calls += 1
        where = f"{game_id}, round {view.round}, turn {view.turn}"
        try:
            answer = operator.index(answer)
        except TypeError:
            raise HarnessError(f"{self.name}: {where}: answered {answer!r}, not a whole number") from None
        if view.phase is Phase.CHOOSE_ROW:
            if not 0 <= answer < len(view.rows):
                raise HarnessError(f"{self.name}: {where}: choose_row returned {answer!r}, not a row 0..{len(view.rows) - 1}")
        else:
            allowed = view.pool if view.phase is Phase.DRAFT else view.hand
            if answer not in allowed:
                what = "draft_card" if view.phase is Phase.DRAFT else "pick_card"
                raise HarnessError(f"{self.name}: {where}: {what} returned {answer!r}, which is not in {list(allowed)}")
        return answer


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
    """Play `games` games of `bot` (seat 0) against `opponents`, in-process; raise on an illegal answer.

    Deals are duplicated like the referee's matches: seed + i // players with every rotation, so luck
    evens out over a multiple of the player count. `time_limit` only counts slow decisions.
    """
    me = resolve(os.fspath(bot)) if isinstance(bot, (str, os.PathLike)) else bot
    players: list[Player] = [me] + [resolve(o) for o in opponents]
    names: list[str] = []
    for player in players:
        name = bot_name(player)
        names.append(name if name not in names else f"{name}#{names.count(name) + 1}")
    settings = Settings(players=len(players), variant=Variant(variant), threshold=threshold,
                        end_rule=EndRule(end_rule))
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
            if hook is not None:
                hook(GameOver(game_id, seat, settings, result.scores, result.places, result.forfeited, game.round, 0))
    return HarnessResult(
        names=tuple(names),
        scores=tuple(all_scores),
        places=tuple(all_places),
        settings=settings,
        seconds=time.perf_counter() - started,
        slowest=seats[0].slowest,
        slow_calls=seats[0].slow_calls,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """take5-harness BOT [--against OPPONENT ...]: exit 0, or 1 when the bot answered illegally."""
    parser = argparse.ArgumentParser(
        prog="take5-harness",
        description="Play a bot against the example bots (or others) in-process, in seconds.",
    )
    parser.add_argument("bot", help="the bot under test: a bot.py file or a folder holding one")
    parser.add_argument(
        "--against",
        nargs="+",
        default=list(DEFAULT_OPPONENTS),
        metavar="OPPONENT",
        help="example bot names (random, lowest, heuristic) or bot files/folders; "
        f"default: {' '.join(DEFAULT_OPPONENTS)}",
    )
    parser.add_argument("--games", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variant", choices=[v.value for v in Variant], default=Variant.STANDARD.value)
    parser.add_argument("--threshold", type=int, default=DEFAULT_THRESHOLD)
    parser.add_argument("--time-limit", type=float, default=1.0, help="seconds per decision to warn about")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    try:
        result = play_against(
            args.bot,
            args.against,
            games=args.games,
            seed=args.seed,
            variant=args.variant,
            threshold=args.threshold,
            time_limit=args.time_limit,
        )
    except (HarnessError, Take5Error) as error:
        print(f"take5-harness: {error}", file=sys.stderr)
        return 1
    print(json.dumps(result.to_dict(), indent=1) if args.json else result.summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["DEFAULT_OPPONENTS", "HarnessError", "HarnessResult", "load_bot", "main", "play_against"]
