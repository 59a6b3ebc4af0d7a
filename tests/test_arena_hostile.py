"""The arena against its own authors (issue 24's attacks, each rerun against a real `referee serve`
on loopback): idle upload streams, a house bot taken over, names squatted by case or by a trailing
newline, refused uploads left on disk, and the arena's own failures counted as the author's."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from arena_support import Server, add_author, cli, db_rows, wait_until
from support import EXAMPLES, referee_env

from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.api import arena_pb2_grpc as pb_grpc
from take5_arena.service.client import pack_folder
from take5_arena.service.errors import ClientError

SILENT_STREAMS = 16


def _serve(directory: Path, *extra: str, env: dict[str, str] | None = None) -> Server:
    return Server(directory, "--sandbox", "local", "--players", "2", "--no-ladder", *extra, env=env)


def _refused_bot(tmp_path: Path) -> Path:
    """A bot that fails its handshake (the arena refuses it for its own fault)."""
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "bot.py").write_text("raise SystemExit('no, thank you')\n")
    return folder


@pytest.fixture
def arena(tmp_path):
    directory = tmp_path / "T"
    tokens = {n: add_author(directory, n, "--per-hour", "100") for n in ("alice", "bob", "carol")}
    yield directory, tokens


def test_silent_upload_streams_do_not_stall_another_author(arena):
    """16 SubmitBot streams that never send their first message, each on its own connection: the
    author's first uploads wait for a metadata deadline, the rest are refused at once, and another
    author's Standings, ListMyBots and a whole submission are answered while they are held."""
    directory, tokens = arena
    server = _serve(directory)
    release = threading.Event()

    def silence() -> Iterator[pb.SubmitBotRequest]:
        release.wait(120)
        return
        yield  # a generator that sends nothing until released

    # Each stream on a connection of its own (channels of one process share one otherwise).
    own = [("grpc.use_local_subchannel_pool", 1)]
    channels = [grpc.insecure_channel(server.address, options=own) for _ in range(SILENT_STREAMS)]
    try:
        futures = [
            pb_grpc.ArenaStub(ch).SubmitBot.future(
                silence(), metadata=(("authorization", f"Bearer {tokens['alice']}"),), timeout=120
            )
            for ch in channels
        ]
        with server.client(tokens["bob"]) as bob:
            standings = bob.standings()
            assert standings.games == 0
            assert bob.my_bots().author == "bob"
            reply = bob.submit("lowest", pack_folder(EXAMPLES / "lowest"))
            assert reply.outcome == pb.SUBMIT_ACCEPTED, reply
        codes = []
        for f in futures:
            try:
                f.result(timeout=120)
                codes.append(None)
            except grpc.RpcError as error:
                codes.append((error.code(), error.details()))
        assert all(c is not None and c[0] == grpc.StatusCode.RESOURCE_EXHAUSTED for c in codes), (
            codes
        )
        refused_at_once = [c for c in codes if c and "uploads in progress" in c[1]]
        cut_off = [c for c in codes if c and "no metadata within" in c[1]]
        assert len(refused_at_once) >= SILENT_STREAMS - 2 and cut_off, codes
    finally:
        release.set()
        for ch in channels:
            ch.close()
        assert server.stop() == 0, server.log


