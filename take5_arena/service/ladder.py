"""The continuous ladder: while the arena serves, games keep being played between the active bots.

Every game goes through the tournament machinery (take5_arena/referee/tournament/): a table is a
:class:`~take5_arena.referee.tournament.TableSpec` (one deal, every rotation: a duplicate set), played by
``run_table`` on a ``concurrent.futures`` executor (local threads by default, or Dask), and each
finished game is committed to the store with its record in one transaction, game ids unique. So the
ladder inherits the tournament's guarantees: nothing recorded twice, and a game cut off by a killed
server is not recorded and is replayed from its seed.

What to play next is a :class:`Planner`'s choice; :func:`make_planner` is the one place that picks
it. The default :class:`SettlingPlanner`:

* **Gauntlet**: a bot version that has not had one plays ``gauntlet_tables`` tables with each other
  active bot (the other seats filled with the least-played bots), before anything else is planned.
* **Steady state**: one table at a time, where the ranking is least settled: the window of
  neighbours in the current order whose likelihoods of superiority are furthest from 95%, by the
  rule of ``referee tournament run --until-settled`` (take5_arena/referee/tournament/adaptive.py). While a bot
  has no game yet, the least-played active bot plus a seeded random choice of the others.

The plan is written to the store before it is played: each planned batch is a schedule
``ladder-NNNNNN`` (the gauntlet's description names the version), with its games pending. At start
the ladder first plays the pending games of earlier batches whose bots are all still active at the
same versions; the deal seeds come from the batch number, so ids never repeat. A game that fails for
a reason that is nobody's fault (no Docker engine, ...) is retried like in a tournament, and failures
in a row make the ladder wait longer and longer (up to a minute) before its next table.

Publishing is a separate thread (:class:`Publisher`): standings.json and the static site are
refreshed when ``every_games`` new games have landed, or ``every_seconds`` after the first one that
has not been published, whichever comes first, and the latest standings document is kept for the
arena's Standings call.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import queue
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from take5.shuffle import SplitMix64
from take5_arena.referee.store import EntrantVersion, Store
from take5_arena.referee.tournament.schedule import deal_seed, game_id
from take5_arena.referee.tournament.settings import game_settings, sandbox_limits
from take5_arena.referee.tournament.table import GameOutcome, SeatSpec, TableSpec, run_table

LADDER_PREFIX = "ladder-"
GAUNTLET = "gauntlet"


@dataclass(frozen=True)
class LadderConfig:
    """How the ladder plays and publishes (``referee serve`` options)."""

    gauntlet_tables: int = 1  # tables a new version plays with each other active bot
    seed: int = 0
    every_games: int = 20  # publish after this many new games ...
    every_seconds: float = 30.0  # ... or this long after an unpublished game
    site: Path | None = None  # where to publish (None: standings are kept for the API only)
    bootstrap: int = 100
    idle_seconds: float = 0.5  # how often to look for bots when there are too few to play


# ------------------------------------------------------------------------------------------------
# Planning


@dataclass(frozen=True)
class PoolView:
    """What a planner sees: the active bots (``name@version`` keys) and their games so far
    (recorded plus planned), and how to read the results for a planner that rates."""

    keys: tuple[str, ...]
    games: Mapping[str, int]
    table_size: int
    results: Callable[[], list] = field(default=list, repr=False, compare=False)


class Planner(Protocol):
    """Chooses the ladder's tables. Tables are tuples of keys in seat order."""

    def gauntlet(self, newcomer: str, pool: PoolView) -> list[tuple[str, ...]]:
        """The tables a new bot version plays first (possibly none)."""
        ...

    def next_table(self, pool: PoolView, rng: SplitMix64) -> tuple[str, ...]:
        """One more table, when nothing else is waiting."""
        ...


