"""The web pages of the arena (docs/web.md): what each route reads and who may see it.

Public: the standings (``/``, live over server-sent events), the games (``/games``), each game's
replay (``/replay.html?game=ID``, drawn by the static site's renderer from ``/api/games/ID``), the
games in progress (``/live``, ``/watch?game=ID``) and each bot's page (``/bot.html?bot=NAME``:
owner, versions, history). The names mirror the static site's pages, so that the renderer's own
links (``bot.html?bot=``, ``index.html``) work here unchanged.

An author, signed in (``/signin``): their bots, each version's validation, their submissions with
the verdict and the bot's output, upload (``/me/upload``, the same queue as ``referee submit
--server``), withdraw, and their bots' faults with the bot's own output per turn
(``/me/bots/NAME/faults``), which nobody else can read.

The organiser, signed in with the arena's organiser token (``DIR/secret/web-organiser-token``):
authors (add, revoke), bots (withdraw, ban, unban), the settings and the health of the arena
(take5_arena/service/organiser.py does the work, as for ``referee authors``).

Everything a page shows from outside (bot names, authors, outputs, fault details) goes through
Jinja2's autoescape or, in the scripts, into text nodes. Every POST passes
:meth:`WebApp.guard` (origin, CSRF token, rate limits) before its body is read further than its
form, and an upload's size is enforced while it is received.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import hashlib
import hmac
import json
import tempfile
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, quote

import jinja2
from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import ClientDisconnect, Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from take5.analysis import analyse, costliest
from take5_arena.leaderboard.board import NOT_ENOUGH_GAMES
from take5_arena.leaderboard.publish import SITE_ASSETS
from take5_arena.referee.archive import RECIPE
from take5_arena.referee.store import Store, StoreError
from take5_arena.referee.store.health import StoreFaultError
from take5_arena.service import defaults as service_defaults
from take5_arena.service import messages, organiser
from take5_arena.service.authors import HOUSE, Author, Limits, check_name
from take5_arena.service.errors import (
    LimitExceededError,
    NotFoundError,
    RequestError,
    ServiceError,
    host_fault,
)
from take5_arena.service.servicer import ServiceParts
from take5_arena.web import defaults
from take5_arena.web.guard import client_key
from take5_arena.web.live import LIVE, STANDINGS, LiveHub, Viewer, game_feed
from take5_arena.web.proxies import NO_PROXIES, Proxies
from take5_arena.web.security import (
    HEADERS,
    Buckets,
    Rate,
    Session,
    Sessions,
    csrf_ok,
    same_origin,
)

_HERE = Path(__file__).parent
ORGANISER = "(organiser)"
"""The name an organiser's session goes by (no author can have it)."""
_T = TypeVar("_T")


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


@dataclass
class _Streams:
    """The open live streams by client address, oldest first (on the event loop)."""

    per_client: dict[str, dict[Viewer, None]] = field(default_factory=dict)
    total: int = 0

    def held(self, client: str) -> int:
        return len(self.per_client.get(client, ()))

    def add(self, client: str, viewer: Viewer) -> None:
        self.per_client.setdefault(client, {})[viewer] = None
        self.total += 1

    def release(self, client: str, viewer: Viewer) -> None:
        mine = self.per_client.get(client)
        if mine is not None and viewer in mine:
            del mine[viewer]
            self.total -= 1
            if not mine:
                del self.per_client[client]

    def make_room(self, client: str) -> bool:
        """When every place is taken: end the oldest stream of the busiest address if it holds
        more than ``client`` would with this one (fair shares); whether a place was made."""
        if not self.per_client:
            return False
        busiest, viewers = max(self.per_client.items(), key=lambda item: len(item[1]))
        if len(viewers) <= self.held(client) + 1:
            return False
        oldest = next(iter(viewers))
        self.release(busiest, oldest)
        oldest.end()
        return True


def _client(request: Request) -> str:
    """Whom the request counts as for its address's limits (take5_arena/web/guard.py)."""
    return client_key(request.client.host) if request.client is not None else "?"


