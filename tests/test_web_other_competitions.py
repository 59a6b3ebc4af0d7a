"""The games of an arena's other competitions on the web arena (take5_arena/web/public.py): a real
`referee serve --web` on loopback over an arena with a competition ``duel`` that played a round of
a Swiss. ``/c/duel/games`` lists its games, each replay is drawn from ``/c/duel/api/games/ID`` (in
a real Chromium too), the default competition's routes do not serve its games, and every
hostile competition name in the path is a 404 that reflects nothing."""

from __future__ import annotations

import re

import pytest
from arena_support import WebServer, cli, db_rows, duel_arena
from test_web import browser, pytestmark_browser  # noqa: F401 - the module's Chromium fixture

httpx = pytest.importorskip("httpx")

HOSTILE = ["..%2F..", "%2E%2E", "Duel", "d%D1%83el", "nope", "%3Cb%3Ex", "duel%0A", "x" * 33]
"""``d%D1%83el``: a Cyrillic u, a look-alike of ``duel``."""


@pytest.fixture(scope="module")
def duel(tmp_path_factory: pytest.TempPathFactory):
    t = tmp_path_factory.mktemp("other") / "T"
    duel_arena(t, "lowest", "random")
    ran = cli(
        "tournament", "run", "--tournament", str(t / "competitions" / "duel"), "--sandbox",
        "local", "--players", "2", "--format", "swiss", "--rounds", "1", "--no-progress",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    games = [g for (g,) in db_rows(t / "competitions" / "duel", "SELECT game_id FROM results")]
    assert games
    server = WebServer(t)
    try:
        yield server, games
    finally:
        assert server.stop() == 0, server.log
    assert "Traceback" not in server.log, server.log


def test_a_competitions_games_and_replays_are_under_its_path(duel) -> None:
    server, games = duel
    with httpx.Client(base_url=server.url, timeout=30) as web:
        standings = web.get("/c/duel")
        assert 'href="/c/duel/games"' in standings.text
        listed = web.get("/c/duel/games")
        assert listed.status_code == 200, listed.text
        assert "<h1>Games in duel</h1>" in listed.text
        shown = set(re.findall(r'href="/c/duel/replay\.html\?game=([^"]+)"', listed.text))
        assert shown and shown <= {g.replace("/", "%2F") for g in games}, shown
        assert 'href="/bot.html' not in listed.text  # the bot pages are the default's
        game = games[0]
        record = web.get(f"/c/duel/api/games/{game}")
        assert record.status_code == 200, record.text
        assert set(record.json()["entrants"]) <= {"lowest@1", "random@1", "lowest", "random"}
        replay = web.get("/c/duel/replay.html", params={"game": game})
        assert 'data-api="/c/duel/api/games/"' in replay.text
        assert "data-own-output" not in replay.text
        # the default competition's routes are its own store's: not duel's games
        assert web.get(f"/api/games/{game}").status_code == 404
        assert "/replay.html" not in web.get("/games").text
        for name in HOSTILE:
            for path in (f"/c/{name}/games", f"/c/{name}/replay.html?game=x",
                         f"/c/{name}/api/games/{game}"):  # fmt: skip
                got = web.get(path)
                assert got.status_code == 404, (path, got.status_code)
                assert "\n" not in got.headers.get("location", "")
                if got.headers["content-type"].startswith("text/html"):
                    assert "<b>" not in got.text
                else:  # an API's refusal (JSON, as /api/games/ID's) or no route: never a page
                    kind = got.headers["content-type"]
                    assert kind in ("application/json", "text/plain; charset=utf-8"), kind
                    assert got.headers["x-content-type-options"] == "nosniff"


@pytestmark_browser
def test_browser_draws_a_competitions_replay(duel, browser) -> None:  # noqa: F811
    server, _games = duel
    context = browser.new_context()
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server.url + "/c/duel/games")
        page.locator("#games a[href^='/c/duel/replay.html']").first.click()
        page.wait_for_selector("body[data-ready='1']", timeout=30_000)
        assert page.locator("#error").count() == 0
        assert not errors, errors
    finally:
        context.close()
