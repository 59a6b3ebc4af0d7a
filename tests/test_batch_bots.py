"""The search bots on the batched simulator: legal, deterministic with a fixed number of rollouts,
and counting what they played."""

from __future__ import annotations

import subprocess
import sys

from support import referee_env

from take5 import Game, RandomPlayer, Settings, play_game
from take5.bots import SearchBot


def test_search_bot_plays_its_rollouts_and_repeats_itself():
    view = Game(Settings(players=4), 8).view(2)
    bot = SearchBot(seed=3, rollouts=70, block=32)
    card = bot.pick_card(view)
    assert card in view.hand
    assert bot.last_rollouts == 70 * len(view.hand)  # every card on the same 70 deals
    assert SearchBot(seed=3, rollouts=70, block=32).pick_card(view) == card
    assert SearchBot(seed=3, rollouts=70, block=7).pick_card(view) in view.hand


def test_search_bot_finishes_games_on_a_budget():
    players = [SearchBot(seed=1, budget=0.005), RandomPlayer(1), RandomPlayer(2)]
    game = play_game(players, Settings(players=3, threshold=30), seed=4)
    assert game.is_over and players[0].last_rollouts >= 0


def test_the_other_bundled_bots_start_without_numpy():
    """example_bots/heuristic, random and lowest import take5.bots: loading it, or playing those
    bots, must not load numpy (only a SearchBot does), so they start as light as before."""
    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "from take5 import play_against\n"
        "from take5.bots import HeuristicBot, SearchBot\n"
        "print(play_against(HeuristicBot(), ['random', 'lowest'], games=2, seed=1).bot.games)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=referee_env(),
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["2"]
