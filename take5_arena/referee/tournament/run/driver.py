"""Playing scheduled tables: the one spec builder (:func:`table_specs`) and the one table loop
(:class:`TableDriver`), for every caller: ``referee tournament run`` (round_robin.py),
``--until-settled`` (settle.py) and the arena's ladder (take5_arena/service/ladder.py).

:func:`table_specs` turns the pending games of a stored schedule into :class:`~.spec.TableSpec`\\
s: one per table (its duplicate set), each naming its seats' validated source archives in the
tournament's ``artifacts/`` folder by digest, so that what plays is what was validated at
submission, on any worker; the driver's :class:`~.shipping.Shipping` makes them reachable from
the executor's workers as each table is submitted (shipping.py: each archive once per worker, not
per table).

:class:`TableDriver` plays them on any ``concurrent.futures`` executor (executors.py). It keeps at
most ``concurrency`` tables in flight; it commits each finished game to the store as soon as the
referee sees it (with an in-process executor game by game, while the table plays on; other
executors return a table's outcomes when it is done), with the tournament's output budget; and it
puts a table whose games failed for infrastructure reasons back in the queue with those games
only, after ``retry_delay * 2**attempt`` seconds, at most ``retries`` times. A Dask worker that
reports its Docker engine gone is passed over for :attr:`TableDriver.SICK_FOR` seconds while other
workers remain (its engine may come back); one that lacked an archive it was thought to hold is
asked again before the retry (:meth:`~.shipping.Shipping.forget`).

A fixed list of tables is played by :meth:`TableDriver.run`, which also turns Ctrl-C and SIGTERM
into a clean stop: no new tables, the ones in flight abandoned (their games stay unrecorded and the
next run plays them from their seeds). A caller that keeps adding tables (the ladder) calls
:meth:`TableDriver.add` and :meth:`TableDriver.pump` itself.

A table played for another caller (:meth:`TableDriver.add_private`: the arena's validation of a new
version, whose games count only once it passes) is played exactly as the others, in one of the
same slots, by the same runner on the same executor, so that nothing a bot can time tells it from
a rated table; only its outcomes go to the caller's future instead of the store, and it is not
retried (the caller says what a game not played means).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import queue
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from types import FrameType
from typing import Protocol

from take5 import Settings, Take5Error
from take5.record import DealRecord

from ....errors import require_extra
from ... import defaults
from ...artifacts import ArtifactError
from ...kinds import InfraKind, SandboxKind
from ...store import Store, StoredGame
from ..errors import TournamentError
from ..plan.deals import Dealer
from ..plan.settings import TournamentSettings
from .archives import ArchiveSource, StoredArchive
from .executors import ExecutorInfo, ExecutorUnreachableError, avoiding, scheduler_state
from .shipping import shipping_for
from .spec import GameOutcome, SeatSpec, TableSpec
from .table import run_table

Runner = Callable[..., list[GameOutcome]]
"""What an executor runs for a table: ``runner(spec, on_game=None, **placement)``; run_table, or
a stand-in in tests."""


class Progress(Protocol):
    """What a driver reports as it goes (take5_arena/cli/progress.py draws it); each method has a
    default that ignores it, so a listener overrides only what it shows."""

    def game(self, outcome: GameOutcome, store: Store) -> None:
        """A game was recorded (or had been already)."""
        return None

    def infra(self, outcome: GameOutcome) -> None:
        """A game could not be played for a reason that is nobody's fault."""
        return None

    def note(self, text: str) -> None:
        """Something the operator should read (an interruption)."""
        return None


class _Silent(Progress):
    pass


