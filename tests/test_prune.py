"""`referee prune`: old uploads, validated folders and cached archives go, what plays stays.

An arena made by the real server (local sandbox, no ladder) holds two accepted bots' validated
folders (their uploads are gone once judged); one is made old by hand (its modification times),
listed by a dry run that changes nothing, then removed, and the ladder then plays both bots from
their archives."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from arena_support import Server, add_author, games_recorded, wait_until
from support import EXAMPLES, referee

from take5_arena.referee.artifacts import is_cached, materialize, pack
from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.client import pack_folder

DAY = 86400.0


def _age(path: Path, days: float) -> None:
    stamp = time.time() - days * DAY
    for p in [path, *path.rglob("*")] if path.is_dir() else [path]:
        os.utime(p, (stamp, stamp), follow_symlinks=False)


def test_prune_an_arena(tmp_path: Path) -> None:
    directory = tmp_path / "T"
    token = add_author(directory, "alice")
    server = Server(directory, "--sandbox", "local", "--no-ladder")
    try:
        with server.client(token) as client:
            for bot in ("random", "lowest"):
                assert client.submit(bot, pack_folder(EXAMPLES / bot)).outcome == pb.SUBMIT_ACCEPTED
    finally:
        assert server.stop() == 0, server.log
    uploads = sorted((directory / "arena" / "uploads").glob("*.tgz"))
    folders = sorted((directory / "arena" / "bots").glob("*/*"))
    artifacts = sorted((directory / "artifacts").iterdir())
    # The arena removes a judged submission's upload itself; prune takes what an older arena, or
    # a server killed before it could, left behind.
    assert not uploads
    assert len(folders) == len(artifacts) == 2
    _age(folders[0], 30)

    dry = referee("prune", "-t", str(directory), "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    listed = {Path(r["path"]) for r in json.loads(dry.stdout)["removed"]}
    assert listed == {folders[0]}
    assert all(p.exists() for p in folders)

    done = referee("prune", "-t", str(directory), "--older-than", "7")
    assert done.returncode == 0, done.stderr
    assert "freed" in done.stdout and "1 entry" in done.stdout
    assert not folders[0].exists()
    assert folders[1].exists()  # younger than 7 days
    assert sorted((directory / "artifacts").iterdir()) == artifacts
    # what plays stays: the ladder plays both bots from their archives
    server = Server(
        directory, "--sandbox", "local", "--players", "2", "-j", "1", "--bootstrap", "0"
    )
    try:
        wait_until(lambda: games_recorded(directory) >= 2, what="ladder games", server=server)
    finally:
        assert server.stop() == 0, server.log
    check = referee("verify", "--tournament", str(directory), "--quiet")
    assert check.returncode == 0, check.stdout + check.stderr

    # --older-than 0 still keeps what is younger than an hour (being written now)
    done = referee("prune", "-t", str(directory), "--older-than", "0")
    assert done.returncode == 0 and folders[1].exists()


def test_prune_a_worker_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    old, used = pack(EXAMPLES / "random"), pack(EXAMPLES / "lowest")
    for artifact in (old, used):
        materialize(artifact.digest, artifact.data, cache)
        _age(cache / artifact.digest[7:], 30)
    materialize(used.digest, None, cache)  # used now: its age starts again
    done = referee("prune", "--cache", str(cache), "--older-than", "7")
    assert done.returncode == 0, done.stderr
    assert not is_cached(old.digest, cache) and is_cached(used.digest, cache)
    # a table brings the archive along: the entry removed is unpacked again
    assert (materialize(old.digest, old.data, cache) / "bot.py").is_file()


def test_prune_needs_something_to_prune(tmp_path: Path) -> None:
    done = referee("prune")
    assert done.returncode == 2 and "give -t DIR" in done.stderr
    done = referee("prune", "-t", str(tmp_path / "none"))
    assert done.returncode == 2 and "not a tournament directory" in done.stderr
    assert "Traceback" not in done.stderr
