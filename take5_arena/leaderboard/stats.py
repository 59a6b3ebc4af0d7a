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


def bot_stats(results: Iterable[GameResult]) -> dict[str, BotStats]:
    """Per-entrant counts and means over ``results`` (order does not matter)."""
    games: Counter[str] = Counter()
    wins: dict[str, float] = {}
    outright: Counter[str] = Counter()
    penalty: Counter[str] = Counter()
    place: Counter[str] = Counter()
    faults: dict[str, Counter[str]] = {}
    for g in results:
        shares = win_shares(g.places)
        firsts = sum(1 for p in g.places if p == 1)
        for seat, entrant in enumerate(g.entrants):
            games[entrant] += 1
            penalty[entrant] += g.penalties[seat]
            place[entrant] += g.places[seat]
            w = wins.setdefault(entrant, 0.0)
            if g.places[seat] == 1:
                wins[entrant] = w + shares[seat]
                if firsts == 1:
                    outright[entrant] += 1
            kinds = faults.setdefault(entrant, Counter())
            if g.faults:
                kinds.update(g.faults[seat])
    out: dict[str, BotStats] = {}
    for entrant in sorted(games):
        n = games[entrant]
        out[entrant] = BotStats(
            entrant=entrant,
            games=n,
            wins=wins[entrant],
            outright_wins=outright[entrant],
            mean_penalty=penalty[entrant] / n,
            mean_place=place[entrant] / n,
            faults=tuple(sorted(faults[entrant].items())),
        )
    return out
