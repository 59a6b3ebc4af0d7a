"""Round-robin tournaments: entrants, settings, the runner, and resuming where a run stopped.

A tournament is a directory holding its store (referee/store.py: settings, entrants and their
versions, schedules, games and their records). The commands are thin wrappers over this module:

* ``referee submit BOT_DIR --name NAME --tournament DIR`` -> :func:`submit`: validate a bot (image
  built, starts, answers the handshake, plays a smoke game against the random example bot within
  the limits, without a fault) and record it as a new version of entrant NAME.
* ``referee tournament run --tournament DIR`` -> :func:`run_tournament`: the schedule of the current
  entrant versions (referee/schedule.py), then every game of it that is not recorded yet.
* ``referee tournament status --tournament DIR`` -> :func:`tournament_status`.

Running: the games of one table (its duplicate set: the same deal, every rotation) are one unit of
work, a picklable :class:`TableSpec` run by the top-level :func:`run_table` on any
``concurrent.futures`` executor (referee/executors.py), so that the bots of a table are started
once for its games. Each finished game goes to the store in one transaction as soon as the referee
sees it (with the local thread executor: game by game, while the table plays on).

Resume: the store is the source of truth. A run plays the scheduled games that have no result;
results are unique per game id, so nothing is recorded twice; a game cut off by a kill is simply
not recorded, and the next run plays it again from its seed.

Faults: a bot's fault (timeout, crash, illegal answer, resource limit, ...) is in the game record and
counts against that bot (the match layer, referee/match.py). An infrastructure failure (no Docker
engine, an image that cannot be built any more, the referee's own error) rates no one: the game is
not recorded, the failure is (``infra_failures``), and the game is retried later in the run, and
again in the next run.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import fcntl
import hashlib
import os
import queue
import secrets
import signal
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .schedule import Schedule, ScheduleError, make_schedule
from .store import EntrantVersion, Store, pid_alive, seconds_since

REPO_ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = REPO_ROOT / "example_bots" / "random"

DEFAULTS: dict[str, Any] = {
    "players": 4,
    "games": None,  # None: a complete round robin if small, else 10 tables per entrant
    "seed": 0,
    "variant": "standard",
    "threshold": 66,
    "end_rule": "at-or-above",
    "duplicate": True,
    "timeout": 1.0,
    "start_timeout": 10.0,
    "max_faults": 3,
    "sandbox": "docker",
    "executor": "auto",
    "concurrency": None,  # None: from the CPU count
    "memory": "256m",
    "cpus": 1.0,
    "pids": 64,
    "base_image": "take5/python:3.11",
    "retries": 3,
}
#: The settings that shape the schedule (and the game ids): changing one makes a new schedule.
SCHEDULE_KEYS = ("players", "games", "seed", "duplicate", "variant", "threshold", "end_rule")
GAME_KEYS = ("variant", "threshold", "end_rule")
SANDBOXES = ("docker", "local")


class TournamentError(Exception):
    """A tournament command cannot go on; the message is for the user."""


class SubmitRefused(TournamentError):
    """A bot failed validation: ``reason`` says why, ``stderr`` is the bot's own output."""

    def __init__(self, reason: str, stderr: str = ""):
        self.reason = reason
        self.stderr = stderr
        super().__init__(reason)


class InfraError(Exception):
    """Not a bot's fault: the game cannot be played now (engine unavailable, image, referee error)."""

    def __init__(self, kind: str, detail: str):
        self.kind = kind
        self.detail = detail
        super().__init__(f"{kind}: {detail}")


# ------------------------------------------------------------------------------------------------
# Settings


