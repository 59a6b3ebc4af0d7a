"""The tournament store: versions, schedules, one transaction per game, never twice."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from typing import Any

import pytest

from take5 import RandomPlayer, Settings, play_game
from take5_arena.referee.store import Store, StoreError
from take5_arena.referee.store.postgres import PgConnection


def record_for(game_id: str, players: int, seed: int) -> dict:
    game = play_game(
        [RandomPlayer(seed + i) for i in range(players)], Settings(players=players), seed
    )
    return game.record(game_id=game_id, seats=[{"name": f"p{i}"} for i in range(players)])


@pytest.fixture
def store(tmp_path, backend_url):
    """A new store, once on each backend (SQLite, PostgreSQL: conftest.py's backend_url)."""
    with Store(tmp_path / "t", create=True, url=backend_url) as s:
        yield s


def scheduled(store: Store, n_games: int = 3) -> tuple[str, list[int]]:
    a, _ = store.versions.add("alpha", source_hash="a1", bot_dir="/bots/a", kind="python")
    b, _ = store.versions.add("beta", source_hash="b1", bot_dir="/bots/b", kind="python")
    games = [
        {
            "game_id": f"g{i}",
            "table": 0,
            "rotation": i % 2,
            "deal_seed": 7,
            "duplicate_set": "g0",
            "seats": [a.id, b.id],
            "settings": {"variant": "standard"},
        }
        for i in range(n_games)
    ]
    assert store.schedules.save(
        "s1", games, description="test", settings={}, entrants=["alpha@1", "beta@1"]
    )
    return "s1", [a.id, b.id]


def test_missing_directory_is_not_a_tournament(tmp_path):
    with pytest.raises(StoreError, match="not a tournament directory"):
        Store(tmp_path / "nothing")


def raw(store: Store) -> Any:
    """A connection of its own to the store's database: what anyone with the file (or the
    database's owner) can do to it (the store's own connection is private), foreign keys not
    enforced (as in any new SQLite connection; PostgreSQL: triggers off, as a superuser may)."""
    if store.url is None:
        return sqlite3.connect(store.path, isolation_level=None)
    db = PgConnection(store.url, readonly=False)
    db.execute("SET session_replication_role = replica")
    return db


def test_wal_mode(tmp_path):
    with Store(tmp_path / "t", create=True) as store, closing(raw(store)) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


@pytest.mark.postgres
def test_a_store_url_is_kept_in_the_directory(tmp_path, postgres_url):
    """`--store URL` names the database once, at creation; every later open of the directory
    finds it there (owner-only: a URL may hold a password), and a SQLite directory refuses one."""
    with Store(tmp_path / "t", create=True, url=postgres_url) as store:
        store.settings.set({"players": 4})
    pointer = tmp_path / "t" / "store.url"
    assert pointer.read_text().strip() == postgres_url and pointer.stat().st_mode & 0o077 == 0
    with Store(tmp_path / "t", readonly=True) as reader:
        assert reader.url == postgres_url and reader.settings.get() == {"players": 4}
    Store(tmp_path / "s", create=True).close()
    with pytest.raises(StoreError, match=r"already keeps its store in tournament\.sqlite"):
        Store(tmp_path / "s", create=True, url=postgres_url)


def test_versions(store):
    v1, new = store.versions.add(
        "alpha", source_hash="h1", bot_dir="/a", kind="python", image_id="sha256:1"
    )
    assert new and v1.version == 1 and v1.key == "alpha@1"
    same, new = store.versions.add(
        "alpha", source_hash="h1", bot_dir="/a", kind="python", image_id="sha256:2"
    )
    assert not new and same.id == v1.id and same.image_id == "sha256:2"
    v2, new = store.versions.add("alpha", source_hash="h2", bot_dir="/a", kind="python")
    assert new and v2.version == 2
    store.versions.add("beta", source_hash="h1", bot_dir="/b", kind="python")
    assert [v.key for v in store.versions.current()] == ["alpha@2", "beta@1"]
    assert [v.key for v in store.versions.all()] == ["alpha@1", "alpha@2", "beta@1"]
    assert store.versions.withdraw("beta")
    assert [v.key for v in store.versions.current()] == ["alpha@2"]


def test_a_counter_hands_out_each_number_once(store):
    """settings.take numbers the arena's validation tables (no deal identity dealt twice): the
    same atomic statement on both backends."""
    assert [store.settings.take("validation") for _ in range(3)] == [0, 1, 2]
    assert store.settings.take("other") == 0
    assert store.settings.take("validation") == 3


def test_settings_roundtrip(store):
    store.settings.set({"players": 3, "games": None})
    assert store.settings.get() == {"players": 3, "games": None}


def test_record_game_once(store):
    sid, _ = scheduled(store)
    record = record_for("g0", 2, 7)
    assert store.results.record_game("g0", record, run_id="r1", seconds=0.1)
    assert not store.results.record_game("g0", record, run_id="r2")  # never twice
    assert store.results.recorded_count() == 1
    assert store.schedules.progress(sid) == {"total": 3, "done": 1, "infra_failures": 0}
    assert [g.game_id for g in store.schedules.games(sid, pending_only=True)] == ["g1", "g2"]
    assert store.records.get("g0")["game_id"] == "g0"
    (row,) = store.results.seat_results(sid)
    assert row.scores == tuple(record["result"]["scores"]) and row.duplicate_set == "g0"


def test_unique_constraint_in_the_schema(store):
    scheduled(store)
    store.results.record_game("g1", record_for("g1", 2, 1))
    with closing(raw(store)) as db, pytest.raises(sqlite3.IntegrityError):
        db.execute("INSERT INTO results(game_id, record, finished_at) VALUES ('g1', '{}', 'now')")


def test_a_failed_write_leaves_nothing(store):
    """One transaction per game: a failure half-way (here: a seat row that breaks a constraint)
    leaves neither the result nor any seat row nor the status change."""
    scheduled(store)
    with closing(raw(store)) as db:  # foreign keys off, as in any new connection
        db.execute("INSERT INTO seat_results VALUES ('g2', 1, 1, 0, 1, 0, '[]')")  # a stray row
    with pytest.raises(sqlite3.IntegrityError):
        store.results.record_game("g2", record_for("g2", 2, 2))
    assert store.results.recorded_count() == 0
    assert store.schedules.game("g2").status == "pending"
    with closing(raw(store)) as db:
        assert db.execute("SELECT COUNT(*) FROM seat_results WHERE seat = 0").fetchone()[0] == 0


def test_the_games_still_to_play_are_read_by_schedule_in_one_query(store):
    """What each referee on one ladder picks up from the store (take5_arena/service/ladder.py):
    the games of the schedules of a prefix that nobody recorded yet, in schedule order."""
    sid, _ = scheduled(store)
    assert store.schedules.pending_games("s") == {sid: ["g0", "g1", "g2"]}
    store.results.record_game("g1", record_for("g1", 2, 1))
    assert store.schedules.pending_games("s") == {sid: ["g0", "g2"]}
    assert store.schedules.pending_games("ladder-") == {}


def test_infra_failures_keep_the_game_pending(store):
    sid, _ = scheduled(store)
    store.results.record_infra_failure("g1", "engine-unavailable", "no engine", run_id="r1")
    game = store.schedules.game("g1")
    assert (
        game.status == "pending" and game.attempts == 1 and "engine-unavailable" in game.last_error
    )
    assert store.schedules.progress(sid)["infra_failures"] == 1
    assert store.results.infra_failures(sid)[0]["kind"] == "engine-unavailable"


def test_schedule_saved_once_and_games_shared(store):
    sid, ids = scheduled(store)
    assert not store.schedules.save(sid, [], description="again", settings={}, entrants=[])
    other = [
        {
            "game_id": "g0",
            "table": 5,
            "rotation": 0,
            "deal_seed": 7,
            "duplicate_set": "g0",
            "seats": ids,
            "settings": {},
        }
    ]
    assert store.schedules.save("s2", other, description="", settings={}, entrants=[])
    assert store.schedules.current()["schedule_id"] == "s2"
    assert store.schedules.game("g0").table_no == 0  # a known game keeps its row


def test_runs(store):
    store.runs.begin("r1", schedule_id="s", settings={}, games=4)
    store.runs.heartbeat("r1", 2)
    store.runs.end("r1", "finished", 4)
    run = store.runs.last()
    assert run["status"] == "finished" and run["done"] == 4


def test_readonly_reader_sees_commits(store, tmp_path):
    scheduled(store)
    store.results.record_game("g0", record_for("g0", 2, 3))
    with Store(tmp_path / "t", readonly=True) as reader:
        assert reader.results.recorded_count() == 1


def test_a_snapshot_sees_no_game_recorded_after_its_first_read(store, tmp_path):
    """The integrity checks read several tables; a game recorded between two of their reads made
    a live arena's publication look like a store with a deleted game (Store.snapshot)."""
    scheduled(store)
    store.results.record_game("g0", record_for("g0", 2, 3))
    with Store(tmp_path / "t", readonly=True) as reader:
        with reader.snapshot():
            assert reader.results.recorded_count() == 1
            store.results.record_game("g1", record_for("g1", 2, 4))  # another connection writes
            assert reader.results.recorded_count() == 1
            assert reader.audit.last_seq() == 1
        assert reader.results.recorded_count() == 2


def test_a_game_given_up_at_its_keys_reveal_is_never_recorded(store):
    """Revealing a deal key gives up its games still to play (their deals become public): a
    referee that finishes one afterwards (a table still in flight then) records nothing."""
    a, _ = store.versions.add("alpha", source_hash="a1", bot_dir="/bots/a", kind="python")
    b, _ = store.versions.add("beta", source_hash="b1", bot_dir="/bots/b", kind="python")
    store.deal_keys.begin(1, "c" * 64)
    games = [
        {
            "game_id": f"k{i}",
            "table": 0,
            "rotation": i,
            "deal_seed": 7,
            "duplicate_set": "k0",
            "seats": [a.id, b.id],
            "settings": {"variant": "standard"},
            "deal_season": 1,
            "deal_id": f"id{i}",
        }
        for i in range(2)
    ]
    store.schedules.save("s1", games, description="t", settings={}, entrants=["alpha@1"])
    assert store.results.record_game("k0", record_for("k0", 2, 7)) is True
    assert store.deal_keys.abandon_pending(1) == 1
    assert store.results.record_game("k1", record_for("k1", 2, 7)) is False
    assert store.results.recorded_count() == 1


def test_an_authors_versions_of_one_code_by_archive_or_by_image(store):
    """``store.versions.of_code``: the arena's look-up before it validates a submission again
    (take5_arena/referee/tournament/copies.py), on both backends."""
    add = store.versions.add
    add("alpha", source_hash="h1", bot_dir="/a", kind="python", image_id="i1", author="al")
    add("alpha", source_hash="h2", bot_dir="/a", kind="python", image_id="i2", author="al")
    add("beta", source_hash="h1", bot_dir="/b", kind="python", image_id="i1", author="al")
    add("gamma", source_hash="h1", bot_dir="/g", kind="python", image_id="i1", author="bo")
    of_code = store.versions.of_code
    assert [v.key for v in of_code("al", source_hash="h1")] == ["alpha@1", "beta@1"]
    assert [v.key for v in of_code("al", image_id="i2")] == ["alpha@2"]
    assert [v.key for v in of_code("al", source_hash="h2", image_id="i1")] == [
        "alpha@1",
        "alpha@2",
        "beta@1",
    ]
    assert of_code("al", source_hash="h9") == []
    assert of_code("al") == []
    assert [v.key for v in of_code("bo", source_hash="h1")] == ["gamma@1"]
