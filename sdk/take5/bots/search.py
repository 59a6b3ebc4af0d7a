"""search: a light Monte Carlo search over the rest of the round, in about 20 ms a decision.

For each card of its hand it deals the cards it has not seen into the other hands at random
(`take5.batch.Batch.determinize`, consistent with everything it has seen), plays the card and then
the rest of the round (every seat plays its greedy card, or a random one half of the time), and
plays the card whose rollouts cost it the fewest bull heads. All cards are scored on the same deals
and the same random draws, so they compare fairly. Rows and draft picks use the SDK defaults.

The rollouts run in blocks on the batched simulator (take5.batch): one block is `block` deals
times every card of the hand, played as one batch. In its 20 ms it plays about 2,000-5,000
rollouts on a 4-player table with a full hand (about 500 with take5.sim one rollout at a time, as
it did before; bench/sim.py measures both). It is the short version of example_bots/montecarlo
(which adds successive halving, an opponent model and more): a starting point for your own search
bot. With `rollouts=N` it plays N deals per decision whatever the time, which makes it
deterministic.

numpy and take5.batch are imported when a SearchBot is made, not with `take5.bots`: the other
bundled bots (and the example bots that serve them) start without loading numpy.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from take5 import Bot, View
from take5.sim import Table, greedy_card

if TYPE_CHECKING:
    import numpy as np


class SearchBot(Bot):
    name = "search"
    version = "2.0"
    author = "take5 arena"

    def __init__(
        self,
        seed: int = 0,
        budget: float = 0.02,
        *,
        rollouts: int | None = None,
        randomness: float = 0.5,
        block: int = 64,
    ) -> None:
        self.budget = budget
        """Seconds per decision (less when the referee's deadline is nearer)."""
        self.rollouts = rollouts
        """If set, this many deals per decision (each scores every card), whatever the time."""
        self.randomness = randomness
        """How often a simulated player plays a random card instead of the greedy one."""
        self.block = block
        """Deals per batch: the search checks the clock after each."""
        import numpy as np

        self.rng: np.random.Generator = np.random.default_rng(seed)
        self.last_rollouts = 0
        """How many rollouts the last decision played (deals times cards)."""

    def pick_card(self, view: View) -> int:
        import numpy as np

        from take5.batch import Batch, EpsilonGreedy

        hand = list(view.hand)
        if len(hand) == 1:
            return hand[0]
        stop = time.monotonic() + min(self.budget, self.time_left() - 0.02)
        seat, k = view.seat, len(hand)
        totals = np.zeros(k)
        deals = 0
        wanted = self.rollouts if self.rollouts is not None else 10**9
        while deals < wanted:
            if self.rollouts is None and deals and time.monotonic() >= stop:
                break
            size = min(self.block, wanted - deals)
            batch = Batch.determinize(view, size, self.rng, keep_cards=False).tile(k)
            first = np.zeros((len(batch), view.settings.players), dtype=np.int16)
            first[:, seat] = np.repeat(hand, size)  # block c plays card hand[c] first
            policy = EpsilonGreedy(self.randomness, self.rng, period=size)  # the same draws
            points = batch.play_round(policy, first=first)
            totals += points[:, seat].reshape(k, size).sum(1)
            deals += size
        self.last_rollouts = deals * k
        best = totals.min()
        candidates = [card for card, total in zip(hand, totals) if total == best]
        table = Table.from_rows(view.rows)
        return greedy_card(table, candidates) if len(candidates) > 1 else candidates[0]
