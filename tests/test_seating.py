"""Collusion by seating: `referee submit --author` gives local entrants their authors, `tournament
run` never seats two bots of one author at a table when the pool allows it, and when it cannot the
standings, the site and `verify --site` say how many games had to break the rule
(docs/security.md, "No collusion by seating").
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from click.testing import CliRunner, Result
from support import EXAMPLES

from take5_arena.cli.main import main


def _cli(args: Sequence[str]) -> Result:
    return CliRunner().invoke(main, list(args))


def _tournament(directory: Path, authors: dict[str, str], *run: str) -> None:
    for name, author in authors.items():
        bot = EXAMPLES / name.rstrip("2")
        result = _cli(
            ["submit", str(bot), "--name", name, "--author", author, "-t", str(directory)]
            + ["--sandbox", "local"]
        )
        assert result.exit_code == 0, result.output
    result = _cli(["tournament", "run", "-t", str(directory), *run, "--sandbox", "local"])
    assert result.exit_code == 0, result.output


def _tables(directory: Path) -> list[list[str | None]]:
    db = sqlite3.connect(directory / "tournament.sqlite")
    try:
        rows = db.execute("SELECT record FROM results").fetchall()
    finally:
        db.close()
    return [[seat.get("owner") for seat in json.loads(r[0])["seats"]] for r in rows]


def test_an_authors_bots_never_share_a_table_when_the_pool_allows_it(tmp_path: Path) -> None:
    directory = tmp_path / "t"
    authors = {"random": "alice", "random2": "alice", "lowest": "bob", "heuristic": "carol"}
    _tournament(directory, authors, "--players", "2", "--games", "10", "--no-progress")
    tables = _tables(directory)
    assert len(tables) == 10 and all(len(set(t)) == len(t) for t in tables), tables
    assert all(set(t) <= {"alice", "bob", "carol"} for t in tables)  # each record names owners
    result = _cli(["standings", "-t", str(directory), "--bootstrap", "0"])
    assert result.exit_code == 0 and "one author" not in result.output, result.output


def test_a_table_that_had_to_break_the_rule_is_said_and_verified(tmp_path: Path) -> None:
    directory = tmp_path / "t"
    authors = {"random": "alice", "random2": "alice", "lowest": "bob"}  # 2 authors, 3 seats
    _tournament(directory, authors, "--players", "3", "--games", "3", "--no-progress")
    result = _cli(["standings", "-t", str(directory), "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    assert "note: 3 games seated two bots of one author at a table" in result.output
    assert result.output.rstrip().endswith("alice 3")
    doc = json.loads(_cli(["standings", "-t", str(directory), "--json"]).stdout)
    assert doc["same_author"] == {"games": 3, "authors": {"alice": 3}}

    site = tmp_path / "site"
    assert _cli(["publish", "-t", str(directory), "--out", str(site)]).exit_code == 0
    published = json.loads((site / "standings.json").read_text(encoding="utf-8"))
    assert published["same_author"] == {"games": 3, "authors": {"alice": 3}}
    assert _cli(["verify", "--site", str(site)]).exit_code == 0
    published["same_author"] = {"games": 0, "authors": {}}  # the operator hides it
    (site / "standings.json").write_text(json.dumps(published), encoding="utf-8")
    hidden = _cli(["verify", "--site", str(site)])
    assert hidden.exit_code == 1 and "standings.json: same_author.authors" in hidden.output


def test_a_bad_author_name_is_a_usage_error(tmp_path: Path) -> None:
    result = _cli(
        ["submit", str(EXAMPLES / "random"), "--name", "r", "--author", "\x1b[2J evil"]
        + ["-t", str(tmp_path / "t"), "--sandbox", "local"]
    )
    assert result.exit_code == 2 and "author name" in result.output
    assert "\x1b" not in result.output and "Traceback" not in result.output
    remote = _cli(["submit", str(EXAMPLES / "random"), "--server", "localhost:1", "--author", "a"])
    assert remote.exit_code == 2 and "--author is for a local tournament" in remote.output


# -- the rule in each scheduler, over many pools ---------------------------------------------------

ENTRANTS = [f"e{i}" for i in range(9)]
#: three authors with three bots each, and so on: enough authors to fill a table of 3
AUTHORS: dict[str, str | None] = {e: f"a{i % 3}" for i, e in enumerate(ENTRANTS)}


def _apart(tables: Sequence[Sequence[str]]) -> bool:
    return all(len({AUTHORS[e] for e in t}) == len(t) for t in tables)


def test_the_fixed_schedule_keeps_authors_apart() -> None:
    from take5_arena.referee.tournament.plan.schedule import make_schedule

    for seed in range(20):
        for games in (None, 9, 30):
            schedule = make_schedule(
                ENTRANTS, table_size=3, games=games, seed=seed, authors=AUTHORS
            )
            assert _apart([t.seats for t in schedule.tables]), (seed, games)


def test_until_settled_keeps_authors_apart() -> None:
    from take5_arena.referee.tournament.plan.adaptive import (
        PlayedGame,
        Ranking,
        SettleSettings,
        decide,
    )

    for seed in range(10):
        settings = SettleSettings(table_size=3, seed=seed, authors=AUTHORS, budget=300)
        played: list[PlayedGame] = []

        order = tuple(sorted(ENTRANTS, key=lambda e: (hash((e, seed)) % 97, e)))

        def rank(games: Sequence[PlayedGame], order: tuple[str, ...] = order) -> Ranking:
            return Ranking(order, tuple(0.6 for _ in order[1:]))

        tables = games = 0
        for _batch in range(3):
            decision = decide(
                ENTRANTS, played, settings, rank, tables_so_far=tables, games_so_far=games
            )
            if decision.stop:
                break
            assert _apart([t.seats for t in decision.tables]), seed
            tables += len(decision.tables)
            games += len(decision.games)
            played += [
                PlayedGame(g.game_id, tuple(g.seats), tuple(range(1, len(g.seats) + 1)))
                for g in decision.games
            ]


def test_the_ladder_keeps_authors_apart() -> None:
    """Also a newcomer's gauntlet: it meets every other bot but its own author's (it used to seat
    them together: a table not filled from one candidate fell back to ignoring authors)."""
    from take5.shuffle import SplitMix64
    from take5_arena.referee.tournament.plan.adaptive import neediest_table
    from take5_arena.service.ladder_planning import GauntletPlanner, PoolView

    for seed in range(30):
        order = sorted(ENTRANTS, key=lambda e: hash((e, seed)))
        table = neediest_table(
            order, [0.55] * (len(order) - 1), table_size=3, seed=seed, authors=AUTHORS
        )
        assert _apart([table]), (seed, table)
    pool = PoolView(tuple(ENTRANTS), dict.fromkeys(ENTRANTS, 0), 3, authors=AUTHORS)
    planner = GauntletPlanner(gauntlet_tables=2)
    rng = SplitMix64(5)
    tables = planner.gauntlet("e0", pool, rng) + [planner.next_table(pool, rng) for _ in range(30)]
    assert tables and _apart(tables), tables
