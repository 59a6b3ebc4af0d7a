"""Fair play in the arena against hostile authors (issue 46's attacks, each against a real `referee
serve` on loopback): one author's bots seated together because the arena did not know whose they
were, and bots that name somebody else as their author in their handshake."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from arena_support import Server, add_author, cli, db_rows, wait_until

from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.client import pack_folder

LIAR = """from take5 import Bot, run


class Liar(Bot):
    name, version, author = "{name}", "1", "{claims}"

    def pick_card(self, view):
        return min(view.hand)


if __name__ == "__main__":
    run(Liar())
"""


def _liar(tmp_path: Path, name: str, claims: str) -> Path:
    """A bot whose handshake says ``claims`` wrote it."""
    folder = tmp_path / "bots" / name
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text(LIAR.format(name=name, claims=claims))
    return folder


@pytest.fixture
def authors(tmp_path):
    directory = tmp_path / "T"
    names = ("alice", "bob", "carol", "dave")
    return directory, {n: add_author(directory, n, "--per-hour", "100") for n in names}


def test_one_authors_three_bots_never_share_a_table(authors, tmp_path):
    """alice submits three bots, each claiming in its handshake to be another author's, into a pool
    of four authors at tables of three: separation is always possible, so no game seats two of
    them, the store and every record name alice as their author (the handshake's word is kept as
    what the bot says), and the ladder's gauntlets kept them apart too."""
    directory, tokens = authors
    server = Server(directory, "--sandbox", "local", "--players", "3", "--gauntlet", "1")
    alices = {"alice1": "bob", "alice2": "carol", "alice3": "dave"}
    try:
        # the other authors first, so that the pool can keep alice's bots apart at every step
        for author in ("bob", "carol", "dave"):
            with server.client(tokens[author]) as client:
                folder = _liar(tmp_path, f"{author}bot", author)
                reply = client.submit(f"{author}bot", pack_folder(folder))
                assert reply.outcome == pb.SUBMIT_ACCEPTED, reply
        with server.client(tokens["alice"]) as alice:
            for name, claims in alices.items():
                reply = alice.submit(name, pack_folder(_liar(tmp_path, name, claims)))
                assert reply.outcome == pb.SUBMIT_ACCEPTED, reply
        assert dict(db_rows(directory, "SELECT name, author FROM entrants")) == {
            **dict.fromkeys(alices, "alice"),
            "bobbot": "bob",
            "carolbot": "carol",
            "davebot": "dave",
        }
        for name in alices:  # every gauntlet of alice's bots played, and more
            server.wait_for(rf"ladder: gauntlet for {name}@1", timeout=240)
        wait_until(
            lambda: len(_played(directory, "gauntlet alice3@1")) >= 3 * 3,
            timeout=600,
            what="alice3's gauntlet",
            server=server,
        )
    finally:
        assert server.stop() == 0, server.log
    # the site shows whose each bot is, beside what it says of itself
    assert cli("publish", "-t", str(directory), "--out", str(tmp_path / "site")).returncode == 0
    text = (tmp_path / "site" / "data" / "standings.js").read_text()
    bots = json.loads(text[text.index("{") : text.rindex("}") + 1])["bots"]
    assert (bots["alice1"]["owner"], bots["alice1"]["author"]) == ("alice", "bob")
    records = [json.loads(r) for (r,) in db_rows(directory, "SELECT record FROM results")]
    assert len(records) >= 9
    for record in records:
        owners = [seat["owner"] for seat in record["seats"]]
        assert owners.count("alice") <= 1, owners
        for seat in record["seats"]:
            assert seat["owner"] == seat["name"].removesuffix("bot").rstrip("123")
            # what the bot says of itself is kept, as its word only
            assert seat["author"] == alices.get(seat["name"], seat["owner"])


def _played(directory: Path, description: str) -> list[str]:
    """The recorded games of the ladder's schedule with this description."""
    rows = db_rows(
        directory,
        "SELECT r.game_id FROM results r JOIN schedule_games sg ON sg.game_id = r.game_id"
        " JOIN schedules s ON s.schedule_id = sg.schedule_id WHERE s.description = ?",
        (description,),
    )
    return [r[0] for r in rows]


def test_an_arena_from_before_authors_learns_them_from_its_accounts(authors, tmp_path):
    """Entrants stored without an author (an arena made before the arena passed its accounts on)
    get them from the accounts when the arena starts: the seating rule has them from then on."""
    directory, tokens = authors
    server = Server(directory, "--sandbox", "local", "--players", "2", "--no-ladder")
    try:
        with server.client(tokens["bob"]) as bob:
            reply = bob.submit("bobbot", pack_folder(_liar(tmp_path, "bobbot", "alice")))
            assert reply.outcome == pb.SUBMIT_ACCEPTED, reply
    finally:
        assert server.stop() == 0, server.log
    con = sqlite3.connect(directory / "tournament.sqlite")
    with con:
        con.execute("UPDATE entrants SET author = NULL")
    con.close()
    server = Server(directory, "--sandbox", "local", "--players", "2", "--no-ladder")
    assert server.stop() == 0, server.log
    assert db_rows(directory, "SELECT name, author FROM entrants") == [("bobbot", "bob")]