class GauntletPlanner:
    """The default planner (see the module text)."""

    def __init__(self, gauntlet_tables: int = 1):
        self.gauntlet_tables = gauntlet_tables

    def gauntlet(self, newcomer: str, pool: PoolView) -> list[tuple[str, ...]]:
        others = sorted(k for k in pool.keys if k != newcomer)
        k = pool.table_size
        if len(others) < k - 1:
            return []
        games = dict(pool.games)
        tables: list[tuple[str, ...]] = []
        for _ in range(self.gauntlet_tables):
            for opponent in others:
                rest = sorted(
                    (o for o in others if o != opponent), key=lambda o: (games.get(o, 0), o)
                )
                seats = (newcomer, opponent, *rest[: k - 2])
                for s in seats:
                    games[s] = games.get(s, 0) + 1
                tables.append(seats)
        return tables

    def next_table(self, pool: PoolView, rng: SplitMix64) -> tuple[str, ...]:
        keys = list(pool.keys)
        shuffled = [keys[i] for i in rng.shuffled(range(len(keys)))]
        first = min(shuffled, key=lambda key: pool.games.get(key, 0))
        rest = [key for key in shuffled if key != first][: pool.table_size - 1]
        seats = [first, *rest]
        return tuple(seats[i] for i in rng.shuffled(range(len(seats))))


class SettlingPlanner(GauntletPlanner):
    """The gauntlet first, then each next table where the ranking is least settled: the window of
    neighbours in the current order whose likelihoods of superiority are furthest from the
    confidence (take5_arena.referee.tournament.adaptive, the scheduler of ``tournament run --until-settled``).
    Bots that have not played yet, or a pool too small for a window, get the least-played table."""

    def next_table(self, pool: PoolView, rng: SplitMix64) -> tuple[str, ...]:
        k = pool.table_size
        by_name = {key.rsplit("@", 1)[0]: key for key in pool.keys}  # current versions go by name
        if len(by_name) < k or any(pool.games.get(key, 0) == 0 for key in pool.keys):
            return super().next_table(pool, rng)
        # lazy: numpy and scipy only once the ladder rates
        from take5_arena.leaderboard.board import ranking_with_los
        from take5_arena.referee.tournament.adaptive import neediest_table

        order, los = ranking_with_los(
            [r for r in pool.results() if all(e in by_name for e in r.entrants)]
        )
        if set(order) != set(by_name):
            return super().next_table(pool, rng)
        window = neediest_table(order, los, table_size=k, seed=rng.next_u64())
        seats = [by_name[name] for name in window]
        return tuple(seats[i] for i in rng.shuffled(range(len(seats))))


def make_planner(config: LadderConfig) -> Planner:
    """The ladder's planner: a gauntlet for each new version, then tables where the ranking is
    least settled."""
    return SettlingPlanner(config.gauntlet_tables)


# ------------------------------------------------------------------------------------------------
# The ladder


