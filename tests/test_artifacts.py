"""Bot versions as content-addressed artifacts (referee/artifacts.py)."""

import os
import threading
from pathlib import Path

import pytest

from referee.artifacts import ArtifactError, ArtifactStore, digest_of, is_cached, materialize, pack


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
        except Exception as error:  # noqa: BLE001
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
