"""Round-robin tournaments of submitted bots, in two halves: the plan (plan/: the settings, the
schedule, the deals, the adaptive scheduler; pure data) and the run (run/: one table's games, the
loop that plays the tables, the executors, the shipping of archives, the Dask workers' plugin).
Above both: submitting a bot (submission), a full run (round_robin), a run until the ranking is
settled (settle), a Swiss round by round (swiss), a knockout stage by stage (knockout) and
reading a tournament back (status);
round_robin.py's docstring says who does what.

``from take5_arena.referee.tournament import submit, run_tournament, ...``: names are loaded on
first use (PEP 562), so that importing the package costs nothing at start-up (the schedule needs
numpy).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .errors import SubmitRefusedError, TournamentError
    from .knockout import KnockoutReport, run_knockout
    from .plan.settings import TournamentSettings
    from .round_robin import RunReport, prepare_run, run_tournament
    from .run.driver import Progress, TableDriver, table_specs
    from .run.spec import GameOutcome, SeatSpec, TableSpec
    from .run.table import play_table, run_table
    from .settle import SettleReport, StopReason, run_until_settled
    from .status import entrant_labels, tournament_status
    from .submission import Submitted, submit
    from .swiss import SwissReport, run_swiss

#: public name -> the module of this package that defines it
_HOMES: dict[str, str] = {
    "GameOutcome": ".run.spec",
    "KnockoutReport": ".knockout",
    "Progress": ".run.driver",
    "RunReport": ".round_robin",
    "SeatSpec": ".run.spec",
    "SettleReport": ".settle",
    "StopReason": ".settle",
    "SubmitRefusedError": ".errors",
    "Submitted": ".submission",
    "SwissReport": ".swiss",
    "TableDriver": ".run.driver",
    "TableSpec": ".run.spec",
    "TournamentError": ".errors",
    "TournamentSettings": ".plan.settings",
    "entrant_labels": ".status",
    "play_table": ".run.table",
    "prepare_run": ".round_robin",
    "run_knockout": ".knockout",
    "run_swiss": ".swiss",
    "run_table": ".run.table",
    "run_tournament": ".round_robin",
    "run_until_settled": ".settle",
    "submit": ".submission",
    "table_specs": ".run.driver",
    "tournament_status": ".status",
}

__all__ = [
    "GameOutcome",
    "KnockoutReport",
    "Progress",
    "RunReport",
    "SeatSpec",
    "SettleReport",
    "StopReason",
    "SubmitRefusedError",
    "Submitted",
    "SwissReport",
    "TableDriver",
    "TableSpec",
    "TournamentError",
    "TournamentSettings",
    "entrant_labels",
    "play_table",
    "prepare_run",
    "run_knockout",
    "run_swiss",
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
