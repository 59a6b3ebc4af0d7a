"""Submitting an entrant: validate a bot folder and record it as (a new version of) an entrant.

Validation is what a tournament relies on later: the image builds (docker), the bot starts,
answers the handshake and plays smoke games (a table of the tournament's shape, every rotation of
one deal, house bots in the other seats) within the tournament's limits, without a fault. A
refused bot is reported with the reason and its own stderr.

What was validated is what plays (take5_arena/referee/artifacts.py): the folder is packed FIRST into
a content-addressed archive, and everything after (the source hash, the image, the smoke games)
works on that archive unpacked into the artifact cache, never on the folder. The archive goes to the
tournament's ``artifacts/`` folder and its digest to the store; tournament games play it, wherever
they run, so a folder changed or deleted after submission changes nothing.

Smoke games look like any other game to the bot (:func:`_smoke`): a table of the tournament's size
and settings, a fresh random deal, a random seat and game ids of the same form as a tournament's,
so a bot cannot behave well only while it is being checked. Its opponents are house bots, or with
``pool=True`` (the arena's validation) the bots it will meet in its rated games: the current
versions of other authors' entrants (:func:`pool_opponents`), so that nothing about who sits at
the table tells the two kinds of game apart (docs/security.md, "A new version's first games").

In the arena those smoke tables are dealt as rated tables are, from the season's secret key
(:class:`Dealt`: the HMAC of a deal identity in the ``validation`` namespace, numbered by a counter
in the store, so that no validation deal is ever a rated table's or another validation's), and
named as rated games are (run/table.py's :func:`~.run.table.match_config`). When the version
passes they are stored as rated games (a schedule ``validation-NNNNNN``, :func:`_rate`): their
records verify as any other; when it fails, nothing of them is kept. An arena that deals from a
public seed deals its smoke tables against the pool from the OS's random source instead, and plays
them the same way, never rated.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import os
import secrets
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from take5.record import DealRecord, GameRecord

from ...errors import require_extra
from .. import defaults
from ..artifacts import Artifact, ArtifactError, discard, materialize, pack
from ..errors import InfraError
from ..kinds import SandboxKind
from ..match.botref import BadBotRefError, BotRef, parse_bot
from ..match.config import MatchConfig
from ..match.play import Match
from ..match.results import Rejection
from ..match.sanitize import clean_field, clean_text
from ..names import name_problem
from ..sandbox import context
from ..sandbox.build_errors import (
    BuildEngineUnavailableError,
    BuildFailedError,
    BuildRefusedError,
    BuildTimeoutError,
)
from ..sandbox.errors import EngineUnavailableError, ImageBuildError
from ..store import EntrantVersion, Store
from ..store.deals import current_season
from .copies import playing_copy
from .errors import SubmitDeferredError, SubmitRefusedError, TournamentError
from .plan.deals import Dealer
from .plan.schedule import Deal, DealSource, ScheduledGame, games_of_table
from .plan.settings import TournamentSettings
from .run import launchers
from .run.archives import ArchiveSource, InlineArchive, StoredArchive, folder_of
from .run.spec import GameOutcome, SeatSpec, TableSpec
from .run.table import run_table
from .season import entries_closed, utc_now

if TYPE_CHECKING:
    from ..sandbox.launcher import DockerLauncher

HOUSE_BOTS = tuple(defaults.EXAMPLE_BOTS / name for name in ("random", "lowest", "heuristic"))
"""The bots that fill a smoke game's other seats when there is no pool to draw them from (quick,
deterministic in their limits)."""

VALIDATION_PREFIX = "validation-"
"""The schedules of a passed version's validation games (``validation-NNNNNN``: the number of its
first table), rated like the ladder's."""
VALIDATION_NAMESPACE = "validation"
"""The deal identities' namespace of validation tables (plan/deals.py): no rated table's identity
is ever one of them, so no rated deal is ever a validation deal's twin."""
VALIDATION_TABLES = 2 * 10**12
"""A validation table's number in its records is this plus its counter: beyond every ladder batch's
and challenge's (take5_arena/service/challenges.py)."""
VALIDATION_COUNTER = "validation_tables"
"""The store's counter of validation tables (``store.settings.take``)."""

