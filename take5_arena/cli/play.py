"""`referee play`: one game of built-in random players, printed as a transcript or a record."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from take5 import RandomPlayer, Settings, Take5Error, play_game
from take5.record import RecordFile
from take5.rules import EndRule, Variant
from take5_arena.cli import options
from take5_arena.cli.transcript import transcript


def game_settings(players: int, variant: str, threshold: int, end_rule: str) -> Settings:
    """Settings from command-line options, with the rules' own message on a bad combination."""
    try:
        return Settings(
            players=players,
            variant=Variant(variant),
            threshold=threshold,
            end_rule=EndRule(end_rule),
        )
    except Take5Error as error:
        raise click.BadParameter(str(error)) from None


@click.command()
@options.players()
@options.seed()
@options.game_rules()
@click.option(
    "--record",
    "record_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the game record (JSON) to this file.",
)
@click.option("--quiet", "-q", is_flag=True, help="Print only the final standing.")
@options.as_json("the game record")
def play(
    players: int,
    seed: int,
    variant: str,
    threshold: int,
    end_rule: str,
    record_path: Path | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Play one game with built-in random players and print its transcript.

    Each random player is seeded from the game seed, so the whole game is reproducible.
    """
    settings = game_settings(players, variant, threshold, end_rule)
    try:
        output = (
            RecordFile(record_path) if record_path else None
        )  # a bad path fails before the game
    except Take5Error as error:
        raise click.BadParameter(str(error), param_hint="'--record'") from None
    try:
        game = play_game([RandomPlayer(seed * 1000 + i) for i in range(players)], settings, seed)
        record = game.record(
            seats=[{"name": f"random-{i + 1}", "kind": "builtin-random"} for i in range(players)]
        )
        if as_json:
            click.echo(json.dumps(record, indent=1))
        else:
            lines = list(transcript(record))
            if quiet:
                lines = lines[lines.index("Final standing:") :]
            click.echo("\n".join(lines))
        if output:
            try:
                written = output.write(record)
            except Take5Error as error:
                click.echo(f"referee play: {error}", err=True)
                sys.exit(1)
            if not as_json:
                click.echo(f"\nrecord written to {written}")
    finally:
        if output:
            output.discard()
