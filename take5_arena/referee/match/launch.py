"""How the referee gets a bot running: the `BotHandle` interface and the launchers behind it.

The match layer only needs an address to connect to, a way to stop the bot, and, when a call fails, to
know whether the bot is still alive (a crash and a refused connection are different faults). Local
processes (take5_arena/referee/match/local.py), Docker containers (take5_arena/referee/sandbox/) and bots someone else runs
(`AddressHandle`) all fit behind this interface.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Protocol

from .botref import BotRef
from .local import LocalBot


class BotHandle(Protocol):
    """One bot the referee runs (or merely reaches)."""

    label: str
    """For messages: where the bot comes from."""

    def start(self) -> str:
        """Start the bot (again, after it exited) and return its gRPC address at once.

        The bot may need a moment before the address answers; the caller waits for it and checks
        `exit_status()` meanwhile.
        """
        ...

    def stop(self, grace: float = 1.0) -> None:
        """Ask the bot to stop (SIGTERM), kill it after `grace` seconds; idempotent."""
        ...

    def exit_status(self) -> int | None:
        """The exit status once the bot's process has ended (negative: killed by that signal), else None."""
        ...

    def stderr_tail(self, limit: int = 2000) -> str:
        """The end of what the bot wrote to stderr and stdout, for diagnosing a fault."""
        ...

    # Optional, looked up with getattr by the match (take5_arena/referee/sandbox/launcher.py has them all):
    #   per_game: bool                 True: start the bot afresh before a game (Match._renew)
    #   serve_game(game_id, deal)      -> bool: whether it must be restarted for that game
    #                                  (absent: after every game); deal is the game's seed
    #   ready(timeout) -> str          wait until the bot serves; the address to connect to, or
    #                                  raise remote.CallFailed (timeout, crash, resource)
    #   prefetch(game_id) -> None      prepare the next game's start while this game plays
    #   exit_fault() -> (kind, detail) the fault a bot that ended amounts to (e.g. OOM-killed)


class AddressHandle:
    """A bot that runs elsewhere: the referee connects to it and never starts or stops it."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.label = address

    def start(self) -> str:
        return self.address

    def stop(self, grace: float = 1.0) -> None:
        return None

    def exit_status(self) -> int | None:
        return None

    def stderr_tail(self, limit: int = 2000) -> str:
        return ""


def local_handle(ref: BotRef, *, log_path: Path | None = None) -> BotHandle:
    """The embedded default: a local process for a bot folder or file, or just its address."""
    if ref.kind == "address":
        return AddressHandle(ref.address)
    return LocalBot(ref, log_path=log_path)


def describe_exit(status: int) -> str:
    """'exited with status 3' or 'was killed by SIGKILL' (after "the bot ...")."""
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"was killed by {name}"
    return f"exited with status {status}"
