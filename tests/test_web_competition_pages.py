"""A competition's own pages on the live web arena (take5_arena/web/public.py, live.py): a real
`referee serve --web` on loopback, its ladder playing an arena's competition ``duel`` (two example
bots) while the default competition has none. ``/c/duel/live``, its event streams and
``/c/duel/watch`` show duel's games in progress and the default's routes none of them; a bot's page
``/c/duel/bot.html`` reads duel's store; every link of duel's pages stays under ``/c/duel`` (but
the list of the arena's other competitions); and a hostile competition name on each new route is
a 404 that reflects nothing."""

from __future__ import annotations

import asyncio
import json
import re
import time

import pytest
from arena_support import duel_arena
from test_web import WebArena, browser, pytestmark_browser  # noqa: F401 - Chromium fixture

httpx = pytest.importorskip("httpx")

HOSTILE = ["..%2F..", "%2E%2E", "Duel", "d%D1%83el", "nope", "%3Cb%3Ex", "duel%0A", "x" * 33]
GLOBAL = ("/competitions", "/signin", "/static/", "/site/")
"""The links every page has that are the arena's, not a competition's."""


def test_the_hub_keeps_each_competitions_games_and_feeds_apart() -> None:
    """Each game in progress is its competition's: listed, fed and found there only."""
    from take5_arena.referee.store.live import LiveGame
    from take5_arena.web.live import LiveHub, live_feed, standings_feed

    loop = asyncio.new_event_loop()
    homes = {"/arena/competitions/duel": "duel"}
    hub = LiveHub(loop, competition_of=lambda home: homes.get(home, ""))
    try:
        hub.post(LiveGame("d1", ["a", "b"], 1, 1, False, "d1 state"), "duel")
        hub.post(LiveGame("g1", ["c", "d"], 1, 1, False, "g1 state"))
        loop.run_until_complete(asyncio.sleep(0))
        assert [g["id"] for g in hub.live_games("duel")] == ["d1"]
        assert [g["id"] for g in hub.live_games()] == ["g1"]
        assert '"d1"' in (hub.current(live_feed("duel")) or "")
        assert '"d1"' not in (hub.current(live_feed()) or "")
        assert hub.has_game("d1", "duel") and not hub.has_game("d1")
        assert not hub.has_game("g1", "duel") and hub.has_game("g1")
        hub.set_standings("duel rows", "duel")
        assert hub.current(standings_feed("duel")) == "duel rows"
        assert hub.current(standings_feed()) is None
    finally:
        loop.close()


@pytest.fixture(scope="module")
def duel(tmp_path_factory: pytest.TempPathFactory):
    t = tmp_path_factory.mktemp("pages") / "T"
    duel_arena(t, "lowest", "random")
    server = WebArena(t)
    try:
        yield server
    finally:
        assert server.stop() == 0, server.log
    assert "Traceback" not in server.log, server.log


def first_data(web: httpx.Client, path: str) -> dict:
    """The first message of a server-sent-event stream."""
    with web.stream("GET", path) as stream:
        assert stream.status_code == 200, (path, stream.status_code)
        for line in stream.iter_lines():
            if line.startswith("data: "):
                return json.loads(line[len("data: ") :])
    raise AssertionError(f"{path}: no message")


def reflected(got: httpx.Response) -> None:
    """A refusal reflects no markup: a page escapes it, a stream's refusal is JSON (or plain)."""
    assert got.headers["x-content-type-options"] == "nosniff"
    if got.headers["content-type"].startswith("text/html"):
        assert "<b>" not in got.text
    else:
        assert got.headers["content-type"] in ("application/json", "text/plain; charset=utf-8")
    assert "\n" not in got.headers.get("location", "")


def hrefs(html: str) -> list[str]:
    """The page's links, without the list of the arena's other competitions."""
    html = re.sub(r'<p class="note" id="other-competitions">.*?</p>', "", html, flags=re.S)
    return re.findall(r'(?:href|action|data-api)="([^"]*)"', html)


