"""Fair play against hostile authors (issue 46's attacks, each against a real `referee serve` on
loopback or a real Dask worker): one author's bots seated together because the arena did not know
whose they were, bots that name somebody else as their author in their handshake, and code planted
in a worker's artifact cache under a victim's digest."""

from __future__ import annotations

import http.client
import json
import os
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
import pytest
from arena_support import Server, add_author, cli, db_rows, wait_until
from support import EXAMPLES, referee_env

from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.client import pack_folder
from take5_arena.service.errors import ClientError

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


PLANTED = """from take5 import Bot, run


class Planted(Bot):
    name, version, author = "planted", "1", "mallory"

    def pick_card(self, view):
        return max(view.hand)


if __name__ == "__main__":
    run(Planted())
"""

MALLORY = """import os
from pathlib import Path

from take5 import run
from take5.bots import LowestBot

# Once, as soon as the victim's code is unpacked in the worker's cache: other code under its digest.
TARGET, ONCE = Path({target!r}), Path({once!r})
if TARGET.exists() and not ONCE.exists():
    ONCE.write_text("planted")
    TARGET.write_text({planted!r})

if __name__ == "__main__":
    run(LowestBot())
"""


def test_code_planted_in_a_workers_cache_rates_nobody(tmp_path):
    """A bot that runs as the worker's user (the local sandbox) writes other code under its
    victim's digest in the worker's artifact cache, after the worker checked the folder when it
    unpacked it: the worker checks every seat's code again when each game starts and ends, so the
    games it touched are not recorded but reported as infrastructure (``artifact``), the victim's
    games that are recorded name its validated digest and were played by its code, and `verify
    --tournament` holds every record to it."""
    directory, cache = tmp_path / "T", tmp_path / "worker-cache"
    env = referee_env()
    env.pop("TAKE5_ARTIFACT_CACHE", None)

    def referee(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "take5_arena", *args],
            capture_output=True,
            text=True,
            env={**env, **extra},
            timeout=600,
        )

    def submit(folder: Path, name: str) -> None:
        done = referee(
            "submit", str(folder), "--name", name, "-t", str(directory), "--sandbox", "local"
        )
        assert done.returncode == 0, done.stderr

    submit(EXAMPLES / "lowest", "victim")
    (victim,) = db_rows(directory, "SELECT artifact FROM entrant_versions")[0]
    mallory = tmp_path / "mallory"
    mallory.mkdir()
    target = cache / victim.removeprefix("sha256:") / "bot" / "bot.py"
    once = tmp_path / "planted-once"
    source = MALLORY.format(target=str(target), once=str(once), planted=PLANTED)
    (mallory / "bot.py").write_text(source)
    submit(mallory, "mallory")

    run = referee(
        "tournament", "run", "-t", str(directory), "--players", "2", "--games", "4",
        "--sandbox", "local", "--executor", "dask:local", "-j", "1",
        "--no-progress", TAKE5_ARTIFACT_CACHE=str(cache),
    )  # fmt: skip
    assert once.exists(), run.stderr  # the attack happened
    assert run.returncode == 0, run.stderr + run.stdout
    records = [json.loads(r) for (r,) in db_rows(directory, "SELECT record FROM results")]
    assert records, run.stderr
    for record in records:
        victims = [s for s in record["seats"] if s["name"] == "victim"]
        assert [s["digest"] for s in victims] == [victim], record
        assert all(s["bot_name"].startswith("lowest") for s in victims), record  # not "planted"
    infra = db_rows(directory, "SELECT kind, detail FROM infra_failures")
    assert any(
        kind == "artifact" and "victim@1" in detail and "planted or changed" in detail
        for kind, detail in infra
    ), infra
    verified = referee("verify", "--tournament", str(directory))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    # a record that names other code for the victim's seat, or none, is not the validated version's
    game_id, text = db_rows(directory, "SELECT game_id, record FROM results ORDER BY seq")[0]
    doc = json.loads(text)
    seat = next(s for s in doc["seats"] if s["name"] == "victim")
    for edit in ("sha256:" + "0" * 64, None):
        if edit is None:
            del seat["digest"]
        else:
            seat["digest"] = edit
        con = sqlite3.connect(directory / "tournament.sqlite")
        with con:
            con.execute(
                "UPDATE results SET record = ? WHERE game_id = ?", (json.dumps(doc), game_id)
            )
        con.close()
        verified = referee("verify", "--tournament", str(directory))
        assert verified.returncode == 1, verified.stdout + verified.stderr
        assert "digest" in verified.stdout and victim in verified.stdout, verified.stdout


