"""One table of a tournament: the unit of work an executor runs.

The games of one table (its duplicate set: the same deal, every rotation) are played together, so
that the bots of a table are started once for its games. A :class:`TableSpec` is picklable and
:func:`run_table` is a top-level function, so any ``concurrent.futures`` executor (threads,
processes, dask; executors.py) can run it. :func:`run_table` never
raises for a game: a game either ends with a record, or with an infrastructure failure that rates no
one.

Bots travel by digest: a seat names its version's artifact (the digest of the source archive
validated at submission, take5_arena/referee/artifacts.py) and the spec says, for each digest, where
a worker that lacks it gets the archive (``sources``: shipping.py). The worker plays from its own
cache (``TAKE5_ARTIFACT_CACHE``) when the digest is there, and otherwise fetches the archive, checks
it against the digest and unpacks it there once; its Docker engine builds each version's image once
(images are tagged by a hash of their sources). The submitted folder is never read, so no file
system is shared with the referee. Why not the archives themselves in every spec: a Go or Node
bot's archive is megabytes, and every worker needs each version once (shipping.py says how a Dask
cluster gets each archive once); a spec still carries everything a worker needs to find its bots,
so it can be retried on any worker, including one that joined a minute ago.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from take5.record import GameRecord

from ...artifacts import ArtifactError, verify_cached
from ...errors import InfraError
from ...kinds import InfraKind, SandboxKind
from ...match.botref import BotRef, parse_bot
from ...match.config import MatchConfig, SeatIdentity
from ...match.faults import FaultKind
from ...match.play import Launcher, Match
from ...sandbox.engine import engine_answers
from ...sandbox.errors import ImageBuildError
from . import launchers, lease
from .archives import folder_of
from .spec import GameOutcome, SeatSpec, TableSpec

TurnWatcher = Callable[[TableSpec, str, GameRecord], None]
"""Told after every turn of a game played in this process: the table, the game id as the tournament
records it, and the record so far (as final as it will be: its seats named after the entrants;
with the bots' own output in the turns' ``logs``, which a watcher that shows games to the public
leaves out)."""


@dataclass(frozen=True)
class TablesTally:
    """What the tables played in this process have done since it started: a Dask worker's metrics
    (worker_metrics.py) read it, since only the worker sees its own tables end."""

    tables: int = 0
    """Tables run to their end."""
    in_flight: int = 0
    """Tables being played now."""
    games: int = 0
    """Games that ended with a record."""
    infra: Mapping[str, int] = field(default_factory=dict)
    """Games not played, by infrastructure kind (nobody's fault)."""


_tally_lock = threading.Lock()
_tally = {"tables": 0, "in_flight": 0, "games": 0}
_infra_tally: collections.Counter[str] = collections.Counter()


def tables_tally() -> TablesTally:
    """A copy of this process's :class:`TablesTally`."""
    with _tally_lock:
        return TablesTally(**_tally, infra=dict(_infra_tally))


def _count(outcome: GameOutcome) -> None:
    with _tally_lock:
        if outcome.ok:
            _tally["games"] += 1
        elif outcome.infra_kind is not None:
            _infra_tally[outcome.infra_kind.value] += 1


_log = logging.getLogger(__name__)
_turn_watchers: list[TurnWatcher] = []
_turn_watchers_lock = threading.Lock()


def watch_turns(watcher: TurnWatcher) -> Callable[[], None]:
    """Tell ``watcher`` of every turn played by tables in this process (``referee serve --web``
    shows games in progress with it); returns the function that stops it. A watcher runs on the
    table's thread between two turns, so it must be quick and must not raise; tables played by
    another process (a Dask worker) are not seen."""
    with _turn_watchers_lock:
        _turn_watchers.append(watcher)

    def stop() -> None:
        with _turn_watchers_lock:
            if watcher in _turn_watchers:
                _turn_watchers.remove(watcher)

    return stop


def _observer(spec: TableSpec) -> Callable[[GameRecord], None] | None:
    """The match's observer that hands each turn to the watchers (None: nobody watches)."""
    with _turn_watchers_lock:
        if not _turn_watchers:
            return None

    def observe(record: GameRecord) -> None:
        game_id = str(record.get("game_id", ""))  # the tournament's (MatchConfig.game_ids)
        with _turn_watchers_lock:
            watchers = list(_turn_watchers)
        for watcher in watchers:
            try:
                watcher(spec, game_id, record)
            except Exception as error:  # noqa: BLE001 - a watcher never stops a game
                _log.warning("a turn watcher failed: %s: %s", type(error).__name__, error)

    return observe


#: Fault kinds that a vanished Docker engine also produces; after a game with one of them the
#: engine is asked whether it still answers, and if not the game is an infrastructure failure.
_ENGINE_SUSPECT = frozenset(
    {FaultKind.CRASH, FaultKind.TIMEOUT, FaultKind.CONNECTION, FaultKind.RESOURCE}
)


def run_table(
    spec: TableSpec, on_game: Callable[[GameOutcome], None] | None = None
) -> list[GameOutcome]:
    """Play the pending games of one table from its seats' archives; never raises for a game.

    Returns one outcome per game of ``spec.games`` (and hands each to ``on_game`` as it ends).
    """
    outcomes: list[GameOutcome] = []

    def emit(outcome: GameOutcome) -> None:
        outcomes.append(outcome)
        _count(outcome)
        if on_game is not None:
            on_game(outcome)

    docker = spec.settings.sandbox == SandboxKind.DOCKER
    launcher = None
    watch = lease.watch(spec.lease)
    with _tally_lock:
        _tally["in_flight"] += 1
    try:
        refs = [
            dataclasses.replace(parse_bot(_seat_folder(spec, seat)), label=seat.key)
            for seat in spec.seats
        ]
        if docker:
            if not engine_answers():
                raise InfraError(InfraKind.ENGINE_UNAVAILABLE, "no Docker engine answers")
            launcher = launchers.docker_launcher(spec.settings)
            keys = {ref.text: ref.label for ref in refs}
            for text, got in launcher.prepare(refs).items():
                if isinstance(got, ImageBuildError):
                    # Validated at submission: an image that cannot be built now is not the bot's
                    # doing.
                    kind = InfraKind.ENGINE_UNAVAILABLE if not engine_answers() else InfraKind.IMAGE
                    first = str(got).replace(text, keys.get(text, text)).splitlines()[0]
                    raise InfraError(kind, f"{keys.get(text, text)}: {first}")
        play_table(spec, refs, launcher, emit, watch)
    except InfraError as error:
        _fail_rest(spec, outcomes, emit, error.kind, error.detail)
        if launcher is not None and error.kind == InfraKind.ENGINE_UNAVAILABLE:
            launchers.drop_launcher(launcher)
    except Exception as error:  # noqa: BLE001 - the referee's own failure: rates no one
        kind = InfraKind.REFEREE_ERROR
        if docker and not engine_answers():
            kind = InfraKind.ENGINE_UNAVAILABLE
            if launcher is not None:
                launchers.drop_launcher(launcher)
        detail = (
            f"{type(error).__name__}: {error}\n" + "".join(traceback.format_exc(limit=6))[-1500:]
        )
        _fail_rest(spec, outcomes, emit, kind, detail)
    finally:
        if watch is not None:
            watch.close()
        with _tally_lock:
            _tally["in_flight"] -= 1
            _tally["tables"] += 1
    return outcomes


def play_table(
    spec: TableSpec,
    refs: Sequence[BotRef],
    launcher: Launcher | None,
    emit: Callable[[GameOutcome], None],
    watch: lease.LeaseWatch | None = None,
) -> None:
    """The games of ``spec`` with these bots (one per seat), each handed to ``emit`` as it ends,
    its record naming the tournament's entrants. Raises InfraError for a game that is nobody's
    fault; :func:`run_table` turns that (and anything else) into outcomes. Tests play tables of
    in-memory bots with it (take5_arena/referee/match/memory.py). ``watch``: the referee's lease;
    once it lapses the bots are stopped at once and the table ends (lease.py)."""
    with Match(
        refs, match_config(spec, refs), launcher=launcher, observer=_observer(spec)
    ) as match:
        unwatch = watch.on_lapse(lambda: _stop_lapsed(match)) if watch is not None else None
        try:
            _play_games(spec, refs, match, emit, watch)
        finally:
            if unwatch is not None:
                unwatch()


def _play_games(
    spec: TableSpec,
    refs: Sequence[BotRef],
    match: Match,
    emit: Callable[[GameOutcome], None],
    watch: lease.LeaseWatch | None,
) -> None:
    docker = spec.settings.sandbox == SandboxKind.DOCKER
    for game_id, rotation in spec.games:
        started = time.perf_counter()
        _lapsed(watch)
        _check_sources(spec, refs)
        summary = match.play_game(rotation)
        _lapsed(watch)  # a game cut off by the stop is nobody's: not recorded
        _check_sources(spec, refs)
        if (summary.game_id, summary.seed, summary.rotation) != (game_id, spec.deal_seed, rotation):
            raise InfraError(
                InfraKind.REFEREE_ERROR,
                f"the match played {summary.game_id} seed {summary.seed} rotation "
                f"{summary.rotation}, not {game_id} {spec.deal_seed}/{rotation}",
            )
        record = summary.document
        if record is None:
            raise InfraError(InfraKind.REFEREE_ERROR, "the match layer returned no record")
        if (
            docker
            and any(f["kind"] in _ENGINE_SUSPECT for seat in record["faults"] for f in seat)
            and not engine_answers()
        ):
            raise InfraError(
                InfraKind.ENGINE_UNAVAILABLE,
                "the Docker engine stopped answering during the game",
            )
        if not record["complete"]:
            raise InfraError(InfraKind.REFEREE_ERROR, "the match layer returned an incomplete game")
        tails = {
            seat: match.entrants[seat].handle.stderr_tail(2000)
            for seat, faults in enumerate(record["faults"])
            if faults
        }
        emit(GameOutcome(game_id, record, seconds=time.perf_counter() - started, stderr=tails))


def match_config(spec: TableSpec, refs: Sequence[BotRef]) -> MatchConfig:
    """The match of a table: its seed, the tournament's game and call limits, the game ids the
    tournament records (so a bot sees them), each seat as the tournament names it and the deal's
    public part (for the match to write into its records). The arena's validation plays its smoke
    tables with it too (take5_arena/referee/tournament/submission.py), so nothing in them
    differs."""
    settings, n = spec.settings, len(spec.seats)
    return MatchConfig(
        games=n,
        seed=spec.deal_seed,
        game=settings.game,
        calls=settings.calls,
        match_id=f"t{spec.table}",
        game_ids=_game_ids(spec, n),
        seats=_identities(spec, refs),
        deal=spec.deal,
    )


def _stop_lapsed(match: Match) -> None:
    """A table whose lease lapsed: its bots stopped now, and, when it is the only table this
    process plays, the spare containers kept for its next games too (the launcher's; a table of
    another referee on the same worker keeps its own)."""
    match.close()
    with _tally_lock:
        alone = _tally["in_flight"] <= 1
    if alone:
        launchers.close_launchers()


def _lapsed(watch: lease.LeaseWatch | None) -> None:
    if watch is not None and watch.lapsed.is_set():
        raise InfraError(
            InfraKind.EXECUTOR,
            f"the referee's lease {watch.name} lapsed: the table was stopped (its referee is gone)",
        )


def _check_sources(spec: TableSpec, refs: Sequence[BotRef]) -> None:
    """Each seat's folder still packs to its version's digest: checked when each game starts and
    ends, not only when the folder was unpacked, since whoever can write to this worker's cache
    could put other code under a victim's digest in between. A game whose code differs rates nobody
    (an ``artifact`` infrastructure failure, with the worker's address in the organiser's log)."""
    for seat, ref in zip(spec.seats, refs):
        if seat.artifact is None or ref.folder is None:
            continue  # a version from before artifacts, or a bot in the referee's own process
        if not verify_cached(seat.artifact, ref.folder):
            where = _dask_worker() or "the referee's process"
            raise InfraError(
                InfraKind.ARTIFACT,
                f"{seat.key}: the code in the artifact cache of {where} does not match "
                f"{seat.artifact} (planted or changed): not played",
            )


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
    """Where this worker plays ``seat`` from: its artifact in the cache (fetched and unpacked now if
    needed)."""
    if seat.artifact is None:
        return seat.bot  # a version submitted before artifacts existed: its folder, as then
    try:
        return str(folder_of(seat.artifact, spec.sources.get(seat.artifact)))
    except ArtifactError as error:
        raise InfraError(InfraKind.ARTIFACT, f"{seat.key}: {error}") from None


def _identities(spec: TableSpec, refs: Sequence[BotRef]) -> tuple[SeatIdentity, ...]:
    """Each seat as the tournament names it, for the match to write into its records; a seat
    played from its artifact records the artifact's digest (checked at each game's start and
    end: :func:`_check_sources`)."""
    return tuple(
        SeatIdentity(
            name=seat.name,
            entrant=seat.key,
            version=seat.version,
            digest=seat.artifact if seat.artifact is not None and ref.folder is not None else None,
            owner=seat.owner,
        )
        for seat, ref in zip(spec.seats, refs)
    )


def _game_ids(spec: TableSpec, n: int) -> tuple[str, ...]:
    """The game ids by rotation, so that a bot sees the id the tournament records."""
    ids = {rotation: game_id for game_id, rotation in spec.games}
    return tuple(ids.get(r, f"t{spec.table}-g{r + 1}") for r in range(n))


def _fail_rest(
    spec: TableSpec,
    outcomes: list[GameOutcome],
    emit: Callable[[GameOutcome], None],
    kind: InfraKind,
    detail: str,
) -> None:
    done = {o.game_id for o in outcomes}
    for game_id, _rotation in spec.games:
        if game_id not in done:
            emit(GameOutcome(game_id, infra_kind=kind, infra_detail=detail, worker=_dask_worker()))
