"""The web pages of the arena (docs/web.md): what each route reads and who may see it.

Public: the standings (``/``, live over server-sent events), the games (``/games``), each game's
replay (``/replay.html?game=ID``, drawn by the static site's renderer from ``/api/games/ID``), the
games in progress (``/live``, ``/watch?game=ID``) and each bot's page (``/bot.html?bot=NAME``:
owner, versions, history). The names mirror the static site's pages, so that the renderer's own
links (``bot.html?bot=``, ``index.html``) work here unchanged. Another competition of the arena
has the same pages under ``/c/NAME`` (web/public.py).

An author, signed in (``/signin``): their bots, each version's validation, their submissions with
the verdict and the bot's output, upload (``/me/upload``, the same queue as ``referee submit
--server``), withdraw, ask for challenges, and their bots' faults with the bot's own output per
turn (``/me/bots/NAME/faults``), which nobody else can read; another competition's faults, own
output and challenges are under its path (``/c/COMPETITION/me/...``).

The organiser, signed in with the arena's organiser token (``DIR/secret/web-organiser-token``):
authors (add, revoke), bots (withdraw, ban, unban), the settings and the health of the arena
(take5_arena/service/organiser.py does the work, as for ``referee authors``).

Each area is a module of its own (public.py, mine.py, challenging.py, organising.py: mixins of
base.py's :class:`~take5_arena.web.base.Pages`); this one puts them together, with the middleware
that sets the headers, the per-address rate and the origin check on every request.

Everything a page shows from outside (bot names, authors, outputs, fault details) goes through
Jinja2's autoescape or, in the scripts, into text nodes. Every POST passes
:meth:`WebApp.guard` (origin, CSRF token, rate limits) before its body is read further than its
form, and an upload's size is enforced while it is received.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import quote

import jinja2
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from take5_arena.leaderboard.publish import SITE_ASSETS
from take5_arena.web.base import ORGANISER, Refused, WebConfig, WebParts
from take5_arena.web.challenging import ChallengePages
from take5_arena.web.competing import CompetitionPages
from take5_arena.web.guard import client_key
from take5_arena.web.live import LiveHub, Streams
from take5_arena.web.organising import OrganiserPages
from take5_arena.web.public import PublicPages
from take5_arena.web.security import HEADERS, Buckets, Sessions, same_origin

_HERE = Path(__file__).parent


class WebApp(PublicPages, CompetitionPages, ChallengePages, OrganiserPages):
    """The routes, over the arena's parts; :attr:`app` is the ASGI application."""

    def __init__(self, parts: WebParts, config: WebConfig, hub: LiveHub) -> None:
        self.parts = parts
        self.config = config
        self.hub = hub
        self.sessions = Sessions(parts.service.accounts, config.session_seconds)
        self.clients = Buckets(config.client_rate)
        self.signins = Buckets(config.signin_rate)
        self.authors = Buckets(config.author_rate)
        self.streams = Streams()
        self.uploads = {}
        self.analyses = {}
        self.analysing = asyncio.Semaphore(1)
        self.cookie = "__Host-take5" if config.tls else "take5"
        self.templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(_HERE / "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
        )
        self.templates.filters["q"] = lambda text: quote(str(text), safe="")
        self._standings_seen = {}
        routes = [
            Route("/", self.index),
            Route("/index.html", lambda r: RedirectResponse("/", 301)),
            Route("/games", self.games),
            Route("/c/{name}", self.other_standings),
            Route("/c/{name}/games", self.games),
            Route("/c/{name}/replay.html", self.replay),
            Route("/c/{name}/api/games/{game_id:path}", self.game_json),
            Route("/c/{name}/bot.html", self.bot),
            Route("/c/{name}/live", self.live),
            Route("/c/{name}/watch", self.watch),
            Route("/c/{name}/events/standings", self.standings_events),
            Route("/c/{name}/events/live", self.live_events),
            Route("/c/{name}/events/games/{game_id:path}", self.game_events),
            Route("/c/{name}/me/bots/{bot}/faults", self.faults),
            Route("/c/{name}/me/games/{game_id:path}/output.json", self.own_output_json),
            Route("/c/{name}/me/games/{game_id:path}/analysis.json", self.own_analysis_json),
            Route("/c/{name}/me/challenges/{cid}", self.challenge_page),
            Route("/competitions", self.competitions_page),
            Route("/competitions/{prefix}", self.competition_page),
            Route("/replay.html", self.replay),
            Route("/api/games/{game_id:path}", self.game_json),
            Route("/live", self.live),
            Route("/watch", self.watch),
            Route("/bot.html", self.bot),
            Route("/events/standings", self.standings_events),
            Route("/events/live", self.live_events),
            Route("/events/games/{game_id:path}", self.game_events),
            Route("/signin", self.signin_page),
            Route("/signin", self.signin, methods=["POST"]),
            Route("/signout", self.signout, methods=["POST"]),
            Route("/me", self.me),
            Route("/me/upload", self.upload, methods=["POST"]),
            Route("/me/submissions/{sid}.json", self.submission_json),
            Route("/me/submissions/{sid}", self.submission_page),
            Route("/me/bots/{bot}/faults", self.faults),
            Route("/me/games/{game_id:path}/output.json", self.own_output_json),
            Route("/me/games/{game_id:path}/analysis.json", self.own_analysis_json),
            Route("/me/bots/{name}/withdraw", self.withdraw, methods=["POST"]),
            Route("/me/challenges", self.ask_challenge, methods=["POST"]),
            Route("/me/challenges/{cid}", self.challenge_page),
            Route("/organiser", self.organiser_page),
            Route("/organiser/authors", self.add_author, methods=["POST"]),
            Route("/organiser/authors/{name}/revoke", self.revoke, methods=["POST"]),
            Route("/organiser/bots/{name}/{action}", self.bot_action, methods=["POST"]),
            Mount("/static", StaticFiles(directory=_HERE / "static"), name="static"),
            Mount("/site", StaticFiles(directory=SITE_ASSETS), name="site"),
            Route("/{path:path}/", _without_slash),
        ]
        starlette = Starlette(routes=routes, exception_handlers={Refused: self._refused})
        # Starlette's own slash redirect names the host of the request's Host header: a link with a
        # foreign Host would redirect there. Ours (the last route) is a path on this site.
        starlette.router.redirect_slashes = False
        self.app: ASGIApp = _Headers(starlette, self)