def resolve_settings(stored: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Defaults, then the stored settings, then the options given now (None = not given)."""
    settings = dict(DEFAULTS)
    settings.update({k: v for k, v in stored.items() if k in DEFAULTS})
    settings.update({k: v for k, v in overrides.items() if v is not None and k in DEFAULTS})
    check_settings(settings)
    return settings


def check_settings(s: Mapping[str, Any]) -> None:
    from take5 import Settings, Take5Error

    try:
        Settings(players=s["players"], variant=s["variant"], threshold=s["threshold"], end_rule=s["end_rule"])
    except Take5Error as error:
        raise TournamentError(str(error)) from None
    if s["sandbox"] not in SANDBOXES:
        raise TournamentError(f"unknown sandbox {s['sandbox']!r} (use docker or local)")
    if s["games"] is not None and int(s["games"]) < 1:
        raise TournamentError("games must be at least 1")
    if float(s["timeout"]) <= 0:
        raise TournamentError("the per-call deadline must be positive")
    if s["concurrency"] is not None and int(s["concurrency"]) < 1:
        raise TournamentError("concurrency must be at least 1")


def game_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    return {k: settings[k] for k in GAME_KEYS}


def concurrency_of(settings: Mapping[str, Any]) -> int:
    from .executors import default_concurrency

    return int(settings["concurrency"] or default_concurrency(int(settings["players"])))


def schedule_for(versions: Sequence[EntrantVersion], settings: Mapping[str, Any]) -> Schedule:
    try:
        return make_schedule(
            [v.key for v in versions],
            table_size=int(settings["players"]),
            games=settings["games"],
            seed=int(settings["seed"]),
            duplicate=bool(settings["duplicate"]),
            context=game_settings(settings),
        )
    except ScheduleError as error:
        raise TournamentError(f"no schedule: {error}") from None


def schedule_id(schedule: Schedule) -> str:
    h = hashlib.blake2b(digest_size=8)
    for g in schedule.games:
        h.update(g.game_id.encode())
    return h.hexdigest()


# ------------------------------------------------------------------------------------------------
# One table: the unit of work an executor runs


@dataclass(frozen=True)
class SeatSpec:
    key: str  # name@version
    name: str
    version: int
    version_id: int
    bot: str  # the bot folder (absolute), as `referee match` takes it


@dataclass(frozen=True)
class TableSpec:
    """Everything a worker needs to play the pending games of one table (picklable)."""

    table: int
    deal_seed: int
    seats: tuple[SeatSpec, ...]
    games: tuple[tuple[str, int], ...]  # (game id, rotation) still to play
    game_settings: dict
    timeout: float = 1.0
    start_timeout: float = 10.0
    max_faults: int = 3
    sandbox: str = "local"
    limits: dict = field(default_factory=dict)  # memory, cpus, pids (docker)
    base_image: str = DEFAULTS["base_image"]


@dataclass(frozen=True)
class GameOutcome:
    """A game played (``record``) or not (``infra_kind``/``infra_detail``: nobody's fault)."""

    game_id: str
    record: dict | None = None
    infra_kind: str | None = None
    infra_detail: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.record is not None


_launchers: dict[tuple, Any] = {}
_launchers_lock = threading.Lock()

#: Fault kinds that a vanished Docker engine also produces; after a game with one of them the
#: engine is asked whether it still answers, and if not the game is an infrastructure failure.
_ENGINE_SUSPECT = frozenset({"crash", "timeout", "connection", "resource"})


def _docker_launcher(spec: TableSpec):
    """One Docker launcher per worker process and limits (images built once, one events stream)."""
    from .sandbox.errors import EngineUnavailable
    from .sandbox.launcher import DockerLauncher
    from .sandbox.limits import SandboxLimits

    key = (tuple(sorted(spec.limits.items())), spec.base_image)
    with _launchers_lock:
        launcher = _launchers.get(key)
        if launcher is None:
            try:
                launcher = DockerLauncher(limits=SandboxLimits(**spec.limits), base_image=spec.base_image)
            except EngineUnavailable as error:
                raise InfraError("engine-unavailable", str(error)) from None
            _launchers[key] = launcher
        return launcher


def close_launchers() -> None:
    """Close this process's Docker launchers (their containers are removed)."""
    with _launchers_lock:
        items = list(_launchers.values())
        _launchers.clear()
    for launcher in items:
        with contextlib.suppress(Exception):
            launcher.close()


def _drop_launcher(launcher: Any) -> None:
    with _launchers_lock:
        for key, value in list(_launchers.items()):
            if value is launcher:
                del _launchers[key]
    with contextlib.suppress(Exception):
        launcher.close()


def _engine_answers() -> bool:
    """Whether a Docker engine answers now (asked afresh, on a new connection)."""
    from .sandbox.engine import engine_answers

    return engine_answers()


def run_table(spec: TableSpec, on_game: Callable[[GameOutcome], None] | None = None) -> list[GameOutcome]:
    """Play the pending games of one table with the match layer; never raises for a game.

    Returns one outcome per game of ``spec.games`` (and hands each to ``on_game`` as it ends).
    """
    outcomes: list[GameOutcome] = []

    def emit(outcome: GameOutcome) -> None:
        outcomes.append(outcome)
        if on_game is not None:
            on_game(outcome)

    launcher = None
    try:
        from .botref import parse_bot
        from .match import Match, MatchConfig

        refs = [parse_bot(seat.bot) for seat in spec.seats]
        if spec.sandbox == "docker":
            from .sandbox.errors import ImageBuildError

            if not _engine_answers():
                raise InfraError("engine-unavailable", "no Docker engine answers")
            launcher = _docker_launcher(spec)
            for text, got in launcher.prepare(refs).items():
                if isinstance(got, ImageBuildError):
                    # Validated at submission: an image that cannot be built now is not the bot's doing.
                    kind = "engine-unavailable" if not _engine_answers() else "image"
                    raise InfraError(kind, f"{text}: {str(got).splitlines()[0]}")
        n = len(spec.seats)
        config = MatchConfig(
            games=n,
            seed=spec.deal_seed,
            timeout=spec.timeout,
            start_timeout=spec.start_timeout,
            max_faults=spec.max_faults,
            match_id=f"t{spec.table}",
            **spec.game_settings,
        )
        with Match(refs, config, launcher=launcher) as match:
            for game_id, rotation in spec.games:
                started = time.perf_counter()
                summary = match.play_game(rotation)
                if summary.seed != spec.deal_seed or summary.rotation != rotation:
                    raise InfraError("referee-error", f"the match played seed {summary.seed} "
                                     f"rotation {summary.rotation}, not {spec.deal_seed}/{rotation}")
                record = summary.document
                if spec.sandbox == "docker" and any(
                    f["kind"] in _ENGINE_SUSPECT for seat in record["faults"] for f in seat
                ) and not _engine_answers():
                    raise InfraError("engine-unavailable", "the Docker engine stopped answering during the game")
                if not record.get("complete", True):
                    raise InfraError("referee-error", "the match layer returned an incomplete game")
                record["game_id"] = game_id
                for seat, info in zip(spec.seats, record["seats"]):
                    info["bot_name"] = info.get("name")  # what the bot called itself
                    info.update(name=seat.name, entrant=seat.key, version=seat.version)
                emit(GameOutcome(game_id, record, seconds=time.perf_counter() - started))
    except InfraError as error:
        _fail_rest(spec, outcomes, emit, error.kind, error.detail)
        if launcher is not None and error.kind == "engine-unavailable":
            _drop_launcher(launcher)
    except Exception as error:  # noqa: BLE001 - the referee's own failure: rates no one
        kind = "referee-error"
        if spec.sandbox == "docker" and not _engine_answers():
            kind = "engine-unavailable"
            if launcher is not None:
                _drop_launcher(launcher)
        detail = f"{type(error).__name__}: {error}\n" + "".join(traceback.format_exc(limit=6))[-1500:]
        _fail_rest(spec, outcomes, emit, kind, detail)
    return outcomes


def _fail_rest(spec: TableSpec, outcomes: list[GameOutcome], emit: Callable, kind: str, detail: str) -> None:
    done = {o.game_id for o in outcomes}
    for game_id, _rotation in spec.games:
        if game_id not in done:
            emit(GameOutcome(game_id, infra_kind=kind, infra_detail=detail))


# ------------------------------------------------------------------------------------------------
# Submitting an entrant


@dataclass(frozen=True)
class Submitted:
    version: EntrantVersion
    created: bool
    smoke: str  # one line about the smoke games


def submit(
    directory: str | os.PathLike,
    bot_dir: str | os.PathLike,
    name: str,
    *,
    sandbox: str | None = None,
    timeout: float | None = None,
    log: Callable[[str], None] = lambda line: None,
) -> Submitted:
    """Validate the bot in ``bot_dir`` and record it as (a new version of) entrant ``name``.

    Creates the tournament directory if needed. ``sandbox``/``timeout`` default to the
    tournament's settings. Raises :class:`SubmitRefused` (with the bot's stderr) when the bot does
    not build, start, shake hands, or play its smoke games without a fault.
    """
    from .botref import BadBotRef, parse_bot

    if not name or not all(c.isalnum() or c in "-_." for c in name) or len(name) > 40:
        raise TournamentError(f"name {name!r}: use 1-40 letters, digits, - _ .")
    folder = Path(bot_dir).resolve()
    if not folder.is_dir():
        raise TournamentError(f"{bot_dir}: not a bot folder")
    try:
        ref = parse_bot(str(folder))
    except BadBotRef as error:
        raise SubmitRefused(str(error)) from None
    store = Store(directory, create=True)
    try:
        settings = resolve_settings(store.settings(), {"sandbox": sandbox, "timeout": timeout})
        if not store.settings():
            store.set_settings(settings)
        sandbox = settings["sandbox"]
        if ref.kind == "dockerfile" and sandbox != "docker":
            raise SubmitRefused("the folder has only a Dockerfile: it can only run in the docker sandbox")
        from .sandbox.errors import ImageBuildError
        from .sandbox.legacy_build import source_hash

        try:
            digest = source_hash(folder)
        except ImageBuildError as error:
            raise SubmitRefused(str(error)) from None
        image_id = None
        launcher = None
        if sandbox == "docker":
            from .sandbox.errors import EngineUnavailable
            from .sandbox.launcher import DockerLauncher
            from .sandbox.limits import SandboxLimits

            try:
                launcher = DockerLauncher(
                    limits=SandboxLimits(memory=settings["memory"], cpus=float(settings["cpus"]),
                                         pids=int(settings["pids"])),
                    base_image=settings["base_image"],
                )
            except EngineUnavailable as error:
                raise TournamentError(
                    f"no Docker engine ({error}); run scripts/setup-docker.sh, or use --sandbox local"
                ) from None
        try:
            if launcher is not None:
                log(f"building the image of {folder} ...")
                try:
                    info = launcher.image(ref)
                except ImageBuildError as error:
                    raise SubmitRefused(f"the image does not build: {str(error).splitlines()[0]}",
                                        error.output) from None
                image_id = info.id
            log(f"smoke games against the random example bot ({sandbox}) ...")
            smoke = _smoke(ref, settings, launcher)
        finally:
            if launcher is not None:
                launcher.close()
        version, created = store.add_version(
            name, source_hash=digest, bot_dir=str(folder), kind=ref.kind, image_id=image_id,
            validation={"smoke": smoke, "sandbox": sandbox},
        )
        return Submitted(version, created, smoke)
    finally:
        store.close()


def _smoke(ref, settings: Mapping[str, Any], launcher) -> str:
    """Two games (one deal, both rotations) against the random bot; a fault refuses the bot."""
    from .botref import parse_bot
    from .match import Match, MatchConfig

    config = MatchConfig(
        games=2, seed=20260, timeout=float(settings["timeout"]),
        start_timeout=float(settings["start_timeout"]), max_faults=1, **game_settings({
            **settings, "variant": settings["variant"]}),
    )
    with Match([ref, parse_bot(str(RANDOM_BOT))], config, launcher=launcher) as match:
        for rejection in match.rejections:
            if rejection.bot == ref.text:
                raise SubmitRefused(f"{rejection.kind}: {rejection.detail}",
                                    match.entrants[0].handle.stderr_tail(4000))
        result = match.play()
        for game in result.games:
            if game.faults[0]:
                f = game.faults[0][0]
                raise SubmitRefused(
                    f"{f['kind']} in the smoke game (round {f['round']}, turn {f['turn']}): {f['detail']}",
                    match.entrants[0].handle.stderr_tail(4000),
                )
        info = match.entrants[0].info
    scores = [g.scores[0] for g in result.games]
    return (f"handshake ok ({info.name or ref.default_name} {info.version or ''}".rstrip()
            + f"), {len(scores)} smoke games without a fault, penalties {scores}")


# ------------------------------------------------------------------------------------------------
# Running


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
            raise TournamentError(f"another referee is running this tournament (pid {other or '?'})") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)


def _table_specs(store: Store, sid: str, settings: Mapping[str, Any]) -> list[TableSpec]:
    versions = {v.id: v for v in store.versions()}
    by_table: dict[int, list] = {}
    for g in store.schedule_games(sid, pending_only=True):
        by_table.setdefault(g.table_no, []).append(g)
    specs = []
    for table, games in by_table.items():
        first = games[0]
        seats = tuple(
            SeatSpec(versions[v].key, versions[v].name, versions[v].version, v, versions[v].bot_dir)
            for v in first.seats
        )
        specs.append(TableSpec(
            table=table, deal_seed=first.deal_seed, seats=seats,
            games=tuple((g.game_id, g.rotation) for g in games),
            game_settings=dict(first.settings), timeout=float(settings["timeout"]),
            start_timeout=float(settings["start_timeout"]), max_faults=int(settings["max_faults"]),
            sandbox=settings["sandbox"],
            limits={"memory": settings["memory"], "cpus": float(settings["cpus"]), "pids": int(settings["pids"])},
            base_image=settings["base_image"],
        ))
    return specs


def prepare_run(store: Store, overrides: Mapping[str, Any]) -> tuple[dict[str, Any], list[EntrantVersion], Schedule]:
    settings = resolve_settings(store.settings(), overrides)
    versions = store.current_versions()
    if len(versions) < int(settings["players"]):
        raise TournamentError(
            f"{len(versions)} entrant{'s' * (len(versions) != 1)} cannot fill a table of "
            f"{settings['players']}: submit more bots (`referee submit BOT_DIR --name NAME --tournament DIR`)"
        )
    if settings["sandbox"] == "local":
        docker_only = [v.name for v in versions if v.kind == "dockerfile"]
        if docker_only:
            raise TournamentError(f"{', '.join(docker_only)} can only run with --sandbox docker")
    return settings, versions, schedule_for(versions, settings)


def run_tournament(
    directory: str | os.PathLike,
    overrides: Mapping[str, Any] | None = None,
    *,
    runner: Callable[..., list[GameOutcome]] = run_table,
    progress: Any = None,
    retry_delay: float = 2.0,
) -> RunReport:
    """Play every game of the current schedule that is not recorded yet (see the module text).

    ``progress``: an object with ``start(report, store)``, ``game(outcome, store)``, ``infra(outcome)``
    and ``stop()`` (referee/progress.py), or None. ``runner``: the function an executor runs for a
    table (tests replace it).
    """
    from .executors import open_executor, parse_executor, resolve_auto

    directory = Path(directory)
    store = Store(directory)
    started = time.perf_counter()
    try:
        settings, versions, schedule = prepare_run(store, overrides or {})
        try:
            info = parse_executor(resolve_auto(settings["executor"], sandbox=settings["sandbox"],
                                               concurrency=concurrency_of(settings)))
        except ValueError as error:
            raise TournamentError(str(error)) from None
        with run_lock(directory):
            store.set_settings(settings)
            sid = schedule_id(schedule)
            ids = {v.key: v.id for v in versions}
            store.save_schedule(
                sid,
                [{**g.to_dict(), "seats": [ids[k] for k in g.seats], "settings": game_settings(settings)}
                 for g in schedule.games],
                description=schedule.describe(), settings=settings, entrants=[v.key for v in versions],
            )
            specs = _table_specs(store, sid, settings)
            counts = store.progress(sid)
            report = RunReport(schedule, sid, counts["total"], counts["done"])
            run_id = f"run-{secrets.token_hex(4)}"
            store.begin_run(run_id, schedule_id=sid, settings=settings, games=counts["total"])
            status = "failed"
            try:
                if progress is not None:
                    progress.start(report, store)
                with open_executor(info, concurrency_of(settings)) as (executor, info):
                    _drive(store, executor, info, specs, settings, report, run_id, runner, progress, retry_delay)
                status = "interrupted" if report.interrupted else ("finished" if not report.unplayed else "incomplete")
            except KeyboardInterrupt:
                report.interrupted = True
                status = "interrupted"
            finally:
                if progress is not None:
                    progress.stop()
                report.seconds = time.perf_counter() - started
                store.end_run(run_id, status, store.progress(sid)["done"])
                if settings["sandbox"] == "docker" and info.in_process:
                    close_launchers()
        return report
    finally:
        store.close()


def _drive(store: Store, executor, info, specs: list[TableSpec], settings, report: RunReport, run_id: str,
           runner, progress, retry_delay: float) -> None:
    limit = concurrency_of(settings)
    retries = int(settings["retries"])
    waiting: deque[tuple[float, TableSpec, int]] = deque((0.0, s, 0) for s in specs)
    in_flight: dict[concurrent.futures.Future, tuple[TableSpec, int]] = {}
    finished: queue.SimpleQueue[GameOutcome] = queue.SimpleQueue()
    seen: set[str] = set()
    failed_tables: dict[int, list[tuple[str, int]]] = {}  # table -> (game id, rotation) to retry
    last_beat = 0.0
    stopping = False

    previous = signal.getsignal(signal.SIGTERM)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise_interrupt)

    def handle(outcome: GameOutcome, spec: TableSpec, attempt: int) -> None:
        if outcome.game_id in seen:
            return
        seen.add(outcome.game_id)
        if outcome.ok:
            if store.record_game(outcome.game_id, outcome.record, run_id=run_id, seconds=outcome.seconds):
                report.played += 1
            if progress is not None:
                progress.game(outcome, store)
        else:
            store.record_infra_failure(outcome.game_id, outcome.infra_kind or "infra", outcome.infra_detail or "",
                                       run_id=run_id)
            report.infra.append((outcome.game_id, outcome.infra_kind or "infra", outcome.infra_detail or ""))
            failed_tables.setdefault(spec.table, []).extend(g for g in spec.games if g[0] == outcome.game_id)
            if progress is not None:
                progress.infra(outcome)

    try:
        while waiting or in_flight:
            now = time.monotonic()
            while not stopping and waiting and len(in_flight) < limit and waiting[0][0] <= now:
                _, spec, attempt = waiting.popleft()
                if info.in_process:
                    fut = executor.submit(runner, spec, finished.put)
                else:
                    fut = executor.submit(runner, spec)
                in_flight[fut] = (spec, attempt)
            if stopping and not in_flight:
                break
            done, _ = concurrent.futures.wait(list(in_flight), timeout=0.25,
                                              return_when=concurrent.futures.FIRST_COMPLETED) \
                if in_flight else (set(), set())
            if not in_flight:
                time.sleep(min(0.25, max(0.0, waiting[0][0] - time.monotonic())) if waiting else 0)
            spec_of = {s.table: (s, a) for s, a in in_flight.values()}
            while True:
                try:
                    outcome = finished.get_nowait()
                except queue.Empty:
                    break
                table = _table_of(outcome.game_id, spec_of)
                if table is not None:
                    handle(outcome, *table)
            for fut in done:
                spec, attempt = in_flight.pop(fut)
                try:
                    outcomes = fut.result()
                except Exception as error:  # noqa: BLE001 - the executor failed: infrastructure
                    outcomes = [GameOutcome(g, infra_kind="executor", infra_detail=f"{type(error).__name__}: {error}")
                                for g, _ in spec.games]
                while True:  # callbacks that raced the future's completion
                    try:
                        early = finished.get_nowait()
                    except queue.Empty:
                        break
                    t = _table_of(early.game_id, {**spec_of, spec.table: (spec, attempt)})
                    if t is not None:
                        handle(early, *t)
                for outcome in outcomes:
                    handle(outcome, spec, attempt)
                retry = failed_tables.pop(spec.table, None)
                if retry:
                    for gid, _ in retry:
                        seen.discard(gid)
                    if attempt < retries and not stopping:
                        delay = retry_delay * (2 ** attempt)
                        waiting.append((time.monotonic() + delay, _with_games(spec, tuple(retry)), attempt + 1))
            if time.monotonic() - last_beat > 2.0:
                last_beat = time.monotonic()
                store.heartbeat(run_id, report.done)
    except KeyboardInterrupt:
        report.interrupted = True
        stopping = True
        if progress is not None:
            progress.note("interrupted: the games in progress are abandoned; run the same command to resume")
        for fut in in_flight:
            fut.cancel()
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, previous)
    report.unplayed = report.total - store.progress(report.schedule_id)["done"]


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _with_games(spec: TableSpec, games: tuple) -> TableSpec:
    from dataclasses import replace

    return replace(spec, games=games)