TablePlayer = Callable[[TableSpec], list[GameOutcome]]
"""Plays a dealt smoke table and returns its games' outcomes: ``run_table`` on the validating thread
(a local ``referee submit``), or in an arena the ladder's own table driver
(take5_arena/service/ladder.py's ``Ladder.play_table``), so that a smoke table is played on the
executor, in the slot, with the launcher and by the code a rated table is (docs/security.md,
"Smoke games")."""

Opponents = Callable[[int], list[tuple[BotRef, SeatSpec | None]]]
"""The other seats of one smoke table, given how many there are: each bot, with its stored version's
seat (None: a house bot, which is no entrant)."""


@dataclass(frozen=True)
class Dealt:
    """How the arena deals and names its smoke tables so that they can count once the version
    passes: the candidate's seat (version id 0 until it is stored), the deals of the validation
    namespace from the season's secret key, and the counter that numbers the tables."""

    candidate: SeatSpec
    deals: DealSource = field(repr=False)
    commitment: str
    number: Callable[[], int] = field(repr=False)
    context: dict[str, Any]
    sources: Callable[[str], ArchiveSource] = field(repr=False)
    """Where a table's worker gets each seat's archive (the candidate's travels in the spec: it is
    not in the store's ``artifacts/`` until it passes)."""


@dataclass
class SmokeTable:
    """A smoke table dealt by :class:`Dealt`: its spec, its games as a schedule has them, and the
    records of those played so far."""

    spec: TableSpec
    games: list[ScheduledGame]
    records: list[GameRecord] = field(default_factory=list)


@dataclass(frozen=True)
class Submitted:
    version: EntrantVersion
    created: bool
    smoke: str  # one line about the smoke games
    rated: int = 0
    """Smoke games stored as rated games (the arena's, dealt from its secret key)."""


def submit(
    directory: str | os.PathLike[str],
    bot_dir: str | os.PathLike[str],
    name: str,
    *,
    sandbox: str | None = None,
    timeout: float | None = None,
    author: str | None = None,
    store: str | None = None,
    pool: bool = False,
    log: Callable[[str], None] = lambda line: None,
    play: TablePlayer = run_table,
    once: bool = False,
) -> Submitted:
    """Validate the bot in ``bot_dir`` and record it as (a new version of) entrant ``name``.

    Creates the tournament directory if needed. ``sandbox``/``timeout`` default to the
    tournament's settings. ``author`` (who the organiser says wrote the bot) becomes the entrant's
    author: schedules keep one author's entrants apart (docs/security.md, "Seating"). Raises
    :class:`SubmitRefusedError` (with the bot's stderr) when the bot does not build, start, shake
    hands, or play its smoke games without a fault, and :class:`SubmitDeferredError` when it could
    not be validated for the arena's own reasons (:func:`build_failure`, :func:`start_failure`).
    ``pool``: the smoke tables' other seats are other authors' current versions
    (:func:`pool_opponents`) when there are enough of them, house bots otherwise; those tables are
    played by ``play`` (:data:`TablePlayer`). ``once`` (the arena's rule, copies.py): code that
    ``author`` already has in the store is not validated again: the version that plays it is
    returned unchanged, or the submission refused.
    """
    problem = name_problem("bot", name) or (
        None if author is None else name_problem("author", author)
    )
    if problem is not None:
        raise TournamentError(problem)
    if store is not None:  # a new tournament's store on a PostgreSQL server (``store`` its URL)
        Store(directory, create=True, url=store).close()
    folder = Path(bot_dir).resolve()
    if not folder.is_dir():
        raise TournamentError(f"{bot_dir}: not a bot folder")
    try:
        # the folder's limits and links first (context.scan), before anything reads its files
        artifact = pack(context.scan(folder))
    except (ImageBuildError, ArtifactError) as error:
        raise SubmitRefusedError(str(error)) from None
    # Validated from a private unpacked copy, removed afterwards (a refused bot leaves nothing);
    # games unpack the same archive again into their worker's cache.
    with tempfile.TemporaryDirectory(prefix="take5-submit-") as scratch:
        try:
            snapshot = materialize(artifact.digest, artifact.data, Path(scratch))
        except ArtifactError as error:
            raise SubmitRefusedError(str(error)) from None
        return _validate(
            directory,
            folder,
            snapshot,
            artifact,
            name,
            sandbox=sandbox,
            timeout=timeout,
            author=author,
            pool=pool,
            log=log,
            play=play,
            once=once,
        )


