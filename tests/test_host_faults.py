"""The host fails the store: a damaged file, a full disk, a read-only disk, an empty file, a referee
killed mid-run. Each is one line and exit code 4, never a traceback, and nothing recorded is lost
or written into a damaged store (take5_arena/referee/store/health.py; docs/operations.md, "When
the host fails").

The full and read-only disks are real file systems (a small tmpfs this test mounts): they need
root, and skip without it (the damaged and empty files, the runs and the in-process full store do
not).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from arena_support import Server, add_author, wait_until
from support import EXAMPLES, referee

from take5_arena.referee.store import Store, health
from take5_arena.referee.store.health import (
    DAMAGED_SUFFIX,
    StoreDamagedError,
    StoreFaultError,
)
from take5_arena.referee.tournament import run_tournament, submit
from take5_arena.service.authors import ACCOUNTS_NAME, Accounts
from take5_arena.service.backup import KEY_NAME

PLAY = ("--sandbox", "local", "--executor", "local", "--players", "3", "--no-progress")


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tournament of 3 local bots with 6 games recorded, every connection closed (so the WAL is
    checkpointed into the file)."""
    directory = tmp_path_factory.mktemp("faults") / "t"
    for name in ("random", "lowest", "heuristic"):
        submit(directory, EXAMPLES / name, name, sandbox="local")
    report = run_tournament(
        directory, {"players": 3, "games": 6, "sandbox": "local", "executor": "local"}
    )
    assert report.played == 6
    return directory


@pytest.fixture
def tdir(played: Path, tmp_path: Path) -> Path:
    target = tmp_path / "t"
    shutil.copytree(played, target)
    return target


def one_line(done: subprocess.CompletedProcess[str], code: int, *words: str) -> str:
    """The command failed with ``code`` and said so in one line naming ``words``."""
    err = done.stderr.strip()
    assert done.returncode == code, (done.returncode, done.stdout[-2000:], err[-2000:])
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith("referee: "), err
    for word in words:
        assert word in err, err
    return err


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def wal_empty(store: Path) -> bool:
    wal = Path(f"{store}-wal")
    return not wal.exists() or wal.stat().st_size == 0


def recorded(directory: Path) -> int:
    with Store(directory, readonly=True) as store:
        return store.results.recorded_count()


def damage(path: Path, table: str) -> None:
    """Overwrite the page header of ``table``'s root page (as a torn write or a bad block does)."""
    db = sqlite3.connect(path)
    try:
        size = db.execute("PRAGMA page_size").fetchone()[0]
        (root,) = db.execute(
            "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
    finally:
        db.close()
    with path.open("r+b") as f:
        f.seek(size * (root - 1))
        f.write(b"\xff" * 12)


# -- a damaged store -------------------------------------------------------------------------------


def test_a_damaged_store_is_refused_by_every_command_and_never_written(tdir, tmp_path):
    good = tmp_path / "backup"
    assert referee("backup", "-t", str(tdir), str(good)).returncode == 0
    store = tdir / "tournament.sqlite"
    assert wal_empty(store)  # checkpointed: the file is the whole store
    damage(store, "games")
    before = digest(store)

    # The run that recorded 4 more games into such a store: refused before it writes anything.
    run = referee("tournament", "run", "-t", str(tdir), "--games", "12", *PLAY)
    one_line(run, 4, "is damaged", "referee restore")
    assert digest(store) == before
    assert wal_empty(store)
    mark = tdir / f"tournament.sqlite{DAMAGED_SUFFIX}"
    assert mark.is_file() and "malformed" in mark.read_text()

    # Readers too, from the mark (one stat, no check), the status that was silent included.
    for command in (
        ("tournament", "status", "-t", str(tdir)),
        ("standings", "-t", str(tdir)),
        ("verify", "--tournament", str(tdir)),
        ("submit", str(EXAMPLES / "random"), "--name", "r2", "-t", str(tdir), "--sandbox", "local"),
    ):
        one_line(referee(*command), 4, "found damaged", "referee restore")
    assert digest(store) == before

    # The operator's way out: the last backup, restored into a new folder, plays on.
    back = tmp_path / "restored"
    key = str(tdir / KEY_NAME)  # the arena's backup key, made by its first backup
    restored = referee("restore", str(good), str(back), "--key", key)
    assert restored.returncode == 0, restored.stderr
    run = referee("tournament", "run", "-t", str(back), "--games", "12", *PLAY)
    assert run.returncode == 0, run.stderr[-2000:]
    assert recorded(back) == 12


def test_damage_a_reader_meets_marks_the_store(tdir):
    """No check at a reader's open (the web opens one per request): the damaged page is met by the
    query that reads it, which refuses every later statement and leaves the mark."""
    damage(tdir / "tournament.sqlite", "results")
    with Store(tdir, readonly=True) as store:
        with pytest.raises(StoreDamagedError, match="is damaged"):
            list(store.records.all())
        with pytest.raises(StoreDamagedError):
            store.settings.get()  # a sound page, but nothing more is read from a damaged store
        assert isinstance(StoreDamagedError("x"), sqlite3.DatabaseError)  # still a finding's kind
    assert (tdir / f"tournament.sqlite{DAMAGED_SUFFIX}").is_file()
    with pytest.raises(StoreDamagedError, match="found damaged"):
        Store(tdir, readonly=True)
    # and `tournament status` checks every page itself, even where no query of it reads
    (tdir / f"tournament.sqlite{DAMAGED_SUFFIX}").unlink()
    one_line(referee("tournament", "status", "-t", str(tdir)), 4, "is damaged")


def test_the_damage_mark_is_not_set_by_a_query_error(tdir):
    """'malformed JSON' is a query's error, not the file's: no mark, the store stays usable."""
    db = health.connect(tdir / "tournament.sqlite", readonly=True)  # the store's own kind
    try:
        with pytest.raises(sqlite3.OperationalError, match="malformed JSON"):
            db.execute("SELECT json_extract('{', '$.a')").fetchone()
    finally:
        db.close()
    with Store(tdir, readonly=True) as store:
        assert store.results.recorded_count() == 6
    assert not (tdir / f"tournament.sqlite{DAMAGED_SUFFIX}").exists()


# -- a full disk -----------------------------------------------------------------------------------


@contextlib.contextmanager
def tmpfs(where: Path, size: str) -> Iterator[Path]:
    """A small file system of its own at ``where`` (root only: skips without it)."""
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path, leave: int) -> None:
    stat = os.statvfs(disk)
    free = stat.f_bavail * stat.f_frsize
    (disk / "filler").write_bytes(b"\0" * max(0, free - leave))


