"""The fit kept up to date game by game equals the fit of all games from scratch (to 1e-6 Elo)."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest

from take5_arena.leaderboard import fit as F
from take5_arena.leaderboard.board import Standings, compute_standings
from take5_arena.leaderboard.fit import fit_elo, prepare
from take5_arena.leaderboard.incremental import LiveRatings
from take5_arena.leaderboard.live_board import LiveStandings
from take5_arena.leaderboard.results import GameResult


def games(rng: random.Random, bots: list[str], count: int, start: int = 0) -> list[GameResult]:
    strength = {b: rng.gauss(0.0, 1.0) for b in bots}
    out = []
    for k in range(count):
        seats = rng.sample(bots, rng.choice((2, 3, 4, 5)[: len(bots) - 1]))
        perf = [strength[b] + rng.gauss(0.0, 1.5) for b in seats]
        places = tuple(1 + sum(q > p for q in perf) for p in perf)
        if rng.random() < 0.05:
            places = tuple(1 for _ in places)  # a draw all round
        out.append(GameResult(f"g{start + k:06d}", tuple(seats), tuple(0 for _ in seats), places))
    return out


def same_fit(live: F.Fit, full: F.Fit) -> None:
    assert live.entrants == full.entrants
    assert np.array_equal(live.component, full.component)
    assert float(np.max(np.abs(live.elo - full.elo))) < 1e-6


@pytest.mark.parametrize("dense_max", [300, 1])  # the dense Newton step, and the sparse CG one
def test_game_by_game_equals_the_full_fit(monkeypatch, dense_max):
    monkeypatch.setattr(F, "DENSE_MAX_BOTS", dense_max)
    import take5_arena.leaderboard.incremental as inc

    monkeypatch.setattr(inc, "DENSE_MAX_BOTS", dense_max)
    rng = random.Random(dense_max)
    bots = [f"bot{i:02d}" for i in range(30)]
    history = games(rng, bots[:20], 150)
    live = LiveRatings.from_pairs(prepare(history), fit_elo(prepare(history)))
    for step in range(12):
        # new games, some of them with bots never seen (and pairs that never met)
        more = games(rng, bots[: 20 + 2 * step], 1 + step % 3, start=len(history))
        history += more
        live.add_results(more)
        same_fit(live.fit(), fit_elo(prepare(history)))
    assert live.games == len(history)


def test_from_nothing_and_separate_pools_are_centred_apart():
    rng = random.Random(3)
    history = games(rng, ["a", "b", "c"], 20) + games(rng, ["x", "y", "z"], 20, start=20)
    live = LiveRatings()
    live.add_results(history[:5])
    live.fit()
    live.add_results(history[5:])
    same_fit(live.fit(), fit_elo(prepare(history)))
    # a game joining the two pools makes them one component
    bridge = GameResult("g999999", ("a", "x"), (0, 0), (1, 2))
    live.add_results([bridge])
    fit = live.fit()
    same_fit(fit, fit_elo(prepare([*history, bridge])))
    assert len(set(fit.component.tolist())) == 1


def test_merging_the_newer_pairs_keeps_the_fit(monkeypatch):
    import take5_arena.leaderboard.incremental as inc

    monkeypatch.setattr(inc, "DENSE_MAX_BOTS", 1)
    monkeypatch.setattr(inc, "MERGE_SHARE", 0.0)  # every fit sorts the pairs again
    rng = random.Random(5)
    bots = [f"b{i}" for i in range(40)]
    history = games(rng, bots, 100)
    live = LiveRatings.from_pairs(prepare(history))
    for k in range(3):
        more = games(rng, bots, 5, start=1000 + 10 * k)
        history += more
        live.add_results(more)
        same_fit(live.fit(), fit_elo(prepare(history)))


def test_bad_input():
    with pytest.raises(ValueError, match="prior"):
        LiveRatings(prior=-1.0)
    with pytest.raises(ValueError, match="length"):
        LiveRatings().add(("a", "b"), (1,))


def test_live_standings_equal_compute_standings_without_intervals():
    rng = random.Random(11)
    bots = [f"bot{i:02d}" for i in range(12)]
    history = games(rng, bots[:10], 60)
    history = [
        replace(g, played_at=k, faults=(("timeout",),) * len(g.entrants))
        for k, g in enumerate(history)
    ]
    live = LiveStandings(history[:40])
    for k, g in enumerate(history[40:]):
        live.add(g)
        if k % 5 == 0:
            same_standings(live.standings(), compute_standings(history[: 41 + k], bootstrap=0))
    # new bots, and a game played earlier than the last one (the online Elo is replayed)
    late = [replace(g, played_at=-1 - k) for k, g in enumerate(games(rng, bots, 4, start=500))]
    for g in late:
        live.add(g)
    same_standings(live.standings(), compute_standings(history + late, bootstrap=0))
    fresh = LiveStandings()
    for g in history[:10]:
        fresh.add(g)
    same_standings(fresh.standings(), compute_standings(history[:10], bootstrap=0))


def same_standings(live: Standings, full: Standings) -> None:
    assert live.games == full.games and live.los == full.los == ()
    assert [r.entrant for r in live.rows] == [r.entrant for r in full.rows]
    for a, b in zip(live.rows, full.rows):
        assert abs(a.rating - b.rating) < 1e-6
        assert replace(a, rating=0.0, online_elo=0.0) == replace(b, rating=0.0, online_elo=0.0)
        assert abs(a.online_elo - b.online_elo) < 1e-9


def close_standings(live: Standings, full: Standings) -> None:
    """The same table to 1e-6 (intervals and LOS included)."""
    assert live.games == full.games and live.intervals_as_of == full.intervals_as_of
    assert [r.entrant for r in live.rows] == [r.entrant for r in full.rows]
    assert live.to_json_dict()["method"] == full.to_json_dict()["method"]
    for a, b in zip(live.rows, full.rows):
        for x, y in zip(
            (a.rating, a.low, a.high, a.los_next), (b.rating, b.low, b.high, b.los_next)
        ):
            assert (x is None) == (y is None) and (x is None or abs(x - y) < 1e-6), (a, b)
        blank = {"rating": 0.0, "online_elo": 0.0, "low": None, "high": None, "los_next": None}
        assert replace(a, **blank) == replace(b, **blank)
    assert len(live.los) == len(full.los)
    for ra, rb in zip(live.los, full.los):
        for x, y in zip(ra, rb):
            assert (x is None) == (y is None) and (x is None or abs(x - y) < 1e-6)


def stamped(rows: list[GameResult], start: int = 0) -> list[GameResult]:
    return [replace(g, played_at=start + k) for k, g in enumerate(rows)]


def test_live_standings_with_intervals_equal_compute_standings():
    """While the intervals are fast, each call's are of every game: compute_standings' own."""
    rng = random.Random(12)
    bots = [f"bot{i:02d}" for i in range(10)]
    history = stamped(games(rng, bots[:8], 50))
    live = LiveStandings(history[:30], bootstrap=100)
    for k in range(30, 50, 7):
        assert live.catch_up(history[: k + 1])
        close_standings(live.standings(), compute_standings(history[: k + 1], bootstrap=100))
    assert live.last_check is not None and live.last_check.difference < 1e-6


@pytest.mark.parametrize("los_max", [1000, 4])  # the LOS matrix, and the variances' LOS next
def test_carried_intervals_are_what_the_verifier_computes(monkeypatch, los_max):
    """Once the intervals are slow they are refreshed at REFRESH_SHARE more games; in between
    the standings carry them, and say as of which game: compute_standings(intervals_through=...)
    gives the same table from the games alone (what `referee verify --site` runs)."""
    import take5_arena.leaderboard.intervals as I
    import take5_arena.leaderboard.live_board as LB

    monkeypatch.setattr(LB, "FAST_REFRESH_SECONDS", 0.0)
    monkeypatch.setattr(LB, "REFRESH_SHARE", 0.2)
    monkeypatch.setattr(I, "LOS_MAX_BOTS", los_max)
    rng = random.Random(13)
    bots = [f"bot{i:02d}" for i in range(12)]
    history = stamped(games(rng, bots[:10], 60))
    live = LiveStandings(history[:40], bootstrap=100)
    first = live.standings()
    assert first.intervals_as_of is None  # refreshed at the first call
    # a few more games (bots never seen among them): carried, as of game 40 (sequence 39)
    more = stamped(games(rng, bots, 5, start=100), start=40)
    assert live.catch_up(history[:40] + more)
    table = live.standings()
    assert table.intervals_as_of == (40, 39)
    assert "as of game 40" in table.to_json_dict()["method"]["interval"]
    assert table.to_json_dict()["intervals_as_of"] == {"games": 40, "through": 39}
    verified = compute_standings(history[:40] + more, bootstrap=100, intervals_through=39)
    close_standings(table, verified)
    assert any(r.low is None for r in table.rows if r.entrant in ("bot10", "bot11"))
    # a game older than the intervals' last one: refreshed, of every game again
    late = replace(more[0], game_id="late", played_at=-5)
    assert live.catch_up(history[:40] + more + [late])
    table = live.standings()
    assert table.intervals_as_of is None
    close_standings(table, compute_standings(history[:40] + more + [late], bootstrap=100))


def test_catch_up_refuses_a_changed_game():
    rng = random.Random(14)
    history = stamped(games(rng, ["a", "b", "c", "d"], 20))
    live = LiveStandings(history[:10])
    relabelled = [
        replace(g, entrants=tuple("a@v1" if e == "a" else e for e in g.entrants)) for g in history
    ]
    assert not live.catch_up(relabelled)
    assert not live.catch_up(history[1:])  # a game gone
    assert live.games == 10
    assert live.catch_up(history)
    assert live.games == 20


def test_catch_up_reads_past_the_high_water_mark_while_the_labels_stay():
    rng = random.Random(15)
    history = stamped(games(rng, ["a", "b", "c", "d"], 30))
    live = LiveStandings(history[:10], labels=(1, "a"))
    assert live.catch_up(history[:20], labels=(1, "a"))
    assert live.games == 20
    # the same labels: the games up to the mark are taken as they were (not compared)
    assert live.catch_up(history[:25], labels=(1, "a"))
    assert live.games == 25
    # other labels (a new version): every game compared, and a relabelled one refused
    relabelled = [
        replace(g, entrants=tuple("a@v1" if e == "a" else e for e in g.entrants)) for g in history
    ]
    assert not live.catch_up(relabelled, labels=(1, "a@v1"))
    # the game at the mark is not the last one added: every game compared
    assert not live.catch_up(history[1:], labels=(1, "a"))
    assert live.catch_up(history, labels=(1, "a"))
    assert live.games == 30
    same_standings(live.standings(), compute_standings(history, bootstrap=0))


@pytest.mark.parametrize("dense_max", [0, 300])
def test_document_parts_kept_game_by_game_equal_those_of_every_game(monkeypatch, dense_max):
    from take5_arena.leaderboard import publish as P

    monkeypatch.setattr(P, "CROSSTABLE_DENSE_MAX", dense_max)
    rng = random.Random(16)
    bots = [f"bot{i:02d}" for i in range(12)]
    history = stamped(games(rng, bots[:10], 150))
    live = LiveStandings(history[:40])

    def check(results: list[GameResult]) -> None:
        table = live.standings()
        entrants = [r.entrant for r in table.rows]
        mine = live.document_parts(entrants)
        want = P.document_parts(compute_standings(results, bootstrap=0), results)
        assert mine.crosstable == want.crosstable
        assert [(p.games, p.played_at) for p in mine.over_time] == [
            (p.games, p.played_at) for p in want.over_time
        ]
        for a, b in zip(mine.over_time, want.over_time):
            assert [e for e, _ in a.ratings] == [e for e, _ in b.ratings]
            assert np.allclose([r for _, r in a.ratings], [r for _, r in b.ratings], atol=1e-6)

    check(history[:40])
    for k in range(40, 150):
        live.add(history[k])
        if k % 17 == 0 or k == 149:
            check(history[: k + 1])
    # new bots, and a game played earlier than the last one: every point fitted again
    late = [replace(g, played_at=-1 - k) for k, g in enumerate(games(rng, bots, 3, start=500))]
    for g in late:
        live.add(g)
    check(history + late)


def test_the_crosstable_is_sparse_above_its_size(monkeypatch):
    from take5_arena.leaderboard import publish as P

    rng = random.Random(17)
    bots = [f"bot{i:02d}" for i in range(8)]
    history = stamped(games(rng, bots, 40))
    entrants = sorted(bots)
    dense = P.crosstable(history, entrants)
    monkeypatch.setattr(P, "CROSSTABLE_DENSE_MAX", 4)
    sparse = P.crosstable(history, entrants)
    assert sparse.keys() == {"entrants", "pairs"}
    cells = 0
    for i in range(8):
        for j in range(8):
            if dense["meetings"][i][j]:
                cells += 1
    assert len(sparse["pairs"]) * 2 == cells
    for i, j, meetings, score in sparse["pairs"]:
        assert i < j
        assert dense["meetings"][i][j] == meetings
        assert dense["score"][i][j] == score
        assert dense["score"][j][i] == pytest.approx(1.0 - score)
