"""Where a seat lost points: each card it played beside the card a search would have played.

`analyse(record, seats)` replays a verified game record through the engine (`take5.Game`), so each
seat's view before each play is exactly what its bot was shown, and scores every card of the hand
as the SDK's search bot does (take5.bots.search): the cards the seat had not seen are dealt at
random into the other hands `deals` times (`take5.batch.Batch.determinize`), each card is played
first on the same deals, and the rest of the round is played out by every seat (greedy, at random
half of the time). A card's score is the bull heads the seat takes in the rest of the round on
average, its expected penalty; a decision's `Decision.cost` is the expected penalty of the card
played minus the best card's, and `costliest` names the decision that gave away the most::

    from take5.analysis import analyse, costliest
    from take5.record import load_record

    worst = costliest(analyse(load_record("game.json"), seats=[0]))
    print(worst.round, worst.turn, worst.played, worst.best, worst.cost)

An estimate: the rollouts' players are not the real opponents, and the game after the round is not
played. With the same `seed` it is the same on any machine. `referee analyse RECORD` prints it, and
the arena's replay page shows it to a seat's author. Needs numpy (imported when it runs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .game import Game, Phase, Settings, View

if TYPE_CHECKING:
    import numpy as np

__all__ = ["DEALS", "RANDOMNESS", "Decision", "analyse", "costliest", "expected_penalties"]

DEALS = 400
"""Deals per decision by default: the expected penalties are then within about a tenth of a bull
head of each other run to run (the search bot's own 20 ms play about as many)."""
RANDOMNESS = 0.5
"""How often a rollout's player plays a random card instead of its greedy one (the search bot's)."""


@dataclass(frozen=True)
class Decision:
    """One card a seat played, and what the search makes of its hand."""

    seat: int
    round: int
    turn: int
    played: int
    expected: dict[int, float]
    """Each card of the hand: the bull heads the seat takes in the rest of the round, on average."""

    @property
    def best(self) -> int:
        """The card the search would have played (the lowest expected penalty; ties: lowest)."""
        return min(self.expected, key=lambda c: (self.expected[c], c))

    @property
    def cost(self) -> float:
        """Expected bull heads the card played gives away against the search's card."""
        return self.expected[self.played] - self.expected[self.best]


def expected_penalties(view: View, deals: int, rng: np.random.Generator) -> dict[int, float]:
    """Each card of the hand of a play ``view``: the bull heads its seat takes in the rest of the
    round on average when it plays that card now, over ``deals`` random deals of the cards it has
    not seen (the same deals for every card), the rest played as the search bot's rollouts."""
    import numpy as np

    from take5.batch import Batch, EpsilonGreedy

    hand = list(view.hand)
    k = len(hand)
    batch = Batch.determinize(view, deals, rng, keep_cards=False).tile(k)
    first = np.zeros((len(batch), view.settings.players), dtype=np.int16)
    first[:, view.seat] = np.repeat(hand, deals)  # block c plays card hand[c] first
    policy = EpsilonGreedy(RANDOMNESS, rng, period=deals)  # the same draws for every card
    points = batch.play_round(policy, first=first)[:, view.seat].reshape(k, deals)
    return {card: float(p) for card, p in zip(hand, points.mean(axis=1))}


def analyse(
    doc: Mapping[str, Any], seats: Sequence[int], deals: int = DEALS, seed: int = 0
) -> list[Decision]:
    """The play decisions of ``seats`` in a record, in the order played. The record must follow
    the rules (`take5.record.verify_record` says so); a record that does not raises."""
    import numpy as np

    rng = np.random.default_rng(seed)
    game = Game(Settings.from_dict(doc["settings"]), doc["seed"], rotation=doc.get("rotation", 0))
    decisions: list[Decision] = []
    for recorded in doc["rounds"]:
        for seat, card in (recorded.get("draft") or {}).get("picks", []):
            del seat
            game.draft(card)
        for turn in recorded.get("turns", []):
            cards = [card for _, card in turn["plays"]]
            for seat in seats:
                expected = expected_penalties(game.view(seat), deals, rng)
                decisions.append(
                    Decision(seat, recorded["round"], turn["turn"], cards[seat], expected)
                )
            low = {t["card"]: t["row"] for t in turn.get("takes", []) if t["reason"] == "low-card"}
            game.play(cards)
            while game.phase is Phase.CHOOSE_ROW:
                game.choose_row(low[game.view(game.waiting_for[0]).card])
    return decisions


def costliest(decisions: Sequence[Decision]) -> Decision | None:
    """The decision that gave away the most (the earliest of equals); None if there is none."""
    return max(decisions, key=lambda d: (d.cost, -d.round, -d.turn), default=None)