def test_a_full_disk_mid_run_is_one_line_and_the_run_resumes(played, tmp_path):
    with tmpfs(tmp_path / "disk", "4m") as disk:
        target = disk / "t"
        shutil.copytree(played, target)
        fill(disk, 160 * 1024)
        run = referee("tournament", "run", "-t", str(target), "--games", "300", *PLAY)
        one_line(run, 4, "the disk is full", "free space")
        kept = recorded(target)
        assert 6 <= kept < 300
        (disk / "filler").unlink()
        again = referee("tournament", "run", "-t", str(target), "--games", "60", *PLAY)
        assert again.returncode == 0, again.stderr[-2000:]
        assert recorded(target) == 60
        verify = referee("verify", "--tournament", str(target))
        assert verify.returncode == 0, verify.stdout[-2000:]


def test_accounts_on_a_full_disk_leave_no_empty_file(played, tmp_path):
    """A failed first `serve` left a 0-byte accounts.sqlite, which `referee backup` failed on."""
    with tmpfs(tmp_path / "disk", "4m") as disk:
        target = disk / "t"
        shutil.copytree(played, target)
        fill(disk, 0)
        with pytest.raises(StoreFaultError, match="the disk is full"):
            Accounts(target, create=True)
        assert not (target / ACCOUNTS_NAME).exists()


def test_a_full_store_rolls_back_and_keeps_what_it_had(tdir, tmp_path):
    """A write that the disk cannot hold fails whole, in one line, and the store goes on once
    there is room again."""
    with tmpfs(tmp_path / "disk", "4m") as disk:
        shutil.copytree(tdir, disk / "t")
        with Store(disk / "t") as store:
            fill(disk, leave=64 * 1024)
            with pytest.raises(StoreFaultError, match="the disk is full") as full:
                store.settings.set_note("big", "x" * 400_000)
            assert full.value.exit_code == 4 and "\n" not in str(full.value)
            assert store.settings.note("big") is None and store.results.recorded_count() == 6
            (disk / "filler").unlink()
            store.settings.set_note("small", "fits")  # not damaged: it goes on once there is room
            assert store.settings.note("small") == "fits"


# -- a read-only disk ------------------------------------------------------------------------------


def test_a_read_only_disk_refuses_writers_in_one_line_and_serves_readers(played, tmp_path):
    with tmpfs(tmp_path / "disk", "8m") as disk:
        target = disk / "t"
        shutil.copytree(played, target)
        before = recorded(target)
        remount = subprocess.run(
            ["mount", "-o", "remount,ro", str(disk)], capture_output=True, check=False
        )
        assert remount.returncode == 0, remount.stderr
        run = referee("tournament", "run", "-t", str(target), "--games", "12", *PLAY)
        one_line(run, 4, "mounted read-only")
        serve = referee(
            "serve", "-t", str(target), "--listen", "127.0.0.1:0", "--no-ladder", timeout=60
        )
        one_line(serve, 4, "read-only")
        status = referee("tournament", "status", "-t", str(target))
        assert status.returncode == 0, status.stderr
        standings = referee("standings", "-t", str(target))
        assert standings.returncode == 0 and "heuristic" in standings.stdout
        assert recorded(target) == before


# -- an empty file, a killed referee ---------------------------------------------------------------


def test_an_empty_store_file_is_one_line(tmp_path):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "tournament.sqlite").touch()
    one_line(referee("tournament", "status", "-t", str(tmp_path / "t")), 4, "is empty")