def test_house_bots_and_names_cannot_be_taken(arena, tmp_path):
    """A bot the organiser entered stays the house's; names are unique by case; `x\\n` and other
    names outside the rule are refused before anything is stored."""
    directory, tokens = arena
    done = cli(
        "submit",
        str(EXAMPLES / "random"),
        "--name",
        "HouseRandom",
        "-t",
        str(directory),
        "--sandbox",
        "local",
    )
    assert done.returncode == 0, done.stderr
    server = _serve(directory)
    try:
        with server.client(tokens["alice"]) as alice, server.client(tokens["bob"]) as bob:
            for name in ("HouseRandom", "houserandom"):
                with pytest.raises(ClientError) as caught:
                    bob.submit(name, pack_folder(EXAMPLES / "lowest"))
                assert caught.value.code == grpc.StatusCode.PERMISSION_DENIED, caught.value
            with pytest.raises(ClientError) as caught:
                bob.withdraw("HouseRandom")
            assert caught.value.code in (
                grpc.StatusCode.PERMISSION_DENIED,
                grpc.StatusCode.NOT_FOUND,
            ), caught.value

            reply = alice.submit("alicebot", pack_folder(EXAMPLES / "random"))
            assert reply.outcome == pb.SUBMIT_ACCEPTED, reply
            with pytest.raises(ClientError) as caught:
                bob.submit("AliceBot", pack_folder(EXAMPLES / "lowest"))
            assert caught.value.code == grpc.StatusCode.PERMISSION_DENIED, caught.value

            for bad in ("x\n", "x/y", "..", "é", "a" * 100, ""):
                with pytest.raises(ClientError) as caught:
                    bob.submit(bad, pack_folder(EXAMPLES / "lowest"))
                assert caught.value.code == grpc.StatusCode.INVALID_ARGUMENT, (bad, caught.value)
                assert "\n" not in str(caught.value)
        # The house holds its bots as entrants no author claimed: no author row names them.
        assert db_rows(directory, "SELECT bot_name, author FROM arena_bots") == [
            ("alicebot", "alice")
        ]
        assert db_rows(directory, "SELECT name FROM entrants ORDER BY name") == [
            ("HouseRandom",),
            ("alicebot",),
        ]
        assert not (directory / "arena" / "bots" / "x\n").exists()
        assert sorted(p.name for p in (directory / "arena" / "bots").iterdir()) == ["alicebot"]
    finally:
        assert server.stop() == 0, server.log


def test_a_refused_upload_leaves_nothing_and_claims_no_name(arena, tmp_path):
    directory, tokens = arena
    server = _serve(directory)
    try:
        with server.client(tokens["carol"]) as carol, server.client(tokens["bob"]) as bob:
            reply = carol.submit("squat", pack_folder(_refused_bot(tmp_path)))
            assert reply.outcome == pb.SUBMIT_REFUSED, reply
            assert str(directory) not in reply.reason  # the arena's own paths stay its own
            spool = directory / "arena"
            assert list((spool / "uploads").iterdir()) == []
            assert not (spool / "bots" / "squat").exists()
            mine = carol.my_bots()
            assert [(b.name, b.state) for b in mine.bots] == [("squat", "refused")], mine
            reply = bob.submit("squat", pack_folder(EXAMPLES / "lowest"))
            assert reply.outcome == pb.SUBMIT_ACCEPTED, reply
        assert db_rows(directory, "SELECT bot_name, author FROM arena_bots") == [("squat", "bob")]
    finally:
        assert server.stop() == 0, server.log


def test_an_infrastructure_failure_is_not_the_authors(arena, tmp_path):
    """No Docker engine at validation: the submission waits (pending, with the reason), is never
    refused nor shown among the author's faults, and is accepted once the arena can validate it."""
    directory, tokens = arena
    dead = referee_env(DOCKER_HOST=f"unix://{tmp_path}/no-engine.sock")
    server = Server(directory, "--sandbox", "docker", "--players", "2", "--no-ladder", env=dead)
    try:
        with server.client(tokens["alice"]) as alice:
            sent = alice.upload("patient", pack_folder(EXAMPLES / "lowest"))
            assert sent.outcome == pb.SUBMIT_PENDING
            said: list[str] = []
            reply = alice.follow(sent, on_wait=lambda r: said.append(r.waiting), timeout=60)
            assert reply.outcome == pb.SUBMIT_PENDING, reply
            assert said and "engine" in said[0].lower(), said
            wait_until(
                lambda: (
                    db_rows(
                        directory,
                        "SELECT attempts FROM arena_submissions WHERE id = ?",
                        (sent.submission_id,),
                    )[0][0]
                    >= 2
                ),
                what="a second attempt",
                server=server,
            )
            mine = alice.my_bots()
            assert [(s.bot_name, s.status) for s in mine.submissions] == [("patient", "received")]
            assert "refused" not in [b.state for b in mine.bots], mine
        assert db_rows(
            directory, "SELECT status FROM arena_submissions WHERE id = ?", (sent.submission_id,)
        ) == [("received",)]
    finally:
        assert server.stop() == 0, server.log
    server = _serve(directory)  # an engine again (here: the local sandbox)
    try:
        with server.client(tokens["alice"]) as alice:
            reply = alice.follow(alice.submission(sent.submission_id), timeout=240)
            assert reply.outcome == pb.SUBMIT_ACCEPTED, reply
    finally:
        assert server.stop() == 0, server.log


