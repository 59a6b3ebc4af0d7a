"""A refused candidate's code does not stay in the process's artifact cache (issue 46): its smoke
tables against the pool unpack its archive there (as a rated table's seats are), and a refusal
removes it again, while the pool's bots, and a candidate that passed, stay cached."""

from __future__ import annotations

from pathlib import Path

import pytest
from arena_support import plain_bot

from take5_arena.referee.artifacts import CACHE_ENV, is_cached, pack
from take5_arena.referee.sandbox import context
from take5_arena.referee.store import Store
from take5_arena.referee.tournament.errors import SubmitRefusedError
from take5_arena.referee.tournament.plan.settings import TournamentSettings
from take5_arena.referee.tournament.submission import submit


def _digest(folder: Path) -> str:
    return pack(context.scan(folder)).digest


def test_a_refused_candidates_archive_leaves_the_artifact_cache(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(cache))
    directory = tmp_path / "T"
    with Store(directory, create=True) as store:
        settings = TournamentSettings.from_json({}).updated({"players": 3, "sandbox": "local"})
        store.settings.set(settings.to_json())
    pool = [plain_bot(tmp_path, f"{a}bot", pick) for a, pick in (("bob", "-1"), ("carol", "0"))]
    for author, folder in zip(("bob", "carol"), pool, strict=True):
        submit(directory, folder, folder.name, author=author, pool=True)
    # its 4th card is past the end of its hand from the first turn on: refused in a smoke game
    bad = plain_bot(tmp_path, "badbot", "10 + 4")
    with pytest.raises(SubmitRefusedError, match="smoke game"):
        submit(directory, bad, "badbot", author="alice", pool=True)
    assert not is_cached(_digest(bad), cache)
    assert not [p for p in cache.iterdir() if p.name.startswith(".")]  # nothing left aside
    good = plain_bot(tmp_path, "goodbot", "len(view.hand) // 2")
    done = submit(directory, good, "goodbot", author="alice", pool=True)
    assert done.rated == 3
    assert all(is_cached(_digest(f), cache) for f in (*pool, good))
