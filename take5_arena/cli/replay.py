"""`referee replay RECORD`: step through a recorded game in the terminal.

The record is checked against the rules first (`take5.record.verify_record`): only a record that
replays exactly is shown, so the numbers on screen are the game's, whatever the file claims. Its
optional parts (seat names, bot logs, fault texts) are bot-controlled and shown inert
(take5_arena/cli/watch.py).

Interactive when stdout is a terminal (Enter for the next turn, q to stop); `--all` prints every
turn and `--round R` one round, for scripts, pipes and tests. Exit codes: 0 shown; 1 the record
does not follow the rules; 2 the file cannot be read or is not a record, or no such round; 130
interrupted.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click
from rich.console import Console

from take5_arena.cli import record_file
from take5_arena.cli.record_file import load_verified_record
from take5_arena.cli.watch import Renderer


@click.command("replay")
@click.argument("record", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="Print every turn at once (the default when not in a terminal).",
)
@click.option("--round", "round_number", type=click.IntRange(min=1), help="Print only this round.")
def replay(record: Path, show_all: bool, round_number: int | None) -> None:
    """Show a game RECORD turn by turn: rows, cards revealed, who took what, the bots' logs.

    In a terminal it waits for Enter after each turn (q then Enter stops); with --all, --round R,
    or when the output is not a terminal, it prints without waiting.
    """

    def fail(message: object, code: int) -> NoReturn:
        record_file.fail("replay", message, code)

    doc = load_verified_record(record, "replay")
    renderer = Renderer(doc)
    rounds = [r["round"] for r in doc["rounds"]]
    if round_number is not None and round_number not in rounds:
        fail(f"the game has no round {round_number} (it has rounds 1 to {max(rounds)})", 2)
    console = Console(highlight=False)
    interactive = (
        console.is_terminal and sys.stdin.isatty() and not show_all and round_number is None
    )
    try:
        console.print(renderer.header())
        for step in renderer.steps(round_number):
            console.print(step)
            if interactive:
                answer = console.input("[dim]Enter: next turn, q: quit [/dim]")
                if answer.strip().lower().startswith("q"):
                    return
        if round_number is None:
            console.print(renderer.result())
    except EOFError:  # stdin closed while waiting: stop like q
        return
    except KeyboardInterrupt:
        fail("interrupted", 130)
