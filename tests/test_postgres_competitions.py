"""Competitions of an arena on PostgreSQL (take5_arena/service/competitions.py): each one's store in
a schema of the arena's database, made, listed, played, verified, backed up and moved there with the
real commands against a real server (scripts/setup-postgres.sh). Several processes on such an
arena: tests/test_several_processes.py."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from arena_support import Server, add_author, cli, enter_with_a_slow_bot, sse_event, wait_until
from support import EXAMPLES

from take5_arena.referee.store import Store
from take5_arena.referee.store.postgres import PgConnection
from take5_arena.referee.tournament.run.lifecycle import run_lock
from take5_arena.service.backup import KEY_NAME
from take5_arena.service.competitions import competition_names
from take5_arena.service.ladder import LADDER_PREFIX

pytestmark = pytest.mark.postgres


def _ok(*args: str) -> str:
    done = cli(*args, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def _schemas(url: str) -> list[str]:
    db = PgConnection(url, readonly=True)
    try:
        rows = db.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%'"
            " AND nspname <> 'information_schema' ORDER BY nspname"
        ).fetchall()
    finally:
        db.close()
    return [r[0] for r in rows]


def _arena(directory: Path, url: str) -> None:
    """An arena on PostgreSQL: its first author makes the store and the accounts there."""
    add_author(directory, "alice", "--store", url)


def _enter(directory: Path, competition: str, *bots: str) -> None:
    for bot in bots:
        _ok(
            "submit", str(EXAMPLES / bot), "--name", bot, "-t", str(directory),
            "--competition", competition, "--sandbox", "local",
        )  # fmt: skip


def _play(directory: Path, games: int) -> None:
    _ok(
        "tournament", "run", "-t", str(directory), "-n", "2", "-g", str(games), "--sandbox", "local"
    )


def _records(directory: Path) -> list[str]:
    with Store(directory, readonly=True) as store:
        return sorted(gid for gid, _ in store.records.all())


def test_a_competition_of_an_arena_on_postgresql_is_a_schema_of_its_database(
    tmp_path: Path, new_postgres_database: Callable[[], str]
) -> None:
    """`competition add` makes the store in schema competition_NAME (no SQLite file), every
    command that takes the competition's directory reads it there, each competition's games stay
    its own, and `verify`, `publish` and `backup` find them."""
    directory, url = tmp_path / "A", new_postgres_database()
    _arena(directory, url)
    said = _ok("competition", "add", "duel", "-t", str(directory), "--players", "2")
    assert "its store schema competition_duel of the database" in said
    _ok("competition", "add", "my-cup", "-t", str(directory), "--players", "3")
    duel, cup = directory / "competitions" / "duel", directory / "competitions" / "my-cup"
    assert not (duel / "tournament.sqlite").exists()
    assert (duel / "store.url").read_text() == f"{url}\nschema competition_duel\n"
    assert (duel / "store.url").stat().st_mode & 0o777 == 0o600
    assert _schemas(url) == ["competition_duel", "competition_my-cup", "public"]
    listed = _ok("competition", "list", "-t", str(directory))
    assert "duel" in listed and "tables of 2" in listed and "tables of 3" in listed
    _enter(directory, "duel", "random", "lowest")
    _play(duel, 4)
    assert len(_records(duel)) == 4 and _records(cup) == [] and _records(directory) == []
    assert "4 of 4 records valid" in _ok("verify", "--tournament", str(duel))
    _ok("publish", "-t", str(duel), "--out", str(tmp_path / "site"), "--bootstrap", "0")
    assert "standings of 4 rated games recomputed" in _ok(
        "verify", "--site", str(tmp_path / "site")
    )
    _ok("backup", "-t", str(directory), str(tmp_path / "B"))
    copy = tmp_path / "B" / "competitions" / "duel"
    assert (copy / "tournament.sqlite").is_file() and _records(copy) == _records(duel)
    # restored on one host: every competition in its SQLite file, the games as they were
    key = str(directory / KEY_NAME)
    _ok("restore", str(tmp_path / "B"), str(tmp_path / "R"), "--key", key)
    assert _records(tmp_path / "R" / "competitions" / "duel") == _records(duel)
    # restored into another database: every competition into its schema there, whole
    other, restored = new_postgres_database(), tmp_path / "S"
    said = _ok("restore", str(tmp_path / "B"), str(restored), "--key", key, "--store", other)
    assert "copying competition duel into schema competition_duel" in said
    assert _schemas(other) == ["competition_duel", "competition_my-cup", "public"]
    for name, source in (("duel", duel), ("my-cup", cup)):
        there = restored / "competitions" / name
        assert (there / "store.url").read_text() == f"{other}\nschema competition_{name}\n"
        assert not list(there.glob("tournament.sqlite*"))  # no second copy to be mistaken
        assert _records(there) == _records(source)
    verified = _ok("verify", "--tournament", str(restored / "competitions" / "duel"))
    assert "4 of 4 records valid" in verified
    listed = json.loads(cli("competition", "list", "-t", str(restored), "--json").stdout)
    assert {c["name"]: c["schema"] for c in listed} == {
        "": None,
        "duel": "competition_duel",
        "my-cup": "competition_my-cup",
    }
    moved = cli("competition", "move", "duel", "-t", str(restored))
    assert moved.returncode == 2 and "in the arena's database already" in moved.stderr
    _play(restored / "competitions" / "duel", 8)  # the restored competition goes on there
    assert len(_records(restored / "competitions" / "duel")) == 8


def test_a_competition_made_from_another_copy_of_the_arena_is_refused_and_leaves_nothing(
    tmp_path: Path, new_postgres_database: Callable[[], str]
) -> None:
    """Two hosts' copies of one arena: a competition made on one exists for the other too (its
    schema), so making it again there is refused, and no half-made schema is left behind."""
    directory, url = tmp_path / "A", new_postgres_database()
    _arena(directory, url)
    other = tmp_path / "B"
    shutil.copytree(directory, other)
    _ok("competition", "add", "duel", "-t", str(directory), "--players", "2")
    done = cli("competition", "add", "duel", "-t", str(other), "--players", "3")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "exists already in the arena's database" in done.stderr
    assert "Traceback" not in done.stderr
    assert _schemas(url) == ["competition_duel", "public"]
    assert competition_names(other) == []
    # copying the folder is how the other host gets it
    shutil.copytree(directory / "competitions", other / "competitions", dirs_exist_ok=True)
    with Store(other / "competitions" / "duel", readonly=True) as store:
        assert store.settings.get()["players"] == 2


def test_a_sqlite_competition_of_an_arena_on_postgresql_works_and_moves_into_its_database(
    tmp_path: Path, new_postgres_database: Callable[[], str]
) -> None:
    """A competition made on SQLite before competitions went to PostgreSQL is read and played as
    it is (nothing moves by itself); `competition move` copies it into schema competition_NAME,
    keeps the file aside, and the games go on there."""
    directory, url = tmp_path / "A", new_postgres_database()
    _arena(directory, url)
    old = directory / "competitions" / "old"
    _ok(
        "submit", str(EXAMPLES / "random"), "--name", "random", "-t", str(old), "--sandbox", "local"
    )
    _ok(
        "submit", str(EXAMPLES / "lowest"), "--name", "lowest", "-t", str(old), "--sandbox", "local"
    )
    _play(old, 4)
    played = _records(old)
    assert "[on SQLite: `referee competition move old` shares it]" in _ok(
        "competition", "list", "-t", str(directory)
    )
    assert (old / "tournament.sqlite").is_file() and _schemas(url) == ["public"]
    with Store(old) as store:
        assert store.url is None  # opened for writing: still its file
    with run_lock(old):  # a server serving it: nothing moves
        held = cli("competition", "move", "old", "-t", str(directory))
    assert held.returncode == 2 and "another referee is running" in held.stderr, held.stderr
    assert _schemas(url) == ["public"] and (old / "tournament.sqlite").is_file()
    said = _ok("competition", "move", "old", "-t", str(directory))
    assert "4 games moved" in said
    assert not (old / "tournament.sqlite").exists()
    assert len(list(old.glob("tournament.sqlite.moved-*Z"))) == 1  # (its -wal beside it)
    assert _schemas(url) == ["competition_old", "public"]
    assert _records(old) == played
    listed = {
        c["name"]: c for c in json.loads(_ok("competition", "list", "-t", str(directory), "--json"))
    }
    assert (listed["old"]["store"], listed["old"]["schema"]) == ("postgresql", "competition_old")
    assert (listed[""]["store"], listed[""]["schema"]) == ("postgresql", None)
    assert "4 of 4 records valid" in _ok("verify", "--tournament", str(old))
    _play(old, 8)
    assert len(_records(old)) == 8
    assert "8 of 8 records valid" in _ok("verify", "--tournament", str(old))
    again = cli("competition", "move", "old", "-t", str(directory))
    assert again.returncode == 2 and "in the arena's database already" in again.stderr


def _ladder(directory: Path) -> dict[str, str]:
    """Every game of the ladder's batches and its status ('pending' or 'done')."""
    with Store(directory, readonly=True) as store:
        return {
            g.game_id: g.status
            for s in store.schedules.all(LADDER_PREFIX)
            for g in store.schedules.games(s.schedule_id)
        }


