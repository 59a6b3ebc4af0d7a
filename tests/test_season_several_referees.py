"""A season closed by the arena itself (take5_arena/service/season_switch.py) while several
`referee serve` referees play one ladder on one PostgreSQL store (docs/operators/several-hosts.md):
the season is closed once, its key revealed once, nothing of it recorded after the revelation, one
next season opened, and every referee plays on from the next season's key. Real processes, a real
PostgreSQL server (scripts/setup-postgres.sh), the real command line."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from arena_support import Server, cli, wait_until
from support import EXAMPLES

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

PLAY = ("--sandbox", "local", "--players", "2", "-j", "1", "--bootstrap", "0")


def _rows(url: str, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Rows read straight from the PostgreSQL store (SQL with ``%s`` parameters)."""
    import psycopg

    with psycopg.connect(url) as db:
        return list(db.execute(sql, params).fetchall())


def test_two_referees_close_a_season_once_and_both_play_the_next(
    tmp_path: Path, new_postgres_database: Callable[[], str]
) -> None:
    a, url, archive = tmp_path / "A", new_postgres_database(), tmp_path / "archive"
    for bot in ("lowest", "random", "heuristic"):
        done = cli(
            "submit", str(EXAMPLES / bot), "--name", bot, "--author", bot, "-t", str(a),
            "--sandbox", "local", "--store", url, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
    now = datetime.now(timezone.utc)
    cutoff, ends = now + timedelta(seconds=10), now + timedelta(seconds=40)
    opened = cli(
        "season", "open", "-t", str(a), "--cutoff", cutoff.isoformat(), "--ends", ends.isoformat()
    )
    assert opened.returncode == 0, opened.stderr
    after = ("--after-season", "next", "--season-grace", "5", "--season-archive", str(archive))
    servers = [Server(a, *PLAY, *after)]
    try:
        wait_until((a / "secret" / "deal-key-1").exists, what="season 1's key", server=servers[0])
        b = tmp_path / "B"
        shutil.copytree(a, b, ignore=shutil.ignore_patterns("run.lock", "site"))
        servers.append(Server(b, *PLAY, *after))
        wait_until(
            lambda: _season_games(url, 2) >= 6,
            timeout=300,
            what="games of season 2",
            server=servers[0],
        )
        runs = {run for (run,) in _rows(url, _RUNS_OF_SEASON, (2,))}
        wait_until(
            lambda: len({run for (run,) in _rows(url, _RUNS_OF_SEASON, (2,))}) == 2,
            timeout=180,
            what=f"season 2's games from both referees (so far from {runs})",
        )
    finally:
        logs = [server.log for server in servers]
        for server in servers:
            assert server.stop() == 0, server.log
    joined = "\n".join(logs)
    assert joined.count("season 1 closed at its end") == 1, joined
    assert joined.count("season 2 opened") == 1, joined
    assert _season_games(url, 1) >= 1
    ((revealed_at, key),) = _rows(url, "SELECT revealed_at, key FROM deal_keys WHERE season = 1")
    assert key is not None
    late = _rows(
        url,
        "SELECT COUNT(*) FROM results r JOIN games g ON g.game_id = r.game_id"
        " WHERE g.deal_season = 1 AND r.finished_at > %s",
        (revealed_at,),
    )
    assert late == [(0,)]
    assert [p.name for p in archive.iterdir()] == ["season-1"]
    checked = cli("verify", "--site", str(archive / "season-1"))
    assert checked.returncode == 0, checked.stdout + checked.stderr


_RUNS_OF_SEASON = (
    "SELECT DISTINCT r.run_id FROM results r JOIN games g ON g.game_id = r.game_id"
    " WHERE g.deal_season = %s"
)


def _season_games(url: str, season: int) -> int:
    sql = (
        "SELECT COUNT(*) FROM results r JOIN games g ON g.game_id = r.game_id"
        " WHERE g.deal_season = %s"
    )
    return int(str(_rows(url, sql, (season,))[0][0]))
