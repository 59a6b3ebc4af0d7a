"""Every tournament format ends a run with the same exit codes (docs/organisers/command-line.md):
0 it finished, 1 it did not (games left unplayed, a budget ran out: run again), 130 interrupted;
one rule (kinds.run_exit_code) that each format's report only feeds."""

from __future__ import annotations

import pytest

from take5_arena.referee.kinds import run_exit_code
from take5_arena.referee.tournament.knockout import KnockoutReport
from take5_arena.referee.tournament.settle import SettleReport, StopReason
from take5_arena.referee.tournament.swiss import SwissReport


def test_the_rule() -> None:
    assert run_exit_code(interrupted=False, finished=True) == 0
    assert run_exit_code(interrupted=False, finished=False) == 1
    assert run_exit_code(interrupted=True, finished=True) == 130
    assert run_exit_code(interrupted=True, finished=False) == 130


@pytest.mark.parametrize("interrupted", [False, True])
def test_each_format_reports_by_it(interrupted: bool) -> None:
    stop = 130 if interrupted else None
    swiss = SwissReport("k", wanted=0, interrupted=interrupted)
    assert swiss.exit_code == (stop or 0)
    swiss.unplayed = 2
    assert swiss.exit_code == (stop or 1)
    knockout = KnockoutReport("k", interrupted=interrupted)  # undecided
    assert knockout.exit_code == (stop or 1)
    settled = SettleReport("k", reason=StopReason.SETTLED, interrupted=interrupted)
    assert settled.exit_code == (stop or 0)
    budget = SettleReport("k", reason=StopReason.BUDGET, interrupted=interrupted)
    assert budget.exit_code == (stop or 1)
