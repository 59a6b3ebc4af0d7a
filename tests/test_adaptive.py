"""Adaptive scheduling: the pure scheduler (take5_arena/referee/tournament/plan/adaptive.py) and the
run loop until settled (take5_arena/referee/tournament/settle.py) on a planted field, including
resuming after SIGKILL.

Games are played by an in-process stand-in for the match layer: each seat's performance is its
planted strength plus noise seeded by the game's deal and rotation, so a game always has the same
result (as replaying a deal from its seed does) and the true order is known.
"""

from __future__ import annotations

import hashlib
import math
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from support import ROOT

from take5_arena.cli.settle import leaderboard_ranking
from take5_arena.leaderboard.board import ranking_with_los
from take5_arena.leaderboard.results import GameResult
from take5_arena.referee.store import Store
from take5_arena.referee.tournament import GameOutcome, TableSpec, TournamentError
from take5_arena.referee.tournament.plan.adaptive import (
    PlayedGame,
    Ranking,
    SettleError,
    SettleSettings,
    decide,
    full_ranking,
)
from take5_arena.referee.tournament.plan.schedule import make_schedule
from take5_arena.referee.tournament.settle import batch_id, run_until_settled

NAMES = [f"bot{i}" for i in range(8)]


# -- helpers --------------------------------------------------------------------------------------


def fixed_ranking(order: Sequence[str], los: Sequence[float | None]):
    def rank(played: Sequence[PlayedGame]) -> Ranking:
        return Ranking(tuple(order), tuple(los))

    return rank


def noise(*parts: object) -> float:
    """A Gumbel draw that is a pure function of ``parts`` (deal seed, rotation, seat)."""
    h = int.from_bytes(hashlib.blake2b(repr(parts).encode(), digest_size=8).digest(), "big")
    u = (h + 0.5) / 2**64
    return -math.log(-math.log(u))


def planted_places(
    strength: dict[str, float], seats: Sequence[str], deal: int, rotation: int
) -> tuple[int, ...]:
    k = len(seats)
    hand = [0.8 * noise("hand", deal, p) for p in range(k)]  # shared by the games of a deal
    perf = [
        strength[e] + hand[(s - rotation) % k] + noise("play", deal, rotation, s)
        for s, e in enumerate(seats)
    ]
    ranked = sorted(range(k), key=lambda s: -perf[s])
    places = [0] * k
    for p, s in enumerate(ranked):
        places[s] = p + 1
    return tuple(places)


def simulate(
    strength: dict[str, float], settings: SettleSettings
) -> tuple[int, tuple[str, ...], str]:
    """The scheduler with the leaderboard's ranking on planted games, in memory."""
    played: list[PlayedGame] = []
    tables = games = 0
    while True:
        d = decide(
            sorted(strength),
            played,
            settings,
            leaderboard_ranking,
            tables_so_far=tables,
            games_so_far=games,
        )
        if d.stop:
            return games, d.order, d.reason
        played.extend(
            PlayedGame(
                g.game_id,
                g.seats,
                planted_places(strength, g.seats, g.deal_seed, g.rotation),
                g.duplicate_set,
            )
            for g in d.games
        )
        tables += len(d.tables)
        games += len(d.games)


def fixed_until_settled(strength: dict[str, float], confidence: float, seed: int) -> int:
    """Games a fixed balanced round robin needs before every neighbour pair's LOS passes."""
    sched = make_schedule(sorted(strength), table_size=4, games=4000, seed=seed)
    results: list[GameResult] = []
    step = 8  # the same batch as the adaptive run (2 tables of 4 games)
    for start in range(0, len(sched.games), step):
        for g in sched.games[start : start + step]:
            p = planted_places(strength, g.seats, g.deal_seed, g.rotation)
            results.append(GameResult(g.game_id, g.seats, p, p, g.duplicate_set))
        _, los = ranking_with_los(results)
        if all(v is not None and v >= confidence for v in los):
            return len(results)
    return len(results)


PLANTED = dict(zip(NAMES, (2.4, 2.0, 1.0, 0.6, -0.4, -0.8, -1.8, -2.2)))
# Twelve bots in close pairs (0.5 logit, 87 Elo) far from each other (1 logit): a fixed schedule
# spends most games on pairs whose order is clear.
FIELD_NAMES = [f"bot{i:02d}" for i in range(12)]
FIELD = dict(zip(FIELD_NAMES, (3.0, 2.5, 1.5, 1.0, 0.0, -0.5, -1.5, -2.0, -3.0, -3.5, -4.5, -5.0)))


# -- the pure scheduler ---------------------------------------------------------------------------


