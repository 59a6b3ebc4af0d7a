"""Upgrading an arena: the stores earlier releases wrote, opened by this code.

tests/data/tournament-vN holds a tournament directory made by the release whose store had schema
version N (tournament-v2 by an earlier main; tournament-v3 and later by
scripts/make-golden-store.sh, which also adds an author's account). Each is a golden file: never
regenerated, opened by every later version of the code. Opening one for writing migrates it, in
the transaction that opens it, after copying it to ``tournament.schema-vN.sqlite`` beside it; a
store of a newer schema than this code knows is refused with one line and exit code 2.
"""

from __future__ import annotations

import shutil
import sqlite3
import stat
from pathlib import Path

import pytest
from support import ROOT, referee

from take5_arena.referee.store import SCHEMA_VERSION, Store
from take5_arena.service.authors import Accounts

DATA = ROOT / "tests" / "data"
GOLDEN = sorted(DATA.glob("tournament-v*"), key=lambda p: int(p.name.rpartition("v")[2]))


def _schema(path: Path) -> int:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return int(db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])
    finally:
        db.close()


def _results(path: Path) -> int:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return int(db.execute("SELECT COUNT(*) FROM results").fetchone()[0])
    finally:
        db.close()


def _verified(directory: Path) -> str:
    done = referee("verify", "--tournament", str(directory), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_there_is_a_golden_store_of_this_schema_version() -> None:
    """A release that changes the schema commits its own golden store
    (scripts/make-golden-store.sh), so that the next one is tested against it."""
    assert [p.name for p in GOLDEN][-1] == f"tournament-v{SCHEMA_VERSION}"
    for golden in GOLDEN:
        assert _schema(golden / "tournament.sqlite") == int(golden.name.rpartition("v")[2])


@pytest.mark.parametrize("golden", GOLDEN, ids=[p.name for p in GOLDEN])
def test_a_golden_store_opens_migrates_and_verifies(golden: Path, tmp_path: Path) -> None:
    directory = Path(shutil.copytree(golden, tmp_path / "T"))
    version = _schema(directory / "tournament.sqlite")
    games = _results(directory / "tournament.sqlite")
    assert games > 0
    _verified(directory)  # read-only, as it was
    assert _schema(directory / "tournament.sqlite") == version  # a reader migrates nothing

    # a writer (the referee's own process: `tournament run` with every game played) migrates
    done = referee("tournament", "run", "-t", str(directory), "--no-progress", timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert _schema(directory / "tournament.sqlite") == SCHEMA_VERSION
    assert _results(directory / "tournament.sqlite") == games
    backup = directory / f"tournament.schema-v{version}.sqlite"
    if version < SCHEMA_VERSION:
        assert f"schema version {version}, made by an older release" in done.stderr
        assert str(backup) in done.stderr
    else:
        assert not backup.exists() and "older release" not in done.stderr
    assert f"{games} of {games} records valid" in _verified(directory)
    if (directory / "accounts.sqlite").exists():
        accounts = Accounts(directory)
        try:
            assert [a.name for a in accounts.authors()] == ["alice"]
        finally:
            accounts.close()


def test_a_migration_is_backed_up_first_and_the_backup_restores(tmp_path: Path) -> None:
    """The copy taken before a migration is the store as the older release left it: owner-only,
    of the old schema, every game in it; put back in place (the way back to that release), it
    verifies, and it migrates again when opened for writing."""
    old = GOLDEN[0]
    version = _schema(old / "tournament.sqlite")
    assert version < SCHEMA_VERSION
    directory = Path(shutil.copytree(old, tmp_path / "T"))
    with Store(directory) as store:
        backup = store.upgrade_backup
        assert backup == directory / f"tournament.schema-v{version}.sqlite"
        games = store.results.recorded_count()
    assert backup is not None and backup.is_file()
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert _schema(backup) == version and _results(backup) == games
    assert not Path(f"{backup}-wal").exists()  # one self-contained file
    with Store(directory) as store:  # migrated once: no second copy
        assert store.upgrade_backup is None
    assert sorted(p.name for p in directory.glob("tournament.schema-*")) == [backup.name]

    restored = tmp_path / "restored"
    restored.mkdir()
    shutil.copy2(backup, restored / "tournament.sqlite")
    for name in ("artifacts", "secret"):
        if (old / name).exists():
            shutil.copytree(old / name, restored / name)
    assert f"{games} of {games} records valid" in _verified(restored)
    with Store(restored) as store:
        assert store.upgrade_backup == restored / f"tournament.schema-v{version}.sqlite"
        assert store.results.recorded_count() == games
    assert _schema(restored / "tournament.sqlite") == SCHEMA_VERSION


def test_a_store_of_a_newer_release_is_refused_in_one_line(tmp_path: Path) -> None:
    directory = Path(shutil.copytree(GOLDEN[-1], tmp_path / "T"))
    db = sqlite3.connect(directory / "tournament.sqlite", isolation_level=None)
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    db.close()
    before = sorted(p.name for p in directory.iterdir())
    for args in (
        ("tournament", "status", "-t", str(directory)),
        ("verify", "--tournament", str(directory)),
        ("tournament", "run", "-t", str(directory), "--no-progress"),
        ("serve", "-t", str(directory), "--sandbox", "local", "--no-ladder"),
        ("backup", "-t", str(directory), str(tmp_path / "copy")),
    ):
        done = referee(*args)
        assert done.returncode == 2, (args, done.stdout + done.stderr)
        assert "Traceback" not in done.stderr, done.stderr
        said = [line for line in done.stderr.splitlines() if "schema version" in line]
        assert len(said) == 1, (args, done.stderr)
        assert f"has schema version {SCHEMA_VERSION + 1}, made by a newer release" in said[0]
        assert f"this referee knows {SCHEMA_VERSION}" in said[0]
    assert sorted(p.name for p in directory.iterdir()) == before  # nothing written, no copy
    assert _schema(directory / "tournament.sqlite") == SCHEMA_VERSION + 1


def test_accounts_of_an_older_schema_are_backed_up_before_they_migrate(tmp_path: Path) -> None:
    """An arena made before the accounts had their own file (tests/data/arena-before-accounts):
    its accounts come out at schema 1 and are copied, owner-only and as they were, to
    ``accounts.schema-v1.sqlite`` before they are migrated; alice's token works afterwards, and a
    second open migrates nothing and copies nothing."""
    from take5_arena.service.authors import ACCOUNTS_NAME
    from take5_arena.service.authors import SCHEMA_VERSION as ACCOUNTS_SCHEMA

    old = DATA / "arena-before-accounts"
    directory = tmp_path / "T"
    directory.mkdir()
    shutil.copy(old / "tournament.sqlite", directory / "tournament.sqlite")
    with Accounts(directory) as accounts:
        backup = accounts.upgrade_backup
        assert backup == directory / "accounts.schema-v1.sqlite"
        assert accounts.authenticate((old / "alice.token").read_text().strip()).name == "alice"
    assert backup is not None and stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert _schema(backup) == 1 and not Path(f"{backup}-wal").exists()
    db = sqlite3.connect(f"file:{backup}?mode=ro", uri=True)
    try:
        assert [r[0] for r in db.execute("SELECT name FROM arena_authors ORDER BY name")] == [
            "alice",
            "bob",
        ]
    finally:
        db.close()
    assert _schema(directory / ACCOUNTS_NAME) == ACCOUNTS_SCHEMA
    with Accounts(directory) as accounts:
        assert accounts.upgrade_backup is None
    assert sorted(p.name for p in directory.glob("accounts.schema-*")) == [backup.name]


def test_accounts_of_a_newer_release_are_refused_in_one_line(tmp_path: Path) -> None:
    from take5_arena.service.authors import ACCOUNTS_NAME
    from take5_arena.service.authors import SCHEMA_VERSION as ACCOUNTS_SCHEMA

    directory = Path(shutil.copytree(GOLDEN[-1], tmp_path / "T"))
    accounts = directory / ACCOUNTS_NAME
    db = sqlite3.connect(accounts, isolation_level=None)
    db.execute(
        "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(ACCOUNTS_SCHEMA + 1),)
    )
    db.close()
    before = accounts.read_bytes()
    done = referee("serve", "-t", str(directory), "--sandbox", "local", "--no-ladder")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    said = [line for line in done.stderr.splitlines() if "schema version" in line]
    assert len(said) == 1, done.stderr
    assert f"has schema version {ACCOUNTS_SCHEMA + 1}, made by a newer release" in said[0]
    assert f"this arena knows {ACCOUNTS_SCHEMA}" in said[0]
    # the accounts untouched: no copy, no journal, not a byte changed
    assert sorted(p.name for p in directory.glob("accounts*")) == [ACCOUNTS_NAME]
    assert accounts.read_bytes() == before


def test_each_version_keeps_the_author_it_was_submitted_under(tmp_path: Path) -> None:
    """Schema 4 stores the author per version: an older store's versions get their entrant's
    (read-only, as it would migrate; then migrated), and a later version by another author leaves
    the earlier ones' author as it was."""
    directory = Path(shutil.copytree(DATA / "tournament-v3", tmp_path / "T"))
    db = sqlite3.connect(directory / "tournament.sqlite")
    db.execute("UPDATE entrants SET author = 'alice' WHERE name = 'random'")
    db.commit()
    db.close()
    expected = {"heuristic@1": None, "lowest@1": None, "random@1": "alice"}
    with Store(directory, readonly=True) as store:
        assert {v.key: v.author for v in store.versions.all()} == expected
    with Store(directory) as store:
        assert {v.key: v.author for v in store.versions.all()} == expected
        store.versions.add(
            "random", source_hash="0" * 64, bot_dir="/b", kind="python", author="bob"
        )
        store.versions.add("lowest", source_hash="1" * 64, bot_dir="/b", kind="python")
        by_key = {v.key: v.author for v in store.versions.all()}
    assert by_key == {**expected, "random@2": "bob", "lowest@2": None}
    assert _schema(directory / "tournament.sqlite") == SCHEMA_VERSION


def test_a_record_that_names_another_owner_than_its_versions_author_fails_verify(
    tmp_path: Path,
) -> None:
    """The author stored per version binds the records: a seat's ``owner`` edited to someone else
    fails `referee verify --tournament`, naming the seat."""
    directory = Path(shutil.copytree(DATA / "tournament-v4", tmp_path / "T"))
    _verified(directory)
    db = sqlite3.connect(directory / "tournament.sqlite")
    game_id, owner = db.execute(
        "SELECT game_id, json_extract(record, '$.seats[0].owner') FROM results ORDER BY seq LIMIT 1"
    ).fetchone()
    assert owner in ("alice", "bob", "carol")
    db.execute(
        "UPDATE results SET record = json_set(record, '$.seats[0].owner', 'mallory')"
        " WHERE game_id = ?",
        (game_id,),
    )
    db.commit()
    db.close()
    done = referee("verify", "--tournament", str(directory), timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    said = done.stdout + done.stderr
    assert "INVALID: seat 0: the record says owner" in said and "mallory" in said, said
