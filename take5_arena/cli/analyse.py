"""`referee analyse RECORD`: each card a seat played beside what the SDK's search would have played.

The record is checked against the rules first (`take5.record.verify_record`), then replayed through
the engine (`take5.Game`), so each seat's view before each play is exactly what its bot was shown.
At each play turn every card of the seat's hand is scored as the SDK's search bot scores it
(sdk/take5/bots/search.py): the cards the seat had not seen are dealt at random into the other
hands `--deals` times (`take5.batch.Batch.determinize`), each card is played first on the same
deals, and the rest of the round is played out by every seat (greedy, at random half of the time).
A card's score is the bull heads the seat takes in the rest of the round on average: the expected
penalty. A decision's cost is the expected penalty of the card played minus the best card's; the
costliest decision of each seat is named at the end.

The analysis is an estimate: the rollouts' players are not the real opponents, and the rest of the
game after the round is not played. With the same `--seed` it is the same, whatever the machine.

Exit codes: 0 analysed; 1 the record does not follow the rules; 2 the file cannot be read or is not
a record, or no such seat.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from take5 import Game, Phase, Settings, View
from take5.audit import MalformedRecord
from take5.record import load_record, verify_record
from take5.text import inert

if TYPE_CHECKING:
    import numpy as np

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
    doc: dict[str, Any], seats: list[int], deals: int = DEALS, seed: int = 0
) -> list[Decision]:
    """The play decisions of ``seats`` in a verified record, in the order played."""
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


@click.command("analyse")
@click.argument("record", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--seat",
    "seats",
    type=click.IntRange(min=0),
    multiple=True,
    help="A seat to analyse (repeat for several) [every seat].",
)
@click.option("--bot", "bot_name", help="Analyse the seats of the bot of this name instead.")
@click.option(
    "--deals",
    type=click.IntRange(min=10, max=100_000),
    default=DEALS,
    show_default=True,
    help="Random deals of the unseen cards per decision.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the deals.")
@click.option("--json", "as_json", is_flag=True, help="Print the analysis as JSON (for scripts).")
def analyse_command(
    record: Path,
    seats: tuple[int, ...],
    bot_name: str | None,
    deals: int,
    seed: int,
    as_json: bool,
) -> None:
    """Each card a seat played in RECORD beside the card the SDK's search would have played, with
    the expected penalty of both, and the costliest decision of each seat.

    An estimate: every card of the hand is played first on the same random deals of the unseen
    cards and the rest of the round is played out (take5.bots.SearchBot's method)."""

    def fail(message: object, code: int) -> None:
        """One line on stderr (a record's text is hostile: shown escaped), then exit."""
        click.echo(f"referee analyse: {inert(message, keep_lines=False)}", err=True)
        sys.exit(code)

    try:
        doc = load_record(record)
        divergence = verify_record(doc)
    except MalformedRecord as error:
        fail(error, 2)
    if divergence is not None:
        fail(
            f"the record does not follow the rules ({divergence}); `referee verify` says the same",
            1,
        )
    names = [
        inert(str(s.get("name", f"seat {i}")), keep_lines=False) for i, s in enumerate(doc["seats"])
    ]
    chosen = sorted(set(seats)) or list(range(len(names)))
    if bot_name is not None:
        chosen = [i for i, s in enumerate(doc["seats"]) if s.get("name") == bot_name]
        if not chosen:
            fail(f"no seat of a bot named {bot_name!r} (the seats: {', '.join(names)})", 2)
    if any(s >= len(names) for s in chosen):
        fail(f"the game has seats 0 to {len(names) - 1}", 2)
    decisions = analyse(doc, chosen, deals, seed)
    if as_json:
        click.echo(json.dumps(_as_json(decisions, chosen, names), ensure_ascii=False))
        return
    for seat in chosen:
        mine = [d for d in decisions if d.seat == seat]
        click.echo(f"seat {seat} ({names[seat]}): {len(mine)} cards played")
        click.echo("  round.turn  played (expected)   search's card (expected)   cost")
        for d in mine:
            click.echo(
                f"  {d.round:>5}.{d.turn:<4} {d.played:>6} ({d.expected[d.played]:5.2f})"
                f"   {d.best:>13} ({d.expected[d.best]:5.2f})   {d.cost:6.2f}"
            )
        worst = _costliest(mine)
        if worst is not None:
            total = sum(d.cost for d in mine)
            click.echo(
                f"  costliest decision: round {worst.round}, turn {worst.turn}: played "
                f"{worst.played} (expected {worst.expected[worst.played]:.2f} bull heads), the "
                f"search would play {worst.best} ({worst.expected[worst.best]:.2f}): "
                f"{worst.cost:.2f} bull heads given away; {total:.2f} in all"
            )


def _costliest(decisions: list[Decision]) -> Decision | None:
    """The decision that gave away the most (the earliest of equals)."""
    return max(decisions, key=lambda d: (d.cost, -d.round, -d.turn), default=None)


def _as_json(decisions: list[Decision], seats: list[int], names: list[str]) -> dict[str, Any]:
    def one(d: Decision) -> dict[str, Any]:
        return {
            "round": d.round,
            "turn": d.turn,
            "played": d.played,
            "best": d.best,
            "cost": round(d.cost, 3),
            "expected": {str(c): round(x, 3) for c, x in sorted(d.expected.items())},
        }

    out = []
    for seat in seats:
        mine = [d for d in decisions if d.seat == seat]
        worst = _costliest(mine)
        out.append(
            {
                "seat": seat,
                "name": names[seat],
                "decisions": [one(d) for d in mine],
                "costliest": one(worst) if worst is not None else None,
                "given_away": round(sum(d.cost for d in mine), 3),
            }
        )
    return {"seats": out}


__all__ = ["DEALS", "RANDOMNESS", "Decision", "analyse", "analyse_command", "expected_penalties"]
