"""Running a knockout (``referee tournament run --format knockout``), stage by stage.

The bracket comes from the pure pairing (take5_arena/referee/tournament/plan/knockout.py); staged.py
plays it as it plays a Swiss's rounds: each stage (a round's heats, a tie-break, the final) is
stored as ``knockout-KEY-NNNN`` (KEY identifies the entrants, the settings and the seeding) before
it is played, paired again from the recorded results at every start and checked against the stored
one, and paired only once every game of the stages before it is recorded (so a killed run resumes
exactly, and anyone can replay the bracket from the published games).
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
from .pairings import swiss_standing
from .plan.adaptive import PlayedGame
from .plan.deals import Dealer
from .plan.knockout import KnockoutSettings, Outcome, Stage, StageKind, replay
from .plan.settings import TournamentSettings
from .run.driver import Runner
from .run.table import run_table
from .staged import PairedStage, run_staged, stage_id, stage_key


@dataclass
class KnockoutReport:
    """How a knockout run ended: the stages paired (earlier runs' too) and, once decided, the
    outcome."""

    key: str
    stages: list[Stage] = field(default_factory=list)
    outcome: Outcome | None = None
    played: int = 0
    """Games played by this invocation."""
    unplayed: int = 0
    infra: list[tuple[str, InfraKind, str]] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0

    @property
    def complete(self) -> bool:
        return self.outcome is not None

    @property
    def exit_code(self) -> int:
        """0 decided; 1 games left unplayed (infrastructure: run again); 130 interrupted."""
        return run_exit_code(interrupted=self.interrupted, finished=self.complete)


def knockout_key(entrants: Sequence[str], ks: KnockoutSettings) -> str:
    """What identifies a knockout: its entrants and seeding, and every setting of its bracket."""
    return stage_key(
        [
            "knockout",
            sorted(entrants),
            ks.table_size,
            ks.through,
            ks.deals,
            ks.final_deals,
            ks.tiebreak_deals,
            ks.tiebreaks,
            ks.seed,
            ks.duplicate,
            list(ks.seeding) if ks.seeding is not None else None,
            ks.context,
        ]
    )


def knockout_definition(ks: KnockoutSettings) -> dict[str, Any]:
    """What draws a knockout besides its results (staged.py's ``Format.definition``)."""
    return {
        "format": "knockout",
        "table_size": ks.table_size,
        "advance": ks.through,
        "deals": ks.deals,
        "final_deals": ks.final_deals,
        "tiebreak_deals": ks.tiebreak_deals,
        "tiebreaks": ks.tiebreaks,
        "seed": ks.seed,
        "duplicate": ks.duplicate,
        "seeding": list(ks.seeding) if ks.seeding is not None else None,
        "authors": dict(ks.authors or {}),
    }


def stage_name(stage: Stage) -> str:
    if stage.kind is StageKind.FINAL:
        return f"stage {stage.number} (final)"
    if stage.kind is StageKind.TIEBREAK:
        return f"stage {stage.number} (tie-break of round {stage.round})"
    return f"stage {stage.number} (round {stage.round})"


@dataclass
class _Knockout:
    """The knockout as staged.py drives it."""

    entrants: list[str]
    ks: KnockoutSettings
    key: str
    qualified: dict[str, Any] | None = None
    """Where the field came from: the top ``top`` of the Swiss ``swiss`` (its prefix)."""
    stages: list[Stage] = field(default_factory=list)
    outcome: Outcome | None = None
    title = "knockout"

    def definition(self) -> dict[str, Any]:
        out = knockout_definition(self.ks)
        if self.qualified is not None:
            out["qualified"] = self.qualified
        return out

    @property
    def prefix(self) -> str:
        return f"knockout-{self.key}"

    def next(self, results: Sequence[Sequence[PlayedGame]]) -> PairedStage | None:
        bracket = replay(self.entrants, self.ks, results)
        self.stages, self.outcome = list(bracket.stages), bracket.outcome
        stage = bracket.next
        if stage is None:
            return None
        self.stages.append(stage)
        heats = [h for h in stage.heats if len(h.entrants) > 1]
        byes = ", ".join(e.rsplit("@", 1)[0] for e in stage.byes)
        what = {
            StageKind.HEATS: f"{len(heats)} heats",
            StageKind.FINAL: "the final",
            StageKind.TIEBREAK: f"{len(heats)} tie-break{'s' * (len(heats) != 1)}",
        }[stage.kind]
        return PairedStage(
            stage.number,
            stage_name(stage),
            stage.tables,
            stage.games,
            description=f"Knockout, {stage_name(stage)}: {what}, {len(stage.games)} games; "
            + "; ".join(f"{' '.join(h.entrants)} ({h.through} through)" for h in stage.heats),
            line=f"{stage_name(stage)}: {what}, {len(stage.games)} games"
            + (f", bye: {byes}" if byes else ""),
        )


def run_knockout(
    directory: str | Path,
    options: Mapping[str, Any] | None = None,
    *,
    bracket: Mapping[str, Any] | None = None,
    runner: Runner = run_table,
    log: Callable[[str], None] = lambda line: None,
    retry_delay: float = 2.0,
) -> KnockoutReport:
    """Play a knockout until it is decided (module text). ``bracket`` holds KnockoutSettings
    fields (``advance``, ``deals``, ``final_deals``, ``tiebreak_deals``, ``tiebreaks``) and who
    plays: ``seeding`` (bot names, best first: only they play) or ``from_swiss`` (N: the top N of
    the tournament's latest finished Swiss, in its order), else every current entrant, seeded by
    the seed. The table size, seed, duplicate deals and game settings are the tournament's."""
    given = dict(bracket or {})

    def start(
        store: Store, settings: TournamentSettings, versions: list[EntrantVersion], dealer: Dealer
    ) -> _Knockout:
        qualified: dict[str, Any] = {}
        seeding = _field(
            store, versions, given.pop("seeding", None), given.pop("from_swiss", None), qualified
        )
        entrants = sorted(seeding) if seeding is not None else sorted(v.key for v in versions)
        ks = KnockoutSettings(
            table_size=settings.players,
            seed=settings.seed,
            duplicate=settings.duplicate,
            context=settings.game_context(),
            authors=settings.authors(versions),
            seeding=seeding,
            **given,
        )
        key = knockout_key(entrants, ks)
        source = dealer.source(f"knockout-{key}", settings.game_context())
        return _Knockout(
            entrants, dataclasses.replace(ks, deal_source=source), key, qualified or None
        )

    fmt, run = run_staged(
        directory, options, start, runner=runner, log=log, retry_delay=retry_delay
    )
    assert isinstance(fmt, _Knockout)
    report = KnockoutReport(fmt.key, fmt.stages, fmt.outcome, run.played, run.unplayed, run.infra)
    report.interrupted, report.seconds = run.interrupted, run.seconds
    return report


def _field(
    store: Store,
    versions: Sequence[EntrantVersion],
    names: Sequence[str] | None,
    from_swiss: int | None,
    qualified: dict[str, Any],
) -> tuple[str, ...] | None:
    """Who plays, best seed first (None: every entrant, drawn by the seed): the names given, or
    the top ``from_swiss`` of the latest finished Swiss."""
    by_name = {v.name: v.key for v in versions}
    if from_swiss is not None:
        if names is not None:
            raise TournamentError("give the field by --seeding or by --from-swiss, not both")
        try:
            prefix, standing = swiss_standing(store)
        except ValueError as error:
            raise TournamentError(f"--from-swiss: {error}") from None
        current = set(by_name.values())
        top = [e for e in standing if e in current][:from_swiss]
        if len(top) < 2:
            raise TournamentError(f"--from-swiss: {prefix} has fewer than two current bots")
        qualified.update(swiss=prefix, top=from_swiss)
        # those of the standing above the last qualifier passed over (no longer current: withdrawn
        # since the Swiss, or replaced by a later version): stored with the field, so that its
        # check takes the same top N and says whom it passed over
        passed = [e for e in standing[: standing.index(top[-1])] if e not in current]
        if passed:
            qualified["passed_over"] = passed
        return tuple(top)
    if names is None:
        return None
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise TournamentError(f"the seeding names no entrant: {', '.join(unknown)}")
    twice = sorted({n for n in names if list(names).count(n) > 1})
    if twice:
        raise TournamentError(f"the seeding names twice: {', '.join(twice)}")
    if len(names) < 2:
        raise TournamentError("a knockout needs two bots at least")
    return tuple(by_name[n] for n in names)


def knockout_id(key: str, number: int) -> str:
    return stage_id(f"knockout-{key}", number)


__all__ = [
    "KnockoutReport",
    "knockout_definition",
    "knockout_id",
    "knockout_key",
    "run_knockout",
    "stage_name",
]
