"""Bot versions as content-addressed artifacts (take5_arena/referee/artifacts.py)."""

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from support import EXAMPLES, ROOT

from take5_arena.referee.artifacts import (
    ArtifactError,
    ArtifactStore,
    digest_of,
    is_cached,
    materialize,
    pack,
)
from take5_arena.referee.store import SCHEMA_VERSION, Store
from take5_arena.referee.tournament import run_tournament, submission, submit


def _bot(tmp: Path, name: str = "bot") -> Path:
    folder = tmp / name
    (folder / "pkg").mkdir(parents=True)
    (folder / "bot.py").write_text("print('hi')\n")
    (folder / "pkg" / "util.py").write_text("X = 1\n")
    run = folder / "run"
    run.write_text("#!/bin/sh\nexit 0\n")
    run.chmod(0o755)
    return folder


def test_same_content_same_digest_whatever_the_times_and_owners(tmp_path):
    a = _bot(tmp_path, "a")
    b = _bot(tmp_path, "b")
    os.utime(b / "bot.py", (1, 1))
    assert pack(a).digest == pack(b).digest
    (b / "bot.py").write_text("print('changed')\n")
    assert pack(a).digest != pack(b).digest


def test_links_are_refused(tmp_path):
    folder = _bot(tmp_path)
    (folder / "secret").symlink_to("/etc/hostname")
    with pytest.raises(ArtifactError, match="secret"):
        pack(folder)


def test_materialize_checks_the_digest_and_keeps_modes(tmp_path):
    art = pack(_bot(tmp_path))
    cache = tmp_path / "cache"
    with pytest.raises(ArtifactError, match="does not match"):
        materialize(art.digest, art.data + b"x", cache)
    assert not is_cached(art.digest, cache)
    bot = materialize(art.digest, art.data, cache)
    assert (bot / "pkg" / "util.py").read_text() == "X = 1\n"
    assert os.access(bot / "run", os.X_OK) and not os.access(bot / "bot.py", os.X_OK)
    assert is_cached(art.digest, cache)
    assert materialize(art.digest, None, cache) == bot  # cached: no data needed
    with pytest.raises(ArtifactError, match="not cached"):
        materialize(digest_of(b"other"), None, cache)