async def _without_slash(request: Request) -> Response:
    """``/games/`` -> ``/games``: a path on this site, never a host. Every redirect the pages send
    is a path (the browser keeps the address it asked), so no Host header, however forged, names
    where a redirect goes; a path that would read as another host (``//evil``, ``/\\evil``) is
    one slash and its characters quoted."""
    path = quote(str(request.path_params["path"]).lstrip("/\\"), safe="/-._~")
    query = f"?{request.url.query}" if request.url.query else ""
    return RedirectResponse(f"/{path}{query}", 308)


class _Headers:
    """The security headers on every response, the per-client rate limit on every request, and
    a redirect for :class:`Redirect` (an ASGI middleware: it passes streams through as they
    are)."""

    def __init__(self, app: ASGIApp, web: WebApp) -> None:
        self.app = app
        self.web = web

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        if client and self.web.config.proxies.trusts(client[0]):
            forwarded = [
                v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"x-forwarded-for"
            ]
            # Every later limit (streams, sign-ins, the logs) reads the client from the scope.
            scope["client"] = (self.web.config.proxies.client(client[0], forwarded), 0)
            client = scope["client"]
        wait = self.web.clients.take(client_key(client[0]) if client else "?")
        if wait:
            await _plain(
                send,
                429,
                b"too many requests; slow down",
                {"retry-after": str(max(1, round(wait)))},
            )
            return

        if scope["method"] not in ("GET", "HEAD") and not _same_origin(scope):
            await _plain(
                send, 403, b"refused: this request did not come from this site's pages", {}
            )
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.encode(), v.encode()) for k, v in HEADERS.items()]
                message["headers"] = headers
            await send(message)

        try:
            await self.app(scope, receive, with_headers)
        except ClientDisconnect:
            pass


def _same_origin(scope: Scope) -> bool:
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}
    return same_origin(
        headers.get("origin"),
        headers.get("referer"),
        scope.get("scheme", "http"),
        headers.get("host"),
    )


async def _plain(send: Send, status: int, body: bytes, extra: dict[str, str]) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8")]
    headers += [(k.encode(), v.encode()) for k, v in {**HEADERS, **extra}.items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def create_app(parts: WebParts, config: WebConfig, hub: LiveHub) -> WebApp:
    """The web application over the arena's parts."""
    return WebApp(parts, config, hub)


__all__ = ["ORGANISER", "Refused", "WebApp", "WebConfig", "WebParts", "create_app"]