def test_first_batch_seats_everyone_then_tables_go_to_the_open_pair():
    s = SettleSettings(table_size=4, seed=3)
    first = decide(NAMES, [], s, fixed_ranking(NAMES, [0.99] * 7))
    assert not first.stop and sorted({e for t in first.tables for e in t.seats}) == NAMES
    assert len(first.games) == 4 * len(first.tables)  # duplicate sets: one game per rotation
    assert {g.rotation for g in first.games} == {0, 1, 2, 3}
    played = [PlayedGame(g.game_id, g.seats, (1, 2, 3, 4), g.duplicate_set) for g in first.games]
    los = [0.99, 0.99, 0.99, 0.6, 0.99, 0.99, 0.99]  # only bot3 > bot4 is open
    nxt = decide(
        NAMES,
        played,
        s,
        fixed_ranking(NAMES, los),
        tables_so_far=len(first.tables),
        games_so_far=len(first.games),
    )
    assert not nxt.stop and [p.upper + ">" + p.lower for p in nxt.open_pairs] == ["bot3>bot4"]
    assert nxt.tables and all({"bot3", "bot4"} <= set(t.seats) for t in nxt.tables)
    # table indices continue, so deals and game ids never repeat
    assert [t.index for t in nxt.tables] == list(
        range(len(first.tables), len(first.tables) + len(nxt.tables))
    )
    assert not {g.game_id for g in nxt.games} & {g.game_id for g in first.games}


def test_decisions_are_a_pure_function_of_inputs():
    s = SettleSettings(table_size=4, seed=5)
    rank = fixed_ranking(NAMES, [0.7, 0.9, 0.5, 0.99, 0.8, 0.6, 0.97])
    played = [PlayedGame("g", tuple(NAMES[:4]), (1, 2, 3, 4))]
    a = decide(NAMES, played, s, rank, tables_so_far=4, games_so_far=16)
    assert a == decide(list(reversed(NAMES)), played, s, rank, tables_so_far=4, games_so_far=16)
    b = decide(
        NAMES, played, SettleSettings(table_size=4, seed=6), rank, tables_so_far=4, games_so_far=16
    )
    assert [t.deal_seed for t in a.tables] != [t.deal_seed for t in b.tables]


def test_stops_when_settled_or_when_the_budget_is_spent():
    played = [PlayedGame("g", tuple(NAMES[:4]), (1, 2, 3, 4))]
    settled = decide(
        NAMES,
        played,
        SettleSettings(table_size=4),
        fixed_ranking(NAMES, [0.96] * 7),
        tables_so_far=4,
        games_so_far=16,
    )
    assert settled.stop and settled.reason == "settled" and not settled.tables
    spent = decide(
        NAMES,
        played,
        SettleSettings(table_size=4, budget=18),
        fixed_ranking(NAMES, [0.5] * 7),
        tables_so_far=4,
        games_so_far=16,
    )
    assert spent.stop and spent.reason == "budget" and len(spent.open_pairs) == 7
    # a batch never goes past the budget
    near = decide(
        NAMES,
        played,
        SettleSettings(table_size=4, budget=20),
        fixed_ranking(NAMES, [0.5] * 7),
        tables_so_far=4,
        games_so_far=16,
    )
    assert len(near.games) == 4


def test_gauntlet_tables_always_seat_the_new_bot_near_its_place():
    order = NAMES  # the new bot currently ranks 6th of 8
    s = SettleSettings(table_size=4, seed=1, gauntlet="bot5")
    played = [PlayedGame("g", tuple(NAMES[:4]), (1, 2, 3, 4))]
    los = [0.5, 0.5, 0.5, 0.5, 0.6, 0.99, 0.5]  # bot4 > bot5 open, bot5 > bot6 settled
    d = decide(NAMES, played, s, fixed_ranking(order, los), tables_so_far=2, games_so_far=8)
    assert [(p.upper, p.lower) for p in d.pairs] == [("bot4", "bot5"), ("bot5", "bot6")]
    assert all("bot5" in t.seats and "bot4" in t.seats for t in d.tables)
    done = decide(
        NAMES,
        played,
        s,
        fixed_ranking(order, [0.5] * 4 + [0.97, 0.99, 0.5]),
        tables_so_far=2,
        games_so_far=8,
    )
    assert done.stop and done.reason == "settled"  # the pool's own open pairs do not matter
    with pytest.raises(SettleError):
        decide(
            NAMES,
            played,
            SettleSettings(table_size=4, gauntlet="nobody"),
            fixed_ranking(order, los),
        )


