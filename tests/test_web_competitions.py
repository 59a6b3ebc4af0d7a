"""The competitions on the web arena (take5_arena/web/competing.py): a real `referee serve --web`
on loopback over a tournament that ran a qualifying Swiss and a knockout of its top 2, read over
HTTP: the season, the list, each competition stage by stage with its tables, seats, places and
replay links, the final order; a competition that does not exist is a 404; a version sent to the
arena after the season's cut-off is refused by its queue."""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from arena_support import add_author
from arena_support import cli as arena_cli
from click.testing import CliRunner
from support import EXAMPLES

from take5_arena.cli.main import main as cli
from take5_arena.referee.store import Store
from take5_arena.referee.tournament.pairings import competitions

httpx = pytest.importorskip("httpx")


def test_the_arena_lists_its_competitions_and_shows_each_stage(tmp_path: Path) -> None:
    from test_web import WebArena

    t = tmp_path / "arena"
    for i, bot in enumerate(("heuristic", "lowest", "random", "lowest")):
        out = CliRunner().invoke(
            cli,
            ["submit", str(EXAMPLES / bot), "--name", f"{bot}{i}", "--author", f"a{i}",
             "--tournament", str(t), "--sandbox", "local"],
        )  # fmt: skip
        assert out.exit_code == 0, out.output
    run = ["tournament", "run", "--tournament", str(t), "--sandbox", "local", "--players", "2"]
    for extra in (
        ["--format", "swiss", "--rounds", "2"],
        ["--format", "knockout", "--from-swiss", "2"],
    ):
        out = CliRunner().invoke(cli, [*run, *extra])
        assert out.exit_code == 0, out.output
    cutoff = datetime.now(timezone.utc) + timedelta(seconds=3)
    out = CliRunner().invoke(
        cli,
        ["season", "open", "-t", str(t), "--cutoff", cutoff.isoformat(), "--ends", "2099-02-01"],
    )
    assert out.exit_code == 0, out.output
    token = add_author(t, "latecomer")
    with Store(t, readonly=True) as store:
        found = {c.prefix.split("-")[0]: c for c in competitions(store)}
        commitment = store.deal_keys.seasons()[-1].commitment
    swiss, ko = found["swiss"], found["knockout"]
    server = WebArena(t, "--no-ladder", "--players", "2")
    try:
        page = httpx.get(f"{server.url}/competitions", timeout=30)
        assert page.status_code == 200
        html = page.text
        assert f'href="/competitions/{swiss.prefix}"' in html
        assert f'href="/competitions/{ko.prefix}"' in html
        assert 'href="/competitions">Competitions</a>' in html  # in the menu
        assert re.search(r'<p id="season">Season \d+: <strong>(open|frozen)</strong>', html)
        assert f"<code>{commitment}</code>" in html
        detail = httpx.get(f"{server.url}/competitions/{swiss.prefix}", timeout=30).text
        assert detail.count('<h2 id="stage-') == 2
        first = swiss.stages[0][1][0]
        assert f'href="/replay.html?game={first.game_id}"' in detail  # published: its replay
        for seat in first.seats:
            assert seat in detail
        assert "not published yet" not in detail
        assert '<ol id="final">' in detail  # every game played: the Swiss's standing
        final = httpx.get(f"{server.url}/competitions/{ko.prefix}", timeout=30).text
        winner = re.search(r'<ol id="final"><li><a href="/bot.html\?bot=(\w+)"', final)
        assert winner is not None and any(winner[1] == e.split("@")[0] for e in ko.entrants)
        for missing in ("swiss-000000000000", "nothing", "knockout-zz"):
            got = httpx.get(f"{server.url}/competitions/{missing}", timeout=30)
            assert got.status_code == 404 and "no such competition" in got.text
        # the arena's own queue keeps the cut-off: a version sent after it is refused, with why
        time.sleep(max(0.0, (cutoff - datetime.now(timezone.utc)).total_seconds()) + 0.1)
        done = arena_cli(
            "submit", str(EXAMPLES / "lowest"), "--server", server.address, token=token
        )
        assert done.returncode == 3, done.stdout + done.stderr
        assert "entries to season 1 closed at" in done.stderr
    finally:
        server.stop()
