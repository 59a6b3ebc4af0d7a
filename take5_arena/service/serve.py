"""The arena service: ``referee serve --tournament DIR``, from start to stop.

One process holds the tournament (the same run lock as ``referee tournament run``, so the two never
play the same store at once) and runs, side by side:

* the gRPC server and its methods (take5_arena/service/servicer.py), a ``grpc.aio`` server on an
  event loop of its own thread;
* the submission queue (take5_arena/service/submissions.py): an upload is spooled to disk
  (take5_arena/service/intake.py), recorded and answered with its id; the queue's workers unpack it
  through take5_arena/referee/archive.py and validate it with ``referee submit``'s code;
* the ladder and the publisher (take5_arena/service/ladder.py, publisher.py): games keep being
  played between the active bots, on the tournament's table driver, from the validated archives,
  and the standings and the static site are refreshed as they land;
* on a store that several processes share (PostgreSQL), the writer of the games in progress to
  the store, for the web pages of the other processes (take5_arena/service/live_feed.py).

Competitions (take5_arena/service/competitions.py): each tournament directory under
``DIR/competitions/`` is a competition of the arena, held (its run lock), queued, played (a ladder
on an executor of its own, from its own settings) and published (under ``c/NAME`` of the site)
beside the default competition, DIR itself; the gRPC server, the accounts and the web pages are
the arena's one set. A competition added while the server runs (``referee competition add``) is
served within ``COMPETITIONS_SCAN_SECONDS``: the server looks for new ones between its waits for a
signal and opens each exactly as those it found at its start. One it cannot open (its run lock
held by another referee, a damaged store) is logged once and tried again every
``COMPETITION_RETRY_SECONDS``, the others going on; a folder that is no competition (a bad name,
no store, a symlink) is ignored. What it serves, and what it waits for, is in ``DIR/serving.json``
for ``referee competition list``. A competition removed while the server runs is not let go: it is
served until the server stops.

The tournament's settings are the store's, with the options of ``serve`` (the same sandbox and
play options as ``referee tournament run``: take5_arena/cli/options.py) given now; they are saved.
They are the default competition's; another competition keeps its own.

Stopping (SIGTERM, Ctrl-C): the server refuses new calls and lets those in progress finish, the
ladder stops (its tables in flight are abandoned and replayed next time), and the publisher
publishes once more, last, so that the site has every game recorded.

Every line of the log has its UTC time and level (take5_arena/service/logs.py).

Transport security: with ``--cert/--key`` the server speaks TLS only. Without them it refuses to
listen anywhere but loopback (tokens would cross the network in clear text) unless
``--insecure-public`` is given, and it says which of these it is doing when it starts.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType
from typing import Any, Protocol

import grpc
import grpc.aio

from take5_arena.errors import ArenaError
from take5_arena.referee.archive import ArchiveLimits
from take5_arena.referee.kinds import SandboxKind
from take5_arena.referee.store import Store
from take5_arena.referee.store.health import set_synchronous
from take5_arena.referee.tournament.errors import TournamentError
from take5_arena.referee.tournament.plan.settings import TournamentSettings
from take5_arena.referee.tournament.round_robin import executor_info
from take5_arena.referee.tournament.run.executors import ExecutorInfo, open_executor
from take5_arena.referee.tournament.run.launchers import close_launchers
from take5_arena.referee.tournament.run.lifecycle import run_lock
from take5_arena.referee.tournament.run.spec import GameOutcome, TableSpec
from take5_arena.referee.tournament.run.table import run_table
from take5_arena.service import challenges, defaults, logs
from take5_arena.service.address import is_loopback, split_address
from take5_arena.service.api import arena_pb2_grpc as pb_grpc
from take5_arena.service.authors import Accounts
from take5_arena.service.competitions import (
    DEFAULT,
    SERVING,
    competition_directory,
    competition_names,
    write_serving,
)
from take5_arena.service.errors import ServeError
from take5_arena.service.health import ArenaHealth
from take5_arena.service.intake import Spool
from take5_arena.service.ladder import Ladder, LadderConfig
from take5_arena.service.live_feed import LiveWriter, shared_store
from take5_arena.service.publisher import Publisher
from take5_arena.service.servicer import ArenaService, Competition, ServiceParts
from take5_arena.service.submissions import SubmissionQueue


class Sidecar(Protocol):
    """A further part of the arena in the same process (the web pages: take5_arena/web/), started
    after the gRPC server and stopped before it."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


