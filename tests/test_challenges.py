"""An author's challenges (take5_arena/service/challenges.py, take5_arena/web/challenging.py):
unrated tables of one of their bots against bots they choose, asked for on the web pages of a real
`referee serve --web` on loopback, played by its ladder between the rated tables, and shown to the
author alone, never counted in a rating, a standing or a public list. Every author here is
hostile: forged forms, another author's challenge, floods, bots that do not exist or left, HTML
for names.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re

import pytest
from support import EXAMPLES
from test_web import XSS, Author, WebArena, cli, folder_tgz, wait_until

from take5_arena.referee.store import Store
from take5_arena.referee.store.records import UNRATED_PREFIX
from take5_arena.service import challenges, defaults
from take5_arena.service.errors import LimitExceededError

httpx = pytest.importorskip("httpx")


@pytest.fixture(scope="module")
def arena(tmp_path_factory):
    directory = tmp_path_factory.mktemp("challenges") / "T"
    tokens = {}
    for name in ("alice", "bob", "carol"):
        done = cli("authors", "add", name, "-t", str(directory), "--per-hour", "100")
        assert done.returncode == 0, done.stderr
        tokens[name] = done.stdout.strip()
    server = WebArena(
        directory, "--players", "2", "-j", "1", "--publish-every-seconds", "1", "--bootstrap", "0"
    )
    try:
        authors = {name: Author(server, token) for name, token in tokens.items()}
        uploads = [
            ("alice", "alow", "lowest"),
            ("bob", "brand", "random"),
            ("carol", "clow", "lowest"),
        ]
        for who, bot, example in uploads:
            author = authors[who]
            got = author.verdict(author.upload(bot, folder_tgz(EXAMPLES / example)))
            assert got["status"] == "accepted", got
        yield server, directory, authors
    finally:
        assert server.stop() == 0, server.log


def ask(author: Author, bot: str, *opponents: str, csrf: str | None = None) -> httpx.Response:
    form = {"bot": bot, **{f"opponent_{i:02d}": o for i, o in enumerate(opponents, 1)}}
    if csrf is not None or author.csrf:
        form["csrf"] = author.csrf if csrf is None else csrf
    return author.http.post("/me/challenges", data=form)


def challenge_ids(directory) -> list[str]:
    with Store(directory, readonly=True) as store:
        return [s.schedule_id for s in store.schedules.all(UNRATED_PREFIX)]


def test_forged_forms_ask_for_nothing(arena):
    server, directory, authors = arena
    alice = authors["alice"]
    assert ask(alice, "alow", "brand", csrf="").status_code == 403
    assert ask(alice, "alow", "brand", csrf="0" * 43).status_code == 403
    elsewhere = alice.http.post(
        "/me/challenges",
        data={"csrf": alice.csrf, "bot": "alow", "opponent_01": "brand"},
        headers={"origin": "https://evil.example"},
    )
    assert elsewhere.status_code == 403
    anonymous = httpx.post(
        server.url + "/me/challenges",
        data={"bot": "alow", "opponent_01": "brand"},
        headers={"origin": server.url},
    )
    assert anonymous.status_code == 303 and anonymous.headers["location"].startswith("/signin")
    assert challenge_ids(directory) == []


def test_a_challenge_needs_bots_that_play(arena):
    _server, directory, authors = arena
    alice, carol = authors["alice"], authors["carol"]
    cases = [
        (("alow", "nobody"), "'nobody' is not a bot that plays here now"),
        (("brand", "clow"), "you have no bot named 'brand'"),
        (("alow",), "choose 1 opponent(s)"),
        (("alow", "alow"), "choose each bot once"),
    ]
    for args, said in cases:
        page = ask(alice, *args)
        assert page.status_code in (400, 404), page.text
        assert said in page.text.replace("&#39;", "'"), page.text
    withdrawn = carol.http.post("/me/bots/clow/withdraw", data={"csrf": carol.csrf})
    assert withdrawn.status_code == 303
    page = ask(alice, "alow", "clow")
    assert page.status_code == 400 and "is not a bot that plays here now" in page.text
    for hostile in (XSS, "clow" + XSS):
        page = ask(alice, "alow", hostile)
        assert page.status_code == 400
        assert "<script>" not in page.text and "<img" not in page.text
    assert challenge_ids(directory) == []


def test_a_challenge_is_played_unrated_and_seen_by_its_author_alone(arena):
    server, directory, authors = arena
    alice, bob, carol = authors["alice"], authors["bob"], authors["carol"]
    asked = ask(alice, "alow", "brand")
    assert asked.status_code == 303, asked.text
    where = asked.headers["location"]
    cid = where.rsplit("/", 1)[1]
    assert re.fullmatch(r"challenge-\d{6}", cid)
    wait_until(
        lambda: 'id="state">played<' in alice.http.get(where).text, what="the challenge played"
    )
    page = alice.http.get(where).text
    assert "Unrated" in page and "alow@1 vs brand@1" in page
    games = re.findall(r"/replay\.html\?game=([^\"&]+)", page)
    assert len(games) == 2  # a 2-seat table: its deal in both rotations
    me = alice.http.get("/me").text
    assert cid in me and "played (unrated)" in me

    # the author and the authors at the table read its games; nobody else, not even their ids
    for gid in games:
        assert alice.http.get(f"/api/games/{gid}").status_code == 200
        assert bob.http.get(f"/api/games/{gid}").status_code == 200
        assert carol.http.get(f"/api/games/{gid}").status_code == 404
        assert httpx.get(f"{server.url}/api/games/{gid}").status_code == 404
        assert 'id="unrated"' in alice.http.get(f"/replay.html?game={gid}").text
        seats = alice.http.get(f"/me/games/{gid}/output.json").json()["seats"]
        assert len(seats) == 1  # alice's own seat only
    for other in (bob, carol):
        assert other.http.get(where).status_code == 404
        assert cid not in other.http.get("/me").text

    # never rated, never listed, never counted
    public = httpx.get(server.url + "/games").text + httpx.get(server.url + "/games?bot=alow").text
    assert not any(gid in public for gid in games)
    bot_page = httpx.get(server.url + "/bot.html?bot=alow").text
    assert not any(gid in bot_page for gid in games)
    with Store(directory, readonly=True) as store:
        rated = {r.game_id for r in store.results.seat_results()}
        every = {r.game_id for r in store.results.seat_results(unrated=True)}
        assert set(games) <= every and not set(games) & rated
        # two seats a game, rated games only (the ladder plays on: counted between two reads)
        counted = sum(s.games for s in store.results.version_stats().values())
        after = store.results.seat_results()
        assert 2 * len(rated) <= counted <= 2 * len(after)


def test_rated_play_goes_on_between_challenges_and_floods_are_refused(arena):
    _server, directory, authors = arena
    bob = authors["bob"]
    got = [ask(bob, "brand", "alow") for _ in range(defaults.CHALLENGES_PER_HOUR + 2)]
    refused = [r for r in got if r.status_code == 429]
    assert len(refused) >= 2, [r.status_code for r in got]
    assert all("challenges" in r.text for r in refused)
    asked = [r.headers["location"].rsplit("/", 1)[1] for r in got if r.status_code == 303]
    assert len(asked) <= defaults.CHALLENGES_PER_HOUR
    wait_until(
        lambda: all(
            'id="state">played<' in bob.http.get(f"/me/challenges/{cid}").text for cid in asked
        ),
        what="bob's challenges played",
    )
    # in the order recorded, a challenge's table never follows another challenge's table without
    # a rated table between them (the ladder's tables play one at a time here: -j 1)
    with Store(directory, readonly=True) as store:
        order = [r.game_id for r in store.results.seat_results(unrated=True)]
        table = {g: store.schedules.schedule_of(g) for g in order}
    runs = []
    for gid in order:
        if not runs or runs[-1] != table[gid]:
            runs.append(table[gid])
    for first, second in itertools.pairwise(runs):
        assert not (first.startswith(UNRATED_PREFIX) and second.startswith(UNRATED_PREFIX)), runs


def test_the_limits_count_from_the_store(tmp_path):
    """The author's limits as the ladder's thread counts them: challenges asked in the last hour,
    and those not yet played."""
    with Store(tmp_path / "t", create=True) as store:
        for n in range(defaults.CHALLENGES_WAITING):
            game = {
                "game_id": f"g{n}",
                "table": 0,
                "rotation": 0,
                "deal_seed": n,
                "duplicate_set": f"d{n}",
                "seats": [1, 2],
                "settings": {},
            }
            store.schedules.save(
                f"{UNRATED_PREFIX}{n:06d}",
                [game],
                description=challenges.description("alice"),
                settings={},
                entrants=[],
            )
        challenges.admit(store, "bob")  # another author's count is theirs
        with pytest.raises(LimitExceededError, match="not yet played"):
            challenges.admit(store, "alice")
        later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=2)
        with pytest.raises(LimitExceededError, match="not yet played"):
            challenges.admit(store, "alice", later)


def test_a_bots_page_shows_its_versions_side_by_side(arena):
    """(Here for the arena this module has.) A second version of alice's bot: both rows, each
    with its own games and rating, the change between them; the challenges' games not counted."""
    server, directory, authors = arena
    alice = authors["alice"]
    got = alice.verdict(alice.upload("alow", folder_tgz(EXAMPLES / "heuristic")))
    assert got["status"] == "accepted", got

    def rated(page: str, version: int) -> bool:
        row = re.search(rf'<tr data-version="{version}">(.*?)</tr>', page, re.S)
        return row is not None and re.search(r'class="num rating">-?\d+<', row.group(1)) is not None

    def both() -> bool:
        page = httpx.get(server.url + "/bot.html?bot=alow").text
        return rated(page, 1) and rated(page, 2)

    wait_until(both, what="both versions of alow rated")
    page = httpx.get(server.url + "/bot.html?bot=alow").text
    second = re.search(r'<tr data-version="2">(.*?)</tr>', page, re.S).group(1)
    assert re.search(r'class="num change">[+-]\d+<', second), second
    with Store(directory, readonly=True) as store:
        stats = store.results.version_stats()
        v1 = next(v for v in store.versions.all() if v.key == "alow@1")
    first = re.search(r'<tr data-version="1">(.*?)</tr>', page, re.S).group(1)
    games = int(re.findall(r'<td class="num">(\d+)</td>', first)[1])
    assert games == stats[v1.id].games  # rated games only: alice's challenge is not among them


