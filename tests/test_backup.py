"""`referee backup` and `referee restore`: a consistent copy of an arena while it serves.

The main test runs the real server (local sandbox, tables of 2) with its ladder playing and a
submission being validated, backs it up with the real command, restores the copy into a fresh
folder, checks it with `referee verify --tournament` and starts a server on it that goes on: the
submission recorded before the backup is validated there, the ladder plays on, the tokens work. The
others hold the copy to SQLite's own view under a busy writer, and give the commands bad paths and
hostile backups: each gets one line and exit code 2, and nothing is written.
"""

from __future__ import annotations

import json
import sqlite3
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from arena_support import SLOW_BOT, Server, add_author, db_rows, games_recorded, wait_until
from support import EXAMPLES, referee, referee_env

from take5_arena.referee.store.backup import online_copy
from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.backup import MANIFEST
from take5_arena.service.client import pack_folder


def _records(directory: Path) -> dict[str, str]:
    return dict(db_rows(directory, "SELECT game_id, record FROM results"))


def _modes(folder: Path) -> set[str]:
    """Every file or folder that others may read or enter, as 'path: mode' (none: private)."""
    loose = set()
    for path in [folder, *folder.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        if mode & 0o077:
            loose.add(f"{path.relative_to(folder)}: {oct(mode)}")
    return loose


@pytest.mark.slow
def test_backup_while_serving_restores_and_the_arena_goes_on(tmp_path: Path) -> None:
    directory = tmp_path / "T"
    token = add_author(directory, "alice", "--per-hour", "100")
    args = ("--sandbox", "local", "--players", "2", "-j", "1", "--bootstrap", "0")
    args += ("--publish-every-seconds", "1")
    server = Server(directory, *args)
    slow = tmp_path / "slow"
    slow.mkdir()
    (slow / "bot.py").write_text(SLOW_BOT)
    try:
        with server.client(token) as client:
            for bot in ("random", "lowest"):
                assert client.submit(bot, pack_folder(EXAMPLES / bot)).outcome == pb.SUBMIT_ACCEPTED
        wait_until(lambda: games_recorded(directory) >= 4, what="ladder games", server=server)
        submit = subprocess.Popen(
            [sys.executable, "-m", "take5_arena", "submit", str(slow), "--server", server.address],
            env=referee_env(TAKE5_TOKEN=token),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_until(
            lambda: (
                db_rows(directory, "SELECT status FROM arena_submissions WHERE bot_name = 'slow'")
                == [("validating",)]
            ),
            what="the slow bot's validation to start",
            server=server,
        )
        before = _records(directory)
        done = referee("backup", "-t", str(directory), str(tmp_path / "B"), timeout=600)
        after = _records(directory)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "checked: every record valid" in done.stdout
        assert "Traceback" not in done.stderr
        submit.communicate(timeout=120)
        assert submit.returncode == 0
    finally:
        assert server.stop() == 0, server.log

    backup = tmp_path / "B"
    assert not _modes(backup), "a backup is its owner's alone"
    # nothing lost: every game recorded when the backup began is in it, as it was recorded, and it
    # holds nothing the store did not (the ladder played on meanwhile: after >= copied >= before)
    copied = _records(backup)
    assert before.items() <= copied.items() <= after.items()
    manifest = json.loads((backup / MANIFEST).read_text())
    names = {f["path"] for f in manifest["files"]}
    assert {"tournament.sqlite", "accounts.sqlite"} <= names
    assert len([n for n in names if n.startswith("artifacts/")]) == 2  # random and lowest
    assert len([n for n in names if n.startswith("arena/uploads/")]) == 1  # slow, still validating
    assert db_rows(backup, "SELECT status FROM arena_submissions WHERE bot_name = 'slow'") == [
        ("validating",)
    ]
    check = referee("verify", "--tournament", str(backup), "--quiet")
    assert check.returncode == 0, check.stdout + check.stderr

    restored = tmp_path / "R"
    done = referee("restore", str(backup), str(restored), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _records(restored) == copied
    assert not _modes(restored)
    check = referee("verify", "--tournament", str(restored), "--quiet")
    assert check.returncode == 0, check.stdout + check.stderr

    # the restored arena goes on: the submission recorded before the backup is validated from the
    # upload the backup carried, the same token works, the ladder plays on
    server = Server(restored, *args)
    try:
        server.wait_for(r"validating submission .* \(alice/slow\) recorded before the restart")
        wait_until(
            lambda: (
                db_rows(restored, "SELECT status FROM arena_submissions WHERE bot_name = 'slow'")
                == [("accepted",)]
            ),
            what="the restored submission to be validated",
            server=server,
        )
        wait_until(
            lambda: games_recorded(restored) >= len(copied) + 2,
            what="ladder games on the restored arena",
            server=server,
        )
        with server.client(token) as client:
            assert {b.name for b in client.my_bots().bots} == {"random", "lowest", "slow"}
    finally:
        assert server.stop() == 0, server.log
    assert copied.items() <= _records(restored).items()
    check = referee("verify", "--tournament", str(restored), "--quiet")
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_online_copy_is_one_snapshot_under_a_busy_writer(tmp_path: Path) -> None:
    """A writer commits pairs of rows (in WAL mode, like the store) as fast as it can while copies
    are taken: every copy passes SQLite's integrity check and holds whole transactions only."""
    source = tmp_path / "live.sqlite"
    db = sqlite3.connect(source, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("CREATE TABLE t (n INTEGER, half INTEGER, pad TEXT)")
    stop = threading.Event()

    def write() -> None:
        n = 0
        while not stop.is_set():
            db.execute("BEGIN IMMEDIATE")
            db.executemany("INSERT INTO t VALUES (?, ?, ?)", [(n, 0, "x" * 500), (n, 1, "y" * 500)])
            db.execute("COMMIT")
            n += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        counts = []
        for i in range(8):
            target = tmp_path / f"copy{i}.sqlite"
            copied = online_copy(source, target)
            assert copied.bytes == target.stat().st_size
            assert stat.S_IMODE(target.stat().st_mode) == 0o600
            con = sqlite3.connect(target)
            try:
                assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
                assert con.execute("PRAGMA journal_mode").fetchone() == ("delete",)
                rows, pairs = con.execute("SELECT COUNT(*), COUNT(DISTINCT n) FROM t").fetchone()
            finally:
                con.close()
            assert rows == 2 * pairs  # no transaction cut in half
            counts.append(rows)
    finally:
        stop.set()
        writer.join()
        db.close()
    assert counts == sorted(counts) and counts[-1] > 0


def _one_line(done: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("referee: ")]
    assert len(errors) == 1, done.stderr  # the progress lines before it say what it was doing
    for fragment in fragments:
        assert fragment in errors[0], errors[0]


def test_bad_paths_get_one_line_and_exit_2(tmp_path: Path, empty_tournament: Path) -> None:
    _one_line(referee("backup", "-t", str(tmp_path / "none"), str(tmp_path / "B")), "no tournament")
    _one_line(
        referee("backup", str(empty_tournament), str(tmp_path / "no" / "such" / "B")),
        "no such folder",
    )
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("")
    _one_line(referee("backup", str(empty_tournament), str(busy)), "not empty")
    usage = referee("backup", str(empty_tournament))
    assert usage.returncode == 2 and "Traceback" not in usage.stderr

    # an empty tournament (no accounts, no archives) is backed up and restored too
    done = referee("backup", str(empty_tournament), str(tmp_path / "B"))
    assert done.returncode == 0, done.stderr
    assert "0 games, 0 archives" in done.stdout
    assert not list(tmp_path.glob(".B.partial-*"))
    _one_line(referee("restore", str(tmp_path / "B"), str(busy)), "not an empty folder")
    _one_line(referee("restore", str(empty_tournament), str(tmp_path / "R")), "not a backup")
    done = referee("restore", str(tmp_path / "B"), str(tmp_path / "R"), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["games"] == 0


def _hostile(tmp_path: Path, source: Path, name: str, edit) -> Path:
    """A copy of the backup ``source`` named ``name``, its manifest or files changed by ``edit``."""
    target = tmp_path / name
    subprocess.run(["cp", "-a", str(source), str(target)], check=True)
    manifest = json.loads((target / MANIFEST).read_text())
    raw = edit(target, manifest)  # bytes: the manifest itself replaced
    (target / MANIFEST).write_bytes(
        raw if isinstance(raw, bytes) else json.dumps(manifest).encode()
    )
    return target


def test_hostile_backups_are_refused_and_nothing_is_written(
    tmp_path: Path, empty_tournament: Path
) -> None:
    good = tmp_path / "good"
    assert referee("backup", str(empty_tournament), str(good)).returncode == 0
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")

    def add(path: str, data: bytes = b"x", size: int | None = None, sha: str = "0" * 64):
        def edit(folder: Path, manifest: dict) -> None:
            manifest["files"].append(
                {"path": path, "bytes": len(data) if size is None else size, "sha256": sha}
            )

        return edit

    def symlinked(folder: Path, manifest: dict) -> None:
        store = folder / "tournament.sqlite"
        store.unlink()
        store.symlink_to(outside)

    def damaged(folder: Path, manifest: dict) -> None:
        store = folder / "tournament.sqlite"
        data = bytearray(store.read_bytes())
        data[200] ^= 0xFF
        store.write_bytes(bytes(data))

    def not_json(folder: Path, manifest: dict) -> bytes:
        return b"\x1b[31m{not json"

    cases = {
        "dotdot": (add("../outside.txt"), "may not hold"),
        "absolute": (add(str(outside)), "may not hold"),
        "other file": (add("arena/bots/x/bot.py"), "may not hold"),
        "escape": (add("\x1b]0;pwned\x07"), "may not hold"),
        "twice": (add("tournament.sqlite"), "may not hold"),
        "bad size": (add("artifacts/" + "a" * 64 + ".tar", size=-1), "no valid size"),
        "missing": (add("artifacts/" + "a" * 64 + ".tar"), "missing"),
        "symlink": (symlinked, "cannot be read"),
        "damaged": (damaged, "damaged"),
        "not json": (not_json, "not a manifest"),
        "no store": (lambda f, m: m.update(files=[]), "no tournament.sqlite"),
        "newer": (lambda f, m: m.update(version=99), "format version"),
    }
    for name, (edit, fragment) in cases.items():
        source = _hostile(tmp_path, good, name.replace(" ", "-"), edit)
        restored = tmp_path / f"R-{name.replace(' ', '-')}"
        done = referee("restore", str(source), str(restored))
        _one_line(done, fragment)
        assert "\x1b" not in done.stderr and "\x07" not in done.stderr
        assert not restored.exists(), name
        assert not list(tmp_path.glob(f".{restored.name}.partial-*")), name
    assert outside.read_text() == "secret"
