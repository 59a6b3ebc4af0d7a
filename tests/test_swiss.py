"""Swiss pairing (take5_arena/referee/tournament/plan/swiss.py): its invariants on any field, with
random results, checked by hypothesis; no repeat where a brute force finds that none is needed."""

from __future__ import annotations

import hashlib
import itertools
import re
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import EXAMPLES, ROOT

from take5.shuffle import SplitMix64
from take5_arena.referee.kinds import DealMode
from take5_arena.referee.store import Store
from take5_arena.referee.store.deals import reveal
from take5_arena.referee.tournament import GameOutcome, TableSpec, TournamentError, run_swiss
from take5_arena.referee.tournament.plan.adaptive import PlayedGame
from take5_arena.referee.tournament.plan.schedule import ScheduleError
from take5_arena.referee.tournament.plan.settings import TournamentSettings
from take5_arena.referee.tournament.plan.swiss import (
    SwissRound,
    SwissSettings,
    next_round,
    pair_round,
    rederive,
    standings,
)
from take5_arena.referee.tournament.settle import played_games
from take5_arena.referee.tournament.swiss import round_id


def _results(rnd: SwissRound, seed: int) -> list[PlayedGame]:
    """Random places (ties included) for every game of a round."""
    rng = SplitMix64(seed)
    return [
        PlayedGame(g.game_id, g.seats, tuple(1 + rng.below(len(g.seats)) for _ in g.seats))
        for g in rnd.games
    ]


def _play(
    entrants: Sequence[str], s: SwissSettings, rounds: int, seed: int
) -> tuple[list[SwissRound], list[list[PlayedGame]]]:
    """``rounds`` rounds with random results, and the results by round."""
    out: list[SwissRound] = []
    results: list[list[PlayedGame]] = []
    for r in range(rounds):
        rnd = next_round(entrants, s, out, [g for rs in results for g in rs])
        out.append(rnd)
        results.append(_results(rnd, seed * 1000 + r))
    return out, results


def _pairs(rows: Sequence[Sequence[str]]) -> Counter[frozenset[str]]:
    return Counter(frozenset(p) for row in rows for p in itertools.combinations(row, 2))


def _partitions(players: list[str], sizes: list[int]) -> list[list[tuple[str, ...]]]:
    """Every way to seat ``players`` at tables of ``sizes`` (brute force, small fields)."""
    if not sizes:
        return [[]]
    first, rest = players[0], players[1:]
    out: list[list[tuple[str, ...]]] = []
    for others in itertools.combinations(rest, sizes[0] - 1):
        left = [p for p in rest if p not in others]
        out.extend([(first, *others), *tail] for tail in _partitions(left, sizes[1:]))
    return out


fields = st.tuples(
    st.integers(2, 5),  # k
    st.integers(0, 9),  # entrants beyond k
    st.integers(1, 5),  # rounds
    st.integers(0, 2**32),  # seed
    st.booleans(),  # short table allowed
)