def test_a_deferred_submission_counts_once_and_server_limits_are_options(arena, tmp_path):
    """`serve --max-per-hour 2 --first-message-seconds 1` with no Docker engine: the ceilings are
    what the author sees and meets; a submission retried for the arena's own failure counts once
    against the hourly limit however often it is tried (the second upload is received, the third
    refused); a silent upload is cut off at the organiser's deadline."""
    directory, tokens = arena
    dead = referee_env(DOCKER_HOST=f"unix://{tmp_path}/no-engine.sock")
    server = Server(
        directory,
        "--sandbox",
        "docker",
        "--players",
        "2",
        "--no-ladder",
        "--max-per-hour",
        "2",
        "--first-message-seconds",
        "1",
        env=dead,
    )
    try:
        with server.client(tokens["alice"]) as alice:
            assert alice.my_bots().limits.max_submissions_per_hour == 2  # her own is 100
            first = alice.upload("patient", pack_folder(EXAMPLES / "lowest"))
            assert first.outcome == pb.SUBMIT_PENDING
            wait_until(
                lambda: (
                    db_rows(
                        directory,
                        "SELECT attempts FROM arena_submissions WHERE id = ?",
                        (first.submission_id,),
                    )[0][0]
                    >= 2
                ),
                what="a second attempt",
                server=server,
            )
            second = alice.upload("other", pack_folder(EXAMPLES / "random"))
            assert second.outcome == pb.SUBMIT_PENDING
            with pytest.raises(ClientError) as refused:
                alice.upload("third", pack_folder(EXAMPLES / "random"))
            assert refused.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "2 submissions in the last hour" in str(refused.value), refused.value
            mine = alice.my_bots()
            # pending (received, or being tried again just now), never refused
            assert sorted(s.bot_name for s in mine.submissions) == ["other", "patient"]
            assert {s.status for s in mine.submissions} <= {"received", "validating"}, mine

        def silence() -> Iterator[pb.SubmitBotRequest]:
            threading.Event().wait(30)
            return
            yield

        with grpc.insecure_channel(server.address) as channel, pytest.raises(grpc.RpcError) as cut:
            pb_grpc.ArenaStub(channel).SubmitBot(
                silence(), metadata=(("authorization", f"Bearer {tokens['bob']}"),), timeout=60
            )
        assert cut.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "no metadata within 1 s" in cut.value.details(), cut.value.details()
    finally:
        assert server.stop() == 0, server.log


