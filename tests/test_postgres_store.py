"""A tournament whose store is on a PostgreSQL server (``--store postgresql://...``): played,
verified, backed up and restored with the real commands, against a real server
(scripts/setup-postgres.sh). The store's own tests run on both backends (tests/test_store.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from arena_support import Server, add_author, enter_with_a_slow_bot, wait_until
from support import EXAMPLES, referee, referee_env

from take5_arena.referee.store import SCHEMA_VERSION, Store
from take5_arena.referee.store.postgres import PgConnection
from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.backup import KEY_NAME
from take5_arena.service.client import pack_folder

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


def _hosts(directory: Path, n: int) -> list[Path]:
    """``n`` tournament directories on one store, as ``n`` hosts hold them: each its copy of the
    store's URL, the archives and the deal keys (docs/operators/several-hosts.md)."""
    copies = [directory]
    for i in range(1, n):
        copy = directory.with_name(f"{directory.name}-host{i}")
        shutil.copytree(directory, copy, ignore=shutil.ignore_patterns("run.lock"))
        copies.append(copy)
    return copies


def _run(directory: Path, games: int) -> subprocess.Popen[str]:
    args = ["tournament", "run", "-t", str(directory), "-n", "2", "-g", str(games)]
    return subprocess.Popen(
        [sys.executable, "-m", "take5_arena", *args, "--sandbox", "local", "-j", "1"],
        env=referee_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.mark.slow
def test_three_referees_on_one_store_play_every_game_once_when_one_is_killed(
    tmp_path: Path, new_postgres_database: Callable[[], str]
) -> None:
    """Three referees (three directories, as on three hosts) play one schedule on one PostgreSQL
    store; one is killed (SIGKILL) mid-run. The tables it held come back to the others when its
    session ends, and every game of the schedule is recorded exactly once."""
    directory, url = tmp_path / "T", new_postgres_database()
    enter_with_a_slow_bot(directory, url, tmp_path)
    games = 24
    referees = [_run(directory, games)]
    deadline = time.monotonic() + 300
    while not (directory / "secret" / "deal-key-1").exists() and time.monotonic() < deadline:
        time.sleep(0.1)  # the season's key, made by the first run: every host needs it
    time.sleep(0.5)  # its commitment in the store
    hosts = _hosts(directory, 3)
    referees += [_run(host, games) for host in hosts[1:]]
    with Store(directory, readonly=True) as store:
        while store.results.recorded_count() < 3 and time.monotonic() < deadline:
            time.sleep(0.2)
    referees[0].kill()
    referees[0].wait()
    outputs = [r.communicate(timeout=600)[0] for r in referees[1:]]
    assert all(r.returncode == 0 for r in referees[1:]), outputs
    with Store(directory, readonly=True) as store:
        recorded = [gid for gid, _ in store.records.all()]
        (schedule,) = {run["schedule_id"] for run in store.runs.all()}
        total = store.schedules.progress(schedule)
    assert len(recorded) == len(set(recorded)) == games == total["done"] == total["total"]
    assert f"{games} of {games} records valid" in _ok("verify", "--tournament", str(hosts[1]))


def test_a_claim_is_one_referees_until_its_session_ends(tmp_path: Path, postgres_url: str) -> None:
    """Two referees on one store: a table one claimed is refused to the other (no wait: it plays
    another), and given back the moment the first one's session ends (a referee killed, or
    closed; the server sees it in moments), with nobody's help: no lease, no clock to trust."""
    Store(tmp_path / "a", create=True, url=postgres_url).close()
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    first, second = Store(tmp_path / "a"), Store(tmp_path / "b")
    try:
        assert first.schedules.claim("g1") and not second.schedules.claim("g1")
        assert second.schedules.claim("g2") and not first.schedules.claim("g2")
        first.schedules.release("g1")
        assert second.schedules.claim("g1")
        assert not first.schedules.claim("g1")
        assert first.schedules.claim("g3")
        first.close()  # as a referee killed: its session ends (the server sees it in moments)
        deadline = time.monotonic() + 10
        while not second.schedules.claim("g3"):
            assert time.monotonic() < deadline, "the claim outlived its session"
            time.sleep(0.05)
    finally:
        second.close()


def test_a_store_that_cannot_be_reached_is_one_line_and_exit_4(tmp_path: Path) -> None:
    directory = tmp_path / "T"
    directory.mkdir()
    (directory / "store.url").write_text("postgresql://take5:secret@127.0.0.1:9/none\n")
    done = referee("tournament", "status", "-t", str(directory))
    assert done.returncode == 4, done.stdout + done.stderr
    assert "cannot be reached" in done.stderr and "Traceback" not in done.stderr
    assert "secret" not in done.stderr  # the password stays out of the message


@pytest.mark.slow
def test_the_arena_serves_from_a_postgresql_store_and_survives_a_sigkill(
    tmp_path: Path, postgres_url: str
) -> None:
    """`referee serve` on a store in PostgreSQL: submissions through the real client, the ladder
    plays, a SIGKILL of the server loses nothing recorded, a new server goes on, and every record
    is in the store once and valid."""
    directory = tmp_path / "T"
    token = add_author(directory, "alice", "--per-hour", "100", "--store", postgres_url)
    args = ("--sandbox", "local", "--players", "2", "-j", "1", "--bootstrap", "0")
    server = Server(directory, *args)
    try:
        with server.client(token) as client:
            for bot in ("random", "lowest"):
                assert client.submit(bot, pack_folder(EXAMPLES / bot)).outcome == pb.SUBMIT_ACCEPTED
        wait_until(lambda: _recorded(directory) >= 4, what="ladder games", server=server)
    finally:
        server.kill()
    before = _recorded(directory)
    server = Server(directory, *args)
    try:
        wait_until(lambda: _recorded(directory) >= before + 4, what="more games", server=server)
    finally:
        assert server.stop() == 0, server.log
    assert not (directory / "tournament.sqlite").exists()
    with Store(directory, readonly=True) as store:
        recorded = [gid for gid, _ in store.records.all()]
    assert len(recorded) == len(set(recorded)) >= before + 4
    assert f"{len(recorded)} of {len(recorded)} records valid" in _ok(
        "verify", "--tournament", str(directory)
    )


def _recorded(directory: Path) -> int:
    with Store(directory, readonly=True) as store:
        return store.results.recorded_count()


def test_an_older_postgresql_store_is_migrated_when_opened(
    tmp_path: Path, postgres_url: str
) -> None:
    """The migrations run on PostgreSQL as on SQLite (schema.py's steps, PostgreSQL's types): a
    store of schema version 2, without the columns versions 3 and 4 added, gains them at the
    first open for writing (a version's author filled by schema 4's statement, SQLite's JSON
    functions and all), and keeps its rows."""
    with Store(tmp_path / "t", create=True, url=postgres_url) as store:
        store.versions.add("alpha", source_hash="a", bot_dir="/a", kind="python", author="ann")
    raw = PgConnection(postgres_url, readonly=False)
    for table, column in (
        ("entrants", "author"),
        ("games", "deal_season"),
        ("games", "deal_id"),
        ("entrant_versions", "author"),
    ):
        raw.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    raw.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    raw.close()
    with Store(tmp_path / "t") as store:
        (version,) = store.versions.all()
        assert (
            version.key == "alpha@1"
            and store.versions.add(
                "beta", source_hash="b", bot_dir="/b", kind="python", author="bea"
            )[0].key
            == "beta@1"
        )
    raw = PgConnection(postgres_url, readonly=True)
    try:
        assert raw.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[
            0
        ] == str(SCHEMA_VERSION)
        assert raw.execute("SELECT author FROM entrants ORDER BY id").fetchall() == [
            (None,),
            ("bea",),
        ]
    finally:
        raw.close()


def test_an_arenas_accounts_are_in_its_postgresql_store_for_every_host(
    tmp_path: Path, postgres_url: str
) -> None:
    """On a store in PostgreSQL the arena's accounts are in the same database (their own tables,
    made at their newest schema through the same migrations as a file's), so a process on another
    host (its copy of DIR) knows the authors added on this one and sees a revocation at once; no
    accounts file is made."""
    from take5_arena.service.authors import Accounts
    from take5_arena.service.errors import AuthenticationError

    a = tmp_path / "A"
    alice = add_author(a, "alice", "--store", postgres_url)
    b = tmp_path / "B"
    shutil.copytree(a, b)
    bob = add_author(b, "bob")
    here, there = Accounts(a), Accounts(b)
    try:
        assert here.authenticate(bob).name == "bob" and there.authenticate(alice).name == "alice"
        assert [x.name for x in here.authors()] == ["alice", "bob"]
        done = referee("authors", "revoke", "alice", "-t", str(b))
        assert done.returncode == 0, done.stderr
        with pytest.raises(AuthenticationError):
            here.authenticate(alice)
    finally:
        here.close()
        there.close()
    assert not (a / "accounts.sqlite").exists() and not (b / "accounts.sqlite").exists()
    from take5_arena.service.authors import SCHEMA_VERSION as ACCOUNTS_SCHEMA

    raw = PgConnection(postgres_url, readonly=True)
    try:  # each keeps its own schema version
        for table, version in (("meta", SCHEMA_VERSION), ("arena_meta", ACCOUNTS_SCHEMA)):
            row = raw.execute(f"SELECT value FROM {table} WHERE key = 'schema_version'").fetchone()
            assert row[0] == str(version)
    finally:
        raw.close()


def test_an_accounts_file_of_an_arena_on_postgresql_moves_into_its_database(
    tmp_path: Path, postgres_url: str
) -> None:
    """An arena on PostgreSQL made before its accounts were kept there has them in
    DIR/accounts.sqlite: the first open copies them into the database (migrated first) and sets
    the file aside, owner-only; another host's copy of the same file is set aside without being
    copied again."""
    import os
    import sqlite3

    from take5_arena.service.authors import ACCOUNTS_NAME, Accounts

    a = tmp_path / "A"
    Store(a, create=True, url=postgres_url).close()
    a.joinpath("store.url").rename(a / "store.url.off")  # as before: the accounts in their file
    alice = add_author(a, "alice")
    a.joinpath("store.url.off").rename(a / "store.url")
    assert (a / "tournament.sqlite").exists()  # the file-backed open made one: not the store
    (a / "tournament.sqlite").unlink()
    b = tmp_path / "B"
    shutil.copytree(a, b)
    with sqlite3.connect(a / ACCOUNTS_NAME) as db:  # an older file: migrated as it moves
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
        db.execute("DROP TABLE arena_sessions")
        db.execute("DROP INDEX arena_submissions_upload_key")
        db.execute("ALTER TABLE arena_submissions DROP COLUMN upload_key")
        db.execute("ALTER TABLE arena_authors DROP COLUMN token_check")
        db.execute("ALTER TABLE arena_submissions DROP COLUMN competition")
    here = Accounts(a)
    try:
        assert here.authenticate(alice).name == "alice"
    finally:
        here.close()
    assert not (a / ACCOUNTS_NAME).exists()
    moved = sorted(a.glob(f"{ACCOUNTS_NAME}.moved-*"))
    assert moved and not any(p.name.endswith(("-wal", "-shm")) for p in moved[:1])
    assert {oct(os.stat(p).st_mode & 0o777) for p in moved} == {oct(0o600)}
    there = Accounts(b)
    try:
        assert [x.name for x in there.authors()] == ["alice"]  # once
    finally:
        there.close()
    assert not (b / ACCOUNTS_NAME).exists()


def test_a_backup_of_an_arena_on_postgresql_holds_its_accounts(
    tmp_path: Path, new_postgres_database: Callable[[], str]
) -> None:
    """`referee backup` of an arena on PostgreSQL writes the accounts of the database into the
    backup's accounts.sqlite (one snapshot, owner-only), so a backup reads as any other; restored
    into a new database they move into it at the first open."""
    import os

    from take5_arena.service.authors import ACCOUNTS_NAME, Accounts

    directory = tmp_path / "T"
    alice = add_author(directory, "alice", "--store", new_postgres_database())
    _ok("backup", "-t", str(directory), str(tmp_path / "B"))
    copy = tmp_path / "B" / ACCOUNTS_NAME
    assert copy.is_file() and os.stat(copy).st_mode & 0o777 == 0o600
    key = str(directory / KEY_NAME)
    other = new_postgres_database()
    _ok("restore", str(tmp_path / "B"), str(tmp_path / "R"), "--key", key, "--store", other)
    restored = Accounts(tmp_path / "R")
    try:
        assert restored.shared and restored.authenticate(alice).name == "alice"
    finally:
        restored.close()
    assert not (tmp_path / "R" / ACCOUNTS_NAME).exists()  # moved into the new database
