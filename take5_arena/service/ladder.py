"""The continuous ladder: while the arena serves, games keep being played between the active bots.

Every game goes through the tournament machinery (take5_arena/referee/tournament/): a table is a
:class:`~take5_arena.referee.tournament.TableSpec` (one deal, every rotation: a duplicate set),
played by ``run_table`` on a ``concurrent.futures`` executor (local threads by default, or Dask),
and each finished game is committed to the store with its record in one transaction, game ids
unique. So the ladder inherits the tournament's guarantees: nothing recorded twice, and a game cut
off by a killed server is not recorded and is replayed from its seed.

What to play next is a :class:`Planner`'s choice; :func:`make_planner` is the one place that picks
it. The default :class:`SettlingPlanner`:

* **Gauntlet**: a bot version that has not had one plays ``gauntlet_tables`` tables with each other
  active bot (the other seats filled with the least-played bots), before anything else is planned.
* **Steady state**: one table at a time, where the ranking is least settled: the window of
  neighbours in the current order whose likelihoods of superiority are furthest from 95%, by the
  rule of ``referee tournament run --until-settled``
  (take5_arena/referee/tournament/plan/adaptive.py).
  While a bot has no game yet, the least-played active bot plus a seeded random choice of the
  others.

Two bots of one author (the arena's accounts own every bot) never sit at one table while the pool
has enough authors to fill one; a table that has to break the rule is said in the standings.

The plan is written to the store before it is played: each planned batch is a schedule
``ladder-NNNNNN`` (the gauntlet's description names the version), with its games pending. At start
the ladder first plays the pending games of earlier batches whose bots are all still active at the
same versions. The deals come from the arena's secret key
(take5_arena/referee/tournament/plan/deals.py: an HMAC of each table's deal identity, with the batch
and table number in it, so ids never repeat), or for an arena made before secret deals from its
public seed and the batch number. A game that
fails for a reason that is nobody's fault (no Docker engine, ...) is retried like in a tournament,
and failures in a row make the ladder wait longer and longer (up to a minute) before its next
table.

An author's challenge (take5_arena/service/challenges.py) is handed to the ladder's thread
(:meth:`Ladder.challenge`), which stores it as a schedule of its own (``challenge-NNNNNN``, dealt
from its own namespace: unrated) and plays its table between the rated ones: one only after a
rated table has started, so rated play keeps at least half of the tables. Its pending games are
resumed at start like the ladder's.

The arena's validation plays a new version's smoke tables on the ladder's own driver
(:meth:`Ladder.play_table`): in one of its slots, on its executor, with its launcher, so that a
bot watching the clock cannot tell them from rated tables (docs/security.md, "Smoke games").

Publishing is a separate thread (take5_arena/service/publisher.py), which counts the games in the
store.

Several referees on one store (docs/operators/several-hosts.md) run one ladder: its batches are
planned by one referee at a time (the store's :data:`PLANNING` claim, so the batches are numbered
once and each version has one gauntlet), and every referee picks up the tables of the store still
to play every :attr:`Ladder.PICK_UP_SECONDS`, whoever planned them, and plays those it claims
(TableDriver): a table is played by one referee, and the tables of a referee that died come back
to the others when its session with the server ends.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import queue
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from take5.shuffle import SplitMix64
from take5_arena.referee.kinds import InfraKind, RunStatus
from take5_arena.referee.store import EntrantVersion, Store
from take5_arena.referee.store.deals import current_season
from take5_arena.referee.store.health import StoreDamagedError, StoreFaultError
from take5_arena.referee.store.records import UNRATED_PREFIX
from take5_arena.referee.tournament.errors import TournamentError
from take5_arena.referee.tournament.plan.deals import Dealer
from take5_arena.referee.tournament.plan.schedule import deal_seed, games_of_table
from take5_arena.referee.tournament.plan.settings import TournamentSettings
from take5_arena.referee.tournament.run.driver import Progress, Runner, TableDriver, table_specs
from take5_arena.referee.tournament.run.executors import ExecutorInfo
from take5_arena.referee.tournament.run.spec import GameOutcome, TableSpec
from take5_arena.referee.tournament.run.table import run_table
from take5_arena.referee.tournament.season import season_of, utc_now
from take5_arena.service import challenges, defaults, logs
from take5_arena.service.errors import NotFoundError, RequestError
from take5_arena.service.ladder_planning import Planner, PoolView, SettlingPlanner
from take5_arena.service.season_switch import SeasonSwitch, season_over, switch

if TYPE_CHECKING:
    from take5_arena.leaderboard.results import GameResult

LADDER_PREFIX = "ladder-"
GAUNTLET = "gauntlet"
BATCH_TABLES = 10_000
"""Table numbers (and deal seeds) of batch n start at n * BATCH_TABLES: no two tables share one."""
PLANNING = "ladder planning"
"""The claim (Schedules.claim) a referee holds while it plans the ladder's next batches: several
referees on one store plan one schedule, numbered once."""
LADDER_NAMESPACE = "ladder"
"""The deal identities' namespace of the ladder's tables (referee/tournament/plan/deals.py)."""


@dataclass(frozen=True)
class LadderConfig:
    """How the ladder plays and publishes (``referee serve`` options)."""

    gauntlet_tables: int = defaults.GAUNTLET_TABLES
    """Tables a new version plays with each other active bot."""
    seed: int = 0
    every_games: int = defaults.PUBLISH_EVERY_GAMES
    """Publish after this many new games ..."""
    every_seconds: float = defaults.PUBLISH_EVERY_SECONDS
    """... or this long after an unpublished game."""
    site: Path | None = None
    """Where to publish (None: standings are kept for the API only)."""
    bootstrap: int = defaults.PUBLISH_BOOTSTRAP
    idle_seconds: float = defaults.LADDER_IDLE_SECONDS
    """How often to look for bots when there are too few to play."""
    season: SeasonSwitch = field(default_factory=SeasonSwitch)
    """How the arena closes a season at its end (take5_arena/service/season_switch.py)."""


# ------------------------------------------------------------------------------------------------
# Planning (the planners: take5_arena/service/ladder_planning.py)


def make_planner(config: LadderConfig) -> Planner:
    """The ladder's planner: a gauntlet for each new version, then tables where the ranking is
    least settled."""
    return SettlingPlanner(config.gauntlet_tables)


# ------------------------------------------------------------------------------------------------
# The ladder


class Ladder:
    """Plays games for as long as it runs (a thread; :meth:`stop` ends it)."""

    PICK_UP_SECONDS = 1.0
    """How often the store's tables still to play are looked at (:meth:`_pick_up`)."""

    def __init__(
        self,
        directory: str | Path,
        settings: TournamentSettings,
        config: LadderConfig,
        *,
        executor: concurrent.futures.Executor,
        info: ExecutorInfo,
        on_games: Callable[[int], None] = lambda n: None,
        on_season: Callable[[], None] = lambda: None,
        runner: Runner = run_table,
        retry_delay: float = defaults.LADDER_RETRY_DELAY,
        given_up_for: float = defaults.LADDER_GIVEN_UP_SECONDS,
        quota: challenges.Quota | None = None,
    ):
        self.directory = Path(directory)
        self.home = str(self.directory.absolute())
        """Its tables' ``home``: the web pages show its games in progress as its competition's."""
        self.settings = settings
        self.config = config
        self.planner = make_planner(config)
        self.executor = executor
        self.info = info
        self.on_games = on_games
        self.on_season = on_season
        """Called once a season is closed here: the live site shows the revealed key at once."""
        self.log = logs.logger("ladder")
        self.runner = runner
        self.retry_delay = retry_delay
        self.given_up_for = given_up_for
        self.quota = quota or challenges.Quota()
        """The authors' challenge limits, shared with the server's other competitions' ladders."""
        self.run_id = f"ladder-{secrets.token_hex(4)}"
        self.dealer: Dealer | None = None
        self.played = 0
        self.infra = 0
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ladder", daemon=True)
        self._driver: TableDriver | None = None
        self._streak = 0
        self._backoff_until = 0.0
        self.error: str | None = None
        self._note: str | None = ""
        self._asked: queue.SimpleQueue[_Asked] = queue.SimpleQueue()
        self._challenges: deque[TableSpec] = deque()
        self._rated_since_challenge = True
        self._picked_up = False
        self._left: set[str] = set()  # batches this host cannot play (an archive it lacks)
        self._private: queue.SimpleQueue[_Private] = queue.SimpleQueue()
        self._private_lock = threading.Lock()
        self._closed = False  # no more private tables: the ladder's thread has ended
        self._season_ending: float | None = None  # when the tables in flight at its end are cut
        self._closed_here: int | None = None  # the season closed with --after-season stop
        self._able_since: float | None = None  # since when it could play (None: it cannot now)
        self._last_game = 0.0  # when its last game landed (monotonic)

    # -- control -------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def wake(self) -> None:
        """Something changed (a new version, a withdrawal): look at the pool now."""
        self._wake.set()

    def challenge(self, author: str, seats: tuple[str, ...]) -> concurrent.futures.Future[str]:
        """Ask for an unrated table of these bots (``name@version``, checked by
        take5_arena/service/challenges.py's ``check``); the future gives the challenge's id once
        it is stored, or the RequestError that refused it (the author's limits, a bot that left)."""
        asked = _Asked(author, seats, concurrent.futures.Future())
        self._asked.put(asked)
        self.wake()
        return asked.future

    def play_table(self, spec: TableSpec) -> list[GameOutcome]:
        """Play ``spec`` for the caller (the arena's validation, from its own thread) on this
        ladder's table driver, as its next table, and return its outcomes; nothing of it is
        stored. Raises ``concurrent.futures.CancelledError`` when the ladder stops first."""
        future: concurrent.futures.Future[list[GameOutcome]] = concurrent.futures.Future()
        with self._private_lock:
            if self._closed:
                raise concurrent.futures.CancelledError()
            self._private.put(_Private(spec, future))
        self.wake()
        return future.result()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    @property
    def games_in_flight(self) -> int:
        """Games of the tables being played now (take5_arena/service/metrics.py reads it)."""
        driver = self._driver
        if driver is None:
            return 0
        return sum(len(spec.games) for spec, _attempt in list(driver.in_flight.values()))

    @property
    def seconds_without_game(self) -> float:
        """Seconds this ladder could play (a season open, enough bots) and recorded no game: 0
        while it cannot (too few bots, no season), or its thread ended. The arena's health
        (take5_arena/service/health.py) calls a ladder stalled past ``--stall-seconds`` of them:
        tables that hang, or every table failing for the host's reasons."""
        since = self._able_since
        if since is None or not self.alive:
            return 0.0
        return max(0.0, time.monotonic() - max(since, self._last_game))

    def _able(self, able: bool) -> None:
        """Whether the ladder can play now (:attr:`seconds_without_game` counts from then)."""
        if not able:
            self._able_since = None
        elif self._able_since is None:
            self._able_since = time.monotonic()

    # -- the loop ----------------------------------------------------------------------------------

    def _run(self) -> None:
        failures = 0
        with Store(self.directory) as store:
            store.runs.begin(
                self.run_id, schedule_id=LADDER_PREFIX, settings=self.settings.to_json(), games=0
            )
            status = RunStatus.FAILED
            try:
                # archives validated here before a shared store kept them: every host's from now
                store.archives.share(v.artifact for v in store.versions.all() if v.artifact)
                while not self._stop.is_set():
                    try:
                        self._loop(store)
                    except StoreDamagedError as error:  # nothing more is written to it
                        self.error = str(error)
                        self.log.error("ladder stopped: %s", error)
                        break
                    except StoreFaultError as error:  # a full disk: tried again, said in a line
                        failures += 1
                        self.error = str(error)
                        self.log.error("ladder paused: %s", error)
                        self._stop.wait(min(60.0, 2.0 * failures))
                    except Exception as error:
                        failures += 1
                        self.error = f"{type(error).__name__}: {error}"
                        self.log.exception(
                            "ladder failed (%s); starting over from the store", self.error
                        )
                        # the tables still playing finish first, so that none is played twice at
                        # once
                        driver = self._driver
                        if driver is not None:
                            concurrent.futures.wait(list(driver.in_flight), timeout=300)
                        self._stop.wait(min(60.0, 2.0 * failures))
                status = RunStatus.INTERRUPTED
            finally:
                self._close_private()
                # a store the host failed was said above; the next start closes the run (killed)
                with contextlib.suppress(StoreFaultError):
                    store.settings.set_note("ladder", None)
                    store.runs.end(self.run_id, status, self.played)

    def _loop(self, store: Store) -> None:
        self.dealer = Dealer.of(store, self.settings, public_seed=int(self.config.seed))
        driver = TableDriver(
            store,
            self.executor,
            self.info,
            self.settings,
            run_id=self.run_id,
            runner=self.runner,
            progress=_Events(self),
            retry_delay=self.retry_delay,
        )
        self._driver = driver
        self._challenges = deque()
        picked_at = -self.PICK_UP_SECONDS
        try:
            self._play(store, driver, picked_at)
        except BaseException:
            for caller in driver.private.values():  # its caller hears it is given up
                caller.cancel()
            raise
        driver.cancel()

    def _play(self, store: Store, driver: TableDriver, picked_at: float) -> None:
        """The ladder's loop over one dealer and driver; returns when the season's key changed
        (closed here or by another referee): :meth:`_loop` is then called again, of the new key."""
        k = self.settings.players
        seen_at = -self.PICK_UP_SECONDS
        state = "play"
        while not self._stop.is_set():
            if time.monotonic() - seen_at >= self.PICK_UP_SECONDS:
                seen_at = time.monotonic()
                state = self._season_state(store)
            if state != "play":
                self._able(False)
            if state == "rekey":
                return  # another referee closed the season: a dealer of the new key, from the top
            if state == "over":
                if self._end_season(store, driver):
                    return  # the dealer and the driver made again, of the new key
                continue
            if state == "idle":  # no season: only the validations' tables are played
                self._take_private(driver)
                if driver.in_flight or driver.waiting:
                    driver.pump(0.2)
                else:
                    self._wake.wait(self.PICK_UP_SECONDS)
                    self._wake.clear()
                continue
            current = {v.key: v for v in store.versions.current()}
            if time.monotonic() - picked_at >= self.PICK_UP_SECONDS:
                picked_at = time.monotonic()
                self._pick_up(store, driver, current)
            # drop planned tables of bots withdrawn or replaced meanwhile
            driver.discard(_seated_among(set(current)))
            self._challenges = deque(filter(_seated_among(set(current)), self._challenges))
            self._say_if_short(store, len(current), k)
            self._able(len(current) >= k)
            # Infrastructure failures in a row (no engine, ...): wait longer and longer before
            # starting the next table, instead of planning and failing tables as fast as they fail.
            hold = time.monotonic() < self._backoff_until
            self._take_private(driver)
            self._plan(store, driver, current, hold)
            if driver.in_flight or (driver.waiting and not hold):
                driver.pump(0.2, submit=not hold)
            else:
                pause = max(self.config.idle_seconds, self._backoff_until - time.monotonic())
                self._wake.wait(min(pause, 60.0, self.PICK_UP_SECONDS))
                self._wake.clear()

    def _take_private(self, driver: TableDriver) -> None:
        """The validations' tables asked for, to the driver: they take its next free slots."""
        while True:
            try:
                asked = self._private.get_nowait()
            except queue.Empty:
                return
            driver.add_private(asked.spec, asked.future)

    def _close_private(self) -> None:
        """The ladder's thread ends: the private tables asked for and not taken are given up."""
        with self._private_lock:
            self._closed = True
        while True:
            try:
                self._private.get_nowait().future.cancel()
            except queue.Empty:
                return

    # -- the season's end (take5_arena/service/season_switch.py) ---------------------------------

    def _season_state(self, store: Store) -> str:
        """``over`` (the season has ended and is not closed: no table is dealt), ``idle`` (closed
        here with ``--after-season stop``, no next one opened yet), ``rekey`` (the key this
        ladder deals from was revealed: its dealer is out of date), or ``play``."""
        key = self.dealer.key if self.dealer is not None else None
        if key is not None:
            deal = current_season(store)
            if deal is None or deal.season != key.season:
                return "rekey"
        try:
            season = season_of(store)
        except TournamentError:  # an unreadable calendar: `referee season status` says why
            return "play"
        if season is None:
            return "play"
        if season.closed_at is None:
            return "over" if season.phase(utc_now()) == "over" else "play"
        return "idle" if season.number == self._closed_here else "play"

    def _end_season(self, store: Store, driver: TableDriver) -> bool:
        """One step of a season's end: nothing new dealt or picked up, the tables in flight
        given their grace, then the season closed under the planning claim (so no referee deals
        from its key meanwhile); whether it is closed (by this referee or another)."""
        if self._season_ending is None:
            self._season_ending = time.monotonic() + self.config.season.grace
            dropped = driver.discard(lambda spec: False)
            self._challenges.clear()
            self.log.info(
                "the season has ended: no new tables (%d waiting dropped), %d in flight get up "
                "to %.0f s",
                dropped,
                len(driver.in_flight),
                self.config.season.grace,
            )
        if driver.in_flight and time.monotonic() < self._season_ending:
            driver.pump(0.2, submit=False)
            return False
        if not store.schedules.claim(PLANNING):
            self._stop.wait(self.PICK_UP_SECONDS)  # another referee closes it, or plans
            return False
        try:
            driver.cancel()  # those still in flight: given up, and refused if they finish
            season = season_over(store, utc_now())
            if season is not None:
                if self.config.season.after != "next":
                    self._closed_here = season.number
                switch(store, self.config.season, utc_now(), self.log.info)
                self.on_season()
        finally:
            store.schedules.release(PLANNING)
        self._season_ending = None
        return True

    def _plan(
        self,
        store: Store,
        driver: TableDriver,
        current: Mapping[str, EntrantVersion],
        hold: bool,
    ) -> None:
        """Plan what is missing, holding the store's planning claim: one referee plans at a time
        and numbers the batches (the others pick them up from the store): the gauntlets of new
        versions, the challenges asked here, and a table for each free place of this referee."""
        k = self.settings.players

        def steady() -> bool:
            return not hold and driver.has_room and not driver.has_ready and len(current) >= k

        def gauntlets() -> list[str]:
            if len(current) < k:
                return []
            planned = {s.description for s in store.schedules.all(LADDER_PREFIX)}
            return [key for key in sorted(current) if f"{GAUNTLET} {key}" not in planned]

        if self._asked.empty() and not steady() and not gauntlets():
            return
        if not store.schedules.claim(PLANNING):
            return  # another referee plans now: its batches are picked up from the store
        try:
            if self._season_state(store) != "play":
                return  # the season ended, or its key was revealed, since the last look
            self._take_challenges(store, current)
            for key in gauntlets():  # read again under the claim: planned once, by one referee
                driver.add(self._plan_gauntlet(store, current, key), first=True)
            while steady():
                if self._challenges and self._rated_since_challenge:
                    driver.add([self._challenges.popleft()])
                    self._rated_since_challenge = False
                else:
                    driver.add(self._plan_steady(store, current))
                    self._rated_since_challenge = True
        finally:
            store.schedules.release(PLANNING)

    def _pick_up(
        self, store: Store, driver: TableDriver, current: Mapping[str, EntrantVersion]
    ) -> None:
        """Queue the store's tables still to play (ladder batches and challenges) that this
        referee does not have yet: planned before a restart, or by another referee, or held by
        one that died (its claims ended with its session). Which of the referees plays a table
        is decided when it is claimed (TableDriver), so the ladder is one schedule whoever runs
        it. Tables whose bots no longer play at those versions are left, and so are games this
        referee gave up on after their retries, for :attr:`given_up_for` seconds (then they are
        played again, here or by another referee, without a restart)."""
        known = driver.game_ids | driver.given_up_within(self.given_up_for)
        known.update(g for spec in self._challenges for g, _ in spec.games)
        keys = set(current)
        added = 0
        for prefix in (LADDER_PREFIX, UNRATED_PREFIX):
            for sid, game_ids in store.schedules.pending_games(prefix).items():
                if known.issuperset(game_ids):
                    continue  # being played here, or given up: nothing to read
                try:
                    stored = self._specs(store, sid)
                except TournamentError as error:  # an archive not to be had: never rated
                    if sid not in self._left:
                        self._left.add(sid)
                        self.log.warning("ladder: %s left to the other referees: %s", sid, error)
                        for game_id in sorted(game_ids):  # the arena's fault, said in the store
                            store.results.record_infra_failure(
                                game_id, InfraKind.ARTIFACT, str(error), run_id=self.run_id
                            )
                    continue
                specs = [
                    spec
                    for spec in stored
                    if _seated_among(keys)(spec) and not any(g in known for g, _ in spec.games)
                ]
                added += sum(len(spec.games) for spec in specs)
                if prefix == LADDER_PREFIX:
                    driver.add(specs)
                else:
                    self._challenges.extend(specs)
        if added and not self._picked_up:
            self.log.info(f"ladder: {added} games planned and not played yet: playing them")
        self._picked_up = True

    def _take_challenges(self, store: Store, current: Mapping[str, EntrantVersion]) -> None:
        """Store the challenges asked for since the last look (the author's limits counted here,
        across the arena's competitions, under the lock their ladders share) and queue their
        tables."""
        while True:
            try:
                asked = self._asked.get_nowait()
            except queue.Empty:
                return
            if not asked.future.set_running_or_notify_cancel():
                continue
            try:
                gone = [key for key in asked.seats if key not in current]
                if gone:
                    raise NotFoundError(f"{gone[0]} does not play here now")
                with self.quota.lock:  # counted and stored before another ladder counts
                    self.quota.admit(store, self.directory, asked.author)
                    n = len(store.schedules.all(UNRATED_PREFIX))
                    specs = self._save(
                        store,
                        current,
                        [asked.seats],
                        challenges.description(asked.author),
                        prefix=UNRATED_PREFIX,
                        number=n,
                    )
            except RequestError as error:
                asked.future.set_exception(error)
                continue
            except BaseException as error:
                asked.future.set_exception(error)
                raise
            self._challenges.extend(specs)
            self.log.info("ladder: %s%06d for %s: %s", UNRATED_PREFIX, n, asked.author, asked.seats)
            asked.future.set_result(f"{UNRATED_PREFIX}{n:06d}")

    def _say_if_short(self, store: Store, active: int, seats: int) -> None:
        """Say (in the log and ``referee tournament status``) when there are too few active bots
        to fill a table, once each time that changes."""
        short = active < seats
        note = (
            f"waiting for bots: {active} active, a table needs {seats}; no games are played"
            if short
            else None
        )
        if note != self._note:
            self._note = note
            store.settings.set_note("ladder", note)
            if note:
                self.log.warning("ladder: %s", note)
            else:
                self.log.info("ladder: %d active bots: playing", active)

    def _landed(self) -> None:
        self._last_game = time.monotonic()
        self._streak, self._backoff_until = 0, 0.0
        self.played += 1
        self.on_games(1)

    def _failed(self, outcome: GameOutcome) -> None:
        self._streak += 1
        self._backoff_until = time.monotonic() + min(60.0, 0.5 * 2 ** min(self._streak, 7))
        self.infra += 1
        first = (outcome.infra_detail or "").splitlines()[:1]
        self.log.warning(
            "ladder: game %s not played: %s: %s",
            outcome.game_id,
            outcome.infra_kind,
            first[0] if first else "",
        )

    # -- planning against the store
    # --------------------------------------------------------------------

    def _pool(self, store: Store, current: Mapping[str, EntrantVersion]) -> PoolView:
        scheduled = store.schedules.scheduled_seats(LADDER_PREFIX)
        games = {key: scheduled.get(v.id, 0) for key, v in current.items()}

        def results() -> list[GameResult]:
            # lazy: the leaderboard only when a planner asks
            from take5_arena.standings import results_from_store

            return results_from_store(store)

        authors = (
            {key: v.author for key, v in current.items()}
            if self.settings.separate_authors
            else None
        )
        return PoolView(tuple(sorted(current)), games, self.settings.players, results, authors)

    def _plan_gauntlet(
        self, store: Store, current: Mapping[str, EntrantVersion], key: str
    ) -> list[TableSpec]:
        n = len(store.schedules.all(LADDER_PREFIX))
        rng = self._choices(n, "gauntlet", 2_000_000_000)
        tables = self.planner.gauntlet(key, self._pool(store, current), rng)
        self.log.info("ladder: gauntlet for %s: %d tables", key, len(tables))
        return self._save(store, current, tables, f"{GAUNTLET} {key}", number=n)

    def _plan_steady(self, store: Store, current: Mapping[str, EntrantVersion]) -> list[TableSpec]:
        n = len(store.schedules.all(LADDER_PREFIX))
        rng = self._choices(n, "steady", 1_000_000_000)
        table = self.planner.next_table(self._pool(store, current), rng)
        return self._save(store, current, [table], "ladder", number=n)

    def _choices(self, n: int, kind: str, offset: int) -> SplitMix64:
        """The random source of ladder batch ``n``'s choices (tables, seat order): keyed by the
        season's secret key when the ladder deals from one (plan/deals.py), else from the public
        seed."""
        assert self.dealer is not None  # made by _loop
        public = deal_seed(int(self.config.seed), offset + n)
        return SplitMix64(self.dealer.choice_seed(f"ladder {kind} {n}", public))

    def _save(
        self,
        store: Store,
        current: Mapping[str, EntrantVersion],
        tables: Sequence[tuple[str, ...]],
        description: str,
        *,
        prefix: str = LADDER_PREFIX,
        number: int | None = None,
    ) -> list[TableSpec]:
        """Write a batch of tables to the store as a schedule (a ladder batch, or with
        ``prefix`` UNRATED_PREFIX challenge ``number``), then return their specs."""
        n = len(store.schedules.all(LADDER_PREFIX)) if number is None else number
        sid = f"{prefix}{n:06d}"
        context = self.settings.game_context()
        assert self.dealer is not None  # made by _loop
        namespace = LADDER_NAMESPACE if prefix == LADDER_PREFIX else challenges.NAMESPACE
        deals = self.dealer.source(namespace, context)
        rows = [
            {**g.to_dict(), "seats": [current[s].id for s in seats], "settings": context}
            for t, seats in enumerate(tables)
            for g in games_of_table(
                t, seats, deals(_table_base(sid) + t, seats), len(seats), context
            )
        ]
        store.schedules.save(
            sid,
            rows,
            description=description,
            settings=self.settings.to_json(),
            entrants=sorted({s for t in tables for s in t}),
        )
        return self._specs(store, sid)

    def _specs(self, store: Store, sid: str) -> list[TableSpec]:
        """The pending games of a ladder batch or a challenge as table specs: the tournament's
        spec builder, so they play the validated archives, as a tournament's games do."""
        specs = table_specs(
            store, sid, self.settings, table_base=_table_base(sid), dealer=self.dealer
        )
        return [replace(spec, home=self.home) for spec in specs]


