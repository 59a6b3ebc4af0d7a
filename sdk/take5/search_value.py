"""The chance of winning the game from the totals a rollout reaches at the end of its round: the
value `take5.search.MonteCarloSearch` scores rollouts with when `objective="win"`.

A round's rollout ends with every seat's total known. The rounds after it start from a new deal,
so what the rest of the game makes of the round depends on those totals only. Two cases:

- a total has reached the threshold: the game is over, and the value is the seat's share of the
  win (1 for the lowest total alone, 1/k among k tied, else 0);
- otherwise each seat's later rounds are modelled as independent draws with the same mean `mean`
  and standard deviation `SPREAD * mean` per round, for as many rounds as the leader needs to reach
  the threshold at that pace (at least half a round). Beating seat j needs j's total plus its
  draws to stay above ours: a normal with variance 2 * rounds * sd**2. The seat wins when it beats
  every other one; the product of those chances treats them as independent (they are not: they
  share our draws), which keeps the order between rollouts, what a search compares.

The points a search would otherwise minimise (its own, less `relative` times the others' mean)
weigh every point the same. The chance of winning weighs a point by what it does to the outcome:
an opponent's points count when that opponent is a rival for first place, not when it is far
behind, and near the end a point that crosses the threshold counts for the whole game.

`round_mean(view)` estimates `mean` from the game so far: the totals of the rounds played,
pulled towards `PRIOR_MEAN` (eps-greedy play of a round, measured with `take5.core.rollouts`).
"""

from __future__ import annotations

try:
    import numpy as np
except ModuleNotFoundError as error:  # the [sim] extra
    from .extras import missing_extra

    raise missing_extra("sim", "take5.search_value", error) from None

from .game import View
from .rules import EndRule

SPREAD = 0.67
"""A seat's bull heads in a round: standard deviation over mean (0.63-0.68 at 2-10 players in
eps-greedy rounds, take5.core.rollouts on 2,000 random deals per table size)."""
PRIOR_MEAN = {2: 9.0, 3: 11.4, 4: 12.4, 5: 13.2, 6: 13.7}
"""A seat's mean bull heads in a round by table size (7 to 10: 14.5), eps-greedy play."""
PRIOR_ROUNDS = 2.0
"""How many rounds' worth of weight the prior mean has against the game's own rounds."""
LOGISTIC = 1.702
"""The normal distribution function as a logistic: 1 / (1 + exp(-1.702 x)) (within 0.01)."""


def round_mean(view: View) -> float:
    """A seat's mean bull heads per round: the game's rounds so far, pulled towards the prior."""
    n = view.settings.players
    prior = PRIOR_MEAN.get(n, 14.5)
    played = max(0, view.round - 1)
    return (sum(view.scores) + prior * n * PRIOR_ROUNDS) / (n * (played + PRIOR_ROUNDS))


def win_chance(
    totals: np.ndarray, me: int, threshold: int, end_rule: EndRule, mean: float
) -> np.ndarray:
    """Per row of `totals` (games, seats: the totals at the end of a round), seat `me`'s chance
    of winning the game (see the module text)."""
    if end_rule is EndRule.ABOVE:
        threshold += 1
    totals = totals.astype(np.float64)
    top = totals.max(1)
    low = totals.min(1)
    own = totals[:, me]
    ties = (totals == low[:, None]).sum(1)
    over = np.where(own == low, 1.0 / ties, 0.0)
    rounds = np.maximum((threshold - top) / mean, 0.5)
    scale = SPREAD * mean * np.sqrt(2.0 * rounds)
    others = np.delete(totals, me, axis=1)
    z = (others - own[:, None]) / scale[:, None]
    going = np.prod(1.0 / (1.0 + np.exp(-LOGISTIC * z)), axis=1)
    return np.asarray(np.where(top >= threshold, over, going))


__all__ = ["LOGISTIC", "PRIOR_MEAN", "PRIOR_ROUNDS", "SPREAD", "round_mean", "win_chance"]
