"""One table of a tournament: the unit of work an executor runs.

The games of one table (its duplicate set: the same deal, every rotation) are played together, so
that the bots of a table are started once for its games. A :class:`TableSpec` is picklable and
:func:`run_table` is a top-level function, so any ``concurrent.futures`` executor (threads,
processes, dask; take5_arena/referee/tournament/executors.py) can run it. :func:`run_table` never raises for a
game: a game either ends with a record, or with an infrastructure failure that rates no one.

Bots travel with the work: a seat names its version's artifact (the digest of the source archive
validated at submission, take5_arena/referee/artifacts.py) and the spec carries the archives of its seats. The
worker checks each digest, unpacks the archive once into its own cache (``TAKE5_ARTIFACT_CACHE``)
and plays from there; its Docker engine builds each version's image once (images are tagged by a
hash of their sources). The submitted folder is never read, so no file system is shared with the
referee. Why the archives ride along with every table rather than being sent once per worker: a
bot's sources are kilobytes (bench/tournament.py prints the figures), the same order as a game
record coming back, and a spec that carries everything it needs can be retried on any worker,
including one that joined a minute ago, with no per-worker state to keep in step.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import defaults
from ..artifacts import ArtifactError, materialize
from ..kinds import InfraKind, SandboxKind
from ..match.botref import parse_bot
from ..match.faults import FaultKind
from ..match.play import Match, MatchConfig
from ..sandbox.engine import engine_answers
from ..sandbox.errors import EngineUnavailable, ImageBuildError
from ..sandbox.launcher import DockerLauncher
from ..sandbox.limits import SandboxLimits
from .errors import InfraError


@dataclass(frozen=True)
class SeatSpec:
    key: str  # name@version
    name: str
    version: int
    version_id: int
    bot: str  # the folder it was submitted from (played only for versions without an artifact)
    artifact: str | None = None  # "sha256:..." of the validated source archive: what plays


@dataclass(frozen=True)
class TableSpec:
    """Everything a worker needs to play the pending games of one table (picklable)."""

    table: int
    deal_seed: int
    seats: tuple[SeatSpec, ...]
    games: tuple[tuple[str, int], ...]  # (game id, rotation) still to play
    game_settings: dict
    timeout: float = defaults.TIMEOUT
    start_timeout: float = defaults.START_TIMEOUT
    max_faults: int = defaults.MAX_FAULTS
    sandbox: str = "local"
    limits: dict = field(default_factory=dict)  # memory, cpus, pids, runtime (docker)
    base_image: str = defaults.BASE_IMAGE
    bot_memory: str = defaults.BOT_MEMORY
    artifacts: dict[str, bytes] = field(default_factory=dict)  # digest -> archive, for its seats


@dataclass(frozen=True)
class GameOutcome:
    """A game played (``record``) or not (``infra_kind``/``infra_detail``: nobody's fault)."""

    game_id: str
    record: dict | None = None
    infra_kind: str | None = None
    infra_detail: str | None = None
    seconds: float = 0.0
    worker: str = ""  # the Dask worker that ran it ("" in the referee's process)

    @property
    def ok(self) -> bool:
        return self.record is not None


_launchers: dict[tuple, Any] = {}
_launchers_lock = threading.Lock()

#: Fault kinds that a vanished Docker engine also produces; after a game with one of them the
#: engine is asked whether it still answers, and if not the game is an infrastructure failure.
_ENGINE_SUSPECT = frozenset(
    {FaultKind.CRASH, FaultKind.TIMEOUT, FaultKind.CONNECTION, FaultKind.RESOURCE}
)


def _docker_launcher(spec: TableSpec):
    """One Docker launcher per worker process and limits (images built once, one events stream)."""
    key = (tuple(sorted(spec.limits.items())), spec.base_image, spec.bot_memory)
    with _launchers_lock:
        launcher = _launchers.get(key)
        if launcher is None:
            try:
                launcher = DockerLauncher(
                    limits=SandboxLimits(**spec.limits),
                    base_image=spec.base_image,
                    bot_memory=spec.bot_memory,
                )
            except EngineUnavailable as error:
                raise InfraError(InfraKind.ENGINE_UNAVAILABLE, str(error)) from None
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
    return engine_answers()


def run_table(
    spec: TableSpec, on_game: Callable[[GameOutcome], None] | None = None
) -> list[GameOutcome]:
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
        refs = [parse_bot(_seat_folder(spec, seat)) for seat in spec.seats]
        if spec.sandbox == SandboxKind.DOCKER:
            if not _engine_answers():
                raise InfraError(InfraKind.ENGINE_UNAVAILABLE, "no Docker engine answers")
            launcher = _docker_launcher(spec)
            for text, got in launcher.prepare(refs).items():
                if isinstance(got, ImageBuildError):
                    # Validated at submission: an image that cannot be built now is not the bot's doing.
                    kind = (
                        InfraKind.ENGINE_UNAVAILABLE if not _engine_answers() else InfraKind.IMAGE
                    )
                    raise InfraError(kind, f"{text}: {str(got).splitlines()[0]}")
        n = len(spec.seats)
        config = MatchConfig(
            games=n,
            seed=spec.deal_seed,
            timeout=spec.timeout,
            start_timeout=spec.start_timeout,
            max_faults=spec.max_faults,
            match_id=f"t{spec.table}",
            game_ids=_game_ids(spec, n),
            **spec.game_settings,
        )
        with Match(refs, config, launcher=launcher) as match:
            for game_id, rotation in spec.games:
                started = time.perf_counter()
                summary = match.play_game(rotation)
                if summary.seed != spec.deal_seed or summary.rotation != rotation:
                    raise InfraError(
                        InfraKind.REFEREE_ERROR,
                        f"the match played seed {summary.seed} "
                        f"rotation {summary.rotation}, not {spec.deal_seed}/{rotation}",
                    )
                record = summary.document
                if record is None:
                    raise InfraError(InfraKind.REFEREE_ERROR, "the match layer returned no record")
                if (
                    spec.sandbox == SandboxKind.DOCKER
                    and any(f["kind"] in _ENGINE_SUSPECT for seat in record["faults"] for f in seat)
                    and not _engine_answers()
                ):
                    raise InfraError(
                        InfraKind.ENGINE_UNAVAILABLE,
                        "the Docker engine stopped answering during the game",
                    )
                if not record.get("complete", True):
                    raise InfraError(
                        InfraKind.REFEREE_ERROR, "the match layer returned an incomplete game"
                    )
                record["game_id"] = game_id
                for seat, info in zip(spec.seats, record["seats"]):
                    info["bot_name"] = info.get("name")  # what the bot called itself
                    info.update(name=seat.name, entrant=seat.key, version=seat.version)
                emit(GameOutcome(game_id, record, seconds=time.perf_counter() - started))
    except InfraError as error:
        _fail_rest(spec, outcomes, emit, error.kind, error.detail)
        if launcher is not None and error.kind == InfraKind.ENGINE_UNAVAILABLE:
            _drop_launcher(launcher)
    except Exception as error:  # noqa: BLE001 - the referee's own failure: rates no one
        kind = InfraKind.REFEREE_ERROR
        if spec.sandbox == SandboxKind.DOCKER and not _engine_answers():
            kind = InfraKind.ENGINE_UNAVAILABLE
            if launcher is not None:
                _drop_launcher(launcher)
        detail = (
            f"{type(error).__name__}: {error}\n" + "".join(traceback.format_exc(limit=6))[-1500:]
        )
        _fail_rest(spec, outcomes, emit, kind, detail)
    return outcomes


def _dask_worker() -> str:
    """The address of the Dask worker running this, or "" (distributed is loaded only in one)."""
    distributed = sys.modules.get("distributed")
    if distributed is None:
        return ""
    try:
        return str(distributed.get_worker().address)
    except ValueError:  # not inside a worker's task
        return ""


def _seat_folder(spec: TableSpec, seat: SeatSpec) -> str:
    """Where this worker plays ``seat`` from: its artifact in the cache (unpacked now if needed)."""
    if seat.artifact is None:
        return seat.bot  # a version submitted before artifacts existed: its folder, as then
    try:
        return str(materialize(seat.artifact, spec.artifacts.get(seat.artifact)))
    except ArtifactError as error:
        raise InfraError(InfraKind.ARTIFACT, f"{seat.key}: {error}") from None


def _game_ids(spec: TableSpec, n: int) -> tuple[str, ...]:
    """The game ids by rotation, so that a bot sees the id the tournament records."""
    ids = {rotation: game_id for game_id, rotation in spec.games}
    return tuple(ids.get(r, f"t{spec.table}-g{r + 1}") for r in range(n))


def _fail_rest(
    spec: TableSpec, outcomes: list[GameOutcome], emit: Callable, kind: str, detail: str
) -> None:
    done = {o.game_id for o in outcomes}
    for game_id, _rotation in spec.games:
        if game_id not in done:
            emit(GameOutcome(game_id, infra_kind=kind, infra_detail=detail, worker=_dask_worker()))