def _in_progress(web: str, competition: str) -> list[str]:
    """The ids of the games in progress a web process lists on a competition's live page."""
    prefix = f"/c/{competition}" if competition else ""
    event = sse_event(f"{web}{prefix}/events/live") or {"games": []}
    return [game["id"] for game in event["games"] if not game["done"]]


@pytest.mark.slow
def test_two_referees_and_a_web_process_share_two_competitions_on_postgresql(
    tmp_path: Path, new_postgres_database: Callable[[], str]
) -> None:
    """Two referees (two hosts' copies of the arena) play the ladders of both competitions of an
    arena on PostgreSQL, each game once, and the web process of a third copy, which plays none,
    lists a game in progress of the second competition on that competition's live page (read from
    its store), never on the default's."""
    directory, url = tmp_path / "A", new_postgres_database()
    enter_with_a_slow_bot(directory, url, tmp_path)
    _ok("competition", "add", "duel", "-t", str(directory), "--players", "2", "--sandbox", "local")
    duel = directory / "competitions" / "duel"
    for name, bot in (("random", EXAMPLES / "random"), ("slow", tmp_path / "slow")):
        _ok("submit", str(bot), "--name", name, "-t", str(directory), "--competition", "duel")
    play = ("--sandbox", "local", "--players", "2", "-j", "1", "--bootstrap", "0")
    first = Server(directory, *play)
    servers = [first]
    try:
        wait_until(
            lambda: (
                all((d / "secret" / "deal-key-1").exists() for d in (directory, duel))
                and len(_records(duel)) >= 1
            ),
            what="the first referee's games of both competitions",
            server=first,
        )
        hosts = []
        for name in ("B", "W"):  # each host's copy: store.url files, deal keys, no lock
            hosts.append(tmp_path / name)
            ignored = shutil.ignore_patterns("run.lock", "site", "serving.json")
            shutil.copytree(directory, hosts[-1], ignore=ignored)
        second = Server(hosts[0], *play)
        web = Server(hosts[1], *play, "--no-ladder", "--web", "127.0.0.1:0")
        servers += [second, web]
        page = "http://" + web.wait_for(r"web pages on http://(127\.0\.0\.1:\d+)/").group(1)
        second.wait_for(r"competition duel: ", timeout=60)
        at_start = len(_records(duel))
        wait_until(lambda: len(_records(duel)) >= at_start + 6, what="more duel games")
        wait_until(lambda: _in_progress(page, "duel"), what="a duel game on its live page")
        watched = _in_progress(page, "duel")[0]
        assert watched in _ladder(duel) and watched not in _ladder(directory)
        assert watched not in _in_progress(page, "")
        game = sse_event(f"{page}/c/duel/events/games/{watched}")
        assert game is not None and game["id"] == watched and game["record"]["seats"]
        for server in reversed(servers):
            assert server.stop() == 0, server.log
    finally:
        for server in servers:
            if server.proc.poll() is None:
                server.kill()
    for competition in (directory, duel):
        recorded = _records(competition)
        assert len(recorded) == len(set(recorded))
        done = {gid for gid, status in _ladder(competition).items() if status == "done"}
        assert set(recorded) == done
        with Store(competition, readonly=True) as store:
            players = {run["pid"] for run in store.runs.all() if run["done"]}
        assert players >= {first.proc.pid, second.proc.pid}, competition  # both played it
    assert "records valid" in _ok("verify", "--tournament", str(hosts[0] / "competitions" / "duel"))