def _table_of(game_id: str, spec_of: Mapping[int, tuple[TableSpec, int]]) -> tuple[TableSpec, int] | None:
    for spec, attempt in spec_of.values():
        if any(g == game_id for g, _ in spec.games):
            return spec, attempt
    return None


# ------------------------------------------------------------------------------------------------
# Reading a tournament back


def entrant_labels(store: Store) -> dict[int, str]:
    """Version id -> label in standings: the entrant's name for its latest version, name@vN for older."""
    latest: dict[str, int] = {}
    versions = store.versions()
    for v in versions:
        latest[v.name] = max(latest.get(v.name, 0), v.version)
    return {v.id: v.name if v.version == latest[v.name] else f"{v.name}@v{v.version}" for v in versions}


def game_results(store: Store, schedule_id: str | None = None) -> list:
    """The recorded games as ``leaderboard.ratings.GameResult`` (imported here, lazily)."""
    from leaderboard.ratings import GameResult

    labels = entrant_labels(store)
    return [
        GameResult(
            game_id=r.game_id,
            entrants=tuple(labels[v] for v in r.versions),
            penalties=r.scores,
            places=r.places,
            duplicate_set=r.duplicate_set,
            faults=r.faults,
            played_at=r.seq,
        )
        for r in store.seat_results(schedule_id)
    ]


