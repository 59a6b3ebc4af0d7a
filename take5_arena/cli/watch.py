"""Watch a game in the terminal: a game record, turn by turn, rendered with rich.

One renderer serves both ways of watching: `referee match --watch` hands it the game's record as it
grows (the match calls an observer after every turn) and `referee replay RECORD` hands it a finished
record. Everything is drawn from the record (docs/record-format.md), so what you watch is exactly
what was recorded and what `referee verify` checks.

Bot strings are hostile. A bot chooses its name, the text of its errors and its log lines, and may
put terminal escape sequences or rich markup in any of them. Every such string goes through
`safe()`: control and format characters become visible escapes (``\\x1b``) and the result is a rich
`Text` (never markup), so nothing a bot sends can move the cursor, recolour the terminal or forge a
line. Numbers from a record are used only after the record passed `verify_record`; the optional
parts a verifier does not check (`seats`, `logs`, `faults`) are read defensively.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from take5.clock import TimeControl
from take5.rules import BULL_HEADS, Take5Error
from take5.text import inert

HEAD_STYLES = {1: "", 2: "cyan", 3: "yellow", 5: "bold red", 7: "bold magenta"}
"""Cards by bull heads: 1 plain, 2 (tens) cyan, 3 (multiples of 5) yellow, 5 (doubles) red, 7 (55).
"""

MAX_SHOWN = 2000
"""Characters of one bot string shown at most (a turn's log is already bounded by the referee)."""


def safe(value: Any, style: str = "", limit: int = MAX_SHOWN) -> Text:
    """A bot-controlled value as inert text: never markup, never a terminal control sequence."""
    text = inert(value)  # newlines and tabs stay: log lines are lines
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return Text(text, style=style)


def card_text(card: int) -> Text:
    heads = BULL_HEADS[card]
    label = f"{card}" + ("*" * heads if heads > 1 else "")
    return Text(label, style=HEAD_STYLES.get(heads, ""))


def seat_names(record: Mapping[str, Any]) -> list[str]:
    """The seats' names (seat numbers when a record has none): bot-controlled, so shown via
    safe()."""
    n = int(record["settings"]["players"])
    seats = record.get("seats")
    names = []
    for i in range(n):
        seat = (
            seats[i]
            if isinstance(seats, list) and i < len(seats) and isinstance(seats[i], dict)
            else {}
        )
        name = seat.get("name")
        names.append(str(name)[:40] if isinstance(name, str) and name else f"seat {i}")
    return names


def turn_logs(turn: Mapping[str, Any]) -> list[tuple[int, str]]:
    """A turn's `logs` ([seat, text] pairs), leaving out anything not of that shape."""
    logs = turn.get("logs")
    if not isinstance(logs, list):
        return []
    return [
        (item[0], item[1])
        for item in logs
        if isinstance(item, (list, tuple))
        and len(item) == 2
        and isinstance(item[0], int)
        and not isinstance(item[0], bool)
        and isinstance(item[1], str)
    ]


def decision_times(part: Mapping[str, Any]) -> list[tuple[int, int, int]]:
    """A turn's or a draft's ``clock`` (``[seat, ms used, bank after]`` of each decision, in the
    order asked), leaving out anything not of that shape; [] in records before time controls."""
    times = part.get("clock")
    if not isinstance(times, list):
        return []
    return [
        (item[0], item[1], item[2])
        for item in times
        if isinstance(item, list)
        and len(item) == 3
        and all(isinstance(x, int) and not isinstance(x, bool) for x in item)
    ]


def time_control(record: Mapping[str, Any]) -> TimeControl | None:
    """The record's time control (None: a record from before time controls, or a bad one)."""
    tc = record.get("time_control")
    if not isinstance(tc, dict):
        return None
    try:
        cap = tc.get("cap_ms")
        return TimeControl(
            tc["bank_ms"] / 1000, tc["increment_ms"] / 1000, None if cap is None else cap / 1000
        )
    except (KeyError, TypeError, Take5Error):
        return None


class Renderer:
    """Renders a record's parts; `names` are escaped when shown, never interpreted."""

    def __init__(self, record: Mapping[str, Any]) -> None:
        self.record = record
        self.names = seat_names(record)
        self.n = len(self.names)
        self.control = time_control(record)

    def name(self, seat: int, style: str = "bold") -> Text:
        if 0 <= seat < self.n:
            return safe(self.names[seat], style)
        return Text(f"seat {seat}", style=style)

    def header(self) -> RenderableType:
        r = self.record
        s = r["settings"]
        game_id = r.get("game_id")
        title = Text("Game ", style="bold")
        title.append_text(safe(game_id if isinstance(game_id, str) else "(no id)", "bold"))
        title.append(
            f"  {s['players']} players, {s['variant']}, ends {s.get('end_rule', 'at-or-above')} "
            f"{s['threshold']} points, seed {r['seed']}"
        )
        players = Text("Players: ")
        for seat in range(self.n):
            if seat:
                players.append(", ")
            players.append_text(self.name(seat))
        parts: list[RenderableType] = [title, players]
        if self.control is not None:
            clock = self.record["time_control"].get("clock")
            line = Text(f"Time: {self.control}, {clock} clock")
            seats = self.record.get("seats")
            for seat, info in enumerate(seats if isinstance(seats, list) else []):
                own = info.get("clock") if isinstance(info, dict) else None
                if own in ("cpu", "wall") and own != clock:
                    line.append(" (")
                    line.append_text(self.name(seat, ""))
                    line.append(f" on the {own} clock)")
            parts.append(line)
        return Group(*parts)

    def times(self, part: Mapping[str, Any], label: str = "Time: ") -> Text | None:
        """Each decision's time and the bank after it (without a bank: the time alone), or None
        when the record keeps none."""
        times = decision_times(part)
        if not times:
            return None
        banked = self.control is not None and not self.control.fixed
        line = Text(label, style="dim")
        for i, (seat, used, after) in enumerate(times):
            if i:
                line.append(", ", style="dim")
            line.append_text(self.name(seat, "dim"))
            line.append(f" {used} ms" + (f" (bank {after / 1000:.2f} s)" if banked else ""))
        return line

    def rows(self, rows: Sequence[Sequence[int]], title: str) -> Table:
        table = Table(
            title=title, title_justify="left", show_header=False, box=None, padding=(0, 1)
        )
        table.add_column("row", style="dim")
        table.add_column("cards")
        table.add_column("heads", justify="right", style="dim")
        for index, row in enumerate(rows):
            cards = Text(" ").join(card_text(c) for c in row)
            table.add_row(f"row {index + 1}", cards, f"{sum(BULL_HEADS[c] for c in row)} heads")
        return table

    def round_start(self, index: int) -> RenderableType:
        rnd = self.record["rounds"][index]
        parts: list[RenderableType] = [Text(f"\nRound {rnd['round']}", style="bold underline")]
        draft = rnd.get("draft")
        if isinstance(draft, dict) and draft.get("picks"):
            line = Text("Draft: ")
            for i, (seat, card) in enumerate(draft["picks"]):
                if i:
                    line.append(", ")
                line.append_text(self.name(seat, ""))
                line.append(" ")
                line.append_text(card_text(card))
            parts.append(line)
            times = self.times(draft, "Draft times: ")
            if times is not None:
                parts.append(times)
        hands = Table(show_header=False, box=None, padding=(0, 1))
        hands.add_column("seat")
        hands.add_column("hand")
        for seat, hand in enumerate(rnd.get("hands", [])):
            hands.add_row(self.name(seat), Text(" ").join(card_text(c) for c in hand))
        parts += [Text("Hands:"), hands, self.rows(rnd["rows"], "Rows:")]
        return Group(*parts)

    def scores_before(self, round_index: int) -> list[int]:
        if round_index == 0:
            return [0] * self.n
        return list(self.record["rounds"][round_index - 1]["scores"])

    def turn(self, round_index: int, turn_index: int) -> RenderableType:
        rnd = self.record["rounds"][round_index]
        turn = rnd["turns"][turn_index]
        parts: list[RenderableType] = [
            Text(f"\nRound {rnd['round']}, turn {turn['turn']}", style="bold")
        ]
        played = Text("Played: ")
        for i, (seat, card) in enumerate(sorted(turn["plays"], key=lambda p: p[1])):
            if i:
                played.append("  ")
            played.append_text(self.name(seat, ""))
            played.append(" ")
            played.append_text(card_text(card))
        parts.append(played)
        for take in turn["takes"]:
            heads = sum(BULL_HEADS[c] for c in take["cards"])
            why = "the row's 6th card" if take["reason"] == "sixth-card" else "lower than every row"
            line = Text("  ")
            line.append_text(self.name(take["seat"], "bold red"))
            count = len(take["cards"])
            line.append(
                f" takes row {take['row'] + 1} ({count} card{'s' * (count != 1)}, {heads} bull "
                f"head{'s' * (heads != 1)}) with "
            )
            line.append_text(card_text(take["card"]))
            line.append(f": {why}")
            parts.append(line)
        parts.append(self.rows(turn["rows"], ""))
        totals = self.scores_before(round_index)
        for earlier in rnd["turns"][: turn_index + 1]:
            for take in earlier["takes"]:
                totals[take["seat"]] += sum(BULL_HEADS[c] for c in take["cards"])
        line = Text("Points: ")
        for seat in range(self.n):
            if seat:
                line.append(", ")
            line.append_text(self.name(seat, ""))
            line.append(f" {totals[seat]}")
        parts.append(line)
        times = self.times(turn)
        if times is not None:
            parts.append(times)
        for seat, text in turn_logs(turn):
            lines = text.splitlines() or [""]
            for k, log_line in enumerate(lines):
                prefix = Text("  log ", style="dim")
                prefix.append_text(
                    self.name(seat, "dim")
                    if k == 0
                    else Text(
                        " " * len(self.names[seat] if 0 <= seat < self.n else "seat ?"), style="dim"
                    )
                )
                prefix.append(" | ", style="dim")
                prefix.append_text(safe(log_line, "italic"))
                parts.append(prefix)
        return Group(*parts)

    def result(self) -> RenderableType:
        r = self.record
        result = r["result"]
        parts: list[RenderableType] = []
        title = "Result" if r.get("complete", True) else "Result (the game was cut off)"
        table = Table(title=title, title_justify="left", box=None, padding=(0, 1))
        table.add_column("place", justify="right")
        table.add_column("bot")
        table.add_column("points", justify="right")
        table.add_column("faults", justify="right")
        raw_faults = r.get("faults")
        faults: list[Any] = raw_faults if isinstance(raw_faults, list) else []
        order = sorted(range(self.n), key=lambda s: (result["places"][s], s))
        forfeited = set(result.get("forfeited", []))
        for seat in order:
            name = self.name(seat)
            if seat in forfeited:
                name.append(" (forfeit)", style="red")
            count = (
                len(faults[seat]) if seat < len(faults) and isinstance(faults[seat], list) else 0
            )
            table.add_row(
                str(result["places"][seat]),
                name,
                str(result["scores"][seat]),
                str(count) if count else "",
            )
        parts.append(Text(""))
        parts.append(table)
        for seat in range(min(self.n, len(faults))):
            for fault in faults[seat] if isinstance(faults[seat], list) else []:
                if not isinstance(fault, dict):
                    continue
                line = Text("  fault: ", style="red")
                line.append_text(self.name(seat, "red"))
                line.append(f" round {fault.get('round')} turn {fault.get('turn')}: ")
                line.append_text(safe(f"{fault.get('kind')}: {fault.get('detail')}", limit=300))
                parts.append(line)
        return Group(*parts)

    def steps(self, round_number: int | None = None) -> Iterator[RenderableType]:
        """Everything to show, one renderable per step: each round's start and each turn."""
        for index, rnd in enumerate(self.record["rounds"]):
            if round_number is not None and rnd["round"] != round_number:
                continue
            if "rows" not in rnd:  # cut off during a draft
                continue
            yield self.round_start(index)
            for t in range(len(rnd["turns"])):
                yield self.turn(index, t)


class LiveWatcher:
    """The observer `referee match --watch` gives the match: shows each turn as it is played.

    The match calls it with the game's record after every turn (and once more when the game ends);
    it prints what is new since the last call, and a game's result once.
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self.game_id: object = None
        self.shown: tuple[int, int] = (-1, -1)
        self.finished = False

    def __call__(self, record: Mapping[str, Any]) -> None:
        renderer = Renderer(record)
        if record.get("game_id") != self.game_id:
            self.game_id = record.get("game_id")
            self.shown = (-1, -1)
            self.finished = False
            self.console.print(Text(""))
            self.console.rule()
            self.console.print(renderer.header())
        rounds = record["rounds"]
        for r in range(max(0, self.shown[0]), len(rounds)):
            rnd = rounds[r]
            if "rows" not in rnd:
                continue
            first = self.shown[1] + 1 if r == self.shown[0] else 0
            if first == 0 and r != self.shown[0]:
                self.console.print(renderer.round_start(r))
                self.shown = (r, -1)
            for t in range(first, len(rnd["turns"])):
                self.console.print(renderer.turn(r, t))
                self.shown = (r, t)
        if record.get("complete") and not self.finished:
            self.finished = True
            self.console.print(renderer.result())


__all__ = [
    "HEAD_STYLES",
    "MAX_SHOWN",
    "LiveWatcher",
    "Renderer",
    "card_text",
    "decision_times",
    "safe",
    "seat_names",
    "time_control",
    "turn_logs",
]
