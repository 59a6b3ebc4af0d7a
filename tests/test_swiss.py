"""Swiss pairing (take5_arena/referee/tournament/plan/swiss.py): its invariants on any field, with
random results, checked by hypothesis; no repeat where a brute force finds that none is needed."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from take5.shuffle import SplitMix64
from take5_arena.referee.tournament.plan.adaptive import PlayedGame
from take5_arena.referee.tournament.plan.schedule import ScheduleError
from take5_arena.referee.tournament.plan.swiss import (
    SwissRound,
    SwissSettings,
    next_round,
    pair_round,
    rederive,
    standings,
)


def _results(rnd: SwissRound, seed: int) -> list[PlayedGame]:
    """Random places (ties included) for every game of a round."""
    rng = SplitMix64(seed)
    return [
        PlayedGame(g.game_id, g.seats, tuple(1 + rng.below(len(g.seats)) for _ in g.seats))
        for g in rnd.games
    ]


def _play(
    entrants: Sequence[str], s: SwissSettings, rounds: int, seed: int
) -> tuple[list[SwissRound], list[PlayedGame]]:
    out: list[SwissRound] = []
    played: list[PlayedGame] = []
    for r in range(rounds):
        rnd = next_round(entrants, s, out, played)
        out.append(rnd)
        played += _results(rnd, seed * 1000 + r)
    return out, played


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
    out, played = _play(entrants, s, rounds, seed)
    count: Counter[str] = Counter()
    for r, rnd in enumerate(out):
        before = dict(count)
        count.update(rnd.byes)
        # never a second bye while someone has had fewer
        assert max(count[e] for e in entrants) - min(count[e] for e in entrants) <= 1
        if rnd.byes:
            # among those with the fewest byes, the ones sitting out stand lowest
            ids = {g.game_id for x in out[:r] for g in x.games}
            points = standings(entrants, [g for g in played if g.game_id in ids], out[:r], s)
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
    out, played = _play(entrants, s, rounds, seed)
    # a verifier has the games in any order, and other games of the store beside them
    noise = [PlayedGame("other", ("e0", "x"), (1, 2))]
    assert rederive(list(reversed(entrants)), s, noise + played[::-1], rounds) == out
    assert _play(entrants, s, rounds, seed)[0] == out  # deterministic


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
