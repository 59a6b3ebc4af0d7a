"""The author's loop on the web, end to end in Debian's headless Chromium (playwright; never
`playwright install`): two authors sign in; a Python, a Node and (where Go builds) a Go bot go
from a folder to played games through the page alone, packed by the recipe the page itself shows;
a bot's stderr shows on its faults page and beside its replay's turn for its author, never on the
other author's pages; a challenge is asked for in the page, played and shown, unrated.

The arena plays in the local sandbox (each bot a process of its own, its output read turn by turn
as in Docker): what is tested here is the pages, not the sandbox (tests/test_any_language.py plays
the Node and Go bots in Docker).
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest
import support
from test_web import CHROMIUM_ARGS, XSS, WebArena, cli, wait_until

httpx = pytest.importorskip("httpx")

pytestmark = pytest.mark.browser

ALICE_BOT = """
import os, sys
from take5 import Bot, run

FLAG = {flag!r}


class Loud(Bot):
    name = "loud"

    def pick_card(self, view):
        said = f"loud thinks at {{view.round}}.{{view.turn}} " + {xss!r}
        print(said, file=sys.stderr, flush=True)
        if os.path.exists(FLAG) and view.round == 1 and view.turn == 1:
            raise RuntimeError("loud gives up")
        return min(view.hand)


if __name__ == "__main__":
    run(Loud())
"""


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        support.unavailable("the Python package playwright is not installed")
    import os
    import shutil

    executable = os.environ.get("TAKE5_CHROMIUM") or shutil.which("chromium")
    if executable is None:
        support.unavailable("no chromium executable (Debian package `chromium`)")
    with sync_playwright() as p:
        try:
            b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        except Error as error:
            support.unavailable(f"chromium does not start: {str(error).splitlines()[0]}")
        yield b
        b.close()


@pytest.fixture(scope="module")
def arena(tmp_path_factory):
    directory = tmp_path_factory.mktemp("loop") / "T"
    tokens = {}
    for name in ("alice", "bob"):
        done = cli(
            "authors", "add", name, "-t", str(directory), "--per-hour", "100",
            "--max-archive-mb", "30",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        tokens[name] = done.stdout.strip()
    server = WebArena(
        directory, "--players", "2", "-j", "1", "--publish-every-seconds", "1", "--bootstrap", "0"
    )
    try:
        yield server, tokens
    finally:
        assert server.stop() == 0, server.log


def signed_in(browser, server, token, problems):
    context = browser.new_context(bypass_csp=True)
    page = context.new_page()
    page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.goto(server.url + "/signin")
    page.fill("#token", token)
    page.click("#signin")
    page.wait_for_url("**/me")
    return page


def upload_by_the_recipe(page, server, folder: Path, name: str, out: Path) -> None:
    """Pack ``folder`` exactly as the page's own recipe says, upload it through the form, and wait
    for the verdict (accepted)."""
    page.goto(server.url + "/me")
    recipe = page.inner_text("#recipe code")
    assert "FOLDER" in recipe and "bot.tar.gz" in recipe, recipe
    argv = recipe.replace("bot.tar.gz", str(out)).replace("FOLDER", str(folder)).split()
    subprocess.run(argv, check=True)
    page.fill("#bot_name", name)
    page.set_input_files("#archive", str(out))
    page.click("#upload")
    page.wait_for_url("**/me/submissions/*")
    page.wait_for_function(
        "['accepted', 'refused'].includes(document.getElementById('status').textContent)",
        timeout=300_000,
    )
    page.wait_for_selector("#detail")
    assert page.inner_text("#status") == "accepted", page.inner_text("#detail")


def test_two_authors_from_folder_to_games_output_and_a_challenge(
    arena, browser, tmp_path, node_example, request
):
    server, tokens = arena
    problems: list[str] = []
    alice = signed_in(browser, server, tokens["alice"], problems)
    bob = signed_in(browser, server, tokens["bob"], problems)

    flag = tmp_path / "loud-faults"
    loud = tmp_path / "loud"
    loud.mkdir()
    (loud / "bot.py").write_text(ALICE_BOT.format(flag=str(flag), xss=XSS))
    upload_by_the_recipe(alice, server, loud, "loud", tmp_path / "loud.tar.gz")
    upload_by_the_recipe(bob, server, node_example, "bnode", tmp_path / "node.tar.gz")
    try:
        go = request.getfixturevalue("go_example")
    except pytest.skip.Exception:
        go = None
    if go is not None:
        upload_by_the_recipe(bob, server, go, "bgo", tmp_path / "go.tar.gz")
    flag.touch()  # validated: from now on loud faults once a game

    # played games of every bot, listed publicly
    bots = ["loud", "bnode"] + (["bgo"] if go is not None else [])
    for bot in bots:
        wait_until(
            lambda bot=bot: "/replay.html?game=" in httpx.get(f"{server.url}/games?bot={bot}").text,
            timeout=300,
            what=f"a published game of {bot}",
        )

    # loud's stderr: on alice's faults page, as text
    alice.goto(server.url + "/me/bots/loud/faults")
    deadline = time.monotonic() + 240
    while alice.locator("pre.log-tail").count() == 0:
        assert time.monotonic() < deadline, "no fault of loud with its output"
        time.sleep(1)
        alice.reload()
    assert "loud thinks at 1.1 " + XSS in alice.inner_text("pre.log-tail")
    bob.goto(server.url + "/me/bots/loud/faults")
    assert "loud thinks" not in bob.content()

    # ... and beside its turn in alice's replay of a game of loud's, never in bob's of the same
    games = httpx.get(f"{server.url}/games?bot=loud").text
    gid = re.search(r"/replay\.html\?game=([^\"&]+)", games).group(1)
    alice.goto(f"{server.url}/replay.html?game={gid}#r1t1")
    alice.wait_for_selector("body[data-ready='1']")
    alice.wait_for_selector("#logs")
    assert "loud thinks at 1.1 " + XSS in alice.inner_text("#logs")
    bob.goto(f"{server.url}/replay.html?game={gid}#r1t1")
    bob.wait_for_selector("body[data-ready='1']")
    assert "loud thinks" not in bob.content()

    if go is not None:  # the Go bot's own line beside its turn, for bob
        games = httpx.get(f"{server.url}/games?bot=bgo").text
        gid = re.search(r"/replay\.html\?game=([^\"&]+)", games).group(1)
        bob.goto(f"{server.url}/replay.html?game={gid}#r1t3")
        bob.wait_for_selector("body[data-ready='1']")
        bob.wait_for_selector("#logs")
        assert re.search(r"round 1 turn [23]: playing \d+", bob.inner_text("#logs"))

    # a challenge, asked for in alice's page, played and shown, unrated, hers alone
    alice.goto(server.url + "/me")
    alice.select_option("#challenge-bot", "loud")
    alice.select_option("select.challenge-opponent", "bnode")
    alice.click("#challenge")
    alice.wait_for_url("**/me/challenges/*")
    where = alice.url
    deadline = time.monotonic() + 240
    while alice.inner_text("#state") != "played":
        assert time.monotonic() < deadline, "the challenge was not played"
        time.sleep(1)
        alice.reload()
    assert "Unrated" in alice.inner_text("#unrated")
    alice.locator("#challenge-games a.replay").first.click()
    alice.wait_for_selector("body[data-ready='1']")
    assert alice.locator("#unrated").count() == 1
    bob.goto(where)
    assert "no such challenge" in bob.content()

    for page in (alice, bob):
        assert page.evaluate("window.__xss === undefined"), "a bot's text ran as script"
        assert page.locator("img[src=x]").count() == 0
    assert not problems, problems
