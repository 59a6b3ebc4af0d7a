"""Running a tournament: the schedule of the current entrant versions, then every game of it that is
not recorded yet, and resuming where a run stopped.

A tournament is a directory holding its store (take5_arena/referee/store/: settings, entrants and their
versions, schedules, games and their records). The package's modules, by what they hold:

* settings.py: defaults, stored and given settings, the schedule they make;
* submission.py: ``referee submit`` -> :func:`~take5_arena.referee.tournament.submission.submit`;
* table.py: one table's games, the unit of work an executor runs (:func:`run_table`);
* run.py (this module): ``referee tournament run`` -> :func:`run_tournament` and its loop;
* status.py: ``referee tournament status`` -> :func:`tournament_status`.

Running: each table (its duplicate set) is a :class:`TableSpec` run by :func:`run_table` on any
``concurrent.futures`` executor (executors.py). Each finished game goes to the store in one
transaction as soon as the referee sees it (with the local thread executor: game by game, while the
table plays on). :class:`_Driver` is the loop: it keeps at most ``concurrency`` tables in flight,
stores outcomes, and puts tables with infrastructure failures back in the queue with a backoff.

Resume: the store is the source of truth. A run plays the scheduled games that have no result;
results are unique per game id, so nothing is recorded twice; a game cut off by a kill is simply
not recorded, and the next run plays it again from its seed.

Faults: a bot's fault (timeout, crash, illegal answer, resource limit, ...) is in the game record and
counts against that bot (the match layer, take5_arena/referee/match/play.py). An infrastructure failure (no
Docker engine, an image that cannot be built any more, the referee's own error) rates no one: the
game is not recorded, the failure is (``infra_failures``), and the game is retried later in the run,
and again in the next run.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import fcntl
import os
import queue
import secrets
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..artifacts import ArtifactError, ArtifactStore
from ..kinds import InfraKind, RunStatus, SandboxKind
from ..store import EntrantVersion, Store
from .errors import TournamentError
from .executors import ExecutorInfo, avoiding, open_executor, parse_executor, resolve_auto
from .schedule import Schedule
from .settings import (
    concurrency_of,
    game_settings,
    resolve_settings,
    sandbox_limits,
    schedule_for,
    schedule_id,
)
from .table import GameOutcome, SeatSpec, TableSpec, close_launchers, run_table


@dataclass
class RunReport:
    schedule: Schedule
    schedule_id: str
    total: int
    done_before: int
    played: int = 0
    infra: list[tuple[str, str, str]] = field(default_factory=list)  # (game id, kind, detail)
    unplayed: int = 0  # games still pending at the end (infrastructure)
    interrupted: bool = False
    seconds: float = 0.0

    @property
    def done(self) -> int:
        return self.done_before + self.played

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return 130
        return 1 if self.unplayed else 0


@contextlib.contextmanager
def run_lock(directory: Path) -> Iterator[None]:
    """One referee per tournament: an exclusive lock on DIR/run.lock (released by the kernel when
    the holder dies, SIGKILL included)."""
    path = directory / "run.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = os.pread(fd, 64, 0).decode(errors="replace").strip()
            raise TournamentError(
                f"another referee is running this tournament (pid {other or '?'})"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)


def _table_specs(store: Store, sid: str, settings: Mapping[str, Any]) -> list[TableSpec]:
    """The pending tables, each carrying the archives of its seats (table.py says why)."""
    versions = {v.id: v for v in store.versions()}
    pending = store.schedule_games(sid, pending_only=True)
    archives = ArtifactStore(store.directory / "artifacts")
    data: dict[str, bytes] = {}
    for version_id in sorted({s for g in pending for s in g.seats}):
        v = versions[version_id]
        if v.artifact and v.artifact not in data:
            try:
                data[v.artifact] = archives.get(v.artifact).data
            except ArtifactError as error:
                raise TournamentError(f"{v.key}: {error}; submit the bot again") from None
    by_table: dict[int, list] = {}
    for g in pending:
        by_table.setdefault(g.table_no, []).append(g)
    specs = []
    for table, games in by_table.items():
        first = games[0]
        seats = tuple(
            SeatSpec(
                versions[v].key,
                versions[v].name,
                versions[v].version,
                v,
                versions[v].bot_dir,
                versions[v].artifact,
            )
            for v in first.seats
        )
        specs.append(
            TableSpec(
                table=table,
                deal_seed=first.deal_seed,
                seats=seats,
                games=tuple((g.game_id, g.rotation) for g in games),
                game_settings=dict(first.settings),
                timeout=float(settings["timeout"]),
                start_timeout=float(settings["start_timeout"]),
                max_faults=int(settings["max_faults"]),
                sandbox=settings["sandbox"],
                limits=sandbox_limits(settings),
                base_image=settings["base_image"],
                bot_memory=settings["bot_memory"],
                artifacts={a: data[a] for a in (versions[v].artifact for v in first.seats) if a},
            )
        )
    return specs


def prepare_run(
    store: Store, overrides: Mapping[str, Any]
) -> tuple[dict[str, Any], list[EntrantVersion], Schedule]:
    settings = resolve_settings(store.settings(), overrides)
    versions = store.current_versions()
    if len(versions) < int(settings["players"]):
        raise TournamentError(
            f"{len(versions)} entrant{'s' * (len(versions) != 1)} cannot fill a table of "
            f"{settings['players']}: submit more bots (`referee submit BOT_DIR --name NAME --tournament DIR`)"
        )
    if settings["sandbox"] == SandboxKind.LOCAL:
        docker_only = [v.name for v in versions if v.kind == "dockerfile"]
        if docker_only:
            raise TournamentError(f"{', '.join(docker_only)} can only run with --sandbox docker")
    return settings, versions, schedule_for(versions, settings)


def executor_info(settings: Mapping[str, Any]) -> ExecutorInfo:
    """Where this run's tables play, from the settings (``auto`` resolved); a bad value is a
    TournamentError."""
    try:
        return parse_executor(
            resolve_auto(
                settings["executor"],
                sandbox=settings["sandbox"],
                concurrency=concurrency_of(settings),
            )
        )
    except ValueError as error:
        raise TournamentError(str(error)) from None


def run_tournament(
    directory: str | os.PathLike,
    overrides: Mapping[str, Any] | None = None,
    *,
    runner: Callable[..., list[GameOutcome]] = run_table,
    progress: Any = None,
    retry_delay: float = 2.0,
) -> RunReport:
    """Play every game of the current schedule that is not recorded yet (see the module text).

    ``progress``: an object with ``start(report, store)``, ``game(outcome, store)``, ``infra(outcome)``,
    ``note(text)`` and ``stop()`` (take5_arena/cli/progress.py), or None. ``runner``: the function an executor
    runs for a table (tests replace it).
    """
    directory = Path(directory)
    store = Store(directory)
    started = time.perf_counter()
    try:
        settings, versions, schedule = prepare_run(store, overrides or {})
        info = executor_info(settings)
        with run_lock(directory):
            store.set_settings(settings)
            sid = schedule_id(schedule)
            ids = {v.key: v.id for v in versions}
            store.save_schedule(
                sid,
                [
                    {
                        **g.to_dict(),
                        "seats": [ids[k] for k in g.seats],
                        "settings": game_settings(settings),
                    }
                    for g in schedule.games
                ],
                description=schedule.describe(),
                settings=settings,
                entrants=[v.key for v in versions],
            )
            specs = _table_specs(store, sid, settings)
            counts = store.progress(sid)
            report = RunReport(schedule, sid, counts["total"], counts["done"])
            run_id = f"run-{secrets.token_hex(4)}"
            store.begin_run(run_id, schedule_id=sid, settings=settings, games=counts["total"])
            status = RunStatus.FAILED
            try:
                if progress is not None:
                    progress.start(report, store)
                with open_executor(info, concurrency_of(settings)) as (executor, info):
                    driver = _Driver(
                        store,
                        executor,
                        info,
                        settings,
                        report,
                        run_id,
                        runner=runner,
                        progress=progress,
                        retry_delay=retry_delay,
                    )
                    driver.run(specs)
                status = (
                    RunStatus.INTERRUPTED
                    if report.interrupted
                    else RunStatus.FINISHED
                    if not report.unplayed
                    else RunStatus.INCOMPLETE
                )
            except KeyboardInterrupt:
                report.interrupted = True
                status = RunStatus.INTERRUPTED
            finally:
                if progress is not None:
                    progress.stop()
                report.seconds = time.perf_counter() - started
                store.end_run(run_id, status, store.progress(sid)["done"])
                if settings["sandbox"] == SandboxKind.DOCKER and info.in_process:
                    close_launchers()
        return report
    finally:
        store.close()


class _Driver:
    """The loop of one run: tables in flight on the executor, outcomes to the store, retries.

    At most ``concurrency`` tables run at once. With an in-process executor a table hands each game
    to :attr:`finished` as it ends (so a long table is stored game by game); other executors return
    a table's outcomes when it is done. A table whose games failed for infrastructure reasons goes
    back to :attr:`waiting` with those games only, after ``retry_delay * 2**attempt`` seconds, at most
    ``retries`` times. A Dask worker that reports its Docker engine gone is passed over for
    :attr:`SICK_FOR` seconds while other workers remain (its engine may come back). Ctrl-C or
    SIGTERM stops submitting, abandons the tables in flight (their games stay unrecorded and are
    replayed by the next run) and returns.
    """

    #: seconds between two heartbeats of the run in the store (`tournament status` reads them)
    HEARTBEAT = 2.0
    #: seconds the loop waits for a table before it looks at the queue of finished games again
    POLL = 0.25
    #: seconds a Dask worker whose Docker engine did not answer gets no new tables if others can
    SICK_FOR = 60.0

    def __init__(
        self,
        store: Store,
        executor: concurrent.futures.Executor,
        info: ExecutorInfo,
        settings: Mapping[str, Any],
        report: RunReport,
        run_id: str,
        *,
        runner: Callable[..., list[GameOutcome]],
        progress: Any,
        retry_delay: float,
    ) -> None:
        self.store = store
        self.executor = executor
        self.info = info
        self.report = report
        self.run_id = run_id
        self.runner = runner
        self.progress = progress
        self.retry_delay = retry_delay
        self.limit = concurrency_of(settings)
        self.retries = int(settings["retries"])
        self.output_budget = int(settings["output_budget"])
        self.waiting: deque[tuple[float, TableSpec, int]] = deque()  # (not before, table, attempt)
        self.in_flight: dict[concurrent.futures.Future, tuple[TableSpec, int]] = {}
        self.finished: queue.SimpleQueue[GameOutcome] = queue.SimpleQueue()
        self.seen: set[str] = set()
        self.failed_tables: dict[
            int, list[tuple[str, int]]
        ] = {}  # table -> (game id, rotation) to retry
        self.last_beat = 0.0
        self.stopping = False
        self.sick: dict[str, float] = {}  # worker address -> when its engine failed

    def run(self, specs: list[TableSpec]) -> None:
        self.waiting.extend((0.0, s, 0) for s in specs)
        on_main = threading.current_thread() is threading.main_thread()
        previous = signal.getsignal(signal.SIGTERM)
        if on_main:
            signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            while self.waiting or self.in_flight:
                self._submit_ready()
                if self.stopping and not self.in_flight:
                    break
                self._collect()
                if time.monotonic() - self.last_beat > self.HEARTBEAT:
                    self.last_beat = time.monotonic()
                    self.store.heartbeat(self.run_id, self.report.done)
        except KeyboardInterrupt:
            self.report.interrupted = True
            self.stopping = True
            if self.progress is not None:
                self.progress.note(
                    "interrupted: the games in progress are abandoned; run the same command to resume"
                )
            for fut in self.in_flight:
                fut.cancel()
        finally:
            if on_main:
                signal.signal(signal.SIGTERM, previous)
        self.report.unplayed = (
            self.report.total - self.store.progress(self.report.schedule_id)["done"]
        )

    def _submit_ready(self) -> None:
        now = time.monotonic()
        while (
            not self.stopping
            and self.waiting
            and len(self.in_flight) < self.limit
            and self.waiting[0][0] <= now
        ):
            _, spec, attempt = self.waiting.popleft()
            if self.info.in_process:
                fut = self.executor.submit(self.runner, spec, self.finished.put)
            else:
                self.sick = {w: t for w, t in self.sick.items() if now - t < self.SICK_FOR}
                fut = self.executor.submit(
                    self.runner, spec, **avoiding(self.executor, self.info, set(self.sick))
                )
            self.in_flight[fut] = (spec, attempt)

    def _collect(self) -> None:
        """Wait a little for a table to finish; store every outcome that arrived meanwhile."""
        if self.in_flight:
            done, _ = concurrent.futures.wait(
                list(self.in_flight),
                timeout=self.POLL,
                return_when=concurrent.futures.FIRST_COMPLETED,
            )
        else:
            done = set()
            if self.waiting:  # only tables waiting for their retry time
                time.sleep(min(self.POLL, max(0.0, self.waiting[0][0] - time.monotonic())))
        spec_of = {s.table: (s, a) for s, a in self.in_flight.values()}
        self._drain(spec_of)
        for fut in done:
            spec, attempt = self.in_flight.pop(fut)
            try:
                outcomes = fut.result()
            except Exception as error:  # noqa: BLE001 - the executor failed: infrastructure
                outcomes = [
                    GameOutcome(
                        g,
                        infra_kind=InfraKind.EXECUTOR,
                        infra_detail=f"{type(error).__name__}: {error}",
                    )
                    for g, _ in spec.games
                ]
            self._drain({**spec_of, spec.table: (spec, attempt)})  # callbacks that raced the future
            for outcome in outcomes:
                self._handle(outcome, spec, attempt)
            self._maybe_retry(spec, attempt)

    def _drain(self, spec_of: Mapping[int, tuple[TableSpec, int]]) -> None:
        while True:
            try:
                outcome = self.finished.get_nowait()
            except queue.Empty:
                return
            table = _table_of(outcome.game_id, spec_of)
            if table is not None:
                self._handle(outcome, *table)

    def _handle(self, outcome: GameOutcome, spec: TableSpec, attempt: int) -> None:
        if outcome.game_id in self.seen:
            return
        self.seen.add(outcome.game_id)
        if outcome.ok:
            assert outcome.record is not None
            if self.store.record_game(
                outcome.game_id,
                outcome.record,
                run_id=self.run_id,
                seconds=outcome.seconds,
                output_budget=self.output_budget,
            ):
                self.report.played += 1
            if self.progress is not None:
                self.progress.game(outcome, self.store)
            return
        kind, detail = outcome.infra_kind or "infra", outcome.infra_detail or ""
        if kind == InfraKind.ENGINE_UNAVAILABLE and outcome.worker:
            self.sick[outcome.worker] = time.monotonic()
        self.store.record_infra_failure(outcome.game_id, kind, detail, run_id=self.run_id)
        self.report.infra.append((outcome.game_id, kind, detail))
        self.failed_tables.setdefault(spec.table, []).extend(
            g for g in spec.games if g[0] == outcome.game_id
        )
        if self.progress is not None:
            self.progress.infra(outcome)

    def _maybe_retry(self, spec: TableSpec, attempt: int) -> None:
        retry = self.failed_tables.pop(spec.table, None)
        if not retry:
            return
        for gid, _ in retry:
            self.seen.discard(gid)
        if attempt < self.retries and not self.stopping:
            delay = self.retry_delay * (2**attempt)
            self.waiting.append(
                (
                    time.monotonic() + delay,
                    dataclasses.replace(spec, games=tuple(retry)),
                    attempt + 1,
                )
            )


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _table_of(
    game_id: str, spec_of: Mapping[int, tuple[TableSpec, int]]
) -> tuple[TableSpec, int] | None:
    for spec, attempt in spec_of.values():
        if any(g == game_id for g, _ in spec.games):
            return spec, attempt
    return None