def _validate(
    directory: str | os.PathLike[str],
    folder: Path,
    snapshot: Path,
    artifact: Artifact,
    name: str,
    *,
    sandbox: str | None,
    timeout: float | None,
    author: str | None,
    pool: bool,
    log: Callable[[str], None],
    play: TablePlayer,
    once: bool,
) -> Submitted:
    """Validate the unpacked archive ``snapshot`` of ``folder``; record it if it passes."""
    try:
        # the snapshot is the artifact cache's <digest>/bot: messages name the bot instead
        ref = dataclasses.replace(parse_bot(str(snapshot)), label=name)
    except BadBotRefError as error:
        raise SubmitRefusedError(str(error).replace(str(snapshot), str(folder))) from None
    store = Store(directory, create=True)
    held: list[int] = []  # the version number held for this submission (Versions.reserve)
    try:
        _refuse_after_cutoff(store)  # before any work, and again when the version is entered
        settings = _settings(store, sandbox, timeout)
        if ref.kind == "dockerfile" and settings.sandbox != SandboxKind.DOCKER:
            raise SubmitRefusedError(
                "the folder has only a Dockerfile: it can only run in the docker sandbox"
            )
        digest = artifact.digest.removeprefix("sha256:")  # a version's identity: its archive's
        copies = author if once else None  # whose code that plays already is not validated again
        if (copy := _copy_of(store, name, copies, digest)) is not None:
            return _unchanged(copy)
        image_id = None
        launcher = _launcher(settings, shared=pool)
        try:
            if launcher is not None:
                image_id = _build(launcher, ref, folder, artifact, log)
                if (copy := _copy_of(store, name, copies, image_id=image_id)) is not None:
                    return _unchanged(copy)
            opponents = pool_opponents(store, name, author, settings.game.players) if pool else None
            # Smoke games that may count name the version they will be, held now, so that another
            # submission of the name validated meanwhile (another process on the store) gets
            # another number and both are rated; a deal drawn for one key is never re-keyed.
            held.extend([store.versions.reserve(name, digest)] if opponents is not None else [])
            number = held[0] if held else 0
            candidate = SeatSpec(
                f"{name}@{number}", name, number, 0, str(folder), artifact.digest, author
            )
            dealt = _dealt(store, settings, candidate, artifact) if opponents is not None else None
            log(f"smoke games at a table of {settings.game.players} ({settings.sandbox}) ...")
            smoke, tables = _smoke(ref, settings, launcher, log, opponents, dealt, play)
        finally:
            if launcher is not None and not pool:
                launcher.close()
        _refuse_after_cutoff(store)
        store.archives.put(artifact)  # here, and in a shared store for every host
        # The version and the games that rate it, in one transaction: a process ended between
        # the two would leave a version whose validation games are pending forever, never played
        # (a reveal would then need --abandon-pending), or games without their version.
        with store.transaction():
            # looked up again: a copy entered meanwhile under another name (another validator)
            _copy_of(store, name, copies, digest, image_id=image_id)
            version, created = store.versions.add(
                name,
                source_hash=digest,
                bot_dir=str(folder),
                kind=ref.kind,
                image_id=image_id,
                validation={
                    "smoke": smoke,
                    "sandbox": settings.sandbox.value,
                    "shape": settings.smoke_shape(),
                },
                artifact=artifact.digest,
                author=author,
                number=held[0] if held else None,
            )
            rated, unrated = _rate(store, version, candidate, tables, settings)
        held.clear()
        # told after the commit: the arena's progress is written to its accounts, which on
        # PostgreSQL wait for the store's write lock that this transaction held
        if rated:
            log(f"{rated} validation games rated")
        elif unrated:
            log(f"validation games not rated: {unrated}")
        return Submitted(version, created, smoke, rated)
    except SubmitRefusedError:
        _forget_refused(store, artifact)
        raise
    finally:
        for number in held:  # not entered: the number goes back
            with contextlib.suppress(Exception):
                store.versions.release(name, number)
        store.close()


