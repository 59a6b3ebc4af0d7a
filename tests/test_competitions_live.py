"""A competition added while `referee serve` runs (take5_arena/service/serve.py): the running
server opens it within seconds, as those it found at its start, and plays, publishes and takes
uploads into it, and its web pages show it; `referee competition add` and `list` say so
(DIR/serving.json). A folder of
DIR/competitions that is no competition (a bad name, no store, a symlink) is ignored; one that
cannot be opened (a damaged store, its run lock held by another process) is logged once and tried
again, and stops neither the server nor the other competitions."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from arena_support import Server, WebServer, add_author, cli, db_rows, wait_until
from support import EXAMPLES

from take5_arena.referee.tournament.run.lifecycle import run_lock
from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.client import pack_folder
from take5_arena.service.errors import ClientError


def _listed(directory: Path) -> dict[str, dict[str, Any]]:
    """`referee competition list --json`, by name ('' the default)."""
    done = cli("competition", "list", "-t", str(directory), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    return {c["name"]: c for c in json.loads(done.stdout)}


@pytest.mark.slow
def test_a_competition_added_while_serving_is_played_and_published(tmp_path: Path) -> None:
    t = tmp_path / "T"
    bots = {"alice": "heuristic", "bob": "lowest", "carol": "random"}
    tokens = {a: add_author(t, a, "--per-hour", "100") for a in bots}
    server = Server(
        t, "--sandbox", "local", "--players", "2", "-j", "1", "--bootstrap", "10",
        "--publish-every-seconds", "1", "--gauntlet", "1",
    )  # fmt: skip
    try:
        assert _listed(t)[""]["served"] is True
        made = cli(
            "competition", "add", "late", "-t", str(t), "--players", "3", "--sandbox", "local"
        )
        assert made.returncode == 0, made.stderr
        assert (
            f"the referee serving {t} (pid {server.proc.pid}) serves competition late within "
            "a few seconds"
        ) in made.stdout, made.stdout
        assert "restart" not in made.stdout
        server.wait_for(r"competition late: .*tables of 3", timeout=30)
        wait_until(lambda: _listed(t)["late"]["served"] is True, timeout=30, what="listed")
        late = t / "competitions" / "late"
        packed = {a: pack_folder(EXAMPLES / bot) for a, bot in bots.items()}
        for author, bot in bots.items():  # over gRPC, the request's competition field
            with server.client(tokens[author], competition="late") as client:
                judged = client.submit(bot, packed[author])
                assert judged.outcome == pb.SUBMIT_ACCEPTED, judged
        assert db_rows(late, "SELECT COUNT(*) FROM entrants")[0][0] == 3
        assert db_rows(t, "SELECT COUNT(*) FROM entrants")[0][0] == 0
        wait_until(
            lambda: db_rows(late, "SELECT COUNT(*) FROM results")[0][0] >= 2,
            timeout=240, what="games in the new competition", server=server,
        )  # fmt: skip
        rows = db_rows(late, "SELECT COUNT(*) FROM seat_results GROUP BY game_id")
        assert {n for (n,) in rows} == {3}
        with server.client(competition="late") as public:
            wait_until(lambda: len(public.standings().rows) == 3, what="standings of late")
            assert {r.bot for r in public.standings().rows} == set(bots.values())
    finally:
        assert server.stop() == 0, server.log
    assert "Traceback" not in server.log, server.log
    # its publisher's last publication, once its ladder stopped (while it plays, one can be
    # refused: the store's check before it reads in several statements, beside the ladder's writes)
    site = t / "site" / "c" / "late"
    assert (site / "index.html").exists(), server.log
    published = json.loads((site / "standings.json").read_text(encoding="utf-8"))
    assert {r["entrant"] for r in published["rows"]} == set(bots.values())
    assert not (t / "serving.json").exists()
    assert _listed(t)["late"]["served"] is None  # nobody serves it now
    quiet = cli("competition", "add", "later", "-t", str(t), "--players", "3")
    assert quiet.returncode == 0 and "referee serving" not in quiet.stdout, quiet.stdout


def _made_elsewhere(other: Path, name: str) -> Path:
    """A competition made in the arena ``other``, to be moved whole into the one served."""
    done = cli("competition", "add", name, "-t", str(other), "--players", "3")
    assert done.returncode == 0, done.stderr
    return other / "competitions" / name


def test_a_bad_folder_or_a_locked_competition_stops_nothing(tmp_path: Path) -> None:
    t, other = tmp_path / "T", tmp_path / "O"
    add_author(t, "alice")
    add_author(other, "olga")
    spare = _made_elsewhere(other, "spare")
    held = _made_elsewhere(other, "held")
    broken = other / "competitions" / "broken"
    broken.mkdir()
    (broken / "tournament.sqlite").write_bytes(b"not a database " * 500)
    server = WebServer(t, "--players", "2")  # the web pages too: they learn of each new one
    web = httpx.Client(base_url=server.url, timeout=30)
    with contextlib.ExitStack() as lock:
        try:
            lock.enter_context(run_lock(held))  # this process: another referee, for the server
            folder = t / "competitions"
            folder.mkdir()
            shutil.copytree(spare, folder / "Bad_Name")  # a store, but no competition's name
            (folder / "nostore").mkdir()
            (folder / "link").symlink_to(spare, target_is_directory=True)
            os.rename(held, folder / "held")
            os.rename(broken, folder / "broken")
            server.wait_for(r"competition broken not served yet: .*damaged", timeout=30)
            server.wait_for(
                rf"competition held not served yet: another referee is running this "
                rf"tournament \(pid {os.getpid()}\)",
                timeout=30,
            )
            listed = _listed(t)
            assert set(listed) == {"", "broken", "held"}, listed
            assert listed["held"]["served"] is False
            assert "another referee" in listed["held"]["not_served_because"]
            assert listed["broken"]["players"] is None and listed["broken"]["served"] is False
            # the server goes on: its default competition, and one added after
            with server.client() as public:
                assert list(public.standings().rows) == []
            with server.client(competition="held") as early, pytest.raises(ClientError) as no:
                early.standings()
            assert no.value.code == grpc.StatusCode.NOT_FOUND
            assert web.get("/c/held").status_code == 404
            assert cli("competition", "add", "fresh", "-t", str(t)).returncode == 0
            server.wait_for(r"competition fresh: ", timeout=30)
        finally:
            lock.close()  # the other referee stops
        try:
            server.wait_for(r"competition held: .*tables of 3", timeout=30)
            with server.client(competition="held") as client:
                assert list(client.standings().rows) == []
            assert web.get("/c/held").status_code == 200
            assert '<a href="/c/fresh">fresh</a>, <a href="/c/held">held</a>' in web.get("/").text
            for ignored in ("Bad_Name", "nostore", "link", "broken"):
                assert web.get(f"/c/{ignored}").status_code == 404
            wait_until(lambda: _listed(t)["held"]["served"] is True, what="held listed served")
            for ignored in ("Bad_Name", "nostore", "link"):
                assert f"competition {ignored}" not in server.log
            damaged = [line for line in server.log.splitlines() if "broken not served" in line]
            assert len(damaged) == 1, server.log  # tried again, said once
        finally:
            web.close()
            assert server.stop() == 0, server.log
    assert "Traceback" not in server.log, server.log
    # at a start too: the damaged one is said and skipped, the others served
    server = Server(t, "--sandbox", "local", "--players", "2", "--no-ladder")
    try:
        server.wait_for(r"competition broken not served yet", timeout=30)
        assert re.search(r"competition held: ", server.log) and "competition fresh: " in server.log
    finally:
        assert server.stop() == 0, server.log
