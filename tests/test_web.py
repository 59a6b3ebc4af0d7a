"""The arena on the web (`referee serve --web`, take5_arena/web/), as real server processes on
loopback, over plain HTTP (httpx) and in a real headless Chromium (Debian's chromium driven by
playwright; never `playwright install`).

One arena serves the whole module (authors alice, bob and carol; bob's `lowest` and carol's hostile
bot are uploaded through the web pages at the start, alice's `random` by the browser test). Carol's
bot is generated here: a handshake name, version and author that are HTML, the same HTML on its
stderr every turn, and, once the test has switched it on (a flag file, so that it passes validation
first), a fault each game whose detail is that HTML, and a short sleep each turn, so that a game
lasts long enough to be watched live.

Browser tests skip (fail under CI) only where chromium or playwright is absent.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
import support
from arena_support import Server, self_signed
from support import EXAMPLES, referee_env

httpx = pytest.importorskip("httpx")

XSS = '<img src=x onerror="window.__xss=1;alert(1)"><script>window.__xss=2</script>'
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

HOSTILE_BOT = """
import os, sys, time
from take5 import Bot, run

XSS = {xss!r}
FLAG = {flag!r}


class Hostile(Bot):
    name = XSS
    version = "1.0" + XSS
    author = XSS

    def pick_card(self, view):
        print("stderr says " + XSS, file=sys.stderr, flush=True)
        if os.path.exists(FLAG):
            time.sleep(0.12)
            if view.round == 1 and view.turn == 1:
                raise RuntimeError("fault says " + XSS)
        return min(view.hand)


if __name__ == "__main__":
    run(Hostile())
