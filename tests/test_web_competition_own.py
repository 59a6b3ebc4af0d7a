"""An author's own pages in an arena's other competition (take5_arena/web/mine.py, challenging.py,
entries.py; take5_arena/service/challenges.py): a real `referee serve --web` on loopback whose
ladder plays competition ``duel`` (tables of 2) while the default competition has no bots.

Alice's bot ``loud`` writes to stderr every turn and faults once a game in duel; bob's ``bplain``
plays there too. Alice reads loud's faults and her seats' output and analysis under
``/c/duel/me/...``, and asks for a challenge in duel, played by duel's ladder and stored in duel's
store. Every author is hostile: bob never reads alice's output, faults or challenges in duel, nor
does anyone signed out; a game or challenge id of duel asked under the default's path (or the
other way) is unknown there; a ``..``, look-alike, unknown or marked-up competition name on each
route and in the challenge form is refused in one line, reflecting nothing and storing nothing.
The limits of challenges are the account's across the competitions (:class:`challenges.Quota`).
"""

from __future__ import annotations

import datetime as dt
import re
import time
from pathlib import Path

import grpc
import pytest
from arena_support import add_author, cli
from support import EXAMPLES
from test_web import XSS, Author, WebArena, folder_tgz, tgz, wait_until
from test_web import browser as browser
from test_web_author_loop import ALICE_BOT
from test_web_competition_pages import HOSTILE, reflected

from take5_arena.referee.store import Store
from take5_arena.referee.store.records import UNRATED_PREFIX
from take5_arena.service import challenges, defaults
from take5_arena.service.client import ArenaClient
from take5_arena.service.errors import ClientError, LimitExceededError

httpx = pytest.importorskip("httpx")

