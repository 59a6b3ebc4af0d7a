"""Running a tournament: the schedule of the current entrant versions, then every game of it that is
not recorded yet, and resuming where a run stopped.

A tournament is a directory holding its store (take5_arena/referee/store/: settings, entrants and
their versions, schedules, games and their records). The package's modules, by what they hold:

* plan/: what is played, as data: settings.py (one frozen type, from the command line to the game),
  schedule.py (the schedule they make), deals.py, adaptive.py (the batches of ``--until-settled``),
  swiss.py (the rounds of ``--format swiss``);
* submission.py: ``referee submit`` -> :func:`~take5_arena.referee.tournament.submission.submit`;
* run/: playing it: table.py (one table's games, the unit of work an executor runs:
  :func:`run_table`, on spec.py's data), shipping.py and archives.py (how its bots' archives reach
  the worker that plays it, once per worker), launchers.py (the Docker launchers), driver.py (the
  table specs of a stored schedule and the one loop that plays them, also for ``--until-settled``
  and the arena's ladder), executors.py, workers.py (the Dask workers' plugin), lifecycle.py (the
  run lock and one run's life in the store, for each format);
* round_robin.py (this module): ``referee tournament run`` -> :func:`run_tournament`;
* settle.py: ``--until-settled``, batch by batch; plan/adaptive.py chooses the batches;
* swiss.py: ``--format swiss``, round by round; plan/swiss.py pairs the rounds;
* status.py: ``referee tournament status`` -> :func:`tournament_status`.

Running: each table (its duplicate set) is a :class:`TableSpec` run by :func:`run_table` on any
``concurrent.futures`` executor (executors.py), by the :class:`~.driver.TableDriver`: at most
``concurrency`` tables in flight, each finished game to the store in one transaction as soon as
the referee sees it, tables with infrastructure failures back in the queue with a backoff.

Resume: the store is the source of truth. A run plays the scheduled games that have no result;
results are unique per game id, so nothing is recorded twice; a game cut off by a kill is simply
not recorded, and the next run plays it again from its seed.

Faults: a bot's fault (timeout, crash, illegal answer, resource limit, ...) is in the game record
and counts against that bot (the match layer, take5_arena/referee/match/play.py). An infrastructure
failure (no Docker engine, an image that cannot be built any more, the referee's own error) rates no
one: the game is not recorded, the failure is (``infra_failures``), and the game is retried later in
the run, and again in the next run.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from take5.shuffle import KEY_BYTES

from ..kinds import DealMode, InfraKind, RunStatus, SandboxKind, run_exit_code
from ..store import EntrantVersion, Store
from ..store.deals import SeasonKey
from .errors import TournamentError
from .plan.deals import Dealer
from .plan.schedule import Schedule
from .plan.settings import TournamentSettings, schedule_id
from .run.driver import Progress, Runner, TableDriver, table_specs
from .run.executors import ExecutorInfo, open_executor, parse_executor, resolve_auto
from .run.lifecycle import tournament_run
from .run.table import run_table

#: The deal identities' namespace of fixed schedules (deals.py)
SCHEDULE_NAMESPACE = "schedule"


class RunProgress(Progress):
    """What ``referee tournament run`` shows (take5_arena/cli/progress.py): the driver's events,
    and the run's start and end."""

    def start(self, report: RunReport, store: Store) -> None:
        return None

    def stop(self) -> None:
        return None


@dataclass
class RunReport:
    schedule: Schedule
    schedule_id: str
    total: int
    done_before: int
    played: int = 0
    infra: list[tuple[str, InfraKind, str]] = field(default_factory=list)
    """(game id, kind, detail) of each infrastructure failure."""
    unplayed: int = 0  # games still pending at the end (infrastructure)
    interrupted: bool = False
    seconds: float = 0.0
    smoke_elsewhere: list[str] = field(default_factory=list)
    """Entrant versions whose smoke games were not played at this run's shape (submitted before
    its table size, game or time limits were set): submitting them again tests them at it."""

    @property
    def done(self) -> int:
        return self.done_before + self.played

    @property
    def exit_code(self) -> int:
        """0 every game recorded; 1 games left unplayed (infrastructure); 130 interrupted."""
        return run_exit_code(interrupted=self.interrupted, finished=not self.unplayed)