def _table_base(sid: str) -> int:
    """The first table number of a ladder batch or a challenge: no two tables one driver plays
    share one, and so no two deals (challenges.TABLES)."""
    if sid.startswith(UNRATED_PREFIX):
        return challenges.TABLES + int(sid[len(UNRATED_PREFIX) :])
    return int(sid[len(LADDER_PREFIX) :]) * BATCH_TABLES


@dataclass(frozen=True)
class _Private:
    """A table asked for by :meth:`Ladder.play_table`, waiting for the ladder's thread."""

    spec: TableSpec
    future: concurrent.futures.Future[list[GameOutcome]]


@dataclass(frozen=True)
class _Asked:
    """A challenge asked for, waiting for the ladder's thread."""

    author: str
    seats: tuple[str, ...]
    future: concurrent.futures.Future[str]


def _seated_among(keys: set[str]) -> Callable[[TableSpec], bool]:
    """Whether every seat of a table is one of ``keys`` (the bots that play now)."""
    return lambda spec: all(seat.key in keys for seat in spec.seats)


class _Events(Progress):
    """What the ladder hears from its table driver."""

    def __init__(self, ladder: Ladder) -> None:
        self.ladder = ladder

    def game(self, outcome: GameOutcome, store: Store) -> None:
        self.ladder._landed()

    def infra(self, outcome: GameOutcome) -> None:
        self.ladder._failed(outcome)

    def note(self, text: str) -> None:
        self.ladder.log.warning("ladder: %s", text)


__all__ = [
    "BATCH_TABLES",
    "GAUNTLET",
    "LADDER_NAMESPACE",
    "LADDER_PREFIX",
    "PLANNING",
    "Ladder",
    "LadderConfig",
    "make_planner",
]
