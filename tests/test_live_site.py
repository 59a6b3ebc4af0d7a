"""The live site of `referee serve`: every publication a complete new version, switched to at once
(take5_arena/leaderboard/site_versions.py), so `referee verify --site` passes however often it
runs while the arena republishes; and stopping the arena publishes last."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from arena_support import Server, add_author, cli, games_published, wait_until
from support import EXAMPLES

from take5_arena.leaderboard import site_versions
from take5_arena.leaderboard.site_versions import (
    current_version,
    is_versioned,
    publish_versioned,
    versions_dir,
)


def _writer(text: str):
    def write(folder: Path) -> str:
        (folder / "data").mkdir(exist_ok=True)
        (folder / "index.html").write_text(text)
        target = folder / "data" / "page.js"
        fresh = folder / "data" / ".page.js.tmp"
        fresh.write_text(text)
        os.replace(fresh, target)  # as site_build writes: a new file renamed over the old
        with (folder / "manifest.jsonl").open("a") as f:
            f.write(text + "\n")
        return text

    return write


def test_each_publication_is_a_new_version_switched_to_at_once(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()  # a plain folder published before: it becomes the first old version
    (site / "index.html").write_text("old")
    assert publish_versioned(site, _writer("one")) == "one"
    assert is_versioned(site) and (site / "index.html").read_text() == "one"
    first = current_version(site)
    assert first is not None and first.parent == versions_dir(site)

    assert publish_versioned(site, _writer("two")) == "two"
    second = current_version(site)
    assert second != first
    # the version a reader opened before is unchanged: the shared files were replaced, not edited
    assert (first / "data" / "page.js").read_text() == "one"
    assert (first / "manifest.jsonl").read_text() == "one\n"
    assert (site / "manifest.jsonl").read_text() == "one\ntwo\n"

    def fails(folder: Path) -> None:
        (folder / "index.html").write_text("half")
        raise RuntimeError("the disk is full")

    with pytest.raises(RuntimeError):
        publish_versioned(site, fails)
    assert current_version(site) == second and (site / "index.html").read_text() == "two"
    assert not list(versions_dir(site).glob(".*.partial"))

    # a version a killed publisher left half made is removed by the next publication
    gone = subprocess.Popen(["true"])
    gone.wait()
    leftover = versions_dir(site) / f".000099.{gone.pid}.partial"
    leftover.mkdir()

    # a symlink planted in the current version is not carried into the next
    (second / "data" / "planted").symlink_to("/etc/passwd")
    publish_versioned(site, _writer("three"))
    assert not (site / "data" / "planted").exists()
    assert not leftover.exists()

    monkeypatch.setattr(site_versions, "KEEP_SECONDS", 0.0)
    for n in range(5):
        publish_versioned(site, _writer(f"more {n}"))
    kept = list(versions_dir(site).iterdir())
    assert len(kept) == site_versions.KEEP_VERSIONS + 1, kept
    assert current_version(site) in kept


def test_verify_site_passes_while_the_arena_republishes_and_stop_publishes_last(tmp_path):
    directory = tmp_path / "T"
    token = add_author(directory, "alice", "--per-hour", "100")
    server = Server(
        directory,
        "--sandbox",
        "local",
        "--players",
        "2",
        "-j",
        "1",
        "--bootstrap",
        "0",
        "--publish-every-games",
        "1",
        "--publish-every-seconds",
        "0.1",
    )
    site = directory / "site"
    try:
        for bot in ("random", "lowest"):
            done = cli("submit", str(EXAMPLES / bot), "--server", server.address, token=token)
            assert done.returncode == 0, done.stderr
        wait_until(lambda: is_versioned(site), what="the published site", server=server)
        seen = set()
        for _ in range(4):
            seen.add(current_version(site))
            done = cli("verify", "--site", str(site), timeout=300)
            assert done.returncode == 0, done.stdout + done.stderr
            assert "ok:" in done.stdout, done.stdout
        seen.add(current_version(site))
        assert len(seen) >= 2, "the site was not republished while it was verified"
    finally:
        assert server.stop() == 0, server.log
    manifest = json.loads((site / "manifest.json").read_text())
    # every game recorded is on the site, but for those of a deal whose other rotations were still
    # to play when the ladder stopped (published once they are: docs/security.md, "Deals")
    assert manifest["games"] == games_published(directory) > 0, server.log
    done = cli("verify", "--site", str(site), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_kept_standings_equal_a_fresh_compute_after_new_bots_and_versions(tmp_path):
    """The publisher keeps the standings game by game (leaderboard/live_board.py) and publishes
    every game here: after new bots and a new version (which relabels the old one's games as
    ``name@v1``), standings.json is what the records give computed afresh, intervals included."""
    from take5_arena.leaderboard.board import compute_standings
    from take5_arena.standings import load_tournament

    directory = tmp_path / "T"
    token = add_author(directory, "alice", "--per-hour", "100")
    server = Server(
        directory,
        "--sandbox",
        "local",
        "--players",
        "2",
        "-j",
        "1",
        "--bootstrap",
        "100",
        "--publish-every-games",
        "1",
        "--publish-every-seconds",
        "0.1",
    )
    site = directory / "site"

    def submit(bot: str, name: str) -> None:
        done = cli(
            "submit", str(EXAMPLES / bot), "--name", name, "--server", server.address, token=token
        )
        assert done.returncode == 0, done.stderr

    def published() -> tuple[int, set[str]]:
        try:
            doc = json.loads((site / "standings.json").read_text())
        except (OSError, ValueError):
            return 0, set()
        return int(doc["games"]), {r["entrant"] for r in doc["rows"]}

    try:
        submit("random", "alpha")
        submit("lowest", "beta")
        wait_until(lambda: published()[0] >= 4, what="four games published", server=server)
        submit("heuristic", "alpha")  # alpha v2: alpha's games so far are alpha@v1's now
        submit("random", "gamma")
        wait_until(
            lambda: {"alpha", "alpha@v1", "beta", "gamma"} <= published()[1],
            what="games of the new bot and the new version published",
            server=server,
        )
    finally:
        assert server.stop() == 0, server.log
    doc = json.loads((site / "standings.json").read_text())
    games = load_tournament(directory)
    assert doc["games"] == len(games.results) == games_published(directory)
    # from every game at the start and after alpha's new version only; the rest kept game by game
    fresh_starts = server.log.count("standings from every game")
    assert 1 <= fresh_starts <= 3 < len(list(versions_dir(site).iterdir())), server.log
    assert {"alpha@v1", "alpha", "beta", "gamma"} <= {r["entrant"] for r in doc["rows"]}
    fresh = compute_standings(games.results, bootstrap=100, seed=0).to_json_dict()
    assert "intervals_as_of" not in doc  # a small arena's intervals are of every game
    assert doc["method"] == fresh["method"]
    assert [r["entrant"] for r in doc["rows"]] == [r["entrant"] for r in fresh["rows"]]
    for got, want in zip(doc["rows"], fresh["rows"]):
        for key, value in want.items():
            if isinstance(value, float):
                assert abs(got[key] - value) < 1e-6, (key, got, want)
            elif key == "interval" and value is not None:
                assert max(abs(a - b) for a, b in zip(got[key], value)) < 1e-6, (got, want)
            else:
                assert got[key] == value, (key, got, want)
    done = cli("verify", "--site", str(site), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