def _settings(store: Store, sandbox: str | None, timeout: float | None) -> TournamentSettings:
    """The tournament's settings with the sandbox and time limit given (None: the store's), which a
    new tournament's store keeps."""
    stored = store.settings.get()
    settings = TournamentSettings.from_json(stored).updated(
        {"sandbox": sandbox, "timeout": timeout}
    )
    if not stored:
        store.settings.set(settings.to_json())
    return settings


def _build(
    launcher: DockerLauncher,
    ref: BotRef,
    folder: Path,
    artifact: Artifact,
    log: Callable[[str], None],
) -> str:
    """Build the bot's image (the author hears it is being built); its id."""
    log(
        f"building the image of {folder} (archive {artifact.digest[:19]}, "
        f"{artifact.size} bytes) ..."
    )
    try:
        return launcher.image(ref).id
    except ImageBuildError as error:
        raise build_failure(error) from None


def _forget_refused(store: Store, artifact: Artifact) -> None:
    """A refused candidate's code out of this process's artifact cache, where its smoke tables
    unpacked it (run/archives.py), unless a stored version is the same code (it plays from
    there). A Dask worker's cache is the worker's: its ``referee prune`` removes it in time."""
    with contextlib.suppress(Exception):  # the refusal is what the author hears
        if not any(v.artifact == artifact.digest for v in store.versions.all()):
            discard(artifact.digest)


def _copy_of(
    store: Store,
    name: str,
    author: str | None,
    digest: str | None = None,
    *,
    image_id: str | None = None,
) -> EntrantVersion | None:
    """The version of ``name`` that plays this code now (copies.py; None: none, or no ``author``
    whose copies to look for); raises SubmitRefusedError for another copy of the author's."""
    if author is None:
        return None
    return playing_copy(store, name, author, source_hash=digest, image_id=image_id)


def _unchanged(version: EntrantVersion) -> Submitted:
    """The answer to code that plays already as ``version``: nothing validated, stored or played."""
    return Submitted(
        version,
        False,
        f"the same code as {version.key}, which plays now: not validated again, no game played",
    )


def _launcher(settings: TournamentSettings, *, shared: bool) -> DockerLauncher | None:
    """The Docker launcher of the smoke games (None: another sandbox). ``shared`` (the arena's
    validation): the process's own, the one its rated tables play with
    (run/launchers.py), so that the smoke tables start their containers as those do (its images
    known, its spares), not as a launcher made for one submission would: the time a bot waits
    for its first decision must not tell the two apart (test_validation_blind.py). Else a launcher
    of its own, which the caller closes."""
    if settings.sandbox != SandboxKind.DOCKER:
        return None
    require_extra("docker")  # one line naming the extra, before any work
    from ..sandbox.launcher import DockerLauncher  # the Docker SDK: only for this sandbox

    try:
        if shared:
            return launchers.docker_launcher(settings)
        return DockerLauncher(
            limits=settings.limits, base_image=settings.base_image, bot_memory=settings.bot_memory
        )
    except (EngineUnavailableError, InfraError) as error:
        raise SubmitDeferredError(
            f"no Docker engine ({error}); run scripts/setup-docker.sh, or use --sandbox local"
        ) from None


def _refuse_after_cutoff(store: Store) -> None:
    """No new version once the season's entries are frozen (season.py)."""
    closed = entries_closed(store, utc_now())
    if closed is not None:
        raise SubmitRefusedError(closed)