def test_a_competitions_games_in_progress_are_under_its_path(duel) -> None:
    with httpx.Client(base_url=duel.url, timeout=30) as web:
        game = None
        deadline = time.monotonic() + 180
        while game is None and time.monotonic() < deadline:
            found = re.search(r'<li data-game="([^"]+)">', web.get("/c/duel/live").text)
            game = found.group(1) if found else None
            time.sleep(0.2)
        assert game is not None, duel.log
        assert game not in web.get("/live").text
        assert game in {g["id"] for g in first_data(web, "/c/duel/events/live")["games"]}
        assert first_data(web, "/events/live") == {"games": []}
        watched = first_data(web, f"/c/duel/events/games/{game}")
        assert watched["id"] == game
        refused = web.get(f"/events/games/{game}")
        assert refused.status_code == 404 and "error" in refused.json()
        assert web.get(f"/c/duel/watch?game={game}").status_code == 200


def test_a_bot_page_and_every_link_of_a_competition_stay_in_it(duel) -> None:
    with httpx.Client(base_url=duel.url, timeout=30) as web:
        deadline = time.monotonic() + 240
        while "/c/duel/replay.html" not in web.get("/c/duel/games").text:
            assert time.monotonic() < deadline, duel.log
            time.sleep(1)
        game = re.search(
            r'href="/c/duel/replay\.html\?game=([^"]+)"', web.get("/c/duel/games").text
        )
        bot = web.get("/c/duel/bot.html", params={"bot": "lowest"})
        assert bot.status_code == 200, bot.text
        assert 'id="bot-competition"' in bot.text
        assert re.search(r'<tr data-version="1">', bot.text)
        assert 'href="/c/duel/replay.html?game=' in bot.text
        default = web.get("/bot.html", params={"bot": "lowest"})  # the name is the arena's ...
        assert "data-version=" not in default.text  # ... its versions are duel's
        assert web.get("/c/duel/bot.html", params={"bot": "nobody"}).status_code == 404
        standings = first_data(web, "/c/duel/events/standings")
        assert {r["entrant"] for r in standings["rows"]} <= {"lowest", "random"}
        pages = [
            "/c/duel", "/c/duel/games", "/c/duel/live", "/c/duel/bot.html?bot=lowest",
            "/c/duel/bot.html?bot=random&faults=1", f"/c/duel/replay.html?game={game.group(1)}",
            "/c/duel/watch?game=x",
        ]  # fmt: skip
        for path in pages:
            page = web.get(path)
            assert page.status_code == 200, (path, page.status_code)
            assert 'data-prefix="/c/duel"' in page.text, path
            for link in hrefs(page.text):
                assert link.startswith(("/c/duel/", "/c/duel?", *GLOBAL)) or link == "/c/duel", (
                    path,
                    link,
                )
        for name in HOSTILE:
            for path in (
                f"/c/{name}/bot.html?bot=lowest", f"/c/{name}/live", f"/c/{name}/watch?game=x",
                f"/c/{name}/events/live", f"/c/{name}/events/standings",
                f"/c/{name}/events/games/x",
            ):  # fmt: skip
                got = web.get(path)
                assert got.status_code == 404, (path, got.status_code)
                reflected(got)


@pytestmark_browser
def test_browser_follows_a_competitions_streams(duel, browser) -> None:  # noqa: F811
    """The scripts of duel's pages follow duel's streams: its standings update live, and its games
    in progress are listed with links to watch them under /c/duel."""
    context = browser.new_context(bypass_csp=True)  # for playwright's waits (test_web's visit)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(duel.url + "/c/duel")
        page.wait_for_function("Number(document.body.dataset.updates || 0) >= 1", timeout=60_000)
        for link in page.locator("#standings-body a").all():
            assert (link.get_attribute("href") or "").startswith("/c/duel/bot.html?bot=")
        page.goto(duel.url + "/c/duel/live")
        page.wait_for_selector("#live-games li[data-game] a", timeout=180_000)
        href = page.locator("#live-games li[data-game] a").first.get_attribute("href") or ""
        assert href.startswith("/c/duel/watch?game="), href
        assert not errors, errors
    finally:
        context.close()
