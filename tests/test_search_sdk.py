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
