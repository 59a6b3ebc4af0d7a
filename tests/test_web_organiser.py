"""The organiser's page over every competition of the arena (take5_arena/web/organising.py,
docs/web.md "The organiser"): a real `referee serve --web` on loopback over an arena with a
competition ``duel`` (alice's bots lowest and random entered), and another with one found but not
served (``broken``, a damaged store). The page shows each with its health (the one rule of
take5_arena/service/health.py), settings and bots; a withdrawal reaches the competition named
alone, a ban every one; a hostile competition name is a one-line refusal with nothing changed; an
author's session reaches none of it; and the page works in a real Chromium."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from arena_support import WebServer, db_rows, duel_arena
from test_web import browser, pytestmark_browser  # noqa: F401 - the module's Chromium fixture

httpx = pytest.importorskip("httpx")

HOSTILE = ["..", "../..", "Duel", "d\u0443el", "<b>x</b>", "nope", "duel\n", "x" * 33, "-"]
"""``d\u0443el``: a Cyrillic u, a look-alike of ``duel``."""


@pytest.fixture(scope="module")
def duel(tmp_path_factory: pytest.TempPathFactory):
    t = tmp_path_factory.mktemp("organiser") / "T"
    alice = duel_arena(t, "lowest", "random")
    server = WebServer(t)
    server.token = alice
    try:
        yield server
    finally:
        assert server.stop() == 0, server.log
    assert "Traceback" not in server.log, server.log


def organiser(server: WebServer) -> tuple[httpx.Client, str]:
    token = (server.directory / "secret" / "web-organiser-token").read_text().strip()
    http = httpx.Client(base_url=server.url, headers={"origin": server.url}, timeout=60)
    assert http.post("/signin", data={"token": token}).status_code == 303
    page = http.get("/organiser").text
    return http, re.search(r'name="csrf" value="([^"]+)"', page)[1]


def active(directory: Path) -> dict[str, int]:
    return dict(db_rows(directory, "SELECT name, active FROM entrants"))


def section(page: str, name: str) -> str:
    return page.split(f'<section class="competition" id="competition-{name}"')[1].split(
        "</section>"
    )[0]


def test_the_page_shows_every_competition_with_its_health_settings_and_bots(duel) -> None:
    http, _ = organiser(duel)
    page = http.get("/organiser").text
    ours = section(page, "duel")
    assert 'data-bot="lowest"' in ours and 'data-bot="random"' in ours
    assert 'href="/c/duel/bot.html?bot=lowest"' in ours
    assert (
        "&#34;players&#34;: 2" in ours and "games recorded" in ours and "ladder</dt><dd>off" in ours
    )
    assert 'class="problem">none<' in ours
    default = section(page, "-")
    assert "The default competition" in default and "games in the published standings" in default
    assert httpx.get(duel.url + "/organiser").status_code == 303  # no session: the sign-in page


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_hostile_competition_name_is_a_one_line_refusal(duel, hostile: str) -> None:
    http, csrf = organiser(duel)
    before = active(duel.directory / "competitions" / "duel")
    for action in ("withdraw", "ban", "unban"):
        answer = http.post(
            f"/organiser/bots/lowest/{action}",
            data={"csrf": csrf, "competition": hostile, "reason": "<i>r</i>"},
        )
        assert answer.status_code == 400, answer.text
        note = re.search(r'<p class="note" id="note">([^\n<]*)</p>', answer.text)
        assert note and "competition" in note[1], answer.text
        assert "<b>x</b>" not in answer.text and "<i>r</i>" not in answer.text
    assert active(duel.directory / "competitions" / "duel") == before
    assert "<i>r</i>" not in http.get("/organiser").text and "&lt;i&gt;" not in before


def test_an_authors_session_reaches_none_of_it(duel) -> None:
    author = httpx.Client(base_url=duel.url, headers={"origin": duel.url}, timeout=60)
    assert author.post("/signin", data={"token": duel.token}).status_code == 303
    csrf = re.search(r'name="csrf" value="([^"]+)"', author.get("/me").text)[1]
    before = active(duel.directory / "competitions" / "duel")
    assert author.get("/organiser").status_code == 303
    for action in ("withdraw", "ban"):
        answer = author.post(
            f"/organiser/bots/lowest/{action}", data={"csrf": csrf, "competition": "duel"}
        )
        assert answer.status_code == 303 and "/signin" in answer.headers["location"]
    assert active(duel.directory / "competitions" / "duel") == before


def test_a_withdrawal_reaches_the_competition_named_and_a_ban_every_one(duel) -> None:
    http, csrf = organiser(duel)
    where = duel.directory / "competitions" / "duel"
    done = http.post(
        "/organiser/bots/random/withdraw",
        data={"csrf": csrf, "competition": "duel", "reason": "<img src=x> copied"},
    )
    assert done.status_code == 200 and "random: withdraw done in duel." in done.text
    assert active(where)["random"] == 0 and active(where)["lowest"] == 1
    row = section(done.text, "duel").split('data-bot="random"')[1].split("</tr>")[0]
    assert 'class="state">withdrawn' in row and "&lt;img src=x&gt; copied" in row
    assert "<img src=x>" not in done.text
    banned = http.post(
        "/organiser/bots/lowest/ban", data={"csrf": csrf, "competition": "duel", "reason": "x"}
    )
    assert banned.status_code == 200 and active(where)["lowest"] == 0
    assert 'class="state">banned' in section(banned.text, "-").split('data-bot="lowest"')[1]
    lifted = http.post("/organiser/bots/lowest/unban", data={"csrf": csrf, "competition": ""})
    assert lifted.status_code == 200 and "lowest: unban done." in lifted.text


@pytestmark_browser
def test_browser_the_organiser_withdraws_a_bot_from_a_competition(duel, browser) -> None:  # noqa: F811
    token = (duel.directory / "secret" / "web-organiser-token").read_text().strip()
    context = browser.new_context()
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(duel.url + "/signin")
        page.fill("#token", token)
        page.click("#signin")
        page.goto(duel.url + "/organiser")
        listed = page.locator("#competitions li").all_inner_texts()
        assert [t.split(":")[0] for t in listed] == ["The default competition", "duel"]
        row = page.locator("section[data-competition='duel'] tr[data-bot='random']")
        row.locator("button.ban").click()
        page.wait_for_selector("#note")
        assert page.inner_text("#note") == "random: ban done."
        assert row.locator("td.state").inner_text() == "banned"
        row.locator("button.unban").click()
        page.wait_for_selector("text=random: unban done.")
        assert row.locator("td.state").inner_text() == "withdrawn"
        assert not errors, errors
    finally:
        context.close()


def test_a_competition_found_and_not_served_is_listed_with_why(tmp_path: Path) -> None:
    """A damaged store in ``competitions/broken``: the page lists it as the health check does,
    and an action that needs every competition's store is a one-line refusal, not a traceback."""
    t = tmp_path / "T"
    duel_arena(t, "lowest")
    broken = t / "competitions" / "broken"
    broken.mkdir()
    (broken / "tournament.sqlite").write_bytes(b"not a database " * 64)
    server = WebServer(t)
    try:
        http, csrf = organiser(server)
        page = http.get("/organiser").text
        waiting = section(page, "broken")
        assert re.search(r'class="problem">not served: [^<]*damaged', waiting), waiting
        assert "holdings" not in waiting and 'data-bot="lowest"' in section(page, "duel")
        refused = http.post(
            "/organiser/bots/lowest/ban", data={"csrf": csrf, "competition": "duel"}
        )
        assert refused.status_code == 503
        note = re.search(r'<p class="note" id="note">([^\n<]*)</p>', refused.text)
        assert note and "cannot be read" in note[1], refused.text
    finally:
        assert server.stop() == 0, server.log
    assert "Traceback" not in server.log, server.log