def table_specs(
    store: Store,
    schedule_id: str,
    settings: TournamentSettings,
    *,
    table_base: int = 0,
    dealer: Dealer | None = None,
) -> list[TableSpec]:
    """The pending tables of a stored schedule, each naming the archives of its seats.

    ``table_base`` is added to the schedule's table numbers, for a caller whose schedules number
    their tables from 0 each (the ladder's batches): the numbers of the tables one driver plays
    must differ. A table is played with ``settings`` unless its games were scheduled under other
    game settings (a ladder batch from before a restart with other options): then with those.
    A table dealt from a secret key gets its seed from ``dealer`` (deals.py: the store does not
    hold it), and its spec the deal's public part for the records."""
    pending = store.schedules.games(schedule_id, pending_only=True)
    commitments = {s.season: s.commitment for s in store.deal_keys.seasons()}
    versions = {v.id: v for v in store.versions.all()}
    data: dict[str, ArchiveSource] = {}
    for version_id in sorted({s for g in pending for s in g.seats}):
        v = versions[version_id]
        if v.artifact and v.artifact not in data:
            try:  # there and intact (fetched from a shared store if need be), or said now
                path = store.archives.path(v.artifact)
            except ArtifactError as error:
                raise TournamentError(f"{v.key}: {error}; submit the bot again") from None
            data[v.artifact] = StoredArchive(str(path.absolute()))
    by_table: dict[int, list[StoredGame]] = {}
    for g in pending:
        by_table.setdefault(g.table_no, []).append(g)
    specs = []
    for table, games in sorted(by_table.items()):
        first = games[0]
        seats = tuple(SeatSpec.of(versions[v]) for v in first.seats)
        if first.sealed and dealer is None:
            raise TournamentError(f"game {first.game_id} is dealt from a secret key: no dealer")
        specs.append(
            TableSpec(
                table=table_base + table,
                deal_seed=dealer.seed_of(first) if dealer is not None else first.deal_seed,
                seats=seats,
                games=tuple((g.game_id, g.rotation) for g in games),
                settings=_as_scheduled(settings, first, len(seats)),
                sources={s.artifact: data[s.artifact] for s in seats if s.artifact},
                deal=None
                if first.deal_season is None
                else DealRecord(
                    season=first.deal_season,
                    commitment=commitments.get(first.deal_season),
                    id=first.deal_id,
                ),
            )
        )
    return specs


def _as_scheduled(
    settings: TournamentSettings, game: StoredGame, players: int
) -> TournamentSettings:
    """``settings``, with the game settings ``game`` was scheduled under if they differ."""
    if game.settings == settings.game_context() and players == settings.players:
        return settings
    try:
        scheduled = Settings.from_dict(
            {**settings.game.to_dict(), **game.settings, "players": players}
        )
    except (Take5Error, KeyError, TypeError) as error:  # a damaged row, said plainly
        raise TournamentError(
            f"game {game.game_id}: its stored settings are invalid: {error}"
        ) from None
    return dataclasses.replace(settings, game=scheduled)


