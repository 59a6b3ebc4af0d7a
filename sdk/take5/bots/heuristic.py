"""heuristic: plays the card with the smallest expected penalty this turn.

For each card of its hand it looks at the row the card would go to:

* no row (the card is lower than every row's end): it would take the cheapest row;
* the row already holds 5 cards: it would take that row (unless another player's card lands first,
  which only makes it worse);
* otherwise the card is safe unless the other players fill the row first. Each other player plays
  one card; a card of theirs lands on the same row before ours when it falls between the row's end
  and our card. The chance of that is estimated from the cards this seat has not seen
  (`view.unseen()`), and the row fills when at least (5 - its length) such cards come.

The expected penalty is the chance of taking the row times its bull heads. Ties go to the higher
card when the danger is zero (keep low cards for later), else to the lower. Rows are chosen by the
SDK default (fewest bull heads). Written only against the public SDK, as any bot author would.
"""

from __future__ import annotations

from math import comb

from take5 import MAX_ROW_LENGTH, Bot, View, cheapest_row, penalty, target_row


def at_least(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    return sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


class HeuristicBot(Bot):
    name = "heuristic"
    version = "1.0"
    author = "take5 arena"

    def expected_penalty(self, view: View, card: int, unseen: tuple[int, ...]) -> float:
        rows = view.rows
        index = target_row(rows, card)
        if index is None:
            return float(penalty(rows[cheapest_row(rows)]))
        row = rows[index]
        if len(row) >= MAX_ROW_LENGTH:
            return float(penalty(row))
        others = view.players - 1
        if not unseen or others == 0:
            return 0.0
        between = sum(1 for c in unseen if row[-1] < c < card)
        # Each other player holds a random part of the unseen cards; the chance that the one it
        # plays falls in our gap is roughly the gap's share of the unseen cards.
        p = between / len(unseen)
        slots = MAX_ROW_LENGTH - len(row)
        return at_least(slots, others, p) * (penalty(row) + 1)

    def pick_card(self, view: View) -> int:
        unseen = view.unseen()
        scored = [(self.expected_penalty(view, card, unseen), card) for card in view.hand]
        best = min(cost for cost, _ in scored)
        candidates = [card for cost, card in scored if cost == best]
        return max(candidates) if best == 0 else min(candidates)
