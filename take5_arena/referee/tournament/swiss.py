"""Running a Swiss (``referee tournament run --format swiss --rounds N``), round by round.

The pairings come from the pure pairing (take5_arena/referee/tournament/plan/swiss.py); this module
plays them with the tournament machinery (table specs, executors, retries of infrastructure
failures, the store) and keeps the store the source of truth, as settle.py does for its batches:

* each round is saved as a schedule of its own, ``swiss-KEY-NNNN`` (KEY identifies the entrants, the
  game settings and the seed), *before* any of its games is played;
* every start pairs every round again from the recorded results (:func:`~.plan.swiss.next_round`)
  and compares its tables with the round stored (by seat, so that a key revealed in between
  changes nothing): a stored round that its results do not give (the store changed under it)
  stops the run with one line rather than mixing two Swisses;
* a round is paired only when every game of the rounds before it is recorded, so a run killed at
  any point (SIGKILL included) and started again plays exactly the rounds an uninterrupted run
  would have (given the same results).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..kinds import InfraKind, RunStatus
from ..store import Store
from .errors import TournamentError
from .plan.deals import Dealer
from .plan.schedule import ScheduleError
from .plan.settings import TournamentSettings
from .plan.swiss import SwissRound, SwissSettings, next_round, standing_order, standings
from .round_robin import executor_info, prepare_run
from .run.driver import Runner, TableDriver, table_specs
from .run.executors import ExecutorInfo, open_executor
from .run.lifecycle import tournament_run
from .run.table import run_table
from .settle import played_games


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
        if self.interrupted:
            return 130
        return 0 if self.complete else 1


def swiss_key(entrants: Sequence[str], ss: SwissSettings) -> str:
    """What identifies a Swiss: its entrants, table size, seed, duplicate deals, game settings."""
    text = json.dumps(
        [
            "swiss",
            sorted(entrants),
            ss.table_size,
            ss.seed,
            ss.duplicate,
            ss.short_table,
            ss.context,
        ],
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()


def round_id(key: str, number: int) -> str:
    return f"swiss-{key}-{number:04d}"


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
    directory = Path(directory)
    started = time.perf_counter()
    with Store(directory) as store:
        try:
            settings, versions, _, dealer = prepare_run(store, options or {})
            keys = {v.id: v.key for v in versions}
            entrants = sorted(keys.values())
            ss = SwissSettings(
                table_size=settings.players,
                seed=settings.seed,
                duplicate=settings.duplicate,
                context=settings.game_context(),
                authors=settings.authors(versions),
            )
            report = SwissReport(swiss_key(entrants, ss), rounds)
            ss = dataclasses.replace(
                ss, deals=dealer.source(f"swiss-{report.key}", settings.game_context())
            )
            info = executor_info(settings)
            with tournament_run(directory, store, settings, info) as run:
                run_id = run.begin(f"swiss-{report.key}", 0, lambda: report.played)
                try:
                    with open_executor(info, settings.tables_at_once) as (executor, info):
                        _Rounds(store, executor, info, settings, ss, report, run_id, dealer).play(
                            entrants, keys, runner, log, retry_delay
                        )
                    run.status = (
                        RunStatus.INTERRUPTED
                        if report.interrupted
                        else RunStatus.FINISHED
                        if report.complete
                        else RunStatus.INCOMPLETE
                    )
                finally:
                    report.seconds = time.perf_counter() - started
            report.interrupted = report.interrupted or run.interrupted
            return report
        except ScheduleError as error:
            raise TournamentError(str(error)) from None


@dataclass
class _Rounds:
    """The rounds of one run: pair (or check the stored pairing), save, play."""

    store: Store
    executor: concurrent.futures.Executor
    info: ExecutorInfo
    settings: TournamentSettings
    ss: SwissSettings
    report: SwissReport
    run_id: str
    dealer: Dealer

    def play(
        self,
        entrants: Sequence[str],
        keys: Mapping[int, str],
        runner: Runner,
        log: Callable[[str], None],
        retry_delay: float,
    ) -> None:
        ids = {key: version_id for version_id, key in keys.items()}
        context = self.settings.game_context()
        of_rounds: set[str] = set()  # the game ids of the rounds so far
        self._rounds(entrants, keys, ids, context, of_rounds, runner, log, retry_delay)
        played = [g for g in played_games(self.store, keys) if g.game_id in of_rounds]
        self.report.points = standings(entrants, played, self.report.rounds, self.ss)
        self.report.standing = standing_order(entrants, self.report.points, self.ss)

    def _rounds(
        self,
        entrants: Sequence[str],
        keys: Mapping[int, str],
        ids: Mapping[str, int],
        context: Any,
        of_rounds: set[str],
        runner: Runner,
        log: Callable[[str], None],
        retry_delay: float,
    ) -> None:
        store, report, settings = self.store, self.report, self.settings
        for number in range(1, report.wanted + 1):
            played = [g for g in played_games(store, keys) if g.game_id in of_rounds]
            rnd = next_round(entrants, self.ss, report.rounds, played)
            sid = round_id(report.key, number)
            stored = store.schedules.games(sid)
            # tables by seat, not game ids: a secret key revealed since changes the ids of what
            # would be dealt now, not the tables
            seating = sorted((t.index, tuple(ids[k] for k in t.seats)) for t in rnd.tables)
            if stored and sorted({(g.table_no, g.seats) for g in stored}) != seating:
                raise TournamentError(
                    f"round {number} of this Swiss ({sid}) is stored with other tables than its "
                    "results give: the store was changed under it"
                )
            if not stored:
                store.schedules.save(
                    sid,
                    [
                        {**g.to_dict(), "seats": [ids[k] for k in g.seats], "settings": context}
                        for g in rnd.games
                    ],
                    description=f"Swiss, round {number}: {len(rnd.tables)} tables, "
                    f"{len(rnd.games)} games, byes: {', '.join(rnd.byes) or 'none'}",
                    settings=settings.to_json(),
                    entrants=list(entrants),
                )
                stored = store.schedules.games(sid)
            report.rounds.append(rnd)
            of_rounds.update(g.game_id for g in stored)
            byes = ", ".join(e.rsplit("@", 1)[0] for e in rnd.byes)
            log(
                f"round {number}: {len(rnd.tables)} tables"
                + (f", bye: {byes}" if byes else "")
                + (f", {rnd.repeats} repeated meetings" if rnd.repeats else "")
            )
            if any(g.status == "pending" for g in stored):
                driver = TableDriver(
                    store,
                    self.executor,
                    self.info,
                    settings,
                    run_id=self.run_id,
                    runner=runner,
                    retry_delay=retry_delay,
                )
                driver.run(table_specs(store, sid, settings, dealer=self.dealer))
                report.played += driver.played
                report.infra += driver.infra
                if driver.interrupted:
                    report.interrupted = True
                    return
                unplayed = sum(g.status == "pending" for g in store.schedules.games(sid))
                if unplayed:  # the next pairing needs these results: stop, the next run retries
                    report.unplayed = unplayed
                    return


__all__ = ["SwissReport", "round_id", "run_swiss", "swiss_key"]