class TableDriver:
    """The table loop of one run (see the module text)."""

    #: seconds between two heartbeats of the run in the store (`tournament status` reads them)
    HEARTBEAT = 2.0
    #: seconds before a table another referee holds is tried again (several referees on one
    #: PostgreSQL store: :meth:`.Schedules.claim`; the table is ours once its referee recorded
    #: it, which drops it, or died, which gives it back)
    CLAIM_RETRY = 1.0
    #: seconds :meth:`run` waits for a table before it looks at the queue of finished games again
    POLL = 0.25
    #: seconds a Dask worker whose Docker engine did not answer gets no new tables if others can
    SICK_FOR = 60.0

    def __init__(
        self,
        store: Store,
        executor: concurrent.futures.Executor,
        info: ExecutorInfo,
        settings: TournamentSettings,
        *,
        run_id: str,
        runner: Runner = run_table,
        progress: Progress | None = None,
        retry_delay: float = 2.0,
    ) -> None:
        if settings.sandbox == SandboxKind.DOCKER and (
            info.kind != "dask" or info.address == "local"
        ):
            require_extra("docker")  # this host plays in Docker: say so now, not once per table
        self.store = store
        self.executor = executor
        self.info = info
        self.run_id = run_id
        self.runner = runner
        self.progress: Progress = progress or _Silent()
        self.retry_delay = retry_delay
        self.limit = settings.tables_at_once
        self.retries = settings.retries
        self.output_budget = settings.output_budget
        self.shipping = shipping_for(executor)
        self.played = 0
        """Games this driver recorded."""
        self.infra: list[tuple[str, InfraKind, str]] = []
        """(game id, kind, detail) of every infrastructure failure it met."""
        self.interrupted = False
        self.stopping = False
        self.waiting: deque[tuple[float, TableSpec, int]] = deque()  # (not before, table, attempt)
        self.in_flight: dict[
            concurrent.futures.Future[list[GameOutcome]], tuple[TableSpec, int]
        ] = {}
        self.finished: queue.SimpleQueue[GameOutcome] = queue.SimpleQueue()
        self.seen: set[str] = set()
        self.failed_tables: dict[int, list[tuple[str, int]]] = {}  # table -> (game id, rotation)
        self.last_beat = 0.0
        self.sick: dict[str, float] = {}  # worker address -> when its engine failed
        self.lost_since: float | None = None  # when the Dask scheduler stopped answering
        self.claims: set[str] = set()  # the games this referee claimed in the store
        self.given_up: dict[str, float] = {}
        """Games that failed every retry in this run (they stay pending in the store), and when
        (``time.monotonic()``): :meth:`given_up_within`."""
        self.private: dict[int, concurrent.futures.Future[list[GameOutcome]]] = {}
        """Tables played for another caller, by table number (:meth:`add_private`)."""

    # -- the queue -----------------------------------------------------------------------------

    def add(self, specs: Iterable[TableSpec], *, first: bool = False) -> None:
        """Queue tables to play (``first``: before those already waiting)."""
        items = [(0.0, spec, 0) for spec in specs]
        if first:
            self.waiting.extendleft(reversed(items))
        else:
            self.waiting.extend(items)

    def add_private(
        self, spec: TableSpec, future: concurrent.futures.Future[list[GameOutcome]]
    ) -> None:
        """Play ``spec`` next, in the next free slot, and hand its outcomes to ``future`` (see the
        module text): no game of it is claimed, stored or retried. :meth:`cancel` cancels it."""
        self.private[spec.table] = future
        self.waiting.appendleft((0.0, spec, 0))

    def discard(self, keep: Callable[[TableSpec], bool]) -> int:
        """Drop the waiting tables ``keep`` refuses (the ladder: a bot withdrawn meanwhile);
        how many were dropped. Tables in flight play on, and so do private ones."""
        before = len(self.waiting)
        self.waiting = deque(
            item for item in self.waiting if item[1].table in self.private or keep(item[1])
        )
        return before - len(self.waiting)

    @property
    def game_ids(self) -> set[str]:
        """The games of the tables waiting or in flight."""
        specs = [s for _, s, _ in self.waiting] + [s for s, _ in self.in_flight.values()]
        return {game_id for spec in specs for game_id, _ in spec.games}

    @property
    def idle(self) -> bool:
        """Nothing waits and nothing plays."""
        return not self.waiting and not self.in_flight

    @property
    def has_room(self) -> bool:
        """Fewer tables in flight than the concurrency."""
        return len(self.in_flight) < self.limit

    @property
    def has_ready(self) -> bool:
        """A waiting table may start now (its retry time has come)."""
        return any(not_before <= time.monotonic() for not_before, _, _ in self.waiting)

    # -- the loop ------------------------------------------------------------------------------

    def run(self, specs: Iterable[TableSpec]) -> None:
        """Play ``specs`` (and their retries) to the end, or until Ctrl-C / SIGTERM."""
        self.add(specs)
        on_main = threading.current_thread() is threading.main_thread()
        previous = signal.getsignal(signal.SIGTERM)
        if on_main:
            signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            while self.waiting or self.in_flight:
                self.pump(self.POLL)
                if self.stopping and not self.in_flight:
                    break
            self._release(set(self.claims))
        except KeyboardInterrupt:
            self.interrupted = True
            self.stopping = True
            self.progress.note(
                "interrupted: the games in progress are abandoned; run the same command to resume"
            )
            self.cancel()
        finally:
            if on_main:
                signal.signal(signal.SIGTERM, previous)

    def pump(self, timeout: float, *, submit: bool = True) -> None:
        """One step: start the tables that may start (unless ``submit`` is False), wait up to
        ``timeout`` seconds for one to finish, and store every outcome that arrived meanwhile."""
        ready = self._scheduler_ready()
        if submit and ready:
            self._submit_ready()
        if ready or self.in_flight:
            self._collect(timeout)
        else:
            time.sleep(timeout)  # nothing to wait for but the scheduler
        if time.monotonic() - self.last_beat > self.HEARTBEAT:
            self.last_beat = time.monotonic()
            self.store.runs.heartbeat(self.run_id, self.played)

    def cancel(self) -> None:
        """Give up the tables in flight (a game cut off is not recorded), and tell the callers of
        private tables that theirs are given up (their futures cancelled)."""
        self.stopping = True
        for future in self.in_flight:
            future.cancel()
        for caller in self.private.values():
            caller.cancel()

    def _scheduler_ready(self) -> bool:
        """Whether tables may be sent (always, but for a Dask scheduler that was lost: none is
        sent until it answers again; after the grace period, ExecutorUnreachableError)."""
        state = scheduler_state(self.executor, self.info)
        if state is None or state == "running":
            if self.lost_since is not None:
                self.progress.note(
                    f"the dask scheduler {self.info.address} is back after "
                    f"{time.monotonic() - self.lost_since:.0f} s: playing on"
                )
                self.lost_since = None
            return True
        if state in ("connecting", "newly-created"):
            if self.lost_since is None:
                self.lost_since = time.monotonic()
                self.progress.note(
                    f"lost the dask scheduler {self.info.address}: waiting up to "
                    f"{defaults.SCHEDULER_GRACE:.0f} s for it to come back (the tables it was "
                    "playing are played again then)"
                )
            return False
        waited = time.monotonic() - (self.lost_since or time.monotonic())
        raise ExecutorUnreachableError(
            f"lost the dask scheduler {self.info.address} and it did not come back "
            f"({state} after {waited:.0f} s); run the same command again once it runs: the games "
            "recorded are kept"
        )

    def _submit_ready(self) -> None:
        now = time.monotonic()
        while not self.stopping and self.has_room:
            ready = next((i for i, item in enumerate(self.waiting) if item[0] <= now), None)
            if ready is None:
                return
            _, claimed, attempt = self.waiting[ready]
            del self.waiting[ready]
            private = claimed.table in self.private
            spec = claimed if private else self._claim(claimed, attempt)
            if spec is None:
                continue
            if self.info.in_process:
                future = self.executor.submit(self.runner, spec, self.finished.put)
            else:
                self.sick = {w: t for w, t in self.sick.items() if now - t < self.SICK_FOR}
                placement = avoiding(self.executor, self.info, set(self.sick))
                future = self.executor.submit(self.runner, self.shipping.ship(spec), **placement)
            self.in_flight[future] = (spec, attempt)

    def _collect(self, timeout: float) -> None:
        """Wait a little for a table to finish; store every outcome that arrived meanwhile."""
        done: set[concurrent.futures.Future[list[GameOutcome]]] = set()
        if self.in_flight:
            done, _ = concurrent.futures.wait(
                list(self.in_flight),
                timeout=timeout,
                return_when=concurrent.futures.FIRST_COMPLETED,
            )
        elif self.waiting:  # only tables waiting for their retry time
            time.sleep(
                min(timeout, max(0.0, min(t for t, _, _ in self.waiting) - time.monotonic()))
            )
        spec_of = {s.table: (s, a) for s, a in self.in_flight.values()}
        self._drain(spec_of)
        for future in done:
            spec, attempt = self.in_flight.pop(future)
            try:
                outcomes = future.result()
            except Exception as error:  # noqa: BLE001 - the executor failed: infrastructure
                if isinstance(error, concurrent.futures.CancelledError) and scheduler_state(
                    self.executor, self.info
                ) not in (None, "running"):
                    # cut off with the scheduler: no attempt spent, played again once it is back
                    self.waiting.appendleft((0.0, spec, attempt))
                    self._drain(spec_of)
                    continue
                outcomes = [
                    GameOutcome(
                        g,
                        infra_kind=InfraKind.EXECUTOR,
                        infra_detail=f"{type(error).__name__}: {error}",
                    )
                    for g, _ in spec.games
                ]
            self._drain({**spec_of, spec.table: (spec, attempt)})  # callbacks that raced the future
            caller = self.private.pop(spec.table, None)
            if caller is not None:
                if caller.set_running_or_notify_cancel():
                    caller.set_result(outcomes)
                continue
            for outcome in outcomes:
                self._handle(outcome, spec)
            self._maybe_retry(spec, attempt)
            again = {g for _, s, _ in self.waiting for g, _ in s.games}
            self._release({g for g, _ in spec.games} - again)
        if done:
            self.shipping.retain(self._needed())

    def _claim(self, spec: TableSpec, attempt: int) -> TableSpec | None:
        """``spec`` with the games still to play once this referee claimed them all in the
        store, or None: another referee holds one (the table waits :data:`CLAIM_RETRY` and is
        tried again) or none is left to play (another recorded them)."""
        got: list[str] = []
        for game_id, _ in spec.games:
            if game_id not in self.claims and not self.store.schedules.claim(game_id):
                for taken in got:
                    self.store.schedules.release(taken)
                self.waiting.append((time.monotonic() + self.CLAIM_RETRY, spec, attempt))
                return None
            if game_id not in self.claims:
                got.append(game_id)
        self.claims.update(got)
        left = tuple(g for g in spec.games if self.store.schedules.game(g[0]).status == "pending")
        self._release({g for g, _ in spec.games} - {g for g, _ in left})
        if not left:
            return None
        return spec if len(left) == len(spec.games) else dataclasses.replace(spec, games=left)

    def _release(self, game_ids: set[str]) -> None:
        for game_id in sorted(game_ids & self.claims):
            self.store.schedules.release(game_id)
            self.claims.discard(game_id)

    def _needed(self) -> set[str]:
        """The digests the tables waiting or in flight still need."""
        specs = [s for _, s, _ in self.waiting] + [s for s, _ in self.in_flight.values()]
        return {digest for spec in specs for digest in spec.sources}

    def _drain(self, spec_of: Mapping[int, tuple[TableSpec, int]]) -> None:
        while True:
            try:
                outcome = self.finished.get_nowait()
            except queue.Empty:
                return
            for spec, _attempt in spec_of.values():
                if any(g == outcome.game_id for g, _ in spec.games):
                    self._handle(outcome, spec)
                    break

    def _handle(self, outcome: GameOutcome, spec: TableSpec) -> None:
        if outcome.game_id in self.seen or spec.table in self.private:
            return
        self.seen.add(outcome.game_id)
        if outcome.record is not None:
            if self.store.results.record_game(
                outcome.game_id,
                outcome.record,
                run_id=self.run_id,
                seconds=outcome.seconds,
                output_budget=self.output_budget,
            ):
                self.played += 1
            self.progress.game(outcome, self.store)
            return
        kind, detail = outcome.infra_kind or InfraKind.REFEREE_ERROR, outcome.infra_detail or ""
        if kind == InfraKind.ENGINE_UNAVAILABLE and outcome.worker:
            self.sick[outcome.worker] = time.monotonic()
        if kind == InfraKind.ARTIFACT and outcome.worker:
            self.shipping.forget(outcome.worker)
        self.store.results.record_infra_failure(outcome.game_id, kind, detail, run_id=self.run_id)
        self.infra.append((outcome.game_id, kind, detail))
        self.failed_tables.setdefault(spec.table, []).extend(
            g for g in spec.games if g[0] == outcome.game_id
        )
        self.progress.infra(outcome)

    def _maybe_retry(self, spec: TableSpec, attempt: int) -> None:
        retry = self.failed_tables.pop(spec.table, None)
        if not retry:
            return
        for gid, _ in retry:
            self.seen.discard(gid)
        if attempt < self.retries and not self.stopping:
            delay = self.retry_delay * (2**attempt)
            again = dataclasses.replace(spec, games=tuple(retry))
            self.waiting.append((time.monotonic() + delay, again, attempt + 1))
        else:
            self.given_up.update((gid, time.monotonic()) for gid, _ in retry)

    def given_up_within(self, seconds: float) -> set[str]:
        """The games given up less than ``seconds`` ago; those given up before are forgotten, so
        that a caller that plays for as long as it runs (the arena's ladder) tries them again,
        with their retries, rather than leaving them pending until a restart."""
        cutoff = time.monotonic() - seconds
        for game_id in [g for g, at in self.given_up.items() if at <= cutoff]:
            del self.given_up[game_id]
        return set(self.given_up)


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def play_schedule(
    store: Store,
    executor: concurrent.futures.Executor,
    info: ExecutorInfo,
    settings: TournamentSettings,
    schedule_id: str,
    *,
    run_id: str,
    dealer: Dealer,
    runner: Runner = run_table,
    retry_delay: float = 2.0,
) -> TableDriver:
    """Play every table of the stored schedule ``schedule_id`` not recorded yet (a Swiss's or a
    knockout's stage, an until-settled batch); the driver says what it played, the
    infrastructure failures and whether it was interrupted."""
    driver = TableDriver(
        store, executor, info, settings, run_id=run_id, runner=runner, retry_delay=retry_delay
    )
    driver.run(table_specs(store, schedule_id, settings, dealer=dealer))
    return driver


__all__ = ["Progress", "Runner", "TableDriver", "play_schedule", "table_specs"]
