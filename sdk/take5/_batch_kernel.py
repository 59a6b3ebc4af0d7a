"""The rules of 6 nimmt! over numpy arrays, for `take5.batch`: the layout's constants and the steps
a `Batch` is played with (placing a turn's cards, finding and taking cards in sorted hands, the
greedy card, the deal's shuffle). Apart from the `Batch` object so that each file holds one idea:
the object and its policies in take5.batch, the array arithmetic here. Every array here has the game
axis last (see `Batch.__init__`). Private: none of these names is part of the SDK's API.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from .rules import BULL_HEADS, CARD_COUNT, HAND_SIZE, MAX_ROW_LENGTH, ROW_COUNT
from .shuffle import SplitMix64

_Int8 = NDArray[np.int8]
_Int16 = NDArray[np.int16]
_Int32 = NDArray[np.int32]
_Bool = NDArray[np.bool_]

NO_CARD = 127
"""What fills the hand slots past `held` (`take5.batch.NO_CARD`): higher than every card."""

_HEADS16 = np.array(BULL_HEADS + (0,) * (NO_CARD + 1 - len(BULL_HEADS)), dtype=np.int16)
"""_HEADS16[card]: the bull heads of a card (0 for index 0 and NO_CARD)."""
_CARDS = CARD_COUNT + 1
_SHUFFLE_STEPS = CARD_COUNT - 1  # draws of one Fisher-Yates shuffle of the full deck
_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
# Draw t of a shuffle (t = 0..102) picks below m = 104 - t and keeps a draw x when
# x < 2**64 - (2**64 mod m) (take5.shuffle), that is when x <= _KEEP[t].
_BOUNDS = np.arange(CARD_COUNT, 1, -1, dtype=np.uint64)
_KEEP = np.array([(1 << 64) - ((1 << 64) % int(m)) - 1 for m in _BOUNDS], dtype=np.uint64)
_STEPS = np.arange(1, _SHUFFLE_STEPS + 1, dtype=np.uint64)
_NO_KEY16 = np.int32(16 << 14)
"""Added to 16 times the greedy key of a card that is not there: every real key is below 2**13."""
_I32_16 = np.int32(16)
_BELOW_ONE = 1.0 - 2.0**-30
_ROW_INDEX32 = np.arange(ROW_COUNT, dtype=np.int32)[:, None]
_SEAT_INDEX32 = np.arange(16, dtype=np.int32)[:, None]
_SIZE_OF = _HEADS16.astype(np.int32) * 8 + 1
"""_SIZE_OF[card]: the low 16 bits of a row of that one card (see Batch.__init__)."""
_SLOT_AFTER = np.arange(1, HAND_SIZE, dtype=np.int8)[:, None, None]
_FULL = MAX_ROW_LENGTH

assert ROW_COUNT == 4 and MAX_ROW_LENGTH == 5, "the layout below assumes 4 rows of 5"


def _sorting_network(n: int) -> tuple[tuple[int, int], ...]:
    """Batcher's odd-even merge sort for n items: compare-exchange pairs (i < j)."""

    def merge(lo: int, hi: int, r: int) -> Iterable[tuple[int, int]]:
        step = r * 2
        if step < hi - lo:
            yield from merge(lo, hi, step)
            yield from merge(lo + r, hi, step)
            yield from ((i, i + r) for i in range(lo + r, hi - r, step))
        else:
            yield (lo, lo + r)

    def sort(lo: int, hi: int) -> Iterable[tuple[int, int]]:
        if hi - lo >= 1:
            mid = lo + (hi - lo) // 2
            yield from sort(lo, mid)
            yield from sort(mid + 1, hi)
            yield from merge(lo, hi, 1)

    top = 1
    while top < n:
        top *= 2
    return tuple((i, j) for i, j in sort(0, top - 1) if j < n)


_NETWORKS = {n: _sorting_network(n) for n in range(1, 17)}


_Item = TypeVar("_Item", bound=np.generic)


def _transposed(array: NDArray[_Item]) -> NDArray[_Item]:
    """The array with its axes reversed (a view): from the game-last layout to games first."""
    view: NDArray[_Item] = array.T
    return view


def _read_only(array: NDArray[Any]) -> NDArray[Any]:
    view: NDArray[Any] = array.view()
    view.flags.writeable = False
    return view


def _part(array: NDArray[Any], index: NDArray[np.intp]) -> NDArray[Any]:
    """The games at `index` of an array, as a C-contiguous copy (the steps below write through
    flat views of their arrays)."""
    return np.ascontiguousarray(array[..., index])


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# -- the rules, vectorised: every array here has the game axis last --------------------------------


