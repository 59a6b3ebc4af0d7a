"""Matches between bots: a bot reference (botref), how a bot is started (launch, local), the gRPC
client the referee talks to it with (remote), the fault vocabulary (faults), and the match itself
(play: seats, games, faults, forfeits, records).

``from take5_arena.referee.match import Match, MatchConfig, ...`` works as before the match code became a
package; the names are loaded on first use (PEP 562), so importing ``take5_arena.referee.match.botref`` alone
does not pull in gRPC (start-up time of the command line).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .play import (
        EXIT_FAULTS,
        EXIT_INTERRUPTED,
        EXIT_OK,
        EXIT_REJECTED,
        EXIT_USAGE,
        Entry,
        GameSummary,
        Match,
        MatchConfig,
        MatchResult,
        Rejection,
        Standing,
        run_match,
    )

__all__ = [
    "EXIT_FAULTS",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_REJECTED",
    "EXIT_USAGE",
    "Entry",
    "GameSummary",
    "Match",
    "MatchConfig",
    "MatchResult",
    "Rejection",
    "Standing",
    "run_match",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module(".play", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
