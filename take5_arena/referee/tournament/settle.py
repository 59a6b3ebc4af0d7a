"""Running a tournament until its ranking is settled (``referee tournament run --until-settled``).

The tables come from the pure scheduler (take5_arena/referee/tournament/plan/adaptive.py), batch by
batch; this module plays them with the tournament machinery (take5_arena/referee/tournament/: table
specs, executors, retries of infrastructure failures, the store) and keeps the store the source of
truth:

* each batch is saved as a schedule of its own, ``settle-KEY-NNNN`` (KEY identifies the entrants,
  the game settings, the seed and the scheduler's settings), *before* any of its games is played;
* on start, the batches already saved are finished first (their games not yet recorded are played),
  and only then is the scheduler asked for the next batch, from every recorded game among the
  current entrants. A run killed at any point (SIGKILL included) and started again therefore
  schedules exactly the tables the uninterrupted run would have (given the same results).

The ratings come from a ranking function passed in by the caller (the app layer passes the
leaderboard's), never from an import of the leaderboard here.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..kinds import InfraKind, RunStatus, StrEnum, run_exit_code
from ..store import Store
from .errors import TournamentError
from .plan.adaptive import (
    Decision,
    PairState,
    PlayedGame,
    RankFn,
    SettleError,
    SettleSettings,
    decide,
    default_budget,
)
from .plan.deals import Dealer
from .plan.settings import TournamentSettings
from .round_robin import executor_info, prepare_run
from .run.driver import Runner, play_schedule
from .run.executors import ExecutorInfo, open_executor
from .run.lifecycle import tournament_run
from .run.table import run_table


class StopReason(StrEnum):
    """Why ``--until-settled`` stopped."""

    SETTLED = "settled"
    """Every pair that counts reached the confidence."""
    BUDGET = "budget"
    """The game budget ran out first."""
    UNPLAYED = "unplayed"
    """Games could not be played (infrastructure): the next decision needs them."""
    INTERRUPTED = "interrupted"


@dataclass
class SettleReport:
    """How a run ended, and why (``reason``)."""

    key: str
    reason: StopReason | None = None
    decision: Decision | None = None
    batches: int = 0
    games: int = 0
    """Games of this run's batches (recorded or not)."""
    played: int = 0
    """Games played by this invocation."""
    unplayed: int = 0
    infra: list[tuple[str, InfraKind, str]] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0

    @property
    def exit_code(self) -> int:
        """0 settled; 1 the budget ran out first, or games could not be played; 130 interrupted."""
        finished = self.reason is StopReason.SETTLED
        return run_exit_code(interrupted=self.interrupted, finished=finished)


def batch_id(key: str, batch: int) -> str:
    return f"settle-{key}-{batch:04d}"


def played_games(store: Store, keys: Mapping[int, str]) -> list[PlayedGame]:
    """Every recorded game whose seats are all current entrants (version id -> key), by game id."""
    out = [
        PlayedGame(r.game_id, tuple(keys[v] for v in r.versions), tuple(r.places), r.duplicate_set)
        for r in store.results.seat_results()
        if all(v in keys for v in r.versions)
    ]
    return sorted(out, key=lambda g: g.game_id)


def describe(decision: Decision, games: int, labels: Mapping[str, str] | None = None) -> str:
    """One progress line: games so far and the pairs still open (entrants shown by ``labels``)."""
    open_pairs = [
        PairState(labels.get(p.upper, p.upper), labels.get(p.lower, p.lower), p.los, p.settled)
        if labels
        else p
        for p in decision.open_pairs
    ]
    if decision.stop:
        head = "settled" if decision.reason == "settled" else "budget spent"
    else:
        head = f"next {len(decision.tables)} table{'s' * (len(decision.tables) != 1)}"
    pairs = ", ".join(p.text() for p in open_pairs[:8]) + (" ..." if len(open_pairs) > 8 else "")
    return (
        f"after {games} games: {len(open_pairs)} of {len(decision.pairs)} pairs open"
        + (f" ({pairs})" if open_pairs else "")
        + f"; {head}"
    )