def test_concurrent_materialize_unpacks_once(tmp_path):
    art = pack(_bot(tmp_path))
    cache = tmp_path / "cache"
    paths, errors = [], []

    def one():
        try:
            paths.append(materialize(art.digest, art.data, cache))
        except Exception as error:
            errors.append(error)

    threads = [threading.Thread(target=one) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(set(paths)) == 1
    assert sorted(p.name for p in cache.iterdir()) == [art.digest.split(":")[1]]


def test_store_keeps_each_artifact_once_and_detects_corruption(tmp_path):
    art = pack(_bot(tmp_path))
    store = ArtifactStore(tmp_path / "artifacts")
    path = store.put(art)
    assert store.put(art) == path and store.get(art.digest).data == art.data
    path.write_bytes(art.data[:-1] + b"\1")
    with pytest.raises(ArtifactError, match="corrupt"):
        store.get(art.digest)
    with pytest.raises(ArtifactError, match="not an artifact digest"):
        store.get("sha256:../../etc/passwd")


# -- what was validated is what plays (referee submit -> tournament run) ---------------------------


FLOODER = """
import sys
from take5 import Bot, run

class Flooder(Bot):
    name = "flooder"
    def pick_card(self, view):
        sys.stderr.write("x" * 500 + "\\n")
        sys.stderr.flush()
        return min(view.hand)

if __name__ == "__main__":
    run(Flooder())
"""


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    """Each test gets its own worker cache: nothing carries over from another test."""
    monkeypatch.setenv("TAKE5_ARTIFACT_CACHE", str(tmp_path / "worker-cache"))


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "take5_arena", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_folder_changed_or_deleted_after_submit_changes_nothing(tmp_path):
    tdir = tmp_path / "t"
    changed = shutil.copytree(EXAMPLES / "lowest", tmp_path / "changed")
    deleted = shutil.copytree(EXAMPLES / "random", tmp_path / "deleted")
    a = submit(tdir, changed, "changed", sandbox="local").version
    b = submit(tdir, deleted, "deleted", sandbox="local").version
    assert a.artifact and a.artifact.startswith("sha256:") and b.artifact
    assert (tdir / "artifacts" / f"{a.artifact.split(':')[1]}.tar").is_file()
    # After submission: one folder now crashes at start, the other is gone.
    (changed / "bot.py").write_text("raise SystemExit('not the validated version')\n")
    shutil.rmtree(deleted)
    report = run_tournament(tdir, {"players": 2, "games": 4, "sandbox": "local", "concurrency": 1})
    assert report.unplayed == 0 and not report.infra, report.infra
    with Store(tdir) as store:
        games = list(store.records.all())
        assert len(games) == 4
        for _gid, record in games:
            assert record["faults"] == [[], []], record["faults"]  # the crashing edit never played
            digests = {s["name"]: s.get("digest") for s in record["seats"]}
            assert digests == {
                "changed": f"sha256:{a.source_hash}",
                "deleted": f"sha256:{b.source_hash}",
            }
    done = _cli("verify", "--tournament", str(tdir))
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_missing_archive_is_a_clear_error_not_a_bot_fault(tmp_path):
    tdir = tmp_path / "t"
    for name in ("lowest", "random"):
        submit(tdir, EXAMPLES / name, name, sandbox="local")
    for tar in (tdir / "artifacts").glob("*.tar"):
        tar.write_bytes(tar.read_bytes() + b"tampered")
    done = _cli("tournament", "run", "-t", str(tdir), "-n", "2", "-g", "2", "--sandbox", "local")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "corrupt" in done.stderr and "submit the bot again" in done.stderr
    assert "Traceback" not in done.stderr


def test_smoke_games_look_like_tournament_games(tmp_path, monkeypatch):
    seen = []
    real = submission.Match

    def spy(refs, config, **kw):
        seen.append(config)
        return real(refs, config, **kw)

    monkeypatch.setattr(submission, "Match", spy)
    for i in range(2):
        submit(tmp_path / f"t{i}", EXAMPLES / "lowest", "lowest", sandbox="local")
    assert len(seen) == 2
    assert seen[0].seed != seen[1].seed, "the smoke deal is fixed: a bot could recognise it"
    for config in seen:
        ids = [config.plan(i, 2)[0] for i in range(2)]
        assert all(re.fullmatch(r"[0-9a-f]{16}", g) for g in ids), (
            ids
        )  # the form of schedule.game_id
        assert ids[0] != ids[1]
    assert set(seen[0].game_ids).isdisjoint(seen[1].game_ids)


def test_bot_output_is_kept_within_a_budget_per_bot(tmp_path):
    flooder = tmp_path / "flooder"
    flooder.mkdir()
    (flooder / "bot.py").write_text(FLOODER)
    tdir = tmp_path / "t"
    submit(tdir, flooder, "flooder", sandbox="local")
    submit(tdir, EXAMPLES / "lowest", "lowest", sandbox="local")
    budget = 40_000  # a game of this flooder keeps ~500 bytes a turn, 10-20 kB: a few games fit
    done = _cli(
        "tournament",
        "run",
        "-t",
        str(tdir),
        "-n",
        "2",
        "-g",
        "6",
        "-j",
        "1",
        "--sandbox",
        "local",
        "--output-budget",
        str(budget),
        "--no-progress",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    with Store(tdir) as store:
        flood_id = next(v.id for v in store.versions.all() if v.name == "flooder")
        kept = []
        for _gid, record in store.records.all():
            seat = next(i for i, s in enumerate(record["seats"]) if s["name"] == "flooder")
            kept.append(
                sum(
                    len(t.encode())
                    for r in record["rounds"]
                    for turn in r["turns"]
                    for s, t in turn.get("logs", ())
                    if s == seat
                )
            )
        usage = store.results.output_usage()[flood_id]
    assert sum(kept) <= budget and sum(kept) == usage["kept_bytes"]
    assert usage["dropped_games"] >= 1 and usage["kept_games"] >= 1
    assert kept[0] == 0 and kept[-1] > 0, kept  # the oldest dropped first, the newest kept
    done = _cli("verify", "--tournament", str(tdir))
    assert done.returncode == 0, done.stdout + done.stderr
    status = _cli("tournament", "status", "-t", str(tdir), "--json")
    flood = next(e for e in json.loads(status.stdout)["entrants"] if e["name"] == "flooder")
    assert flood["output"]["kept_bytes"] == usage["kept_bytes"]
    assert json.loads(status.stdout)["output_budget"] == budget
    text = _cli("tournament", "status", "-t", str(tdir)).stdout
    assert "its output:" in text and "oldest games" in text


def test_a_version_1_store_is_migrated(tmp_path):
    tdir = tmp_path / "t"
    submit(tdir, EXAMPLES / "lowest", "lowest", sandbox="local")
    db = sqlite3.connect(tdir / "tournament.sqlite")
    db.execute("ALTER TABLE entrant_versions DROP COLUMN artifact")
    db.execute("DROP TABLE bot_output")
    db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    with Store(tdir, readonly=True) as store:  # read-only: read as it is
        assert store.versions.all()[0].artifact is None and store.results.output_usage() == {}
    with Store(tdir) as store:
        assert (
            store.versions.all()[0].artifact is None
        )  # submitted before archives: plays its folder
        assert store.upgrade_backup is not None  # migrated, the file as it was kept beside it
    db = sqlite3.connect(tdir / "tournament.sqlite")
    try:
        (version,) = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    finally:
        db.close()
    assert version == str(SCHEMA_VERSION)
    assert submit(tdir, EXAMPLES / "lowest", "lowest", sandbox="local").version.artifact


def test_a_refused_bot_leaves_no_copy_behind(tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with pytest.raises(submission.SubmitRefusedError):
        submit(tmp_path / "t", ROOT / "tests" / "bots" / "crash_start", "crasher", sandbox="local")
    assert not list(scratch.iterdir())
    assert not (tmp_path / "worker-cache").exists() or not list(
        (tmp_path / "worker-cache").iterdir()
    )
    assert not (tmp_path / "t" / "artifacts").exists()


def test_a_planted_cache_folder_is_not_played(tmp_path, caplog):
    """Code planted under the victim's digest with the completion marker is moved aside, reported
    and replaced by the archive's own content."""
    art = pack(_bot(tmp_path))
    cache = tmp_path / "cache"
    bot = materialize(art.digest, art.data, cache)
    (bot / "bot.py").write_text("print('planted')\n")
    with caplog.at_level("WARNING"):
        again = materialize(art.digest, art.data, cache)
    assert (again / "bot.py").read_text() == "print('hi')\n"
    assert "does not match its digest" in caplog.text
    (again / "bot.py").write_text("print('planted')\n")
    with pytest.raises(ArtifactError, match="does not match its digest"):
        materialize(art.digest, None, cache)


def test_a_cache_open_to_others_is_closed_and_another_users_is_refused(tmp_path, caplog):
    art = pack(_bot(tmp_path))
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o777)
    with caplog.at_level("WARNING"):
        materialize(art.digest, art.data, cache)
    assert cache.stat().st_mode & 0o777 == 0o700 and "open to others" in caplog.text
    fresh = tmp_path / "fresh"
    materialize(art.digest, art.data, fresh)
    assert fresh.stat().st_mode & 0o777 == 0o700
    link = tmp_path / "link"
    link.symlink_to(fresh)
    with pytest.raises(ArtifactError, match="not a folder"):
        materialize(art.digest, art.data, link)
    if os.geteuid() == 0:
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o700)
        os.chown(theirs, 12345, 12345)
        with pytest.raises(ArtifactError, match="must belong to this user"):
            materialize(art.digest, art.data, theirs)


def test_a_cached_folder_is_hashed_again_only_when_the_kernel_says_it_changed(
    tmp_path, monkeypatch
):
    """verify_cached (every game's start and end) trusts a folder's stat snapshot taken around its
    last good hash, once nothing in it has changed for a while; a write of the same size, a new
    file or a replaced file changes the snapshot, and the bytes are hashed again."""
    from take5_arena.referee import artifacts

    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.py").write_text("print('good')\n")
    digest = pack(bot).digest
    monkeypatch.setattr(artifacts, "_SETTLED_NS", 0)  # no need to wait for the file times
    packs = []
    real = artifacts.pack
    monkeypatch.setattr(artifacts, "pack", lambda f: packs.append(f) or real(f))
    assert artifacts.verify_cached(digest, bot) and artifacts.verify_cached(digest, bot)
    assert len(packs) == 1  # the second time, the snapshot said nothing changed
    (bot / "bot.py").write_text("print('evil')\n")  # same size
    assert not artifacts.verify_cached(digest, bot)
    (bot / "bot.py").write_text("print('good')\n")
    assert artifacts.verify_cached(digest, bot)
    (bot / "extra.py").write_text("")
    assert not artifacts.verify_cached(digest, bot)
    (bot / "extra.py").unlink()
    assert artifacts.verify_cached(digest, bot)
    swapped = tmp_path / "swapped.py"
    swapped.write_text("print('good')\n")
    os.replace(swapped, bot / "bot.py")  # same bytes, another file: hashed again, still good
    before = len(packs)
    assert artifacts.verify_cached(digest, bot) and len(packs) == before + 1
