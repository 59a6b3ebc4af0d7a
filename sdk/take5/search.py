"""The determinized Monte Carlo search the example search bots share (example_bots/montecarlo and
example_bots/planner are configurations of `MonteCarloSearch`), for authors to reuse or subclass.

For every decision (a card to play, a row to take, a card to draft) the search:

1. deals the cards it has not seen into the other hands at random, consistently with what it knows
   (`take5.batch.Batch.determinize`; in the professional variant the hands are public);
2. for each candidate, plays it and then the rest of the round with a fast rollout policy: every
   seat plays its greedy card (fewest bull heads now), or a random one as often as that seat's
   randomness says (an opponent's is learned per game by `OpponentModel`; its own is
   `own_randomness`);
3. scores a rollout as its own bull heads minus `relative` times the opponents' mean (plus
   `win_weight` if the round ends the game and it does not win), or with `objective="win"` by its
   chance of winning the game from the totals it ends the round with (`take5.search_value`);
4. compares candidates on the same deals and random draws (common random numbers) and drops the
   worse ones at regular points (successive halving), so the time goes to the close calls.

Card rollouts run on the compiled core (take5.core) when it is built, else on take5.batch; rows on
take5.batch; drafts on take5.sim. The knobs that tell the bots apart:

- `paced`: blocks of deals sized to the time left (`Pace`: a batch's cost is mostly a fixed cost
  per call) and short budgets given fewer halving stages; otherwise blocks double from 16 deals;
- `exact_cards`: with this many cards or fewer in hand, every order of the whole hand is a
  candidate plan, played on the same deals (`exact`: a first card worth its best plan per deal,
  "deal", or on average, "plan");
- `use_bank`: under a time control with a bank, plan the spending over the game (`allowance`);
- `settle` and `max_deals`: a search stops early when its leader is `settle` standard errors ahead
  of every other candidate (paired; None: never) or after `max_deals` deals.

Time: a decision stops at its allowance (`budget`, or its share of a bank) or `margin` before the
referee's deadline (`Bot.time_left()`), whichever comes first, on the clock or (`clock="cpu"`) in
this thread's CPU time. With `rollouts=N` it plays N rollouts a decision whatever the time, which
makes it deterministic: everything random comes from its own seeded generators.
"""

from __future__ import annotations

import itertools
import math
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

try:
    import numpy as np
except ModuleNotFoundError as error:  # the [sim] extra
    from .extras import missing_extra

    raise missing_extra("sim", "take5.search", error) from None

from . import core
from .batch import Batch, EpsilonGreedy, revealed_cards
from .bot import Bot
from .clock import ClockKind
from .game import Phase, View
from .rules import BULL_HEADS, HAND_SIZE, EndRule
from .search_value import round_mean, win_chance
from .sim import Table, cheapest_row, draft_order, draft_out, greedy_card, play_out

DEFAULT_BUDGET = 0.09
"""Seconds per decision by default: with the answer's own overhead, under 100 ms."""
SAFETY_MARGIN = 0.015
"""Seconds kept in hand before the referee's deadline (answering and the network take some)."""
GRID = tuple(i / 10 for i in range(11))
"""The values of an opponent's randomness the estimate weighs."""
FIRST_BLOCK, LAST_BLOCK = 16, 256
"""Deals per batch when not paced (and with a fixed number of rollouts, and in drafts): the first
block of a search, doubling up to the last size."""
STAGE_OVERHEADS = 2.0
"""Paced: a stage of successive halving gets at least this many times one batch's fixed cost
(short budgets: fewer stages, each cutting deeper, rather than stages of one tiny batch)."""
MIN_BLOCK, MAX_BLOCK = 8, 1024
"""Paced: deals per batch, as many as `Pace` says fit the stage, within these."""
EXACT_CARDS = 4
"""`exact_cards=None`: whole orders with this many cards or fewer at 3 players or more, none head to
head. A first card valued by its best order on each deal is valued as if the opponents' hands were
known; at 2 players most unseen cards are out of play, so that knowledge misleads most: there the
exact plans lost (CHANGELOG.md, "Older benchmark figures": planner 1.2), while at 4 players
they were even."""
CALL_COST, TURN_COST, GAME_COST = 3e-4, 1.4e-4, 4.5e-8
"""The prior of `Pace`, in seconds: per batch, per turn of a batch, and per game, turn and seat
(measured on a 2-core machine: a batch of 2,560 4-player rounds takes 6 ms, one of 160 takes 2)."""