SidecarFactory = Callable[
    [ServiceParts, concurrent.futures.Executor, Callable[[str], None]], Sidecar
]
"""Makes a sidecar from the arena's parts, its blocking pool and its log."""


@dataclass
class ServeOptions:
    directory: Path
    listen: str = defaults.LISTEN
    cert: Path | None = None
    key: Path | None = None
    insecure_public: bool = False
    settings: Mapping[str, Any] = field(default_factory=dict)
    """Tournament settings given now (the JSON keys of TournamentSettings; None: not given)."""
    ladder: LadderConfig = field(default_factory=LadderConfig)
    play: bool = True
    """Run the ladder."""
    validators: int = defaults.VALIDATORS
    archive_limits: ArchiveLimits = field(default_factory=ArchiveLimits)
    metrics: str | None = None
    """PORT (loopback) or HOST:PORT of the health check and Prometheus metrics
    (take5_arena/service/metrics.py)."""
    metrics_public: bool = False
    """``--metrics-public``: a ``metrics`` host that is not loopback is allowed."""
    stall_seconds: float = defaults.STALL_SECONDS
    """A ladder that could play and recorded no game for this long is stalled (``--stall-seconds``:
    the health and the metrics, take5_arena/service/health.py)."""
    sidecars: Sequence[SidecarFactory] = ()
    """Further parts to run beside the gRPC server (``--web``: take5_arena/web/server.py)."""
    limits: defaults.ServerLimits = field(default_factory=defaults.ServerLimits)
    """The server-wide limits on calls, uploads and authors (``referee serve`` options)."""
    synchronous: str = defaults.SYNCHRONOUS
    """How durable each commit of the store and the accounts is (``--synchronous``)."""


def serve(options: ServeOptions, *, ready: Callable[[int], None] | None = None) -> int:
    """Run the arena until SIGTERM or SIGINT; return the exit code (0, or 130 after Ctrl-C).

    The log goes to the service's loggers (take5_arena/service/logs.py, which the command line
    configures)."""
    host, port = split_address(options.listen)
    tls = options.cert is not None or options.key is not None
    if tls and (options.cert is None or options.key is None):
        raise ServeError("give both --cert and --key")
    if not tls and not is_loopback(host) and not options.insecure_public:
        raise ServeError(
            f"without --cert/--key the arena listens on loopback only, not {host}: "
            "give a certificate, or --insecure-public to serve without TLS anyway"
        )
    credentials = None
    if options.cert is not None and options.key is not None:
        try:
            credentials = grpc.ssl_server_credentials(
                [(options.key.read_bytes(), options.cert.read_bytes())]
            )
        except OSError as error:
            raise ServeError(f"cannot read the certificate or key: {error}") from None

    directory = options.directory

    set_synchronous(options.synchronous)
    accounts = Accounts(directory, create=True)
    try:
        with contextlib.ExitStack() as locks:
            try:
                with Store(directory) as store:
                    settings = TournamentSettings.from_json(store.settings.get()).updated(
                        options.settings
                    )
                    store.settings.set(settings.to_json())
                    # An arena's bots from before the store kept authors: their accounts say whose
                    # they are (the seating rule and the records' ``owner`` read the store).
                    store.versions.set_authors(
                        {c.bot_name: c.author for c in accounts.claims() if c.author}
                    )
                info = executor_info(settings)
                locks.enter_context(run_lock(directory))
            except TournamentError as error:
                raise ServeError(str(error)) from None
            server = _Server(options, _Opened(DEFAULT, directory, settings, info), accounts)
            return server.run(host, port, credentials, ready)
    finally:
        accounts.close()


@dataclass(frozen=True)
class _Opened:
    """A competition of the arena (take5_arena/service/competitions.py) as opened: the default
    one's settings are the store's with ``serve``'s options, another's are read from its own
    store."""

    name: str
    directory: Path
    settings: TournamentSettings
    info: ExecutorInfo