class Ladder:
    """Plays games for as long as it runs (a thread; :meth:`stop` ends it)."""

    def __init__(
        self,
        directory: str | Path,
        settings: Mapping[str, Any],
        config: LadderConfig,
        *,
        executor: concurrent.futures.Executor | None = None,
        in_process: bool = True,
        concurrency: int = 1,
        on_games: Callable[[int], None] = lambda n: None,
        log: Callable[[str], None] = lambda line: None,
    ):
        self.directory = Path(directory)
        self.settings = dict(settings)
        self.config = config
        self.planner = make_planner(config)
        self.concurrency = max(1, concurrency)
        self.executor = executor
        self.in_process = in_process
        self.on_games = on_games
        self.log = log
        self.played = 0
        self.infra = 0
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ladder", daemon=True)
        self._in_flight: dict[concurrent.futures.Future, TableSpec] = {}
        self.error: str | None = None

    # -- control -------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def wake(self) -> None:
        """Something changed (a new version, a withdrawal): look at the pool now."""
        self._wake.set()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    # -- the loop ----------------------------------------------------------------------------------

    def _run(self) -> None:
        own = None
        if self.executor is None:
            own = concurrent.futures.ThreadPoolExecutor(
                self.concurrency, thread_name_prefix="ladder-table"
            )
            self.executor = own
        failures = 0
        try:
            while not self._stop.is_set():
                store = Store(self.directory)
                try:
                    self._loop(store)
                except Exception as error:  # noqa: BLE001 - reported; the ladder starts over from the store
                    failures += 1
                    self.error = f"{type(error).__name__}: {error}"
                    self.log(
                        f"ladder failed ({self.error}); starting over from the store\n"
                        + traceback.format_exc(limit=8)
                    )
                    # the tables still playing finish first, so that none is played twice at once
                    concurrent.futures.wait(list(self._in_flight), timeout=300)
                    self._stop.wait(min(60.0, 2.0 * failures))
                finally:
                    store.close()
        finally:
            if own is not None:
                own.shutdown(wait=False, cancel_futures=True)

    def _loop(self, store: Store) -> None:
        k = int(self.settings["players"])
        waiting: deque[TableSpec] = deque(self._resume(store))
        if waiting:
            self.log(
                f"ladder: resuming {sum(len(s.games) for s in waiting)} games planned before the restart"
            )
        in_flight: dict[concurrent.futures.Future, TableSpec] = {}
        self._in_flight = in_flight
        finished: queue.SimpleQueue[GameOutcome] = queue.SimpleQueue()
        seen: set[str] = set()
        retries = int(self.settings.get("retries", 3))
        attempts: dict[str, int] = {}
        # Infrastructure failures in a row (no engine, ...): wait longer and longer before starting
        # the next table, instead of planning and failing tables as fast as they fail.
        streak = 0
        backoff_until = 0.0

        def handle(outcome: GameOutcome) -> None:
            nonlocal streak, backoff_until
            if outcome.game_id in seen:
                return
            seen.add(outcome.game_id)
            if outcome.record is not None:
                streak, backoff_until = 0, 0.0
                if store.record_game(
                    outcome.game_id, outcome.record, run_id="ladder", seconds=outcome.seconds
                ):
                    self.played += 1
                    self.on_games(1)
            else:
                streak += 1
                backoff_until = time.monotonic() + min(60.0, 0.5 * 2 ** min(streak, 7))
                self.infra += 1
                store.record_infra_failure(
                    outcome.game_id,
                    outcome.infra_kind or "infra",
                    outcome.infra_detail or "",
                    run_id="ladder",
                )
                self.log(
                    f"ladder: game {outcome.game_id} not played: {outcome.infra_kind}: "
                    f"{(outcome.infra_detail or '').splitlines()[0] if outcome.infra_detail else ''}"
                )

        while not self._stop.is_set():
            current = {v.key: v for v in store.current_versions()}
            # drop planned tables of bots withdrawn or replaced meanwhile
            waiting = deque(s for s in waiting if all(seat.key in current for seat in s.seats))
            if len(current) >= k:
                for key in sorted(current):
                    if not self._has_gauntlet(store, key):
                        waiting.extendleft(reversed(self._plan_gauntlet(store, current, key)))
            while (
                len(in_flight) < self.concurrency
                and not self._stop.is_set()
                and time.monotonic() >= backoff_until
            ):
                if not waiting and len(current) >= k:
                    waiting.extend(self._plan_steady(store, current))
                if not waiting:
                    break
                spec = waiting.popleft()
                if self.in_process:
                    fut = self.executor.submit(run_table, spec, finished.put)  # type: ignore[union-attr]
                else:
                    fut = self.executor.submit(run_table, spec)  # type: ignore[union-attr]
                in_flight[fut] = spec
            if in_flight:
                done, _ = concurrent.futures.wait(
                    list(in_flight), timeout=0.2, return_when=concurrent.futures.FIRST_COMPLETED
                )
            else:
                done = set()
                pause = max(self.config.idle_seconds, backoff_until - time.monotonic())
                self._wake.wait(min(pause, 60.0))
                self._wake.clear()
            while True:
                try:
                    handle(finished.get_nowait())
                except queue.Empty:
                    break
            for fut in done:
                spec = in_flight.pop(fut)
                try:
                    outcomes = fut.result()
                except Exception as error:  # noqa: BLE001 - the executor failed: infrastructure
                    outcomes = [
                        GameOutcome(
                            g,
                            infra_kind="executor",
                            infra_detail=f"{type(error).__name__}: {error}",
                        )
                        for g, _ in spec.games
                    ]
                while True:
                    try:
                        handle(finished.get_nowait())
                    except queue.Empty:
                        break
                for outcome in outcomes:
                    handle(outcome)
                failed = tuple(
                    g for g in spec.games if g[0] in {o.game_id for o in outcomes if not o.ok}
                )
                for gid, _ in failed:
                    seen.discard(gid)
                    attempts[gid] = attempts.get(gid, 0) + 1
                retry = tuple(g for g in failed if attempts[g[0]] <= retries)
                if retry:
                    waiting.append(replace(spec, games=retry))
        for fut in in_flight:
            fut.cancel()

    # -- planning against the store --------------------------------------------------------------------

    @staticmethod
    def _has_gauntlet(store: Store, key: str) -> bool:
        return (
            store.db.execute(
                "SELECT 1 FROM schedules WHERE schedule_id LIKE ? AND description = ?",
                (LADDER_PREFIX + "%", f"{GAUNTLET} {key}"),
            ).fetchone()
            is not None
        )

    def _pool(self, store: Store, current: Mapping[str, EntrantVersion]) -> PoolView:
        by_id = {v.id: v.key for v in current.values()}
        games: dict[str, int] = dict.fromkeys(current, 0)
        for row in store.db.execute(
            "SELECT seats FROM games g JOIN schedule_games s ON s.game_id = g.game_id "
            "WHERE s.schedule_id LIKE ?",
            (LADDER_PREFIX + "%",),
        ):
            for vid in json.loads(row[0]):
                if vid in by_id:
                    games[by_id[vid]] += 1

        def results() -> list:
            # lazy: the leaderboard only when a planner asks
            from take5_arena.standings import results_from_store

            return results_from_store(store)

        return PoolView(tuple(sorted(current)), games, int(self.settings["players"]), results)

    def _batch_number(self, store: Store) -> int:
        return store.db.execute(
            "SELECT COUNT(*) FROM schedules WHERE schedule_id LIKE ?", (LADDER_PREFIX + "%",)
        ).fetchone()[0]

    def _plan_gauntlet(
        self, store: Store, current: Mapping[str, EntrantVersion], key: str
    ) -> list[TableSpec]:
        tables = self.planner.gauntlet(key, self._pool(store, current))
        self.log(f"ladder: gauntlet for {key}: {len(tables)} tables")
        return self._save(store, current, tables, f"{GAUNTLET} {key}")

    def _plan_steady(self, store: Store, current: Mapping[str, EntrantVersion]) -> list[TableSpec]:
        n = self._batch_number(store)
        rng = SplitMix64(deal_seed(int(self.config.seed), 1_000_000_000 + n))
        table = self.planner.next_table(self._pool(store, current), rng)
        return self._save(store, current, [table], "ladder")

    def _save(
        self,
        store: Store,
        current: Mapping[str, EntrantVersion],
        tables: Sequence[tuple[str, ...]],
        description: str,
    ) -> list[TableSpec]:
        """Write a batch of tables to the store as a schedule, then return their specs."""
        n = self._batch_number(store)
        sid = f"{LADDER_PREFIX}{n:06d}"
        context = game_settings(self.settings)
        rows = []
        for t, seats in enumerate(tables):
            dseed = deal_seed(int(self.config.seed), n * 10_000 + t)
            ids = [game_id(seats, dseed, r, context) for r in range(len(seats))]
            for r, gid in enumerate(ids):
                rows.append(
                    {
                        "game_id": gid,
                        "table": t,
                        "rotation": r,
                        "deal_seed": dseed,
                        "duplicate_set": ids[0],
                        "seats": [current[s].id for s in seats],
                        "settings": context,
                    }
                )
        store.save_schedule(
            sid,
            rows,
            description=description,
            settings=self.settings,
            entrants=sorted({s for t in tables for s in t}),
        )
        return self._specs(store, sid)

    def _resume(self, store: Store) -> list[TableSpec]:
        current_ids = {v.id for v in store.current_versions()}
        specs: list[TableSpec] = []
        sids = [
            r[0]
            for r in store.db.execute(
                "SELECT schedule_id FROM schedules WHERE schedule_id LIKE ? ORDER BY schedule_id",
                (LADDER_PREFIX + "%",),
            )
        ]
        for sid in sids:
            specs.extend(
                s
                for s in self._specs(store, sid)
                if all(seat.version_id in current_ids for seat in s.seats)
            )
        return specs

    def _specs(self, store: Store, sid: str) -> list[TableSpec]:
        """The pending games of a ladder batch as table specs (as ``tournament run`` builds them)."""
        s = self.settings
        versions = {v.id: v for v in store.versions()}
        by_table: dict[int, list] = {}
        for g in store.schedule_games(sid, pending_only=True):
            by_table.setdefault(g.table_no, []).append(g)
        specs = []
        for table, games in sorted(by_table.items()):
            first = games[0]
            seats = tuple(
                SeatSpec(
                    versions[v].key, versions[v].name, versions[v].version, v, versions[v].bot_dir
                )
                for v in first.seats
            )
            specs.append(
                TableSpec(
                    table=int(sid[len(LADDER_PREFIX) :]) * 10_000 + table,
                    deal_seed=first.deal_seed,
                    seats=seats,
                    games=tuple((g.game_id, g.rotation) for g in games),
                    game_settings=dict(first.settings),
                    timeout=float(s["timeout"]),
                    start_timeout=float(s["start_timeout"]),
                    max_faults=int(s["max_faults"]),
                    sandbox=s["sandbox"],
                    limits=sandbox_limits(s),
                    base_image=s["base_image"],
                    bot_memory=s["bot_memory"],
                )
            )
        return specs


