"""Competitions of an arena on PostgreSQL (take5_arena/service/competitions.py): each one's store in
a schema of the arena's database, made, listed, played, verified, backed up and moved there with the
real commands against a real server (scripts/setup-postgres.sh). Several processes on such an
arena: tests/test_several_processes.py."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from arena_support import add_author, cli
from support import EXAMPLES

from take5_arena.referee.store import Store
from take5_arena.referee.store.postgres import PgConnection
from take5_arena.service.backup import KEY_NAME
from take5_arena.service.competitions import competition_names

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
    assert "old" in _ok("competition", "list", "-t", str(directory))
    assert (old / "tournament.sqlite").is_file() and _schemas(url) == ["public"]
    with Store(old) as store:
        assert store.url is None  # opened for writing: still its file
    said = _ok("competition", "move", "old", "-t", str(directory))
    assert "4 games moved" in said
    assert not (old / "tournament.sqlite").exists()
    assert len(list(old.glob("tournament.sqlite.moved-*Z"))) == 1  # (its -wal beside it)
    assert _schemas(url) == ["competition_old", "public"]
    assert _records(old) == played
    assert "4 of 4 records valid" in _ok("verify", "--tournament", str(old))
    _play(old, 8)
    assert len(_records(old)) == 8
    assert "8 of 8 records valid" in _ok("verify", "--tournament", str(old))
    again = cli("competition", "move", "old", "-t", str(directory))
    assert again.returncode == 2 and "in the arena's database already" in again.stderr
