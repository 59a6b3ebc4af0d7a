"""random: plays a uniformly random card of its hand, takes a random row, drafts a random card.

The randomness is seeded from the situation itself (seat, round, turn, hand, rows), so the bot keeps
no state and the same game replays identically (with the same Python version, whose hash of a tuple
of numbers is fixed): handy for tests and benchmarks.
"""

from __future__ import annotations

import random

from take5 import Bot, View


class RandomBot(Bot):
    name = "random"
    version = "1.0"
    author = "take5 arena"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def _rng(self, view: View) -> random.Random:
        # hash() of numbers and tuples of numbers is not salted per process (only str and bytes
        # are).
        return random.Random(
            hash((self.seed, view.seat, view.round, view.turn, view.hand, view.rows, view.pool))
        )

    def pick_card(self, view: View) -> int:
        return self._rng(view).choice(view.hand)

    def choose_row(self, view: View) -> int:
        return self._rng(view).randrange(len(view.rows))

    def draft_card(self, view: View) -> int:
        return self._rng(view).choice(view.pool)
