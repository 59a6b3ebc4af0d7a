"""Each bot's own output, turn by turn, kept in the game record (a turn's optional `logs`).

A bot author debugs by reading what their bot printed next to the turn it printed it in. Local bots
write to a pipe the referee drains (take5_arena/referee/match/local.py), Docker bots to a file in
their socket folder that the referee reads from where it last stopped
(take5_arena/referee/sandbox/launcher.py, ``DockerBot.take_output``); after every turn the match
takes what each bot wrote since the last turn (`take_output()` on its handle; "" where the launcher
keeps none) and keeps it here, bounded and made inert: at most `LIMIT` characters per seat per turn,
control characters as visible escapes (a log is read in terminals and web pages). Output from before
the first turn of a game (start-up banners) is dropped; output during a draft goes with turn 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from take5.text import inert

if TYPE_CHECKING:
    from .entrant import Entrant
    from .handle import BotHandle

READ_BYTES = 16384
"""Bytes of a bot's output a handle keeps between two take_output() calls, local and Docker alike
(a turn's log is then cut to LIMIT characters)."""
LIMIT = 2000
"""Characters of one seat's output kept per turn (docs/record-format.md)."""
CUT = "\n[... cut: at most 2,000 characters per turn are kept]"
SPENT = "\n[... cut: the bot's output budget of this match is spent; no more is kept]"


def clean(text: str, limit: int = LIMIT) -> str:
    """`text` made inert and bounded: control characters escaped (newlines and tabs kept)."""
    cleaned = inert(text).rstrip("\n")
    if len(cleaned) > limit:
        cleaned = cleaned[: limit - len(CUT)] + CUT
    return cleaned


def take(handles: Sequence[BotHandle]) -> list[list[Any]]:
    """What each handle's bot wrote since the last call, as [[seat, text], ...] (seats that
    wrote)."""
    logs: list[list[Any]] = []
    for seat, handle in enumerate(handles):
        text = clean(handle.take_output())
        if text.strip():
            logs.append([seat, text])
    return logs


def take_within(entrants: Sequence[Entrant], budget: int | None) -> list[list[Any]]:
    """:func:`take`, with each entrant's output in the records of the whole match bounded by
    ``budget`` bytes (None: unbounded): what passes it is cut, once with :data:`SPENT`, then
    dropped."""
    logs = take([e.handle for e in entrants])
    if budget is None:
        return logs
    kept: list[list[Any]] = []
    for seat, text in logs:
        entrant = entrants[seat]
        left = budget - entrant.output_kept
        if left <= 0:
            continue
        data = text.encode("utf-8")
        if len(data) + len(SPENT) > left:  # the last text kept: room is left for the marker
            text = data[: max(0, left - len(SPENT))].decode("utf-8", "ignore") + SPENT
            entrant.output_kept = budget
        else:
            entrant.output_kept += len(data)
        kept.append([seat, text])
    return kept


def attach(record: Mapping[str, Any], logs: Mapping[tuple[int, int], list[list[Any]]]) -> None:
    """Put the logs kept per (round, turn) into the record's turn objects (a record from
    `Game.record` shares them with the game: this only adds their `logs` key, again and again)."""
    for rnd in record.get("rounds", []):
        for turn in rnd.get("turns", []):
            kept = logs.get((rnd["round"], turn["turn"]))
            if kept:
                turn["logs"] = kept
