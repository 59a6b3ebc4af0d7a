"""A new version's validation games count once it passes, and only then (issue 46): against a real
`referee serve`, the smoke tables against the pool are dealt from the arena's secret key in a
namespace of their own (checkable once the key is revealed), stored as rated games when the
version passes (standings, verify), and forgotten when it fails, however well it played first."""

from __future__ import annotations

import concurrent.futures
import json
import shutil
from pathlib import Path

import pytest
from arena_support import Server, add_author, bot_folder, cli, db_rows, plain_bot

from take5.shuffle import keyed_seed
from take5_arena.referee.store import Store
from take5_arena.referee.tournament.plan.deals import Dealer
from take5_arena.referee.tournament.plan.settings import TournamentSettings
from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.client import pack_folder

LATE_CRASH = """from take5 import Bot, run


class Late(Bot):
    name = "late"

    def __init__(self):
        self.games = 0

    def pick_card(self, view):
        if self.games == 2:  # two clean games of the duplicate set, then a fault in the third
            raise RuntimeError("late")
        return min(view.hand)

    def game_over(self, result):
        self.games += 1


if __name__ == "__main__":
    run(Late())
"""


def _validation_games(directory: Path) -> list[tuple[str, str]]:
    return db_rows(
        directory,
        "SELECT sg.game_id, s.description FROM schedule_games sg"
        " JOIN schedules s ON s.schedule_id = sg.schedule_id"
        " WHERE s.schedule_id LIKE 'validation-%' ORDER BY sg.game_id",
    )


