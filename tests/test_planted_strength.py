"""Ratings validated on real games: bots of planted strength come out in the planted order.

A bot of strength p plays a sensible heuristic with probability p and a uniformly random card (and
row) otherwise, so strength rises with p. Games are real in-process games of the engine
(`take5.play_game`), ranked as the referee ranks them, rated by `compute_standings`. Everything is
seeded; both tests take about a second.
"""

from __future__ import annotations

import importlib.util
import random

import pytest
from support import ROOT

from take5 import Settings, cheapest_row, penalty, play_game, target_row
from take5.rules import MAX_ROW_LENGTH
from take5_arena.leaderboard.board import compute_standings
from take5_arena.leaderboard.results import GameResult

HEURISTIC_BOT = ROOT / "example_bots" / "heuristic" / "bot.py"


def danger(rows, card: int, players: int) -> float:
    """Rough expected bull heads of playing `card` now: certain takes in full, a risky row
    partly."""
    index = target_row(rows, card)
    if index is None:
        return penalty(rows[cheapest_row(rows)]) + 0.5
    row = rows[index]
    if len(row) >= MAX_ROW_LENGTH:
        return penalty(row) + 0.5
    # the fuller the row and the wider the gap to our card, the likelier others fill it first
    gap_share = min(1.0, (card - row[-1]) * (players - 1) / 30)
    return (len(row) / MAX_ROW_LENGTH) ** 2 * gap_share * penalty(row)


class SmallHeuristic:
    """Least danger, ties to the higher card; takes the cheapest row."""

    def pick_card(self, view) -> int:
        return min(view.hand, key=lambda c: (danger(view.rows, c, view.players), -c))

    def choose_row(self, view) -> int:
        return cheapest_row(view.rows)


class Planted:
    """The heuristic's decision with probability p, else a random card / row."""

    def __init__(self, p: float, seed: int, heuristic) -> None:
        self.p, self.rng, self.heuristic = p, random.Random(seed), heuristic

    def pick_card(self, view) -> int:
        if self.rng.random() < self.p:
            return self.heuristic.pick_card(view)
        return self.rng.choice(view.hand)

    def choose_row(self, view) -> int:
        if self.rng.random() < self.p:
            return self.heuristic.choose_row(view)
        return self.rng.randrange(len(view.rows))


def play_pool(
    strengths: dict[str, float], games: int, heuristic_factory, seed: int
) -> list[GameResult]:
    """`games` 4-player games; each seats 4 of the bots (all when there are 4) in random order."""
    names = list(strengths)
    rng = random.Random(seed)
    out = []
    for g in range(games):
        seated = rng.sample(names, 4)
        players = [
            Planted(strengths[name], seed * 1_000_003 + g * 10 + seat, heuristic_factory())
            for seat, name in enumerate(seated)
        ]
        game = play_game(players, Settings(players=4), seed=seed * 100_000 + g)
        result = game.result()
        out.append(
            GameResult(
                game_id=f"g{g:05d}",
                entrants=tuple(seated),
                penalties=tuple(result.scores),
                places=tuple(result.places),
                played_at=g,
            )
        )
    return out


def assert_planted_order(results: list[GameResult], strengths: dict[str, float]) -> None:
    standings = compute_standings(results, bootstrap=200, seed=0)
    planted = sorted(strengths, key=lambda name: -strengths[name])
    got = [row.entrant for row in standings.rows]
    table = "\n".join(
        f"{r.entrant}: {r.rating:.0f} [{r.low:.0f}, {r.high:.0f}] penalty {r.mean_penalty:.1f}"
        for r in standings.rows
    )
    assert got == planted, f"rating order {got} differs from the planted order {planted}\n{table}"
    # The separation is not luck: each bot is clearly ahead of the next one down...
    for i in range(len(got) - 1):
        assert standings.los[i][i + 1] > 0.99, table
        assert standings.rows[i].low > standings.rows[i + 1].high, f"intervals overlap\n{table}"
    # ... and the plain statistics agree with the model.
    penalties = [row.mean_penalty for row in standings.rows]
    assert penalties == sorted(penalties), table


def test_planted_strengths_come_out_in_order():
    strengths = {"p0.00": 0.0, "p0.25": 0.25, "p0.50": 0.5, "p0.75": 0.75, "p1.00": 1.0}
    results = play_pool(strengths, games=400, heuristic_factory=SmallHeuristic, seed=1)
    assert_planted_order(results, strengths)


def load_example_heuristic():
    spec = importlib.util.spec_from_file_location("example_heuristic_bot", HEURISTIC_BOT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.HeuristicBot


@pytest.mark.skipif(not HEURISTIC_BOT.exists(), reason="example_bots/heuristic/bot.py not present")
def test_planted_strengths_with_the_example_heuristic_bot():
    heuristic = load_example_heuristic()
    strengths = {"p0.0": 0.0, "p0.5": 0.5, "p1.0": 1.0, "p0.25": 0.25}
    results = play_pool(strengths, games=200, heuristic_factory=heuristic, seed=2)
    assert_planted_order(results, strengths)
