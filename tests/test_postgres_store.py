"""A tournament whose store is on a PostgreSQL server (``--store postgresql://...``): played,
verified, backed up and restored with the real commands, against a real server
(scripts/setup-postgres.sh). The store's own tests run on both backends (tests/test_store.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support import EXAMPLES, referee

from take5_arena.referee.store import Store
from take5_arena.service.backup import KEY_NAME

pytestmark = pytest.mark.postgres


def _ok(*args: str) -> str:
    done = referee(*args, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def _records(directory: Path) -> dict[str, str]:
    with Store(directory, readonly=True) as store:
        return {gid: record["game_id"] for gid, record in store.records.all()}


def _tournament(directory: Path, url: str) -> None:
    for bot in ("random", "lowest"):
        args = ("--name", bot, "-t", str(directory), "--sandbox", "local", "--store", url)
        _ok("submit", str(EXAMPLES / bot), *args)
    _ok("tournament", "run", "-t", str(directory), "-n", "2", "-g", "4", "--sandbox", "local")


@pytest.mark.slow
def test_a_tournament_on_postgresql_plays_verifies_backs_up_and_restores(
    tmp_path: Path, new_postgres_database: Callable[[], str]
) -> None:
    directory, url = tmp_path / "T", new_postgres_database()
    _tournament(directory, url)
    assert not (directory / "tournament.sqlite").exists()
    assert "4 of 4 records valid" in _ok("verify", "--tournament", str(directory))
    played = _records(directory)
    assert len(played) == 4
    _ok("backup", "-t", str(directory), str(tmp_path / "B"))
    assert (tmp_path / "B" / "tournament.sqlite").is_file()  # a backup is readable as it is
    assert "4 of 4 records valid" in _ok("verify", "--tournament", str(tmp_path / "B"))
    key = str(directory / KEY_NAME)
    other = new_postgres_database()
    _ok("restore", str(tmp_path / "B"), str(tmp_path / "R"), "--key", key, "--store", other)
    _ok("restore", str(tmp_path / "B"), str(tmp_path / "S"), "--key", key)
    for restored in (tmp_path / "R", tmp_path / "S"):
        assert _records(restored) == played
        assert "4 of 4 records valid" in _ok("verify", "--tournament", str(restored))
    assert (tmp_path / "R" / "store.url").read_text().strip() == other
    assert not (tmp_path / "R" / "tournament.sqlite").exists()
    # the restored store goes on: new ids and sequence numbers after the copied ones
    _ok("tournament", "run", "-t", str(tmp_path / "R"), "-n", "2", "-g", "8", "--sandbox", "local")
    assert "8 of 8 records valid" in _ok("verify", "--tournament", str(tmp_path / "R"))


def test_restore_refuses_a_database_that_holds_a_store(
    tmp_path: Path, new_postgres_database: Callable[[], str]
) -> None:
    directory, url = tmp_path / "T", new_postgres_database()
    _tournament(directory, url)
    _ok("backup", "-t", str(directory), str(tmp_path / "B"))
    done = referee(
        "restore",
        str(tmp_path / "B"),
        str(tmp_path / "R"),
        "--key",
        str(directory / KEY_NAME),
        "--store",
        url,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is not empty" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "R").exists()