class Pace:
    """What a batch of rollouts costs: CALL_COST + turns * (TURN_COST + GAME_COST * seats * games),
    times a factor learned from every batch measured (this machine's speed, on the budget's clock).

    numpy's cost per call dominates small batches: a block of 16 deals of a 10-card hand costs
    about as much as one of 64. So under a time budget the search sizes each block to fill what is
    left of its stage instead of doubling from 16 (montecarlo's way, which at a 10 ms budget makes
    one block of 16 deals per stage and about 400 rollouts a decision where 2,000 fit).
    """

    def __init__(self) -> None:
        self.factor = 1.0

    def cost(self, games: int, turns: int, seats: int) -> float:
        return self.factor * (CALL_COST + turns * (TURN_COST + GAME_COST * seats * games))

    def learn(self, games: int, turns: int, seats: int, seconds: float) -> None:
        ratio = seconds / (self.cost(games, turns, seats) / self.factor)
        self.factor = 0.8 * self.factor + 0.2 * min(max(ratio, 0.2), 10.0)

    def games_within(self, seconds: float, turns: int, seats: int) -> int:
        """How many games fit in `seconds` (0 if not even the overhead does)."""
        per_turn = (seconds / self.factor - CALL_COST) / max(1, turns) - TURN_COST
        return max(0, int(per_turn / (GAME_COST * seats)))


class OpponentModel:
    """How often each opponent plays a random card rather than the greedy one, learned per game.

    `observe(view)` is called with every view the bot gets; when a round is over it is replayed: for
    each opponent and turn, was the revealed card the greedy card (`take5.sim.greedy_card`) of the
    hand held then? The hand is known after the fact: the cards the opponent played from that turn
    on (in the standard game the round's last card is never seen, so the turn-9 and turn-10 hands
    are left out and the others miss one card; in the professional variant the hands are public).
    The likelihood of "greedy with probability 1-e, else uniform" is accumulated over a grid of e.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.loglik: dict[int, list[float]] = {}
        self._round: int | None = None
        self._last: tuple[int, int] = (0, 0)
        self._rows: dict[int, Any] = {}
        self._hands: dict[int, Any] = {}
        self._plays: tuple[Any, ...] = ()
        self._seat = 0

    def randomness(self, seat: int, default: float = 0.5) -> float:
        """The posterior mean of `seat`'s randomness (uniform prior over GRID: 0.5 before data)."""
        ll = self.loglik.get(seat)
        if not ll:
            return default
        top = max(ll)
        weights = [math.exp(x - top) for x in ll]
        return sum(w * e for w, e in zip(weights, GRID)) / sum(weights)

    def observe(self, view: View) -> None:
        if view.phase is Phase.DRAFT:
            return
        moment = (view.round, view.turn)
        if moment < self._last:  # a new game: what was learned was about other opponents
            self.reset()
        if view.round != self._round:
            self._finish_round()
            self._round = view.round
            self._rows, self._hands, self._plays = {}, {}, ()
        self._last = moment
        self._seat = view.seat
        if view.phase is Phase.PLAY:
            self._rows.setdefault(view.turn, view.rows)
            if view.hands is not None:
                self._hands.setdefault(view.turn, view.hands)
        if len(view.plays) >= len(self._plays):
            self._plays = view.plays

    def _finish_round(self) -> None:
        plays, rows = self._plays, self._rows
        if not plays or not self._consistent():
            return
        me = self._seat
        by_seat = [{p.seat: p.card for p in turn} for turn in plays]
        for index, turn_plays in enumerate(by_seat):
            turn = index + 1
            table_rows = rows.get(turn)
            if table_rows is None:
                continue
            table = Table.from_rows(table_rows)
            size = HAND_SIZE - index
            for seat, card in turn_plays.items():
                if seat == me:
                    continue
                if turn in self._hands:
                    hand = list(self._hands[turn][seat])
                else:
                    hand = [cards[seat] for cards in by_seat[index:] if seat in cards]
                if len(hand) < 2 or size < 2:
                    continue
                greedy = greedy_card(table, sorted(hand)) == card
                ll = self.loglik.setdefault(seat, [0.0] * len(GRID))
                for i, e in enumerate(GRID):
                    ll[i] += math.log(max(e / size + (1 - e) * greedy, 1e-9))

    def _consistent(self) -> bool:
        """Whether the logged rows follow from each other (they would not if games got mixed up)."""
        for index, turn_plays in enumerate(self._plays):
            now, after = self._rows.get(index + 1), self._rows.get(index + 2)
            if now is None or after is None:
                continue
            known = {c for row in now for c in row} | {p.card for p in turn_plays}
            if not {c for row in after for c in row} <= known:
                return False
        return True