def test_the_organiser_withdraws_bans_and_revokes_with_a_reason(arena):
    """`authors withdraw/ban BOT --reason` (any owner's bot, the house's too) and `authors revoke`
    (every bot of the author withdrawn): the ladder loses them, the author reads the reason in
    `my-bots` (escaped: a reason is shown in terminals), and a banned name cannot come back."""
    directory, tokens = arena
    done = cli(
        "submit", str(EXAMPLES / "random"), "--name", "House", "-t", str(directory),
        "--sandbox", "local",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    server = _serve(directory)
    try:
        with server.client(tokens["alice"]) as alice, server.client(tokens["bob"]) as bob:
            assert alice.submit("alicebot", pack_folder(EXAMPLES / "lowest")).outcome == (
                pb.SUBMIT_ACCEPTED
            )
            assert bob.submit("bobbot", pack_folder(EXAMPLES / "lowest")).outcome == (
                pb.SUBMIT_ACCEPTED
            )
        with server.client(tokens["carol"]) as carol:
            assert carol.submit("carolbot", pack_folder(EXAMPLES / "random")).outcome == (
                pb.SUBMIT_ACCEPTED
            )
        t = str(directory)
        reason = "copied from bobbot \x1b[2J"
        for args in (
            ("withdraw", "alicebot", "--reason", reason),
            ("ban", "bobbot", "--reason", "stolen code"),
            ("withdraw", "House", "--reason", "retired"),
            ("revoke", "carol", "--reason", "left"),
        ):
            done = cli("authors", *args, "-t", t)
            assert done.returncode == 0, done.stderr
        assert "bots withdrawn: carolbot" in done.stdout, done.stdout
        states = dict(db_rows(directory, "SELECT name, active FROM entrants"))
        assert states == {"House": 0, "alicebot": 0, "bobbot": 0, "carolbot": 0}, states

        mine = cli("my-bots", "--server", server.address, token=tokens["alice"])
        assert mine.returncode == 0, mine.stderr
        assert "copied from bobbot" in mine.stdout and "\x1b" not in mine.stdout, mine.stdout
        with server.client(tokens["bob"]) as bob:
            with pytest.raises(ClientError) as banned:
                bob.submit("bobbot", pack_folder(EXAMPLES / "random"))
            assert banned.value.code == grpc.StatusCode.PERMISSION_DENIED
            assert "stolen code" in str(banned.value)
            with pytest.raises(ClientError) as house:
                bob.submit("House", pack_folder(EXAMPLES / "random"))
            assert house.value.code == grpc.StatusCode.PERMISSION_DENIED
        with server.client(tokens["alice"]) as alice:  # withdrawn, not banned: it may come back
            assert alice.submit("alicebot", pack_folder(EXAMPLES / "random")).outcome == (
                pb.SUBMIT_ACCEPTED
            )
        listed = cli("authors", "list", "-t", t)
        assert listed.returncode == 0, listed.stderr
        assert re.search(r"bob\s+bobbot\s+banned", listed.stdout), listed.stdout
        assert re.search(r"\(house\)\s+House\s+withdrawn", listed.stdout), listed.stdout
    finally:
        assert server.stop() == 0, server.log


def test_a_ladder_that_cannot_fill_a_table_says_so(arena, tmp_path):
    """One active bot for tables of 3: the ladder says in its log and in `tournament status` why no
    game is played; `my-bots` tells a refused, never-accepted name apart from a withdrawn one."""
    directory, tokens = arena
    server = Server(directory, "--sandbox", "local", "--players", "3", "-j", "1")
    try:
        with server.client(tokens["alice"]) as alice:
            assert alice.submit("lonely", pack_folder(EXAMPLES / "lowest")).outcome == (
                pb.SUBMIT_ACCEPTED
            )
            assert alice.submit("broken", pack_folder(_refused_bot(tmp_path))).outcome == (
                pb.SUBMIT_REFUSED
            )
        server.wait_for(r"ladder: waiting for bots: 1 active, a table needs 3; no games are played")
        status = cli("tournament", "status", "-t", str(directory))
        assert status.returncode == 0, status.stderr
        assert "waiting for bots: 1 active, a table needs 3" in status.stdout, status.stdout
        done = cli("withdraw", "lonely", "--server", server.address, token=tokens["alice"])
        assert done.returncode == 0, done.stderr
        mine = cli("my-bots", "--server", server.address, token=tokens["alice"])
        assert mine.returncode == 0, mine.stderr
        assert "broken (refused: never accepted, the name is not yours)" in mine.stdout, mine.stdout
        assert "lonely (withdrawn)" in mine.stdout, mine.stdout
    finally:
        assert server.stop() == 0, server.log