"""


def tgz(files: dict[str, bytes]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def folder_tgz(folder: Path) -> bytes:
    return tgz({p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()})


def recipe_tgz(folder: Path, out: Path) -> Path:
    """The archive the page tells an author to make (take5_arena/referee/archive.py's RECIPE),
    made by the real tar."""
    from take5_arena.referee.archive import RECIPE

    argv = RECIPE.replace("bot.tar.gz", str(out)).replace("FOLDER", str(folder)).split()
    subprocess.run(argv, check=True)
    return out


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "take5_arena", *args],
        capture_output=True,
        text=True,
        env=referee_env(),
        timeout=120,
    )


class WebArena(Server):
    """`referee serve --web 127.0.0.1:0` as a child process (local sandbox); its log collected as
    it comes. Stopped by SIGTERM, then SIGKILL of its whole process group."""

    def __init__(self, directory: Path, *args: str) -> None:
        super().__init__(directory, "--web", "127.0.0.1:0", "--sandbox", "local", *args)
        found = self.wait_for(r"web pages on (https?)://127\.0\.0\.1:(\d+)/")
        self.url = f"{found.group(1)}://127.0.0.1:{found.group(2)}"

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)


class Author:
    """An author's browser-less session: signed in with httpx, with the page's CSRF token."""

    def __init__(self, arena: WebArena, token: str) -> None:
        self.arena = arena
        self.http = httpx.Client(
            base_url=arena.url, headers={"origin": arena.url}, follow_redirects=False, timeout=60
        )
        done = self.http.post("/signin", data={"token": token})
        assert done.status_code == 303, done.text
        self.csrf = self.token()

    def token(self) -> str:
        page = self.http.get("/me")
        assert page.status_code == 200, page.text
        return re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)

    def upload(self, bot_name: str, archive: bytes) -> httpx.Response:
        return self.http.post(
            "/me/upload",
            data={"csrf": self.csrf, "bot_name": bot_name},
            files={"archive": ("bot.tar.gz", archive, "application/gzip")},
        )

    def verdict(self, response: httpx.Response, timeout: float = 240) -> dict:
        assert response.status_code == 303, response.text
        sid = response.headers["location"].rsplit("/", 1)[1]
        deadline = time.monotonic() + timeout
        while True:
            state = self.http.get(f"/me/submissions/{sid}.json").json()
            if state["finished"] or time.monotonic() > deadline:
                return state
            time.sleep(0.5)


def wait_until(condition, timeout: float = 180, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.3)


@pytest.fixture(scope="module")
def arena(tmp_path_factory):
    root = tmp_path_factory.mktemp("web")
    directory = root / "T"
    tokens = {}
    for name in ("alice", "bob", "carol"):
        done = cli("authors", "add", name, "-t", str(directory), "--per-hour", "100")
        assert done.returncode == 0, done.stderr
        tokens[name] = done.stdout.strip()
    server = WebArena(
        directory,
        "--players",
        "2",
        "-j",
        "1",
        "--publish-every-games",
        "2",
        "--publish-every-seconds",
        "1",
        "--bootstrap",
        "0",
    )
    flag = root / "hostile-on"
    try:
        bob = Author(server, tokens["bob"])
        carol = Author(server, tokens["carol"])
        hostile = tgz({"bot.py": HOSTILE_BOT.format(xss=XSS, flag=str(flag)).encode()})
        got = [
            bob.verdict(bob.upload("lowest", folder_tgz(EXAMPLES / "lowest"))),
            carol.verdict(carol.upload("hostile", hostile)),
        ]
        assert [g["status"] for g in got] == ["accepted", "accepted"], got
        flag.touch()
        yield server, tokens, {"bob": bob, "carol": carol}
    finally:
        assert server.stop() == 0, server.log


# ------------------------------------------------------------------------------------------------
# The ladder's hook


def test_turn_watchers_see_every_turn_and_a_failing_one_stops_nothing():
    """The table's turn watchers (what the live pages hang on) get each game's id and record after
    every turn; a watcher that raises is logged and the games are played and recorded all the
    same."""
    from take5.bots import LowestBot, RandomBot
    from take5_arena.referee.match import in_memory
    from take5_arena.referee.tournament.plan.settings import TournamentSettings
    from take5_arena.referee.tournament.run.spec import SeatSpec, TableSpec
    from take5_arena.referee.tournament.run.table import play_table, watch_turns

    settings = TournamentSettings.from_json({"players": 2})
    seats = (SeatSpec("a@1", "a", 1, 1, "x"), SeatSpec("b@1", "b", 1, 2, "x"))
    spec = TableSpec(1, 7, seats, (("g-a", 0), ("g-b", 1)), settings)
    seen = []

    def hostile(spec, game_id, record):
        raise RuntimeError("a watcher's bug")

    stops = [watch_turns(hostile), watch_turns(lambda sp, g, r: seen.append((g, r["complete"])))]
    outcomes = []
    try:
        refs, launcher = in_memory([LowestBot(), RandomBot(1)])
        play_table(spec, refs, launcher, outcomes.append)
    finally:
        for stop in stops:
            stop()
    assert [o.ok for o in outcomes] == [True, True]
    assert {g for g, _ in seen} == {"g-a", "g-b"} and len(seen) > 20
    assert [g for g, done in seen if done][-1] == "g-b"
    refs, launcher = in_memory([LowestBot(), RandomBot(1)])
    before = len(seen)
    play_table(spec, refs, launcher, outcomes.append)  # stopped: told nothing
    assert len(seen) == before


def test_the_hub_keeps_the_newest_state_of_a_game_and_forgets_a_game_nobody_plays():
    """A game reaches the pages' hub from this process's tables and, on a shared store, from the
    store, behind: an older state never replaces a newer one, nothing follows a finished game, and
    a game nobody has updated for a while (its referee died) leaves the list of games."""
    import asyncio

    from take5_arena.referee.store.live import KEEP_SECONDS, LiveGame
    from take5_arena.web.live import LIVE, LiveHub

    now = [0.0]
    loop = asyncio.new_event_loop()
    hub = LiveHub(loop, clock=lambda: now[0])

    def post(*games: LiveGame) -> None:
        for game in games:
            hub.post(game)
        loop.run_until_complete(asyncio.sleep(0))

    def state(gid: str, rnd: int, turn: int, done: bool = False) -> LiveGame:
        return LiveGame(gid, ["a", "b"], rnd, turn, done, f"{gid} {rnd}.{turn} {done}")

    try:
        post(state("g", 2, 3), state("g", 1, 9), state("g", 2, 2))
        assert hub.current("game:g") == "g 2.3 False"
        post(state("g", 10, 10, True), state("g", 10, 10))
        assert hub.current("game:g") == "g 10.10 True"
        post(state("dead", 1, 1))
        now[0] = KEEP_SECONDS + 1
        post(state("other", 1, 1))
        assert [g["id"] for g in hub.live_games()] == ["other"]
        assert '"other"' in (hub.current(LIVE) or "")
    finally:
        loop.close()


# ------------------------------------------------------------------------------------------------
# Over plain HTTP


def test_every_page_has_a_strict_csp_and_the_token_never_shows(arena):
    server, tokens, authors = arena
    for path in ("/", "/games", "/live", "/signin", "/bot.html?bot=lowest"):
        r = httpx.get(server.url + path)
        assert r.status_code == 200, (path, r.text)
        csp = r.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert "frame-ancestors 'none'" in csp
        assert r.headers["x-content-type-options"] == "nosniff"
        assert "<script>" not in r.text  # no inline script: only <script src=...>
    index = httpx.get(server.url + "/").text  # this arena runs with --bootstrap 0: it says so
    assert '<p class="note" id="interval-note">No intervals' in index
    me = authors["bob"].http.get("/me")
    assert tokens["bob"] not in me.text and "no-store" in me.headers["cache-control"]
    cookie = authors["bob"].http.cookies.jar
    assert all(c.has_nonstandard_attr("HttpOnly") for c in cookie)
    assert tokens["bob"] not in server.log


def test_sign_in_refuses_bad_tokens_and_limits_attempts(arena):
    server, tokens, _ = arena
    # From an address of its own (all of 127/8 is this machine): the limit is per address, and the
    # other tests' sign-ins from 127.0.0.1 must not wait for this one's bucket to refill.
    http = httpx.Client(
        base_url=server.url,
        headers={"origin": server.url},
        timeout=30,
        transport=httpx.HTTPTransport(local_address="127.0.0.77"),
    )
    codes = [
        http.post("/signin", data={"token": f"t5a_{i:012x}_nope"}).status_code for i in range(12)
    ]
    assert codes[0] == 403 and 429 in codes, codes
    # the owner's correct token, from the very address whose wrong tries ran out, is let in
    assert http.post("/signin", data={"token": tokens["bob"]}).status_code == 303
    # a sign-in from another origin is refused before the token is looked at
    other = httpx.post(
        server.url + "/signin", data={"token": "x"}, headers={"origin": "http://evil.example"}
    )
    assert other.status_code == 403


def test_a_post_from_another_origin_or_without_the_csrf_token_is_refused(arena):
    server, _tokens, authors = arena
    bob = authors["bob"]
    foreign = bob.http.post(
        "/me/bots/lowest/withdraw",
        data={"csrf": bob.csrf},
        headers={"origin": "http://evil.example"},
    )
    assert foreign.status_code == 403
    no_token = bob.http.post("/me/bots/lowest/withdraw", data={"csrf": "forged"})
    assert no_token.status_code == 403
    no_origin = httpx.post(
        server.url + "/me/bots/lowest/withdraw", data={"csrf": bob.csrf}, cookies=bob.http.cookies
    )
    assert no_origin.status_code == 403
    assert 'class="withdraw"' in bob.http.get("/me").text  # still active


def test_an_upload_is_cut_off_while_it_is_received(arena):
    """A body larger than the author's limit is refused as soon as it passes it: the client sends
    9 MiB of a chunked body that never ends (past the 8 MiB limit) and gets its 413 without sending
    more; a declared Content-Length over the limit is refused before a byte is read."""
    server, _tokens, authors = arena
    carol = authors["carol"]
    port = int(server.url.rsplit(":", 1)[1])
    cookie = "; ".join(f"{c.name}={c.value}" for c in carol.http.cookies.jar)
    head = (
        f"POST /me/upload HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: {server.url}\r\n"
        f"Cookie: {cookie}\r\nContent-Type: multipart/form-data; boundary=B\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    )
    part = (
        f'--B\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n{carol.csrf}\r\n--B\r\n'
        'Content-Disposition: form-data; name="archive"; filename="a.tar.gz"\r\n\r\n'
    ).encode()
    block = b"\0" * 65536
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(head.encode() + b"%x\r\n%s\r\n" % (len(part), part))
        try:
            for _ in range(9 * 16):  # 9 MiB, then nothing more: the body never ends
                sock.sendall(b"%x\r\n%s\r\n" % (len(block), block))
        except OSError:
            pass  # the server answered and closed while we were still sending
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(
            head.replace("Transfer-Encoding: chunked", f"Content-Length: {2**31}").encode()
        )
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert httpx.get(server.url + "/").status_code == 200


def test_the_pages_recipe_uploads_a_python_and_a_node_bot(tmp_path):
    """What /me says to run, `tar czf bot.tar.gz -C FOLDER .` (members `./...`, npm's .bin links),
    uploaded through the page: a Python and a Node bot are accepted; an archive with a link out of
    the folder is refused with the member's name and what to do."""
    directory = tmp_path / "T"
    done = cli("authors", "add", "nora", "-t", str(directory), "--per-hour", "100")
    assert done.returncode == 0, done.stderr
    node = support.node_example(tmp_path / "node")
    python = tmp_path / "py"
    shutil.copytree(EXAMPLES / "heuristic", python)
    server = WebArena(directory, "--no-ladder", "--players", "2")
    try:
        nora = Author(server, done.stdout.strip())
        page = nora.http.get("/me").text
        assert "tar czf bot.tar.gz -C FOLDER ." in page and "referee submit FOLDER --server" in page
        assert re.search(r"at most \d+ MB", page), "the limit is shown in MB"
        for name, folder in (("pyrecipe", python), ("noderecipe", node)):
            archive = recipe_tgz(folder, tmp_path / f"{name}.tar.gz").read_bytes()
            verdict = nora.verdict(nora.upload(name, archive))
            assert verdict["status"] == "accepted", verdict
        mine = nora.http.get("/me").text
        assert "in the local sandbox, at a table of 2 (standard, to 66" in mine
        assert "{&#34;smoke" not in mine and '{"smoke' not in mine  # no JSON blob
        (python / "leak").symlink_to("/etc/passwd")
        archive = recipe_tgz(python, tmp_path / "leak.tar.gz").read_bytes()
        verdict = nora.verdict(nora.upload("leaky", archive))
        assert verdict["status"] == "refused", verdict
        assert "leak'" in verdict["detail"] and "copy the file into the folder" in verdict["detail"]
    finally:
        assert server.stop() == 0, server.log


def test_an_xss_bot_name_is_refused_and_the_error_is_escaped(arena):
    _server, _tokens, authors = arena
    r = authors["carol"].upload(XSS, b"\x1f\x8b not really")
    assert r.status_code == 400
    assert "<img src=x" not in r.text and "&lt;img" in r.text


def test_the_public_record_leaves_out_the_bots_output(arena):
    server, _tokens, _ = arena
    wait_until(
        lambda: "/replay.html?game=" in httpx.get(server.url + "/games").text,
        what="a published game",
    )
    gid = re.search(r"/replay\.html\?game=([^\"&]+)", httpx.get(server.url + "/games").text)[1]
    record = httpx.get(f"{server.url}/api/games/{gid}").json()["record"]
    assert all("logs" not in t for rnd in record["rounds"] for t in rnd["turns"])
    assert httpx.get(f"{server.url}/api/games/nope").status_code == 404


def test_faults_are_the_owners_alone(arena):
    server, _tokens, authors = arena
    carol, bob = authors["carol"], authors["bob"]
    wait_until(
        lambda: "stderr says" in carol.http.get("/me/bots/hostile/faults").text,
        what="a fault of the hostile bot in a ladder game",
    )
    page = carol.http.get("/me/bots/hostile/faults").text
    assert "fault says" in page and "<img src=x" not in page and "&lt;img src=x" in page
    assert bob.http.get("/me/bots/hostile/faults").status_code == 404
    anonymous = httpx.get(server.url + "/me/bots/hostile/faults")
    assert anonymous.status_code == 303 and anonymous.headers["location"].startswith("/signin")


def _published_game_of(server, bot: str) -> str:
    """The id of a published game in which ``bot`` played."""
    found: list[str] = []

    def look() -> bool:
        for gid in re.findall(
            r"/replay\.html\?game=([^\"&]+)", httpx.get(server.url + "/games").text
        ):
            record = httpx.get(f"{server.url}/api/games/{gid}").json()["record"]
            if any(str(s.get("name", "")).startswith(bot) for s in record["seats"]):
                found.append(gid)
                return True
        return False

    wait_until(look, what=f"a published game of {bot}")
    return found[0]


def test_an_authors_replay_output_is_their_own_alone(arena):
    """/me/games/ID/output.json: carol gets her bot's stderr turn by turn (its seats only, as data
    the page puts in text nodes); bob, at the same table, gets none of it; nobody signed out or
    the organiser gets anything."""
    server, _tokens, authors = arena
    carol, bob = authors["carol"], authors["bob"]
    gid = _published_game_of(server, "hostile")
    seats = [
        str(s.get("name", "")).startswith("hostile")
        for s in httpx.get(f"{server.url}/api/games/{gid}").json()["record"]["seats"]
    ]
    mine = carol.http.get(f"/me/games/{gid}/output.json")
    assert mine.status_code == 200 and "no-store" in mine.headers["cache-control"]
    rows = mine.json()["logs"]
    assert rows and all(seats[seat] for _round, _turn, seat, _text in rows)
    assert any("stderr says " + XSS in text for *_, text in rows)  # data, escaped by the page
    theirs = bob.http.get(f"/me/games/{gid}/output.json")
    assert theirs.status_code == 200
    assert all(not seats[seat] for _r, _t, seat, _x in theirs.json()["logs"])
    assert "stderr says" not in theirs.text
    assert httpx.get(f"{server.url}/me/games/{gid}/output.json").status_code == 403
    assert carol.http.get("/me/games/nope/output.json").status_code == 404
    # the analysis of her seats (take5.analysis), hers alone too
    analysis = carol.http.get(f"/me/games/{gid}/analysis.json", timeout=120)
    assert analysis.status_code == 200, analysis.text
    found = analysis.json()
    assert found["seats"] and all(seats[s] for s in found["seats"])
    assert found["decisions"] and all(seats[d[0]] for d in found["decisions"])
    assert set(found["costliest"]) == {str(s) for s in found["seats"]}
    theirs = bob.http.get(f"/me/games/{gid}/analysis.json", timeout=120).json()
    assert all(not seats[s] for s in theirs["seats"])
    assert all(not seats[d[0]] for d in theirs["decisions"])
    assert httpx.get(f"{server.url}/me/games/{gid}/analysis.json").status_code == 403


def test_a_bots_page_lists_its_games_and_draws_its_rating(arena):
    """/bot.html: the bot's published games, newest first, each with its date, version, place,
    penalty, faults and opponents; and its rating over the ladder's games as an inline SVG (no
    script, numbers only)."""
    server, _tokens, _ = arena
    gid = _published_game_of(server, "hostile")
    # its validation games are rated too, and were played before it turned hostile: wait for a
    # published ladder game of its faults as well as for its rating's second publication
    wait_until(
        lambda: all(
            mark in httpx.get(server.url + "/bot.html?bot=hostile").text
            for mark in ('id="rating-chart"', 'class="num faulted"')
        ),
        what="two publications of the hostile bot's rating and a faulted game",
    )
    page = httpx.get(server.url + "/bot.html?bot=hostile").text
    assert f'data-game="{gid}"' in page or 'id="bot-games"' in page
    rows = re.findall(r'<tr data-game="([^"]+)"><td>(\d{4}-\d\d-\d\d[^<]*)</td>', page)
    assert rows, page[-3000:]
    assert re.search(r'class="num">[12] of 2</td>', page)
    assert re.search(r'class="num faulted">[1-9]', page)  # the hostile bot faults every game
    assert 'href="/bot.html?bot=' in page.split('id="bot-games"')[1]
    chart = page.split('id="rating-chart"')[1].split("</figure>")[0]
    assert '<polyline class="rating-line" data-entrant="hostile' in chart
    assert "<script" not in chart and "<img" not in chart
    lowest = httpx.get(server.url + "/bot.html?bot=lowest").text
    assert "hostile" in lowest.split('id="bot-games"')[1]  # its opponent

    # filters: against a bot, by place, faulted only, since a date; bad values are a 400
    def games_of(**query: str) -> list[str]:
        text = httpx.get(server.url + "/bot.html", params={"bot": "lowest", **query}).text
        return text.split('id="bot-games"')[1].split("<tr data-game=")[1:]

    every = games_of()
    assert every and len(games_of(opponent="hostile")) <= len(every)
    assert all("bot=hostile" in row for row in games_of(opponent="hostile"))
    assert games_of(opponent="nobody-at-all") == []
    firsts = games_of(place="1")
    assert all('class="num">1 of ' in row for row in firsts)
    assert games_of(faults="1") == []  # lowest never faults
    assert len(games_of(since="2000-01-01")) == len(every) and games_of(since="2999-01-01") == []
    for bad in ({"place": "0"}, {"place": "x"}, {"since": "yesterday"}, {"version": "-1"}):
        answer = httpx.get(server.url + "/bot.html", params={"bot": "lowest", **bad})
        assert answer.status_code == 400 and "Traceback" not in answer.text
    echoed = httpx.get(server.url + "/bot.html", params={"bot": "lowest", "opponent": XSS}).text
    assert "<img src=x" not in echoed and "&lt;img" in echoed
    # /games: dates, fault marks, and a filter by bot (its name escaped where it is echoed)
    listed = httpx.get(server.url + "/games", params={"bot": "hostile"}).text
    assert re.search(r'<tr data-game="[^"]+"><td>\d{4}-\d\d-\d\d', listed)
    assert '<span class="seat faulted"><a href="/bot.html?bot=hostile">' in listed
    rows = listed.split('id="games"')[1].split("<tr data-game=")[1:]
    assert rows and all("bot=hostile" in row for row in rows)
    hostile = httpx.get(server.url + "/games", params={"bot": XSS}).text
    assert "<img src=x" not in hostile and "&lt;img" in hostile and "No games yet." in hostile


def test_the_organiser_adds_and_revokes_an_author(arena):
    server, _tokens, _ = arena
    token = (server.directory / "secret" / "web-organiser-token").read_text().strip()
    assert oct((server.directory / "secret" / "web-organiser-token").stat().st_mode)[-3:] == "600"
    http = httpx.Client(base_url=server.url, headers={"origin": server.url}, timeout=60)
    assert http.post("/signin", data={"token": token}).status_code == 303
    page = http.get("/organiser").text
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)[1]
    assert "games recorded" in page and "hostile" in page
    assert "games in the published standings" in page
    added = http.post("/organiser/authors", data={"csrf": csrf, "name": "dave"})
    new_token = re.search(r'<pre id="new-token">([^<]+)</pre>', added.text)[1]
    dave = Author(server, new_token)
    assert (
        http.post(
            "/organiser/authors/dave/revoke", data={"csrf": csrf, "reason": "test"}
        ).status_code
        == 200
    )
    assert dave.http.get("/me").status_code == 303  # the revoked author's session is over
    assert httpx.get(server.url + "/organiser").status_code == 303


def test_an_expired_session_is_signed_out(tmp_path):
    directory = tmp_path / "T"
    done = cli("authors", "add", "erin", "-t", str(directory))
    server = WebArena(directory, "--no-ladder", "--web-session-seconds", "2")
    try:
        erin = Author(server, done.stdout.strip())
        stale = {"cookie": f"take5={erin.http.cookies['take5']}", "origin": server.url}
        time.sleep(2.5)
        r = httpx.get(server.url + "/me", headers=stale)
        assert r.status_code == 303 and r.headers["location"] == "/signin?session=ended"
        post = httpx.post(
            server.url + "/me/bots/x/withdraw", data={"csrf": erin.csrf}, headers=stale
        )
        assert post.status_code == 303
        assert erin.http.get("/me").status_code == 303  # the client dropped it too (Max-Age)
    finally:
        assert server.stop() == 0, server.log


def test_tls_with_the_arenas_certificate(tmp_path):
    """--cert/--key: the pages speak TLS only, and the session cookie is Secure and __Host-."""
    cert, key = self_signed(tmp_path)
    directory = tmp_path / "T"
    done = cli("authors", "add", "tess", "-t", str(directory))
    server = WebArena(directory, "--no-ladder", "--cert", str(cert), "--key", str(key))
    try:
        assert server.url.startswith("https://")
        trust = ssl.create_default_context(cafile=str(cert))
        http = httpx.Client(verify=trust, headers={"origin": server.url}, timeout=30)
        signed = http.post(server.url + "/signin", data={"token": done.stdout.strip()})
        assert signed.status_code == 303
        cookie = signed.headers["set-cookie"]
        assert cookie.startswith("__Host-take5=") and "Secure" in cookie and "HttpOnly" in cookie
        http.cookies = signed.cookies
        assert http.get(server.url + "/me").status_code == 200
        with pytest.raises(httpx.HTTPError):
            httpx.get(server.url.replace("https:", "http:") + "/", timeout=10)
    finally:
        assert server.stop() == 0, server.log


def test_without_tls_the_pages_stay_on_loopback(tmp_path):
    done = cli("serve", "-t", str(tmp_path / "T"), "--web", "0.0.0.0:0", "--no-ladder")
    assert done.returncode == 2 and "loopback only" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


# ------------------------------------------------------------------------------------------------
# In the browser


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        support.unavailable(
            "the Python package playwright is not installed; run scripts/setup-browser.sh"
        )
    executable = (
        os.environ.get("TAKE5_CHROMIUM")
        or shutil.which("chromium")
        or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    )
    if executable is None:
        support.unavailable(
            "no chromium executable (Debian package `chromium`); run scripts/setup-browser.sh"
        )
    with sync_playwright() as p:
        try:
            b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        except Error as error:
            support.unavailable(f"chromium does not start: {str(error).splitlines()[0]}")
        yield b
        b.close()


@pytest.fixture
def visit(browser, arena):
    """A new browser context per call (a person of their own); every page fails the test if a
    script ran from a bot's text (a dialog, window.__xss) or the page broke. The contexts bypass
    the Content-Security-Policy (checked over HTTP above): so the escaping is tested on its own,
    and a lapse in it cannot hide behind the policy (and playwright may evaluate its waits)."""
    contexts = []
    problems: list[str] = []

    def new(token: str | None = None):
        context = browser.new_context(bypass_csp=True)
        contexts.append(context)
        page = context.new_page()
        page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        if token is not None:
            page.goto(arena[0].url + "/signin")
            page.fill("#token", token)
            page.click("#signin")
            page.wait_for_url("**/me")
        return page

    yield new
    for page in [p for c in contexts for p in c.pages]:
        assert page.evaluate("window.__xss === undefined"), "a bot's text ran as script"
    for c in contexts:
        c.close()
    assert not problems, problems


pytestmark_browser = pytest.mark.browser


@pytestmark_browser
def test_browser_sign_in_upload_and_see_the_verdict(arena, visit, tmp_path):
    server, tokens, _ = arena
    page = visit(tokens["alice"])
    assert "tar czf bot.tar.gz -C FOLDER ." in page.inner_text("#recipe")
    archive = recipe_tgz(EXAMPLES / "random", tmp_path / "random.tar.gz")
    page.fill("#bot_name", "random")
    page.set_input_files("#archive", str(archive))
    page.click("#upload")
    page.wait_for_url("**/me/submissions/*")
    page.wait_for_function(
        "document.getElementById('status').textContent === 'accepted'", timeout=240_000
    )
    assert "smoke games" in page.inner_text("#detail")
    page.goto(server.url + "/me")
    assert page.locator("section.bot[data-bot='random']").count() == 1


@pytestmark_browser
def test_browser_watch_a_live_game_advance(arena, visit):
    """A game in progress, opened from /live, advances on the page turn by turn (a game that ends
    before two more turns arrive is given up for the next one, at most three times)."""
    server, _tokens, _ = arena
    page = visit()
    for _attempt in range(3):
        page.goto(server.url + "/live")
        page.wait_for_selector("#live-games li[data-game] >> text=hostile", timeout=180_000)
        link = None
        for _ in range(120):
            items = page.locator("#live-games li[data-game]")
            for i in range(items.count()):
                text = items.nth(i).inner_text()
                if "hostile" in text and "(finished)" not in text:
                    link = items.nth(i).locator("a").get_attribute("href")
                    break
            if link:
                break
            time.sleep(0.5)
        assert link, "no hostile game in progress"
        page.goto(server.url + link)
        page.wait_for_function("Number(document.body.dataset.turns || 0) >= 1", timeout=60_000)
        first = page.inner_text("#step-label")
        seen = int(page.get_attribute("body", "data-turns") or 0)
        page.wait_for_function(
            f"Number(document.body.dataset.turns) >= {seen + 2} || document.body.dataset.done",
            timeout=90_000,
        )
        subtitle = page.inner_text(".subtitle")
        if not page.get_attribute("body", "data-done"):  # (read before: the game may end now)
            assert "INCOMPLETE" not in subtitle and "in progress" in subtitle, subtitle
        if int(page.get_attribute("body", "data-turns") or 0) >= seen + 2:
            break
    else:
        raise AssertionError("three games ended before the page showed them advance")
    assert page.inner_text("#step-label") != first
    assert "hostile" in page.inner_text("#scores")
    assert page.locator("img[src=x]").count() == 0
    assert page.locator("#logs").count() == 0  # the public never sees a bot's output


@pytestmark_browser
def test_browser_own_logs_are_private(arena, visit):
    server, tokens, _ = arena
    carol = visit(tokens["carol"])
    carol.goto(server.url + "/me/bots/hostile/faults")
    deadline = time.monotonic() + 180
    while carol.locator("pre.log-tail").count() == 0:  # a server-rendered page: look again
        assert time.monotonic() < deadline, "no fault of the hostile bot with its output"
        time.sleep(1)
        carol.reload()
    assert XSS in carol.inner_text("pre.log-tail")  # the HTML shows as text
    assert XSS in carol.locator("p.detail").first.inner_text()
    assert carol.locator("img[src=x]").count() == 0
    bob = visit(tokens["bob"])
    bob.goto(server.url + "/me/bots/hostile/faults")
    assert "stderr says" not in bob.content() and "no bot named" in bob.inner_text("#error")
    anonymous = visit()
    anonymous.goto(server.url + "/me/bots/hostile/faults")
    assert anonymous.url.endswith("/signin?session=needed")
    assert "stderr says" not in anonymous.content()


@pytestmark_browser
def test_browser_own_output_beside_each_replay_turn(arena, visit):
    """Carol's replay of a game of her bot shows its stderr beside the turn, as text; bob's and an
    anonymous replay of the same game show no logs at all."""
    server, tokens, _ = arena
    gid = _published_game_of(server, "hostile")
    carol = visit(tokens["carol"])
    carol.goto(f"{server.url}/replay.html?game={gid}#r1t1")
    carol.wait_for_selector("body[data-ready='1']")
    assert "stderr says " + XSS in carol.inner_text("#logs")
    assert carol.locator("img[src=x]").count() == 0
    for page in (visit(tokens["bob"]), visit()):
        page.goto(f"{server.url}/replay.html?game={gid}#r1t1")
        page.wait_for_selector("body[data-ready='1']")
        assert page.locator("#logs").count() == 0 and "stderr says" not in page.content()


@pytestmark_browser
def test_browser_replay_and_bot_pages_show_hostile_text_inert(arena, visit):
    server, _tokens, _ = arena
    page = visit()
    page.goto(server.url + "/bot.html?bot=hostile")
    assert page.inner_text("#bot-owner") == "carol"
    assert page.locator("#versions tbody tr").count() >= 1
    page.goto(server.url + "/games")
    page.locator("#games a[href^='/replay.html']").first.click()
    page.wait_for_selector("body[data-ready='1']", timeout=30_000)
    page.click("#last")
    assert page.locator("#banner").is_visible()


@pytestmark_browser
def test_browser_standings_update_without_reload(arena, visit):
    server, _tokens, _ = arena
    page = visit()
    page.goto(server.url + "/")
    page.wait_for_function("Number(document.body.dataset.updates || 0) >= 2", timeout=120_000)
    assert page.locator("#standings-body tr").count() >= 2


@pytestmark_browser
def test_browser_csrf_from_another_origin_changes_nothing(arena, visit, tmp_path):
    """A page on another origin posts a withdraw form to the arena in the signed-in author's
    browser: refused (the cookie is SameSite=Strict and the Origin is foreign), the bot stays."""
    server, tokens, _ = arena
    page = visit(tokens["bob"])
    (tmp_path / "evil.html").write_text(
        f'<form id=f method=post action="{server.url}/me/bots/lowest/withdraw">'
        '<input name=csrf value=guess></form><script>document.getElementById("f").submit()'
        "</script>"
    )
    with socket.socket() as s:
        s.bind(("127.0.0.2", 0))
        port = s.getsockname()[1]
    evil = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "http.server",
            str(port),
            "--bind",
            "127.0.0.2",
            "--directory",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: _answers("127.0.0.2", port), 30, "the other origin's server")
        with page.expect_response(lambda r: "/withdraw" in r.url) as answer:
            page.goto(f"http://127.0.0.2:{port}/evil.html")
        assert answer.value.status == 403
    finally:
        evil.terminate()
        evil.wait(10)
    page.goto(server.url + "/me")
    assert page.locator("section.bot[data-bot='lowest'] button.withdraw").count() == 1


@pytestmark_browser
def test_browser_expired_session(browser, tmp_path):
    directory = tmp_path / "T"
    done = cli("authors", "add", "erin", "-t", str(directory))
    server = WebArena(directory, "--no-ladder", "--web-session-seconds", "3")
    context = browser.new_context(bypass_csp=True)
    try:
        page = context.new_page()
        page.goto(server.url + "/signin")
        page.fill("#token", done.stdout.strip())
        page.click("#signin")
        page.wait_for_url("**/me")
        time.sleep(3.5)
        page.goto(server.url + "/me")
        assert "/signin?session=" in page.url
        assert page.locator("#signin-form").count() == 1
    finally:
        context.close()
        assert server.stop() == 0, server.log


def _answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False
