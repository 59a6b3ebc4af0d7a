"""``referee serve --metrics HOST:PORT``: a health check and Prometheus metrics, over plain HTTP.

``GET /healthz`` answers 200 ``ok`` while the arena serves (the gRPC server started, the ladder's
thread alive when there is a ladder, the store readable), else 503 with the reason on one line.
``GET /metrics`` is the Prometheus text format, written by the maintained client library
(prometheus_client) from a registry of this server's own (docs/operations.md, "What to watch",
lists every metric).

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
``--metrics``), passes :meth:`~ServeMetrics.interceptors` to ``grpc.aio.server``, and calls
:meth:`~ServeMetrics.start` once serving and :meth:`~ServeMetrics.stop` when stopping.
"""

from __future__ import annotations

import socketserver
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import grpc
from prometheus_client import CollectorRegistry, Counter, Histogram, make_wsgi_app
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from take5_arena.referee.store import Store, StoreError, Tally
from take5_arena.referee.tournament.run.launchers import docker_launchers
from take5_arena.service import defaults, logs
from take5_arena.service.address import is_loopback, split_address
from take5_arena.service.authors import Accounts, SubmissionStatus
from take5_arena.service.errors import ServeError
from take5_arena.service.ladder import Ladder
from take5_arena.service.submissions import SubmissionQueue

PREFIX = "take5_arena"
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
        directory: Path,
        accounts: Accounts,
        ladder: Ladder | None,
        queue: SubmissionQueue | None = None,
        *,
        public: bool = False,
    ) -> None:
        self.address = address
        self.where = where(address, public=public) if address else None  # bad: ServeError now
        self.directory = directory
        self.accounts = accounts
        self.ladder = ladder
        self.queue = queue
        self.registry = CollectorRegistry(auto_describe=True)
        self.serving = False
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
            "moment a validator took it.",
            buckets=VALIDATION_BUCKETS,
            registry=self.registry,
        )

    # -- the life cycle (serve.py) -------------------------------------------------------------

    def interceptors(self) -> list[grpc.aio.ServerInterceptor]:
        return [_RpcInterceptor(self)] if self.address else []

    def start(self) -> None:
        """Serve /metrics and /healthz (the gRPC server is up by now)."""
        self.serving = True
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
        self.serving = False
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None

    # -- HTTP ----------------------------------------------------------------------------------

    def health(self) -> str | None:
        """Why the arena is not healthy, or None."""
        if not self.serving:
            return "not serving"
        if self.ladder is not None and not self.ladder.alive:
            return f"the ladder stopped ({self.ladder.error or 'no error recorded'})"
        try:
            with Store(self.directory, readonly=True) as store:
                store.results.recorded_count()
        except (StoreError, OSError) as error:
            return f"the store cannot be read ({error})"
        except Exception as error:  # noqa: BLE001 - sqlite3's errors: said on one line, 503
            return f"the store cannot be read ({type(error).__name__}: {error})"
        return None

    def _app(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == "/healthz":
            problem = self.health()
            body = (f"unhealthy: {problem}" if problem else "ok").replace("\n", " ") + "\n"
            start_response(
                "503 Service Unavailable" if problem else "200 OK",
                [("Content-Type", "text/plain; charset=utf-8")],
            )
            return [body.encode()]
        if path == "/metrics":
            app: Any = make_wsgi_app(self.registry)
            result: Iterable[bytes] = app(environ, start_response)
            return result
        start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
        return [b"not found: /metrics or /healthz\n"]


class _StateCollector(Collector):
    """The figures read at each scrape: from the store, the accounts and the ladder."""

    def __init__(self, metrics: ServeMetrics) -> None:
        self.metrics = metrics
        self.tally = Tally()
        self.lock = threading.Lock()
        self.seen_starts: dict[int, int] = {}  # id(launcher) -> start times already observed
        self.seen_validations = 0

    def describe(self) -> Iterable[Metric]:
        return []  # figures appear as they exist; nothing to describe up front

    def collect(self) -> Iterator[Metric]:
        m = self.metrics
        with self.lock:
            with Store(m.directory, readonly=True) as store:
                self.tally = store.results.tally(self.tally)
                active_bots = sum(store.versions.entrant_states().values())
            tally = self.tally
            self._observe_starts()
            self._observe_validations()
        yield CounterMetricFamily(
            f"{PREFIX}_games",
            "Games recorded in the store (rate(): games per second).",
            tally.games,
        )
        faults = CounterMetricFamily(
            f"{PREFIX}_faults",
            "Faults committed by bots in recorded games, by kind.",
            labels=["kind"],
        )
        for kind, n in sorted(tally.faults.items()):
            faults.add_metric([kind], n)
        yield faults
        infra = CounterMetricFamily(
            f"{PREFIX}_infra_failures",
            "Games not played for a reason that is nobody's fault, by kind.",
            labels=["kind"],
        )
        for kind, n in sorted(tally.infra.items()):
            infra.add_metric([kind], n)
        yield infra
        ladder = m.ladder
        yield GaugeMetricFamily(
            f"{PREFIX}_games_in_flight",
            "Games of the ladder's tables being played now.",
            ladder.games_in_flight if ladder else 0,
        )
        yield CounterMetricFamily(
            f"{PREFIX}_ladder_games",
            "Games the ladder recorded since this server started.",
            ladder.played if ladder else 0,
        )
        yield GaugeMetricFamily(
            f"{PREFIX}_ladder_up",
            "1 while the ladder plays (0: stopped, or --no-ladder).",
            int(bool(ladder and ladder.alive)),
        )
        counts = m.accounts.info()
        queue = GaugeMetricFamily(
            f"{PREFIX}_validation_queue",
            "Submissions recorded but not yet validated: waiting, or being validated.",
            labels=["state"],
        )
        for state in (SubmissionStatus.RECEIVED, SubmissionStatus.VALIDATING):
            queue.add_metric([str(state)], counts.get(str(state), 0))
        yield queue
        yield GaugeMetricFamily(
            f"{PREFIX}_active_bots", "Entrants whose current version plays.", active_bots
        )
        yield GaugeMetricFamily(
            f"{PREFIX}_active_authors",
            "Authors whose token works.",
            sum(1 for a in m.accounts.authors() if a.active),
        )

    def _observe_validations(self) -> None:
        queue = self.metrics.queue
        if queue is None:
            return
        times = list(queue.validation_seconds)
        for seconds in times[self.seen_validations :]:
            self.metrics.validation_seconds.observe(seconds)
        self.seen_validations = len(times)

    def _observe_starts(self) -> None:
        for launcher in docker_launchers():
            starts = list(launcher.start_seconds)
            seen = self.seen_starts.get(id(launcher), 0)
            for seconds in starts[seen:]:
                self.metrics.container_start.observe(seconds)
            self.seen_starts[id(launcher)] = len(starts)


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
    "PREFIX",
    "RPC_BUCKETS",
    "START_BUCKETS",
    "VALIDATION_BUCKETS",
    "ServeMetrics",
    "where",
]