def standings(store: Store, *, bootstrap: int = 100, seed: int = 0):
    """``leaderboard.ratings.compute_standings`` over every recorded game (None without games)."""
    results = game_results(store)
    if not results:
        return None
    from leaderboard.ratings import compute_standings

    return compute_standings(results, bootstrap=bootstrap, seed=seed)


def tournament_status(directory: str | os.PathLike) -> dict[str, Any]:
    """Where a tournament stands: settings, entrants, schedule progress, runs, failures."""
    store = Store(directory, readonly=True)
    try:
        current = store.current_schedule()
        progress = store.progress(current["schedule_id"]) if current else {"total": 0, "done": 0, "infra_failures": 0}
        run = store.last_run()
        state = "not started"
        if run is not None:
            state = run["status"]
            if state == "running":
                alive = pid_alive(run["pid"], run["host"])
                if alive is False:
                    state = "stopped (the referee was killed)"
                elif alive is None:
                    age = seconds_since(run["heartbeat_at"]) or 0
                    state = "running (on another host)" if age < 60 else "stopped?"
        pending_errors = [
            {"game_id": f["game_id"], "kind": f["kind"], "detail": f["detail"].splitlines()[0] if f["detail"] else ""}
            for f in store.infra_failures(current["schedule_id"] if current else None)
        ]
        return {
            "directory": str(Path(directory)),
            "settings": store.settings(),
            "entrants": [
                {"name": v.name, "version": v.version, "kind": v.kind, "source_hash": v.source_hash[:12],
                 "image_id": (v.image_id or "")[:19], "submitted_at": v.submitted_at}
                for v in store.versions()
            ],
            "schedule": current,
            "progress": progress,
            "recorded": store.recorded_count(),
            "run": run,
            "state": state,
            "infra_failures": pending_errors,
            "store": store,
        }
    except Exception:
        store.close()
        raise


def settings_summary(settings: Mapping[str, Any]) -> str:
    rule = "at or above" if settings.get("end_rule") == "at-or-above" else "above"
    return (
        f"tables of {settings['players']}, {settings['variant']}, ends {rule} {settings['threshold']}, "
        f"seed {settings['seed']}, {'duplicate deals' if settings['duplicate'] else 'single deals'}, "
        f"{settings['timeout']:g} s per call, sandbox {settings['sandbox']}, executor {settings['executor']}, "
        f"concurrency {concurrency_of(settings)}"
    )


__all__ = [
    "DEFAULTS",
    "GameOutcome",
    "InfraError",
    "RunReport",
    "SubmitRefused",
    "Submitted",
    "TableSpec",
    "TournamentError",
    "game_results",
    "prepare_run",
    "run_table",
    "run_tournament",
    "schedule_for",
    "standings",
    "submit",
    "tournament_status",
]