def _open_competition(root: Path, name: str, held: contextlib.ExitStack) -> _Opened:
    """Competition ``name`` of the arena in ``root``, its run lock taken into ``held`` (a
    TournamentError if another referee holds it, a StoreError if its store cannot be read)."""
    directory = competition_directory(root, name)
    held.enter_context(run_lock(directory))
    with Store(directory) as store:
        settings = TournamentSettings.from_json(store.settings.get())
    return _Opened(name, directory, settings, executor_info(settings))


def _config_for(config: LadderConfig, name: str) -> LadderConfig:
    """The ladder and publication of competition ``name``: the site and the season archive of the
    default competition, each with the competition under ``c/NAME`` of it."""
    if name == DEFAULT:
        return config
    season = config.season
    return replace(
        config,
        site=None if config.site is None else config.site / "c" / name,
        season=replace(
            season, archive=None if season.archive is None else season.archive / "c" / name
        ),
    )


@dataclass(frozen=True)
class _Waiting:
    """A competition found that could not be opened yet: why, the error's type (logged again
    only when it changes), and when it is tried again."""

    reason: str
    kind: str
    retry_at: float


def _one_line(error: Exception) -> str:
    """Why a competition could not be opened, on one line: the arena's own errors and the host's
    say it themselves; anything else is named by its type too."""
    text = (
        str(error)
        if isinstance(error, (ArenaError, OSError))
        else f"{type(error).__name__}: {error}"
    )
    return " ".join(text.split())[: defaults.DETAIL_CHARS] or type(error).__name__


