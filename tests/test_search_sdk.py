"""take5.search: the SDK's determinized search is a complete bot to configure or subclass (the
example search bots are configurations of it)."""

from __future__ import annotations

from take5 import RandomPlayer, Settings, play_game
from take5.bot import Bot
from take5.search import MonteCarloSearch


class Mine(MonteCarloSearch):
    name = "mine"


def test_a_subclass_is_a_bot_that_plays_legal_games():
    bot = Mine(seed=1, rollouts=16, paced=True, exact_cards=3, own_randomness=0.5)
    assert isinstance(bot, Bot)
    game = play_game([bot, RandomPlayer(1), RandomPlayer(2)], Settings(players=3, threshold=20))
    assert game.is_over  # the engine rejects an illegal answer


def test_the_same_seed_plays_the_same_game():
    def scores() -> tuple[int, ...]:
        players = [Mine(seed=4, rollouts=24), RandomPlayer(1)]
        return tuple(play_game(players, Settings(players=2, threshold=20), seed=3).scores)

    assert scores() == scores()


def test_the_win_objective_plays_legal_games():
    bot = Mine(seed=2, rollouts=16, paced=True, objective="win")
    game = play_game([bot, RandomPlayer(1), RandomPlayer(2)], Settings(players=3, threshold=20))
    assert game.is_over


def test_the_chance_of_winning_follows_the_totals():
    import numpy as np
    import pytest

    from take5.rules import EndRule
    from take5.search_value import win_chance

    totals = np.array([[10, 20], [20, 10], [15, 15], [60, 70], [70, 60], [66, 66]])
    chance = win_chance(totals, 0, 66, EndRule.ABOVE, 9.0)
    assert chance[0] > 0.5 > chance[1]  # ahead wins more often, behind less
    assert chance[0] + chance[1] == pytest.approx(1.0)  # head to head: the two sides' chances
    assert chance[2] == pytest.approx(0.5)
    assert list(chance[3:]) == [1.0, 0.0, 0.5]  # over the threshold (67): the game is decided
    far, near = win_chance(np.array([[10, 12, 15], [50, 52, 55]]), 0, 66, EndRule.ABOVE, 12.0)
    assert far < near  # the same lead is worth more when fewer rounds are left
    with pytest.raises(ValueError):
        Mine(objective="rank")