FORM_HOSTILE = ["..", "../duel", "duel/..", "d\u0443el", "Duel", "nope", "<b>x</b>", "duel\n"]
"""Competition names a form may carry: ``d\u0443el`` has a Cyrillic u, a look-alike of duel."""


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("own")
    t = root / "T"
    tokens = {"alice": add_author(t, "alice", "--per-hour", "100")}
    tokens["bob"] = add_author(t, "bob", "--per-hour", "100")
    # duel plays in the local sandbox too (arena_support.duel_arena's plays in Docker's): loud
    # reads its flag from this machine's disk
    made = cli("competition", "add", "duel", "-t", str(t), "--players", "2", "--sandbox", "local")
    assert made.returncode == 0, made.stderr
    done = cli(
        "submit", str(EXAMPLES / "lowest"), "--name", "lowest", "-t", str(t),
        "--competition", "duel", "--sandbox", "local",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    server = WebArena(t, "-j", "1", "--publish-every-seconds", "1", "--bootstrap", "0")
    flag = root / "loud-faults"
    try:
        alice, bob = Author(server, tokens["alice"]), Author(server, tokens["bob"])
        loud = tgz({"bot.py": ALICE_BOT.format(flag=str(flag), xss=XSS).encode()})
        got = [
            alice.verdict(upload(alice, "loud", loud)),
            bob.verdict(upload(bob, "bplain", folder_tgz(EXAMPLES / "lowest"))),
        ]
        assert [g["status"] for g in got] == ["accepted", "accepted"], got
        assert [g["competition"] for g in got] == ["duel", "duel"], got
        flag.touch()  # validated: from now on loud faults once a game
        yield server, t, tokens, {"alice": alice, "bob": bob}
    finally:
        assert server.stop() == 0, server.log
    assert "Traceback" not in server.log, server.log


def upload(author: Author, name: str, archive: bytes) -> httpx.Response:
    return author.http.post(
        "/me/upload",
        data={"csrf": author.csrf, "bot_name": name, "competition": "duel"},
        files={"archive": ("bot.tar.gz", archive, "application/gzip")},
    )


def challenge_ids(directory: Path) -> list[str]:
    with Store(directory, readonly=True) as store:
        return [s.schedule_id for s in store.schedules.all(UNRATED_PREFIX)]


def loud_game(server: WebArena) -> tuple[str, list[bool]]:
    """A published game of duel's where loud faulted, and which of its seats are loud's."""
    found: list[tuple[str, list[bool]]] = []

    def look() -> bool:
        page = httpx.get(f"{server.url}/c/duel/bot.html", params={"bot": "loud", "faults": "1"})
        for gid in re.findall(r"/c/duel/replay\.html\?game=([^\"&]+)", page.text):
            seats = httpx.get(f"{server.url}/c/duel/api/games/{gid}").json()["record"]["seats"]
            found.append((gid, [str(s.get("name", "")).startswith("loud") for s in seats]))
            return True
        return False

    wait_until(look, timeout=300, what="a published game of duel where loud faulted")
    return found[0]


def test_faults_output_and_analysis_of_another_competition_are_the_authors_alone(arena) -> None:
    server, _t, tokens, authors = arena
    alice, bob = authors["alice"], authors["bob"]
    gid, seats = loud_game(server)

    # the faults page of duel: loud's faults there, with its stderr as text, links kept in duel
    wait_until(
        lambda: "loud thinks" in alice.http.get("/c/duel/me/bots/loud/faults").text,
        what="a fault of loud in duel",
    )
    page = alice.http.get("/c/duel/me/bots/loud/faults")
    assert page.status_code == 200 and "no-store" in page.headers["cache-control"]
    assert (
        "loud gives up" in page.text
        and "&lt;img src=x" in page.text
        and "<img src=x" not in page.text
    )
    assert 'data-prefix="/c/duel"' in page.text
    links = re.findall(r'href="([^"]*replay[^"]*)"', page.text)
    assert links and all(link.startswith("/c/duel/replay.html?game=") for link in links)
    default = alice.http.get("/me/bots/loud/faults")  # the default's: loud never played there
    assert default.status_code == 200 and "loud thinks" not in default.text
    assert 'id="no-faults"' in default.text
    me = alice.http.get("/me").text
    assert 'href="/c/duel/me/bots/loud/faults"' in me
    for other in (bob.http, httpx.Client(base_url=server.url)):
        got = other.get("/c/duel/me/bots/loud/faults")
        assert got.status_code in (303, 404) and "loud thinks" not in got.text

    # her seats' output and analysis of duel's game, under duel's path only
    mine = alice.http.get(f"/c/duel/me/games/{gid}/output.json")
    assert mine.status_code == 200 and "no-store" in mine.headers["cache-control"]
    rows = mine.json()["logs"]
    assert rows and all(seats[seat] for _round, _turn, seat, _text in rows)
    assert any("loud thinks at 1.1 " + XSS in text for *_, text in rows)
    theirs = bob.http.get(f"/c/duel/me/games/{gid}/output.json")
    assert theirs.status_code == 200 and "loud thinks" not in theirs.text
    assert all(not seats[seat] for _r, _t, seat, _x in theirs.json()["logs"])
    anonymous = httpx.get(f"{server.url}/c/duel/me/games/{gid}/output.json")
    assert anonymous.status_code == 403
    analysis = alice.http.get(f"/c/duel/me/games/{gid}/analysis.json", timeout=120)
    assert analysis.status_code == 200, analysis.text
    assert analysis.json()["seats"] and all(seats[s] for s in analysis.json()["seats"])
    theirs = bob.http.get(f"/c/duel/me/games/{gid}/analysis.json", timeout=120).json()
    assert all(not seats[s] for s in theirs["seats"])
    # a game of duel asked under the default's path is no game there
    for path in (f"/me/games/{gid}/output.json", f"/me/games/{gid}/analysis.json"):
        got = alice.http.get(path, timeout=120)
        assert got.status_code == 404 and "loud thinks" not in got.text, (path, got.text)
    replay = alice.http.get(f"/c/duel/replay.html?game={gid}").text
    assert 'data-own-output="1"' in replay and 'data-prefix="/c/duel"' in replay

    # gRPC: MyBotFaults names its competition, as the page's path does
    with ArenaClient(server.address, token=tokens["alice"], competition="duel") as client:
        faults = client.faults("loud")
        assert faults.faults and any("loud thinks" in f.log_tail for f in faults.faults)
    with ArenaClient(server.address, token=tokens["alice"]) as client:
        assert not client.faults("loud").faults
    with ArenaClient(server.address, token=tokens["bob"], competition="duel") as client:
        with pytest.raises(ClientError) as refused:
            client.faults("loud")
        assert refused.value.code == grpc.StatusCode.PERMISSION_DENIED
    for name in ("..", "d\u0443el", "nope"):
        with ArenaClient(server.address, token=tokens["alice"], competition=name) as client:
            with pytest.raises(ClientError) as refused:
                client.faults("loud")
            assert refused.value.code in (
                grpc.StatusCode.INVALID_ARGUMENT,
                grpc.StatusCode.NOT_FOUND,
            )

    # hostile competition names on every new route: a 404 that reflects nothing, for anyone
    for name in HOSTILE:
        for path in (
            f"/c/{name}/me/bots/loud/faults", f"/c/{name}/me/games/{gid}/output.json",
            f"/c/{name}/me/games/{gid}/analysis.json", f"/c/{name}/me/challenges/challenge-000000",
        ):  # fmt: skip
            got = alice.http.get(path)
            assert got.status_code == 404, (path, got.status_code)
            assert "loud thinks" not in got.text
            reflected(got)
    assert "Traceback" not in server.log


def test_a_challenge_in_another_competition_is_played_and_kept_there(arena) -> None:
    server, t, _tokens, authors = arena
    alice, bob = authors["alice"], authors["bob"]
    duel = t / "competitions" / "duel"
    me = alice.http.get("/me").text
    form = re.search(r'<form[^>]*id="challenge-form-duel".*?</form>', me, re.S)
    assert form is not None, me
    assert 'name="competition" value="duel"' in form.group(0)
    assert re.search(r'<option value="loud">', form.group(0))
    assert len(re.findall(r'class="challenge-opponent"', form.group(0))) == 1  # tables of 2

    def ask(competition: str | None, bot: str = "loud", *opponents: str) -> httpx.Response:
        data = {"csrf": alice.csrf, "bot": bot}
        data.update({f"opponent_{i:02d}": o for i, o in enumerate(opponents or ("lowest",), 1)})
        if competition is not None:
            data["competition"] = competition
        return alice.http.post("/me/challenges", data=data)

    # hostile names and the wrong competition: one line each, nothing stored anywhere
    for name in FORM_HOSTILE:
        got = ask(name)
        assert got.status_code == 400, (name, got.status_code)
        error = re.search(r'<p class="error" id="error">([^<]*)</p>', got.text)
        assert error is not None and "competition" in error.group(1), got.text
        assert "<b>x" not in got.text
    refused = ask(None)  # the default's: loud does not play there, its tables are not of 2
    assert refused.status_code == 400
    assert challenge_ids(t) == [] and challenge_ids(duel) == []

    asked = ask("duel")
    assert asked.status_code == 303, asked.text
    where = asked.headers["location"]
    assert re.fullmatch(r"/c/duel/me/challenges/challenge-\d{6}", where), where
    cid = where.rsplit("/", 1)[1]
    wait_until(
        lambda: 'id="state">played<' in alice.http.get(where).text,
        timeout=240,
        what="the challenge played in duel",
    )
    page = alice.http.get(where).text
    assert "loud@1 vs lowest@1" in page and 'data-prefix="/c/duel"' in page
    games = re.findall(r'href="/c/duel/replay\.html\?game=([^"&]+)"', page)
    assert len(games) == 2  # a table of 2: its deal in both rotations, at duel's size
    assert challenge_ids(duel) == [cid] and challenge_ids(t) == []
    listed = alice.http.get("/me").text
    assert f'href="/c/duel/me/challenges/{cid}"' in listed

    # hers alone, and duel's alone: bob, anyone signed out, and the default's path see nothing
    assert bob.http.get(where).status_code == 404
    assert cid not in bob.http.get("/me").text
    assert alice.http.get(f"/me/challenges/{cid}").status_code == 404
    for gid in games:
        assert alice.http.get(f"/c/duel/api/games/{gid}").status_code == 200
        assert bob.http.get(f"/c/duel/api/games/{gid}").status_code == 404
        assert httpx.get(f"{server.url}/c/duel/api/games/{gid}").status_code == 404
        assert 'id="unrated"' in alice.http.get(f"/c/duel/replay.html?game={gid}").text
        own = alice.http.get(f"/c/duel/me/games/{gid}/output.json").json()
        assert len(own["seats"]) == 1  # alice's own seat only
    public = httpx.get(server.url + "/c/duel/games").text
    assert not any(gid in public for gid in games)


def test_a_challenge_over_the_api_names_its_competition(arena) -> None:
    """AskChallenge and GetChallenge (since 1.2) and `referee challenge`: bob's challenge in duel,
    stored in duel's store and played there; an id of duel's is unknown to another author and
    under the default competition; refusals store nothing."""
    server, t, tokens, _authors = arena
    duel = t / "competitions" / "duel"
    before = challenge_ids(duel)
    with ArenaClient(server.address, token=tokens["bob"], competition="duel") as client:
        for bot, opponents, code in (
            ("loud", ["bplain"], grpc.StatusCode.NOT_FOUND),  # not his
            ("bplain", ["loud", "lowest"], grpc.StatusCode.INVALID_ARGUMENT),  # tables of 2
            ("bplain", ["bplain"], grpc.StatusCode.INVALID_ARGUMENT),
            ("bplain", [XSS], grpc.StatusCode.INVALID_ARGUMENT),
            ("bplain", ["x"] * 50, grpc.StatusCode.INVALID_ARGUMENT),
        ):
            with pytest.raises(ClientError) as refused:
                client.challenge(bot, opponents)
            assert refused.value.code == code, (bot, opponents, refused.value)
            assert "\n" not in str(refused.value)
        asked = client.challenge("bplain", ["loud"])
        assert asked.competition == "duel" and list(asked.seats) == ["bplain@1", "loud@1"]
        assert re.fullmatch(r"challenge-\d{6}", asked.challenge_id)
        assert len(asked.games) == 2 and asked.state in ("waiting", "playing", "played")
        cid = asked.challenge_id
        deadline = time.monotonic() + 240
        while client.get_challenge(cid).state != "played":
            assert time.monotonic() < deadline, "bob's challenge was not played"
            time.sleep(0.5)
    assert challenge_ids(duel) == [*before, cid] and challenge_ids(t) == []
    for token, competition in (
        (tokens["alice"], "duel"),
        (tokens["bob"], ""),
        (tokens["bob"], "nope"),
    ):
        with ArenaClient(server.address, token=token, competition=competition) as client:
            with pytest.raises(ClientError) as refused:
                client.get_challenge(cid)
            assert refused.value.code == grpc.StatusCode.NOT_FOUND
    default = ArenaClient(server.address, token=tokens["bob"])  # the default's tables are of 4
    with default, pytest.raises(ClientError):
        default.challenge("bplain", ["loud"])
    assert challenge_ids(t) == []

    shown = cli("challenge", "--show", cid, "--server", server.address, "--competition", "duel",
                token=tokens["bob"])  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert f"{cid} in duel: bplain@1 vs loud@1: played (unrated)" in shown.stdout
    for name in ("..", "d\u0443el", "nope"):
        refused = cli("challenge", "bplain", "loud", "--server", server.address,
                      "--competition", name, token=tokens["bob"])  # fmt: skip
        assert refused.returncode == 2, (name, refused.stdout, refused.stderr)
        assert "competition" in refused.stderr.strip().splitlines()[-1], refused.stderr
        assert "Traceback" not in refused.stderr
    assert challenge_ids(duel) == [*before, cid]


def test_the_challenge_limits_are_the_accounts_across_competitions(tmp_path: Path) -> None:
    """A quota over two competitions' stores: challenges waiting in one count in the other, so an
    author cannot multiply their limits by the competitions there are; another author's count is
    theirs; and an unreadable competition stops nobody."""
    first, second = tmp_path / "T", tmp_path / "T" / "competitions" / "duel"
    second.parent.mkdir(parents=True)
    with Store(first, create=True) as store:
        for n in range(defaults.CHALLENGES_WAITING):
            game = {
                "game_id": f"g{n}", "table": 0, "rotation": 0, "deal_seed": n,
                "duplicate_set": f"d{n}", "seats": [1, 2], "settings": {},
            }  # fmt: skip
            store.schedules.save(
                f"{UNRATED_PREFIX}{n:06d}",
                [game],
                description=challenges.description("alice"),
                settings={},
                entrants=[],
            )
    gone = tmp_path / "gone"
    quota = challenges.Quota(lambda: [first, second, gone])
    with Store(second, create=True) as store:
        quota.admit(store, second, "bob")
        with pytest.raises(LimitExceededError, match="not yet played"):
            quota.admit(store, second, "alice")
        alone = challenges.Quota(lambda: [second])
        alone.admit(store, second, "alice")  # duel's own count: none
        later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=2)
        with pytest.raises(LimitExceededError, match="not yet played"):
            quota.admit(store, second, "alice", later)


