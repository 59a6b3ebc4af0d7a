"""`referee backup` and `referee restore`: a consistent copy of an arena while it serves.

The main test runs the real server (local sandbox, tables of 2) with its ladder playing and a
submission being validated, backs it up with the real command, restores the copy into a fresh
folder, checks it with `referee verify --tournament` and starts a server on it that goes on: the
submission recorded before the backup is validated there, the ladder plays on, the tokens work. The
others hold the copy to SQLite's own view under a busy writer, and give the commands bad paths and
hostile backups: each gets one line and exit code 2, and nothing is written.
"""

from __future__ import annotations

import hashlib
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
from take5_arena.service.backup import KEY_NAME, MANIFEST, key_id, load_key, manifest_mac
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
    key = str(directory / KEY_NAME)  # made by the first backup, never in one
    done = referee("restore", str(backup), str(restored), "--key", key, timeout=600)
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
    key = str(empty_tournament / KEY_NAME)
    _one_line(referee("restore", str(tmp_path / "B"), str(busy), "--key", key), "not an empty")
    _one_line(
        referee("restore", str(empty_tournament), str(tmp_path / "R"), "--key", key),
        "not a backup",
    )
    _one_line(
        referee("restore", str(tmp_path / "B"), str(tmp_path / "R"), "--key", str(busy / "x")),
        "not a backup key",
    )
    done = referee("restore", str(tmp_path / "B"), str(tmp_path / "R"), "--key", key, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["games"] == 0


def _hostile(tmp_path: Path, source: Path, name: str, edit, key: bytes | None = None) -> Path:
    """A copy of the backup ``source`` named ``name``, its manifest or files changed by ``edit``,
    the manifest then authenticated again with ``key`` (the checks behind the HMAC's)."""
    target = tmp_path / name
    subprocess.run(["cp", "-a", str(source), str(target)], check=True)
    manifest = json.loads((target / MANIFEST).read_text())
    raw = edit(target, manifest)  # bytes: the manifest itself replaced
    if key is not None and isinstance(manifest.get("files"), list):
        manifest["hmac_sha256"] = manifest_mac(manifest, key)
    (target / MANIFEST).write_bytes(
        raw if isinstance(raw, bytes) else json.dumps(manifest).encode()
    )
    return target


def test_hostile_backups_are_refused_and_nothing_is_written(
    tmp_path: Path, empty_tournament: Path
) -> None:
    good = tmp_path / "good"
    assert referee("backup", str(empty_tournament), str(good)).returncode == 0
    key_file = empty_tournament / KEY_NAME
    key = load_key(key_file)
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
        # as if made with the key: the checks of paths and files behind the HMAC's
        source = _hostile(tmp_path, good, name.replace(" ", "-"), edit, key)
        restored = tmp_path / f"R-{name.replace(' ', '-')}"
        done = referee("restore", str(source), str(restored), "--key", str(key_file))
        _one_line(done, fragment)
        assert "\x1b" not in done.stderr and "\x07" not in done.stderr
        assert not restored.exists(), name
        assert not list(tmp_path.glob(f".{restored.name}.partial-*")), name
    assert outside.read_text() == "secret"


def _rewrite(folder: Path, db: str, sql: str, *args: object) -> None:
    """``sql`` run on a database of a backup, and the manifest's sums computed again: what someone
    who can write to the backups, but has not the key, can do."""
    con = sqlite3.connect(folder / db)
    with con:
        assert con.execute(sql, args).rowcount >= 1, sql
    con.close()
    manifest = json.loads((folder / MANIFEST).read_text())
    for entry in manifest["files"]:
        data = (folder / entry["path"]).read_bytes()
        entry["bytes"], entry["sha256"] = len(data), hashlib.sha256(data).hexdigest()
    (folder / MANIFEST).write_text(json.dumps(manifest))


def test_a_backup_rewritten_without_the_key_is_refused(tmp_path: Path) -> None:
    """An arena's backup (accounts with a bot, a revoked author, a store) edited by someone who
    can write to the backups: a bot moved to another author, a token hash of theirs, a revocation
    undone, the store's authors changed, each with the manifest's sums made right again; a
    manifest authenticated with their own key; one turned back into format 1. Restore refuses each
    with one line and writes nothing; the backup as made restores."""
    directory = tmp_path / "T"
    tokens = {n: add_author(directory, n) for n in ("alice", "bob", "carol")}
    server = Server(directory, "--sandbox", "local", "--players", "2", "--no-ladder")
    try:
        with server.client(tokens["alice"]) as alice:
            reply = alice.submit("lowest", pack_folder(EXAMPLES / "lowest"))
            assert reply.outcome == pb.SUBMIT_ACCEPTED, reply
    finally:
        assert server.stop() == 0, server.log
    done = referee("authors", "revoke", "carol", "-t", str(directory))
    assert done.returncode == 0, done.stderr
    good = tmp_path / "good"
    done = referee("backup", "-t", str(directory), str(good))
    assert done.returncode == 0, done.stdout + done.stderr
    key_file = directory / KEY_NAME
    assert "backup-key" in done.stderr and not (good / KEY_NAME).exists()
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600

    def copy(name: str) -> Path:
        target = tmp_path / name
        subprocess.run(["cp", "-a", str(good), str(target)], check=True)
        return target

    def own_key(folder: Path) -> None:
        mine = bytes(32)
        manifest = json.loads((folder / MANIFEST).read_text())
        manifest["key_id"] = key_id(mine)
        manifest["hmac_sha256"] = manifest_mac(manifest, mine)
        (folder / MANIFEST).write_text(json.dumps(manifest))

    def format_1(folder: Path) -> None:
        manifest = json.loads((folder / MANIFEST).read_text())
        for field in ("key_id", "hmac_sha256"):
            del manifest[field]
        manifest["version"] = 1
        (folder / MANIFEST).write_text(json.dumps(manifest))

    accounts = "accounts.sqlite"
    cases = {
        "bot moved": (
            lambda f: _rewrite(f, accounts, "UPDATE arena_bots SET author = 'bob'"),
            "HMAC does not match",
        ),
        "token hash": (
            lambda f: _rewrite(
                f,
                accounts,
                "UPDATE arena_authors SET salt = ?, token_hash = ? WHERE name = 'alice'",
                bytes(16),
                bytes(32),
            ),
            "HMAC does not match",
        ),
        "revocation undone": (
            lambda f: _rewrite(
                f,
                accounts,
                "UPDATE arena_authors SET revoked_at = NULL WHERE revoked_at IS NOT NULL",
            ),
            "HMAC does not match",
        ),
        "store": (
            lambda f: _rewrite(f, "tournament.sqlite", "UPDATE entrants SET author = 'bob'"),
            "HMAC does not match",
        ),
        "own key": (own_key, "another backup key"),
        "format 1": (format_1, "format version 1"),
    }
    for name, (edit, fragment) in cases.items():
        source = copy(name.replace(" ", "-"))
        edit(source)
        restored = tmp_path / f"R-{name.replace(' ', '-')}"
        done = referee("restore", str(source), str(restored), "--key", str(key_file))
        _one_line(done, fragment)
        assert not restored.exists(), name
    usage = referee("restore", str(good), str(tmp_path / "R"))
    assert usage.returncode == 2 and "--key" in usage.stderr and "Traceback" not in usage.stderr
    done = referee("restore", str(good), str(tmp_path / "R"), "--key", str(key_file))
    assert done.returncode == 0, done.stdout + done.stderr
    assert load_key(tmp_path / "R" / KEY_NAME) == load_key(key_file)  # its next backups' key
    assert db_rows(tmp_path / "R", "SELECT bot_name, author FROM arena_bots") == [
        ("lowest", "alice")
    ]


def test_an_arena_backup_holds_every_competition(tmp_path: Path) -> None:
    """An arena with two competitions besides the default, games in each: the backup holds each
    competition's store, archives and deal keys under competitions/NAME, authenticated with the
    rest; restore puts them back and each verifies; an edited competition file is refused."""
    t = tmp_path / "T"
    add_author(t, "alice")  # makes the arena
    games = {}
    for name, players in (("four", "4"), ("duel", "2")):
        made = referee("competition", "add", name, "-t", str(t), "--players", players)
        assert made.returncode == 0, made.stderr
        for bot in ("lowest", "random", "heuristic", "planner"):
            entered = referee(
                "submit", str(EXAMPLES / bot), "--name", bot, "-t", str(t),
                "--competition", name, "--sandbox", "local",
            )  # fmt: skip
            assert entered.returncode == 0, entered.stdout + entered.stderr
        ran = referee(
            "tournament", "run", "--tournament", str(t / "competitions" / name),
            "--sandbox", "local", "--players", players, "--rounds", "1", "--no-progress",
            "--format", "swiss", timeout=600,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stdout + ran.stderr
        games[name] = _records(t / "competitions" / name)
        assert games[name]
    backup = tmp_path / "B"
    done = referee("backup", "-t", str(t), str(backup), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "competitions: duel, four" in done.stdout, done.stdout
    assert not _modes(backup)
    names = {f["path"] for f in json.loads((backup / MANIFEST).read_text())["files"]}
    for name in games:
        assert f"competitions/{name}/tournament.sqlite" in names
        assert len([n for n in names if n.startswith(f"competitions/{name}/artifacts/")]) == 4
        assert f"competitions/{name}/secret/deal-root" in names
        assert _records(backup / "competitions" / name) == games[name]

    key = t / KEY_NAME
    restored = tmp_path / "R"
    done = referee("restore", str(backup), str(restored), "--key", str(key), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not _modes(restored)
    listed = referee("competition", "list", "-t", str(restored), "--json")
    assert [c["name"] for c in json.loads(listed.stdout)][1:] == ["duel", "four"]
    for name in games:
        assert _records(restored / "competitions" / name) == games[name]
        check = referee("verify", "--tournament", str(restored / "competitions" / name))
        assert check.returncode == 0, check.stdout + check.stderr

    # someone who can write to the backups: a competition's game rewritten, the sums made right
    edited = tmp_path / "edited"
    subprocess.run(["cp", "-a", str(backup), str(edited)], check=True)
    _rewrite(edited, "competitions/four/tournament.sqlite", "DELETE FROM results WHERE rowid = 1")
    refused = tmp_path / "R2"
    done = referee("restore", str(edited), str(refused), "--key", str(key))
    _one_line(done, "HMAC does not match")
    assert not refused.exists()
    # and one with the key (the checks behind the HMAC): a folder that is no competition's name
    key_bytes = load_key(key)
    for path in (
        "competitions/../tournament.sqlite",
        "competitions/Four/tournament.sqlite",
        "competitions/four/accounts.sqlite",
        "competitions/four/arena/uploads/x.tgz",
    ):

        def edit(folder: Path, manifest: dict, path: str = path) -> None:
            manifest["files"].append({"path": path, "bytes": 1, "sha256": "0" * 64})

        source = _hostile(tmp_path, backup, "hostile", edit, key_bytes)
        done = referee("restore", str(source), str(refused), "--key", str(key))
        _one_line(done, "may not hold")
        assert not refused.exists()
        subprocess.run(["rm", "-rf", str(source)], check=True)