def test_a_schema_is_quoted_as_an_identifier_and_has_a_write_lock_of_its_own(
    tmp_path: Path, postgres_url: str
) -> None:
    """A schema's name reaches the server only as a quoted identifier (one made of quotes and
    a statement is a schema of that name, and nothing else happens), and a write transaction
    held open in one competition's store does not hold up a write in another's (a second store
    of the same schema waits for it, as a SQLite file's writer does)."""
    odd = 'x"; DROP SCHEMA public CASCADE; --'
    with Store(tmp_path / "default", create=True, url=postgres_url) as default:
        default.settings.set({"players": 4})
    with Store(tmp_path / "odd", create=True, url=postgres_url, schema=odd) as store:
        store.settings.set({"players": 3})
    assert _schemas(postgres_url) == ["public", odd]
    with Store(tmp_path / "default", readonly=True) as default:
        assert default.settings.get()["players"] == 4
    with Store(tmp_path / "duel", create=True, url=postgres_url, schema="competition_duel") as s:
        s.settings.set({"players": 2})

    threads: list[threading.Thread] = []

    def write_from_another_thread(directory: Path) -> bool:
        """Whether a write into the store of ``directory`` went through within 3 s."""
        done = threading.Event()

        def write() -> None:
            with Store(directory) as other:
                other.settings.set({"players": 5})
            done.set()

        threads.append(threading.Thread(target=write, daemon=True))
        threads[-1].start()
        return done.wait(3)

    with Store(tmp_path / "duel") as duel, duel.transaction():
        duel.settings.set({"players": 2})  # the write lock of schema competition_duel, held
        assert write_from_another_thread(tmp_path / "odd")
        assert write_from_another_thread(tmp_path / "default")
        assert not write_from_another_thread(tmp_path / "duel")
    for thread in threads:  # the last one's write goes through once the transaction ends
        thread.join(30)
        assert not thread.is_alive()
    with Store(tmp_path / "duel", readonly=True) as duel:
        assert duel.settings.get()["players"] == 5