def test_entrants_without_games_rank_last_with_unknown_pairs():
    order, los = full_ranking(["a", "b", "c", "d"], Ranking(("c", "a"), (0.8,)))
    assert order == ["c", "a", "b", "d"] and los == [0.8, None, None]


# -- a planted field with the leaderboard's ranking ------------------------------------------------


def test_planted_field_settles_in_the_true_order_with_fewer_games_than_a_fixed_round_robin():
    adaptive = fixed = 0
    for seed in (1, 2):
        games, order, reason = simulate(
            PLANTED, SettleSettings(table_size=4, seed=seed, budget=4000)
        )
        assert reason == "settled" and list(order) == NAMES
        adaptive += games
        fixed += fixed_until_settled(PLANTED, 0.95, seed=seed)
    assert adaptive < fixed / 2, (adaptive, fixed)


def test_gauntlet_settles_a_new_bot_against_a_rated_pool():
    pool = {n: PLANTED[n] for n in NAMES if n != "bot3"}
    # the pool has played a round robin already; bot3 is new
    sched = make_schedule(sorted(pool), table_size=4, games=96, seed=2)
    played = [
        PlayedGame(
            g.game_id,
            g.seats,
            planted_places(pool, g.seats, g.deal_seed, g.rotation),
            g.duplicate_set,
        )
        for g in sched.games
    ]
    settings = SettleSettings(table_size=4, seed=12, gauntlet="bot3", budget=2000)
    tables = games = 0
    while True:
        d = decide(
            NAMES, played, settings, leaderboard_ranking, tables_so_far=tables, games_so_far=games
        )
        if d.stop:
            break
        assert all("bot3" in t.seats for t in d.tables)
        played += [
            PlayedGame(
                g.game_id,
                g.seats,
                planted_places(PLANTED, g.seats, g.deal_seed, g.rotation),
                g.duplicate_set,
            )
            for g in d.games
        ]
        tables, games = tables + len(d.tables), games + len(d.games)
    assert d.reason == "settled"
    i = d.order.index("bot3")
    assert d.order[i - 1] == "bot2" and d.order[i + 1] == "bot4"


# -- the run loop on a tournament store ------------------------------------------------------------


def planted_runner(spec: TableSpec, on_game=None) -> list[GameOutcome]:
    """Stands in for the match layer: planted results (FIELD), a pure function of the game."""
    out = []
    for gid, rotation in spec.games:
        seats = [s.name for s in spec.seats]
        places = planted_places(FIELD, seats, spec.deal_seed, rotation)
        record = {
            "game_id": gid,
            "seats": [{"name": s.name, "entrant": s.key, "version": s.version} for s in spec.seats],
            "result": {"scores": [10 * p for p in places], "places": list(places), "forfeited": []},
            "faults": [[] for _ in seats],
        }
        out.append(GameOutcome(gid, record))
        if on_game:
            on_game(out[-1])
    return out


def make_tournament(directory: Path) -> None:
    with Store(directory, create=True) as store:
        for name in FIELD_NAMES:
            store.versions.add(
                name, source_hash=name, bot_dir=str(ROOT / "example_bots" / "random"), kind="python"
            )


OPTIONS = {"players": 4, "seed": 1, "sandbox": "local", "executor": "local", "concurrency": 1}


def scheduled(directory: Path) -> list[tuple[str, list[str]]]:
    """Every batch of the run with its game ids, in order."""
    with Store(directory, readonly=True) as store:
        sids = [s.schedule_id for s in store.schedules.all()]
        return [(sid, [g.game_id for g in store.schedules.games(sid)]) for sid in sids]


def test_until_settled_on_a_store_stops_in_the_true_order(tmp_path):
    make_tournament(tmp_path)
    lines: list[str] = []
    report = run_until_settled(
        tmp_path,
        OPTIONS,
        rank=leaderboard_ranking,
        confidence=0.95,
        runner=planted_runner,
        log=lines.append,
    )
    assert report.reason == "settled" and report.exit_code == 0
    assert list(report.decision.order) == [f"{n}@1" for n in FIELD_NAMES]
    assert lines[-1].startswith(f"after {report.games} games: 0 of 11 pairs open; settled")
    assert "@" not in "".join(lines)  # entrants by name
    assert "pairs open (" in lines[0] or "pairs open (" in lines[1]  # progress names the open pairs
    with Store(tmp_path, readonly=True) as store:
        assert store.results.recorded_count() == report.games
    fixed = fixed_until_settled(FIELD, 0.95, seed=1)
    assert report.games < fixed, (report.games, fixed)
    # running again changes nothing: the ranking is settled
    again = run_until_settled(
        tmp_path, OPTIONS, rank=leaderboard_ranking, confidence=0.95, runner=planted_runner
    )
    assert again.reason == "settled" and again.played == 0 and again.games == report.games
    # a budget below what was played stops at once, with exit code 1 when not settled
    stricter = run_until_settled(
        tmp_path,
        OPTIONS,
        rank=leaderboard_ranking,
        confidence=0.999,
        budget=8,
        runner=planted_runner,
    )
    assert stricter.reason == "budget" and stricter.exit_code == 1 and stricter.played == 0
    with pytest.raises(TournamentError, match="gauntlet"):
        run_until_settled(
            tmp_path,
            OPTIONS,
            rank=leaderboard_ranking,
            confidence=0.95,
            gauntlet="zzz",
            runner=planted_runner,
        )