def pool_opponents(store: Store, name: str, author: str | None, k: int) -> Opponents | None:
    """The arena's smoke opponents: for each table, ``n`` distinct current versions of other
    authors' entrants (one per author while there are enough authors, as the ladder seats them),
    drawn at random from the OS's source and played from the folders rated tables play them from
    (this process's artifact cache, run/archives.py's ``folder_of``: the same images and spare
    containers, so that their start takes as long as at a rated table); None when there are fewer
    than a table of ``k`` has other seats (then house bots play, and the smoke line says so)."""
    pool = [
        v
        for v in store.versions.current()
        if v.artifact and v.name != name and (author is None or v.author != author)
    ]
    if len(pool) < k - 1:
        return None
    folders: dict[int, Path] = {}

    def folder(v: EntrantVersion) -> Path:
        """The version's folder (found once, when first drawn); a missing archive is the arena's."""
        if v.id not in folders:
            digest = str(v.artifact)
            try:
                source = StoredArchive(str(store.archives.path(digest).absolute()))
                folders[v.id] = folder_of(digest, source)
            except ArtifactError:  # the arena's to mend (the ladder names it); the author waits
                raise SubmitDeferredError(
                    "the arena could not read an opponent's archive"
                ) from None
        return folders[v.id]

    def draw(n: int) -> list[tuple[BotRef, SeatSpec | None]]:
        rest = list(pool)
        chosen: list[EntrantVersion] = []
        while len(chosen) < n:
            seen = {v.author for v in chosen}
            fresh = [v for v in rest if v.author is None or v.author not in seen] or rest
            pick = fresh[secrets.randbelow(len(fresh))]
            rest.remove(pick)
            chosen.append(pick)
        return [(parse_bot(str(folder(v))), SeatSpec.of(v)) for v in chosen]

    return draw


def _house(n: int) -> list[tuple[BotRef, SeatSpec | None]]:
    return [(parse_bot(str(secrets.choice(HOUSE_BOTS))), None) for _ in range(n)]


def _dealt(
    store: Store, settings: TournamentSettings, candidate: SeatSpec, artifact: Artifact
) -> Dealt:
    """How smoke tables against the pool are dealt: so that they can count, from the season's
    secret key in the validation namespace; in an arena that deals from a public seed, from the
    OS's random source (a public seed's deals are predictable, so they never count), but played
    by ``play`` all the same, as its rated tables are (the ladder's driver)."""
    try:
        dealer = Dealer.of(store, settings)
    except TournamentError as error:  # the key file missing: the arena's to mend
        raise SubmitDeferredError(f"the arena cannot deal: {error}") from None
    context = settings.game_context()

    def source(digest: str) -> ArchiveSource:
        if digest == artifact.digest:
            return InlineArchive(artifact.data)
        return StoredArchive(str(store.archives.path(digest).absolute()))

    if dealer.key is None:
        return Dealt(
            candidate,
            lambda table, seats: Deal(secrets.randbits(63)),
            "",
            lambda: store.settings.take(VALIDATION_COUNTER),
            context,
            source,
        )
    return Dealt(
        candidate,
        dealer.source(VALIDATION_NAMESPACE, context),
        dealer.key.commitment,
        lambda: store.settings.take(VALIDATION_COUNTER),
        context,
        source,
    )


def _deal_table(
    dealt: Dealt, others: list[SeatSpec], seat: int, settings: TournamentSettings, games: int
) -> SmokeTable:
    """A smoke table dealt and named as a rated table: the next validation number, its deal from
    the key, its game ids hashed as a schedule's (plan/schedule.py's ``games_of_table``)."""
    seats = (*others[:seat], dealt.candidate, *others[seat:])
    keys = tuple(s.key for s in seats)
    number = dealt.number()
    deal = dealt.deals(number, keys)
    scheduled = games_of_table(number, keys, deal, games, dealt.context)
    record = (
        None
        if deal.season is None
        else DealRecord(season=deal.season, commitment=dealt.commitment, id=deal.identity)
    )
    spec = TableSpec(
        table=VALIDATION_TABLES + number,
        deal_seed=deal.seed,
        seats=seats,
        games=tuple((g.game_id, g.rotation) for g in scheduled),
        settings=settings,
        sources={s.artifact: dealt.sources(s.artifact) for s in seats if s.artifact},
        deal=record,
    )
    return SmokeTable(spec, scheduled)


