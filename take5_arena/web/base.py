"""What every page of the arena's web application stands on (docs/web.md): its parts and settings,
the refusal a page raises (:class:`Refused`: a status and a one-line reason), and :class:`Pages`,
the state and helpers the page areas share (a session, the CSRF and rate guard, a small form, a
template rendered, blocking work on the arena's pool).

The page areas are mixins of :class:`Pages`, one module each: take5_arena/web/public.py (what
everyone sees), mine.py (an author's own pages), organising.py (the organiser's);
take5_arena/web/app.py puts them together with their routes and the middleware every request
passes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import re
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from take5_arena.leaderboard.board import NOT_ENOUGH_GAMES
from take5_arena.referee.store import Store
from take5_arena.service.authors import HOUSE
from take5_arena.service.competitions import DEFAULT
from take5_arena.service.errors import NotFoundError, RequestError
from take5_arena.service.servicer import ServiceParts
from take5_arena.web import defaults
from take5_arena.web.guard import client_key
from take5_arena.web.live import LiveHub, Streams
from take5_arena.web.proxies import NO_PROXIES, Proxies
from take5_arena.web.security import Buckets, Rate, Session, Sessions, csrf_ok

_HERE = Path(__file__).parent
ORGANISER = "(organiser)"
"""The name an organiser's session goes by (no author can have it)."""
_T = TypeVar("_T")
_OF_COMPETITION = re.compile(r"^/c/[^/]*")


@dataclass
class WebParts:
    """What the pages work with: the arena's own parts (take5_arena/service/serve.py makes them:
    store, accounts, spool, queue, publisher, ladder, limits), its pool for blocking work and its
    log, and the organiser's sign-in token (None: no organiser pages)."""

    service: ServiceParts
    blocking: concurrent.futures.Executor
    log: Callable[[str], None] = lambda line: None
    organiser_token: str | None = None


@dataclass(frozen=True)
class WebConfig:
    """How the pages behave (``referee serve --web-*`` options)."""

    tls: bool = False
    session_seconds: float = defaults.SESSION_SECONDS
    client_rate: Rate = defaults.CLIENT_RATE
    signin_rate: Rate = defaults.SIGNIN_RATE
    author_rate: Rate = defaults.AUTHOR_RATE
    streams_per_client: int = defaults.STREAMS_PER_CLIENT
    max_streams: int = defaults.MAX_STREAMS
    heartbeat_seconds: float = defaults.HEARTBEAT_SECONDS
    stream_seconds: float = defaults.STREAM_SECONDS
    proxies: Proxies = NO_PROXIES
    """Peers whose ``X-Forwarded-For`` names the client (``--web-forwarded-allow-ips``)."""