class Stop:
    """When a search stops: after `cpu` seconds of this thread's CPU time or `wall` seconds of the
    clock (time.monotonic), whichever comes first."""

    __slots__ = ("cpu_end", "wall_end")

    def __init__(self, cpu: float, wall: float) -> None:
        self.cpu_end = time.thread_time() + cpu
        self.wall_end = time.monotonic() + wall

    def reached(self) -> bool:
        return time.monotonic() >= self.wall_end or (
            self.cpu_end != math.inf and time.thread_time() >= self.cpu_end
        )

    def left(self) -> float:
        """Seconds until the stop, on whichever clock comes first."""
        left = self.wall_end - time.monotonic()
        if self.cpu_end != math.inf:
            left = min(left, self.cpu_end - time.thread_time())
        return left

    def share(self, parts: int) -> Stop:
        """A stop after 1/parts of the time left."""
        return Stop(
            (self.cpu_end - time.thread_time()) / parts, (self.wall_end - time.monotonic()) / parts
        )


class MonteCarloSearch(Bot):
    """Determinized Monte Carlo search with successive halving; see the module text.

    - `seed`: seeds the bot's own random generators.
    - `budget`: seconds per decision (at most; less when the referee's deadline is nearer).
    - `rollouts`: if given, a fixed number of rollouts per decision instead of a time budget.
    - `opponent_randomness`: how often a simulated opponent plays a random card instead of the
      greedy one (1 models random players, 0 greedy ones); None learns it per opponent.
    - `own_randomness`: the same for the bot's own later turns in a rollout.
    - `relative`: weight of the opponents' mean penalty in the score (0: only its own penalty).
    - `win_weight`: what losing the game costs, in bull heads, when a rollout's round ends the game.
    - `margin`: seconds kept before the referee's deadline.
    - `clock`: "wall" counts the budget on the clock; "cpu" in CPU time of the bot's thread, so that
      its strength does not depend on how busy the machine is (benchmarks). The referee's deadline
      is always kept on the clock.
    - `max_deals`, `settle`: stop after this many deals, or once the leader is `settle` standard
      errors ahead of every other candidate left (None: spend the whole allowance).
    - `paced`: size blocks of deals to the time left (`Pace`) rather than doubling them.
    - `exact_cards`: with this many cards in hand or fewer, search whole orders of the hand (0:
      never; None: `EXACT_CARDS` at 3 players or more, never head to head).
    - `exact`: "deal" scores a first card by its best plan on each deal, "plan" by its best plan
      on average over the deals.
    - `use_bank`: plan the spending of a time bank when the referee gives one (else `budget`);
      `close_weight`: how much more a decision weighs then when the round may end the game.
    - `compiled`: card choices roll out on the compiled core (take5.core) rather than take5.batch;
      None: when the core is compiled.
    - `objective`: "points" scores a rollout by its points (`relative`, `win_weight`); "win" by
      its chance of winning the game from the totals it ends the round with
      (`take5.search_value.win_chance`).
    """

    name = "montecarlo-search"
    version = "1.0"
    author = "take5 arena"

    def __init__(
        self,
        seed: int = 0,
        budget: float = DEFAULT_BUDGET,
        *,
        rollouts: int | None = None,
        opponent_randomness: float | None = None,
        own_randomness: float = 0.0,
        relative: float = 0.5,
        win_weight: float = 0.0,
        margin: float = SAFETY_MARGIN,
        clock: str = "wall",
        max_deals: int = 3000,
        settle: float | None = 4.0,
        paced: bool = False,
        exact_cards: int | None = 0,
        exact: str = "deal",
        use_bank: bool = False,
        close_weight: float = 1.5,
        compiled: bool | None = None,
        objective: str = "points",
    ) -> None:
        self.seed = seed
        self.budget = budget
        self.rollouts = rollouts
        self.opponent_randomness = opponent_randomness
        self.own_randomness = own_randomness
        self.relative = relative
        self.win_weight = win_weight
        self.margin = margin
        if clock not in ("wall", "cpu"):
            raise ValueError(f"clock must be 'wall' or 'cpu', not {clock!r}")
        self.clock = clock
        self.max_deals = max_deals
        self.settle = settle
        self.paced = paced
        if exact not in ("deal", "plan"):
            raise ValueError(f"exact must be 'deal' or 'plan', not {exact!r}")
        self.exact_cards = exact_cards
        self.exact = exact
        if objective not in ("points", "win"):
            raise ValueError(f"objective must be 'points' or 'win', not {objective!r}")
        self.objective = objective
        self.use_bank = use_bank
        self.close_weight = close_weight
        self.compiled = core.COMPILED if compiled is None else compiled and core.COMPILED
        self._models: dict[str | None, OpponentModel] = {}
        self._rng = random.Random(seed)
        self._sim_rng = random.Random()
        self._np_rng = np.random.default_rng(seed)
        self.last_rollouts = 0
        """How many rollouts the last decision used (for benchmarks)."""
        self.last_planned = False
        """Whether the last card was chosen by the exact search of whole orders (`exact_cards`)."""
        self.last_randomness: tuple[float, ...] = ()
        """Per seat, the randomness the last search's rollouts gave each player (its own included):
        what the opponent model and `own_randomness` made of the table."""
        self.pace = Pace()
        self.plan_pace = Pace()
        """The exact plans play turn by turn (a policy call and a forced card each): their own."""

    # -- the three decisions -------------------------------------------------------------

    def pick_card(self, view: View) -> int:
        self.model.observe(view)
        hand = view.hand
        self.last_planned = False
        if len(hand) == 1:
            self.last_rollouts = 0
            return hand[0]
        stop = self._stop_time(view)
        if len(hand) <= self.exact_cards_at(view.settings.players):
            self.last_planned = True
            return self._plan(view, stop)
        me = view.seat
        eps = self._randomness(view)
        score = self._scorer(view)
        rng = self._np_rng

        table = Table.from_rows(view.rows)

        def simulate(cards: Sequence[int], deals: int) -> np.ndarray:
            """Every card in `cards` on the same `deals` deals and draws: (len(cards), deals)."""
            if self.compiled:  # one call of the compiled core per card, same deals and seed
                hands = Batch.determinize(view, deals, rng, keep_cards=False).hands
                hands = hands[:, :, : len(hand)]
                forced = np.zeros(hands.shape[:2], dtype=np.int8)
                seed = int(rng.integers(1 << 63))
                out = np.empty((len(cards), deals))
                for i, card in enumerate(cards):
                    forced[:, me] = card
                    out[i] = score(core.rollouts(table, hands, eps, seed, forced))
                return out
            batch = Batch.determinize(view, deals, rng, keep_cards=False).tile(len(cards))
            first = np.zeros((len(batch), view.settings.players), dtype=np.int16)
            first[:, me] = np.repeat(cards, deals)
            points = batch.play_round(EpsilonGreedy(eps, rng, period=deals), first=first)
            return score(points).reshape(len(cards), deals)

        fallback = greedy_card(table, hand)
        n = view.settings.players
        turns = len(hand) if self.paced else None
        return int(
            self._search(list(hand), simulate, stop, fallback=fallback, turns=turns, seats=n)
        )

    def choose_row(self, view: View) -> int:
        self.model.observe(view)
        stop = self._stop_time(view)
        me, n = view.seat, view.settings.players
        eps = self._randomness(view)
        score = self._scorer(view)
        rng = self._np_rng
        # The chooser's card is the lowest of the turn (docs/rules.md 4): every other revealed card
        # is placed after it, and all of them are known. The batch plays the turn, the row taken.
        revealed = revealed_cards(view)

        def simulate(rows: Sequence[int], deals: int) -> np.ndarray:
            batch = Batch.determinize(view, deals, rng, keep_cards=False).tile(len(rows))
            choice = np.zeros((len(batch), n), dtype=np.int16)
            choice[:, me] = np.repeat(rows, deals)
            points = batch.play_turn(revealed, rows=choice)
            points = points + batch.play_round(EpsilonGreedy(eps, rng, period=deals))
            return score(points).reshape(len(rows), deals)

        return int(
            self._search(
                list(range(len(view.rows))),
                simulate,
                stop,
                fallback=cheapest_row(Table.from_rows(view.rows)),
                max_deals=1 if not view.hand else self.max_deals,
                turns=len(view.hand) + 1 if self.paced else None,
                seats=n,
            )
        )

    def draft_card(self, view: View) -> int:
        pool = view.pool
        if len(pool) == 1:
            return pool[0]
        assert view.hands is not None
        stop = self._stop_time(view)
        me = view.seat
        eps = self._randomness(view)
        score = self._scorer(view)
        sim_rng = self._sim_rng
        order = draft_order(view)[1:]
        hands0 = [list(h) for h in view.hands]

        def simulate(cards: Sequence[int], deals: int) -> np.ndarray:
            """The rest of the draft at random, then the round (take5.sim: no batch for drafts)."""
            seeds = [self._rng.getrandbits(62) for _ in range(deals)]
            points = []
            for card in cards:
                for seed in seeds:
                    sim_rng.seed(seed)
                    hands = [h[:] for h in hands0]
                    hands[me].append(card)
                    table = draft_out([c for c in pool if c != card], hands, order, sim_rng)
                    points.append(play_out(table, hands, sim_rng, eps))
            return score(np.array(points)).reshape(len(cards), deals)

        fallback = min(pool, key=lambda c: (-BULL_HEADS[c], c))
        return int(self._search(list(pool), simulate, stop, fallback=fallback))

    def exact_cards_at(self, players: int) -> int:
        """With how many cards in hand or fewer whole plans are searched at a table of `players`."""
        if self.exact_cards is not None:
            return self.exact_cards
        return EXACT_CARDS if players > 2 else 0

    def _plan(self, view: View, stop: Stop) -> int:
        """The first card of the best order of the whole hand (see the module text, 1.).

        Blocks of deals, each played with every plan (every order of the hand) on the same deal and
        draws, until `stop` (or `rollouts` plans played), or until the best first card is 4
        standard errors ahead of every other on the per-deal values."""
        hand = list(view.hand)
        me = view.seat
        eps = self._randomness(view)
        score = self._scorer(view)
        rng = self._np_rng
        plans = np.array(list(itertools.permutations(hand)), dtype=np.int16)  # (P, h)
        count, size = plans.shape
        first = {card: np.flatnonzero(plans[:, 0] == card) for card in hand}
        values: dict[int, list[np.ndarray]] = {card: [] for card in hand}
        sums = np.zeros(count)
        deals = 0
        block = FIRST_BLOCK
        check = 32
        fixed = self.rollouts
        n = view.settings.players
        now = time.thread_time if self.clock == "cpu" else time.monotonic
        if fixed is None and stop.reached():
            self.last_rollouts = 0
            return greedy_card(Table.from_rows(view.rows), hand)
        while deals < self.max_deals:
            blk = block
            if fixed is not None:
                blk = min(blk, max(1, -(-(fixed - deals * count) // count)))
            else:
                fits = self.plan_pace.games_within(stop.left(), size, n) // count
                if fits < MIN_BLOCK and deals:
                    break
                blk = max(1, min(max(fits, MIN_BLOCK), MAX_BLOCK))
            started = now()
            batch = Batch.determinize(view, blk, rng, keep_cards=False).tile(count)
            policy = EpsilonGreedy(eps, rng, period=blk)
            mine = np.repeat(plans, blk, axis=0)  # (P * blk, h): plan p on deals p*blk ...
            points = np.zeros((len(batch), view.settings.players), dtype=np.int32)
            for turn in range(size):
                cards = np.array(policy(batch), dtype=np.int16)
                cards[:, me] = mine[:, turn]
                points += batch.play_turn(cards)
            if batch.active.any():  # an opponent holds more cards than we do: cannot be
                points += batch.play_round(policy)
            table = score(points).reshape(count, blk)
            sums += table.sum(1)
            for card, rows in first.items():
                values[card].append(table[rows].min(0))
            if fixed is None:
                self.plan_pace.learn(blk * count, size, n, now() - started)
            deals += blk
            block = min(block * 2, LAST_BLOCK)
            if self.exact == "deal" and self.settle is not None and deals >= check:
                while check <= deals:
                    check *= 2
                if _settled(hand, values, self.settle):
                    break
            if fixed is not None:
                if deals * count >= fixed:
                    break
            elif stop.reached():
                break
        self.last_rollouts = deals * count
        if self.exact == "plan":
            best = int(np.argmin(sums))
            return int(plans[best, 0])
        return min(hand, key=lambda c: _total(values[c]))

    # -- the search ---------------------------------------------------------------------

    def _search(
        self,
        candidates: Sequence[Any],
        simulate: Callable[[Sequence[Any], int], np.ndarray],
        stop: Stop,
        *,
        fallback: Any,
        max_deals: int | None = None,
        turns: int | None = None,
        seats: int = 0,
    ) -> Any:
        """Successive halving over `candidates` (lower score is better), on shared deals.

        `simulate(alive, deals)` scores every candidate still in play on the same `deals` new
        deals: an array (len(alive), deals). The budget (the time until `stop`, or `self.rollouts`
        rollouts) is split evenly between ceil(log2 k) stages; after each stage the worse half of
        the candidates is dropped. Every candidate still in play has been scored on the same deals,
        so they compare fairly (paired). The search ends early when the leader is clearly better
        than every other candidate left (checked after 32, 64, 128, ... deals) or after `max_deals`
        deals. Returns `fallback` if there was no time for a single deal. Paced, a rollout of
        `turns` turns at a table of `seats` is sized by `Pace`; None (drafts, or not paced)
        doubles blocks.
        """
        k = len(candidates)
        if k == 1:
            return candidates[0]
        max_deals = self.max_deals if max_deals is None else max_deals
        fixed = self.rollouts
        if fixed is None and stop.reached():
            self.last_rollouts = 0
            return fallback
        scores: dict[Any, list[np.ndarray]] = {c: [] for c in candidates}
        alive = list(candidates)
        deals = 0
        rollouts = 0
        check = 32
        block = FIRST_BLOCK
        per_rollout = 0.0  # seconds on the budget's clock, measured on the last block
        now = time.thread_time if self.clock == "cpu" else time.monotonic
        stages = max(1, math.ceil(math.log2(k)))
        if fixed is None and turns is not None:  # no stage shorter than a few batches' overhead
            overhead = STAGE_OVERHEADS * self.pace.cost(0, turns, seats)
            stages = max(1, min(stages, int(stop.left() / overhead)))
        for stage in range(stages):
            remaining = stages - stage
            if fixed is None:
                stage_end = stop.share(remaining)
                stage_rollouts = 0
            else:
                stage_end = stop
                stage_rollouts = max(1, (fixed - rollouts) // remaining)
            done = 0
            settled = False
            while deals < max_deals:
                size = min(block, max_deals - deals)
                if fixed is not None:
                    size = min(size, max(1, -(-(stage_rollouts - done) // len(alive))))
                elif turns is not None:  # a block that fills what is left of the stage
                    fits = self.pace.games_within(stage_end.left(), turns, seats) // len(alive)
                    if fits < MIN_BLOCK and done:
                        break
                    size = max(1, min(max(fits, MIN_BLOCK), MAX_BLOCK, max_deals - deals))
                elif per_rollout:  # no block much past the stage's end
                    fits = int(stage_end.left() / (per_rollout * len(alive)))
                    size = max(1, min(size, fits))
                started = now()
                for c, row in zip(alive, simulate(alive, size)):
                    scores[c].append(row)
                spent = now() - started
                per_rollout = spent / (size * len(alive))
                if turns is not None:
                    self.pace.learn(size * len(alive), turns, seats, spent)
                deals += size
                done += size * len(alive)
                block = min(block * 2, LAST_BLOCK)
                if self.settle is not None and deals >= check:
                    while check <= deals:
                        check *= 2
                    if _settled(alive, scores, self.settle):
                        settled = True
                        break
                if fixed is None:
                    if stage_end.reached():
                        break
                elif done >= stage_rollouts:
                    break
            rollouts += done
            if settled or deals >= max_deals or (fixed is None and stop.reached()):
                break
            alive.sort(key=lambda c: _total(scores[c]))
            # Halving; paced, a short budget's fewer stages cut deeper, down to one candidate
            # after the last (k ** (stages left / stages before)).
            keep = (len(alive) + 1) // 2
            if turns is not None:
                keep = math.ceil(len(alive) ** ((remaining - 1) / remaining) - 1e-9)
            alive = alive[: max(1, keep)]
            if len(alive) == 1:
                break
        self.last_rollouts = rollouts
        return min(alive, key=lambda c: _total(scores[c]))

    def _scorer(self, view: View) -> Callable[[np.ndarray], np.ndarray]:
        """How rollouts' points (G, n: each seat's bull heads from now to the end of the round)
        score, one number per rollout.

        Its own points minus `relative` times the opponents' mean; and if the round ends the game
        (a total reaches the threshold), `win_weight` more unless it wins (shared: in part).
        """
        me, n = view.seat, view.settings.players
        relative = self.relative / (n - 1)
        weight = self.win_weight
        base = np.array([s + r for s, r in zip(view.scores, view.round_points)])
        threshold = view.settings.threshold
        if self.objective == "win":
            mean, rule = round_mean(view), view.settings.end_rule
            return lambda pts: -win_chance(base + pts, me, threshold, rule, mean)
        if view.settings.end_rule is EndRule.ABOVE:
            threshold += 1

        def score(pts: np.ndarray) -> np.ndarray:
            own = pts[:, me]
            value = own - relative * (pts.sum(1) - own)
            if weight:
                totals = base + pts
                low = totals.min(1)
                share = np.where(totals[:, me] == low, 1.0 / (totals == low[:, None]).sum(1), 0.0)
                value = value + np.where(totals.max(1) >= threshold, weight * (1.0 - share), 0.0)
            return np.asarray(value)

        return score

    def _randomness(self, view: View) -> list[float]:
        """Per seat, how often the rollouts play a random card instead of the greedy one."""
        n = view.settings.players
        fixed = self.opponent_randomness
        eps = [fixed if fixed is not None else self.model.randomness(seat) for seat in range(n)]
        eps[view.seat] = self.own_randomness
        self.last_randomness = tuple(eps)
        return eps

    def _stop_time(self, view: View) -> Stop:
        """When to stop thinking: after this decision's share (`allowance`), or a margin before
        the referee's deadline."""
        left = self.time_left() - self.margin  # math.inf outside a referee call
        budget = self.allowance(view)
        context = self.context
        if context is not None and context.clock is ClockKind.CPU:
            # The referee counts this process's CPU time: keep its limit on that clock, its wall
            # cap (already in time_left) on the clock.
            wall_left = context.deadline - time.monotonic() - self.margin
            return Stop(min(budget, left), wall_left)
        if self.clock == "cpu":
            return Stop(budget, left)
        return Stop(math.inf, min(budget, left))

    def allowance(self, view: View) -> float:
        """Seconds this decision may think: `budget` without a bank; with one, this decision's
        weight's share of the bank and of the increments still to come (see the module text)."""
        context = self.context
        spec = context.budget if context is not None else None
        if not self.use_bank or spec is None or spec.bank is None:
            return self.budget
        if spec.cap is not None and spec.cap <= spec.increment:
            return self.budget  # a fixed limit per decision: nothing to save
        now = self.weight_of(view, len(view.hand))
        if now <= 0:
            return 0.0
        later_now, later_rounds, decisions = self._weights_left(view)
        total = now + later_now + later_rounds
        # What the game still holds for us: the bank, plus one increment for each decision to come.
        pool = max(0.0, spec.bank - self.margin) + spec.increment * decisions
        share = pool * now / total
        limit = spec.bank - self.margin
        if spec.cap is not None:
            limit = min(limit, spec.cap - self.margin)
        return max(0.0, min(share, limit))

    def weight_of(self, view: View, cards: int) -> float:
        """How much a card decision with `cards` in hand is worth thinking about, relative to
        others: nothing for a last card, from 1 (two cards) up to 2 (a full hand), times
        `close_weight` when the round may end the game. A row choice weighs 1."""
        if view.phase is Phase.CHOOSE_ROW:
            return 1.0
        if cards <= 1:
            return 0.0
        weight = 1.0 + (cards - 2) / max(1, HAND_SIZE - 2)
        if self._closing(view):
            weight *= self.close_weight
        return weight

    def _closing(self, view: View) -> bool:
        """Whether someone is within reach of the threshold this round (a round takes about 20)."""
        top = max(s + r for s, r in zip(view.scores, view.round_points))
        return top + 20 >= view.settings.threshold

    def _weights_left(self, view: View) -> tuple[float, float, int]:
        """The weights of this round's later decisions, of the later rounds' decisions (as many
        rounds as the scores suggest) and how many decisions are left after this one."""
        cards = len(view.hand)
        if view.phase is Phase.CHOOSE_ROW:
            cards += 1  # the card of this turn is still counted in the hand
        this_round = sum(self.weight_of(view, c) for c in range(2, cards))
        rounds = self._rounds_left(view)
        full = sum(1.0 + (c - 2) / max(1, HAND_SIZE - 2) for c in range(2, HAND_SIZE + 1))
        if self._closing(view):
            full *= self.close_weight
        return this_round, rounds * full, (cards - 1) + rounds * HAND_SIZE

    def _rounds_left(self, view: View) -> int:
        """Rounds after this one, from how fast the leading score has grown (at most 8). It errs
        on the long side (one round more than the leader's pace says): a bank left over at the end
        costs a little strength, a bank spent before the end leaves whole rounds without thought."""
        totals = [s + r for s, r in zip(view.scores, view.round_points)]
        top = max(totals)
        played = (view.round - 1) + (HAND_SIZE - len(view.hand)) / HAND_SIZE
        rate = max(top / played, 8.0) if played >= 1 else 16.0
        need = view.settings.threshold - top
        return max(0, min(8, math.ceil(need / rate)))

    @property
    def model(self) -> OpponentModel:
        """The opponent model of the game being played (games told apart by the referee's id)."""
        game_id = self.context.game_id if self.context is not None else None
        model = self._models.get(game_id)
        if model is None:
            if len(self._models) >= 16:  # games that ended without a word
                del self._models[next(iter(self._models))]
            model = self._models[game_id] = OpponentModel()
        return model

    def game_over(self, result: Any) -> None:
        self._models.pop(getattr(result, "game_id", None), None)
        self._models.pop(None, None)


def _total(rows: list[np.ndarray]) -> float:
    return float(sum(row.sum() for row in rows))


def _settled(alive: Sequence[Any], scores: dict[Any, list[np.ndarray]], z: float = 4.0) -> bool:
    """Whether the best candidate is better than each other one by `z` standard errors (paired)."""
    leader = min(alive, key=lambda c: _total(scores[c]))
    best = np.concatenate(scores[leader])
    n = len(best)
    for c in alive:
        if c == leader:
            continue
        diffs = np.concatenate(scores[c]) - best
        mean = diffs.mean()
        var = diffs.var(ddof=1)
        if var == 0.0:
            if mean == 0.0 and n < 128:  # the same so far: not yet told apart
                return False
            continue
        if mean < z * math.sqrt(var / n):
            return False
    return True


__all__ = [
    "CALL_COST",
    "DEFAULT_BUDGET",
    "EXACT_CARDS",
    "FIRST_BLOCK",
    "GAME_COST",
    "GRID",
    "LAST_BLOCK",
    "MAX_BLOCK",
    "MIN_BLOCK",
    "SAFETY_MARGIN",
    "STAGE_OVERHEADS",
    "TURN_COST",
    "MonteCarloSearch",
    "OpponentModel",
    "Pace",
    "Stop",
]
