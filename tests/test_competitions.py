"""Several competitions in one arena directory, served by one `referee serve`
(take5_arena/service/competitions.py): the default competition (the directory itself, 2-player
tables here) and ``four`` (DIR/competitions/four, 4-player tables). An author enters the same bot
into both; each ladder rates it at its own table size, in its own store and standings; a
submission to a competition the arena has not, or to a name that is no name, is refused in one
line. The arena's old single-competition form is the default competition, unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest
from arena_support import Server, WebServer, add_author, cli, db_rows, wait_until
from support import EXAMPLES

from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.client import pack_folder
from take5_arena.service.errors import ClientError

HOSTILE_NAMES = ["../x", "..", "a/b", ".hidden", "Four", "f\u043eur", "four\n", "", "x" * 33]
"""``f\u043eur`` has a Cyrillic o: a look-alike of ``four``."""


def _seats_per_game(directory: Path) -> set[int]:
    rows = db_rows(directory, "SELECT COUNT(*) FROM seat_results GROUP BY game_id")
    return {n for (n,) in rows}


def _rated(directory: Path, name: str) -> int:
    """Rated games the bot ``name`` has in the store of ``directory``."""
    sql = (
        "SELECT COUNT(*) FROM seat_results s JOIN entrant_versions v ON v.id = s.version_id"
        " JOIN entrants e ON e.id = v.entrant_id WHERE e.name = ?"
    )
    return int(db_rows(directory, sql, (name,))[0][0])


def test_competition_names_are_checked_before_any_path(tmp_path: Path) -> None:
    t = tmp_path / "T"
    add_author(t, "alice")  # makes the arena
    for name in [n for n in HOSTILE_NAMES if n]:
        done = cli("competition", "add", name, "-t", str(t), "--players", "4")
        assert done.returncode == 2, (name, done.stdout, done.stderr)
        assert "competition name" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    assert not (tmp_path / "x").exists() and not (t / "competitions").exists()
    made = cli("competition", "add", "four", "-t", str(t), "--players", "4")
    assert made.returncode == 0, made.stderr
    again = cli("competition", "add", "four", "-t", str(t), "--players", "2")
    assert again.returncode == 2 and "exists already" in again.stderr, again.stderr
    listed = cli("competition", "list", "-t", str(t), "--json")
    assert listed.returncode == 0, listed.stderr
    doc = json.loads(listed.stdout)
    assert [(c["name"], c["players"]) for c in doc][1:] == [("four", 4)]


@pytest.mark.slow
def test_one_server_runs_two_competitions(tmp_path: Path) -> None:
    t = tmp_path / "T"
    authors = ("alice", "bob", "carol", "dave")
    tokens = {a: add_author(t, a, "--per-hour", "100") for a in authors}
    made = cli("competition", "add", "four", "-t", str(t), "--players", "4", "--sandbox", "local")
    assert made.returncode == 0, made.stderr
    four = t / "competitions" / "four"
    server = Server(
        t, "--sandbox", "local", "--players", "2", "-j", "1", "--bootstrap", "10",
        "--publish-every-seconds", "1", "--gauntlet", "1",
    )  # fmt: skip
    try:
        server.wait_for(r"competition four: .*tables of 4")
        bots = {"alice": "heuristic", "bob": "lowest", "carol": "random", "dave": "planner"}
        # each enters the four-player competition; alice and bob the default one too
        entries = [(a, ["--competition", "four"]) for a in bots] + [("alice", []), ("bob", [])]
        for author, extra in entries:
            done = cli(
                "submit", str(EXAMPLES / bots[author]), "--name", bots[author],
                "--server", server.address, *extra, token=tokens[author],
            )  # fmt: skip
            assert done.returncode == 0, done.stdout + done.stderr + server.log
        wait_until(
            lambda: _rated(four, "heuristic") >= 4 and _rated(t, "heuristic") >= 2,
            timeout=240, what="games in both competitions", server=server,
        )  # fmt: skip
        # each ladder at its own table size, in its own store
        assert _seats_per_game(t) == {2}
        assert _seats_per_game(four) == {4}
        # the same bot in both: one name, its author's in each
        ((owner,),) = db_rows(t, "SELECT author FROM arena_bots WHERE bot_name = 'heuristic'")
        assert owner == "alice"
        # standings apart: carol's and dave's bots are only in the four-player one
        with server.client(competition="four") as c4:
            wait_until(lambda: len(c4.standings().rows) == 4, what="standings of four")
            assert {r.bot for r in c4.standings().rows} == set(bots.values())
        with server.client() as c2:
            wait_until(lambda: len(c2.standings().rows) == 2, what="standings of the default")
            assert {r.bot for r in c2.standings().rows} == {"heuristic", "lowest"}
        with server.client(tokens["alice"], competition="four") as mine:
            listed = mine.my_bots()
            assert [b.name for b in listed.bots if b.versions] == ["heuristic"]
            assert all(s.bot_name == "heuristic" for s in listed.submissions)
            # withdrawn from one competition, still in the other
            assert mine.withdraw("heuristic").was_active
        assert db_rows(four, "SELECT active FROM entrants WHERE name = 'heuristic'") == [(0,)]
        assert db_rows(t, "SELECT active FROM entrants WHERE name = 'heuristic'") == [(1,)]
        # an unknown competition: one line, exit 2, nothing recorded
        before = db_rows(t, "SELECT COUNT(*) FROM arena_submissions")
        done = cli(
            "submit", str(EXAMPLES / "random"), "--server", server.address,
            "--competition", "five", token=tokens["carol"],
        )  # fmt: skip
        assert done.returncode == 2, done.stdout + done.stderr
        refusal = done.stderr.strip().splitlines()[-1]
        assert refusal == "referee: no competition 'five' on this arena (it has: the default, four)"
        assert db_rows(t, "SELECT COUNT(*) FROM arena_submissions") == before
        # names that are none never reach a path: refused by the client, and by the server too
        bad = cli(
            "submit", str(EXAMPLES / "random"), "--server", server.address,
            "--competition", "../x", token=tokens["carol"],
        )  # fmt: skip
        assert bad.returncode == 2 and "competition name" in bad.stderr, bad.stderr
        packed = pack_folder(EXAMPLES / "random")
        for name in [n for n in HOSTILE_NAMES if n]:
            with server.client(tokens["carol"], competition=name) as raw:
                with pytest.raises(ClientError) as refused:
                    raw.upload("random", packed)
                assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT, name
                with pytest.raises(ClientError) as public:
                    raw.standings()
                assert public.value.code == grpc.StatusCode.INVALID_ARGUMENT, name
        assert not (tmp_path / "x").exists()
        assert db_rows(t, "SELECT COUNT(*) FROM arena_submissions") == before
        # the sites: the default competition's, and four's under c/four of it
        wait_until(
            lambda: (t / "site" / "c" / "four" / "index.html").exists()
            and (t / "site" / "index.html").exists(),
            what="both sites", server=server,
        )  # fmt: skip
    finally:
        assert server.stop() == 0, server.log
    # the organiser's revocation takes the author's bots out of every competition
    revoked = cli("authors", "revoke", "carol", "-t", str(t))
    assert revoked.returncode == 0, revoked.stderr
    assert db_rows(four, "SELECT active FROM entrants WHERE name = 'random'") == [(0,)]
    checked = cli("verify", "--tournament", str(four))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # the stores' own standings apart too: dave's bot played in four only
    for where, has_planner in ((four, True), (t, False)):
        standings = cli("standings", "--tournament", str(where), "--json")
        assert standings.returncode == 0, standings.stderr
        entrants = {r["entrant"] for r in json.loads(standings.stdout)["rows"]}
        assert ("planner" in entrants) == has_planner, entrants


def test_a_client_of_before_competitions_reaches_the_default(tmp_path: Path) -> None:
    """A request without the field (a 1.0 client) is the default competition's, as before."""
    assert pb.StandingsRequest().competition == ""
    assert pb.SubmitMetadata(bot_name="x").competition == ""