def _rate(
    store: Store,
    version: EntrantVersion,
    candidate: SeatSpec,
    tables: list[SmokeTable],
    settings: TournamentSettings,
) -> tuple[int, str | None]:
    """Store the smoke games of a version that passed as rated games: a schedule of their own
    (``validation-NNNNNN``), each game recorded as the ladder records its games. Nothing when they
    were not dealt to count, or when the version stored is not the one they name (another
    submission of the same name took its number meanwhile). How many were stored, and why none
    were where the version's author is to hear it."""
    played = [t for t in tables if len(t.records) == len(t.games)]
    if not tables or len(played) < len(tables) or version.key != candidate.key:
        return 0, None
    if any(t.spec.deal is None for t in tables):  # dealt from no key: predictable, never rated
        return 0, None
    if any(not r.get("complete") for t in tables for r in t.records):
        return 0, None
    if version.author != candidate.owner:
        return 0, None
    dealt_from = {t.spec.deal["season"] for t in tables if t.spec.deal is not None}
    deal = current_season(store)
    if dealt_from and (deal is None or dealt_from != {deal.season}):
        return 0, "their deal key was revealed meanwhile (a season closed)"
    context = settings.game_context()
    rows = [
        {
            **g.to_dict(),
            "seats": [s.version_id or version.id for s in t.spec.seats],
            "settings": context,
        }
        for t in tables
        for g in t.games
    ]
    sid = f"{VALIDATION_PREFIX}{tables[0].games[0].table:06d}"
    store.schedules.save(
        sid,
        rows,
        description=f"validation {version.key}",
        settings=settings.to_json(),
        entrants=sorted({s.key for t in tables for s in t.spec.seats}),
    )
    stored = 0
    for t in tables:
        for (game_id, _rotation), record in zip(t.spec.games, t.records):
            stored += store.results.record_game(
                game_id, record, output_budget=settings.output_budget
            )
    return stored, None


def _smoke(
    ref: BotRef,
    settings: TournamentSettings,
    launcher: DockerLauncher | None,
    log: Callable[[str], None] = lambda line: None,
    opponents: Opponents | None = None,
    dealt: Dealt | None = None,
    play: TablePlayer = run_table,
) -> tuple[str, list[SmokeTable]]:
    """Smoke games: a table of the tournament's own shape; a fault refuses the bot.

    Nothing a bot can see tells them from a tournament's games (docs/security.md, "Smoke games"):
    the tournament's game settings (table size, variant, threshold, end rule) and call limits, a
    random seat, the other seats drawn from ``opponents`` (the pool it will play,
    :func:`pool_opponents`) or else the house bots (:data:`HOUSE_BOTS`, repeats allowed), game ids
    of the tournament's form, and as many games per table as a tournament table plays: every
    rotation of the deal with duplicate deals (two tables of one game each without). The deal:
    with ``dealt`` and pool opponents, from the arena's secret key as a rated table's
    (:func:`_deal_table`; played by ``play`` as a rated table is, :func:`_play_dealt`; the tables
    come back with their records, to be rated if the bot passes), else from the OS's random
    source. ``log`` hears how many games have been played, after
    each table (the author's page shows it). Returns the author's line and the dealt tables."""
    # ``log`` is told from a thread of its own, and of a table's progress only once its games are
    # over: what it costs (the arena writes the submission's progress to its accounts database and
    # wakes whoever follows it) must not slow the start of the next smoke game, which a bot
    # watching the clock would see and a rated table does not have (test_validation_blind.py).
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="take5-smoke-log") as told:
        return _smoke_tables(
            ref, settings, launcher, lambda line: told.submit(log, line), opponents, dealt, play
        )