def prepare_run(
    store: Store, options: Mapping[str, Any], *, preview: bool = False
) -> tuple[TournamentSettings, list[EntrantVersion], Schedule, Dealer]:
    """The settings (the store's, with ``options`` given now), the current entrant versions, the
    schedule they make and the dealer of its deals; TournamentError when they cannot make one.

    ``preview`` (``--dry-run``, a store opened read-only): secret deals from a throwaway key, so
    that neither the tournament's key is made nor its seeds are shown; the seating is the real
    one."""
    settings = TournamentSettings.from_json(store.settings.get()).updated(options)
    versions = store.versions.current()
    if len(versions) < settings.players:
        raise TournamentError(
            f"{len(versions)} entrant{'s' * (len(versions) != 1)} cannot fill a table of "
            f"{settings.players}: submit more bots (`referee submit BOT_DIR --name NAME "
            "--tournament DIR`)"
        )
    if settings.sandbox == SandboxKind.LOCAL:
        docker_only = [v.name for v in versions if v.kind == "dockerfile"]
        if docker_only:
            raise TournamentError(f"{', '.join(docker_only)} can only run with --sandbox docker")
    if preview and settings.deals is DealMode.SECRET:
        dealer = Dealer(settings.seed, SeasonKey(0, "", secrets.token_bytes(KEY_BYTES)))
    else:
        dealer = Dealer.of(store, settings)
    deals = dealer.source(SCHEDULE_NAMESPACE, settings.game_context())
    return settings, versions, settings.schedule(versions, deals), dealer


def executor_info(settings: TournamentSettings) -> ExecutorInfo:
    """Where this run's tables play, from the settings (``auto`` resolved); a bad value is a
    TournamentError."""
    try:
        return parse_executor(
            resolve_auto(
                settings.executor, sandbox=settings.sandbox, concurrency=settings.tables_at_once
            )
        )
    except ValueError as error:
        raise TournamentError(str(error)) from None


def run_tournament(
    directory: str | os.PathLike[str],
    options: Mapping[str, Any] | None = None,
    *,
    runner: Runner = run_table,
    progress: RunProgress | None = None,
    retry_delay: float = 2.0,
) -> RunReport:
    """Play every game of the current schedule that is not recorded yet (see the module text).

    ``options``: settings given now (the JSON keys of TournamentSettings; None: not given); they
    are saved in the tournament. ``progress``: what take5_arena/cli/progress.py shows, or None.
    ``runner``: the function an executor runs for a table (tests replace it).
    """
    directory = Path(directory)
    started = time.perf_counter()
    with Store(directory) as store:
        settings, versions, schedule, dealer = prepare_run(store, options or {})
        info = executor_info(settings)
        with tournament_run(directory, store, settings, info) as run:
            sid = schedule_id(schedule)
            ids = {v.key: v.id for v in versions}
            context = settings.game_context()
            store.schedules.save(
                sid,
                [
                    {**g.to_dict(), "seats": [ids[k] for k in g.seats], "settings": context}
                    for g in schedule.games
                ],
                description=schedule.describe(),
                settings=settings.to_json(),
                entrants=[v.key for v in versions],
            )
            specs = table_specs(store, sid, settings, dealer=dealer)
            counts = store.schedules.progress(sid)
            report = RunReport(schedule, sid, counts["total"], counts["done"])
            shape = settings.smoke_shape()
            report.smoke_elsewhere = [v.key for v in versions if v.validation.get("shape") != shape]
            run_id = run.begin(sid, counts["total"], lambda: store.schedules.progress(sid)["done"])
            try:
                if progress is not None:
                    progress.start(report, store)
                with open_executor(info, settings.tables_at_once) as (executor, info):
                    driver = TableDriver(
                        store,
                        executor,
                        info,
                        settings,
                        run_id=run_id,
                        runner=runner,
                        progress=progress,
                        retry_delay=retry_delay,
                    )
                    try:
                        driver.run(specs)
                    finally:
                        report.played, report.infra = driver.played, driver.infra
                        report.interrupted = driver.interrupted
                report.unplayed = report.total - store.schedules.progress(sid)["done"]
                run.status = (
                    RunStatus.INTERRUPTED
                    if report.interrupted
                    else RunStatus.FINISHED
                    if not report.unplayed
                    else RunStatus.INCOMPLETE
                )
            finally:
                if progress is not None:
                    progress.stop()
                report.seconds = time.perf_counter() - started
        report.interrupted = report.interrupted or run.interrupted
        return report
