"""montecarlo: determinized Monte Carlo rollouts of the rest of the round, within the deadline.

The search is the SDK's (`take5.search.MonteCarloSearch`); this bot is its plainest configuration:
blocks of deals doubling from 16, its own later cards greedy in the rollouts, every card of the
hand a candidate, a fixed budget per decision. What the search does:

For every decision (a card to play, a row to take, a card to draft) the bot:

1. deals the cards it has not seen into the other hands at random, consistently with what it knows
   (`take5.batch.Batch.determinize`; in the professional variant the hands are public and used as
   they are);
2. for each candidate, plays it and then the rest of the round with the fast rollout policy: every
   seat plays its greedy card (fewest bull heads now), an opponent plays a random card instead as
   often as that opponent has been seen to (see "opponents" below);
3. scores the rollout as its own bull heads minus a share of the opponents' mean (only the ranking
   at the end of the game counts, so what hurts the others is worth a little);
4. compares candidates on the same deals and random draws (common random numbers) and drops the
   worse half at regular points (successive halving), so the time goes to the close calls.

The rollouts of card and row choices run on the batched simulator (take5.batch): a block of deals
times every candidate still in the running is one batch; blocks double from 16 to 256 deals, never
much past the stage's time. On a 4-player table that gives it about 4,000-6,000 rollouts in a
decision of its 90 ms budget, up to about 10,000 (bench/strength.py prints the mean per decision);
the same search one rollout at a time with take5.sim, as this bot did before, made about 1,100.
Draft picks (professional variant) still use take5.sim.

Opponents: after each round the bot replays it (the rows it saw each turn and every card revealed)
and asks, turn by turn, whether each opponent played the card the greedy policy would have played
from the hand it then held (the cards it played later). A Bayesian estimate over the probability of
"random card instead" follows for each opponent and is used in the rollouts from then on: random
players are simulated as random, careful ones as careful. It starts at 0.5, one estimate per game
(by game id).

Time: it stops at its budget (default 90 ms a decision, to answer within 100 ms) or a safety margin
before the referee's deadline (`Bot.time_left()`), whichever comes first, and answers with the best
candidate so far: more time, more rollouts, better play. The last card of a round is played without
thinking, and a search stops early once its leader is better than every other candidate left by 4
standard errors (paired, on the same deals).

Everything random comes from its own seeded generators: with a fixed number of rollouts
(`rollouts=N`) it is fully deterministic; with a time budget it depends on the machine's speed.
"""

from __future__ import annotations

from take5 import run
from take5.search import MonteCarloSearch


class MonteCarloBot(MonteCarloSearch):
    """`take5.search.MonteCarloSearch` with its defaults (its knobs are this bot's)."""

    name = "montecarlo"
    version = "1.2"
    author = "take5 arena"


if __name__ == "__main__":
    run(MonteCarloBot())
