"""A passed version and the validation games that rate it are stored in one transaction (issue
46): a process that ends between storing the games and entering the version (here: an error raised
after the first game is written) leaves neither, on SQLite and on PostgreSQL; before, it left the
version with its validation schedule's games pending forever, which a reveal then refused
(``--abandon-pending``). Submitted again, the bot passes and is rated as if nothing happened."""

from __future__ import annotations

import pytest
from arena_support import plain_bot

from take5_arena.referee.store import Store
from take5_arena.referee.store.results import Results
from take5_arena.referee.tournament.plan.settings import TournamentSettings
from take5_arena.referee.tournament.submission import VALIDATION_PREFIX, submit


class Crash(RuntimeError):
    """The process ending between two writes."""


def test_a_crash_while_storing_validation_games_leaves_no_version_and_no_pending_game(
    tmp_path, monkeypatch, backend_url
):
    directory = tmp_path / "T"
    with Store(directory, create=True, url=backend_url) as store:
        settings = TournamentSettings.from_json({}).updated({"players": 3, "sandbox": "local"})
        store.settings.set(settings.to_json())
    for author, pick in (("bob", "-1"), ("carol", "0")):
        submit(directory, plain_bot(tmp_path, f"{author}bot", pick), f"{author}bot", author=author)
    alice = plain_bot(tmp_path, "alicebot", "len(view.hand) // 2")

    record_game = Results.record_game
    written: list[str] = []

    def crash_after_one(self: Results, game_id: str, *args: object, **kwargs: object) -> bool:
        if written:
            raise Crash("the process ends here")
        written.append(game_id)
        return record_game(self, game_id, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Results, "record_game", crash_after_one)
    with pytest.raises(Crash):
        submit(directory, alice, "alicebot", author="alice", pool=True)
    assert written, "the validation games were not being stored"
    with Store(directory) as store:
        assert [v.key for v in store.versions.all()] == ["bobbot@1", "carolbot@1"]
        assert store.schedules.all(VALIDATION_PREFIX) == []
        assert store.schedules.pending_games(VALIDATION_PREFIX) == {}

    monkeypatch.setattr(Results, "record_game", record_game)
    done = submit(directory, alice, "alicebot", author="alice", pool=True)
    assert (done.version.key, done.created, done.rated) == ("alicebot@1", True, 3)
    with Store(directory) as store:
        assert [s.description for s in store.schedules.all(VALIDATION_PREFIX)] == [
            "validation alicebot@1"
        ]
        assert store.schedules.pending_games(VALIDATION_PREFIX) == {}
