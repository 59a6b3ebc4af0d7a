"""Loading a bot and what the harness reports about one: a bot file (or a folder's bot.py) imported
under a private name, the bundled bots by name, and the errors for what the referee would count as
a fault, each with the bot's own frames and a hint for the usual newcomer's mistakes.

Apart from the games (take5.harness) because loading a bot is a step of its own: `take5.load_bot`
serves benchmarks and tools that need none of the harness's games and clocks. `take5.harness`
re-exports every name here.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import os
import sys
import traceback
import uuid
from pathlib import Path
from typing import Any

from .bot import Bot
from .game import Player, View
from .rules import Take5Error

_SDK_DIR = Path(__file__).resolve().parent
"""Frames in here are the harness's, not the bot's, and are left out of what a bot author is shown
(except the bundled bots' own code in take5/bots)."""


class HarnessError(Take5Error):
    """The bot under test did something the referee would count as a fault."""

    logs: tuple[tuple[str, ...], ...] = ()
    """What each seat printed in each game played until the error (`HarnessResult.logs`)."""
    seat: int | None = None
    """The seat at fault, where one is."""
    names: tuple[str, ...] = ()
    """Every seat's label, by seat (as in `HarnessResult.names`)."""


class OutOfTime(HarnessError):
    """A decision used more than its time (a timeout fault in the referee): the message names the
    clock and the limit that ran out."""


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


__all__ = [
    "BotLoadError",
    "BotRaised",
    "HarnessError",
    "OutOfTime",
    "bot_file",
    "bot_traceback",
    "calls_run",
    "load_bot",
    "resolve",
]