def _sort_packed(values: Sequence[_Int32]) -> list[_Int32]:
    """The values of each game sorted ascending, through a sorting network (tiny sorts are slow in
    numpy; a network is a few elementwise min/max over all games at once)."""
    items = list(values)
    for i, j in _NETWORKS[len(items)]:
        a, b = items[i], items[j]
        items[i], items[j] = np.minimum(a, b), np.maximum(a, b)
    return items


def _row_state(end: Any, row: Any, heads: Any, length: Any) -> _Int32:
    """The int32 a row is kept as (see Batch.__init__)."""
    state: _Int32 = ((np.asarray(end, dtype=np.int32) * 4 + row) << 16) | (
        np.asarray(heads, dtype=np.int32) * 8 + length
    )
    return state


def _place(state: _Int32, rows: _Int16 | None, cards: _Int8, choice: _Int16 | None) -> _Int32:
    """Place one card per seat and game, lowest first (docs/rules.md 4), changing the rows (`state`
    and, unless None, `rows`) in place; return the bull heads each seat takes (n, G).

    Only the lowest card of a turn can be lower than every row: it takes row `choice[seat, g]`, or
    the cheapest row. (np.where is slow next to arithmetic, so two-way choices are sums.)"""
    n, k = cards.shape
    games = np.arange(k)
    ranked = np.stack(_sort_packed(list(cards.astype(np.int32) * 16 + _SEAT_INDEX32[:n])))
    seats = ranked & 15
    limits = (ranked >> 4) << 18  # (n, G): (card * 4) << 16, to compare with the row states
    sizes_of = _SIZE_OF[ranked >> 4]
    taken_by_rank = np.zeros((n, k), dtype=np.int32)
    assert state.flags.c_contiguous  # a flat view below, not a copy
    state_f = state.reshape(-1)
    rows_f = None if rows is None else rows.reshape(-1)
    for rank in range(n):
        limit = limits[rank]
        best = (state * (state < limit)).max(0)  # the row with the highest end below the card
        row = (best >> 16) & 3
        now = best & 0xFFFF
        if rank == 0:
            low = best == 0  # no end below the card
            if low.any():
                if choice is None:  # the cheapest row: fewest bull heads, fewest cards, index
                    chosen = ((state & 0xFFFF) * 4 + _ROW_INDEX32).min(0) & 3
                else:
                    chosen = choice[seats[0], games].astype(np.int32)
                    if (low & ((chosen < 0) | (chosen >= ROW_COUNT))).any():
                        raise ValueError("a row choice must be 0 to 3")
                row = np.where(low, chosen, row)
                now = state_f[row * k + games] & 0xFFFF
        at = row * k + games
        length = now & 7
        taken = length >= _FULL
        if rank == 0:
            taken |= low
        kept = ~taken
        taken_by_rank[rank] = (now >> 3) * taken
        state_f[at] = limit + (row << 16) + now * kept + sizes_of[rank]
        if rows_f is not None:
            rows_f[(length * kept) * (ROW_COUNT * k) + at] = limit >> 18
    pts = np.zeros((n, k), dtype=np.int32)
    pts.reshape(-1)[(seats * k + games).reshape(-1)] = taken_by_rank.reshape(-1)
    return pts


def _filled(hands: _Int8, held: _Int8) -> _Int8:
    """The hand slots that hold a card in some game (a view): hands are sorted with NO_CARD last,
    so the later slots are left out of the work, which halves it over a round."""
    top = max(int(held.max()), 1) if len(held) else 1
    part: _Int8 = hands[:top]
    return part


def _find_slots(hands: _Int8, held: _Int8, cards: _Int16, where: _Bool | None = None) -> _Int8:
    """The slot of each seat's card in its (sorted) hand; ValueError if a card is not there
    (`where`: only these seats are checked)."""
    hands = _filled(hands, held)
    slots = _count(hands < cards)
    ok = (_cards_at(hands, np.minimum(slots, len(hands) - 1)) == cards) & (slots < held)
    if where is not None:
        ok |= ~where
    if not ok.all():
        seat, g = np.argwhere(~ok)[0]
        hand = [int(c) for c in hands[: int(held[g]), seat, g]]
        raise ValueError(
            f"game {g}, seat {seat}: card {int(cards[seat, g])} is not in the hand {hand}"
        )
    return slots


def _count(below: _Bool) -> _Int8:
    """Along the first axis, how many are true (through int8: much faster than a bool sum)."""
    counts: _Int8 = below.view(np.int8).sum(0, dtype=np.int8)
    return counts


