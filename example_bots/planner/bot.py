"""planner: montecarlo's search, made to fit many more rollouts in its time, with exact plans of
its own last cards, its own later cards played mostly at random in its rollouts, and a spent time
bank.

It is example_bots/montecarlo (determinized rollouts of the rest of the round on the batched
simulator `take5.batch`, common random numbers, successive halving, a learned eps-greedy model of
each opponent; read that bot's text first) with five changes, each a knob of that search, which
lives in the SDK (`take5.search.MonteCarloSearch`: this file configures it). Its strength
against a frozen montecarlo at equal CPU is in docs/benchmarks.md, "The strongest bot"
(bench/strength.py ladder).

1. **Blocks sized to the time** (`Pace`). A batch's cost is mostly numpy's fixed cost per call
   (a round of 160 games costs 2 ms, one of 2,560 costs 6), so montecarlo's blocks, doubling from
   16 deals, spend a short budget on overhead: at 10 ms a decision it plays about 400 rollouts.
   The planner predicts what a batch costs (a per-call, per-turn and per-game cost, times a speed
   factor learned from every batch it times), makes each block as large as what is left of the
   halving stage allows, and gives a short budget fewer stages, each cutting deeper
   (`STAGE_OVERHEADS`): 2,000-8,000 rollouts in the same 10 ms.
2. **Its own last cards, exactly.** With `exact_cards` cards or fewer in hand (4 by default at 3
   players or more, none head to head: see `EXACT_CARDS`), the candidates are not single cards
   but every order of the whole hand (4! = 24 plans). Each deal of the hidden hands plays every
   plan on the same deal and the same opponent draws, and a first card is worth its best plan on
   that deal (`exact="deal"`: the best reply to each determinization) or its best plan on average
   (`exact="plan"`). montecarlo's rollouts play its own later cards greedily, which late in a
   round (few cards, every one of them decisive) misjudges the order in which to get rid of them.
3. **Its own later cards mostly at random** (`own_randomness`, `OWN_RANDOMNESS`). montecarlo's
   rollouts play its own later cards greedily, every time. That is one fixed, short-sighted line
   of play: a first card is then judged by how well it suits that line (keeping the cards greedy
   play gets rid of cheaply), not by what it leaves the bot to do. Playing a random card 70% of
   the time values a first card over many later lines instead, and wins far more
   (docs/benchmarks.md, "Planner 1.3": head to head against the frozen montecarlo, 55.6% of the
   wins with greedy later cards, 80.4% at 0.7, on the same 400 games; 80.1% on 800 fresh ones).
4. **A time bank, spent where it matters.** When the referee's time control has a bank (protocol
   1.1: `Bot.context.bank`), the bot plans its spending: each remaining decision of the game gets a
   weight (`weight_of`: more for a full hand early in a round, more again when the scores are close
   to the threshold and the round may end the game, nothing for a last card), the number of rounds
   left is estimated from the scores so far, and this decision gets its weight's share of the bank
   plus the increments still to come. It never spends more than `Bot.time_left()` less `margin`, so
   it never overdraws. Without a bank (a fixed limit per decision) it thinks `budget` seconds, as
   montecarlo does.
5. **Its whole allowance** (version 1.5; `settle=None`, `MAX_DEALS`). Version 1.4 stopped a
   search once its leader was 4 standard errors ahead of every other candidate or after 3,000
   deals: at its 90 ms default it thought 20 ms a card on average at 2 players (at most 68) and
   37 ms at 4, so a longer budget bought it little. It now thinks until its allowance is spent
   (the last card of a round excepted): what it does with the time is in docs/benchmarks.md,
   "Planner 1.5", with what that buys and what it does not.

Knobs: `budget`, `exact_cards`, `exact`, `use_bank`, `close_weight`, `margin`, `clock`,
`settle`, `max_deals` and
montecarlo's `rollouts`, `opponent_randomness`, `own_randomness`, `relative`, `win_weight`,
`objective` (scores by points by default; "win" did not play stronger: docs/benchmarks.md); the
module constants `STAGE_OVERHEADS`, `EXACT_CARDS`, `OWN_RANDOMNESS` and `MIN_BLOCK`/`MAX_BLOCK`.
"""

from __future__ import annotations

from take5 import run
from take5.search import DEFAULT_BUDGET, SAFETY_MARGIN, MonteCarloSearch

OWN_RANDOMNESS = 0.7
"""How often the bot's own later turns in a rollout play a random card rather than the greedy one
(`own_randomness`; montecarlo's is 0). Screened head to head against the frozen montecarlo (the
same 400 games each): 0 took 55.6% of the wins, 0.07 60.8%, 0.15 66.4%, 0.3 71.6%, 0.5 77.8%, 0.7
80.4%, 1 78.8%; 0.7 served at 4 players too (67.4%, against 66-67% at 0.15 and 0.3)."""


MAX_DEALS = 1_000_000
"""Deals a search may play at most: in effect none (version 1.4 stopped at 3,000)."""


class PlannerBot(MonteCarloSearch):
    """`take5.search.MonteCarloSearch` paced, with exact late plans (`exact_cards=None`: 4 cards at
    3 players or more), its own later cards mostly random, a planned bank, and no early stop
    (`settle=None`: it thinks its whole allowance); see the module text and MonteCarloSearch for
    the knobs."""

    name = "planner"
    version = "1.5"
    author = "take5 arena"

    def __init__(
        self,
        seed: int = 0,
        budget: float = DEFAULT_BUDGET,
        *,
        rollouts: int | None = None,
        opponent_randomness: float | None = None,
        own_randomness: float = OWN_RANDOMNESS,
        relative: float = 0.5,
        win_weight: float = 0.0,
        margin: float = SAFETY_MARGIN,
        clock: str = "wall",
        max_deals: int = MAX_DEALS,
        settle: float | None = None,
        exact_cards: int | None = None,
        exact: str = "deal",
        use_bank: bool = True,
        close_weight: float = 1.5,
        compiled: bool | None = None,
        objective: str = "points",
    ) -> None:
        super().__init__(
            seed,
            budget,
            rollouts=rollouts,
            opponent_randomness=opponent_randomness,
            own_randomness=own_randomness,
            relative=relative,
            win_weight=win_weight,
            margin=margin,
            clock=clock,
            max_deals=max_deals,
            settle=settle,
            paced=True,
            exact_cards=exact_cards,
            exact=exact,
            use_bank=use_bank,
            close_weight=close_weight,
            compiled=compiled,
            objective=objective,
        )


if __name__ == "__main__":
    run(PlannerBot())
