"""search: a light Monte Carlo search over the rest of the round, in about 20 ms a decision.

For each card of its hand it deals the cards it has not seen into the other hands at random
(`take5.sim.sample_hands`, consistent with everything it has seen), plays the card and then the rest
of the round with `take5.sim.play_out` (every seat plays its greedy card, or a random one half of the
time), and plays the card whose rollouts cost it the fewest bull heads. All cards are scored on the
same deals, so they compare fairly. Rows and draft picks use the SDK defaults.

It is the short version of example_bots/montecarlo (which adds successive halving, an opponent
model and more): a starting point for your own search bot. With `rollouts=N` it plays N deals per
decision whatever the time, which makes it deterministic.
"""

from __future__ import annotations

import random
import time

from take5 import Bot, View
from take5.sim import Table, greedy_card, play_out, sample_hands


class SearchBot(Bot):
    name = "search"
    version = "1.0"
    author = "take5 arena"

    def __init__(self, seed: int = 0, budget: float = 0.02, *, rollouts: int | None = None,
                 randomness: float = 0.5) -> None:
        self.budget = budget
        """Seconds per decision (less when the referee's deadline is nearer)."""
        self.rollouts = rollouts
        self.randomness = randomness
        """How often a simulated player plays a random card instead of the greedy one."""
        self.rng = random.Random(seed)

    def pick_card(self, view: View) -> int:
        hand = list(view.hand)
        table = Table.from_rows(view.rows)
        if len(hand) == 1:
            return hand[0]
        stop = time.monotonic() + min(self.budget, self.time_left() - 0.02)
        unseen = view.unseen()
        totals = dict.fromkeys(hand, 0)
        deals = 0
        while deals < (self.rollouts or 10**9):
            if self.rollouts is None and deals and time.monotonic() >= stop:
                break
            hands = sample_hands(view, self.rng, unseen)
            seed = self.rng.getrandbits(62)
            for card in hand:
                first: list[int | None] = [None] * len(hands)
                first[view.seat] = card
                sim = random.Random(seed)  # the same draws for every card: a paired comparison
                points = play_out(table.copy(), [h[:] for h in hands], sim, self.randomness, first)
                totals[card] += points[view.seat]
            deals += 1
        best = min(totals.values())
        candidates = [card for card in hand if totals[card] == best]
        return greedy_card(table, candidates) if len(candidates) > 1 else candidates[0]
