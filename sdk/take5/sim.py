"""Fast simulation for bots: play turns and whole rounds over plain lists, and sample hidden hands.

A search bot (Monte Carlo, MCTS, ...) plays thousands of imagined turns per decision, so it cannot
use `Game` and `View` objects inside its loops. This module gives it the same rules (docs/rules.md 3
and 4) over a compact table and plain lists of ints, and the one piece of bookkeeping every such bot
needs: dealing the cards it has not seen into the other hands consistently with what it knows.

The table. Placing a card only depends on each row's last card, its length and its bull heads, so a
`Table` keeps exactly those, as three lists of 4 ints that the functions here change in place::

    table = Table.from_rows(view.rows)        # or table_from_rows
    points = play_turn(table, [17, 4, 93, 90]) # one card per seat -> bull heads each seat took

Rollouts. `play_out` plays the rest of a round from a table and every seat's hand with a cheap
policy: each seat plays its *greedy card* (the one that takes the fewest bull heads if placed now,
closest to its row's end on ties), or with probability `randomness[seat]` a uniformly random card of
its hand. A low card always takes the cheapest row. Playing a round of 4 hands of 10 costs some tens
of microseconds.

Sampling. `sample_hands(view, rng)` gives every seat a hand: the seat's own hand as it is, the hands
of the professional variant as they are (they are public), and in the standard game a uniformly
random deal of `view.unseen()` into hands of the right size, so no hand ever holds a card the seat
has seen.

Everything here is pure apart from the arguments it is documented to change, and deterministic given
the random generator passed in (any object with a ``random()`` method, e.g. ``random.Random``).
"""

from __future__ import annotations

from bisect import bisect_right as bisect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol

from ._named import plain_signature
from .rules import BULL_HEADS, MAX_ROW_LENGTH, ROW_COUNT

if TYPE_CHECKING:
    from .game import View

__all__ = [
    "Rng",
    "Table",
    "card_cost",
    "cheapest_row",
    "draft_order",
    "draft_out",
    "greedy_card",
    "place",
    "play_out",
    "play_turn",
    "sample_hands",
    "table_from_rows",
    "target_row",
]

_BH = BULL_HEADS
_FULL = MAX_ROW_LENGTH
assert ROW_COUNT == 4, "the unrolled loops below assume 4 rows"


class Rng(Protocol):
    """What the simulation needs of a random generator (``random.Random`` has it)."""

    def random(self) -> float:
        """A float in [0, 1)."""
        ...


class Table(NamedTuple):
    """The rows as the rules see them: each row's last card, number of cards and bull heads.

    The three lists are changed in place by `place`, `play_turn` and `play_out`; `copy` before a
    simulation that must not change the original.
    """

    ends: list[int]
    lens: list[int]
    heads: list[int]

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[int]]) -> Table:
        """The table of some rows (for instance `view.rows`)."""
        return cls(
            [row[-1] for row in rows],
            [len(row) for row in rows],
            [sum(_BH[c] for c in row) for row in rows],
        )

    def copy(self) -> Table:
        return Table(self.ends[:], self.lens[:], self.heads[:])


plain_signature(Table)


def table_from_rows(rows: Sequence[Sequence[int]]) -> Table:
    """Same as `Table.from_rows`."""
    return Table.from_rows(rows)


def target_row(table: Table, card: int) -> int:
    """The row `card` goes to, or -1 when it is lower than every row's end (docs/rules.md 4)."""
    best = -1
    best_end = 0
    for index, end in enumerate(table.ends):
        if best_end < end < card:
            best, best_end = index, end
    return best


def cheapest_row(table: Table) -> int:
    """The row with the fewest bull heads (ties: fewer cards, then the lowest index).

    The same choice as `take5.rules.cheapest_row`: the referee's default when a bot cannot answer.
    """
    heads, lens = table.heads, table.lens
    return min(range(len(heads)), key=lambda i: (heads[i], lens[i], i))


