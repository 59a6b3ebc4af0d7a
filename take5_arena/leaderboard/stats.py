"""Descriptive per-bot statistics (no model): games, wins, penalties, places, faults.

Kept apart from the rating modules (:mod:`.fit`, :mod:`.intervals`, ...) because these numbers are
plain counts and means that anybody can check by hand against the game records; the rating model
does not use them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from take5.outcome import win_shares

from .results import GameResult


@dataclass(frozen=True)
class BotStats:
    """Counts for one entrant. A bot seated twice in one game (self-play) counts once per seat.

    ``wins`` splits a shared first place (take5.outcome.win_shares): k seats sharing place 1 each
    get 1/k, so the wins of all bots add up to the number of games. ``outright_wins`` counts only
    unshared first places. ``faults`` lists (kind, count) pairs sorted by kind.
    """

    entrant: str
    games: int
    wins: float
    outright_wins: int
    mean_penalty: float
    mean_place: float
    faults: tuple[tuple[str, int], ...]

    @property
    def fault_counts(self) -> dict[str, int]:
        return dict(self.faults)


class StatsCounter:
    """The counts behind :func:`bot_stats`, added to game by game (the live standings keep one)."""

    def __init__(self) -> None:
        self._games: Counter[str] = Counter()
        self._wins: dict[str, float] = {}
        self._outright: Counter[str] = Counter()
        self._penalty: Counter[str] = Counter()
        self._place: Counter[str] = Counter()
        self._faults: dict[str, Counter[str]] = {}

    def add(self, g: GameResult) -> None:
        shares = win_shares(g.places)
        firsts = sum(1 for p in g.places if p == 1)
        for seat, entrant in enumerate(g.entrants):
            self._games[entrant] += 1
            self._penalty[entrant] += g.penalties[seat]
            self._place[entrant] += g.places[seat]
            w = self._wins.setdefault(entrant, 0.0)
            if g.places[seat] == 1:
                self._wins[entrant] = w + shares[seat]
                if firsts == 1:
                    self._outright[entrant] += 1
            kinds = self._faults.setdefault(entrant, Counter())
            if g.faults:
                kinds.update(g.faults[seat])

    def stats(self) -> dict[str, BotStats]:
        """Per-entrant counts and means of the games added, by entrant."""
        out: dict[str, BotStats] = {}
        for entrant in sorted(self._games):
            n = self._games[entrant]
            out[entrant] = BotStats(
                entrant=entrant,
                games=n,
                wins=self._wins[entrant],
                outright_wins=self._outright[entrant],
                mean_penalty=self._penalty[entrant] / n,
                mean_place=self._place[entrant] / n,
                faults=tuple(sorted(self._faults[entrant].items())),
            )
        return out


def bot_stats(results: Iterable[GameResult]) -> dict[str, BotStats]:
    """Per-entrant counts and means over ``results`` (order does not matter)."""
    counter = StatsCounter()
    for g in results:
        counter.add(g)
    return counter.stats()