class Refused(Exception):
    """A request turned away with a status and a one-line reason shown to the user."""

    def __init__(self, status: int, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.retry_after = retry_after


class Redirect(Refused):
    """A redirect to a path on this site (``reason`` is the path), raised like a refusal."""

    def __init__(self, where: str) -> None:
        super().__init__(303, where)


def client_of(request: Request) -> str:
    """Whom the request counts as for its address's limits (take5_arena/web/guard.py)."""
    return client_key(request.client.host) if request.client is not None else "?"


async def capped(request: Request, limit: int) -> AsyncGenerator[bytes, None]:
    """The request's body as it arrives; Refused (413) as soon as it passes ``limit`` bytes."""
    seen = 0
    async for chunk in request.stream():
        seen += len(chunk)
        if seen > limit:
            raise Refused(413, f"the request is larger than the limit of {limit} bytes")
        yield chunk


def size_text(n: int) -> str:
    """A byte limit as an author reads it (8 MB, not 8388608 bytes)."""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


class Pages:
    """The state the page areas share (made by take5_arena/web/app.py's :class:`WebApp`) and the
    helpers every page uses."""

    parts: WebParts
    config: WebConfig
    hub: LiveHub
    sessions: Sessions
    clients: Buckets
    signins: Buckets
    authors: Buckets
    streams: Streams
    uploads: dict[str, int]
    analyses: dict[tuple[str, str, tuple[int, ...]], dict[str, Any]]
    """Own analyses kept, by competition, game id and the author's seats."""
    analysing: asyncio.Semaphore
    cookie: str
    templates: jinja2.Environment
    _standings_seen: dict[str, object]
    """Per competition, the standings document its feed was last sent."""

    async def run(self, fn: Callable[..., _T], *args: Any) -> _T:
        """``fn(*args)`` on the arena's blocking pool (SQLite, the disk, token hashes)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.parts.blocking, functools.partial(fn, *args))

    def store(self, competition: str = "") -> Store:
        """The store of ``competition`` (the default: the arena's directory), read-only; the
        name is one the page checked with :meth:`competition_name`."""
        service = self.parts.service
        directory = service.competition(competition).directory if competition else service.directory
        return Store(directory, readonly=True)

    def standings_rows(
        self, competition: str = DEFAULT
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The standings of ``competition`` (the default: the arena's directory) as the pages
        show them."""
        doc, computed_at = self.parts.service.competition(competition).publisher.latest()
        rows = list((doc or {}).get("rows") or [])
        owners = {c.bot_name: c.owner for c in self.parts.service.accounts.claims()}
        out = [
            {
                "rank": r.get("rank"),
                "entrant": r.get("entrant"),
                "owner": owners.get(str(r.get("entrant", "")).split("@")[0], HOUSE),
                "rating": r.get("rating"),
                "interval": r.get("interval"),
                "no_interval": "–" if r.get("enough_games", True) else NOT_ENOUGH_GAMES,
                "games": r.get("games"),
                "wins": r.get("wins"),
                "mean_place": r.get("mean_place"),
            }
            for r in rows
        ]
        meta = {
            "games": (doc or {}).get("games", 0),
            "computed_at": computed_at,
            # the ladder's --bootstrap 0 computes no interval at all (board.py, describe_interval)
            "intervals": bool(((doc or {}).get("method") or {}).get("interval")),
        }
        return out, meta

    def path_competition(self, request: Request) -> str:
        """The competition of a route that the default has bare (``/live``) and another under
        ``/c/NAME`` (``/c/NAME/live``): checked as :meth:`competition_name` checks it."""
        return self.competition_name(request) if "name" in request.path_params else DEFAULT

    def competition_name(self, request: Request) -> str:
        """The competition the path names (``/c/NAME/...``), one this arena serves: anything else
        (no name, another script, ``..``, one it has not) is a 404 before any path is made."""
        name = str(request.path_params["name"])
        try:
            self.parts.service.competition(name)
        except RequestError as error:
            raise Refused(404, str(error)) from None
        return name

    def page(
        self,
        request: Request,
        template: str,
        status: int = 200,
        *,
        session: Session | None = None,
        private: bool = False,
        **values: Any,
    ) -> HTMLResponse:
        html = self.templates.get_template(template).render(
            session=session, csrf=session.csrf if session else "", **values
        )
        headers = {"cache-control": "no-store"} if private or session else {}
        return HTMLResponse(html, status, headers=headers)

    async def _refused(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, Refused)
        if isinstance(exc, Redirect):
            return RedirectResponse(exc.reason, 303, headers={"cache-control": "no-store"})
        headers = {"cache-control": "no-store"}
        if exc.retry_after is not None:
            headers["retry-after"] = str(max(1, round(exc.retry_after)))
        path = _OF_COMPETITION.sub("", request.url.path)  # /c/NAME/events/...: as /events/...
        if path.startswith(("/api/", "/events/")) or path.endswith(".json"):
            return JSONResponse({"error": exc.reason}, exc.status, headers=headers)
        session = await self.session(request)
        html = self.templates.get_template("error.html").render(
            session=session,
            csrf=session.csrf if session else "",
            status=exc.status,
            reason=exc.reason,
        )
        return HTMLResponse(html, exc.status, headers=headers)

    async def session(self, request: Request) -> Session | None:
        """The request's session, if signed in (an author revoked since is signed out): looked up in
        the accounts, which every web process shares (take5_arena/web/security.py)."""
        cookie = request.cookies.get(self.cookie)
        if not cookie:
            return None
        session = await self.run(self.sessions.get, cookie)
        if session is None or session.organiser:
            return session
        try:
            author = await self.run(self.parts.service.accounts.author, session.author)
        except NotFoundError:
            author = None
        if author is None or not author.active:
            await self.run(self.sessions.close_author, session.author)
            return None
        return session

    async def signed_in(self, request: Request, *, organiser: bool = False) -> Session:
        """The session, or a redirect to the sign-in page (saying why)."""
        session = await self.session(request)
        if session is None or session.organiser != organiser:
            why = "ended" if request.cookies.get(self.cookie) else "needed"
            raise Redirect(f"/signin?session={why}")
        return session

    async def guard(
        self, request: Request, session: Session | None, form: dict[str, str] | None = None
    ) -> None:
        """What every POST passes besides its origin (checked for every request that is not a GET
        by :class:`_Headers`, before anything else): the session's CSRF token (once signed in),
        and the author's rate."""
        if session is not None:
            if form is None or not csrf_ok(session, form.get("csrf")):
                raise Refused(403, "refused: the form's security token is missing or stale")
            wait = self.authors.take(session.author)
            if wait:
                raise Refused(429, "too many requests; slow down", wait)

    async def small_form(self, request: Request) -> dict[str, str]:
        """A urlencoded form of at most FORM_BYTES, read as it arrives."""
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/x-www-form-urlencoded":
            raise Refused(
                415, "refused: a form must be posted as application/x-www-form-urlencoded"
            )
        body = bytearray()
        async for chunk in capped(request, defaults.FORM_BYTES):
            body += chunk
        try:
            fields = parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=20)
        except (UnicodeDecodeError, ValueError):
            raise Refused(400, "refused: the form cannot be read") from None
        return {k: v[0] for k, v in fields.items()}

    # -- public pages ------------------------------------------------------------------------------


__all__ = [
    "ORGANISER",
    "Pages",
    "Redirect",
    "Refused",
    "WebConfig",
    "WebParts",
    "capped",
    "client_of",
    "size_text",
]