def run_until_settled(
    directory: str | Path,
    options: Mapping[str, Any] | None = None,
    *,
    rank: RankFn,
    confidence: float,
    budget: int | None = None,
    gauntlet: str | None = None,
    batch_tables: int | None = None,
    runner: Runner = run_table,
    log: Callable[[str], None] = lambda line: None,
    retry_delay: float = 2.0,
) -> SettleReport:
    """Play batches chosen by :func:`take5_arena.referee.tournament.plan.adaptive.decide` until it
    says stop (module text).

    ``gauntlet``: an entrant name; only its place is settled. ``budget``: games of this run (all
    batches, also those of earlier invocations). ``log`` gets one line per batch.
    """
    directory = Path(directory)
    started = time.perf_counter()
    with Store(directory) as store:
        try:
            settings, versions, _, dealer = prepare_run(store, options or {})
            keys = {v.id: v.key for v in versions}
            entrants = sorted(keys.values())
            target = None
            if gauntlet is not None:
                target = next((v.key for v in versions if v.name == gauntlet), None)
                if target is None:
                    raise TournamentError(f"gauntlet: no current entrant named {gauntlet!r}")
            ss = SettleSettings(
                table_size=settings.players,
                duplicate=settings.duplicate,
                seed=settings.seed,
                confidence=confidence,
                budget=budget,
                batch_tables=batch_tables,
                gauntlet=target,
                context=settings.game_context(),
                authors=settings.authors(versions),
            )
            report = SettleReport(ss.key(entrants))
            ss = dataclasses.replace(
                ss, deals=dealer.source(f"settle-{report.key}", settings.game_context())
            )
            info = executor_info(settings)
            with tournament_run(directory, store, settings, info) as run:
                run_id = run.begin(
                    f"settle-{report.key}",
                    budget or default_budget(len(entrants)),
                    lambda: report.played,
                )
                try:
                    with open_executor(info, settings.tables_at_once) as (executor, info):
                        batches = _Batches(
                            store, executor, info, settings, ss, report, run_id, dealer
                        )
                        batches.play(entrants, keys, rank, runner, log, retry_delay)
                    run.status = (
                        RunStatus.INTERRUPTED
                        if report.interrupted
                        else RunStatus.FINISHED
                        if report.reason in (StopReason.SETTLED, StopReason.BUDGET)
                        else RunStatus.INCOMPLETE
                    )
                finally:
                    report.seconds = time.perf_counter() - started
            if run.interrupted:
                report.interrupted, report.reason = True, StopReason.INTERRUPTED
            return report
        except SettleError as error:
            raise TournamentError(str(error)) from None


@dataclass
class _Batches:
    """The batches of one run: decide, save, play, until the scheduler says stop."""

    store: Store
    executor: concurrent.futures.Executor
    info: ExecutorInfo
    settings: TournamentSettings
    ss: SettleSettings
    report: SettleReport
    run_id: str
    dealer: Dealer

    def play(
        self,
        entrants: Sequence[str],
        keys: Mapping[int, str],
        rank: RankFn,
        runner: Runner,
        log: Callable[[str], None],
        retry_delay: float,
    ) -> None:
        store, report, settings = self.store, self.report, self.settings
        ids = {key: version_id for version_id, key in keys.items()}
        names = {
            key: key.rsplit("@", 1)[0] for key in entrants
        }  # current versions: the name says it
        context = settings.game_context()
        tables = 0
        batch = 0
        while True:
            sid = batch_id(report.key, batch)
            games = store.schedules.games(sid)
            if not games:  # not scheduled yet: every earlier batch is complete, decide the next one
                played = played_games(store, keys)
                decision = decide(
                    list(entrants),
                    played,
                    self.ss,
                    rank,
                    tables_so_far=tables,
                    games_so_far=report.games,
                )
                report.decision = decision
                log(describe(decision, len(played), names))
                if decision.stop:
                    report.reason = StopReason(decision.reason)
                    return
                store.schedules.save(
                    sid,
                    [
                        {**g.to_dict(), "seats": [ids[k] for k in g.seats], "settings": context}
                        for g in decision.games
                    ],
                    description=f"until settled, batch {batch}: {len(decision.tables)} tables, "
                    f"{len(decision.games)} games",
                    settings=settings.to_json(),
                    entrants=list(entrants),
                )
                games = store.schedules.games(sid)
            tables += len({g.table_no for g in games})
            report.games += len(games)
            report.batches = batch + 1
            if any(g.status == "pending" for g in games):
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
                report.played += driver.played
                report.infra += driver.infra
                if driver.interrupted:
                    report.interrupted, report.reason = True, StopReason.INTERRUPTED
                    return
                unplayed = sum(g.status == "pending" for g in store.schedules.games(sid))
                if unplayed:  # the next decision needs these results: stop, the next run retries
                    report.unplayed, report.reason = unplayed, StopReason.UNPLAYED
                    return
            batch += 1