def test_a_restore_into_postgresql_cut_off_or_edited_leaves_nothing_taken_for_whole(
    tmp_path: Path, new_postgres_database: Callable[[], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An arena's backup restored into a new database: a competition's file edited without the
    key is refused before anything is written; a restore that fails after a competition went into
    its schema drops that schema; one killed there (no cleanup ran) leaves the schema beside an
    empty default store, which a later restore refuses to write beside, and no folder names it."""
    import hashlib
    import sqlite3

    from take5_arena.service import backup as service
    from take5_arena.service.backup import MANIFEST, BackupError, restore

    directory, url = tmp_path / "A", new_postgres_database()
    _arena(directory, url)
    _ok("competition", "add", "duel", "-t", str(directory), "--players", "2")
    _enter(directory, "duel", "random", "lowest")
    _play(directory / "competitions" / "duel", 2)
    _ok("backup", "-t", str(directory), str(tmp_path / "B"))
    key = directory / KEY_NAME

    edited = tmp_path / "E"
    shutil.copytree(tmp_path / "B", edited)
    with sqlite3.connect(edited / "competitions" / "duel" / "tournament.sqlite") as db:
        db.execute("DELETE FROM results WHERE rowid = 1")
    manifest = json.loads((edited / MANIFEST).read_text())
    for entry in manifest["files"]:  # the sums made right again: all one can do without the key
        data = (edited / entry["path"]).read_bytes()
        entry["bytes"], entry["sha256"] = len(data), hashlib.sha256(data).hexdigest()
    (edited / MANIFEST).write_text(json.dumps(manifest))
    target = new_postgres_database()
    done = cli("restore", str(edited), str(tmp_path / "R"), "--key", str(key), "--store", target)
    assert done.returncode == 2 and "HMAC does not match" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "R").exists()
    assert _schemas(target) == ["public"]

    def cut_off(*_args: object) -> int:
        raise KeyboardInterrupt  # after the competitions, before the default store

    monkeypatch.setattr(service, "import_sqlite", cut_off)
    with pytest.raises(KeyboardInterrupt):
        restore(tmp_path / "B", tmp_path / "R", key_file=key, store=target)
    assert _schemas(target) == ["public"] and not list(tmp_path.glob("*R*"))
    monkeypatch.setattr(service, "drop_schema", lambda *_args: None)  # killed: no cleanup
    with pytest.raises(KeyboardInterrupt):
        restore(tmp_path / "B", tmp_path / "R", key_file=key, store=target)
    assert _schemas(target) == ["competition_duel", "public"] and not list(tmp_path.glob("*R*"))
    monkeypatch.undo()
    with pytest.raises(BackupError, match="holds schema 'competition_duel' already"):
        restore(tmp_path / "B", tmp_path / "R", key_file=key, store=target)
    done = cli(
        "restore", str(tmp_path / "B"), str(tmp_path / "R"), "--key", str(key), "--store", target
    )
    assert done.returncode == 2 and "restore into a new database" in done.stderr, done.stderr
    # a new database takes it whole
    fresh = new_postgres_database()
    _ok("restore", str(tmp_path / "B"), str(tmp_path / "R"), "--key", str(key), "--store", fresh)
    assert _records(tmp_path / "R" / "competitions" / "duel") == _records(
        directory / "competitions" / "duel"
    )