def _take_slots(hands: _Int8, held: _Int8, slots: _Int8) -> _Int8:
    """Remove the card at each seat's slot from its hand, keeping hands sorted; return the cards."""
    hands = _filled(hands, held)
    cards = _cards_at(hands, slots)
    top = len(hands)
    moves = _SLOT_AFTER[: top - 1] > slots  # the slots that move down by one
    low, high = hands[:-1], hands[1:]
    low += moves * (high - low)
    hands[-1] = NO_CARD
    return cards


def _greedy_slots(state: _Int32, hands: _Int8) -> _Int8:
    """The slot of each seat's greedy card (see `greedy_cards`), (n, G).

    In a sorted hand the best card behind a row is the lowest one there, so five cards of each hand
    compete: the lowest card (if it is lower than every row) and the lowest card behind each row.
    Their keys are packed as key * 16 + slot, so that one minimum picks the card and says where it
    is; on equal keys the lower slot (the lower card, as greedy_card wants) wins."""
    k = hands.shape[2]
    by_end = np.stack(_sort_packed([state[r] for r in range(ROW_COUNT)]))  # ascending ends
    ends = (by_end >> 18).astype(np.int8)
    low16 = by_end & 0xFFFF
    # A card behind a row adds (256 per bull head if the row is full) - the row's end, times 16.
    add = ((low16 >> 3) * 256 * ((low16 & 7) >= _FULL) - (by_end >> 18)) * 16
    past = np.full((1, k), CARD_COUNT + 1, dtype=np.uint8)
    upper = np.concatenate([ends[1:].view(np.uint8), past])[:, None, :]  # the next end up
    below = hands[:, None] < ends[None, :, None, :]  # (10, 4, n, G)
    counts = _count(below)  # (4, n, G): cards below each end, so the slot of the first above it
    # The lowest card above each end: the minimum once the cards below are pushed past 127.
    marked = hands.view(np.uint8)[:, None] | below.view(np.uint8) * np.uint8(128)  # (no << here:
    # numpy shifts uint8 an order of magnitude slower than it multiplies them)
    cards = marked.min(0)  # (4, n, G); NO_CARD or above where there is none
    missing = cards >= upper  # none, or beyond the next end (behind another row)
    packed = (add[:, None, :] + cards * _I32_16 + missing * _NO_KEY16 + counts).min(0)
    lowest = hands[0].astype(np.int32)
    base = ((state & 0xFFFF) >> 3).min(0) * (256 * 16) + 150 * 16  # the cheapest row's cost
    low_key = base + lowest * 16 + (lowest > ends[0]) * _NO_KEY16
    slots: _Int8 = (np.minimum(packed, low_key) & 15).astype(np.int8)
    return slots


def _shuffle(
    seeds: NDArray[np.uint64], draws: NDArray[np.int64]
) -> tuple[_Int32, NDArray[np.int64]]:
    """Each game's shuffled deck, as take5.shuffle makes it: Fisher-Yates from the end with the
    SplitMix64 stream of its seed, `draws` draws in; and the draws each shuffle took. A draw the
    generator would reject (a chance below 1e-16 per shuffle) sends that game through the plain
    implementation."""
    k = len(seeds)
    with np.errstate(over="ignore"):
        state = seeds[:, None] + (draws.astype(np.uint64)[:, None] + _STEPS) * np.uint64(_GOLDEN)
        z = (state ^ (state >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    j = (z % _BOUNDS).astype(np.intp).T.copy()
    deck = np.tile(np.arange(1, CARD_COUNT + 1, dtype=np.int32)[:, None], (1, k))
    flat = deck.reshape(-1)
    games = np.arange(k)
    for step, i in enumerate(range(CARD_COUNT - 1, 0, -1)):
        at = j[step] * k + games
        top = deck[i].copy()
        deck[i] = flat[at]
        flat[at] = top
    result: _Int32 = deck.T.copy()
    used = np.full(k, _SHUFFLE_STEPS, dtype=np.int64)
    for g in np.flatnonzero((z > _KEEP).any(1)):
        result[g], used[g] = _shuffle_one(int(seeds[g]), int(draws[g]))
    return result, used


def _shuffle_one(seed: int, draws: int) -> tuple[NDArray[np.int32], int]:
    """One game's shuffle the plain way; the deck and the draws it took."""
    rng = SplitMix64(0)
    rng.state = (seed + draws * _GOLDEN) & _MASK
    deck = rng.shuffled(range(1, CARD_COUNT + 1))
    used = ((rng.state - seed) * pow(_GOLDEN, -1, 1 << 64)) & _MASK
    return np.array(deck, dtype=np.int32), used - draws


def _cards_at(hands: _Int8, slots: _Int8) -> _Int8:
    n, k = slots.shape
    flat = slots.astype(np.intp) * (n * k) + np.arange(n * k).reshape(n, k)
    cards: _Int8 = hands.reshape(-1)[flat]
    return cards
