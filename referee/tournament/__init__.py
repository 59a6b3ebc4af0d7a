"""Round-robin tournaments of submitted bots: the schedule (schedule), where tables are played
(executors), and submitting, running and reading back a tournament (run).

``from referee.tournament import submit, run_tournament, ...`` works as before the tournament code
became a package; names are loaded on first use (PEP 562), so that importing the package costs
nothing at start-up (the schedule needs numpy).
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the module of this package that defines it
_HOMES: dict[str, str] = {
    name: ".run"
    for name in (
        "DEFAULTS", "GameOutcome", "InfraError", "RunReport", "SeatSpec", "SubmitRefused", "Submitted",
        "TableSpec", "TournamentError", "entrant_labels", "game_results", "prepare_run", "run_table",
        "run_tournament", "schedule_for", "settings_summary", "standings", "submit", "tournament_status",
    )
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home, __name__), name)