@pytest.mark.browser
def test_browser_shows_a_competitions_own_output_beside_its_replay(arena, browser) -> None:
    """In Chromium: from /me, duel's faults link; from the faults page, duel's replay, where the
    page's script fetches alice's output from duel's path and shows it beside its turn, and her
    analysis; bob's replay of the same game shows none of it."""
    server, _t, tokens, _authors = arena
    gid, _seats = loud_game(server)
    problems: list[str] = []
    pages = {}
    for who in ("alice", "bob"):
        context = browser.new_context(bypass_csp=True)
        page = context.new_page()
        page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.goto(server.url + "/signin")
        page.fill("#token", tokens[who])
        page.click("#signin")
        page.wait_for_url("**/me")
        pages[who] = page
    alice, bob = pages["alice"], pages["bob"]
    alice.click('section[data-competition="duel"][data-bot="loud"] a.faults-link')
    alice.wait_for_url("**/c/duel/me/bots/loud/faults")
    deadline = time.monotonic() + 240
    while alice.locator("pre.log-tail").count() == 0:
        assert time.monotonic() < deadline, "no fault of loud in duel"
        time.sleep(1)
        alice.reload()
    alice.goto(f"{server.url}/c/duel/replay.html?game={gid}#r1t1")
    alice.wait_for_selector("body[data-ready='1']")
    alice.wait_for_selector("#logs")
    assert "loud thinks at 1.1 " + XSS in alice.inner_text("#logs")
    alice.click("#analyse")
    alice.wait_for_selector("#analysis table.analysis", timeout=120_000)
    bob.goto(f"{server.url}/c/duel/replay.html?game={gid}#r1t1")
    bob.wait_for_selector("body[data-ready='1']")
    assert "loud thinks" not in bob.content()
    assert alice.evaluate("window.__xss") is None and bob.evaluate("window.__xss") is None
    assert not problems, problems
