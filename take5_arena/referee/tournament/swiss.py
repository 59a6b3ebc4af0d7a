"""Running a Swiss (``referee tournament run --format swiss --rounds N``), round by round.

The pairings come from the pure pairing (take5_arena/referee/tournament/plan/swiss.py); staged.py
plays them, round by round, as it plays a knockout's stages: each round is stored as
``swiss-KEY-NNNN`` (KEY identifies the entrants, the game settings and the seed) before it is
played, paired again from the recorded results at every start and checked against the stored one,
and paired only once every game of the rounds before it is recorded (so a killed run resumes
exactly).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..kinds import InfraKind, run_exit_code
from ..store import EntrantVersion, Store
from .errors import TournamentError
from .plan.adaptive import PlayedGame
from .plan.deals import Dealer
from .plan.settings import TournamentSettings
from .plan.swiss import SwissRound, SwissSettings, next_round, standing_order, standings
from .run.driver import Runner
from .run.table import run_table
from .staged import PairedStage, run_staged, stage_id, stage_key


@dataclass
class SwissReport:
    """How a Swiss run ended: the rounds paired (``rounds``: all of them, also earlier runs')."""

    key: str
    wanted: int
    rounds: list[SwissRound] = field(default_factory=list)
    played: int = 0
    """Games played by this invocation."""
    unplayed: int = 0
    infra: list[tuple[str, InfraKind, str]] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0
    points: dict[str, float] = field(default_factory=dict)
    """Points per entrant after the rounds recorded (plan/swiss.py's ``standings``: the games of
    its rounds and the byes)."""
    standing: list[str] = field(default_factory=list)
    """The entrants best first, ties as the pairing breaks them."""

    @property
    def complete(self) -> bool:
        return len(self.rounds) == self.wanted and not self.unplayed and not self.interrupted

    @property
    def exit_code(self) -> int:
        """0 every round played; 1 games left unplayed (infrastructure: run again); 130
        interrupted."""
        return run_exit_code(interrupted=self.interrupted, finished=self.complete)


def swiss_key(entrants: Sequence[str], ss: SwissSettings) -> str:
    """What identifies a Swiss: its entrants, table size, seed, duplicate deals, game settings."""
    return stage_key(
        [
            "swiss",
            sorted(entrants),
            ss.table_size,
            ss.seed,
            ss.duplicate,
            ss.short_table,
            ss.context,
        ]
    )


def swiss_definition(ss: SwissSettings) -> dict[str, Any]:
    """What pairs a Swiss besides its results (staged.py's ``Format.definition``)."""
    return {
        "format": "swiss",
        "table_size": ss.table_size,
        "seed": ss.seed,
        "duplicate": ss.duplicate,
        "short_table": ss.short_table,
        "authors": dict(ss.authors or {}),
    }


def round_id(key: str, number: int) -> str:
    return stage_id(f"swiss-{key}", number)


@dataclass
class _Swiss:
    """The Swiss as staged.py drives it: ``wanted`` rounds, each paired by next_round."""

    entrants: list[str]
    ss: SwissSettings
    key: str
    wanted: int
    rounds: list[SwissRound] = field(default_factory=list)

    title = "Swiss"

    def definition(self) -> dict[str, Any]:
        return swiss_definition(self.ss)

    @property
    def prefix(self) -> str:
        return f"swiss-{self.key}"

    def next(self, results: Sequence[Sequence[PlayedGame]]) -> PairedStage | None:
        del self.rounds[len(results) :]  # the rounds whose results are in, then the next
        if len(results) == self.wanted:
            return None
        played = [g for rs in results for g in rs]
        rnd = next_round(self.entrants, self.ss, self.rounds, played)
        self.rounds.append(rnd)
        byes = ", ".join(e.rsplit("@", 1)[0] for e in rnd.byes)
        return PairedStage(
            rnd.number,
            f"round {rnd.number}",
            rnd.tables,
            rnd.games,
            description=f"Swiss, round {rnd.number}: {len(rnd.tables)} tables, "
            f"{len(rnd.games)} games, byes: {', '.join(rnd.byes) or 'none'}",
            line=f"round {rnd.number}: {len(rnd.tables)} tables"
            + (f", bye: {byes}" if byes else "")
            + (f", {rnd.repeats} repeated meetings" if rnd.repeats else ""),
        )


def run_swiss(
    directory: str | Path,
    options: Mapping[str, Any] | None = None,
    *,
    rounds: int,
    runner: Runner = run_table,
    log: Callable[[str], None] = lambda line: None,
    retry_delay: float = 2.0,
) -> SwissReport:
    """Play a Swiss of ``rounds`` rounds among the current entrants (module text); ``log`` gets one
    line per round."""
    if rounds < 1:
        raise TournamentError(f"a Swiss has at least one round, not {rounds}")

    def start(
        store: Store, settings: TournamentSettings, versions: list[EntrantVersion], dealer: Dealer
    ) -> _Swiss:
        entrants = sorted(v.key for v in versions)
        ss = SwissSettings(
            table_size=settings.players,
            seed=settings.seed,
            duplicate=settings.duplicate,
            context=settings.game_context(),
            authors=settings.authors(versions),
        )
        key = swiss_key(entrants, ss)
        ss = dataclasses.replace(ss, deals=dealer.source(f"swiss-{key}", settings.game_context()))
        return _Swiss(entrants, ss, key, rounds)

    fmt, run = run_staged(
        directory, options, start, runner=runner, log=log, retry_delay=retry_delay
    )
    assert isinstance(fmt, _Swiss)
    report = SwissReport(fmt.key, rounds, fmt.rounds, run.played, run.unplayed, run.infra)
    report.interrupted, report.seconds = run.interrupted, run.seconds
    played = [g for rs in run.results for g in rs]
    report.points = standings(fmt.entrants, played, fmt.rounds[: len(run.results)], fmt.ss)
    report.standing = standing_order(fmt.entrants, report.points, fmt.ss)
    return report


__all__ = ["SwissReport", "round_id", "run_swiss", "swiss_definition", "swiss_key"]
