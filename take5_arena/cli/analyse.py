"""`referee analyse RECORD`: each card a seat played beside what the SDK's search would have played.

The record is checked against the rules first (`take5.record.verify_record`); the analysis itself
is the SDK's (sdk/take5/analysis.py: the search bot's rollouts, the expected penalty of each card,
the costliest decision).

Exit codes: 0 analysed; 1 the record does not follow the rules; 2 the file cannot be read or is not
a record, or no such seat.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NoReturn

import click

from take5.analysis import DEALS, Decision, analyse, costliest
from take5.text import inert
from take5_arena.cli import record_file
from take5_arena.cli.record_file import load_verified_record


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

    def fail(message: object, code: int) -> NoReturn:
        record_file.fail("analyse", message, code)

    doc = load_verified_record(record, "analyse")
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
        worst = costliest(mine)
        if worst is not None:
            total = sum(d.cost for d in mine)
            click.echo(
                f"  costliest decision: round {worst.round}, turn {worst.turn}: played "
                f"{worst.played} (expected {worst.expected[worst.played]:.2f} bull heads), the "
                f"search would play {worst.best} ({worst.expected[worst.best]:.2f}): "
                f"{worst.cost:.2f} bull heads given away; {total:.2f} in all"
            )


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
        worst = costliest(mine)
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


__all__ = ["analyse_command"]