class WebApp:
    """The routes, over the arena's parts; :attr:`app` is the ASGI application."""

    def __init__(self, parts: WebParts, config: WebConfig, hub: LiveHub) -> None:
        self.parts = parts
        self.config = config
        self.hub = hub
        self.sessions = Sessions(config.session_seconds)
        self.clients = Buckets(config.client_rate)
        self.signins = Buckets(config.signin_rate)
        self.authors = Buckets(config.author_rate)
        self.streams = _Streams()
        self.uploads: dict[str, int] = {}
        self.analyses: dict[tuple[str, tuple[int, ...]], dict[str, Any]] = {}
        self.analysing = asyncio.Semaphore(1)
        self.cookie = "__Host-take5" if config.tls else "take5"
        self.templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(_HERE / "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
        )
        self.templates.filters["q"] = lambda text: quote(str(text), safe="")
        self._standings_seen: object = None
        routes = [
            Route("/", self.index),
            Route("/index.html", lambda r: RedirectResponse("/", 301)),
            Route("/games", self.games),
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
            Route("/me/bots/{name}/faults", self.faults),
            Route("/me/games/{game_id:path}/output.json", self.own_output_json),
            Route("/me/games/{game_id:path}/analysis.json", self.own_analysis_json),
            Route("/me/bots/{name}/withdraw", self.withdraw, methods=["POST"]),
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

    # -- helpers -----------------------------------------------------------------------------------

    async def run(self, fn: Callable[..., _T], *args: Any) -> _T:
        """``fn(*args)`` on the arena's blocking pool (SQLite, the disk, token hashes)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.parts.blocking, functools.partial(fn, *args))

    def store(self) -> Store:
        return Store(self.parts.service.directory, readonly=True)

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
        if isinstance(exc, _Redirect):
            return RedirectResponse(exc.reason, 303, headers={"cache-control": "no-store"})
        headers = {"cache-control": "no-store"}
        if exc.retry_after is not None:
            headers["retry-after"] = str(max(1, round(exc.retry_after)))
        if request.url.path.startswith(("/api/", "/events/")) or request.url.path.endswith(".json"):
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
        """The request's session, if signed in (an author revoked since is signed out)."""
        session = self.sessions.get(request.cookies.get(self.cookie))
        if session is None or session.organiser:
            return session
        try:
            author = await self.run(self.parts.service.accounts.author, session.author)
        except NotFoundError:
            author = None
        if author is None or not author.active:
            self.sessions.close_author(session.author)
            return None
        return session

    async def signed_in(self, request: Request, *, organiser: bool = False) -> Session:
        """The session, or a redirect to the sign-in page (saying why)."""
        session = await self.session(request)
        if session is None or session.organiser != organiser:
            why = "ended" if request.cookies.get(self.cookie) else "needed"
            raise _Redirect(f"/signin?session={why}")
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
        async for chunk in _capped(request, defaults.FORM_BYTES):
            body += chunk
        try:
            fields = parse_qs(body.decode("utf-8"), keep_blank_values=True, max_num_fields=20)
        except (UnicodeDecodeError, ValueError):
            raise Refused(400, "refused: the form cannot be read") from None
        return {k: v[0] for k, v in fields.items()}

    # -- public pages ------------------------------------------------------------------------------

    def standings_rows(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        doc, computed_at = self.parts.service.publisher.latest()
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

    async def index(self, request: Request) -> Response:
        rows, meta = await self.run(self.standings_rows)
        return self.page(
            request, "index.html", session=await self.session(request), rows=rows, meta=meta
        )

    def _games(self, limit: int, bot: str) -> list[dict[str, Any]]:
        """The newest ``limit`` published games, of the bot named ``bot`` only if it is given."""
        with self.store() as store:
            versions = store.versions.all()
            names = {v.id: f"{v.name}@{v.version}" for v in versions}
            results = store.results.seat_results(published_only=True)
            if bot:
                own = {v.id for v in versions if v.name == bot}
                results = [r for r in results if own & set(r.versions)]
            shown = list(reversed(results[-limit:]))
            finished = store.records.finished_at([r.game_id for r in shown])
        return [
            {
                "id": r.game_id,
                "finished_at": finished.get(r.game_id, ""),
                "seats": [
                    {"bot": names.get(v, "?"), "score": s, "place": p, "faults": len(f)}
                    for v, s, p, f in zip(r.versions, r.scores, r.places, r.faults)
                ],
            }
            for r in shown
        ]

    async def games(self, request: Request) -> Response:
        bot = request.query_params.get("bot", "")[:200]
        games = await self.run(self._games, defaults.GAMES_SHOWN, bot)
        return self.page(
            request, "games.html", session=await self.session(request), games=games, bot=bot
        )

    async def replay(self, request: Request) -> Response:
        return self.page(
            request,
            "replay.html",
            session=await self.session(request),
            game_id=request.query_params.get("game", ""),
        )

    def _public_game(self, game_id: str) -> dict[str, Any]:
        with self.store() as store:
            try:
                record = store.records.get(game_id, published_only=True)
            except StoreError as error:
                raise Refused(404, str(error).splitlines()[0][:200]) from None
        public = messages.public_record(record)
        return {
            "id": game_id,
            "entrants": [s.get("name") for s in public["seats"]],
            "record": public,
        }

    def _own_output(self, author_name: str, game_id: str) -> dict[str, Any]:
        """The author's own bots' output in a published game, turn by turn: only the seats whose
        version the store says is a version of a bot this author holds."""
        accounts = self.parts.service.accounts
        mine = {c.bot_name for c in accounts.claims_of(accounts.author(author_name).name)}
        with self.store() as store:
            try:
                record = store.records.get(game_id, published_only=True)
                seats = store.schedules.game(game_id).seats
                names = {v: store.versions.get(v).name for v in set(seats)}
            except StoreError as error:
                raise Refused(404, str(error).splitlines()[0][:200]) from None
        own = [seat for seat, version in enumerate(seats) if names[version] in mine]
        return {"id": game_id, "seats": own, "logs": messages.own_logs(record, own)}

    def _own_analysis(self, author_name: str, game_id: str) -> dict[str, Any]:
        """Each card the author's own seats played in a published game beside the SDK search's
        card (take5.analysis), with the costliest decision of each: their seats only, as with
        their output. Kept per game, so a second look costs nothing."""
        own = self._own_output(author_name, game_id)["seats"]
        key = (game_id, tuple(own))
        if key not in self.analyses:
            with self.store() as store:
                record = store.records.get(game_id, published_only=True)
            decisions = analyse(record, own, defaults.ANALYSIS_DEALS)
            worst = {s: costliest([d for d in decisions if d.seat == s]) for s in own}
            self.analyses[key] = {
                "id": game_id,
                "seats": own,
                "decisions": [
                    [d.seat, d.round, d.turn, d.played, d.best, round(d.cost, 2)] for d in decisions
                ],
                "costliest": {
                    str(s): [w.round, w.turn, w.played, w.best, round(w.cost, 2)]
                    for s, w in worst.items()
                    if w is not None
                },
            }
            while len(self.analyses) > defaults.ANALYSES_KEPT:
                self.analyses.pop(next(iter(self.analyses)))
        return self.analyses[key]

    async def own_analysis_json(self, request: Request) -> Response:
        """A GET that changes nothing but costs CPU: counted against the author's rate, and one
        analysis at a time for the whole server."""
        session = await self.session(request)
        if session is None or session.organiser:
            raise Refused(403, "sign in first")
        game_id = request.path_params["game_id"]
        if not game_id or len(game_id) > 100:
            raise Refused(404, "no such game")
        wait = self.authors.take(session.author)
        if wait:
            raise Refused(429, "too many requests; slow down", wait)
        async with self.analysing:
            data = await self.run(self._own_analysis, session.author, game_id)
        return JSONResponse(data, headers={"cache-control": "no-store"})

    async def own_output_json(self, request: Request) -> Response:
        session = await self.session(request)
        if session is None or session.organiser:
            raise Refused(403, "sign in first")
        game_id = request.path_params["game_id"]
        if not game_id or len(game_id) > 100:
            raise Refused(404, "no such game")
        data = await self.run(self._own_output, session.author, game_id)
        return JSONResponse(data, headers={"cache-control": "no-store"})

    async def game_json(self, request: Request) -> Response:
        game_id = request.path_params["game_id"]
        if not game_id or len(game_id) > 100:
            raise Refused(404, "no such game")
        return JSONResponse(await self.run(self._public_game, game_id))

    async def live(self, request: Request) -> Response:
        return self.page(
            request,
            "live.html",
            session=await self.session(request),
            games=self.hub.live_games(),
        )

    async def watch(self, request: Request) -> Response:
        return self.page(
            request,
            "watch.html",
            session=await self.session(request),
            game_id=request.query_params.get("game", ""),
        )

    def _bot(self, name: str) -> dict[str, Any] | None:
        accounts = self.parts.service.accounts
        claim = accounts.claim_of(name)
        with self.store() as store:
            states = store.versions.entrant_states()
            versions = [v for v in store.versions.all() if v.name == name]
            stats = store.results.version_stats()
        if claim is None and not versions:
            return None
        rows, _meta = self.standings_rows()
        standing = [r for r in rows if str(r["entrant"]).split("@")[0] == name]
        banned = claim is not None and claim.banned_at is not None
        with self.store() as store:
            keys = {v.id: f"{v.name}@{v.version}" for v in store.versions.all()}
            games = store.records.bot_games([v.id for v in versions], defaults.BOT_GAMES_SHOWN)
        doc, _ = self.parts.service.publisher.latest()
        return {
            "name": name,
            "owner": claim.owner if claim is not None else HOUSE,
            "state": "banned" if banned else "active" if states.get(name) else "withdrawn",
            "note": claim.note if claim is not None else "",
            "standing": standing[0] if standing else None,
            "versions": [
                {
                    "version": v.version,
                    "submitted_at": v.submitted_at,
                    "kind": v.kind,
                    "source_hash": v.source_hash[:16],
                    "games": stats[v.id].games if v.id in stats else 0,
                    "faults": stats[v.id].faults if v.id in stats else 0,
                }
                for v in reversed(versions)
            ],
            "games": [
                {
                    "id": g.game_id,
                    "finished_at": g.finished_at,
                    "version": keys.get(g.version_id, "?"),
                    "place": g.place,
                    "seats": len(g.seats),
                    "score": g.score,
                    "faults": g.faults,
                    "opponents": [
                        {"bot": keys.get(v, "?"), "place": p}
                        for v, p in zip(g.seats, g.places)
                        if v != g.version_id
                    ],
                }
                for g in games
            ],
            "rating_chart": _rating_chart(doc, name),
        }

    async def bot(self, request: Request) -> Response:
        name = request.query_params.get("bot", "")
        bot = await self.run(self._bot, name) if 0 < len(name) <= 200 else None
        if bot is None:
            raise Refused(404, "no such bot")
        return self.page(request, "bot.html", session=await self.session(request), bot=bot)

    # -- live streams ------------------------------------------------------------------------------

    async def standings_events(self, request: Request) -> Response:
        return await self.stream(request, STANDINGS)

    async def live_events(self, request: Request) -> Response:
        return await self.stream(request, LIVE)

    async def game_events(self, request: Request) -> Response:
        game_id = request.path_params["game_id"]
        if not self.hub.has_game(game_id):
            raise Refused(404, "no such game in progress")
        return await self.stream(request, game_feed(game_id))

    async def stream(self, request: Request, feed: str) -> Response:
        """A server-sent-event stream of ``feed``: its present state, then each change (a viewer
        that falls behind gets the newest only), and a comment line as a keep-alive; it ends
        after ``stream_seconds`` (the browser comes back by itself), so no one holds a place for
        ever."""
        client = _client(request)
        streams = self.streams
        if streams.held(client) >= self.config.streams_per_client:
            raise Refused(429, "too many live streams from your address", 10)
        if streams.total >= self.config.max_streams and not streams.make_room(client):
            raise Refused(503, "too many live viewers right now; try again later", 10)
        viewer = self.hub.subscribe(feed)
        streams.add(client, viewer)
        heartbeat = self.config.heartbeat_seconds
        loop = asyncio.get_running_loop()
        end = loop.time() + self.config.stream_seconds

        async def events() -> AsyncIterator[str]:
            try:
                yield "retry: 2000\n\n"
                while not viewer.ended and (left := end - loop.time()) > 0:
                    data = await viewer.next(min(heartbeat, left))
                    yield ": keep-alive\n\n" if data is None else f"data: {data}\n\n"
            finally:
                self.hub.unsubscribe(feed, viewer)
                streams.release(client, viewer)

        return StreamingResponse(
            events(),
            media_type="text/event-stream",
            headers={"cache-control": "no-store", "x-accel-buffering": "no"},
        )

    async def refresh_standings(self) -> None:
        """Forever: when the publisher has new standings, send them to the standings feed."""
        while True:
            doc, _ = self.parts.service.publisher.latest()
            if doc is not self._standings_seen:
                self._standings_seen = doc
                try:
                    rows, meta = await self.run(self.standings_rows)
                    self.hub.set_standings(json.dumps({"rows": rows, **meta}, ensure_ascii=False))
                except Exception as error:  # noqa: BLE001 - reported; tried again next time
                    self.parts.log(f"web: standings feed failed: {type(error).__name__}: {error}")
            await asyncio.sleep(defaults.STANDINGS_POLL_SECONDS)

    # -- signing in --------------------------------------------------------------------------------

    async def signin_page(self, request: Request) -> Response:
        why = request.query_params.get("session", "")
        note = {
            "ended": "Your session has ended; sign in again.",
            "needed": "Sign in to see this page.",
        }.get(why, "")
        return self.page(
            request, "signin.html", session=await self.session(request), note=note, private=True
        )

    async def signin(self, request: Request) -> Response:
        wait = self.signins.take(_client(request))
        if wait:
            raise Refused(429, "too many sign-in attempts; wait a minute", wait)
        form = await self.small_form(request)
        token = form.get("token", "").strip()
        organiser_token = self.parts.organiser_token
        if organiser_token and hmac.compare_digest(token.encode(), organiser_token.encode()):
            session = self.sessions.open(ORGANISER, organiser=True)
            where = "/organiser"
        else:
            try:
                author = await self.run(self.parts.service.accounts.authenticate, token)
            except ServiceError:
                return self.page(
                    request,
                    "signin.html",
                    403,
                    session=None,
                    private=True,
                    note="That token is not valid (or was revoked).",
                )
            session = self.sessions.open(author.name)
            where = "/me"
            self.parts.log(f"web: {author.name} signed in from {_client(request)}")
        response = RedirectResponse(where, 303)
        response.set_cookie(
            self.cookie,
            session.id,
            max_age=int(self.config.session_seconds),
            path="/",
            secure=self.config.tls,
            httponly=True,
            samesite="strict",
        )
        return response

    async def signout(self, request: Request) -> Response:
        session = await self.session(request)
        form = await self.small_form(request)
        await self.guard(request, session, form)
        if session is not None:
            self.sessions.close(session.id)
        response = RedirectResponse("/", 303)
        response.delete_cookie(
            self.cookie, path="/", secure=self.config.tls, httponly=True, samesite="strict"
        )
        return response

    # -- an author's pages -------------------------------------------------------------------------

    def _mine(self, name: str) -> dict[str, Any]:
        accounts = self.parts.service.accounts
        author = accounts.author(name)
        claims = accounts.claims_of(name)
        names = {c.bot_name for c in claims}
        with self.store() as store:
            states = store.versions.entrant_states()
            versions = [v for v in store.versions.all() if v.name in names]
            stats = store.results.version_stats()
        bots = []
        for claim in claims:
            mine = [v for v in versions if v.name == claim.bot_name]
            bots.append(
                {
                    "name": claim.bot_name,
                    "active": bool(states.get(claim.bot_name)),
                    "banned": claim.banned_at is not None,
                    "note": claim.note,
                    "versions": [
                        {
                            "version": v.version,
                            "submitted_at": v.submitted_at,
                            "validation": _validation_text(v.validation),
                            "games": stats[v.id].games if v.id in stats else 0,
                            "faults": stats[v.id].faults if v.id in stats else 0,
                        }
                        for v in reversed(mine)
                    ],
                }
            )
        return {
            "author": author,
            "bots": bots,
            "submissions": accounts.submissions_of(name, defaults.SUBMISSIONS_SHOWN),
            "max_size": _size(self._max_bytes(author)),
            "recipe": RECIPE,
        }

    def _max_bytes(self, author: Author) -> int:
        return min(
            author.limits.max_archive_bytes, self.parts.service.queue.limits.max_archive_bytes
        )

    async def me(self, request: Request, error: str = "", status: int = 200) -> Response:
        session = await self.signed_in(request)
        mine = await self.run(self._mine, session.author)
        return self.page(request, "me.html", status, session=session, error=error, **mine)

    async def upload(self, request: Request) -> Response:
        """A new version from the browser: a .tar.gz in a multipart form, received with its size
        capped as it arrives, then handed to the arena's submission queue exactly like an upload
        of ``referee submit --server`` (the same checks, the same spool, the same validation)."""
        session = await self.signed_in(request)
        await self.guard(request, session, {"csrf": session.csrf})  # the form's token: below
        author = await self.run(self.parts.service.accounts.author, session.author)
        max_bytes = self._max_bytes(author)
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > max_bytes + 65536):
            raise Refused(413, f"the upload is larger than your limit of {_size(max_bytes)}")
        if self.uploads.get(author.name, 0) >= self.parts.service.limits.uploads_per_author:
            raise Refused(429, "you have uploads in progress; wait for them")
        self.uploads[author.name] = self.uploads.get(author.name, 0) + 1
        try:
            with tempfile.TemporaryDirectory(prefix="web-upload-") as tmp:
                try:
                    form = await asyncio.wait_for(
                        self._receive(request, max_bytes + 65536),
                        self.parts.service.limits.upload_seconds,
                    )
                except asyncio.TimeoutError:
                    raise Refused(408, "the upload took too long: it is cut off") from None
                if not csrf_ok(session, form.get("csrf")):
                    raise Refused(403, "refused: the form's security token is missing or stale")
                archive = form.get("archive")
                name = form.get("bot_name")
                if not isinstance(archive, UploadFile) or not isinstance(name, str):
                    raise Refused(400, "give the bot's name and a .tar.gz archive")
                path = Path(tmp) / "archive"
                size, sha256 = await self.run(_save, archive, path, max_bytes)
                if size == 0:
                    raise Refused(400, "the archive is empty")
                row = await self.run(self._submit, author, name.strip(), path, size, sha256)
        except RequestError as error:
            return await self.me(
                request, str(error), 429 if isinstance(error, LimitExceededError) else 400
            )
        except ServiceError as error:
            return await self.me(request, str(error), 400)
        except (StoreFaultError, OSError) as error:
            reason = host_fault(error)
            if reason is None:
                raise
            self.parts.log(f"web: {author.name}'s upload refused: {error}")
            raise Refused(503, reason, 60) from None
        finally:
            self.uploads[author.name] -= 1
        self.parts.log(f"web: {author.name} uploaded {row.bot_name} ({row.archive_bytes} bytes)")
        return RedirectResponse(f"/me/submissions/{quote(row.id, safe='')}", 303)

    async def _receive(self, request: Request, limit: int) -> dict[str, Any]:
        kind = request.headers.get("content-type", "")
        if not kind.lower().startswith("multipart/form-data"):
            raise Refused(415, "refused: an upload must be posted as multipart/form-data")
        parser = MultiPartParser(
            request.headers, _capped(request, limit), max_files=1, max_fields=4
        )
        try:
            form = await parser.parse()
        except MultiPartException as error:
            raise Refused(400, f"refused: {error.message}") from None
        return dict(form.items())

    def _submit(self, author: Author, name: str, path: Path, size: int, sha256: str) -> Any:
        queue = self.parts.service.queue
        declared = queue.check(author, name, size, sha256)

        def chunks() -> Iterator[bytes]:
            with path.open("rb") as f:
                while block := f.read(service_defaults.CHUNK_BYTES):
                    yield block

        spooled = self.parts.service.spool.receive(
            chunks(), size=declared.size, sha256=declared.sha256, max_bytes=declared.max_bytes
        )
        return queue.record(author, declared, spooled)

    def _submission(self, author: str, sid: str) -> dict[str, Any]:
        try:
            row = self.parts.service.accounts.submission(sid)
        except ServiceError:
            row = None
        if row is None or row.author != author:
            raise Refused(404, "you have no such submission")
        version = None
        if row.version_id is not None:
            with self.store() as store:
                version = store.versions.get(row.version_id).version
        return {
            "id": row.id,
            "bot_name": row.bot_name,
            "status": str(row.status),
            "finished": row.status.finished,
            "detail": row.detail,
            "bot_output": row.bot_output[-service_defaults.OUTPUT_TAIL :],
            "received_at": row.received_at,
            "finished_at": row.finished_at,
            "version": version,
        }

    async def submission_json(self, request: Request) -> Response:
        session = await self.session(request)
        if session is None or session.organiser:
            raise Refused(403, "sign in first")
        data = await self.run(self._submission, session.author, request.path_params["sid"][:100])
        return JSONResponse(data, headers={"cache-control": "no-store"})

    async def submission_page(self, request: Request) -> Response:
        session = await self.signed_in(request)
        data = await self.run(self._submission, session.author, request.path_params["sid"][:100])
        return self.page(request, "submission.html", session=session, sub=data)

    def _faults(self, author_name: str, name: str) -> dict[str, Any]:
        accounts = self.parts.service.accounts
        author = accounts.author(author_name)
        check_name("bot", name)
        claim = accounts.claim_of(name)
        if claim is None or claim.author != author.name:
            raise Refused(404, f"you have no bot named {name!r}")
        refusal = accounts.last_refusal(name, author.name)
        with self.store() as store:
            versions = {v.id: v.version for v in store.versions.all() if v.name == name}
            games = store.records.faulted_games(list(versions), service_defaults.FAULTS_SHOWN)
        reply = messages.bot_faults(name, refusal, versions, games, service_defaults.FAULTS_SHOWN)
        return {
            "name": name,
            "last_refusal": reply.last_refusal_output,
            "faults": [
                {
                    "game_id": f.game_id,
                    "version": f.version,
                    "round": f.round,
                    "turn": f.turn,
                    "kind": f.kind,
                    "detail": f.detail,
                    "log_tail": f.log_tail,
                    "finished_at": f.finished_at,
                }
                for f in reply.faults
            ],
        }

    async def faults(self, request: Request) -> Response:
        session = await self.signed_in(request)
        try:
            data = await self.run(self._faults, session.author, request.path_params["name"])
        except ServiceError as error:
            raise Refused(404, str(error)) from None
        return self.page(request, "faults.html", session=session, **data)

    async def withdraw(self, request: Request) -> Response:
        session = await self.signed_in(request)
        form = await self.small_form(request)
        await self.guard(request, session, form)
        name = request.path_params["name"]

        def work() -> None:
            accounts = self.parts.service.accounts
            author = accounts.author(session.author)
            accounts.check_owner(author, check_name("bot", name))
            with Store(self.parts.service.directory) as store:
                store.versions.withdraw(name)

        try:
            await self.run(work)
        except ServiceError as error:
            return await self.me(request, str(error), 400)
        if self.parts.service.ladder is not None:
            self.parts.service.ladder.wake()
        self.parts.log(f"web: withdrawn: {session.author}/{name}")
        return RedirectResponse("/me", 303)

    # -- the organiser -----------------------------------------------------------------------------

    def _organiser(self) -> dict[str, Any]:
        parts = self.parts
        with self.store() as store:
            settings = store.settings.get()
            games = store.results.recorded_count()
        ladder = parts.service.ladder
        return {
            "authors": parts.service.accounts.authors(),
            "holdings": organiser.holdings(parts.service.directory, parts.service.accounts),
            "settings": json.dumps(settings, indent=2, sort_keys=True, ensure_ascii=False),
            "health": {
                "ladder": "off" if ladder is None else "running" if ladder.alive else "stopped",
                "ladder games played in this run": ladder.played if ladder else 0,
                "games in flight": ladder.games_in_flight if ladder else 0,
                "ladder error": (ladder.error if ladder else None) or "none",
                "games recorded": games,
                "standings publications": parts.service.publisher.publications,
                "live viewers": self.hub.viewers,
                "turns seen live": self.hub.turns,
                "signed-in sessions": len(self.sessions),
                **{k.replace("_", " "): v for k, v in parts.service.accounts.info().items()},
            },
        }

    async def organiser_page(
        self, request: Request, note: str = "", token: str = "", status: int = 200
    ) -> Response:
        session = await self.signed_in(request, organiser=True)
        data = await self.run(self._organiser)
        return self.page(
            request, "organiser.html", status, session=session, note=note, token=token, **data
        )

    async def _organiser_post(self, request: Request) -> tuple[Session, dict[str, str]]:
        session = await self.signed_in(request, organiser=True)
        form = await self.small_form(request)
        await self.guard(request, session, form)
        return session, form

    async def add_author(self, request: Request) -> Response:
        _, form = await self._organiser_post(request)
        name = form.get("name", "").strip()
        try:
            token = await self.run(self.parts.service.accounts.add_author, name, Limits())
        except ServiceError as error:
            return await self.organiser_page(request, str(error), status=400)
        self.parts.log(f"web: organiser added author {name}")
        return await self.organiser_page(
            request, f"Author {name} added. Their token (shown once):", token
        )

    async def revoke(self, request: Request) -> Response:
        _, form = await self._organiser_post(request)
        name = request.path_params["name"]
        try:
            withdrawn = await self.run(
                organiser.revoke_author,
                self.parts.service.directory,
                self.parts.service.accounts,
                name,
                form.get("reason", ""),
            )
        except ServiceError as error:
            return await self.organiser_page(request, str(error), status=400)
        self.sessions.close_author(name)
        if self.parts.service.ladder is not None:
            self.parts.service.ladder.wake()
        self.parts.log(f"web: organiser revoked {name}")
        return await self.organiser_page(
            request, f"Revoked {name}; withdrawn: {', '.join(withdrawn) or 'nothing'}."
        )

    async def bot_action(self, request: Request) -> Response:
        _, form = await self._organiser_post(request)
        name, action = request.path_params["name"], request.path_params["action"]
        parts = self.parts
        try:
            if action in ("withdraw", "ban"):
                await self.run(
                    functools.partial(
                        organiser.withdraw_bot,
                        parts.service.directory,
                        parts.service.accounts,
                        name,
                        form.get("reason", "") or f"{action} by the organiser",
                        ban=action == "ban",
                    )
                )
            elif action == "unban":
                await self.run(organiser.unban_bot, parts.service.accounts, name)
            else:
                raise Refused(404, "no such action")
        except ServiceError as error:
            return await self.organiser_page(request, str(error), status=400)
        if parts.service.ladder is not None:
            parts.service.ladder.wake()
        parts.log(f"web: organiser: {action} {name}")
        return await self.organiser_page(request, f"{name}: {action} done.")


async def _without_slash(request: Request) -> Response:
    """``/games/`` -> ``/games``: a path on this site, never a host. Every redirect the pages send
    is a path (the browser keeps the address it asked), so no Host header, however forged, names
    where a redirect goes; a path that would read as another host (``//evil``, ``/\\evil``) is
    one slash and its characters quoted."""
    path = quote(str(request.path_params["path"]).lstrip("/\\"), safe="/-._~")
    query = f"?{request.url.query}" if request.url.query else ""
    return RedirectResponse(f"/{path}{query}", 308)


class _Redirect(Refused):
    def __init__(self, where: str) -> None:
        super().__init__(303, where)


class _Headers:
    """The security headers on every response, the per-client rate limit on every request, and
    a redirect for :class:`_Redirect` (an ASGI middleware: it passes streams through as they
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


async def _capped(request: Request, limit: int) -> AsyncGenerator[bytes, None]:
    """The request's body as it arrives; Refused (413) as soon as it passes ``limit`` bytes."""
    seen = 0
    async for chunk in request.stream():
        seen += len(chunk)
        if seen > limit:
            raise Refused(413, f"the request is larger than the limit of {limit} bytes")
        yield chunk


def _rating_chart(doc: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
    """A bot's rating over the ladder's games, one line per version, as numbers for an inline SVG
    (the standings document's ``over_time`` points; None before there are two of them). Only
    numbers and the versions' keys reach the page (escaped): no script draws it."""
    points = ((doc or {}).get("over_time") or {}).get("points") or []
    lines: dict[str, list[tuple[float, float]]] = {}
    for point in points:
        for entrant, rating in (point.get("ratings") or {}).items():
            if str(entrant).split("@")[0] == name and isinstance(rating, (int, float)):
                lines.setdefault(str(entrant), []).append((float(point["games"]), float(rating)))
    every = [xy for line in lines.values() for xy in line]
    if len(every) < 2:
        return None
    x0, x1 = min(x for x, _ in every), max(x for x, _ in every)
    y0, y1 = min(y for _, y in every), max(y for _, y in every)
    width, height, margin = 640.0, 200.0, 36.0

    def at(x: float, y: float) -> str:
        px = margin + (width - 2 * margin) * ((x - x0) / (x1 - x0) if x1 > x0 else 0.5)
        py = height - margin - (height - 2 * margin) * ((y - y0) / (y1 - y0) if y1 > y0 else 0.5)
        return f"{px:.1f},{py:.1f}"

    return {
        "width": int(width),
        "height": int(height),
        "lines": [
            {"key": key, "points": " ".join(at(x, y) for x, y in line), "last": round(line[-1][1])}
            for key, line in sorted(lines.items())
        ],
        "low": round(y0),
        "high": round(y1),
        "games": (int(x0), int(x1)),
    }


def _validation_text(validation: dict[str, Any]) -> str:
    """A version's validation as an author reads it: the smoke games' verdict, the sandbox, and the
    table it was tried at (players, variant, threshold, time per decision), not a JSON blob."""
    shape = validation.get("shape")
    parts = [str(validation.get("smoke") or "validated")]
    if validation.get("sandbox"):
        parts.append(f"in the {validation['sandbox']} sandbox")
    if isinstance(shape, dict):
        parts.append(
            f"at a table of {shape.get('players')} ({shape.get('variant')}, to "
            f"{shape.get('threshold')}, {shape.get('timeout')} s a decision)"
        )
    return ", ".join(parts)[:2000]


def _size(n: int) -> str:
    """A byte limit as an author reads it (8 MB, not 8388608 bytes)."""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


def _save(upload: UploadFile, path: Path, max_bytes: int) -> tuple[int, str]:
    """Copy an uploaded file to ``path``; its size and sha256 (Refused past ``max_bytes``)."""
    digest = hashlib.sha256()
    size = 0
    upload.file.seek(0)
    with path.open("wb") as out:
        while block := upload.file.read(1 << 16):
            size += len(block)
            if size > max_bytes:
                raise Refused(413, f"the archive is larger than your limit of {_size(max_bytes)}")
            digest.update(block)
            out.write(block)
    return size, digest.hexdigest()


def create_app(parts: WebParts, config: WebConfig, hub: LiveHub) -> WebApp:
    """The web application over the arena's parts."""
    return WebApp(parts, config, hub)


__all__ = ["ORGANISER", "Refused", "WebApp", "WebConfig", "WebParts", "create_app"]