# ------------------------------------------------------------------------------------------------
# Publishing


class Publisher:
    """Refreshes standings (and the site) as games land; keeps the latest standings document."""

    def __init__(
        self,
        directory: str | Path,
        config: LadderConfig,
        *,
        title: str | None = None,
        log: Callable[[str], None] = lambda line: None,
    ):
        self.directory = Path(directory)
        self.config = config
        self.title = title
        self.log = log
        self.lock = threading.Lock()
        self.document: dict[str, Any] | None = None
        self.computed_at = ""
        self.published_games = -1
        self.publications = 0
        self._pending = 0
        self._first_pending: float | None = None
        self._stop = threading.Event()
        self._kick = threading.Event()
        self._thread = threading.Thread(target=self._run, name="publisher", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._kick.set()
        self._thread.join(60)

    def games_landed(self, n: int) -> None:
        with self.lock:
            self._pending += n
            if self._first_pending is None:
                self._first_pending = time.monotonic()
            if self._pending >= self.config.every_games:
                self._kick.set()

    def latest(self) -> tuple[dict[str, Any] | None, str]:
        with self.lock:
            return self.document, self.computed_at

    def _due(self) -> bool:
        with self.lock:
            if self._pending >= self.config.every_games:
                return True
            return (
                self._first_pending is not None
                and time.monotonic() - self._first_pending >= self.config.every_seconds
            )

    def _run(self) -> None:
        with contextlib.suppress(Exception):
            self.publish()  # what is there already, at start
        while not self._stop.is_set():
            self._kick.wait(0.25)
            self._kick.clear()
            if self._due():
                try:
                    self.publish()
                except Exception as error:  # noqa: BLE001 - reported; the next publication retries
                    self.log(f"publishing failed: {type(error).__name__}: {error}")

    def publish(self) -> None:
        """Compute the standings now, keep them, and write the site (if configured)."""
        from take5_arena.leaderboard.publish import standings_document  # lazy: start-up time
        from take5_arena.leaderboard.board import compute_standings  # lazy: start-up time
        from take5_arena.leaderboard.site_build import publish_site  # lazy: start-up time
        from take5_arena.standings import load_tournament  # lazy: start-up time

        with self.lock:
            self._pending = 0
            self._first_pending = None
        games = load_tournament(self.directory)
        stamp = datetime.now(timezone.utc)
        if not games.results:
            return
        table = compute_standings(games.results, bootstrap=self.config.bootstrap, seed=0)
        title = self.title or games.title
        doc = standings_document(
            table, games.results, title=title, generated_at=stamp.strftime("%Y-%m-%d %H:%M:%S UTC")
        )
        if self.config.site is not None:
            # streamed and incremental: only what the new games change is written
            publish_site(
                self.config.site,
                results=games.results,
                games=games,
                standings=table,
                title=title,
                generated_at=stamp.strftime("%Y-%m-%d %H:%M UTC"),
            )
        with self.lock:
            self.document = doc
            self.computed_at = stamp.isoformat(timespec="seconds")
            self.published_games = len(games.results)
            self.publications += 1


__all__ = [
    "GauntletPlanner",
    "Ladder",
    "LadderConfig",
    "Planner",
    "PoolView",
    "Publisher",
    "make_planner",
]
