"""Many games at once: the rules of 6 nimmt! over numpy arrays, for search and for learning.

A search bot scores its candidates on thousands of imagined rounds, and a learning bot trains on
millions of turns; played one at a time in Python (`take5.Game`, `take5.sim`) each turn costs
microseconds of interpreter work. A `Batch` holds G independent games of one table size (G deals of
one real position, or G real games) in arrays and advances all of them with a few dozen numpy
operations per turn::

    import numpy as np
    from take5.batch import Batch, EpsilonGreedy

    rng = np.random.default_rng(1)
    batch = Batch.determinize(view, 512, rng)           # 512 deals of the cards not seen
    points = batch.play_round(EpsilonGreedy(0.5, rng))  # the rest of the round in all: (512, n)

    games = Batch.deal(Settings(players=4), seeds=range(1000))  # as Game(settings, seed) deals
    games.play_game(EpsilonGreedy(1.0, rng))            # random cards to the end of every game
    games.scores                                        # (1000, 4) final scores

The results are exactly the engine's (tests/test_batch.py plays every turn of thousands of games
both ways): `Batch.deal` deals what `Game(settings, seed, rotation=...)` deals (the same SplitMix64
stream, round after round), `play_turn` places the cards as `Game.play` does, and rounds and games
end as in `Game`. A low card takes the cheapest row (the referee's default move) unless `play_turn`
is told which row that seat takes; only the lowest card of a turn can be lower than every row.

What a batch holds, for G games of n seats (read-only views of the batch's own arrays; `ends`,
`lens` and `heads` are computed from them): change a batch only by playing it.

- `rows` (G, 4, 5) the cards of each row, oldest first, valid below `lens`; `ends`, `lens`, `heads`
  (G, 4) each row's last card, number of cards and bull heads;
- `hands` (G, n, 10) each hand in ascending order in its first `held` slots (then `NO_CARD`), and
  `held` (G,) how many cards each hand holds (every seat of a game holds as many);
- `points` (G, n) bull heads taken this round, `scores` (G, n) the totals of the earlier rounds,
  `round` (G,), `over` (G,) whether the game has ended;
- `out` (G, 105) the cards that left the hands or started the rows this round (on the rows, taken,
  or revealed; index = card): what every seat has seen, for encoders (take5.encode).

Masks: a game whose round is finished (`held == 0`) or which is over takes no part in `play_turn`
and `play_round` (`active` says which games still play); `end_round` scores and deals. Policies are
callables from a batch to a card per game and seat: `greedy`, `EpsilonGreedy`, or your own (a
learned model, say).

Why numpy: numpy has binary wheels for every platform the SDK installs on, so this module runs
anywhere, with any policy (a learned model, say) and every intermediate state in arrays. Every numpy
call costs about a microsecond of overhead whatever its size, so a batch of one game is much slower
than `take5.sim`; the arrays pay off from some dozens of games on (bench/sim.py). Rollouts with the
greedy-with-noise policy alone run faster still on the compiled core, `take5.core`. The
internal arrays keep the game axis last, so that each step works on long contiguous rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

try:
    import numpy as np
except ModuleNotFoundError as error:  # the [sim] extra
    from .extras import missing_extra

    raise missing_extra("sim", "take5.batch", error) from None
from numpy.typing import ArrayLike, NDArray

from ._batch_kernel import (
    _BELOW_ONE,
    _CARDS,
    _FULL,
    _HEADS16,
    _MASK,
    _ROW_INDEX32,
    _Bool,
    _cards_at,
    _filled,
    _find_slots,
    _greedy_slots,
    _Int8,
    _Int16,
    _Int32,
    _part,
    _place,
    _read_only,
    _row_state,
    _shuffle,
    _take_slots,
    _transposed,
    _whole,
)
from ._batch_kernel import NO_CARD as _NO_CARD
from .game import Phase, Settings, View
from .rules import (
    BULL_HEADS,
    HAND_SIZE,
    MAX_ROUNDS,
    MAX_SEED,
    MIN_SEED,
    ROW_COUNT,
    EndRule,
    Variant,
)

__all__ = [
    "NO_CARD",
    "Batch",
    "EpsilonGreedy",
    "Policy",
    "greedy",
    "greedy_cards",
    "revealed_cards",
]

NO_CARD = _NO_CARD
"""What fills the hand slots past `held`: higher than every card."""


class Policy(Protocol):
    """What plays a turn: for every game and seat of `batch`, a card of that seat's hand.

    The answer is an int array of shape (games, players); entries of games that take no part in the
    turn (`not batch.active`) are ignored.
    """

    def __call__(self, batch: Batch) -> NDArray[np.integer[Any]]: ...


class Batch:
    """G independent games of one table size, advanced together; see the module text.

    Make one with `deal` (new games, as the engine deals them) or `determinize` (deals of what one
    seat has not seen, from its view).
    """

    def __init__(self, settings: Settings, games: int, *, keep_cards: bool = True) -> None:
        """G empty games (no cards anywhere): the constructors fill them. See `deal` for
        `keep_cards`."""
        n, g = settings.players, games
        self.settings = settings
        self.keep_cards = keep_cards
        # The game axis is last everywhere (see the module text); the public names are views.
        # A row is one int32: (end * 4 + row index) << 16 | (bull heads * 8 + number of cards).
        # The highest below (card * 4) << 16 is the row the card goes to, its low 16 bits say
        # what taking it costs, and the lowest low 16 bits are the cheapest row.
        self._state = np.zeros((ROW_COUNT, g), dtype=np.int32)
        self._rows = np.zeros((_FULL, ROW_COUNT, g if keep_cards else 0), dtype=np.int16)
        self._hands = np.full((HAND_SIZE, n, g), NO_CARD, dtype=np.int8)  # cards fit an int8
        self._held = np.zeros(g, dtype=np.int8)
        self._points = np.zeros((n, g), dtype=np.int32)
        self._scores = np.zeros((n, g), dtype=np.int32)
        self._round = np.zeros(g, dtype=np.int32)
        self._over = np.zeros(g, dtype=np.bool_)
        self._out = np.zeros((_CARDS, g if keep_cards else 0), dtype=np.bool_)
        self._seeds = np.zeros(g, dtype=np.uint64)
        self._draws = np.zeros(g, dtype=np.int64)
        self._rotation = np.zeros(g, dtype=np.int32)
        self._picks = np.zeros((0, g), dtype=np.int16)
        self._played = np.zeros((n, g), dtype=np.int8)

    _ARRAYS = (
        "_state", "_rows", "_hands", "_held", "_points", "_scores", "_round",
        "_over", "_out", "_seeds", "_draws", "_rotation", "_picks", "_played",
    )  # fmt: skip

    # -- constructors --------------------------------------------------------------------------

    @classmethod
    def deal(
        cls,
        settings: Settings,
        seeds: Iterable[int] | NDArray[np.integer[Any]],
        rotation: ArrayLike = 0,
        *,
        rng: np.random.Generator | None = None,
        keep_cards: bool = True,
    ) -> Batch:
        """One game per seed, dealt as `Game(settings, seed, rotation=rotation)` deals it.

        In the professional variant a round starts with the open draft; here it is played with
        uniformly random picks from `rng` (required then), recorded in `picks`.

        `keep_cards=False` skips keeping the cards of each row (`rows`) and the cards seen this
        round (`out`), which only encoders need: rollouts that count points run faster without.
        """
        # Through Python ints: numpy turns a list mixing -5 and 2**64 - 1 into floats.
        values = seeds.reshape(-1).tolist() if isinstance(seeds, np.ndarray) else list(seeds)
        if any(not (_whole(s) and MIN_SEED <= s <= MAX_SEED) for s in values):
            raise ValueError(f"seeds must be whole numbers from {MIN_SEED} to {MAX_SEED}")
        n = settings.players
        batch = cls(settings, len(values), keep_cards=keep_cards)
        rot = np.broadcast_to(np.asarray(rotation), (len(values),))
        if not np.issubdtype(rot.dtype, np.integer) or ((rot < 0) | (rot >= n)).any():
            raise ValueError(f"rotations must be whole numbers from 0 to {n - 1}")
        batch._rotation[:] = rot
        batch._seeds[:] = np.array([s & _MASK for s in values], dtype=np.uint64)
        batch._start_rounds(np.arange(len(values)), rng)
        return batch

    @classmethod
    def determinize(
        cls, view: View, count: int, rng: np.random.Generator, *, keep_cards: bool = True
    ) -> Batch:
        """`count` games at the position of `view`, the hands its seat cannot see dealt at random.

        The seat's own hand is its real hand; in the professional variant every hand is public and
        real. Otherwise each game gives the other seats a uniformly random share of `view.unseen()`,
        as many cards as each holds, as `take5.sim.sample_hands` does. Later rounds (`play_game`)
        are dealt from random seeds drawn from `rng`.

        A view of a play turn gives the position before the seats play. A view of a row choice
        (CHOOSE_ROW) gives the position before this turn's cards were placed, each seat's revealed
        card back in its hand: play them with `play_turn(revealed_cards(view), rows=...)`, naming
        the row the chooser takes. Draft views are refused (ValueError). `keep_cards` as in `deal`.
        """
        if view.phase is Phase.DRAFT or view.phase is Phase.OVER:
            raise ValueError(f"cannot determinize a view of phase {view.phase.value}")
        if count < 1:
            raise ValueError("count must be at least 1")
        settings = view.settings
        n, g, seat = settings.players, int(count), view.seat
        size = len(view.hand)
        batch = cls(settings, g, keep_cards=keep_cards)
        hands = np.full((g, n, HAND_SIZE), NO_CARD, dtype=np.int8)
        if view.hands is not None:
            for other, hand in enumerate(view.hands):
                hands[:, other, : len(hand)] = view.hand if other == seat else hand
        else:
            unseen = np.array(view.unseen(), dtype=np.int16)
            need = size * (n - 1)
            if need > len(unseen):
                raise ValueError(f"only {len(unseen)} unseen cards for {n - 1} hands of {size}")
            if need:
                dealt = rng.permuted(np.broadcast_to(unseen, (g, len(unseen))), axis=1)
                others = dealt[:, :need].reshape(g, n - 1, size)
                hands[:, :seat, :size] = others[:, :seat]
                hands[:, seat + 1 :, :size] = others[:, seat:]
            hands[:, seat, :size] = view.hand
        held = size
        if view.phase is Phase.CHOOSE_ROW:
            for play in view.revealed:
                hands[:, play.seat, size] = play.card
            held += 1
        batch._hands[:] = np.sort(hands, axis=2).transpose(2, 1, 0)
        batch._held[:] = held
        for r, row in enumerate(view.rows):
            batch._state[r] = _row_state(row[-1], r, sum(BULL_HEADS[c] for c in row), len(row))
            if keep_cards:
                batch._rows[: len(row), r] = np.array(row, dtype=np.int16)[:, None]
        if keep_cards:
            gone = [c for row in view.rows for c in row]
            gone += [c for take in view.takes for c in take.cards]
            gone += [p.card for turn in view.plays for p in turn]
            batch._out[gone] = True
        batch._points[:] = np.array(view.round_points, dtype=np.int32)[:, None]
        batch._scores[:] = np.array(view.scores, dtype=np.int32)[:, None]
        batch._round[:] = view.round
        batch._seeds[:] = rng.integers(0, 1 << 63, size=g, dtype=np.uint64)
        return batch

    # -- what it holds -------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._held)

    @property
    def players(self) -> int:
        return self.settings.players

    @property
    def draws(self) -> NDArray[np.int64]:
        """(G,): how many values each deal's generator has drawn so far (read-only). A shuffle draws
        one value per card dealt, and one more for each draw the generator rejects (about once in
        1e16 shuffles): the next round's shuffle goes on from there, as the referee's does."""
        return _read_only(self._draws)

    @property
    def rows(self) -> _Int16:
        """(G, 4, 5): the cards of each row, oldest first, valid below `lens` (read-only)."""
        return _read_only(self._cards_kept("rows").transpose(2, 1, 0))

    @property
    def ends(self) -> _Int16:
        """(G, 4): each row's last card (a new array)."""
        ends: _Int16 = (self._state >> 18).astype(np.int16)
        return _transposed(ends)

    @property
    def lens(self) -> _Int16:
        """(G, 4): how many cards each row holds (a new array)."""
        lens: _Int16 = (self._state & 7).astype(np.int16)
        return _transposed(lens)

    @property
    def heads(self) -> _Int16:
        """(G, 4): each row's bull heads (a new array)."""
        heads: _Int16 = ((self._state & 0xFFFF) >> 3).astype(np.int16)
        return _transposed(heads)

    @property
    def hands(self) -> _Int8:
        """(G, n, 10): each seat's hand, ascending, then NO_CARD (read-only)."""
        return _read_only(self._hands.transpose(2, 1, 0))

    @property
    def held(self) -> _Int8:
        """(G,): the cards each hand holds (read-only)."""
        return _read_only(self._held)

    @property
    def points(self) -> _Int32:
        """(G, n): bull heads taken this round (read-only)."""
        return _read_only(self._points.T)

    @property
    def scores(self) -> _Int32:
        """(G, n): the totals of the rounds before this one (the final scores once over;
        read-only)."""
        return _read_only(self._scores.T)

    @property
    def totals(self) -> _Int32:
        """(G, n): each seat's score with this round's points so far (a new array)."""
        totals: _Int32 = self._scores + self._points
        return _transposed(totals)

    @property
    def round(self) -> _Int32:
        """(G,): the round being played (1 for the first; read-only)."""
        return _read_only(self._round)

    @property
    def over(self) -> _Bool:
        """(G,): whether the game has ended (read-only)."""
        return _read_only(self._over)

    @property
    def out(self) -> _Bool:
        """(G, 105): cards on the rows, taken or revealed this round (index = card; read-only)."""
        return _read_only(self._cards_kept("out").T)

    @property
    def picks(self) -> _Int16:
        """(G, 10n): the latest draft's picks in draft order (professional variant): pick t went
        to seat (first + t) % n, where first = (round - 1 + rotation) % n; read-only)."""
        return _read_only(self._picks.T)

    def _cards_kept(self, name: str) -> NDArray[Any]:
        if not self.keep_cards:
            raise ValueError(f"this batch keeps no {name} (made with keep_cards=False)")
        array: NDArray[Any] = getattr(self, f"_{name}")
        return array

    @property
    def played(self) -> _Int8:
        """(G, n): the cards revealed in the latest turn (0 in games that took no part in it;
        read-only)."""
        return _read_only(_transposed(self._played))

    @property
    def active(self) -> _Bool:
        """(G,): the games that still play this round (cards in hand, game not over)."""
        return (self._held > 0) & ~self._over

    # -- copies ----------------------------------------------------------------------------------

    def _with(self, make: Any) -> Batch:
        new = Batch.__new__(Batch)
        new.settings = self.settings
        new.keep_cards = self.keep_cards
        for name in self._ARRAYS:
            setattr(new, name, make(getattr(self, name)))
        return new

    def copy(self) -> Batch:
        """An independent copy (to play several rollouts from one position, say)."""
        return self._with(lambda a: a.copy())

    def select(self, index: ArrayLike) -> Batch:
        """A new batch of the games at `index` (indices or a boolean mask), copied."""
        where = np.asarray(index)
        if where.dtype == np.bool_:
            where = np.flatnonzero(where)
        # A batch made with keep_cards=False keeps rows and out with no game axis: nothing to take.
        return self._with(lambda a: a if a.shape[-1] == 0 else np.take(a, where, axis=-1))

    def tile(self, copies: int) -> Batch:
        """The games repeated `copies` times in blocks: game i of block k is game k * G + i.

        The layout a search wants: one block per candidate, every candidate on the same deals
        (with `EpsilonGreedy(..., period=G)`, on the same random draws too).
        """
        return self._with(lambda a: np.tile(a, (1,) * (a.ndim - 1) + (copies,)))

    def replace(self, index: ArrayLike, other: Batch) -> None:
        """Put the games of `other` in place of the games at `index` (an environment's new games
        in place of finished ones); `other` has the same settings and one game per index."""
        where = np.asarray(index)
        if where.dtype == np.bool_:
            where = np.flatnonzero(where)
        if other.settings != self.settings or other.keep_cards != self.keep_cards:
            raise ValueError("the games to put in must have the same settings and keep_cards")
        if len(other) != len(where):
            raise ValueError(f"{len(other)} games for {len(where)} places")
        if len(other._picks) != len(self._picks):  # a batch that has not drafted yet
            picks = np.zeros((max(len(other._picks), len(self._picks)), len(self)), np.int16)
            picks[: len(self._picks)] = self._picks
            self._picks = picks
        for name in self._ARRAYS:
            theirs = getattr(other, name)
            if name == "_picks" and len(theirs) != len(self._picks):
                theirs = np.zeros((len(self._picks), len(other)), np.int16)
            getattr(self, name)[..., where] = theirs

    # -- playing ---------------------------------------------------------------------------------

    def play_turn(self, cards: ArrayLike | Policy, rows: ArrayLike | None = None) -> _Int32:
        """Every active game plays one turn and returns the bull heads each seat took (G, n).

        `cards` is a policy, or the cards themselves: `cards[g, seat]` for each seat, which must be
        in its hand (ValueError). `rows[g, seat]`, if given, is the row a seat takes when its card
        is lower than every row (the engine's `choose_row`, decided before the reveal); otherwise
        the cheapest row. The cards played are in `played` afterwards.
        """
        shape = (len(self), self.players)
        choice = (
            None if rows is None else np.broadcast_to(np.asarray(rows), shape).T.astype(np.int16)
        )
        if callable(cards):
            return _transposed(self._turn(None, choice, cards, None))
        chosen = np.broadcast_to(np.asarray(cards), shape).T.astype(np.int16)
        return _transposed(self._turn(chosen, choice, None, None))

    def play_round(self, policy: Policy | None = None, *, first: ArrayLike | None = None) -> _Int32:
        """Play the active games to the end of their round with `policy` (default `greedy`).

        `first[g, seat]`, where it is not 0, is the card that seat plays in the first turn (the
        candidate a search is scoring); the policy plays the rest. Returns the bull heads each seat
        took (G, n); they are also in `points` until `end_round` scores them.
        """
        policy = greedy if policy is None else policy
        taken = np.zeros_like(self._points)
        forced = None
        if first is not None:
            forced = np.broadcast_to(np.asarray(first), (len(self), self.players)).T.astype(
                np.int16
            )
        while self.active.any():
            taken += self._turn(None, None, policy, forced)
            forced = None
        return _transposed(taken)

    def end_round(self, rng: np.random.Generator | None = None) -> _Bool:
        """Score the games whose round is over (`held == 0`, game not over): the round's points go
        into the scores; the game ends at the threshold (or after round MAX_ROUNDS); otherwise the
        next round is dealt (professional variant: drafted at random with `rng`). Returns the
        games scored (G,)."""
        done: _Bool = (self._held == 0) & ~self._over
        index = np.flatnonzero(done)
        if not len(index):
            return done
        scores = self._scores[:, index] + self._points[:, index]
        self._scores[:, index] = scores
        self._points[:, index] = 0
        top = scores.max(0)
        threshold = self.settings.threshold
        ended = top > threshold if self.settings.end_rule is EndRule.ABOVE else top >= threshold
        ended |= self._round[index] >= MAX_ROUNDS
        self._over[index[ended]] = True
        self._start_rounds(index[~ended], rng)
        return done

    def play_game(
        self,
        policy: Policy | None = None,
        *,
        first: ArrayLike | None = None,
        rng: np.random.Generator | None = None,
    ) -> _Int32:
        """Play every game to its end with `policy` (`first` as in `play_round`); returns the final
        scores (G, n), also in `scores`. `rng` drafts the rounds of the professional variant."""
        self.play_round(policy, first=first)
        while True:
            self.end_round(rng)
            if self._over.all():
                return self.scores
            self.play_round(policy)

    # -- one turn ----------------------------------------------------------------------------------

    def _turn(
        self,
        cards: _Int16 | None,
        rows: _Int16 | None,
        policy: Policy | None,
        first: _Int16 | None,
    ) -> _Int32:
        """One turn of the active games, with the given cards or the policy's; points (n, G)."""
        act = self.active
        if act.all():
            index = None
        else:
            index = np.flatnonzero(act)
            if not len(index):
                self._played = np.zeros_like(self._played)
                return np.zeros_like(self._points)
        hands = self._hands if index is None else _part(self._hands, index)
        held = self._held if index is None else self._held[index]
        if cards is None:
            assert policy is not None
            if isinstance(policy, EpsilonGreedy):
                slots = policy._slots(self, index)
            else:
                chosen = np.asarray(policy(self)).T.astype(np.int16)
                slots = _find_slots(hands, held, chosen if index is None else chosen[:, index])
            if first is not None:
                sub = first if index is None else first[:, index]
                forced = sub != 0
                if forced.any():
                    slots = np.where(forced, _find_slots(hands, held, sub, forced), slots)
        else:
            slots = _find_slots(hands, held, cards if index is None else cards[:, index])
        played = _take_slots(hands, held, slots)
        held -= 1
        if index is None:
            self._played = played
        else:
            self._played = np.zeros_like(self._played)
            self._played[:, index] = played
        keep = self.keep_cards
        if index is None:
            state, rows_now, out = self._state, self._rows, self._out
            choice = rows
        else:
            state = _part(self._state, index)
            rows_now = _part(self._rows, index) if keep else self._rows
            out = _part(self._out, index) if keep else self._out
            choice = None if rows is None else rows[:, index]
        pts = _place(state, rows_now if keep else None, played, choice)
        if keep:
            k = len(held)
            out.reshape(-1)[(played.astype(np.intp) * k + np.arange(k)).reshape(-1)] = True
        if index is None:
            self._points += pts
            return pts
        self._hands[:, :, index] = hands
        self._held[index] = held
        self._state[:, index] = state
        if keep:
            self._rows[:, :, index] = rows_now
            self._out[:, index] = out
        self._points[:, index] += pts
        whole = np.zeros_like(self._points)
        whole[:, index] = pts
        return whole

    # -- dealing ---------------------------------------------------------------------------------

    def _start_rounds(self, index: NDArray[np.intp], rng: np.random.Generator | None) -> None:
        """Start the next round of the games at `index`: deal (or draft) and lay out the rows."""
        if not len(index):
            return
        n, k = self.players, len(index)
        self._round[index] += 1
        if self.settings.variant is Variant.PROFESSIONAL:
            if rng is None:
                raise ValueError("the professional variant drafts every round: pass rng")
            picks_count = HAND_SIZE * n
            pool = np.tile(np.arange(1, picks_count + ROW_COUNT + 1, dtype=np.int16), (k, 1))
            pool = rng.permuted(pool, axis=1)
            picks = pool[:, :picks_count]
            first = (self._round[index] - 1 + self._rotation[index]) % n
            seat = (first[:, None] + np.arange(picks_count)) % n
            hands = np.full((k, n, HAND_SIZE), NO_CARD, dtype=np.int8)
            hands[np.arange(k)[:, None], seat, np.arange(picks_count) // n] = picks
            starts = np.sort(pool[:, picks_count:], axis=1)
            if len(self._picks) != picks_count:
                self._picks = np.zeros((picks_count, len(self)), dtype=np.int16)
            self._picks[:, index] = picks.T
        else:
            deck, used = _shuffle(self._seeds[index], self._draws[index])
            self._draws[index] += used
            position = (np.arange(n) - self._rotation[index][:, None]) % n  # of each seat
            take = position[:, :, None] * HAND_SIZE + np.arange(HAND_SIZE)
            hands = np.take_along_axis(deck[:, None, :], take, 2).astype(np.int8)
            starts = deck[:, HAND_SIZE * n : HAND_SIZE * n + ROW_COUNT].astype(np.int16)
        self._hands[:, :, index] = np.sort(hands, axis=2).transpose(2, 1, 0)
        self._held[index] = HAND_SIZE
        self._state[:, index] = _row_state(starts.T, _ROW_INDEX32, _HEADS16[starts.T], 1)
        self._points[:, index] = 0
        if self.keep_cards:
            self._rows[:, :, index] = 0
            self._rows[0][:, index] = starts.T
            out = np.zeros((_CARDS, k), dtype=np.bool_)
            out[starts.T, np.arange(k)] = True
            self._out[:, index] = out


# -- policies --------------------------------------------------------------------------------------


def greedy_cards(batch: Batch) -> _Int8:
    """Each seat's greedy card (G, n): the fewest bull heads if placed now, then the closest to its
    row's end, ties to the lowest card: `take5.sim.greedy_card` on the sorted hand.

    (Its key: cost * 256 + (card - row end) for a card that fits a row; cost * 256 + 150 + card for
    a low card, whose cost is the cheapest row's bull heads.)
    """
    slots = _greedy_slots(batch._state, _filled(batch._hands, batch._held))
    return _transposed(_cards_at(batch._hands, slots))


greedy: Policy = greedy_cards
"""The greedy policy (`greedy_cards` for every seat): `EpsilonGreedy(0)` without the object."""


class EpsilonGreedy:
    """The rollout policy: each seat plays its greedy card (`greedy_cards`), or with probability
    `randomness` (one number, or one per seat) a uniformly random card of its hand.

    `randomness=1` is a random player (no greedy card is computed), 0 the greedy one. With
    `period=P` the random numbers of games g, g + P, g + 2P, ... are the same: in a batch made with
    `tile(k)` from P games, every candidate then meets the same draws (common random numbers).
    """

    def __init__(
        self,
        randomness: float | Sequence[float] | NDArray[np.floating[Any]] = 0.0,
        rng: np.random.Generator | None = None,
        *,
        period: int | None = None,
    ) -> None:
        eps = np.asarray(randomness, dtype=np.float64)
        if eps.ndim > 1 or not ((eps >= 0) & (eps <= 1)).all():
            raise ValueError("randomness must be one number or one per seat, each from 0 to 1")
        if rng is None and (eps > 0).any():
            raise ValueError("a policy with randomness needs rng")
        if period is not None and period < 1:
            raise ValueError("period must be at least 1")
        self.randomness = eps
        self.rng = rng
        self.period = period
        self._always_random = bool((eps >= 1).all())
        self._never_random = bool((eps <= 0).all())
        per_seat = eps[:, None] if eps.ndim else eps
        self._threshold = per_seat.astype(np.float32)
        self._scale = np.divide(1.0, per_seat, out=np.zeros_like(per_seat), where=per_seat > 0)

    def __call__(self, batch: Batch) -> _Int8:
        return _transposed(_cards_at(batch._hands, self._slots(batch, None)))

    def _slots(self, batch: Batch, index: NDArray[np.intp] | None) -> _Int8:
        """Each seat's slot (n, G') in the hands of the games at `index` (None: all)."""
        held = batch._held if index is None else batch._held[index]
        n, k = batch.players, len(held)
        greedy_slots = None
        if not self._always_random:
            hands = _filled(batch._hands, held)
            if index is None:
                greedy_slots = _greedy_slots(batch._state, hands)
            else:
                greedy_slots = _greedy_slots(_part(batch._state, index), _part(hands, index))
            if self._never_random:
                return greedy_slots
        assert self.rng is not None
        # One uniform draw per seat decides both: below the seat's randomness it plays a random
        # card, the draw divided by the randomness (uniform again) saying which.
        if self.period is None:
            draws = self.rng.random((n, k), dtype=np.float32)
        else:
            if len(batch) % self.period:
                raise ValueError(f"period {self.period} does not divide the {len(batch)} games")
            shared = self.rng.random((n, self.period), dtype=np.float32)
            draws = np.tile(shared, (1, len(batch) // self.period))
            if index is not None:
                draws = draws[:, index]
        share = draws if greedy_slots is None else np.minimum(draws * self._scale, _BELOW_ONE)
        random_slots = np.minimum((share * held).astype(np.int8), held - 1)
        if greedy_slots is None:
            return random_slots
        return np.where(draws < self._threshold, random_slots, greedy_slots)


def revealed_cards(view: View) -> NDArray[np.int16]:
    """The cards revealed in this turn, by seat (from a CHOOSE_ROW view), for `Batch.play_turn`."""
    cards = np.zeros(view.settings.players, dtype=np.int16)
    for play in view.revealed:
        cards[play.seat] = play.card
    return cards
