"""What everyone sees (docs/web.md, "Everyone"): the standings (``/``, live over server-sent
events), the games (``/games``), each game's replay (``/replay.html?game=ID``, drawn by the static
site's renderer from ``/api/games/ID``), the games in progress (``/live``, ``/watch?game=ID``) and
each bot's page (``/bot.html?bot=NAME``). The names mirror the static site's pages, so that the
renderer's own links (``bot.html?bot=``, ``index.html``) work here unchanged. Each of them but
``/`` is also another competition's under ``/c/NAME`` (its standings: ``/c/NAME``), reading that
competition's store and feeds, its links kept under the prefix :func:`competition_prefix` makes.
Nothing here reads a bot's own output: the public record (take5_arena/service/messages.py) leaves
it out.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from take5_arena.referee.store import StoreError
from take5_arena.service import challenges, messages
from take5_arena.service.authors import HOUSE
from take5_arena.service.competitions import DEFAULT
from take5_arena.web import defaults
from take5_arena.web.base import Pages, Refused, client_of
from take5_arena.web.live import game_feed, live_feed, standings_feed


@dataclass(frozen=True)
class GameFilter:
    """A bot page's filters of its games (the query string's ``version``, ``opponent``, ``place``,
    ``faults`` and ``since``); a value that is not one is a 400 naming it."""

    version: int | None = None
    opponent: str = ""
    place: int | None = None
    faulted: bool = False
    since: str | None = None

    @property
    def active(self) -> bool:
        return self != GameFilter()

    @staticmethod
    def of(query: Mapping[str, str]) -> GameFilter:
        def number(key: str, low: int, high: int) -> int | None:
            text = query.get(key, "")
            if not text:
                return None
            if not text.isdigit() or not low <= int(text) <= high:
                raise Refused(400, f"{key}: a number from {low} to {high}")
            return int(text)

        opponent = query.get("opponent", "").strip()
        if len(opponent) > 200:
            raise Refused(400, "opponent: a bot's name")
        since = query.get("since", "") or None
        if since is not None and not _DATE.fullmatch(since):
            raise Refused(400, "since: a date, YYYY-MM-DD")
        return GameFilter(
            version=number("version", 1, 10**6),
            opponent=opponent,
            place=number("place", 1, 10),
            faulted=query.get("faults", "") == "1",
            since=since,
        )


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class PublicPages(Pages):
    """The public pages and live streams."""

    async def index(self, request: Request) -> Response:
        rows, meta = await self.run(self.standings_rows)
        return self.page(
            request,
            "index.html",
            session=await self.session(request),
            rows=rows,
            meta=meta,
            others=sorted(self.parts.service.others),
            bot_links=True,
            prefix="",
        )

    async def other_standings(self, request: Request) -> Response:
        """``/c/NAME``: the standings of the arena's competition NAME (its games, replays and
        seasons are on its static site, ``c/NAME`` of the published site)."""
        name = self.competition_name(request)
        rows, meta = await self.run(self.standings_rows, name)
        return self.page(
            request,
            "other_standings.html",
            session=await self.session(request),
            rows=rows,
            meta=meta,
            name=name,
            others=sorted(self.parts.service.others),
            bot_links=True,
            prefix=competition_prefix(name),
        )

    def _games(self, limit: int, bot: str, competition: str = DEFAULT) -> list[dict[str, Any]]:
        """The newest ``limit`` published games of ``competition``, of the bot named ``bot`` only
        if it is given."""
        with self.store(competition) as store:
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
        """``/games`` and ``/c/NAME/games``: the newest published games of a competition."""
        name = self.path_competition(request)
        bot = request.query_params.get("bot", "")[:200]
        games = await self.run(self._games, defaults.GAMES_SHOWN, bot, name)
        return self.page(
            request,
            "games.html",
            session=await self.session(request),
            games=games,
            bot=bot,
            competition=name,
            prefix=competition_prefix(name),
        )

    def _unrated(self, game_id: str, competition: str = DEFAULT) -> bool:
        with self.store(competition) as store:
            return challenges.challenge_of(store, game_id) is not None

    async def replay(self, request: Request) -> Response:
        """``/replay.html`` and ``/c/NAME/replay.html``: a game's replay, drawn in the browser
        from the record the competition's ``api/games/ID`` gives."""
        name = self.path_competition(request)
        game_id = request.query_params.get("game", "")[:100]
        return self.page(
            request,
            "replay.html",
            session=await self.session(request),
            game_id=game_id,
            unrated=await self.run(self._unrated, game_id, name),
            competition=name,
            prefix=competition_prefix(name),
        )

    def _public_game(
        self, game_id: str, author: str | None, competition: str = DEFAULT
    ) -> dict[str, Any]:
        """A published game's public record: a challenge's only for its author and the authors
        of its bots (anyone else: as if there were no such game)."""
        with self.store(competition) as store:
            if not challenges.may_read(store, self.parts.service.accounts, author, game_id):
                raise Refused(404, f"game {game_id} is not recorded")
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

    async def game_json(self, request: Request) -> Response:
        name = self.path_competition(request)
        game_id = request.path_params["game_id"]
        if not game_id or len(game_id) > 100:
            raise Refused(404, "no such game")
        session = await self.session(request)
        author = session.author if session is not None and not session.organiser else None
        return JSONResponse(
            await self.run(self._public_game, game_id, author, name),
            headers={"cache-control": "no-store"} if session is not None else {},
        )

    async def live(self, request: Request) -> Response:
        """``/live`` and ``/c/NAME/live``: a competition's games in progress."""
        name = self.path_competition(request)
        return self.page(
            request,
            "live.html",
            session=await self.session(request),
            games=self.hub.live_games(name),
            competition=name,
            prefix=competition_prefix(name),
        )

    async def watch(self, request: Request) -> Response:
        name = self.path_competition(request)
        return self.page(
            request,
            "watch.html",
            session=await self.session(request),
            game_id=request.query_params.get("game", ""),
            prefix=competition_prefix(name),
        )

    def _bot(
        self, name: str, filters: GameFilter | None = None, competition: str = DEFAULT
    ) -> dict[str, Any] | None:
        """A bot's page in ``competition``: its owner and state, and its versions, standing,
        rating and games there (another competition's page: only where it has a version)."""
        accounts = self.parts.service.accounts
        claim = accounts.claim_of(name)
        with self.store(competition) as store:
            states = store.versions.entrant_states()
            versions = [v for v in store.versions.all() if v.name == name]
            stats = store.results.version_stats()
        if not versions and (claim is None or competition != DEFAULT):
            return None
        rows, _meta = self.standings_rows(competition)
        by_entrant = {str(r["entrant"]): r for r in rows}
        latest = max((v.version for v in versions), default=0)
        banned = claim is not None and claim.banned_at is not None
        f = filters or GameFilter()
        with self.store(competition) as store:
            every = store.versions.all()
            keys = {v.id: f"{v.name}@{v.version}" for v in every}
            mine = [v.id for v in versions if f.version is None or v.version == f.version]
            against = None if not f.opponent else [v.id for v in every if v.name == f.opponent]
            games = store.records.bot_games(
                mine,
                defaults.BOT_GAMES_SHOWN,
                against=against,
                place=f.place,
                faulted=f.faulted,
                since=f.since,
            )
        doc, _ = self.parts.service.competition(competition).publisher.latest()
        return {
            "name": name,
            "owner": claim.owner if claim is not None else HOUSE,
            "state": "banned" if banned else "active" if states.get(name) else "withdrawn",
            "note": claim.note if claim is not None else "",
            # the standings name a bot's latest version by its name, older ones name@vN
            # (take5_arena/referee/tournament/status.py, entrant_labels)
            "standing": by_entrant.get(name),
            "versions": _side_by_side(
                [
                    {
                        "version": v.version,
                        "submitted_at": v.submitted_at,
                        "kind": v.kind,
                        "source_hash": v.source_hash[:16],
                        "games": stats[v.id].games if v.id in stats else 0,
                        "faults": stats[v.id].faults if v.id in stats else 0,
                        "standing": by_entrant.get(
                            name if v.version == latest else f"{name}@v{v.version}"
                        ),
                    }
                    for v in versions
                ]
            ),
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
            "filter": f,
        }

    async def bot(self, request: Request) -> Response:
        """``/bot.html`` and ``/c/NAME/bot.html``: a bot's page in a competition."""
        competition = self.path_competition(request)
        name = request.query_params.get("bot", "")
        filters = GameFilter.of(request.query_params)
        bot = (
            await self.run(self._bot, name, filters, competition) if 0 < len(name) <= 200 else None
        )
        if bot is None:
            raise Refused(404, "no such bot" + (f" in {competition}" if competition else ""))
        return self.page(
            request,
            "bot.html",
            session=await self.session(request),
            bot=bot,
            competition=competition,
            prefix=competition_prefix(competition),
        )

    # -- live streams ------------------------------------------------------------------------------

    async def standings_events(self, request: Request) -> Response:
        return await self.stream(request, standings_feed(self.path_competition(request)))

    async def live_events(self, request: Request) -> Response:
        return await self.stream(request, live_feed(self.path_competition(request)))

    async def game_events(self, request: Request) -> Response:
        competition = self.path_competition(request)
        game_id = request.path_params["game_id"]
        if not self.hub.has_game(game_id, competition):
            raise Refused(404, "no such game in progress")
        return await self.stream(request, game_feed(game_id))

    async def stream(self, request: Request, feed: str) -> Response:
        """A server-sent-event stream of ``feed``: its present state, then each change (a viewer
        that falls behind gets the newest only), and a comment line as a keep-alive; it ends
        after ``stream_seconds`` (the browser comes back by itself), so no one holds a place for
        ever."""
        client = client_of(request)
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
        """Forever: when a competition's publisher has new standings, send them to its
        standings feed."""
        while True:
            for name in self.parts.service.competition_names():
                doc, _ = self.parts.service.competition(name).publisher.latest()
                if doc is self._standings_seen.get(name):
                    continue
                self._standings_seen[name] = doc
                try:
                    rows, meta = await self.run(self.standings_rows, name)
                    data = json.dumps({"rows": rows, **meta}, ensure_ascii=False)
                    self.hub.set_standings(data, name)
                except Exception as error:  # noqa: BLE001 - reported; tried again next time
                    self.parts.log(f"web: standings feed failed: {type(error).__name__}: {error}")
            await asyncio.sleep(defaults.STANDINGS_POLL_SECONDS)

    # -- signing in --------------------------------------------------------------------------------


def competition_prefix(competition: str) -> str:
    """The path the pages of ``competition`` are under: '' the default's (``/games``),
    ``/c/NAME`` another's (a name the page checked: no character to quote)."""
    return f"/c/{competition}" if competition else ""


def _side_by_side(versions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A bot's versions, newest first, each with its faults per game and its rating's change from
    the version before it (None where either has no rating yet): what an author compares."""
    previous: float | None = None
    for v in versions:  # oldest first
        rating = (v["standing"] or {}).get("rating")
        v["faults_per_game"] = round(v["faults"] / v["games"], 3) if v["games"] else None
        v["change"] = (
            round(rating - previous)
            if isinstance(rating, (int, float)) and previous is not None
            else None
        )
        if isinstance(rating, (int, float)):
            previous = float(rating)
    return list(reversed(versions))


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


__all__ = ["GameFilter", "PublicPages", "competition_prefix"]