def test_a_name_that_looks_like_one_taken_is_refused(authors, tmp_path):
    """`alicebot.` beside `alicebot`, and the other ASCII look-alikes (`a1icebot`, `AIicebot`,
    `alice_bot_`), are refused for anyone, its holder included, before the upload is read; so is a
    look-alike of a house bot; a name that merely shares letters is not."""
    directory, tokens = authors
    done = cli(
        "submit", str(EXAMPLES / "random"), "--name", "heuristic", "-t", str(directory),
        "--sandbox", "local",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    server = Server(directory, "--sandbox", "local", "--players", "2", "--no-ladder")
    try:
        with server.client(tokens["alice"]) as alice, server.client(tokens["bob"]) as bob:
            # two bots of alice's, of two codes (one code plays under one name)
            for who, name, bot in [(alice, "alicebot", "lowest"), (alice, "alice-bot", "random")]:
                reply = who.submit(name, pack_folder(EXAMPLES / bot))
                assert reply.outcome == pb.SUBMIT_ACCEPTED, reply
            looks = ["alicebot.", "a1icebot", "AIicebot", "alice_bot_", "alice.bot", "heur1stic"]
            for who, name in [(bob, n) for n in looks] + [(alice, "alicebot.")]:
                with pytest.raises(ClientError) as caught:
                    who.submit(name, pack_folder(EXAMPLES / "lowest"))
                assert caught.value.code == grpc.StatusCode.PERMISSION_DENIED, (name, caught.value)
                assert "looks like" in str(caught.value), str(caught.value)
            reply = bob.submit("alicebots", pack_folder(EXAMPLES / "lowest"))
            assert reply.outcome == pb.SUBMIT_ACCEPTED, reply
    finally:
        assert server.stop() == 0, server.log
    assert sorted(db_rows(directory, "SELECT bot_name, author FROM arena_bots")) == [
        ("alice-bot", "alice"),
        ("alicebot", "alice"),
        ("alicebots", "bob"),
    ]


def test_files_with_secrets_or_token_hashes_are_owner_only_however_started(tmp_path):
    """The arena run by hand with a umask that leaves files readable by all (022), and with its
    accounts and secret folder left open by an earlier start: after `referee serve --web` and a
    backup, the accounts (and their WAL files), the deal key, the organiser's web token and the
    backup key are 0600 and the secret folder 0700."""
    directory = tmp_path / "T"
    old = os.umask(0o022)
    try:
        add_author(directory, "alice")
        (directory / "secret").mkdir(mode=0o755, exist_ok=True)
        os.chmod(directory / "secret", 0o755)
        os.chmod(directory / "accounts.sqlite", 0o644)  # an earlier start's
        server = Server(
            directory, "--sandbox", "local", "--players", "2", "--web", "127.0.0.1:0"
        )  # fmt: skip
        try:
            wait_until(
                lambda: any((directory / "secret").glob("deal-key-*")),
                what="the ladder's deal key",
                server=server,
            )
        finally:
            assert server.stop() == 0, server.log
        done = cli("backup", "-t", str(directory), str(tmp_path / "B"))
        assert done.returncode == 0, done.stderr
    finally:
        os.umask(old)
    secret = directory / "secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o700
    held = [*secret.iterdir(), *directory.glob("accounts.sqlite*")]
    names = {p.name for p in held}
    assert {"backup-key", "web-organiser-token", "accounts.sqlite"} <= names, names
    assert any(n.startswith("deal-key-") for n in names), names
    loose = {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in held}
    assert all(mode == "0o600" for mode in loose.values()), loose


def test_redirects_never_go_to_the_host_a_request_names(authors):
    """`GET /games/` with a foreign Host header used to redirect to that host; every redirect is
    now a path on this site, and a path that would read as another host is one."""
    directory, _tokens = authors
    server = Server(directory, "--sandbox", "local", "--no-ladder", "--web", "127.0.0.1:0")
    try:
        port = int(server.wait_for(r"web pages on http://127\.0\.0\.1:(\d+)/").group(1))
        for path, where in [
            ("/games/", "/games"),
            ("/games/?page=2", "/games?page=2"),
            ("//evil.example/", "/evil.example"),
            ("/%5Cevil.example/", "/evil.example"),
            ("/index.html", "/"),
        ]:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            try:
                conn.request("GET", path, headers={"Host": "evil.example"})
                reply = conn.getresponse()
                reply.read()
            finally:
                conn.close()
            assert 300 <= reply.status < 400, (path, reply.status)
            assert reply.getheader("location") == where, (path, reply.getheader("location"))
    finally:
        assert server.stop() == 0, server.log


def test_a_correct_token_is_never_refused_for_someone_elses_wrong_guesses(authors):
    """A stranger sends wrong secrets for alice's token id, twenty a second, from the start of the
    server: every one of alice's own calls is answered (the first one, which the server had not
    seen before, used to be refused when it came within a second of a wrong guess)."""
    directory, tokens = authors
    server = Server(directory, "--sandbox", "local", "--players", "2", "--no-ladder")
    stop = threading.Event()
    guesses = []

    def guess() -> None:
        forged = tokens["alice"][:-8] + "AAAAAAAA"
        with server.client(forged) as stranger:
            while not stop.is_set():
                try:
                    stranger.my_bots()
                except ClientError as error:
                    guesses.append(error.code)
                stop.wait(0.05)

    thread = threading.Thread(target=guess, daemon=True)
    try:
        thread.start()
        wait_until(lambda: len(guesses) >= 5, what="the stranger's guesses", server=server)
        with server.client(tokens["alice"]) as alice:
            for _ in range(10):
                assert alice.my_bots().author == "alice"
                time.sleep(0.1)
    finally:
        stop.set()
        thread.join(30)
        assert server.stop() == 0, server.log
    assert set(guesses) == {grpc.StatusCode.UNAUTHENTICATED}, set(guesses)