def test_the_web_pages_link_each_competitions_standings(tmp_path: Path) -> None:
    import httpx

    t = tmp_path / "T"
    add_author(t, "alice")
    for name in ("four", "duel-2"):
        made = cli("competition", "add", name, "-t", str(t), "--players", "4")
        assert made.returncode == 0, made.stderr
    server = WebServer(t)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as web:
            home = web.get("/")
            assert home.status_code == 200
            assert '<a href="/c/duel-2">duel-2</a>, <a href="/c/four">four</a>' in home.text
            page = web.get("/c/four")
            assert page.status_code == 200, page.text
            assert "<h1>Standings of four</h1>" in page.text
            assert 'href="/c/duel-2"' in page.text
            for hostile in ("..%2Fx", "F%D0%BEur", "Four", "%2E%2E", "nope", "%3Cb%3E"):
                refused = web.get(f"/c/{hostile}")
                assert refused.status_code == 404, (hostile, refused.status_code)
                assert "<b>" not in refused.text
    finally:
        assert server.stop() == 0, server.log
    assert "Traceback" not in server.log, server.log


def test_a_house_bot_of_a_competition_is_nobody_elses(tmp_path: Path) -> None:
    """The organiser's bot entered into one competition only (`submit --competition`, the local
    form) is the house's in every one: no author may submit a version of it, or a look-alike."""
    t = tmp_path / "T"
    token = add_author(t, "alice")
    assert cli("competition", "add", "four", "-t", str(t), "--players", "4").returncode == 0
    entered = cli(
        "submit", str(EXAMPLES / "lowest"), "--name", "housebot", "-t", str(t),
        "--competition", "four", "--sandbox", "local",
    )  # fmt: skip
    assert entered.returncode == 0, entered.stdout + entered.stderr
    assert db_rows(t / "competitions" / "four", "SELECT name FROM entrants") == [("housebot",)]
    unknown = cli(
        "submit", str(EXAMPLES / "lowest"), "--name", "x", "-t", str(t), "--competition", "five"
    )
    assert unknown.returncode == 2 and "no competition 'five'" in unknown.stderr, unknown.stderr
    server = Server(t, "--sandbox", "local", "--no-ladder")
    try:
        packed = pack_folder(EXAMPLES / "random")
        for competition in ("four", ""):
            for name in ("housebot", "HouseBot", "housebot."):
                alice = server.client(token, competition=competition)
                with alice, pytest.raises(ClientError) as refused:
                    alice.upload(name, packed)
                assert refused.value.code == grpc.StatusCode.PERMISSION_DENIED, (name, refused)
    finally:
        assert server.stop() == 0, server.log
    assert db_rows(t, "SELECT COUNT(*) FROM arena_submissions") == [(0,)]
