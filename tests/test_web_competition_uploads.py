"""An author's side of an arena's other competitions on the web (take5_arena/web/mine.py,
entries.py): a real `referee serve --web` on loopback over an arena with a competition ``duel``.
The upload form offers the arena's competitions (the default first); an upload into ``duel`` goes
through duel's own queue (validated and stored in duel's store, not the default's), ``/me`` lists
the bot under duel with a link to its page there; and a hostile competition name in the form
(``..``, a ``/``, a look-alike, an unknown one, markup, a line break) is refused with one line and
nothing kept: no submission, no spooled byte, no version anywhere."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from arena_support import WebServer, db_rows, duel_arena
from support import EXAMPLES
from test_web import (  # noqa: F401 - the module's Chromium fixture
    browser,
    folder_tgz,
    pytestmark_browser,
    recipe_tgz,
)

httpx = pytest.importorskip("httpx")

HOSTILE = ["..", "../duel", "duel/..", "d\u0443el", "Duel", "nope", "<b>x</b>", "duel\n", "x" * 33]
"""``d\u0443el``: a Cyrillic u, a look-alike of ``duel``; ``nope``: a valid name the arena has
not."""
NAMES = "SELECT e.name FROM entrant_versions v JOIN entrants e ON e.id = v.entrant_id"


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory):
    t = tmp_path_factory.mktemp("uploads") / "T"
    token = duel_arena(t)
    server = WebServer(t)
    server.token = token
    try:
        yield server, t
    finally:
        assert server.stop() == 0, server.log
    assert "Traceback" not in server.log, server.log


def signed_in(server: WebServer) -> tuple[httpx.Client, str]:
    http = httpx.Client(
        base_url=server.url, headers={"origin": server.url}, follow_redirects=False, timeout=60
    )
    done = http.post("/signin", data={"token": server.token})
    assert done.status_code == 303, done.text
    page = http.get("/me")
    return http, re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)


def upload(http: httpx.Client, csrf: str, bot: str, competition: str | None) -> httpx.Response:
    data = {"csrf": csrf, "bot_name": bot}
    if competition is not None:
        data["competition"] = competition
    archive = folder_tgz(EXAMPLES / "lowest")
    return http.post(
        "/me/upload", data=data, files={"archive": ("bot.tar.gz", archive, "application/gzip")}
    )


def verdict(http: httpx.Client, response: httpx.Response, timeout: float = 240) -> dict:
    assert response.status_code == 303, response.text
    sid = response.headers["location"].rsplit("/", 1)[1]
    deadline = time.monotonic() + timeout
    while True:
        state = http.get(f"/me/submissions/{sid}.json").json()
        if state["finished"] or time.monotonic() > deadline:
            return state
        time.sleep(0.5)


def kept(t: Path) -> tuple[int, int, list[str]]:
    """What the arena keeps of uploads: submissions, spooled files, and versions of any store."""
    submissions = db_rows(t, "SELECT COUNT(*) FROM arena_submissions")[0][0]
    spooled = sum(
        1
        for root in (t, t / "competitions" / "duel")
        for p in (root / "arena").rglob("*")
        if p.is_file()
    )
    versions = [
        n
        for root in (t, t / "competitions" / "duel")
        if (root / "tournament.sqlite").exists()
        for (n,) in db_rows(root, NAMES)
    ]
    return submissions, spooled, sorted(versions)


def test_the_form_offers_the_competitions_the_default_first(arena) -> None:
    server, _t = arena
    http, _csrf = signed_in(server)
    page = http.get("/me").text
    options = re.findall(
        r'<option value="([^"]*)">([^<]*)</option>', page.split('id="competition"')[1]
    )
    assert options[:2] == [("", "the default competition"), ("duel", "duel")], options


def test_a_hostile_competition_name_is_refused_in_one_line_and_nothing_kept(arena) -> None:
    server, t = arena
    http, csrf = signed_in(server)
    before = kept(t)
    for name in HOSTILE:
        got = upload(http, csrf, "sneaky", name)
        assert got.status_code == 400, (name, got.status_code, got.text[:300])
        error = re.search(r'<p class="error" id="error">([^<]*)</p>', got.text)
        assert error is not None, (name, got.text[:500])
        assert "\n" not in error.group(1) and "competition" in error.group(1), error.group(1)
        assert "<b>" not in got.text.split('id="error"')[1].split("</p>")[0]
        assert "Traceback" not in got.text
    assert kept(t) == before
    assert "sneaky" not in http.get("/me").text


def test_an_upload_into_another_competition_is_validated_and_kept_there(arena) -> None:
    server, t = arena
    http, csrf = signed_in(server)
    state = verdict(http, upload(http, csrf, "dueller", "duel"))
    assert state["status"] == "accepted", state
    assert state["competition"] == "duel" and state["version"] == 1, state
    duel = db_rows(t / "competitions" / "duel", NAMES)
    assert ("dueller",) in duel
    assert ("dueller",) not in db_rows(t, NAMES)
    assert "dueller" not in http.get("/live").text  # nor any game of it among the default's
    me = http.get("/me").text
    section = me.partition('data-competition="duel"')[2]
    assert 'href="/c/duel/bot.html?bot=dueller"' in section, section[:800]
    page = http.get(f"/me/submissions/{state['id']}").text
    assert 'href="/c/duel/bot.html?bot=dueller"' in page


def test_a_bot_is_withdrawn_from_the_competition_the_form_names(arena) -> None:
    server, _t = arena
    http, csrf = signed_in(server)
    me = http.get("/me").text
    assert 'name="competition" value="duel"' in me.partition('data-competition="duel"')[2]
    for name in ("..", "nope", "d\u0443el"):
        got = http.post("/me/bots/dueller/withdraw", data={"csrf": csrf, "competition": name})
        assert got.status_code == 400 and 'id="error"' in got.text, (name, got.status_code)
    done = http.post("/me/bots/dueller/withdraw", data={"csrf": csrf, "competition": "duel"})
    assert done.status_code == 303, done.text
    section = http.get("/me").text.partition('data-competition="duel"')[2]
    assert "— withdrawn" in section.partition("</h3>")[0], section[:400]


@pytestmark_browser
def test_browser_uploads_into_another_competition_and_finds_the_bot_there(
    arena,
    browser,  # noqa: F811 - test_web's Chromium fixture
    tmp_path: Path,
) -> None:
    server, _t = arena
    context = browser.new_context(bypass_csp=True)  # for playwright's waits (test_web's visit)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server.url + "/signin")
        page.fill("#token", server.token)
        page.click("#signin")
        page.wait_for_url("**/me")
        archive = recipe_tgz(EXAMPLES / "random", tmp_path / "random.tar.gz")
        page.fill("#bot_name", "browsed")
        page.select_option("#competition", "duel")
        page.set_input_files("#archive", str(archive))
        page.click("#upload")
        page.wait_for_url("**/me/submissions/*")
        page.wait_for_function(
            "['accepted', 'refused'].includes(document.getElementById('status').textContent)",
            timeout=300_000,
        )
        assert page.inner_text("#status") == "accepted", page.inner_text("#detail")
        page.goto(server.url + "/me")
        entry = page.locator("section.bot[data-competition='duel'][data-bot='browsed']")
        assert entry.count() == 1
        assert (
            page.locator("section.bot[data-bot='browsed']:not([data-competition])")
            .locator(".versions tbody tr")
            .count()
            == 0
        )  # listed in the default too (the name is the arena's), with no version
        entry.locator("h3 a").click()
        page.wait_for_url("**/c/duel/bot.html?bot=browsed")
        assert page.locator("#versions tbody tr[data-version='1']").count() == 1
        assert page.locator("#bot-competition").count() == 1
        assert not errors, errors
    finally:
        context.close()