SLOW_BOT = """
import time
from take5 import Bot, run


class Slow(Bot):
    name = "slow"

    def pick_card(self, view):
        time.sleep(0.05)
        return min(view.hand)


if __name__ == "__main__":
    run(Slow())
"""


def test_validation_progress_is_shown_to_its_author(arena):
    """(Here for the arena this module has.) While a submission is validated, its page says how
    many smoke games were played of how many; then the verdict."""
    from test_web import tgz

    _server, _directory, authors = arena
    carol, bob = authors["carol"], authors["bob"]
    sent = carol.upload("cslow", tgz({"bot.py": SLOW_BOT.encode()}))
    assert sent.status_code == 303, sent.text
    where = sent.headers["location"]
    seen: list[str] = []
    pages: list[str] = []

    def judged() -> bool:
        state = carol.http.get(where + ".json").json()
        seen.append(state["detail"])
        if not state["finished"] and "smoke games" in state["detail"] and not pages:
            pages.append(carol.http.get(where).text)
        return state["finished"]

    wait_until(judged, what="cslow judged")
    progress = [d for d in seen if re.fullmatch(r"smoke games: \d+ of \d+ played.*", d)]
    assert progress, seen
    total = int(re.search(r"of (\d+)", progress[-1]).group(1))
    assert total >= 2 and f"{total} smoke games without a fault" in seen[-1], seen
    assert pages and re.search(r'<p id="progress">smoke games: \d+ of \d+', pages[0])
    assert not any("/" in d for d in progress)  # no folder of the arena's
    assert bob.http.get(where + ".json").status_code == 404