def _smoke_tables(
    ref: BotRef,
    settings: TournamentSettings,
    launcher: DockerLauncher | None,
    log: Callable[[str], object],
    opponents: Opponents | None,
    dealt: Dealt | None,
    play: TablePlayer,
) -> tuple[str, list[SmokeTable]]:
    k = settings.game.players
    rotations = list(range(k)) if settings.duplicate else [0]
    total = (1 if settings.duplicate else 2) * len(rotations)
    scores: list[int] = []
    tables: list[SmokeTable] = []
    log(f"smoke games: 0 of {total} played")
    name, version = ref.label or ref.default_name, ""
    for _table in range(1 if settings.duplicate else 2):
        seat = secrets.randbelow(k)
        drawn = (opponents or _house)(k - 1)
        refs = [r for r, _ in drawn]
        refs.insert(seat, ref)
        others = [s for _, s in drawn if s is not None]
        if dealt is not None and len(others) == len(drawn):
            table = _deal_table(dealt, others, seat, settings, len(rotations))
            tables.append(table)
            played, name = _play_dealt(table, seat, play, name)
            scores.extend(played)
            log(f"smoke games: {len(scores)} of {total} played, no fault so far")
            continue
        config = MatchConfig(
            games=k,
            seed=secrets.randbits(63),
            game=settings.game,
            calls=settings.calls,
            game_ids=tuple(secrets.token_hex(8) for _ in range(k)),
        )
        try:
            if launcher is not None:  # every seat's image before the match, as a rated table
                for got in launcher.prepare(refs).values():
                    if isinstance(got, ImageBuildError):
                        raise SubmitDeferredError("the arena could not build an opponent's image")
            with Match(refs, config, launcher=launcher) as match:
                mine = match.entrants[seat]
                # the arena's own opponents first: if one did not start either, the host is to
                # blame
                for rejection in sorted(match.rejections, key=lambda r: r.bot == ref.text):
                    raise start_failure(
                        rejection,
                        house=rejection.bot != ref.text,
                        stderr=clean_text(mine.handle.stderr_tail(4000)),
                    )
                for rotation in rotations:
                    game = match.play_game(rotation)
                    if game.faults[seat]:
                        f = game.faults[seat][0]
                        raise SubmitRefusedError(
                            f"{f['kind']} in a smoke game (round {f['round']}, turn "
                            f"{f['turn']}): {f['detail']}",
                            clean_text(mine.handle.stderr_tail(4000)),
                        )
                    scores.append(game.scores[seat])
                name, version = mine.info.name or name, mine.info.version or ""
            # told once the table's bots are stopped, not between its games (see _smoke)
            log(f"smoke games: {len(scores)} of {total} played, no fault so far")
        except InfraError as error:  # a bot's sandbox did not start: the host's doing
            raise SubmitDeferredError(f"the arena could not start the bots ({error})") from None
    against = "the pool's bots" if opponents is not None else "house bots"
    line = (
        f"handshake ok ({name} {version}".rstrip()
        + f"), {len(scores)} smoke games without a fault (tables of {k}) against {against}, "
        f"penalties {scores}"
    )
    return line, tables


