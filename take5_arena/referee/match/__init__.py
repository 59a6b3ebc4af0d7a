"""Matches between bots: a bot reference (botref), what the match needs of a bot (handle: its
process; the connection: its calls) and the ways to run one (local, memory, and the Docker
sandbox), the gRPC client (remote), the fault vocabulary (faults), and the match itself (config,
entrant, turns, play, results; play.py's docstring says who does what).

``from take5_arena.referee.match import Match, MatchConfig, ...``: the names are loaded on first
use (PEP 562), so importing ``take5_arena.referee.match.botref`` alone does not pull in gRPC
(start-up time of the command line).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import CallLimits, MatchConfig
    from .handle import BotHandle
    from .memory import InMemoryBot, in_memory
    from .play import Launcher, Match, run_match
    from .results import Entry, ExitCode, GameSummary, MatchResult, Rejection, Standing

#: public name -> the module of this package that defines it
_HOMES: dict[str, str] = {
    "BotHandle": ".handle",
    "CallLimits": ".config",
    "Entry": ".results",
    "ExitCode": ".results",
    "GameSummary": ".results",
    "InMemoryBot": ".memory",
    "Launcher": ".play",
    "Match": ".play",
    "MatchConfig": ".config",
    "MatchResult": ".results",
    "Rejection": ".results",
    "Standing": ".results",
    "in_memory": ".memory",
    "run_match": ".play",
}

__all__ = [
    "BotHandle",
    "CallLimits",
    "Entry",
    "ExitCode",
    "GameSummary",
    "InMemoryBot",
    "Launcher",
    "Match",
    "MatchConfig",
    "MatchResult",
    "Rejection",
    "Standing",
    "in_memory",
    "run_match",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home, __name__), name)
