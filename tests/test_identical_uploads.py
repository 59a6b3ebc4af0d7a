"""Code an author already has playing is not validated and rated again (issue 46): against a real
`referee serve`, an author who sends the same code again (the same folder, or repacked into an
archive whose bytes differ) gets "unchanged" naming the version that plays, with no validation
game played or rated; the same code under a second name, and an old version sent back after a
newer one replaced it, are refused naming the version; a withdrawn bot's code is validated
afresh. Before, each such upload was validated again and its games rated: padding an author's
games, or fishing for good validation deals, bounded only by the hourly limit."""

from __future__ import annotations

from pathlib import Path

from arena_support import (
    PLAIN_BOT,
    Server,
    add_author,
    bot_folder,
    db_rows,
    make_tgz,
    member,
    packed,
)

from take5_arena.referee.store import Store
from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.client import pack_folder


def _seats(directory: Path) -> int:
    return len(db_rows(directory, "SELECT game_id FROM seat_results"))


def test_an_author_cannot_pad_games_by_sending_the_same_code_again(tmp_path):
    directory = tmp_path / "T"
    names = ("alice", "bob", "carol", "dave")
    tokens = {n: add_author(directory, n, "--per-hour", "100") for n in names}
    server = Server(directory, "--sandbox", "local", "--players", "3", "--no-ladder")
    try:
        for author, pick in (("bob", "-1"), ("carol", "0"), ("dave", "len(view.hand) // 2")):
            text = PLAIN_BOT.format(name=f"{author}bot", pick=pick)
            with server.client(tokens[author]) as client:
                reply = client.submit(
                    f"{author}bot", pack_folder(bot_folder(tmp_path, f"{author}bot", text))
                )
                assert reply.outcome == pb.SUBMIT_ACCEPTED, reply
        code_a = PLAIN_BOT.format(name="alicebot", pick="-2 if len(view.hand) > 1 else 0")
        code_b = PLAIN_BOT.format(name="alicebot", pick="1 if len(view.hand) > 1 else 0")
        with server.client(tokens["alice"]) as alice:
            first = alice.submit("alicebot", pack_folder(bot_folder(tmp_path, "a", code_a)))
            assert first.outcome == pb.SUBMIT_ACCEPTED, first
            assert "against the pool's bots" in first.validation, first
            seats = _seats(directory)
            assert seats > 0  # its validation games were rated

            # the same folder again, and the same code in an archive of other bytes
            again = alice.submit("alicebot", pack_folder(bot_folder(tmp_path, "a2", code_a)))
            repacked = packed(
                make_tgz([member("bot.py", code_a.encode(), mtime=1_234_567, mode=0o600)])
            )
            assert repacked.sha256 != pack_folder(tmp_path / "bots" / "a").sha256
            for reply in (again, alice.submit("alicebot", repacked)):
                assert reply.outcome == pb.SUBMIT_UNCHANGED, reply
                assert reply.version == 1
                assert "alicebot@1, which plays now: not validated again" in reply.validation
            assert _seats(directory) == seats  # no game played, none rated
            unpacked = directory / "arena" / "bots" / "alicebot"
            assert len(list(unpacked.iterdir())) == 1  # the repacked upload's folder is gone

            # the same code under a second name: refused, naming the version that plays it
            twin = alice.submit("alicetwin", pack_folder(bot_folder(tmp_path, "a3", code_a)))
            assert twin.outcome == pb.SUBMIT_REFUSED, twin
            assert "already plays as your alicebot@1" in twin.reason, twin

            # a new version, then the old code back: refused, naming both
            second = alice.submit("alicebot", pack_folder(bot_folder(tmp_path, "b", code_b)))
            assert (second.outcome, second.version) == (pb.SUBMIT_ACCEPTED, 2), second
            seats = _seats(directory)
            back = alice.submit("alicebot", pack_folder(bot_folder(tmp_path, "a4", code_a)))
            assert back.outcome == pb.SUBMIT_REFUSED, back
            assert "alicebot@1, which alicebot@2 replaced" in back.reason, back
            assert _seats(directory) == seats

            # withdrawn, its last code comes back through a validation of its own
            alice.withdraw("alicebot")
            back = alice.submit("alicebot", pack_folder(bot_folder(tmp_path, "b2", code_b)))
            assert back.outcome == pb.SUBMIT_UNCHANGED, back
            assert "smoke games without a fault" in back.validation, back
            assert _seats(directory) > seats

    finally:
        assert server.stop() == 0, server.log
    with Store(directory, readonly=True) as store:
        assert [v.key for v in store.versions.current() if v.author == "alice"] == ["alicebot@2"]
        assert not [v for v in store.versions.all() if v.name == "alicetwin"]
