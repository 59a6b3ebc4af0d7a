"""Playing a format stage by stage, each stage paired from the results before it (the Swiss's
rounds, a knockout's heats, finals and tie-breaks): the one loop both formats share.

A format (:class:`Format`) is a pure pairing over the results so far (plan/swiss.py,
plan/knockout.py); this module plays it with the tournament machinery (table specs, executors,
retries of infrastructure failures, the store) and keeps the store the source of truth:

* each stage is saved as a schedule of its own, ``PREFIX-NNNN`` (PREFIX names the format and a key
  of its entrants and settings), *before* any of its games is played;
* every start pairs every stage again from the recorded results and compares its tables with the
  stage stored (by seat, so that a key revealed in between changes nothing): a stored stage that
  its results do not give (the store changed under it) stops the run with one line rather than
  mixing two competitions;
* a stage is paired only when every game of the stages before it is recorded, so a run killed at
  any point (SIGKILL included) and started again plays exactly the stages an uninterrupted run
  would have (given the same results).
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..kinds import InfraKind, RunStatus
from ..store import EntrantVersion, Store
from .errors import TournamentError
from .pairings import FORMAT_KEY
from .plan.adaptive import PlayedGame
from .plan.deals import Dealer
from .plan.schedule import ScheduledGame, ScheduleError, Seating
from .plan.settings import TournamentSettings
from .round_robin import executor_info, prepare_run
from .run.driver import Runner, play_schedule
from .run.executors import ExecutorInfo, open_executor
from .run.lifecycle import tournament_run
from .run.table import run_table
from .settle import played_games


@dataclass(frozen=True)
class PairedStage:
    """What the loop needs of a stage: its number (1 first), tables, games and the words for its
    stored schedule and its progress line."""

    number: int
    name: str
    """What a person calls it: "round 2", "stage 3 (tie-break)"."""
    tables: tuple[Seating, ...]
    games: tuple[ScheduledGame, ...]
    description: str
    line: str


class Format(Protocol):
    """A format's pairing, as the loop drives it."""

    @property
    def prefix(self) -> str:
        """Its stages are stored as ``PREFIX-NNNN``: it names the format and what identifies it."""

    @property
    def title(self) -> str:
        """The format's name in a sentence: "Swiss", "knockout"."""

    @property
    def entrants(self) -> Sequence[str]:
        """Who plays it (entrant version keys): stored with every stage."""

    def definition(self) -> dict[str, Any]:
        """What pairs it besides the results, as JSON (its ``format`` name first): stored with
        every stage, so that ``referee verify --tournament`` pairs every stage again
        (pairings.py)."""

    def next(self, results: Sequence[Sequence[PlayedGame]]) -> PairedStage | None:
        """The stage after those whose games are ``results`` (one list a stage), or None when
        the format is over."""


@dataclass
class StagedRun:
    """How a run of a staged format went."""

    stages: int = 0
    """Stages paired so far (earlier runs' too)."""
    results: list[list[PlayedGame]] = field(default_factory=list)
    """The recorded games of each stage fully played."""
    over: bool = False
    """The format said no stage follows."""
    played: int = 0
    """Games played by this invocation."""
    unplayed: int = 0
    infra: list[tuple[str, InfraKind, str]] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0


Start = Callable[[Store, TournamentSettings, list[EntrantVersion], Dealer], Format]
"""Makes the format from the run's store, settings, entrants and dealer."""


