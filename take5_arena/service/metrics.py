"""``referee serve --metrics HOST:PORT``: a health check and Prometheus metrics, over plain HTTP.

``GET /healthz`` (and ``/healthz?competition=NAME``, ``/healthz/competitions``) are the arena's
health, per competition (take5_arena/service/health.py says what each answers and why).
``GET /metrics`` is the Prometheus text format, written by the maintained client library
(prometheus_client) from a registry of this server's own (docs/operations.md, "What to watch",
lists every metric).

Every figure of a competition carries its name as the label ``competition`` (the default
competition's is empty, its name everywhere in the arena: Prometheus stores an empty label as no
label, so the default's series are the very series of the server before competitions, and a
dashboard or alert written then goes on reading them); the figures of the process (the RPCs, the
containers' starts, the authors, who are the arena's) have none. Every competition served has its
figures, one added while serving from the next scrape, and ``take5_arena_competition_served`` is 1
for each of them and 0 for each one found but not served (take5_arena/service/serve.py). A scrape
opens no competition and reads only those served: what it keeps (a tally per store) is bounded by
them.

Most figures are read when Prometheus scrapes, not counted as things happen, so the service's code
carries no metric calls: games and faults come from the store (``store.results.tally`` reads only
what was recorded since the previous scrape), the validation queue and the authors from the
accounts, games in flight from the ladder. What cannot be read later is measured where it happens:
the RPCs, by a gRPC server interceptor (:meth:`ServeMetrics.interceptors`), and the Docker
containers' start latency, which the launchers of this process keep (bots played on Dask workers
start there).

The endpoint has no authentication and no TLS: it says how many games, faults and bots there are,
nothing a bot or an author sent. ``--metrics PORT`` binds it to loopback; another address must be
asked for with ``--metrics-public`` (the network Prometheus scrapes from, never the internet). It
answers :data:`~take5_arena.service.defaults.METRICS_THREADS` scrapes at once, each connection
silent for more than ``METRICS_IDLE_SECONDS`` is closed, and a connection past them is closed at
once: idle clients cannot grow the server's threads.
serve.py touches this module in four places: it makes a :class:`ServeMetrics` (a null one without
``--metrics``) over the arena's :class:`~take5_arena.service.health.ArenaHealth`, passes
:meth:`~ServeMetrics.interceptors` to ``grpc.aio.server``, and calls :meth:`~ServeMetrics.start`
once serving and :meth:`~ServeMetrics.stop` when stopping.
"""

from __future__ import annotations

import socketserver
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import grpc
from prometheus_client import CollectorRegistry, Counter, Histogram, make_wsgi_app
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from take5_arena.referee.store import Store, Tally
from take5_arena.referee.tournament.run.launchers import docker_launchers
from take5_arena.service import defaults, logs
from take5_arena.service.address import is_loopback, split_address
from take5_arena.service.authors import SubmissionStatus
from take5_arena.service.errors import ServeError
from take5_arena.service.health import TEXT, ArenaHealth, stalled
from take5_arena.service.servicer import Competition

PREFIX = "take5_arena"
COMPETITION = "competition"
"""The label of a competition's figures: its name, empty for the default (the module text)."""
#: RPCs take milliseconds (a standings call) to minutes (an upload and its validation).
RPC_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
START_BUCKETS = (0.1, 0.25, 0.5, 1, 2, 3, 5, 7.5, 10, 15, 20, 30, 60)
#: A validation is seconds (a Python bot, local sandbox) to minutes (a compiled bot's image build).
VALIDATION_BUCKETS = (1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1200)

_Handler = Any  # grpc.RpcMethodHandler: its fields are not typed by grpc's stubs