def test_validation_games_are_rated_once_the_version_passes_and_never_when_it_fails(tmp_path):
    directory = tmp_path / "T"
    names = ("alice", "bob", "carol", "dave")
    tokens = {n: add_author(directory, n, "--per-hour", "100") for n in names}
    # no ladder: every game in the store is a validation game
    server = Server(directory, "--sandbox", "local", "--players", "3", "--no-ladder")
    try:
        for author, pick in (("bob", "-1"), ("carol", "0"), ("dave", "len(view.hand) // 2")):
            bot = plain_bot(tmp_path, f"{author}bot", pick)
            with server.client(tokens[author]) as client:
                reply = client.submit(f"{author}bot", pack_folder(bot))
                assert reply.outcome == pb.SUBMIT_ACCEPTED, reply
        # bob's and carol's smoke tables had too few other authors: house bots, never rated;
        # dave's were against bob's and carol's bots, dealt from the key: rated
        assert {d for _, d in _validation_games(directory)} == {"validation davebot@1"}
        with server.client(tokens["alice"]) as alice:
            reply = alice.submit(
                "alicebot",
                pack_folder(plain_bot(tmp_path, "alicebot", "-2 if len(view.hand) > 1 else 0")),
            )
            assert reply.outcome == pb.SUBMIT_ACCEPTED, reply
            assert "against the pool's bots" in reply.validation, reply
            before = db_rows(directory, "SELECT game_id, version_id, score FROM seat_results")
            late = alice.submit("late", pack_folder(bot_folder(tmp_path, "late", LATE_CRASH)))
            assert late.outcome == pb.SUBMIT_REFUSED, late
        # the failing bot's two clean games moved nobody: nothing of them is stored
        after = db_rows(directory, "SELECT game_id, version_id, score FROM seat_results")
        assert after == before
        assert not db_rows(directory, "SELECT 1 FROM entrants WHERE name = 'late'")
    finally:
        assert server.stop() == 0, server.log
    games = _validation_games(directory)
    assert [d for _, d in games].count("validation alicebot@1") == 3  # one table, 3 rotations
    records = {
        gid: json.loads(text)
        for gid, text in db_rows(directory, "SELECT game_id, record FROM results")
    }
    assert set(records) == {gid for gid, _ in games}
    for record in records.values():
        assert json.loads(record["deal"]["id"])[1] == "validation"
        assert all(seat["digest"].startswith("sha256:") for seat in record["seats"])
        owners = sorted(seat["owner"] for seat in record["seats"])
        assert len(set(owners)) == 3, owners  # one bot per author, as the ladder seats them

    done = cli("verify", "-t", str(directory), "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    standings = cli("standings", "-t", str(directory), "--json")
    assert standings.returncode == 0, standings.stderr
    rows = {r["entrant"]: r for r in json.loads(standings.stdout)["rows"]}
    assert {e: r["owner"] for e, r in rows.items()} == {
        "alicebot": "alice",
        "bobbot": "bob",
        "carolbot": "carol",
        "davebot": "dave",
    }
    # the terminal's table shows each bot's author (the account), whatever its handshake says
    text = cli("standings", "-t", str(directory)).stdout
    assert "Author" in text.splitlines()[2], text
    assert any(line.split()[1:3] == ["alicebot", "alice"] for line in text.splitlines()), text
    site = tmp_path / "site"
    assert cli("publish", "-t", str(directory), "--out", str(site)).returncode == 0
    done = cli("verify", "--site", str(site), "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    published = json.loads((site / "standings.json").read_text())
    assert {r["entrant"]: r.get("owner") for r in published["rows"]} == {
        e: r["owner"] for e, r in rows.items()
    }
    assert "| Author |" in (site / "standings.md").read_text()

    # once the key is revealed anyone can check every validation deal
    revealed = cli("tournament", "reveal", "-t", str(directory))
    assert revealed.returncode == 0, revealed.stdout + revealed.stderr
    key = bytes.fromhex(db_rows(directory, "SELECT key FROM deal_keys WHERE season = 1")[0][0])
    for record in records.values():
        assert record["seed"] == keyed_seed(key, record["deal"]["id"])
    done = cli("verify", "-t", str(directory), "-q")
    assert done.returncode == 0, done.stdout + done.stderr


SLOW_START = """import time

from take5 import Bot, run

time.sleep(1.5)  # a validation long enough for the other host's to overlap it


class Twin(Bot):
    name = "twin"

    def pick_card(self, view):
        return sorted(view.hand)[{pick}]


if __name__ == "__main__":
    run(Twin())
"""


@pytest.mark.postgres
@pytest.mark.slow
def test_two_versions_of_one_name_validated_at_once_on_two_hosts_are_both_rated(
    tmp_path, postgres_url
):
    """Two referees on one PostgreSQL store (docs/operators/several-hosts.md) each validate a
    version of one bot at the same moment: each validation holds its own version number from its
    start (its smoke games are dealt and named for it), so both versions are entered and both
    validations' games are rated; before, both were dealt as twin@1 and the second's were
    dropped."""
    a = tmp_path / "A"
    tokens = {"alice": add_author(a, "alice", "--per-hour", "100", "--store", postgres_url)}
    tokens |= {n: add_author(a, n, "--per-hour", "100") for n in ("bob", "carol")}
    play = ("--sandbox", "local", "--players", "3", "--no-ladder")
    first = Server(a, *play)
    servers = [first]
    try:
        for author, pick in (("bob", "-1"), ("carol", "0")):
            bot = plain_bot(tmp_path, f"{author}bot", pick)
            with first.client(tokens[author]) as client:
                reply = client.submit(f"{author}bot", pack_folder(bot))
                assert reply.outcome == pb.SUBMIT_ACCEPTED, reply
        with Store(a) as store:  # the season's deal key, which each host has a copy of
            Dealer.of(store, TournamentSettings.from_json(store.settings.get()))
        b = tmp_path / "B"
        shutil.copytree(a, b, ignore=shutil.ignore_patterns("run.lock", "site"))
        servers.append(Server(b, *play))
        folders = [
            bot_folder(tmp_path, f"twin{i}", SLOW_START.format(pick=pick))
            for i, pick in enumerate(("-1", "0"))
        ]

        def submit(i: int) -> pb.SubmitReply:
            with servers[i].client(tokens["alice"]) as client:
                return client.submit("twin", pack_folder(folders[i]))

        with concurrent.futures.ThreadPoolExecutor(2) as both:
            replies = list(both.map(submit, (0, 1)))
        for reply in replies:
            assert reply.outcome == pb.SUBMIT_ACCEPTED, reply
            assert "against the pool's bots" in reply.validation, reply
    finally:
        stopped = [server.stop() for server in servers]
    assert stopped == [0] * len(servers), [s.log for s in servers]
    # each validated once: no attempt failed on a number the other took
    assert not [line for s in servers for line in s.lines if "waiting:" in line]
    with Store(a, readonly=True) as store:
        twins = sorted(v.key for v in store.versions.all() if v.name == "twin")
        rated = sorted(s.description for s in store.schedules.all("validation-"))
        counted = {
            s.description: len(store.schedules.games(s.schedule_id, pending_only=True))
            for s in store.schedules.all("validation-")
        }
    assert twins == ["twin@1", "twin@2"]
    assert rated == ["validation twin@1", "validation twin@2"]
    assert set(counted.values()) == {0}  # every game of both recorded