def stage_key(parts: Sequence[Any]) -> str:
    """12 hex digits that name one competition of a format (its stages' ``PREFIX`` is the format
    and this): a hash of what identifies it (its entrants and settings) as compact JSON with
    sorted keys, so that another field or setting is another competition, stored apart."""
    text = json.dumps(list(parts), sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()


def stage_id(prefix: str, number: int) -> str:
    return f"{prefix}-{number:04d}"


def run_staged(
    directory: str | Path,
    options: Mapping[str, Any] | None,
    start: Start,
    *,
    runner: Runner = run_table,
    log: Callable[[str], None] = lambda line: None,
    retry_delay: float = 2.0,
) -> tuple[Format, StagedRun]:
    """Play the format ``start`` makes among the current entrants, stage by stage (module text)."""
    directory = Path(directory)
    started = time.perf_counter()
    with Store(directory) as store:
        try:
            settings, versions, _, dealer = prepare_run(store, options or {})
            fmt = start(store, settings, versions, dealer)
            run = StagedRun()
            info = executor_info(settings)
            with tournament_run(directory, store, settings, info) as lifecycle:
                run_id = lifecycle.begin(fmt.prefix, 0, lambda: run.played)
                try:
                    with open_executor(info, settings.tables_at_once) as (executor, info):
                        keys = {v.id: v.key for v in versions}
                        _Stages(store, executor, info, settings, run_id, dealer, run).play(
                            fmt, keys, runner, log, retry_delay
                        )
                    lifecycle.status = (
                        RunStatus.INTERRUPTED
                        if run.interrupted
                        else RunStatus.FINISHED
                        if run.over
                        else RunStatus.INCOMPLETE
                    )
                finally:
                    run.seconds = time.perf_counter() - started
            run.interrupted = run.interrupted or lifecycle.interrupted
            return fmt, run
        except ScheduleError as error:
            raise TournamentError(str(error)) from None


@dataclass
class _Stages:
    """The stages of one run: pair (or check the stored pairing), save, play."""

    store: Store
    executor: concurrent.futures.Executor
    info: ExecutorInfo
    settings: TournamentSettings
    run_id: str
    dealer: Dealer
    run: StagedRun

    def play(
        self,
        fmt: Format,
        keys: Mapping[int, str],
        runner: Runner,
        log: Callable[[str], None],
        retry_delay: float,
    ) -> None:
        store, run, settings = self.store, self.run, self.settings
        ids = {key: version_id for version_id, key in keys.items()}
        context = settings.game_context()
        while True:
            stage = fmt.next(run.results)
            if stage is None:
                run.over = True
                return
            sid = stage_id(fmt.prefix, stage.number)
            stored = store.schedules.games(sid)
            # tables by seat, not game ids: a secret key revealed since changes the ids of what
            # would be dealt now, not the tables
            seating = sorted((t.index, tuple(ids[k] for k in t.seats)) for t in stage.tables)
            if stored and sorted({(g.table_no, g.seats) for g in stored}) != seating:
                raise TournamentError(
                    f"{stage.name} of this {fmt.title} ({sid}) is stored with other tables than "
                    "its results give: the store was changed under it"
                )
            if not stored:
                store.schedules.save(
                    sid,
                    [
                        {**g.to_dict(), "seats": [ids[k] for k in g.seats], "settings": context}
                        for g in stage.games
                    ],
                    description=stage.description,
                    settings={**settings.to_json(), FORMAT_KEY: fmt.definition()},
                    entrants=sorted(fmt.entrants),
                )
                stored = store.schedules.games(sid)
            run.stages = stage.number
            log(stage.line)
            if any(g.status == "pending" for g in stored):
                driver = play_schedule(
                    store,
                    self.executor,
                    self.info,
                    settings,
                    sid,
                    run_id=self.run_id,
                    dealer=self.dealer,
                    runner=runner,
                    retry_delay=retry_delay,
                )
                run.played += driver.played
                run.infra += driver.infra
                if driver.interrupted:
                    run.interrupted = True
                    return
                unplayed = sum(g.status == "pending" for g in store.schedules.games(sid))
                if unplayed:  # the next pairing needs these results: stop, the next run retries
                    run.unplayed = unplayed
                    return
            of_stage = {g.game_id for g in stored}
            run.results.append([g for g in played_games(store, keys) if g.game_id in of_stage])


__all__ = ["Format", "PairedStage", "StagedRun", "Start", "run_staged", "stage_id", "stage_key"]