def place(table: Table, card: int, chosen_row: int | None = None) -> int:
    """Place one card (changing `table`) and return the bull heads its player takes.

    `chosen_row` is the row taken when the card is lower than every row's end; when it is None the
    cheapest row is taken. It is ignored for a card that fits a row, as in the rules.
    """
    ends, lens, heads = table
    index = target_row(table, card)
    if index < 0:
        if chosen_row is None:
            chosen_row = cheapest_row(table)
        taken = heads[chosen_row]
        ends[chosen_row] = card
        lens[chosen_row] = 1
        heads[chosen_row] = _BH[card]
        return taken
    if lens[index] >= _FULL:
        taken = heads[index]
        ends[index] = card
        lens[index] = 1
        heads[index] = _BH[card]
        return taken
    ends[index] = card
    lens[index] += 1
    heads[index] += _BH[card]
    return 0


def play_turn(
    table: Table,
    cards: Sequence[int],
    choose_row: Callable[[Table, int, int], int] | None = None,
) -> list[int]:
    """Reveal one card per seat (`cards[seat]`), place them lowest first, return each seat's points.

    `choose_row(table, card, seat)` names the row a low card takes (default: the cheapest row).
    Changes `table`; does not touch any hand.
    """
    points = [0] * len(cards)
    for card, seat in sorted(zip(cards, range(len(cards)))):
        row = None
        if choose_row is not None and target_row(table, card) < 0:
            row = choose_row(table, card, seat)
        points[seat] += place(table, card, row)
    return points


def card_cost(table: Table, card: int) -> int:
    """Bull heads a card would take if placed now, alone (a low card takes the cheapest row)."""
    index = target_row(table, card)
    if index < 0:
        return min(table.heads)
    return table.heads[index] if table.lens[index] >= _FULL else 0


def greedy_card(table: Table, hand: Sequence[int]) -> int:
    """The rollout policy's card: fewest bull heads if placed now, then closest to its row's end.

    Its key is cost * 256 + (card - row end) for a card that fits a row, and for a low card
    cost * 256 + 150 + card (the cheapest row's bull heads; after fitting cards of the same cost,
    the lowest low card first). The first card of the hand with the smallest key wins.
    """
    best_card = hand[0]
    best_key = 1 << 30
    low = min(table.heads) * 256 + 150
    for card in hand:
        index = target_row(table, card)
        if index < 0:
            key = low + card
        else:
            end = table.ends[index]
            key = (table.heads[index] * 256 if table.lens[index] >= _FULL else 0) + card - end
        if key < best_key:
            best_key, best_card = key, card
    return best_card


def play_out(
    table: Table,
    hands: list[list[int]],
    rng: Rng,
    randomness: float | Sequence[float] = 0.0,
    first: Sequence[int | None] | None = None,
    points: list[int] | None = None,
) -> list[int]:
    """Play the rest of the round with the rollout policy; return the bull heads each seat takes.

    - `hands[seat]` is every seat's hand (at most 16 seats), all the same size; they are emptied,
      and `table` changed: pass copies if you need the originals.
    - `randomness` is, per seat (or one number for all), the probability of playing a uniformly
      random card of the hand instead of the greedy card (`greedy_card`). 0 is a greedy player, 1 a
      random one.
    - `first[seat]`, if given and not None, is the card that seat plays in the first turn (it must
      be in its hand); the other seats follow the policy in that turn too.
    - `points`, if given, is added to in place and returned (e.g. the points taken this turn).

    Low cards take the cheapest row. The result depends only on the arguments and the draws.
    """
    n = len(hands)
    eps = [float(randomness)] * n if isinstance(randomness, (int, float)) else list(randomness)
    if len(eps) != n:
        raise ValueError(f"randomness has {len(eps)} values for {n} seats")
    pts = [0] * n if points is None else points
    ends, lens, heads = table
    bh = _BH
    rand = rng.random
    seats = range(n)
    turns = len(hands[0])
    for _ in range(turns):
        # The greedy key of a card c (see greedy_card) with the ends sorted: c goes after the j-th
        # smallest end (j = bisect(ends, c); 0: a low card), and its key is add[j] + c.
        order = sorted(range(4), key=ends.__getitem__)
        sends = [ends[r] for r in order]
        add = [min(heads) * 256 + 150]
        add.extend((heads[r] * 256 if lens[r] >= 5 else 0) - ends[r] for r in order)
        plays = []
        for seat in seats:
            hand = hands[seat]
            chosen = first[seat] if first is not None else None
            if chosen is not None:
                card = chosen
                hand.remove(card)
            elif len(hand) == 1:
                card = hand.pop()
            elif rand() < eps[seat]:
                card = hand.pop(int(rand() * len(hand)))
            else:
                best_i = 0
                best_key = 1 << 30
                for i, c in enumerate(hand):
                    key = add[bisect(sends, c)] + c
                    if key < best_key:
                        best_key, best_i = key, i
                card = hand.pop(best_i)
            plays.append(card * 16 + seat)
        first = None
        plays.sort()
        for p in plays:
            c = p >> 4
            e0, e1, e2, e3 = ends
            b = -1
            be = 0
            if e0 < c:
                b, be = 0, e0
            if be < e1 < c:
                b, be = 1, e1
            if be < e2 < c:
                b, be = 2, e2
            if be < e3 < c:
                b = 3
            if b < 0:
                b = 0
                k = heads[0] * 8 + lens[0]
                for r in (1, 2, 3):
                    kr = heads[r] * 8 + lens[r]
                    if kr < k:
                        b, k = r, kr
                pts[p & 15] += heads[b]
                ends[b] = c
                lens[b] = 1
                heads[b] = bh[c]
            elif lens[b] >= 5:
                pts[p & 15] += heads[b]
                ends[b] = c
                lens[b] = 1
                heads[b] = bh[c]
            else:
                ends[b] = c
                lens[b] += 1
                heads[b] += bh[c]
    return pts


