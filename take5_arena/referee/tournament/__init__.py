"""Round-robin tournaments of submitted bots: the schedule (schedule), where tables are played
(executors), settings, submitting (submit), one table's games (table), the run loop (run) and
reading a tournament back (status); see run.py's docstring for the design.

``from take5_arena.referee.tournament import submit, run_tournament, ...`` works as before the tournament code
became a package; names are loaded on first use (PEP 562), so that importing the package costs
nothing at start-up (the schedule needs numpy).
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the module of this package that defines it
_HOMES: dict[str, str] = {
    "TournamentError": ".errors",
    "SubmitRefusedError": ".errors",
    "SubmitRefused": ".errors",
    "InfraError": ".errors",
    "DEFAULTS": ".settings",
    "resolve_settings": ".settings",
    "schedule_for": ".settings",
    "settings_summary": ".settings",
    "GameOutcome": ".table",
    "SeatSpec": ".table",
    "TableSpec": ".table",
    "run_table": ".table",
    "Submitted": ".submission",
    "submit": ".submission",
    "RunReport": ".run",
    "prepare_run": ".run",
    "run_tournament": ".run",
    "entrant_labels": ".status",
    "tournament_status": ".status",
}

__all__ = [
    "DEFAULTS",
    "GameOutcome",
    "InfraError",
    "RunReport",
    "SeatSpec",
    "SubmitRefused",
    "SubmitRefusedError",
    "Submitted",
    "TableSpec",
    "TournamentError",
    "entrant_labels",
    "prepare_run",
    "resolve_settings",
    "run_table",
    "run_tournament",
    "schedule_for",
    "settings_summary",
    "submit",
    "tournament_status",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home, __name__), name)
