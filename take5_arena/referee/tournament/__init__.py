"""Round-robin tournaments of submitted bots: the schedule (schedule), where tables are played
(executors), the settings (settings), submitting (submission), one table's games (table), its
bots' archives on the workers (shipping), the table specs and the loop that plays them (driver), a
run (run), a run until the ranking is settled (settle, adaptive) and reading a tournament back
(status); run.py's docstring says who does what.

``from take5_arena.referee.tournament import submit, run_tournament, ...``: names are loaded on
first use (PEP 562), so that importing the package costs nothing at start-up (the schedule needs
numpy).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .driver import Progress, TableDriver, table_specs
    from .errors import SubmitRefusedError, TournamentError
    from .run import RunReport, prepare_run, run_tournament
    from .settings import TournamentSettings
    from .settle import SettleReport, StopReason, run_until_settled
    from .status import entrant_labels, tournament_status
    from .submission import Submitted, submit
    from .table import GameOutcome, SeatSpec, TableSpec, play_table, run_table

#: public name -> the module of this package that defines it
_HOMES: dict[str, str] = {
    "GameOutcome": ".table",
    "Progress": ".driver",
    "RunReport": ".run",
    "SeatSpec": ".table",
    "SettleReport": ".settle",
    "StopReason": ".settle",
    "SubmitRefusedError": ".errors",
    "Submitted": ".submission",
    "TableDriver": ".driver",
    "TableSpec": ".table",
    "TournamentError": ".errors",
    "TournamentSettings": ".settings",
    "entrant_labels": ".status",
    "play_table": ".table",
    "prepare_run": ".run",
    "run_table": ".table",
    "run_tournament": ".run",
    "run_until_settled": ".settle",
    "submit": ".submission",
    "table_specs": ".driver",
    "tournament_status": ".status",
}

__all__ = [
    "GameOutcome",
    "Progress",
    "RunReport",
    "SeatSpec",
    "SettleReport",
    "StopReason",
    "SubmitRefusedError",
    "Submitted",
    "TableDriver",
    "TableSpec",
    "TournamentError",
    "TournamentSettings",
    "entrant_labels",
    "play_table",
    "prepare_run",
    "run_table",
    "run_tournament",
    "run_until_settled",
    "submit",
    "table_specs",
    "tournament_status",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home, __name__), name)