class _Server:
    """The parts of a running arena, started and stopped in order.

    Its competitions: the default one, made before the gRPC server listens; then, once it does,
    those of ``DIR/competitions`` (:meth:`_scan`), again every ``COMPETITIONS_SCAN_SECONDS`` until
    the server stops, each opened by the same :meth:`_open` (its run lock, settings, executor,
    ladder, publisher and queue) and given to the servicer, whose ``others`` is replaced whole
    (the web pages and the calls read it per request). The scans run on the main thread, between
    the waits for a signal: the stop never meets one half done."""

    def __init__(self, options: ServeOptions, default: _Opened, accounts: Accounts) -> None:
        self.options = options
        self.settings = default.settings
        self.info = default.info
        self.accounts = accounts
        self.opened = [default]
        """Every competition served, as opened, the default first."""
        self.arms: list[Competition] = []
        """Their running parts, in the same order."""
        self.quota = challenges.Quota(lambda: [arm.directory for arm in list(self.arms)])
        """The authors' challenge limits, counted across every competition served."""
        self.waiting: dict[str, _Waiting] = {}
        """Competitions found that could not be opened yet."""
        self.not_served: Mapping[str, str] = {}
        """The same, each with why, for the health and the metrics (on their threads: replaced
        whole)."""
        self.unreadable: str | None = None
        """Why ``DIR/competitions`` could not be read at the last look (None: it could)."""
        self.said: tuple[tuple[str, ...], tuple[tuple[str, str], ...]] | None = None
        """What ``DIR/serving.json`` says (None: not written yet)."""
        self.parts: ServiceParts | None = None
        self.log = logs.logger()
        self.interrupted = False
        self.stop = threading.Event()

    def run(
        self, host: str, port: int, credentials: Any, ready: Callable[[int], None] | None
    ) -> int:
        options, log = self.options, self.log.info
        directory = options.directory
        # every competition's executor and (but the default's) run lock, held till the end
        with contextlib.ExitStack() as held:
            root = self._make(self.opened[0], held)
            parts = ServiceParts(
                directory,
                self.accounts,
                root.spool,
                root.queue,
                root.publisher,
                root.ladder,
                options.limits,
            )
            self.parts = parts
            blocking = concurrent.futures.ThreadPoolExecutor(
                max_workers=defaults.BLOCKING_THREADS, thread_name_prefix="rpc-blocking"
            )
            service = ArenaService(parts, blocking, options.limits)
            parts.waiting, parts.stall_seconds = lambda: self.not_served, options.stall_seconds
            metrics = _metrics(
                options.metrics, ArenaHealth.of(parts), public=options.metrics_public
            )
            rpc = _RpcServer(
                service, credentials, metrics.interceptors(), options.limits.streams_per_connection
            )
            sidecars = [make(parts, blocking, log) for make in options.sidecars]
            bound = rpc.start(f"{host}:{port}")
            started: list[Sidecar] = []
            live = _live_writer(parts) if root.ladder is not None else None
            previous = {
                s: signal.signal(s, self._on_signal) for s in (signal.SIGTERM, signal.SIGINT)
            }
            try:
                self._start(root)
                if live is not None:
                    live.start()
                self._scan(held)  # the competitions there are, before the server says it is up
                self._say_where(f"{host}:{bound}", host, credentials is not None, root.ladder)
                for sidecar in sidecars:
                    sidecar.start()
                    started.append(sidecar)
                metrics.start()
                if ready is not None:
                    ready(bound)
                while not self.stop.wait(defaults.COMPETITIONS_SCAN_SECONDS):
                    self._scan(held)  # those added since
            finally:
                for s, handler in previous.items():
                    signal.signal(s, handler)
                log("arena stopping ...")
                metrics.stop()
                for sidecar in reversed(started):
                    sidecar.stop()
                service.stopping.set()
                rpc.stop(defaults.STOP_GRACE)
                self._stop_competitions(live)
                blocking.shutdown(wait=False, cancel_futures=True)
        return 130 if self.interrupted else 0

    def _stop_competitions(self, live: Sidecar | None) -> None:
        """Every competition's queue, then ladder, then publisher (which publishes what landed
        since its last publication, last)."""
        arms = self.arms
        for arm in arms:
            arm.queue.close()
        for arm in arms:
            if arm.ladder is not None:
                arm.ladder.stop(timeout=defaults.LADDER_STOP_SECONDS)
        if live is not None:
            live.stop()
        for arm in arms:
            arm.publisher.stop()
        if any(o.settings.sandbox == SandboxKind.DOCKER for o in self.opened):
            close_launchers()
        with contextlib.suppress(OSError):
            (self.options.directory / SERVING).unlink(missing_ok=True)
        played = sum(arm.ladder.played for arm in arms if arm.ladder is not None)
        self.log.info(f"arena stopped: {played} ladder games played in this run")

    def _scan(self, held: contextlib.ExitStack) -> None:
        """Open the competitions of ``DIR/competitions`` not served yet (one that failed to open
        only once its retry is due), and say what is served in ``DIR/serving.json``. A failure
        is logged once (again only if it fails otherwise), never raised: the others go on."""
        root, now = self.options.directory, time.monotonic()
        served = {o.name for o in self.opened}
        try:
            found = competition_names(root)
        except OSError as error:  # unreadable now: said once, and the next look tries again
            if self.unreadable != str(error):
                self.log.warning(f"cannot look for competitions: {error}")
            self.unreadable = str(error)
            return
        self.unreadable = None
        for name in found:
            before = self.waiting.get(name)
            if name in served or (before is not None and before.retry_at > now):
                continue
            try:
                self._open(name, held)
            except Exception as error:  # noqa: BLE001 - whatever it is, the arena goes on
                reason, kind = _one_line(error), type(error).__name__
                if before is None or before.kind != kind:  # not again at each try
                    self.log.warning(
                        f"competition {name} not served yet: {reason} (tried again every "
                        f"{defaults.COMPETITION_RETRY_SECONDS:g} s)"
                    )
                retry = now + defaults.COMPETITION_RETRY_SECONDS
                self.waiting[name] = _Waiting(reason, kind, retry)
            else:
                self.waiting.pop(name, None)
        for gone in set(self.waiting) - set(found):  # its folder removed before it was served
            del self.waiting[gone]
        self._say_serving()

    def _open(self, name: str, held: contextlib.ExitStack) -> None:
        """Serve competition ``name``: its run lock, settings, executor, ladder, publisher and
        queue (released again if any fails), started and given to the servicer."""
        parts = self.parts
        assert parts is not None
        with contextlib.ExitStack() as own:
            opened = _open_competition(self.options.directory, name, own)
            arm = self._make(opened, own)
            held.enter_context(own.pop_all())
        self._start(arm)
        self.opened.append(opened)
        parts.others = {**parts.others, name: arm}  # whole: readers on other threads
        settings = opened.settings
        self.log.info(
            f"competition {name}: {opened.directory}, tables of {settings.players}, sandbox "
            f"{settings.sandbox}, executor {opened.info.describe()}"
        )

    def _say_serving(self) -> None:
        """Write ``DIR/serving.json`` when what it says changed (a failure: logged, no more)."""
        served = tuple(o.name for o in self.opened[1:])
        waiting = {name: w.reason for name, w in self.waiting.items()}
        self.not_served = waiting
        said = (served, tuple(sorted(waiting.items())))
        if said == self.said:
            return
        try:
            write_serving(self.options.directory, served, waiting)
        except OSError as error:
            self.log.warning(f"cannot write {SERVING}: {error}")
        self.said = said

    def _make(self, opened: _Opened, held: contextlib.ExitStack) -> Competition:
        """A competition's parts, not started: its intake, and its executor (closed with
        ``held``) and, unless ``--no-ladder``, its ladder on it."""
        arm = self._intake(opened.name, opened.directory, opened.settings)
        executor, info = held.enter_context(
            open_executor(opened.info, opened.settings.tables_at_once)
        )
        if self.options.play:
            arm.ladder = Ladder(
                arm.directory,
                opened.settings,
                _config_for(self.options.ladder, arm.name),
                executor=executor,
                info=info,
                on_games=arm.publisher.games_landed,
                on_season=arm.publisher.refresh,
                quota=self.quota,
            )
        return arm

    def _start(self, arm: Competition) -> None:
        """Start a competition's publisher, queue and ladder; it is stopped with the server."""
        self.arms.append(arm)
        arm.publisher.start()
        arm.queue.start()
        if arm.ladder is not None:
            arm.ladder.start()

    def _intake(self, name: str, directory: Path, settings: TournamentSettings) -> Competition:
        """A competition's spool (its half-received uploads discarded), publisher and submission
        queue, which wakes its ladder (set once it exists) at each new version."""
        options, log = self.options, self.log.info
        spool = Spool(directory)
        removed = spool.discard_partial()
        if removed:
            log(
                f"discarded {removed} half-received upload{'s' * (removed != 1)} or half-unpacked "
                f"folder{'s' * (removed != 1)} (the server was stopped during them)"
                + (f" in competition {name}" if name else "")
            )
        publisher = Publisher(directory, _config_for(options.ladder, name))
        arm: Competition | None = None

        def wake_ladder() -> None:
            if arm is not None and arm.ladder is not None:
                arm.ladder.wake()

        def play_table(spec: TableSpec) -> list[GameOutcome]:
            """A validation's smoke table, on the ladder's driver while it plays (the slot, the
            executor and the launcher of its rated tables); without a ladder, here."""
            if arm is not None and arm.ladder is not None and arm.ladder.alive:
                return arm.ladder.play_table(spec)
            return run_table(spec)

        queue = SubmissionQueue(
            directory,
            self.accounts,
            spool,
            sandbox=settings.sandbox,
            timeout=None,  # the store's settings, updated above: the time control included
            limits=options.archive_limits,
            workers=options.validators,
            on_new_version=wake_ladder,
            server_limits=options.limits,
            play_table=play_table,
            competition=name,
        )
        arm = Competition(name, directory, spool, queue, publisher, None)
        return arm

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if signum == signal.SIGINT:
            self.interrupted = True
        self.stop.set()

    def _say_where(self, where: str, host: str, tls: bool, ladder: Ladder | None) -> None:
        options, settings, log = self.options, self.settings, self.log.info
        directory = options.directory
        if tls:
            log(f"arena serving {directory} on {where} with TLS")
        elif is_loopback(host):
            log(
                f"arena serving {directory} on {where} without TLS: loopback only "
                "(give --cert/--key to serve other machines)"
            )
        else:
            log(
                f"arena serving {directory} on {where} WITHOUT TLS (--insecure-public): tokens "
                "cross the network in clear text"
            )
        if settings.sandbox == SandboxKind.LOCAL:
            self.log.warning(
                "--sandbox local runs submitted bots as plain processes on this machine: "
                "only for bots you trust (tests, trying it out); use docker for strangers' bots"
            )
        log(
            f"ladder: {'on' if ladder else 'off'}, tables of {settings.players}, sandbox "
            f"{settings.sandbox}, executor {self.info.describe()}; "
            f"site: {options.ladder.site or 'not published'}"
        )


