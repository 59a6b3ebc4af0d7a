"""Who won a game: the one definition of a win, used by the referee's match summary and the
leaderboard's statistics alike.

A game ends with places (1 = best; seats with equal penalty totals share a place, docs/rules.md). A
first place shared by k seats is worth 1/k of a win to each of them, so the wins of all seats of a
game add up to exactly 1, and the wins of all bots over a set of games add up to the number of
games.
"""

from __future__ import annotations

from collections.abc import Sequence


def win_shares(places: Sequence[int]) -> tuple[float, ...]:
    """Each seat's share of the win: 1/k for each of the k seats in first place, 0 for the rest."""
    firsts = sum(1 for p in places if p == 1)
    return tuple(1.0 / firsts if p == 1 else 0.0 for p in places)