def _play_dealt(
    table: SmokeTable, seat: int, play: TablePlayer, name: str
) -> tuple[list[int], str]:
    """Play a dealt smoke table as a rated table is played (``play``: run/table.py's
    ``run_table``, in an arena on the ladder's driver) and judge its records as :func:`_smoke`
    judges a match: a game not played, or an opponent rejected before play, is the arena's
    failure (deferred); a fault of the candidate refuses it (one that did not start in time is
    deferred, bounded, as :func:`start_failure` says). The candidate's scores and handshake
    name."""
    try:
        outcomes = {o.game_id: o for o in play(table.spec)}
    except concurrent.futures.CancelledError:
        raise SubmitDeferredError("the arena stopped while the smoke games were played") from None
    records: list[GameRecord] = []
    for game_id, _rotation in table.spec.games:
        got = outcomes.get(game_id)
        if got is None or got.record is None:
            what = "not played" if got is None else f"{got.infra_kind}: {got.infra_detail or ''}"
            raise SubmitDeferredError(
                f"the arena could not play a smoke game ({clean_field(what.splitlines()[0])})"
            )
        records.append(got.record)
    first = records[0]
    for other, s in enumerate(first["seats"]):
        # a seat rejected before play has no clock (docs/record-format.md) and forfeits
        if other != seat and "clock" not in s and first["faults"][other]:
            f = first["faults"][other][0]
            raise SubmitDeferredError(
                f"the arena's own opponent did not start ({f['kind']}: {f['detail']})"
            )
    for (game_id, _rotation), record in zip(table.spec.games, records):
        if record["faults"][seat]:
            f = record["faults"][seat][0]
            # its turns' output, or (a bot that failed before its first turn) its stderr's tail
            stderr = clean_text(_seat_logs(records, seat) or outcomes[game_id].stderr.get(seat, ""))
            if "did not start within" in f["detail"]:
                raise SubmitDeferredError(f"{f['kind']}: {f['detail']}", stderr, bounded=True)
            raise SubmitRefusedError(
                f"{f['kind']} in a smoke game (round {f['round']}, turn {f['turn']}): "
                f"{f['detail']}",
                stderr,
            )
    table.records.extend(records)
    said = first["seats"][seat].get("bot_name")
    return [r["result"]["scores"][seat] for r in records], str(said or name)


def _seat_logs(records: list[GameRecord], seat: int, limit: int = 4000) -> str:
    """What one seat wrote on its stderr in these games (the records' turn ``logs``), its last
    ``limit`` characters: the author's output in a refusal, as a match's stderr tail was."""
    lines = [
        str(line)
        for record in records
        for rnd in record["rounds"]
        for turn in rnd["turns"]
        for s, line in turn.get("logs", [])
        if s == seat
    ]
    return "\n".join(lines)[-limit:]


# -- whose fault: the bot's (refused) or the arena's (deferred) ------------------------------------

_KILLED_MARKS = (
    "exit code: 137",
    "non-zero code: 137",
    "signal: killed",
    "no space left on device",
)


def build_failure(error: ImageBuildError) -> SubmitRefusedError | SubmitDeferredError:
    """What a failed image build means for the submission: the bot's own failure (refused), or the
    arena's (deferred): no engine, the engine failing the request, a build killed by the host (out
    of memory or disk), or, a few times, a build that ran out of time on a loaded host."""
    line = clean_field(str(error).splitlines()[0])
    output = clean_text(error.output)
    if isinstance(error, BuildRefusedError):
        return SubmitRefusedError(f"the image does not build: {line}", output)
    if isinstance(error, (BuildEngineUnavailableError, EngineUnavailableError)):
        return SubmitDeferredError(f"the arena's Docker engine is not available: {line}")
    if isinstance(error, BuildTimeoutError):
        return SubmitDeferredError(f"the image did not build in time: {line}", output, bounded=True)
    if isinstance(error, BuildFailedError) and any(
        mark in (error.output + str(error)).lower() for mark in _KILLED_MARKS
    ):
        return SubmitDeferredError(
            f"the build was killed by the host (memory or disk): {line}", output, bounded=True
        )
    return SubmitRefusedError(f"the image does not build: {line}", output)


def start_failure(
    rejection: Rejection, *, house: bool, stderr: str = ""
) -> SubmitRefusedError | SubmitDeferredError:
    """What a bot rejected before play means: the arena's own opponent failing to start is the
    arena's failure; the submitted bot not starting in time may be the host's load, so it is
    deferred (bounded); any other rejection of the submitted bot is its own."""
    what = f"{rejection.kind}: {rejection.detail}"
    if house:
        return SubmitDeferredError(f"the arena's own opponent did not start ({what})")
    if "did not start within" in rejection.detail:
        return SubmitDeferredError(what, stderr, bounded=True)
    return SubmitRefusedError(what, stderr)