KILLER = """
import os, signal, sys
sys.path[:0] = {paths!r}
import tests.test_adaptive as t
from take5_arena.referee.tournament.settle import run_until_settled
from take5_arena.cli.settle import leaderboard_ranking
count = [0]
def runner(spec, on_game=None):
    def counted(outcome):
        count[0] += 1
        if count[0] == {kill_at}:
            os.kill(os.getpid(), signal.SIGKILL)  # mid-batch, after {kill_at} recorded games
        if on_game:
            on_game(outcome)
    return t.planted_runner(spec, counted)
run_until_settled(
    {directory!r}, t.OPTIONS, rank=leaderboard_ranking, confidence=0.95, runner=runner
)
"""


def test_resume_after_sigkill_schedules_what_an_uninterrupted_run_would(tmp_path):
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    make_tournament(whole)
    make_tournament(killed)
    run_until_settled(
        whole, OPTIONS, rank=leaderboard_ranking, confidence=0.95, runner=planted_runner
    )
    paths = [str(ROOT), str(ROOT / "sdk")] + sys.path
    for kill_at in (5, 21):  # inside the first batch, then inside a later one
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                KILLER.format(paths=paths, kill_at=kill_at, directory=str(killed)),
            ],
            check=False,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    with Store(killed, readonly=True) as store:
        assert 0 < store.results.recorded_count() < sum(len(g) for _, g in scheduled(whole))
    report = run_until_settled(
        killed, OPTIONS, rank=leaderboard_ranking, confidence=0.95, runner=planted_runner
    )
    assert report.reason == "settled"
    assert scheduled(killed) == scheduled(whole)
    assert all(sid.startswith("settle-") for sid, _ in scheduled(whole))
    assert scheduled(whole)[0][0] == batch_id(report.key, 0)


def test_command_line_errors_are_usage_errors(tmp_path):
    from click.testing import CliRunner

    from take5_arena.cli.main import main as cli

    make_tournament(tmp_path)
    base = ["tournament", "run", "--tournament", str(tmp_path), "--sandbox", "local"]
    out = CliRunner().invoke(cli, base + ["--until-settled", "--dry-run"])
    assert out.exit_code == 2 and "adaptive tables depend on the results" in out.output
    out = CliRunner().invoke(cli, base + ["--gauntlet", "nobody"])
    assert out.exit_code == 2 and "no current entrant named 'nobody'" in out.output
    out = CliRunner().invoke(cli, base + ["--until-settled", "--confidence", "1.5"])
    assert out.exit_code == 2


def test_the_ladder_plays_where_the_ranking_is_least_settled():
    """The arena's ladder uses the same rule: after the gauntlet, the next table is the pair of
    neighbours whose order is least settled (here c and d, who split their games), not a random one.
    """
    from take5.shuffle import SplitMix64
    from take5_arena.service.ladder_planning import PoolView, SettlingPlanner

    results, n = [], 0
    for winner, loser, count in [("a", "b", 30), ("b", "c", 30), ("c", "d", 6), ("d", "c", 6)]:
        for _ in range(count):
            results.append(GameResult(f"g{n}", (winner, loser), (1, 2), (1, 2)))
            n += 1
    keys = ("a@v1", "b@v1", "c@v1", "d@v1")
    pool = PoolView(keys, dict.fromkeys(keys, 30), 2, lambda: results)
    table = SettlingPlanner().next_table(pool, SplitMix64(1))
    assert sorted(table) == ["c@v1", "d@v1"]
    fresh = PoolView(keys, {**dict.fromkeys(keys, 30), "d@v1": 0}, 2, lambda: results)
    assert "d@v1" in SettlingPlanner().next_table(
        fresh, SplitMix64(1)
    )  # an unplayed bot plays first