def _live_writer(parts: ServiceParts) -> Sidecar | None:
    """On an arena that several processes share (PostgreSQL), the writer of this referee's games
    in progress to the store of each one's competition, for the web pages of the others
    (take5_arena/service/live_feed.py)."""
    if not shared_store(parts.directory):
        return None
    return LiveWriter(parts.competition_directories, parts.competition_at)


class _RpcServer:
    """The ``grpc.aio`` server on an event loop in a thread of its own."""

    def __init__(
        self,
        service: ArenaService,
        credentials: Any,
        interceptors: Sequence[grpc.aio.ServerInterceptor] = (),
        streams_per_connection: int = defaults.MAX_STREAMS_PER_CONNECTION,
    ) -> None:
        self.service = service
        self.streams_per_connection = streams_per_connection
        self.credentials = credentials
        self.interceptors = list(interceptors)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="rpc-loop", daemon=True)
        self.server: grpc.aio.Server | None = None

    def start(self, address: str) -> int:
        """Listen on ``address``; the port bound (ServeError if none)."""
        self.thread.start()
        return asyncio.run_coroutine_threadsafe(self._start(address), self.loop).result(30)

    async def _start(self, address: str) -> int:
        server = grpc.aio.server(
            interceptors=self.interceptors,
            options=[
                ("grpc.max_receive_message_length", defaults.CHUNK_BYTES + 4096),
                ("grpc.max_send_message_length", defaults.MAX_SEND_BYTES),
                ("grpc.max_concurrent_streams", self.streams_per_connection),
                ("grpc.so_reuseport", 0),
            ],
        )
        pb_grpc.add_ArenaServicer_to_server(self.service, server)  # type: ignore[no-untyped-call]
        try:
            bound: int = (
                server.add_secure_port(address, self.credentials)
                if self.credentials
                else server.add_insecure_port(address)
            )
        except RuntimeError:
            bound = 0
        if not bound:
            raise ServeError(
                f"cannot listen on {address} (in use, or not an address of this machine)"
            )
        await server.start()
        self.server = server
        return bound

    def stop(self, grace: float) -> None:
        """Refuse new calls, give those in progress ``grace`` seconds, then stop the loop."""
        if self.server is not None:
            done = asyncio.run_coroutine_threadsafe(self.server.stop(grace), self.loop)
            try:
                done.result(grace + 5)
            except (concurrent.futures.TimeoutError, RuntimeError):
                pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


class _Metrics(Protocol):
    """What the server needs of its metrics (take5_arena/service/metrics.py's ServeMetrics)."""

    def interceptors(self) -> list[grpc.aio.ServerInterceptor]: ...

    def start(self) -> None: ...

    def stop(self) -> None: ...


class _NoMetrics:
    """No ``--metrics``: nothing counted, nothing served, and prometheus_client (the ``[metrics]``
    extra) not needed."""

    def interceptors(self) -> list[grpc.aio.ServerInterceptor]:
        return []

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass


def _metrics(address: str | None, arena: ArenaHealth, *, public: bool) -> _Metrics:
    """The arena's metrics when ``--metrics`` asks for them (they need the ``[metrics]`` extra);
    ``public``: ``--metrics-public``, an address beyond loopback allowed."""
    if address is None:
        return _NoMetrics()
    from take5_arena.service.metrics import ServeMetrics  # the [metrics] extra: only when asked

    return ServeMetrics(address, arena, public=public)


__all__ = ["ServeOptions", "Sidecar", "SidecarFactory", "serve"]
