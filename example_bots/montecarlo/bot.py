"""montecarlo: determinized Monte Carlo rollouts of the rest of the round, within the deadline.

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

import math
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from take5 import BULL_HEADS, HAND_SIZE, Bot, EndRule, Phase, View, core, run
from take5.batch import Batch, EpsilonGreedy, revealed_cards
from take5.sim import Table, cheapest_row, draft_order, draft_out, greedy_card, play_out

DEFAULT_BUDGET = 0.09
"""Seconds per decision by default: with the answer's own overhead, under 100 ms."""
SAFETY_MARGIN = 0.015
"""Seconds kept in hand before the referee's deadline (answering and the network take some)."""
GRID = tuple(i / 10 for i in range(11))
"""The values of an opponent's randomness the estimate weighs."""
FIRST_BLOCK, LAST_BLOCK = 16, 256
"""Deals per batch: the first block of a search, doubling up to the last size (the clock is
checked after each block, so small blocks first keep a short budget short)."""


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
        self._plays: tuple = ()
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


class MonteCarloBot(Bot):
    """Determinized Monte Carlo search with successive halving; see the module text.

    - `seed`: seeds the bot's own random generator.
    - `budget`: seconds per decision (at most; less when the referee's deadline is nearer).
    - `rollouts`: if given, a fixed number of rollouts per decision instead of a time budget
      (deterministic: for tests and experiments).
    - `opponent_randomness`: how often a simulated opponent plays a random card instead of the
      greedy one (1 models random players, 0 greedy ones); None learns it per opponent (default).
    - `own_randomness`: the same for the bot's own later turns in a rollout.
    - `relative`: weight of the opponents' mean penalty in the score (0: only its own penalty).
    - `win_weight`: what losing the game costs, in bull heads, when a rollout's round ends the game.
    - `compiled`: card choices roll out on the compiled core (take5.core) rather than
      take5.batch; None (default): when the core is compiled.
    - `clock`: "wall" counts the budget on the clock; "cpu" in CPU time of the bot's thread, so that
      its strength does not depend on how busy the machine is (benchmarks). The referee's deadline
      is always kept on the clock.
    """

    name = "montecarlo"
    version = "1.1"
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
        compiled: bool | None = None,
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
        self.compiled = core.COMPILED if compiled is None else compiled and core.COMPILED
        self._models: dict[str | None, OpponentModel] = {}
        self._rng = random.Random(seed)
        self._sim_rng = random.Random()
        self._np_rng = np.random.default_rng(seed)
        self.last_rollouts = 0
        """How many rollouts the last decision used (for benchmarks)."""

    # -- the three decisions -------------------------------------------------------------

    def pick_card(self, view: View) -> int:
        self.model.observe(view)
        hand = view.hand
        if len(hand) == 1:
            self.last_rollouts = 0
            return hand[0]
        stop = self._stop_time()
        me = view.seat
        eps = self._randomness(view)
        score = self._scorer(view)
        rng = self._np_rng

        if self.compiled:
            table = Table.from_rows(view.rows)

            def simulate(cards: Sequence[int], deals: int) -> np.ndarray:
                """The compiled core: one call per card on the same deals and the same seed."""
                hands = Batch.determinize(view, deals, rng, keep_cards=False).hands
                hands = hands[:, :, : len(hand)]
                first = np.zeros(hands.shape[:2], dtype=np.int8)
                seed = int(rng.integers(1 << 63))
                out = np.empty((len(cards), deals))
                for i, card in enumerate(cards):
                    first[:, me] = card
                    out[i] = score(core.rollouts(table, hands, eps, seed, first))
                return out

            fallback = greedy_card(table, hand)
            return self._search(list(hand), simulate, stop, fallback=fallback)

        def simulate(cards: Sequence[int], deals: int) -> np.ndarray:
            """Every card in `cards` on the same `deals` deals and draws: (len(cards), deals)."""
            batch = Batch.determinize(view, deals, rng, keep_cards=False).tile(len(cards))
            first = np.zeros((len(batch), view.settings.players), dtype=np.int16)
            first[:, me] = np.repeat(cards, deals)
            points = batch.play_round(EpsilonGreedy(eps, rng, period=deals), first=first)
            return score(points).reshape(len(cards), deals)

        fallback = greedy_card(Table.from_rows(view.rows), hand)
        return self._search(list(hand), simulate, stop, fallback=fallback)

    def choose_row(self, view: View) -> int:
        self.model.observe(view)
        stop = self._stop_time()
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

        return self._search(
            list(range(len(view.rows))),
            simulate,
            stop,
            fallback=cheapest_row(Table.from_rows(view.rows)),
            max_deals=1 if not view.hand else self.max_deals,
        )

    def draft_card(self, view: View) -> int:
        pool = view.pool
        if len(pool) == 1:
            return pool[0]
        assert view.hands is not None
        stop = self._stop_time()
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
        return self._search(list(pool), simulate, stop, fallback=fallback)

    # -- the search ---------------------------------------------------------------------

    def _search(
        self,
        candidates: Sequence[Any],
        simulate: Callable[[Sequence[Any], int], np.ndarray],
        stop: Stop,
        *,
        fallback: Any,
        max_deals: int | None = None,
    ) -> Any:
        """Successive halving over `candidates` (lower score is better), on shared deals.

        `simulate(alive, deals)` scores every candidate still in play on the same `deals` new
        deals: an array (len(alive), deals). The budget (the time until `stop`, or `self.rollouts`
        rollouts) is split evenly between ceil(log2 k) stages; after each stage the worse half of
        the candidates is dropped. Every candidate still in play has been scored on the same deals,
        so they compare fairly (paired). The search ends early when the leader is clearly better
        than every other candidate left (checked after 32, 64, 128, ... deals) or after `max_deals`
        deals. Returns `fallback` if there was no time for a single deal.
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
                elif per_rollout:  # no block much past the stage's end
                    fits = int(stage_end.left() / (per_rollout * len(alive)))
                    size = max(1, min(size, fits))
                started = now()
                for c, row in zip(alive, simulate(alive, size)):
                    scores[c].append(row)
                per_rollout = (now() - started) / (size * len(alive))
                deals += size
                done += size * len(alive)
                block = min(block * 2, LAST_BLOCK)
                if deals >= check:
                    while check <= deals:
                        check *= 2
                    if _settled(alive, scores):
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
            alive = alive[: (len(alive) + 1) // 2]
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
            return value

        return score

    def _randomness(self, view: View) -> list[float]:
        """Per seat, how often the rollouts play a random card instead of the greedy one."""
        n = view.settings.players
        fixed = self.opponent_randomness
        eps = [fixed if fixed is not None else self.model.randomness(seat) for seat in range(n)]
        eps[view.seat] = self.own_randomness
        return eps

    def _stop_time(self) -> Stop:
        """When to stop thinking: after the budget, or a margin before the referee's deadline."""
        left = self.time_left() - self.margin  # math.inf outside a referee call
        if self.clock == "cpu":
            return Stop(self.budget, left)
        return Stop(math.inf, min(self.budget, left))

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


if __name__ == "__main__":
    run(MonteCarloBot())