class ServeMetrics:
    """The metrics and health of one running arena (a null object when ``address`` is None)."""

    def __init__(
        self,
        address: str | None,
        arena: ArenaHealth,
        *,
        public: bool = False,
    ) -> None:
        self.address = address
        self.where = where(address, public=public) if address else None  # bad: ServeError now
        self.arena = arena
        self.registry = CollectorRegistry(auto_describe=True)
        self._http: WSGIServer | None = None
        self._thread: threading.Thread | None = None
        # first: a scrape collects in this order, and the state collector also feeds the
        # histograms below what was measured since the last scrape (container starts, validations)
        self.registry.register(_StateCollector(self))
        self.rpc_seconds = Histogram(
            f"{PREFIX}_rpc_seconds",
            "Time to answer an RPC of the arena's API, by method.",
            ["method"],
            buckets=RPC_BUCKETS,
            registry=self.registry,
        )
        self.rpc_errors = Counter(
            f"{PREFIX}_rpc_errors",
            "RPCs answered with a status other than OK, by method and status code.",
            ["method", "code"],
            registry=self.registry,
        )
        self.container_start = Histogram(
            f"{PREFIX}_container_start_seconds",
            "Seconds from a bot container's creation to its bot's socket (containers this "
            "process started).",
            buckets=START_BUCKETS,
            registry=self.registry,
        )
        self.validation_seconds = Histogram(
            f"{PREFIX}_validation_seconds",
            "Seconds to validate a submission (unpacking, building, the smoke games), from the "
            "moment a validator took it, by competition.",
            [COMPETITION],
            buckets=VALIDATION_BUCKETS,
            registry=self.registry,
        )

    # -- the life cycle (serve.py) -------------------------------------------------------------

    def interceptors(self) -> list[grpc.aio.ServerInterceptor]:
        return [_RpcInterceptor(self)] if self.address else []

    def start(self) -> None:
        """Serve /metrics and /healthz (the gRPC server is up by now)."""
        self.arena.serving = True
        if self.where is None:
            return
        host, port = self.where
        try:
            self._http = make_server(
                host, port, self._app, server_class=_ThreadingServer, handler_class=_Quiet
            )
        except OSError as error:
            raise ServeError(
                f"--metrics {self.address}: cannot listen ({error.strerror})"
            ) from None
        self._thread = threading.Thread(
            target=self._http.serve_forever, name="metrics", daemon=True
        )
        self._thread.start()
        logs.logger("metrics").info(
            f"metrics on http://{host}:{self._http.server_port}/metrics, health on /healthz "
            "(no TLS, no authentication: counts only)"
        )

    def stop(self) -> None:
        self.arena.serving = False
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None

    # -- HTTP ----------------------------------------------------------------------------------

    def _app(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path in ("/healthz", "/healthz/competitions"):
            status, kind, body = self.arena.answer(path, environ.get("QUERY_STRING", ""))
            start_response(_STATUS[status], [("Content-Type", kind)])
            return [body.encode()]
        if path == "/metrics":
            app: Any = make_wsgi_app(self.registry)
            result: Iterable[bytes] = app(environ, start_response)
            return result
        start_response(_STATUS[404], [("Content-Type", TEXT)])
        return [b"not found: /metrics, /healthz or /healthz/competitions\n"]


_STATUS = {
    200: "200 OK",
    400: "400 Bad Request",
    404: "404 Not Found",
    503: "503 Service Unavailable",
}


@dataclass
class _Read:
    """What a scrape read of one competition's store (None: it could not be read)."""

    arm: Competition
    tally: Tally | None
    active_bots: int


class _StateCollector(Collector):
    """The figures read at each scrape: from each competition's store, ladder and publisher, and
    from the accounts."""

    def __init__(self, metrics: ServeMetrics) -> None:
        self.metrics = metrics
        self.tallies: dict[str, Tally] = {}  # by competition served: bounded by them
        self.lock = threading.Lock()
        self.seen_starts: dict[int, int] = {}  # id(launcher) -> start times already observed
        self.seen_validations: dict[str, int] = {}  # by competition served

    def describe(self) -> Iterable[Metric]:
        return []  # figures appear as they exist; nothing to describe up front

    def collect(self) -> Iterator[Metric]:
        arena = self.metrics.arena
        served = arena.served()
        waiting = arena.waiting()
        with self.lock:
            read = [self._read(arm) for arm in served]
            self._observe_starts()
            self._observe_validations(served)
        yield _competitions(served, waiting)
        yield from _store_figures(read)
        yield from _ladder_figures(served, arena.stall_seconds)
        yield from _publisher_figures(served)
        counts = arena.parts.accounts.info_by_competition()
        queue = GaugeMetricFamily(
            f"{PREFIX}_validation_queue",
            "Submissions recorded but not yet validated: waiting, or being validated.",
            labels=[COMPETITION, "state"],
        )
        for arm in served:
            for state in (SubmissionStatus.RECEIVED, SubmissionStatus.VALIDATING):
                queue.add_metric([arm.name, str(state)], counts.get((arm.name, str(state)), 0))
        yield queue
        yield GaugeMetricFamily(
            f"{PREFIX}_active_authors",
            "Authors whose token works.",
            sum(1 for a in arena.parts.accounts.authors() if a.active),
        )

    def _read(self, arm: Competition) -> _Read:
        """A competition's store read: what was recorded since the last scrape, and its bots."""
        try:
            with Store(arm.directory, readonly=True) as store:
                tally = store.results.tally(self.tallies.get(arm.name))
                active_bots = sum(store.versions.entrant_states().values())
        except Exception:  # noqa: BLE001 - said by take5_arena_store_up 0 and by /healthz
            return _Read(arm, None, 0)
        self.tallies[arm.name] = tally
        return _Read(arm, tally, active_bots)

    def _observe_validations(self, served: list[Competition]) -> None:
        for arm in served:
            times, seen = arm.queue.validation_seconds.since(self.seen_validations.get(arm.name, 0))
            if times:
                histogram = self.metrics.validation_seconds.labels(arm.name)
                for seconds in times:
                    histogram.observe(seconds)
            self.seen_validations[arm.name] = seen

    def _observe_starts(self) -> None:
        for launcher in docker_launchers():
            starts, seen = launcher.start_seconds.since(self.seen_starts.get(id(launcher), 0))
            for seconds in starts:
                self.metrics.container_start.observe(seconds)
            self.seen_starts[id(launcher)] = seen


def _competitions(served: list[Competition], waiting: Mapping[str, str]) -> Metric:
    family = GaugeMetricFamily(
        f"{PREFIX}_competition_served",
        "1 for each competition served; 0 for each found but not served (its run lock held by "
        "another referee, a damaged store: tried again; /healthz/competitions says why).",
        labels=[COMPETITION],
    )
    names = {arm.name for arm in served}
    for arm in served:
        family.add_metric([arm.name], 1)
    for name in sorted(set(waiting) - names):
        family.add_metric([name], 0)
    return family


def _store_figures(read: list[_Read]) -> Iterator[Metric]:
    """What each competition's store holds (counted since it was made)."""
    up = GaugeMetricFamily(
        f"{PREFIX}_store_up",
        "1 if the competition's store was read at this scrape.",
        labels=[COMPETITION],
    )
    games = CounterMetricFamily(
        f"{PREFIX}_games",
        "Games recorded in the store (rate(): games per second).",
        labels=[COMPETITION],
    )
    faults = CounterMetricFamily(
        f"{PREFIX}_faults",
        "Faults committed by bots in recorded games, by kind.",
        labels=[COMPETITION, "kind"],
    )
    infra = CounterMetricFamily(
        f"{PREFIX}_infra_failures",
        "Games not played for a reason that is nobody's fault, by kind.",
        labels=[COMPETITION, "kind"],
    )
    bots = GaugeMetricFamily(
        f"{PREFIX}_active_bots", "Entrants whose current version plays.", labels=[COMPETITION]
    )
    for r in read:
        name = r.arm.name
        up.add_metric([name], int(r.tally is not None))
        if r.tally is None:
            continue
        games.add_metric([name], r.tally.games)
        for kind, n in sorted(r.tally.faults.items()):
            faults.add_metric([name, kind], n)
        for kind, n in sorted(r.tally.infra.items()):
            infra.add_metric([name, kind], n)
        bots.add_metric([name], r.active_bots)
    yield from (up, games, faults, infra, bots)


def _ladder_figures(served: list[Competition], stall_seconds: float) -> Iterator[Metric]:
    """Each competition's ladder in this process (0 without one: ``--no-ladder``)."""
    in_flight = GaugeMetricFamily(
        f"{PREFIX}_games_in_flight",
        "Games of the ladder's tables being played now.",
        labels=[COMPETITION],
    )
    played = CounterMetricFamily(
        f"{PREFIX}_ladder_games",
        "Games the ladder recorded since this server started.",
        labels=[COMPETITION],
    )
    up = GaugeMetricFamily(
        f"{PREFIX}_ladder_up",
        "1 while the ladder plays, 0 once it stopped (absent with --no-ladder).",
        labels=[COMPETITION],
    )
    without = GaugeMetricFamily(
        f"{PREFIX}_ladder_seconds_without_game",
        "Seconds the ladder could play (a season open, enough bots) and recorded no game.",
        labels=[COMPETITION],
    )
    stall = GaugeMetricFamily(
        f"{PREFIX}_ladder_stalled",
        "1 when the ladder could play and recorded no game for --stall-seconds.",
        labels=[COMPETITION],
    )
    for arm in served:
        ladder, name = arm.ladder, arm.name
        in_flight.add_metric([name], ladder.games_in_flight if ladder else 0)
        played.add_metric([name], ladder.played if ladder else 0)
        if ladder is not None:  # absent with --no-ladder: 0 is for a ladder that stopped
            up.add_metric([name], int(ladder.alive))
        without.add_metric([name], ladder.seconds_without_game if ladder else 0.0)
        stall.add_metric([name], int(stalled(arm, stall_seconds)))
    yield from (in_flight, played, up, without, stall)


def _publisher_figures(served: list[Competition]) -> Iterator[Metric]:
    """Each competition's publications (its standings and site) since this server started."""
    done = CounterMetricFamily(
        f"{PREFIX}_publications",
        "Publications of the standings (and the site) since this server started.",
        labels=[COMPETITION],
    )
    failed = CounterMetricFamily(
        f"{PREFIX}_publication_failures",
        "Publications that failed since this server started (the next one tries again).",
        labels=[COMPETITION],
    )
    games = GaugeMetricFamily(
        f"{PREFIX}_published_games",
        "Games in the standings last published (-1: none yet).",
        labels=[COMPETITION],
    )
    at = GaugeMetricFamily(
        f"{PREFIX}_publication_timestamp_seconds",
        "When the last publication ended (Unix time; absent before the first).",
        labels=[COMPETITION],
    )
    for arm in served:
        publisher, name = arm.publisher, arm.name
        done.add_metric([name], publisher.publications)
        failed.add_metric([name], publisher.failures)
        games.add_metric([name], publisher.published_games)
        if publisher.published_at is not None:
            at.add_metric([name], publisher.published_at)
    yield from (done, failed, games, at)


class _RpcInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Times every RPC and counts the ones that end with a status other than OK (the arena's
    server is ``grpc.aio``: its handlers are coroutines, a streamed answer an async iterator)."""

    def __init__(self, metrics: ServeMetrics) -> None:
        self.metrics = metrics

    async def intercept_service(
        self, continuation: Callable[[Any], Awaitable[_Handler]], handler_call_details: Any
    ) -> _Handler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        method = str(handler_call_details.method).rsplit("/", 1)[-1]
        for kind, make in (
            ("unary_unary", grpc.unary_unary_rpc_method_handler),
            ("stream_unary", grpc.stream_unary_rpc_method_handler),
            ("unary_stream", grpc.unary_stream_rpc_method_handler),
            ("stream_stream", grpc.stream_stream_rpc_method_handler),
        ):
            behaviour = getattr(handler, kind)
            if behaviour is not None:
                return make(
                    self._timed(method, behaviour, streams=kind.endswith("stream")),
                    request_deserializer=handler.request_deserializer,
                    response_serializer=handler.response_serializer,
                )
        return handler

    def _timed(self, method: str, behaviour: Any, *, streams: bool) -> Callable[..., Any]:
        seconds = self.metrics.rpc_seconds.labels(method)

        def done(context: Any, started: float, failed: bool) -> None:
            seconds.observe(time.perf_counter() - started)
            code = context.code()
            if failed or (code is not None and code != grpc.StatusCode.OK and code != 0):
                name = code.name if isinstance(code, grpc.StatusCode) else _code_name(code)
                self.metrics.rpc_errors.labels(method, name).inc()

        if streams:

            async def stream(request: Any, context: Any) -> AsyncIterator[Any]:
                started, failed = time.perf_counter(), True
                try:
                    async for reply in behaviour(request, context):
                        yield reply
                    failed = False
                finally:
                    done(context, started, failed)

            return stream

        async def unary(request: Any, context: Any) -> Any:
            started, failed = time.perf_counter(), True
            try:
                reply = await behaviour(request, context)
                failed = False
                return reply
            finally:
                done(context, started, failed)

        return unary


def _code_name(code: object) -> str:
    """A status code as grpc.aio's context may give it (an int), by its name."""
    for status in grpc.StatusCode:
        if status.value[0] == code:
            return str(status.name)
    return "UNKNOWN"


def where(address: str, *, public: bool = False) -> tuple[str, int]:
    """(host, port) of ``--metrics``: ``PORT`` alone is loopback; a host that is not loopback
    only with ``public`` (a ServeError otherwise, as for a bad address)."""
    if address.isdigit():
        address = f"127.0.0.1:{address}"
    host, port = split_address(address)
    if not public and not is_loopback(host):
        raise ServeError(
            f"--metrics {address}: not a loopback address, and the metrics have no "
            "authentication: add --metrics-public to serve them there (the network Prometheus "
            "scrapes from, behind a firewall)"
        )
    return host, port


class _ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    """A thread per scrape, so that a slow client holds up no other, but at most
    ``METRICS_THREADS`` of them: a connection past them is closed at once."""

    daemon_threads = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.slots = threading.BoundedSemaphore(defaults.METRICS_THREADS)
        super().__init__(*args, **kwargs)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


class _Quiet(WSGIRequestHandler):
    """No line per request on the server's stderr (the arena's log is for the arena); a client
    silent for ``METRICS_IDLE_SECONDS`` is dropped (the socket's timeout)."""

    timeout = defaults.METRICS_IDLE_SECONDS

    def log_message(self, format: str, *args: Any) -> None:
        return None


__all__ = [
    "COMPETITION",
    "PREFIX",
    "RPC_BUCKETS",
    "START_BUCKETS",
    "VALIDATION_BUCKETS",
    "ServeMetrics",
    "where",
]