def test_a_killed_referees_runs_are_closed_at_the_next_start(tmp_path):
    with Store(tmp_path / "t", create=True) as store:
        for n in range(5):  # five referees SIGKILLed: their runs stayed running
            store.runs.begin(f"dead{n}", schedule_id="s", settings={}, games=4)
            store.runs.heartbeat(f"dead{n}", n)
        store.runs.begin("live", schedule_id="s", settings={}, games=4)
        runs = {r["run_id"]: r for r in store.runs.all()}
        assert runs["live"]["status"] == "running"
        for n in range(5):
            dead = runs[f"dead{n}"]
            assert dead["status"] == "killed" and dead["ended_at"] == dead["heartbeat_at"]


def test_an_empty_accounts_file_is_backed_up_as_none(tdir, tmp_path):
    """`referee backup` failed with a traceback on the 0-byte accounts.sqlite of a cut-off serve."""
    (tdir / ACCOUNTS_NAME).touch()
    done = referee("backup", "-t", str(tdir), str(tmp_path / "b"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (tmp_path / "b" / ACCOUNTS_NAME).exists()


def test_serve_killed_twice_leaves_no_run_running(tmp_path):
    """Five SIGKILLs of `serve` left five runs `running` for ever."""
    directory = tmp_path / "T"
    add_author(directory, "alice")

    def statuses() -> list[str]:
        with Store(directory, readonly=True) as store:
            return sorted(r["status"] for r in store.runs.all())

    for n in range(1, 3):
        server = Server(directory, "--sandbox", "local", "--players", "2")
        wait_until(lambda n=n: len(statuses()) == n, what="the ladder's run", server=server)
        server.kill()
    assert statuses() == ["killed", "running"]  # the last one's referee is as dead as the first's
    server = Server(directory, "--sandbox", "local", "--players", "2")
    try:
        wait_until(lambda: len(statuses()) == 3, what="the third run", server=server)
        assert statuses() == ["killed", "killed", "running"]
    finally:
        assert server.stop() == 0, server.log
    assert statuses() == ["interrupted", "killed", "killed"]


def test_a_ladder_that_fills_its_disk_pauses_in_one_line_and_resumes(tmp_path):
    """End to end: `referee serve` on a small file system of its own, whose ladder fills it with
    games and publications. It says so in one line (no traceback), pauses, loses nothing recorded
    and writes nothing half (the store and the published site verify), and plays on by itself
    once space is freed; an upload meanwhile is refused in one line or stored whole.
    (`tournament run` on a full disk: one line and exit 4, above.)"""
    with tmpfs(tmp_path / "disk", "6m") as disk:
        directory = disk / "T"
        token = add_author(directory, "alice")
        for name in ("random", "lowest"):
            submit(directory, EXAMPLES / name, name, sandbox="local")
        fill(disk, leave=400 * 1024)  # what the ladder then fills within a minute or so
        server = Server(
            directory, "--sandbox", "local", "--players", "2", "--publish-every-games", "5"
        )
        try:
            wait_until(
                lambda: "the disk is full" in server.log,
                timeout=600,
                what="a full disk",
                server=server,
            )
            paused = recorded(directory)
            assert paused > 0
            full = [line for line in server.lines if "the disk is full" in line]
            assert full and all("ladder paused" in line for line in full if "ladder" in line)
            assert "Traceback" not in server.log, server.log
            # an author's upload meanwhile: refused in one line, or stored whole (acknowledged)
            token_file = tmp_path / "token"
            token_file.write_text(token)
            sent = referee(
                "submit",
                str(EXAMPLES / "heuristic"),
                "--server",
                server.address,
                "--token-file",
                str(token_file),
            )
            err = sent.stderr.strip()
            assert "Traceback" not in err, err
            if sent.returncode != 0:  # after its line of progress, one line
                lines = err.splitlines()
                assert sent.returncode == 1 and len(lines) == 2, err
                assert lines[-1].startswith("referee: ") and "disk is full" in lines[-1], err
            (disk / "filler").unlink()
            wait_until(
                lambda: recorded(directory) >= paused + 6,
                timeout=600,
                what="games again",
                server=server,
            )
        finally:
            code = server.stop()
        assert code == 0, server.log[-3000:]
        assert "Traceback" not in server.log, server.log
        with Store(directory, readonly=True) as store:
            ids = [game_id for game_id, _ in store.records.all()]
        assert len(ids) == len(set(ids)) >= paused + 6
        if sent.returncode == 0:  # acknowledged: validated once the disk had room
            accounts = Accounts(directory)
            try:
                assert any(s.bot_name == "heuristic" for s in accounts.submissions_of("alice"))
            finally:
                accounts.close()
        verify = referee("verify", "-q", "--tournament", str(directory))
        assert verify.returncode == 0, verify.stdout[-2000:] + verify.stderr[-2000:]
        site = referee("verify", "-q", "--site", str(directory / "site"))
        assert site.returncode == 0, site.stdout[-2000:] + site.stderr[-2000:]
        check = sqlite3.connect(directory / "tournament.sqlite")
        try:
            assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            check.close()
