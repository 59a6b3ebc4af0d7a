"""The web pages' server: uvicorn on an event loop in a thread of its own, in the arena's process
(``referee serve --web HOST:PORT``), beside the gRPC server.

Why in the same process rather than a command of its own on the same store: an upload must reach
a submission queue that validates, and the latest standings are the publisher's. A process that
plays no game (``referee serve --no-ladder --web``) is a web process: on a store that several
processes share (PostgreSQL: docs/operators/several-hosts.md), its publisher counts the games
in the store, and the games in progress of the referees on other hosts reach its pages through
the store (take5_arena/service/live_feed.py); the games of its own process's ladder, through a turn
watcher of take5_arena/referee/tournament/run/table.py.

TLS: the arena's own ``--cert/--key``; without them the pages listen on loopback only, unless
``--insecure-public`` (the same rule as for the gRPC API: take5_arena/service/serve.py).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import secrets
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from take5_arena.referee.tournament.run.table import watch_turns
from take5_arena.service.address import is_loopback, split_address
from take5_arena.service.errors import ServeError
from take5_arena.service.live_feed import LiveReader, shared_store
from take5_arena.service.servicer import ServiceParts
from take5_arena.web import defaults
from take5_arena.web.app import WebApp, WebConfig, WebParts, create_app
from take5_arena.web.guard import ConnectionGuard, Deadlines, guarded_protocol
from take5_arena.web.live import LiveHub
from take5_arena.web.proxies import NO_PROXIES, Proxies


@dataclass(frozen=True)
class WebOptions:
    """``referee serve --web``'s settings."""

    listen: str
    cert: Path | None = None
    key: Path | None = None
    insecure_public: bool = False
    session_seconds: float = defaults.SESSION_SECONDS
    max_connections: int = defaults.MAX_CONNECTIONS
    max_streams: int = defaults.MAX_STREAMS
    stream_seconds: float = defaults.STREAM_SECONDS
    proxies: Proxies = NO_PROXIES

    @property
    def tls(self) -> bool:
        return self.cert is not None and self.key is not None


def check_address(options: WebOptions) -> tuple[str, int]:
    """(host, port) of ``--web``; ServeError where it may not listen (plain text off loopback)."""
    host, port = split_address(options.listen)
    if not options.tls and not is_loopback(host) and not options.insecure_public:
        raise ServeError(
            f"without --cert/--key the web pages listen on loopback only, not {host}: give a "
            "certificate, or --insecure-public to serve without TLS anyway"
        )
    return host, port


def organiser_token(directory: Path) -> str:
    """The organiser's sign-in token, made (mode 0600, in DIR/secret/) at the first start."""
    folder = directory / "secret"
    folder.mkdir(mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)  # made before by hand, or by an older release, open to others
    path = folder / defaults.ORGANISER_TOKEN
    try:
        token = path.read_text().strip()
        os.chmod(path, 0o600)
        return token
    except FileNotFoundError:
        pass
    token = "t5o_" + secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    return token


class WebServer:
    """The pages of one arena: :meth:`start` listens and watches the ladder's turns, :meth:`stop`
    ends both (a part of ``referee serve``: take5_arena/service/serve.py's ``Sidecar``)."""

    def __init__(
        self,
        options: WebOptions,
        parts: ServiceParts,
        blocking: concurrent.futures.Executor,
        log: Callable[[str], None],
    ) -> None:
        self.options = options
        self.log = log
        self.host, self.port = check_address(options)
        self.loop = asyncio.new_event_loop()
        self.hub = LiveHub(self.loop, competition_of=parts.competition_at)
        web_parts = WebParts(parts, blocking, log, organiser_token(parts.directory))
        config = WebConfig(
            tls=options.tls,
            session_seconds=options.session_seconds,
            max_streams=options.max_streams,
            stream_seconds=options.stream_seconds,
            proxies=options.proxies,
        )
        self.web: WebApp = create_app(web_parts, config, self.hub)
        # several processes on one store: the games the others play come through the store of
        # each competition
        self.reader = (
            LiveReader(parts.competition_directories, self.hub)
            if shared_store(parts.directory)
            else None
        )
        self.server: uvicorn.Server | None = None
        self.thread: threading.Thread | None = None
        self._unwatch: Callable[[], None] | None = None
        self.bound = 0
        self.guard = ConnectionGuard(
            options.max_connections, defaults.CONNECTIONS_PER_CLIENT, options.proxies
        )
        self.deadlines = Deadlines(
            header_seconds=defaults.HEADER_SECONDS,
            body_seconds=parts.limits.upload_seconds,
            write_seconds=defaults.WRITE_STALL_SECONDS,
        )

    def start(self) -> None:
        sock = _listen(self.host, self.port)
        self.bound = sock.getsockname()[1]
        options = self.options
        config = uvicorn.Config(
            self.web.app,
            http=guarded_protocol(self.guard, self.deadlines),
            ws="none",
            lifespan="off",
            log_level="warning",
            access_log=False,
            server_header=False,
            proxy_headers=False,
            limit_concurrency=None,  # the guard's: uvicorn's counts idle connections as busy
            timeout_keep_alive=5,
            timeout_graceful_shutdown=2,
            ssl_certfile=str(options.cert) if options.tls else None,
            ssl_keyfile=str(options.key) if options.tls else None,
        )
        try:
            config.load()
        except (OSError, ValueError) as error:
            sock.close()
            raise ServeError(f"the web pages cannot use the certificate or key: {error}") from None
        server = uvicorn.Server(config)
        self.server = server

        def run() -> None:
            loop = self.loop
            asyncio.set_event_loop(loop)
            task = loop.create_task(self.web.refresh_standings())
            try:
                loop.run_until_complete(server.serve(sockets=[sock]))
            finally:
                task.cancel()
                loop.run_until_complete(asyncio.gather(task, return_exceptions=True))
                loop.close()

        self.thread = threading.Thread(target=run, name="web", daemon=True)
        self.thread.start()
        self._unwatch = watch_turns(self.hub.turn)
        if self.reader is not None:
            self.reader.start()
        scheme = "https" if options.tls else "http"
        host = f"[{self.host.strip('[]')}]" if ":" in self.host.strip("[]") else self.host
        self.log(
            f"web pages on {scheme}://{host}:{self.bound}/"
            + ("" if options.tls else " without TLS")
            + f"; organiser token in {Path('secret') / defaults.ORGANISER_TOKEN}"
        )

    def stop(self) -> None:
        if self._unwatch is not None:
            self._unwatch()
        if self.reader is not None:
            self.reader.stop()
        if self.server is not None:
            self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(10)


def _listen(host: str, port: int) -> socket.socket:
    host = host.strip("[]")
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(1024)
    except OSError as error:
        raise ServeError(f"the web pages cannot listen on {host}:{port}: {error}") from None
    sock.set_inheritable(True)
    return sock


__all__ = ["WebOptions", "WebServer", "check_address", "organiser_token"]