def sample_hands(view: View, rng: Rng, unseen: Sequence[int] | None = None) -> list[list[int]]:
    """Every seat's hand, consistent with what `view.seat` knows (new lists, safe to change).

    The seat's own hand is its real hand. Where hands are public (professional variant) they are the
    real hands. Otherwise the other seats get a uniformly random deal of `view.unseen()` (the cards
    this seat has not seen: not in its hand, on the rows, revealed or taken this round), each as
    many cards as the seat holds; the rest of the unseen cards are the undealt ones. Pass `unseen`
    (= `view.unseen()`) to save recomputing it when sampling many times from one view.
    """
    if view.hands is not None:
        known = [list(h) for h in view.hands]
        known[view.seat] = list(view.hand)
        return known
    n = view.settings.players
    size = len(view.hand)
    cards = list(view.unseen() if unseen is None else unseen)
    need = size * (n - 1)
    m = len(cards)
    if need > m:
        raise ValueError(f"only {m} unseen cards for {n - 1} hands of {size}")
    rand = rng.random
    for i in range(need):  # the first `need` steps of a Fisher-Yates shuffle
        j = i + int(rand() * (m - i))
        cards[i], cards[j] = cards[j], cards[i]
    hands: list[list[int]] = []
    start = 0
    for seat in range(n):
        if seat == view.seat:
            hands.append(list(view.hand))
        else:
            hands.append(cards[start : start + size])
            start += size
    return hands


def draft_order(view: View) -> list[int]:
    """The seats that still pick in this round's open draft, in order, starting with `view.seat`.

    The draft goes round the table one pick each from the first drafter until every hand holds 10,
    so from the drafter and the hand sizes the rest of the order follows.
    """
    if view.hands is None:
        raise ValueError("no draft in this view (professional variant only)")
    n = view.settings.players
    remaining = len(view.pool) - ROW_COUNT
    return [(view.seat + i) % n for i in range(remaining)]


def draft_out(
    pool: Sequence[int],
    hands: list[list[int]],
    order: Sequence[int],
    rng: Rng,
) -> Table:
    """Finish an open draft with uniformly random picks; return the table the 4 unpicked cards make.

    `hands` gets the picks (changed in place, sorted at the end); `order` is the seats still to
    pick, in order (`draft_order`). Pass `order[1:]` after adding your own candidate pick yourself.
    """
    rest = list(pool)
    for seat in order:
        hands[seat].append(rest.pop(int(rng.random() * len(rest))))
    for hand in hands:
        hand.sort()
    rest.sort()
    return Table(rest, [1] * len(rest), [_BH[c] for c in rest])
