"""The arena as several processes on one PostgreSQL store (docs/operators/several-hosts.md): three
`referee serve` referees play one ladder and two `referee serve --no-ladder --web` processes
serve its pages; one of each is killed (SIGKILL) mid-ladder. Real processes, a real server
(scripts/setup-postgres.sh), the real command line."""

from __future__ import annotations

import shutil
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from arena_support import Server, enter_with_a_slow_bot, sse_event, wait_until
from support import referee

from take5_arena.referee.store import Store
from take5_arena.service.ladder import LADDER_PREFIX

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

PLAY = ("--sandbox", "local", "--players", "2", "-j", "1", "--bootstrap", "0")


def _copy(directory: Path, name: str) -> Path:
    """Another host's copy of the arena's directory: the store's URL, the archives, the deal key."""
    copy = directory.with_name(name)
    shutil.copytree(directory, copy, ignore=shutil.ignore_patterns("run.lock", "site"))
    return copy


def _ladder_games(directory: Path) -> dict[str, str]:
    """Every game of the ladder's batches and its status ('pending' or 'done')."""
    with Store(directory, readonly=True) as store:
        return {
            g.game_id: g.status
            for s in store.schedules.all(LADDER_PREFIX)
            for g in store.schedules.games(s.schedule_id)
        }


def _recorded(directory: Path) -> list[str]:
    with Store(directory, readonly=True) as store:
        return [gid for gid, _ in store.records.all()]


def _event(web: str, feed: str, wait: float = 20) -> dict[str, Any] | None:
    """The present state of a web process's live feed ``feed``, or None (arena_support)."""
    return sse_event(f"{web}/events/{feed}", wait)


def _standings_games(web: str) -> int:
    """The number of games in the standings a web process shows now (-1: none yet)."""
    event = _event(web, "standings")
    return -1 if event is None else int(event["games"])


def _in_progress(web: str) -> list[dict[str, Any]]:
    """The games in progress a web process lists now."""
    event = _event(web, "live") or {"games": []}
    return [game for game in event["games"] if not game["done"]]


def test_three_referees_and_two_web_processes_lose_no_game_when_one_of_each_is_killed(
    tmp_path: Path, new_postgres_database: Callable[[], str]
) -> None:
    """Every game of the one ladder schedule is played once: the tables the killed referee
    planned or held are taken over by the others (its claims end with its session), nothing is
    recorded twice, and the web process left keeps serving standings and games in progress that
    it reads from the store (it plays no game itself)."""
    directory, url = tmp_path / "A", new_postgres_database()
    enter_with_a_slow_bot(directory, url, tmp_path)
    first = Server(directory, *PLAY)
    servers = [first]
    try:
        wait_until(
            lambda: (
                (directory / "secret" / "deal-key-1").exists() and len(_recorded(directory)) >= 2
            ),
            what="the first referee's games",
            server=first,
        )
        hosts = [_copy(directory, name) for name in ("B", "C", "W1", "W2")]
        servers += [Server(host, *PLAY) for host in hosts[:2]]
        webs = [Server(host, *PLAY, "--no-ladder", "--web", "127.0.0.1:0") for host in hosts[2:]]
        servers += webs
        pages = [
            "http://" + w.wait_for(r"web pages on http://(127\.0\.0\.1:\d+)/").group(1)
            for w in webs
        ]
        wait_until(lambda: len(_recorded(directory)) >= 12, what="games of three referees")
        wait_until(
            lambda: all(_standings_games(page) > 0 for page in pages),
            what="standings on both web processes",
            timeout=60,
        )
        first.kill()
        webs[0].kill()
        planned = _ladder_games(directory)
        at_kill = len(_recorded(directory))
        shown = _standings_games(pages[1])
        # every table planned before the kill is played, those the killed referee held included
        wait_until(
            lambda: all(
                status == "done"
                for gid, status in _ladder_games(directory).items()
                if gid in planned
            ),
            timeout=180,
            what="the killed referee's tables",
        )
        wait_until(lambda: len(_recorded(directory)) >= at_kill + 6, what="more games")
        # the web process left serves standings with the games played since, read from the store
        wait_until(lambda: _standings_games(pages[1]) > shown, what="new standings", timeout=60)
        # and the games in progress, which the referees of the other processes play
        wait_until(lambda: _in_progress(pages[1]), what="games in progress", timeout=60)
        watched = _in_progress(pages[1])[0]
        game = _event(pages[1], f"games/{watched['id']}")
        assert game is not None and game["id"] == watched["id"] and game["record"]["seats"]
        with urllib.request.urlopen(f"{pages[1]}/", timeout=30) as page:
            assert page.status == 200 and "lowest" in page.read().decode()
        for server in servers[1:3] + servers[4:]:
            assert server.stop() == 0, server.log
    finally:
        for server in servers:
            if server.proc.poll() is None:
                server.kill()
    recorded = _recorded(directory)
    games = _ladder_games(directory)
    assert len(recorded) == len(set(recorded))
    assert set(recorded) == {gid for gid, status in games.items() if status == "done"}
    with Store(directory, readonly=True) as store:
        batches = store.schedules.all(LADDER_PREFIX)
        gauntlets = [s.description for s in batches if s.description.startswith("gauntlet")]
    assert len(gauntlets) == len(set(gauntlets)) == 3  # one gauntlet per bot, whoever planned it
    assert [s.schedule_id for s in batches] == [
        f"{LADDER_PREFIX}{n:06d}" for n in range(len(batches))
    ]
    done = referee("verify", "--tournament", str(hosts[0]), timeout=300)
    assert (
        done.returncode == 0 and f"{len(recorded)} of {len(recorded)} records valid" in done.stdout
    ), done.stdout + done.stderr