@settings(max_examples=60, deadline=None)
@given(fields)
def test_every_round_seats_everyone_once_or_gives_a_bye(f: tuple[int, int, int, int, bool]) -> None:
    k, extra, rounds, seed, short = f
    entrants = [f"e{i}" for i in range(k + extra)]
    s = SwissSettings(table_size=k, seed=seed, short_table=short)
    out, _ = _play(entrants, s, rounds, seed)
    n = len(entrants)
    for rnd in out:
        seated = [e for t in rnd.tables for e in t.seats]
        assert sorted(seated + list(rnd.byes)) == sorted(entrants)
        sizes = [len(t.seats) for t in rnd.tables]
        if short and n % k >= 2:
            assert sizes == [k] * (n // k) + [n % k] and not rnd.byes
        else:
            assert set(sizes) == {k} and len(rnd.byes) == n % k
        # one deal per round, played in every rotation at every table
        assert len({t.deal_seed for t in rnd.tables}) == 1
        for t in rnd.tables:
            games = [g for g in rnd.games if g.table == t.index]
            assert sorted(g.rotation for g in games) == list(range(len(t.seats)))
    indices = [t.index for rnd in out for t in rnd.tables]
    assert indices == list(range(len(indices)))  # numbered on: game ids never repeat
    assert len({g.game_id for rnd in out for g in rnd.games}) == sum(len(r.games) for r in out)


@settings(max_examples=60, deadline=None)
@given(fields)
def test_byes_are_spread_fairly_lowest_standing_first(f: tuple[int, int, int, int, bool]) -> None:
    k, extra, rounds, seed, short = f
    entrants = [f"e{i}" for i in range(k + extra)]
    s = SwissSettings(table_size=k, seed=seed, short_table=short)
    out, results = _play(entrants, s, rounds, seed)
    count: Counter[str] = Counter()
    for r, rnd in enumerate(out):
        before = dict(count)
        count.update(rnd.byes)
        # never a second bye while someone has had fewer
        assert max(count[e] for e in entrants) - min(count[e] for e in entrants) <= 1
        if rnd.byes:
            # among those with the fewest byes, the ones sitting out stand lowest
            points = standings(entrants, [g for rs in results[:r] for g in rs], out[:r], s)
            fewest = min(before.get(e, 0) for e in entrants)
            pool = [e for e in entrants if before.get(e, 0) == fewest]
            out_of_pool = [points[e] for e in rnd.byes if e in pool]
            assert all(points[e] >= max(out_of_pool) for e in pool if e not in rnd.byes)


@settings(max_examples=40, deadline=None)
@given(st.tuples(st.integers(2, 4), st.integers(0, 5), st.integers(1, 4), st.integers(0, 2**32)))
def test_no_repeat_meeting_when_a_brute_force_finds_none_is_needed(
    f: tuple[int, int, int, int],
) -> None:
    k, extra, rounds, seed = f
    entrants = [f"e{i}" for i in range(k + extra)]
    if len(entrants) > 9:
        return
    s = SwissSettings(table_size=k, seed=seed)
    out, _ = _play(entrants, s, rounds, seed)
    for r, rnd in enumerate(out):
        met = _pairs([t.seats for x in out[:r] for t in x.tables])
        players = sorted(e for t in rnd.tables for e in t.seats)
        best = min(
            sum(met[p] for p in _pairs(rows).elements())
            for rows in _partitions(players, [k] * len(rnd.tables))
        )
        ours = sum(met[p] for p in _pairs([t.seats for t in rnd.tables]).elements())
        assert ours == best == rnd.repeats


@settings(max_examples=30, deadline=None)
@given(fields)
def test_pairings_are_rederived_from_the_results_alone(f: tuple[int, int, int, int, bool]) -> None:
    k, extra, rounds, seed, short = f
    entrants = [f"e{i}" for i in range(k + extra)]
    s = SwissSettings(table_size=k, seed=seed, short_table=short)
    out, results = _play(entrants, s, rounds, seed)
    # a verifier has each round's games in any order, and the entrants in any order; a game of
    # someone not an entrant is not the Swiss's
    noise = [PlayedGame("other", ("e0", "x"), (1, 2))]
    assert rederive(list(reversed(entrants)), s, [noise + rs[::-1] for rs in results]) == out
    assert _play(entrants, s, rounds, seed)[0] == out  # deterministic


@settings(max_examples=40, deadline=None)
@given(
    st.tuples(st.integers(2, 4), st.integers(0, 5), st.integers(1, 3), st.integers(0, 2**32)),
    st.lists(st.sampled_from("ABC"), min_size=9, max_size=9),
)
def test_an_authors_bots_share_a_table_only_when_every_pairing_seats_some(
    f: tuple[int, int, int, int], by: list[str]
) -> None:
    """An author who enters several bots cannot have them meet (and collude) at a table a pairing
    could have avoided: fewest such pairs first (brute force), then fewest repeats."""
    k, extra, rounds, seed = f
    entrants = [f"e{i}" for i in range(k + extra)]
    if len(entrants) > 9:
        return
    authors: dict[str, str | None] = {e: by[i] for i, e in enumerate(entrants)}
    s = SwissSettings(table_size=k, seed=seed, authors=authors)
    out, _ = _play(entrants, s, rounds, seed)
    apart = len(set(authors.values())) >= k  # else schedule.py's rule does not apply

    def clashes(rows: Sequence[Sequence[str]]) -> int:
        return sum(authors[a] == authors[b] for a, b in _pairs(rows).elements())

    for r, rnd in enumerate(out):
        met = _pairs([t.seats for x in out[:r] for t in x.tables])
        players = sorted(e for t in rnd.tables for e in t.seats)
        ours = [t.seats for t in rnd.tables]
        best = min(
            (clashes(rows) if apart else 0, sum(met[p] for p in _pairs(rows).elements()))
            for rows in _partitions(players, [k] * len(rnd.tables))
        )
        assert (clashes(ours) if apart else 0, rnd.repeats) == best


def test_a_large_field_beyond_the_exact_search_still_avoids_repeats() -> None:
    """64 bots at tables of 4, results by planted strength: 9 rounds without a repeated meeting
    (each bot has met 27 of 63 by then; before the swaps after the search, rounds 8 and 9 repeated
    6 and 11 meetings)."""
    entrants = [f"b{i}" for i in range(64)]
    s = SwissSettings(table_size=4, seed=1)
    rng = SplitMix64(7)
    rounds: list[SwissRound] = []
    played: list[PlayedGame] = []
    for _ in range(9):
        rounds.append(next_round(entrants, s, rounds, played))
        for g in rounds[-1].games:
            score = [entrants.index(e) + rng.below(64) for e in g.seats]
            places = tuple(1 + sum(o > x for o in score) for x in score)
            played.append(PlayedGame(g.game_id, g.seats, places))
    assert [r.repeats for r in rounds] == [0] * 9
    assert max(_pairs([t.seats for r in rounds for t in r.tables]).values()) == 1


def test_a_table_is_of_like_standing() -> None:
    """With no repeat in the way, the best k sit together, then the next k."""
    entrants = [f"e{i}" for i in range(8)]
    s = SwissSettings(table_size=4)
    points = {e: float(8 - i) for i, e in enumerate(entrants)}
    rnd = pair_round(entrants, s, 1, points, [])
    assert [sorted(t.seats) for t in rnd.tables] == [entrants[:4], entrants[4:]]


def test_a_field_too_small_or_doubled_is_refused() -> None:
    with pytest.raises(ScheduleError, match="cannot fill"):
        pair_round(["a", "b"], SwissSettings(table_size=3), 1, {}, [])
    with pytest.raises(ScheduleError, match="distinct"):
        pair_round(["a", "a", "b"], SwissSettings(table_size=2), 1, {}, [])


# -- the run loop on a tournament store ------------------------------------------------------------

NAMES = [f"bot{i}" for i in range(10)]  # 10 at tables of 4: two byes a round
OPTIONS = {"players": 4, "seed": 3, "sandbox": "local", "executor": "local", "concurrency": 1}


def hashed_runner(spec: TableSpec, on_game: Any = None) -> list[GameOutcome]:
    """Stands in for the match layer: places hashed from the game id and the bot (ties too)."""
    out = []
    for gid, _rotation in spec.games:
        places = [1 + _hash(gid, s.name) % 3 for s in spec.seats]
        record: Any = {
            "game_id": gid,
            "seats": [{"name": s.name, "entrant": s.key, "version": s.version} for s in spec.seats],
            "result": {"scores": [10 * p for p in places], "places": places, "forfeited": []},
            "faults": [[] for _ in spec.seats],
        }
        out.append(GameOutcome(gid, record))
        if on_game:
            on_game(out[-1])
    return out


def _hash(*parts: str) -> int:
    return int.from_bytes(hashlib.blake2b("/".join(parts).encode(), digest_size=4).digest(), "big")


def make_tournament(directory: Path) -> None:
    with Store(directory, create=True) as store:
        for name in NAMES:
            store.versions.add(
                name, source_hash=name, bot_dir=str(ROOT / "example_bots" / "random"), kind="python"
            )


def scheduled(directory: Path) -> list[tuple[str, list[str]]]:
    with Store(directory, readonly=True) as store:
        sids = [s.schedule_id for s in store.schedules.all()]
        return [(sid, sorted(g.game_id for g in store.schedules.games(sid))) for sid in sids]


def test_a_swiss_on_a_store_is_played_round_by_round_and_rederived(tmp_path: Path) -> None:
    make_tournament(tmp_path)
    lines: list[str] = []
    report = run_swiss(tmp_path, OPTIONS, rounds=4, runner=hashed_runner, log=lines.append)
    assert report.exit_code == 0 and len(report.rounds) == 4
    assert [line.split(":")[0] for line in lines] == [f"round {r}" for r in range(1, 5)]
    assert all(len(r.byes) == 2 for r in report.rounds)
    byes = Counter(e for r in report.rounds for e in r.byes)
    assert max(byes.values()) == 1  # 8 byes over 10 bots: nobody twice
    stored = scheduled(tmp_path)
    assert [sid for sid, _ in stored] == [round_id(report.key, r) for r in range(1, 5)]
    # a verifier re-derives every round from the recorded games alone
    with Store(tmp_path, readonly=True) as store:
        keys = {v.id: v.key for v in store.versions.current()}
        assert store.results.recorded_count() == sum(len(r.games) for r in report.rounds)
        games = played_games(store, keys)
        context = TournamentSettings.from_json(store.settings.get()).game_context()
    ss = SwissSettings(table_size=4, seed=3, context=context)  # public deals: from the seed
    by_round = [[g for g in games if g.game_id in set(ids)] for _, ids in stored]
    again = rederive(sorted(keys.values()), ss, by_round)
    assert [sorted(g.game_id for g in r.games) for r in again] == [g for _, g in stored]
    # running again plays nothing; asking for more rounds plays only the new ones
    same = run_swiss(tmp_path, OPTIONS, rounds=4, runner=hashed_runner)
    assert same.exit_code == 0 and same.played == 0
    more = run_swiss(tmp_path, OPTIONS, rounds=5, runner=hashed_runner)
    assert more.played == len(more.rounds[-1].games) and scheduled(tmp_path)[:4] == stored


KILLER = """
import os, signal, sys
sys.path[:0] = {paths!r}
import tests.test_swiss as t
from take5_arena.referee.tournament import run_swiss
count = [0]
def runner(spec, on_game=None):
    def counted(outcome):
        count[0] += 1
        if count[0] == {kill_at}:
            os.kill(os.getpid(), signal.SIGKILL)  # mid-round, after {kill_at} recorded games
        if on_game:
            on_game(outcome)
    return t.hashed_runner(spec, counted)
run_swiss({directory!r}, t.OPTIONS, rounds=3, runner=runner)
"""


def test_a_killed_swiss_resumes_with_the_rounds_an_uninterrupted_one_plays(
    tmp_path: Path,
) -> None:
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    make_tournament(whole)
    make_tournament(killed)
    run_swiss(whole, OPTIONS, rounds=3, runner=hashed_runner)
    paths = [str(ROOT), str(ROOT / "sdk"), *sys.path]
    for kill_at in (5, 17):  # inside round 1, then inside a later round
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
    report = run_swiss(killed, OPTIONS, rounds=3, runner=hashed_runner)
    assert report.exit_code == 0
    assert scheduled(killed) == scheduled(whole)


def test_a_key_revealed_between_rounds_changes_no_stored_round(tmp_path: Path) -> None:
    """Secret deals: after ``tournament reveal`` the next round is dealt from the next season's
    key, and the rounds stored under the old one still check (by their tables)."""
    make_tournament(tmp_path)
    secret = {**OPTIONS, "deals": "secret"}
    first = run_swiss(tmp_path, secret, rounds=2, runner=hashed_runner)
    with Store(tmp_path) as store:
        reveal(store)
    report = run_swiss(tmp_path, secret, rounds=3, runner=hashed_runner)
    assert report.exit_code == 0 and report.played == len(report.rounds[2].games)
    assert [r.tables for r in report.rounds[:2]] != [r.tables for r in first.rounds]  # new seeds
    assert [[t.seats for t in r.tables] for r in report.rounds[:2]] == [
        [t.seats for t in r.tables] for r in first.rounds
    ]
    with Store(tmp_path, readonly=True) as store:
        seasons = {
            g.deal_season
            for s in store.schedules.all()
            for g in store.schedules.games(s.schedule_id)
        }
    assert len(seasons) == 2


def test_a_swiss_run_keeps_an_authors_bots_apart(tmp_path: Path) -> None:
    """Ten bots, two of them one author's, at tables of 4: those two never share a table, in any
    round (the same Swiss paired without authors seats them together)."""
    with Store(tmp_path, create=True) as store:
        for i, name in enumerate(NAMES):
            store.versions.add(
                name,
                source_hash=name,
                bot_dir=str(ROOT / "example_bots" / "random"),
                kind="python",
                author="mallory" if i < 2 else name,
            )
    report = run_swiss(tmp_path, OPTIONS, rounds=4, runner=hashed_runner)
    assert report.exit_code == 0
    hers = ("bot0@", "bot1@")
    assert all(
        sum(e.startswith(hers) for e in t.seats) <= 1 for r in report.rounds for t in r.tables
    )
    blind = SwissSettings(table_size=4, seed=3)  # without authors, and without results
    assert any(
        sum(e.startswith(hers) for e in t.seats) > 1
        for r in rederive(sorted(report.points), blind, [[]] * 4)
        for t in r.tables
    )


def test_a_round_stored_with_other_tables_stops_the_run(tmp_path: Path) -> None:
    """Entrants added under a Swiss make another Swiss (another key); a stored round that its
    results do not give is refused in one line, never mixed."""
    make_tournament(tmp_path)
    report = run_swiss(tmp_path, OPTIONS, rounds=1, runner=hashed_runner)
    with Store(tmp_path) as store:
        ids = {v.key: v.id for v in store.versions.current()}
        store.schedules.save(  # round 2 stored as round 1's tables again
            round_id(report.key, 2),
            [
                {**g.to_dict(), "game_id": f"x{g.game_id}", "seats": [ids[k] for k in g.seats]}
                | {"settings": {}}
                for g in report.rounds[0].games
            ],
            description="forged",
            settings={},
            entrants=[],
        )
    with pytest.raises(TournamentError, match=r"round 2 of this Swiss .* other tables"):
        run_swiss(tmp_path, OPTIONS, rounds=2, runner=hashed_runner)


def test_referee_tournament_run_format_swiss_with_local_bots(tmp_path: Path) -> None:
    """The command, real games of the example bots in local processes: 5 bots at tables of 4,
    one bye a round."""
    from click.testing import CliRunner

    from take5_arena.cli.main import main as cli
    from take5_arena.referee.tournament import submit

    for i, name in enumerate(("random", "lowest", "heuristic", "random", "lowest")):
        submit(tmp_path, EXAMPLES / name, f"{name}{i}", sandbox="local")
    base = ["tournament", "run", "--tournament", str(tmp_path), "--sandbox", "local"]
    out = CliRunner().invoke(cli, [*base, "--players", "4", "--format", "swiss", "--rounds", "2"])
    assert out.exit_code == 0, out.output
    assert "Swiss: 2 of 2 rounds, 8 games (8 played now" in out.output
    standing = re.findall(r"^ +\d\. (\w+) +([\d.]+) points", out.output, re.MULTILINE)
    assert len(standing) == 5  # the Swiss standing, by points
    assert [float(p) for _, p in standing] == sorted((float(p) for _, p in standing), reverse=True)
    assert sum("(1 bye)" in line for line in out.output.splitlines()) == 2
    with Store(tmp_path, readonly=True) as store:
        assert store.results.recorded_count() == 8
        settings = TournamentSettings.from_json(store.settings.get())
        keys = {v.id: v.key for v in store.versions.current()}
        rounds = [store.schedules.games(s.schedule_id) for s in store.schedules.all()]
        games = {g.game_id: g for g in played_games(store, keys)}
    # secret deals: one deal per round, in every rotation; the tables and byes re-derive from the
    # results without the key (it is needed only for the game ids)
    assert settings.deals is DealMode.SECRET
    assert all(len({(g.deal_season, g.deal_id) for g in r}) == 1 for r in rounds)
    assert all(sorted(g.rotation for g in r) == [0, 1, 2, 3] for r in rounds)
    ss = SwissSettings(table_size=4, seed=settings.seed, context=settings.game_context())
    again = rederive(sorted(keys.values()), ss, [[games[g.game_id] for g in r] for r in rounds])
    assert [sorted({frozenset(t.seats) for t in r.tables}) for r in again] == [
        sorted({frozenset(keys[v] for v in g.seats) for g in r}) for r in rounds
    ]
    assert [len(r.byes) for r in again] == [1, 1] and again[0].byes != again[1].byes
    out = CliRunner().invoke(cli, [*base, "--format", "swiss"])
    assert out.exit_code == 2 and "--format swiss needs --rounds N" in out.output
    out = CliRunner().invoke(cli, [*base, "--format", "swiss", "--rounds", "2", "--dry-run"])
    assert out.exit_code == 2 and "no --dry-run" in out.output
    out = CliRunner().invoke(cli, [*base, "--rounds", "2"])
    assert out.exit_code == 2 and "--rounds is for --format swiss" in out.output
