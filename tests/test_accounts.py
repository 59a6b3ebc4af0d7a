"""The arena's accounts in their own file, and arenas made before that still opening with their
authors and submissions (take5_arena/service/authors/).

tests/data/arena-before-accounts/ holds a tournament directory made by main at 9b3ff68, when the
accounts lived in the store's file, by this code (run with that tree on PYTHONPATH)::

    db = ArenaDB(d, create=True)
    token = db.add_author("alice", Limits(2, 10, 1_000_000))      # alice.token
    db.add_author("bob"); db.revoke("bob")
    alice = db.authenticate(token)
    row = db.record_submission(alice, "alicebot", archive_sha256="ab" * 32, ...)
    v, _ = Store(d).versions.add("alicebot", source_hash="ab" * 32, ...)
    db.set_status(row.id, "accepted", version_id=v.id, detail="2 smoke games")
    db.record_submission(alice, "alicebot2", archive_sha256="cd" * 32, ...)  # never validated

then checkpointed and vacuumed (journal mode WAL, as the store leaves it).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from take5_arena.referee.store import Store
from take5_arena.service.authors import ACCOUNTS_NAME, Accounts, Limits, SubmissionStatus, storage
from take5_arena.service.errors import AuthenticationError, PermissionDeniedError

OLD = Path(__file__).resolve().parent / "data" / "arena-before-accounts"
ARENA_TABLES = {"arena_authors", "arena_bots", "arena_submissions"}


def tables(path: Path) -> set[str]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        con.close()


@pytest.fixture
def old_arena(tmp_path: Path) -> Path:
    directory = tmp_path / "T"
    directory.mkdir()
    shutil.copy(OLD / "tournament.sqlite", directory / "tournament.sqlite")
    return directory


def token() -> str:
    return (OLD / "alice.token").read_text().strip()


def check_moved(directory: Path) -> None:
    with Accounts(directory) as accounts:
        assert [a.name for a in accounts.authors()] == ["alice", "bob"]
        alice = accounts.authenticate(token())
        assert alice.limits == Limits(2, 10, 1_000_000)
        assert not accounts.author("bob").active
        with pytest.raises(AuthenticationError, match="not valid"):
            accounts.authenticate(token()[:-1] + ("x" if token()[-1] != "x" else "y"))
        # a name is claimed by an accepted version only: the never-validated alicebot2 is free
        assert accounts.owner("alicebot") == "alice" and accounts.bots_of("alice") == ["alicebot"]
        assert accounts.owner("AliceBot") == "alice" and accounts.owner("alicebot2") is None
        submissions = {s.bot_name: s for s in accounts.submissions_of("alice")}
        assert submissions["alicebot"].status is SubmissionStatus.ACCEPTED
        assert submissions["alicebot"].version_id == 1
        assert [s.bot_name for s in accounts.unfinished_submissions()] == ["alicebot2"]
        with pytest.raises(PermissionDeniedError):
            accounts.check_can_submit(accounts.author("bob"), "alicebot")
    assert not ARENA_TABLES & tables(directory / "tournament.sqlite")
    assert tables(directory / ACCOUNTS_NAME) >= ARENA_TABLES
    with Store(directory, readonly=True) as store:  # the store itself is as it was
        assert [v.key for v in store.versions.all()] == ["alicebot@1"]
        assert store.versions.entrant_states() == {"alicebot": True}


def test_an_arena_made_before_the_accounts_moved_keeps_them(old_arena: Path) -> None:
    assert tables(old_arena / "tournament.sqlite") >= ARENA_TABLES
    check_moved(old_arena)
    check_moved(old_arena)  # opening again changes nothing
    assert not list(old_arena.glob(f".{ACCOUNTS_NAME}.*.tmp"))


def test_the_move_survives_a_crash_before_the_new_file_is_in_place(old_arena: Path) -> None:
    """Killed while copying: a half-written temporary file, the old tables untouched."""
    stale = old_arena / f".{ACCOUNTS_NAME}.0123456789ab.tmp"
    stale.write_bytes(b"half a database")
    check_moved(old_arena)
    assert not stale.exists()


def test_the_move_survives_a_crash_before_the_old_tables_are_dropped(
    old_arena: Path, monkeypatch
) -> None:
    """Killed after the new file was renamed into place: the next open only drops the old tables,
    and what changed in the new file since is kept (it is not copied again)."""
    calls = []
    real = storage._copy_old_accounts

    def copy_then_die(*args, **kw):  # type: ignore[no-untyped-def]
        real(*args, **kw)
        calls.append(1)
        raise KeyboardInterrupt  # the process ends here, before the old tables are dropped

    monkeypatch.setattr(storage, "_copy_old_accounts", copy_then_die)
    with pytest.raises(KeyboardInterrupt):
        Accounts(old_arena)
    monkeypatch.setattr(storage, "_copy_old_accounts", real)
    assert calls and tables(old_arena / "tournament.sqlite") >= ARENA_TABLES
    con = sqlite3.connect(old_arena / ACCOUNTS_NAME)
    con.execute("UPDATE arena_authors SET max_active_bots = 7 WHERE name = 'alice'")
    con.commit()
    con.close()
    with Accounts(old_arena) as accounts:
        assert accounts.author("alice").limits.max_active_bots == 7
    assert not ARENA_TABLES & tables(old_arena / "tournament.sqlite")


def test_the_command_line_reads_an_old_arena(old_arena: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "take5_arena", "authors", "list", "-t", str(old_arena)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "alice" in done.stdout and "alicebot" in done.stdout and "revoked" in done.stdout


def test_a_new_arena_keeps_its_accounts_beside_the_store(tmp_path: Path) -> None:
    with Accounts(tmp_path / "T", create=True) as accounts:
        secret = accounts.add_author("carol")
        assert accounts.authenticate(secret).name == "carol"
    assert tables(tmp_path / "T" / ACCOUNTS_NAME) >= ARENA_TABLES
    assert not ARENA_TABLES & tables(tmp_path / "T" / "tournament.sqlite")
    for name in ("tournament.sqlite", ACCOUNTS_NAME):
        assert secret.split("_", 2)[2].encode() not in (tmp_path / "T" / name).read_bytes()


def _locks_held(path: Path) -> int:
    """POSIX locks this process holds on ``path`` now (/proc/locks)."""
    st = path.stat()
    inode = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    pid = str(os.getpid())
    held = 0
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "POSIX" in fields and pid in fields and inode in fields:
            held += 1
    return held


def test_a_second_connection_keeps_the_first_ones_locks(tmp_path: Path) -> None:
    """Opening the accounts again in the same process (the arena does, per thread) must not drop
    the SQLite locks its other connections hold: closing any descriptor of a file drops all of a
    process's POSIX locks on it, after which another process takes the database for unused and
    resets its shared memory under the first connection (SIGBUS, or worse, lost writes). The
    owner-only check therefore never opens the files it checks (O_PATH)."""
    first = Accounts(tmp_path / "T", create=True)
    shm = tmp_path / "T" / f"{ACCOUNTS_NAME}-shm"
    assert shm.exists()
    before = _locks_held(shm)
    assert before >= 1  # SQLite's hold on the shared memory, for the connection's life
    second = Accounts(tmp_path / "T")
    assert _locks_held(shm) >= before, "the second open dropped the first one's locks"
    second.close()
    first.close()
