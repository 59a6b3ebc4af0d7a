"""A readable transcript of a game record, for people watching a game in a terminal."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from take5.rules import penalty
from take5_arena.cli.terminal import field


def _row_text(row: list[int]) -> str:
    return " ".join(f"{c:>3}" for c in row)


def transcript(record: Mapping[str, Any]) -> Iterator[str]:
    """Lines describing the game: deals, rows each turn, who took what, scores, the standing."""
    # a record is as hostile as the bots that played it: names and details are escaped here
    names = [field(seat.get("name", f"seat{i}"), 40) for i, seat in enumerate(record["seats"])]
    settings = record["settings"]
    yield (
        f"{settings['variant']} game, {settings['players']} players, seed {record['seed']}, ends "
        f"when a score is {'at or above' if settings['end_rule'] == 'at-or-above' else 'above'} "
        f"{settings['threshold']}"
    )
    for rnd in record["rounds"]:
        yield ""
        yield f"== Round {rnd['round']} =="
        if rnd.get("draft"):
            yield f"open draft, {names[rnd['draft']['first']]} picks first"
        for seat, hand in enumerate(rnd.get("hands", [])):
            yield f"  {names[seat]:<16} hand {' '.join(map(str, hand))}"
        rows = rnd.get("rows", [])
        for index, row in enumerate(rows):
            yield f"  row {index + 1}: {_row_text(row)}"
        for turn in rnd.get("turns", []):
            plays = ", ".join(
                f"{names[s]} {c}" for s, c in sorted(turn["plays"], key=lambda p: p[1])
            )
            yield f"-- turn {turn['turn']}: {plays}"
            for take in turn["takes"]:
                why = "6th card" if take["reason"] == "sixth-card" else "lower than every row"
                yield (
                    f"   {names[take['seat']]} takes row {take['row'] + 1} "
                    f"({_row_text(take['cards']).strip()}) = {penalty(take['cards'])} bull heads, "
                    f"{why} ({take['card']})"
                )
            for index, row in enumerate(turn["rows"]):
                yield f"   row {index + 1}: {_row_text(row)}"
        if "scores" in rnd:
            parts = ", ".join(
                f"{names[s]} +{p} = {t}"
                for s, (p, t) in enumerate(zip(rnd["points"], rnd["scores"]))
            )
            yield f"scores after round {rnd['round']}: {parts}"
    result = record["result"]
    yield ""
    yield "Final standing:"
    for seat in sorted(range(len(names)), key=lambda s: (result["places"][s], s)):
        note = " (forfeited)" if seat in result.get("forfeited", []) else ""
        yield (
            f"  {result['places'][seat]:>2}. {names[seat]:<16} {result['scores'][seat]:>4} "
            f"points{note}"
        )
    for seat, faults in enumerate(record.get("faults", [])):
        for fault in faults:
            yield (
                f"  fault: {names[seat]} round {fault['round']} turn {fault['turn']}: "
                f"{field(fault['kind'])} {field(fault.get('detail', ''), 1000)}".rstrip()
            )
